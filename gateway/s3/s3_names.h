/* Names and texts of the S3 protocol: bucket name rules, object key checks,
 * URI percent-decoding/encoding, and the date formats S3 speaks (HTTP dates
 * in headers, ISO-8601 in XML, the x-amz-date basic form). All pure
 * functions over (pointer, length) inputs; nothing needs NUL termination. */
#ifndef GW_S3_NAMES_H
#define GW_S3_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "s3_error.h"

/* ---- buckets and keys ------------------------------------------------ */

/* The rules of S3 general purpose buckets: 3..63 characters of lower-case
 * letters, digits, '.' and '-'; starts and ends with a letter or digit; no
 * ".." and no '.' next to '-'; not shaped like an IPv4 address (1.2.3.4);
 * not starting with "xn--", "sthree-" or "amzn-s3-demo-"; not ending with
 * "-s3alias", "--ol-s3", ".mrap" or "--x-s3". CN_OK or CN_INVAL (answer
 * InvalidBucketName). */
int gw_s3_names_bucket_check(const char *name, size_t len);

#define GW_S3_NAMES_KEY_MAX 1024

/* An object key as received (already percent-decoded): CN_OK, or CN_INVAL
 * with *err = KeyTooLongError (over 1024 bytes), InvalidArgument (empty),
 * InvalidArgument (not valid UTF-8: overlong forms, surrogates, > U+10FFFF,
 * or a NUL byte, which the store's C tools could not carry). */
int gw_s3_names_key_check(const char *key, size_t len, enum gw_s3_err *err);

/* 1 when v[len] names an S3 storage class (STANDARD, REDUCED_REDUNDANCY,
 * STANDARD_IA, ...: the values of the API reference), else 0 (answer
 * InvalidStorageClass). */
int gw_s3_names_storage_class_ok(const char *v, size_t len);

/* 1 when s[len] is valid UTF-8 (RFC 3629: no overlongs, no surrogates,
 * nothing above U+10FFFF), else 0. */
int gw_s3_names_utf8_valid(const char *s, size_t len);

/* ---- URI encoding ---------------------------------------------------- */

/* Percent-decodes in[len] into out (room for len bytes is always enough).
 * With plus_as_space, '+' becomes ' ' (form/query style; S3 paths keep
 * '+'). A '%' not followed by two hex digits is CN_INVAL (answer InvalidURI
 * for paths, InvalidArgument for query values). Decoded bytes may include
 * NUL: use *out_len. in and out may be the same buffer (decoding in place). */
int gw_s3_names_uri_decode(const char *in, size_t len, char *out, size_t *out_len,
                           int plus_as_space);

/* Percent-encodes per SigV4 / S3: the unreserved set A-Z a-z 0-9 - _ . ~ is
 * kept, every other byte becomes %XX with upper-case hex; '/' is kept when
 * keep_slash. Writes at most cap bytes plus nothing else (no NUL) and returns
 * the full encoded length, so a return > cap means out was too small (call
 * with cap = 3 * len to be sure). */
size_t gw_s3_names_uri_encode(const char *in, size_t len, char *out, size_t cap,
                              int keep_slash);

/* ---- dates ----------------------------------------------------------- */

/* (Formatting an HTTP date is the HTTP layer's: gw_http_date_format().) */

/* Parses an HTTP date in any of the three RFC 7231 forms: IMF-fixdate,
 * RFC 850 ("Sunday, 06-Nov-94 08:49:37 GMT"; two-digit years 70..99 are
 * 19xx, 00..69 are 20xx) and asctime ("Sun Nov  6 08:49:37 1994"). The day
 * name is checked for form only, not against the date. CN_OK and *out, or
 * CN_INVAL (an If-Modified-Since that does not parse is ignored, as HTTP
 * says). */
int gw_s3_names_http_date_parse(const char *s, size_t len, time_t *out);

/* "2026-12-02T16:17:46.000Z" from milliseconds since the epoch, 24 chars +
 * NUL. Negative values give the epoch. */
#define GW_S3_NAMES_ISO8601_LEN 25
void gw_s3_names_iso8601_format(int64_t ms, char out[GW_S3_NAMES_ISO8601_LEN]);
/* Parses "YYYY-MM-DDTHH:MM:SS[.fff]Z" back into milliseconds: CN_OK/CN_INVAL. */
int gw_s3_names_iso8601_parse(const char *s, size_t len, int64_t *ms);

/* The x-amz-date / X-Amz-Date basic form "20130524T000000Z" (exactly 16
 * chars, UTC): CN_OK and *out, or CN_INVAL. */
int gw_s3_names_amz_date_parse(const char *s, size_t len, time_t *out);

#endif
