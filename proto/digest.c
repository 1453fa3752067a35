/* Range digests for the DIGEST op (msg/digest.h): the key-range split both
 * sides compute, the per-record digest (SHA-256 from OpenSSL, cut to 128
 * bits) and the packed `sums`/`arcs` fields. */
#include "msg/digest.h"

#include <string.h>

#include <openssl/evp.h>

#include "cn/rc.h"

static uint64_t msg_digest_be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

static void msg_digest_put64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

/* The 8 bytes of k from off, zero-padded past its end, as a big-endian u64. */
static uint64_t msg_digest_window(const uint8_t *k, uint32_t klen, uint32_t off)
{
    uint8_t w[MSG_DIGEST_WINDOW] = {0};
    if (off < klen)
        memcpy(w, k + off, CN_MIN(klen - off, MSG_DIGEST_WINDOW));
    return msg_digest_be64(w);
}

void msg_digest_split_init(struct msg_digest_split *sp, const uint8_t *after, uint32_t alen,
                           const uint8_t *upto, uint32_t ulen, int has_upto, uint32_t fanout)
{
    CN_ASSERT(fanout >= 1 && fanout <= MSG_DIGEST_MAX_FANOUT);
    uint32_t p = 0;
    if (has_upto)
        while (p < alen && p < ulen && after[p] == upto[p])
            p++;
    sp->prefix = after;
    sp->plen = p;
    sp->fanout = fanout;
    uint64_t s = msg_digest_window(after, alen, p);
    uint64_t e = has_upto ? msg_digest_window(upto, ulen, p) : UINT64_MAX;
    uint64_t d = e >= s ? e - s : 0;
    /* s + d * i / fanout without overflow: d % fanout * i < 2^16 */
    for (uint32_t i = 0; i <= fanout; i++)
        sp->w[i] = s + d / fanout * i + d % fanout * i / fanout;
}

uint32_t msg_digest_split_bound(const struct msg_digest_split *sp, uint32_t i, uint8_t *out)
{
    if (sp->plen > 0)
        memcpy(out, sp->prefix, sp->plen);
    msg_digest_put64(out + sp->plen, sp->w[i]);
    return sp->plen + MSG_DIGEST_WINDOW;
}

int msg_digest_split_cmp(const struct msg_digest_split *sp, uint32_t i, const uint8_t *key,
                         uint32_t klen)
{
    uint32_t n = CN_MIN(klen, sp->plen);
    int c = n > 0 ? memcmp(key, sp->prefix, n) : 0;
    if (c != 0)
        return c;
    if (klen <= sp->plen)   /* key is a prefix of the bound, which is longer */
        return -1;
    uint8_t w[MSG_DIGEST_WINDOW];
    msg_digest_put64(w, sp->w[i]);
    uint32_t rest = klen - sp->plen;
    c = memcmp(key + sp->plen, w, CN_MIN(rest, MSG_DIGEST_WINDOW));
    if (c != 0)
        return c;
    return rest < MSG_DIGEST_WINDOW ? -1 : rest > MSG_DIGEST_WINDOW;
}

uint32_t msg_digest_split_index(const struct msg_digest_split *sp, uint32_t from,
                                const uint8_t *key, uint32_t klen)
{
    uint32_t i = from;
    while (i + 1 < sp->fanout && msg_digest_split_cmp(sp, i + 1, key, klen) > 0)
        i++;
    return i;
}

void msg_digest_record(const uint8_t *key, uint32_t klen, uint64_t ts, uint64_t ver,
                       uint32_t flags, uint64_t size, const uint8_t *etag, uint32_t etag_len,
                       uint64_t out[2])
{
    uint8_t fixed[4 + 8 + 8 + 4 + 8 + 4];
    uint8_t md[EVP_MAX_MD_SIZE];
    unsigned md_len = 0;
    fixed[0] = (uint8_t)(klen >> 24);
    fixed[1] = (uint8_t)(klen >> 16);
    fixed[2] = (uint8_t)(klen >> 8);
    fixed[3] = (uint8_t)klen;
    msg_digest_put64(fixed + 4, ts);
    msg_digest_put64(fixed + 12, ver);
    uint32_t f = flags & (MSG_FLAG_TOMBSTONE | MSG_FLAG_CORRUPT);
    fixed[20] = 0, fixed[21] = 0, fixed[22] = 0, fixed[23] = (uint8_t)f;
    msg_digest_put64(fixed + 24, size);
    fixed[32] = (uint8_t)(etag_len >> 24);
    fixed[33] = (uint8_t)(etag_len >> 16);
    fixed[34] = (uint8_t)(etag_len >> 8);
    fixed[35] = (uint8_t)etag_len;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    CN_ASSERT(ctx != NULL);
    int ok = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
             EVP_DigestUpdate(ctx, fixed, 4) == 1 && EVP_DigestUpdate(ctx, key, klen) == 1 &&
             EVP_DigestUpdate(ctx, fixed + 4, sizeof(fixed) - 4) == 1 &&
             EVP_DigestUpdate(ctx, etag, etag_len) == 1 &&
             EVP_DigestFinal_ex(ctx, md, &md_len) == 1;
    EVP_MD_CTX_free(ctx);
    CN_ASSERT(ok && md_len >= 16);
    out[0] = msg_digest_be64(md);
    out[1] = msg_digest_be64(md + 8);
}

void msg_digest_sum_add(struct msg_digest_sum *s, const uint64_t h[2])
{
    s->count++;
    s->h[0] += h[0];
    s->h[1] += h[1];
}

int msg_digest_sum_eq(const struct msg_digest_sum *a, const struct msg_digest_sum *b)
{
    return a->count == b->count && a->h[0] == b->h[0] && a->h[1] == b->h[1];
}

void msg_digest_sums_pack(const struct msg_digest_sum *s, uint32_t n, uint8_t *out)
{
    for (uint32_t i = 0; i < n; i++, out += MSG_DIGEST_SUM_LEN) {
        msg_digest_put64(out, s[i].count);
        msg_digest_put64(out + 8, s[i].h[0]);
        msg_digest_put64(out + 16, s[i].h[1]);
    }
}

int msg_digest_sums_unpack(const struct msg_bytes *b, struct msg_digest_sum *out, uint32_t max,
                           uint32_t *n)
{
    if (b->len % MSG_DIGEST_SUM_LEN != 0 || b->len / MSG_DIGEST_SUM_LEN > max)
        return CN_INVAL;
    *n = b->len / MSG_DIGEST_SUM_LEN;
    for (uint32_t i = 0; i < *n; i++) {
        const uint8_t *p = b->ptr + (size_t)i * MSG_DIGEST_SUM_LEN;
        out[i].count = msg_digest_be64(p);
        out[i].h[0] = msg_digest_be64(p + 8);
        out[i].h[1] = msg_digest_be64(p + 16);
    }
    return CN_OK;
}

void msg_digest_arcs_pack(const struct msg_digest_arc *a, uint32_t n, uint8_t *out)
{
    for (uint32_t i = 0; i < n; i++, out += MSG_DIGEST_ARC_LEN) {
        msg_digest_put64(out, a[i].first);
        msg_digest_put64(out + 8, a[i].last);
    }
}

int msg_digest_arcs_unpack(const struct msg_bytes *b, struct msg_digest_arc *out, uint32_t max,
                           uint32_t *n)
{
    if (b->len % MSG_DIGEST_ARC_LEN != 0 || b->len / MSG_DIGEST_ARC_LEN > max)
        return CN_INVAL;
    uint32_t k = b->len / MSG_DIGEST_ARC_LEN;
    for (uint32_t i = 0; i < k; i++) {
        const uint8_t *p = b->ptr + (size_t)i * MSG_DIGEST_ARC_LEN;
        out[i].first = msg_digest_be64(p);
        out[i].last = msg_digest_be64(p + 8);
        if (out[i].first > out[i].last || (i > 0 && out[i].first <= out[i - 1].last))
            return CN_INVAL;
    }
    *n = k;
    return CN_OK;
}

int msg_digest_arcs_contain(const struct msg_digest_arc *a, uint32_t n, uint64_t h)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {   /* first arc whose last >= h */
        uint32_t mid = lo + (hi - lo) / 2;
        if (a[mid].last < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && a[lo].first <= h;
}
