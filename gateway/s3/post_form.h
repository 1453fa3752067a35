/* The multipart/form-data body of a POST object (browser form upload),
 * parsed as it streams in: first the form fields before the `file` field,
 * kept (bounded: GW_POST_FORM_PRE_DATA_MAX bytes in all, as S3), then the
 * file's bytes handed to a sink as spans of the input (no copy), the
 * closing boundary found across any split of the input, and what follows
 * the file part (S3 ignores fields after it) skipped. Works on plain byte
 * spans, so it has no connection to the HTTP layer.
 *
 * Memory: the fields (at most GW_POST_FORM_PRE_DATA_MAX bytes), one header
 * line (at most GW_POST_FORM_LINE_MAX) and a delimiter's length of held-back
 * bytes; never the file. */
#ifndef GW_POST_FORM_H
#define GW_POST_FORM_H

#include <stddef.h>
#include <stdint.h>

#include "cn/rc.h"
#include "s3_error.h"

#define GW_POST_FORM_PRE_DATA_MAX (20u * 1024) /* S3's limit on fields before the file */
#define GW_POST_FORM_LINE_MAX 4096             /* one part header line */
#define GW_POST_FORM_BOUNDARY_MAX 70           /* RFC 2046 */
#define GW_POST_FORM_MAX_FIELDS 128

struct gw_post_form;

/* One field before the file: name and value as sent (value raw bytes,
 * NUL-terminated for convenience; names compare case-insensitively). */
struct gw_post_form_field {
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
};

/* Reads the boundary from a Content-Type value ("multipart/form-data;
 * boundary=..."), quoted or not. CN_OK with out[] (NUL-terminated) and
 * *len, CN_NOTFOUND when the type is not multipart/form-data, CN_INVAL when
 * the boundary is missing, empty, over 70 bytes or holds a byte RFC 2046
 * does not allow. */
int gw_post_form_boundary(const char *ctype, size_t len, char out[GW_POST_FORM_BOUNDARY_MAX + 1],
                          size_t *blen);

/* A parser for one body with that boundary. Free with _free() (NULL ok). */
struct gw_post_form *gw_post_form_new(const char *boundary, size_t blen);
void gw_post_form_free(struct gw_post_form *f);

/* Sink of the file's bytes; returns CN_OK, or another status to stop (the
 * feed then returns it with *err GW_S3_INTERNAL_ERROR). */
typedef int (*gw_post_form_sink_cb)(void *arg, const char *data, size_t len);

/* Feeds in[len]; *used says how much was consumed (all of it unless the
 * return is CN_OK or an error). Returns:
 *   CN_AGAIN  need more bytes;
 *   CN_OK     the file part's headers are complete: the fields are ready
 *             (gw_post_form_field_*) and the next feed starts with the
 *             file's bytes; returned once;
 *   CN_DONE   the closing boundary after the file was seen (the rest of the
 *             body is skipped: feed it, it is consumed);
 *   CN_INVAL / CN_TOOBIG with *err: the error to answer: a body that is not
 *             well-formed multipart/form-data or a field without a name
 *             (MalformedPOSTRequest, as InvalidArgument here), fields past
 *             the pre-data limit (MaxPostPreDataLengthExceeded), the file
 *             over max_file (EntityTooLarge) or under min_file at its end
 *             (EntityTooSmall), the body ending before a file part
 *             (InvalidArgument "POST requires exactly one file upload per
 *             request.", from gw_post_form_finish()).
 * sink gets the file's bytes (only between CN_OK and CN_DONE). */
int gw_post_form_feed(struct gw_post_form *f, const char *in, size_t len, size_t *used,
                      gw_post_form_sink_cb sink, void *arg, enum gw_s3_err *err);
/* The body ended: CN_OK when the closing boundary was seen, else CN_INVAL
 * with *err (no file field: InvalidArgument; a file cut short:
 * IncompleteBody). */
int gw_post_form_finish(const struct gw_post_form *f, enum gw_s3_err *err);

/* Bounds of the file's size (content-length-range); default 0..UINT64_MAX. */
void gw_post_form_set_range(struct gw_post_form *f, uint64_t min, uint64_t max);
/* Bytes of the file handed to the sink so far. */
uint64_t gw_post_form_file_bytes(const struct gw_post_form *f);

/* The fields before the file, in order (valid while f lives). */
size_t gw_post_form_field_count(const struct gw_post_form *f);
const struct gw_post_form_field *gw_post_form_field_at(const struct gw_post_form *f, size_t i);
/* The first field named name (case-insensitive), or NULL. */
const struct gw_post_form_field *gw_post_form_field(const struct gw_post_form *f,
                                                    const char *name);
/* The file part's filename parameter ("" when none) and Content-Type. */
const char *gw_post_form_filename(const struct gw_post_form *f, size_t *len);
const char *gw_post_form_file_type(const struct gw_post_form *f, size_t *len);

#endif
