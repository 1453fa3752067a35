/* The one parser of x-amz-copy-source (see copy_source.h for the syntax and
 * why there is exactly one). */
#include "copy_source.h"

#include <stdint.h>
#include <string.h>

#include "s3_names.h"

#include "cn/alloc.h"
#include "cn/rc.h"

static const char gw_copy_source_bad[] =
    "Copy Source must mention the source bucket and key: sourcebucket/sourcekey.";

/* The query after '?': only versionId=ID (decoded into out, NUL-terminated).
 * Returns 0 on anything else. */
static int gw_copy_source_query(const char *q, size_t len, char *out, size_t *out_len)
{
    static const char name[] = "versionId=";
    if (len <= sizeof(name) - 1 || memcmp(q, name, sizeof(name) - 1) != 0)
        return 0;
    q += sizeof(name) - 1;
    len -= sizeof(name) - 1;
    if (memchr(q, '&', len) != NULL || len > 3 * GW_COPY_SOURCE_VERSION_MAX)
        return 0;
    if (gw_s3_names_uri_decode(q, len, out, out_len, 0) != CN_OK || *out_len == 0 ||
        *out_len > GW_COPY_SOURCE_VERSION_MAX || memchr(out, '\0', *out_len) != NULL)
        return 0;
    out[*out_len] = '\0';
    return 1;
}

enum gw_s3_err gw_copy_source_parse(const char *v, size_t len, size_t max_key_len,
                                    struct gw_copy_source *cs, const char **why)
{
    memset(cs, 0, sizeof(*cs));
    *why = gw_copy_source_bad;
    const char *q = memchr(v, '?', len);
    size_t plen = q != NULL ? (size_t)(q - v) : len;
    size_t qlen = q != NULL ? len - plen - 1 : 0;
    /* decoding never lengthens: one buffer holds the path and the version */
    char *buf = cn_malloc(plen + qlen + 2);
    size_t dlen, vlen = 0;
    if (gw_s3_names_uri_decode(v, plen, buf, &dlen, 0) != CN_OK)
        goto bad;
    buf[dlen] = '\0';
    char *p = buf, *end = buf + dlen;
    if (p < end && *p == '/')
        p++;
    char *slash = memchr(p, '/', (size_t)(end - p));
    if (slash == NULL)
        goto bad;
    size_t blen = (size_t)(slash - p), klen = (size_t)(end - slash - 1);
    enum gw_s3_err kerr;
    if (blen == 0 || blen > GW_COPY_SOURCE_BUCKET_MAX ||
        gw_s3_names_bucket_check(p, blen) != CN_OK || klen == 0 || klen > max_key_len ||
        gw_s3_names_key_check(slash + 1, klen, &kerr) != CN_OK)
        goto bad;
    char *ver = NULL;
    if (q != NULL) {
        ver = end + 1;
        if (!gw_copy_source_query(q + 1, qlen, ver, &vlen)) {
            *why = "Invalid version id specified";
            goto bad;
        }
    }
    memcpy(cs->bucket, p, blen);
    cs->bucket[blen] = '\0';
    cs->bucket_len = blen;
    cs->key = slash + 1;
    cs->key_len = klen;
    cs->version_id = ver;
    cs->version_id_len = vlen;
    cs->buf = buf;
    *why = NULL;
    return GW_S3_OK;
bad:
    cn_free(buf);
    return GW_S3_INVALID_ARGUMENT;
}

/* Reads 1..20 decimal digits at v[*i..len) into *out; 0 on no digits or a
 * value past UINT64_MAX. */
static int gw_copy_source_range_num(const char *v, size_t len, size_t *i, uint64_t *out)
{
    size_t s = *i;
    uint64_t n = 0;
    while (*i < len && v[*i] >= '0' && v[*i] <= '9') {
        unsigned d = (unsigned)(v[*i] - '0');
        if (n > (UINT64_MAX - d) / 10)
            return 0;
        n = n * 10 + d;
        (*i)++;
    }
    *out = n;
    return *i > s;
}

enum gw_s3_err gw_copy_source_range_parse(const char *v, size_t len, uint64_t size,
                                          uint64_t *first, uint64_t *last, const char **why)
{
    size_t i = 0;
    uint64_t a, b;
    while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t'))
        len--;
    while (i < len && (v[i] == ' ' || v[i] == '\t'))
        i++;
    if (len - i < 6 || memcmp(v + i, "bytes=", 6) != 0)
        goto bad;
    i += 6;
    if (!gw_copy_source_range_num(v, len, &i, &a) || i >= len || v[i++] != '-' ||
        !gw_copy_source_range_num(v, len, &i, &b) || i != len || a > b)
        goto bad;
    if (b >= size) {
        *why = NULL;
        return GW_S3_INVALID_RANGE;
    }
    *first = a;
    *last = b;
    *why = NULL;
    return GW_S3_OK;
bad:
    *why = "The x-amz-copy-source-range value must be of the form bytes=first-last where first "
           "and last are the zero-based offsets of the first and last bytes to copy";
    return GW_S3_INVALID_ARGUMENT;
}

int gw_copy_source_version_is_null(const struct gw_copy_source *cs)
{
    return cs->version_id == NULL ||
           (cs->version_id_len == 4 && memcmp(cs->version_id, "null", 4) == 0);
}

void gw_copy_source_fini(struct gw_copy_source *cs)
{
    cn_free(cs->buf);
    memset(cs, 0, sizeof(*cs));
}
