/* ListObjects (v1) and ListObjectsV2: prefix, delimiter with
 * CommonPrefixes, max-keys, marker / continuation-token / start-after,
 * fetch-owner, encoding-type=url, merged from every storage node as sorted
 * pages (gw_store_list). */
#ifndef GW_S3_LIST_H
#define GW_S3_LIST_H

#include <stddef.h>
#include <stdint.h>

#include "request.h"
#include "s3_error.h"

/* GET /bucket (list-type=2 selects v2). */
void gw_s3_list_objects(struct gw_req *r);

/* ---- what every object listing reads and echoes the same way ----------- */

struct gw_xml_writer;

/* The parameters ListObjects (v1, v2) and ListObjectVersions share,
 * pointing into the request's query (NULL: absent). */
struct gw_s3_list_params {
    const struct gw_req_param *prefix, *delim, *marker;
    uint32_t max_keys;    /* max-keys, at most s3.max_keys (the default) */
    int url;              /* encoding-type=url */
};

/* Reads r's encoding-type, prefix, delimiter, max-keys and the marker named
 * marker_name (NULL: none) into *p. GW_S3_OK, or, checked in this order:
 * InvalidArgument for an encoding-type other than "url" or a max-keys that
 * is not a whole number >= 0; KeyTooLong for a prefix over 1024 bytes, or a
 * marker over marker_max bytes (0: its length unchecked). */
enum gw_s3_err gw_s3_list_params_parse(struct gw_req *r, const char *marker_name,
                                       size_t marker_max, struct gw_s3_list_params *p);

/* 1 when the marker ends in the delimiter: it names a common prefix, and
 * the listing resumes after everything under it. */
int gw_s3_list_params_marker_is_prefix(const struct gw_s3_list_params *p);

/* A text element of a listing: URL-encoded when url (encoding-type=url).
 * Without it, text that XML 1.0 cannot carry marks the writer (w->replaced)
 * and the listing is refused: S3's documented way to list such keys is
 * encoding-type=url, and an altered key would be worse than none. */
void gw_s3_list_text_elem(struct gw_xml_writer *w, int url, const char *name, const char *s,
                          size_t len);

/* Echoes a parameter as element name: its value; absent, an empty element
 * when always, else nothing. */
void gw_s3_list_param_echo(struct gw_xml_writer *w, int url, const char *name,
                           const struct gw_req_param *p, int always);

#endif
