/* Object and bucket tags (S3 tagging): a set of at most 10 (an object) or
 * 50 (a bucket) key/value pairs, the checks S3 makes on them, and their text forms: the URL-query form of the
 * x-amz-tagging header ("k1=v1&k2=v2"), which is also how a set is stored in
 * the object's meta (objmeta.h, GW_OBJMETA_TAGS), and the <Tagging> document
 * of GET ?tagging (the PUT ?tagging body is parsed by xml.c). Pure code: no
 * request, no storage, so the fuzz target drives it whole. */
#ifndef GW_TAGSET_H
#define GW_TAGSET_H

#include <stddef.h>

#include "s3_error.h"

struct gw_xml_writer;

#define GW_TAGSET_MAX 10         /* tags on one object */
#define GW_TAGSET_BUCKET_MAX 50  /* tags on one bucket */
#define GW_TAGSET_KEY_MAX 128    /* characters, counted in UTF-16 units as S3 does */
#define GW_TAGSET_VALUE_MAX 256
/* UTF-8 takes at most 3 bytes per UTF-16 unit */
#define GW_TAGSET_KEY_BYTES (3 * GW_TAGSET_KEY_MAX)
#define GW_TAGSET_VALUE_BYTES (3 * GW_TAGSET_VALUE_MAX)
/* The longest encoded set of n tags: every byte percent-encoded, plus '='
 * and '&'. */
#define GW_TAGSET_ENCODED_MAX_OF(n) ((n) * (3 * (GW_TAGSET_KEY_BYTES + GW_TAGSET_VALUE_BYTES) + 2))
#define GW_TAGSET_ENCODED_MAX GW_TAGSET_ENCODED_MAX_OF(GW_TAGSET_MAX)

struct gw_tag {
    char key[GW_TAGSET_KEY_BYTES];
    size_t key_len;
    char value[GW_TAGSET_VALUE_BYTES];
    size_t value_len;
};

/* Allocated by gw_tagset_new() (about 12 KiB for an object's, 58 KiB for a
 * bucket's); n = 0 is the empty set. Tags keep the order they were added
 * in. */
struct gw_tagset {
    size_t n;
    size_t max;                  /* GW_TAGSET_MAX or GW_TAGSET_BUCKET_MAX */
    struct gw_tag tags[];
};

/* An empty set that holds at most max tags (cn_calloc: aborts on OOM);
 * free with gw_tagset_free(). */
struct gw_tagset *gw_tagset_new(size_t max);
void gw_tagset_free(struct gw_tagset *set);

/* Checks key and value as S3 does and adds a copy to set. Returns GW_S3_OK;
 * BadRequest when set already holds set->max tags; InvalidTag when the
 * key is empty, longer than GW_TAGSET_KEY_MAX, begins with "aws:" or is
 * already in set, when the value is longer than GW_TAGSET_VALUE_MAX, or when
 * either is not UTF-8 or holds a character outside letters, digits, white
 * space and + - = . _ : / @ (beyond ASCII every character but the C0/C1
 * controls is taken: the Unicode category tables are not carried).
 * *why gets S3's message for the error; on error set is unchanged. */
enum gw_s3_err gw_tagset_add(struct gw_tagset *set, const char *key, size_t key_len,
                             const char *value, size_t value_len, const char **why);

/* Parses the URL-query form (x-amz-tagging; len 0 is the empty set) into
 * set, which is emptied first: '&' separates tags, the first '=' a key from
 * its value (none: value ""), both are percent-decoded with '+' as space.
 * Errors: InvalidArgument (a bad %-escape, an empty piece such as "a=1&&b=2",
 * a duplicate key: S3's x-amz-tagging message), and those of gw_tagset_add().
 * On error set holds the tags parsed so far. */
enum gw_s3_err gw_tagset_parse_query(struct gw_tagset *set, const char *s, size_t len,
                                     const char **why);

/* Writes set in the query form into out (cap bytes;
 * GW_TAGSET_ENCODED_MAX_OF(set->max) is always enough): every byte but RFC 3986's unreserved ones percent-
 * encoded, so gw_tagset_parse_query() gives the same set back. Returns the
 * length (0 for the empty set), or 0 with nothing usable when cap is short. */
size_t gw_tagset_encode(const struct gw_tagset *set, char *out, size_t cap);

/* The number of tags in a form gw_tagset_encode() wrote (one more than its
 * '&'s; 0 when len is 0), without decoding it: x-amz-tagging-count. */
size_t gw_tagset_count_encoded(const char *s, size_t len);

/* Writes <Tagging xmlns=S3><TagSet><Tag><Key/><Value/></Tag>...</TagSet>
 * </Tagging>, the answer of GetObjectTagging. Errors are the writer's. */
void gw_tagset_write_xml(const struct gw_tagset *set, struct gw_xml_writer *w);

#endif
