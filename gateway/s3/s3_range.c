/* The Range header as S3 reads it (RFC 7233 byte ranges, one at a time). */
#include "s3_range.h"

#include <inttypes.h>
#include <stdio.h>
#include <strings.h>

#include "cn/rc.h"

/* Reads a decimal at s[*pos] of any length; a value past UINT64_MAX
 * saturates there (no object is that large, so a first byte that big is
 * past the end and a last byte that big means "to the end", as RFC 7233
 * reads them). CN_OK and *out, or CN_INVAL when there is no digit. */
static int gw_s3_range_number(const char *s, size_t len, size_t *pos, uint64_t *out)
{
    size_t start = *pos;
    uint64_t v = 0;
    while (*pos < len && s[*pos] >= '0' && s[*pos] <= '9') {
        uint64_t d = (uint64_t)(s[*pos] - '0');
        v = v > (UINT64_MAX - d) / 10 ? UINT64_MAX : v * 10 + d;
        (*pos)++;
    }
    if (*pos == start)
        return CN_INVAL;
    *out = v;
    return CN_OK;
}

static void gw_s3_range_skip_ows(const char *s, size_t len, size_t *pos)
{
    while (*pos < len && (s[*pos] == ' ' || s[*pos] == '\t'))
        (*pos)++;
}

enum gw_s3_range_kind gw_s3_range_parse(const char *value, size_t len, uint64_t size,
                                        struct gw_s3_range *out)
{
    size_t pos = 0;
    if (value == NULL || len < 6 || strncasecmp(value, "bytes=", 6) != 0)
        return GW_S3_RANGE_NONE;
    pos = 6;
    gw_s3_range_skip_ows(value, len, &pos);
    uint64_t first = 0, last = 0;
    int has_first = 0, has_last = 0;
    if (pos < len && value[pos] != '-') {
        if (gw_s3_range_number(value, len, &pos, &first) != CN_OK)
            return GW_S3_RANGE_NONE;
        has_first = 1;
    }
    if (pos >= len || value[pos] != '-')
        return GW_S3_RANGE_NONE;
    pos++;
    if (pos < len && value[pos] >= '0' && value[pos] <= '9') {
        if (gw_s3_range_number(value, len, &pos, &last) != CN_OK)
            return GW_S3_RANGE_NONE;
        has_last = 1;
    }
    gw_s3_range_skip_ows(value, len, &pos);
    /* a second range (',') or trailing garbage: S3 ignores the header */
    if (pos != len || (!has_first && !has_last) || (has_first && has_last && last < first))
        return GW_S3_RANGE_NONE;
    if (!has_first) {               /* suffix: the last `last` bytes */
        if (last == 0 || size == 0)
            return GW_S3_RANGE_UNSATISFIABLE;
        out->first = last >= size ? 0 : size - last;
        out->last = size - 1;
        return GW_S3_RANGE_PARTIAL;
    }
    if (first >= size)
        return GW_S3_RANGE_UNSATISFIABLE;
    out->first = first;
    out->last = has_last && last < size - 1 ? last : size - 1;
    return GW_S3_RANGE_PARTIAL;
}

size_t gw_s3_range_content_range(const struct gw_s3_range *r, uint64_t size, char *out,
                                 size_t cap)
{
    int n;
    if (cap < GW_S3_RANGE_CONTENT_RANGE_MAX)
        return 0;
    if (r == NULL)
        n = snprintf(out, cap, "bytes */%" PRIu64, size);
    else
        n = snprintf(out, cap, "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, r->first, r->last,
                     size);
    return n > 0 ? (size_t)n : 0;
}
