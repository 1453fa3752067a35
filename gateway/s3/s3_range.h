/* The HTTP Range header of GetObject/HeadObject, as S3 reads it: one
 * bytes=first-last, bytes=first- or bytes=-suffix range. S3 serves no
 * multipart/byteranges: a header with several ranges, a unit other than
 * bytes or a syntax error is ignored (200 with the whole object), and a
 * well-formed range that selects nothing is 416 InvalidRange with
 * the unsatisfied form of Content-Range (bytes, a star, a slash, size).
 * Positions of any number of digits are read; past 2^64-1 they saturate. */
#ifndef GW_S3_RANGE_H
#define GW_S3_RANGE_H

#include <stddef.h>
#include <stdint.h>

enum gw_s3_range_kind {
    GW_S3_RANGE_NONE = 0,        /* no usable Range: 200, whole object */
    GW_S3_RANGE_PARTIAL,         /* 206 with Content-Range: first..last */
    GW_S3_RANGE_UNSATISFIABLE,   /* 416 InvalidRange */
};

/* Inclusive byte positions inside the object, first <= last < size. */
struct gw_s3_range {
    uint64_t first;
    uint64_t last;
};

/* Reads a Range value (len bytes, not NUL-terminated; NULL/0 = absent)
 * against an object of size bytes and returns the kind; *out is set only for
 * GW_S3_RANGE_PARTIAL (last clamped to size - 1). On an empty object every
 * well-formed range is unsatisfiable. Numbers of any length are read and
 * saturate at UINT64_MAX: a huge first byte is unsatisfiable (416), a huge
 * last byte or suffix length means up to the end. */
enum gw_s3_range_kind gw_s3_range_parse(const char *value, size_t len, uint64_t size,
                                        struct gw_s3_range *out);

/* Content-Range values: "bytes 0-99/1000" for a range; with r == NULL the
 * unsatisfied form, "bytes " then a star, a slash and the size. Returns the
 * length written (NUL-terminated); cap >= GW_S3_RANGE_CONTENT_RANGE_MAX
 * always suffices (0 and nothing written if cap is smaller). */
#define GW_S3_RANGE_CONTENT_RANGE_MAX 72
size_t gw_s3_range_content_range(const struct gw_s3_range *r, uint64_t size, char *out,
                                 size_t cap);

#endif
