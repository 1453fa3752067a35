/* Log-linear histogram (see cn/hist.h). Bucket index of v:
 * shift = max(0, msb(v) - 7), idx = (shift << 7) + (v >> shift), so values
 * below 256 have their own bucket and every later power of two gets 128. */
#include "cn/hist.h"

#include <string.h>

#include "cn/alloc.h"
#include "cn/rc.h"

#define CN_HIST_SUB_BITS 7
#define CN_HIST_SUB_COUNT (1u << CN_HIST_SUB_BITS)

struct cn_hist {
    uint64_t count;
    uint64_t sum;
    uint64_t min;
    uint64_t max;
    uint64_t max_value;
    uint32_t nbuckets;
    uint32_t lo;        /* lowest used bucket, nbuckets when empty */
    uint32_t hi;        /* highest used bucket, 0 when empty */
    uint64_t *buckets;
};

uint32_t cn_hist_bucket_of(uint64_t value)
{
    if (value < 2 * CN_HIST_SUB_COUNT)
        return (uint32_t)value;
    unsigned msb = 63u - (unsigned)__builtin_clzll(value);
    unsigned shift = msb - CN_HIST_SUB_BITS;
    return (uint32_t)(((uint64_t)shift << CN_HIST_SUB_BITS) + (value >> shift));
}

uint64_t cn_hist_bucket_low(uint32_t idx)
{
    if (idx < 2 * CN_HIST_SUB_COUNT)
        return idx;
    unsigned shift = (idx >> CN_HIST_SUB_BITS) - 1;
    uint64_t mant = idx - ((uint64_t)shift << CN_HIST_SUB_BITS);
    return mant << shift;
}

uint64_t cn_hist_bucket_high(uint32_t idx)
{
    if (idx < 2 * CN_HIST_SUB_COUNT)
        return idx;
    unsigned shift = (idx >> CN_HIST_SUB_BITS) - 1;
    return cn_hist_bucket_low(idx) + ((uint64_t)1 << shift) - 1;
}

struct cn_hist *cn_hist_new(uint64_t max_value)
{
    struct cn_hist *h = cn_calloc(1, sizeof(*h));
    if (max_value < 2 * CN_HIST_SUB_COUNT)
        max_value = 2 * CN_HIST_SUB_COUNT;
    h->max_value = max_value;
    h->nbuckets = cn_hist_bucket_of(max_value) + 1;
    h->buckets = cn_calloc(h->nbuckets, sizeof(uint64_t));
    h->lo = h->nbuckets;
    return h;
}

void cn_hist_free(struct cn_hist *h)
{
    if (h == NULL)
        return;
    cn_free(h->buckets);
    cn_free(h);
}

void cn_hist_record_n(struct cn_hist *h, uint64_t value, uint64_t n)
{
    if (n == 0)
        return;
    uint32_t idx = value > h->max_value ? h->nbuckets - 1 : cn_hist_bucket_of(value);
    h->buckets[idx] += n;
    if (h->count == 0 || value < h->min)
        h->min = value;
    if (h->count == 0 || value > h->max)
        h->max = value;
    h->count += n;
    h->sum += value * n;
    if (idx < h->lo)
        h->lo = idx;
    if (idx > h->hi)
        h->hi = idx;
}

void cn_hist_record(struct cn_hist *h, uint64_t value)
{
    cn_hist_record_n(h, value, 1);
}

void cn_hist_reset(struct cn_hist *h)
{
    if (h->count != 0)
        memset(h->buckets + h->lo, 0, (size_t)(h->hi - h->lo + 1) * sizeof(uint64_t));
    h->count = h->sum = h->min = h->max = 0;
    h->lo = h->nbuckets;
    h->hi = 0;
}

int cn_hist_merge(struct cn_hist *dst, const struct cn_hist *src)
{
    if (dst->max_value != src->max_value)
        return CN_INVAL;
    if (src->count == 0)
        return CN_OK;
    for (uint32_t i = src->lo; i <= src->hi; i++)
        dst->buckets[i] += src->buckets[i];
    if (dst->count == 0 || src->min < dst->min)
        dst->min = src->min;
    if (dst->count == 0 || src->max > dst->max)
        dst->max = src->max;
    dst->count += src->count;
    dst->sum += src->sum;
    dst->lo = CN_MIN(dst->lo, src->lo);
    dst->hi = CN_MAX(dst->hi, src->hi);
    return CN_OK;
}

uint64_t cn_hist_count(const struct cn_hist *h)
{
    return h->count;
}

uint64_t cn_hist_min(const struct cn_hist *h)
{
    return h->min;
}

uint64_t cn_hist_max(const struct cn_hist *h)
{
    return h->max;
}

double cn_hist_mean(const struct cn_hist *h)
{
    return h->count ? (double)h->sum / (double)h->count : 0.0;
}

uint64_t cn_hist_percentile(const struct cn_hist *h, double p)
{
    if (h->count == 0)
        return 0;
    if (p <= 0.0)
        return h->min;
    if (p >= 100.0)
        return h->max;
    /* nearest rank: ceil(p/100 * n), at least 1; the relative slack keeps
     * 99.9 % of 1000 at rank 999 despite 99.9 not being exact in binary */
    double exact = p / 100.0 * (double)h->count;
    exact -= exact * 1e-12;
    uint64_t rank = (uint64_t)exact;
    if ((double)rank < exact)
        rank++;
    if (rank == 0)
        rank = 1;
    uint64_t seen = 0;
    for (uint32_t i = h->lo; i <= h->hi; i++) {
        seen += h->buckets[i];
        if (seen >= rank) {
            uint64_t v = cn_hist_bucket_high(i);
            return CN_MAX(h->min, CN_MIN(v, h->max));
        }
    }
    return h->max;
}

int cn_hist_validate(const struct cn_hist *h)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < h->nbuckets; i++) {
        if (h->buckets[i] != 0 && (i < h->lo || i > h->hi))
            return CN_CORRUPT;
        total += h->buckets[i];
    }
    if (total != h->count)
        return CN_CORRUPT;
    if (h->count == 0)
        return (h->lo == h->nbuckets && h->hi == 0) ? CN_OK : CN_CORRUPT;
    if (h->buckets[h->lo] == 0 || h->buckets[h->hi] == 0 || h->min > h->max)
        return CN_CORRUPT;
    uint32_t lo = h->min > h->max_value ? h->nbuckets - 1 : cn_hist_bucket_of(h->min);
    uint32_t hi = h->max > h->max_value ? h->nbuckets - 1 : cn_hist_bucket_of(h->max);
    return (lo == h->lo && hi == h->hi) ? CN_OK : CN_CORRUPT;
}
