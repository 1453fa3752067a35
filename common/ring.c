/* Consistent-hash ring: a sorted array of (point, node) pairs, searched with
 * a binary search; replicas are collected by walking on until n distinct
 * nodes are met. */
#include "cn/ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn/alloc.h"

struct cn_ring_point {
    uint64_t hash;
    uint32_t node;
};

struct cn_ring {
    uint32_t n_nodes;
    uint32_t vnodes;
    uint32_t n_points;
    struct cn_ring_point *points;
};

uint64_t cn_ring_hash(const void *key, size_t len)
{
    const unsigned char *p = key;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return h;
}

static int cn_ring_point_cmp(const void *a, const void *b)
{
    const struct cn_ring_point *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

struct cn_ring *cn_ring_new(const char *const *names, uint32_t n_nodes, uint32_t vnodes,
                            char err[CN_ERR_LEN])
{
    if (n_nodes == 0 || vnodes == 0) {
        snprintf(err, CN_ERR_LEN, "a ring needs at least one node and one vnode");
        return NULL;
    }
    for (uint32_t i = 0; i < n_nodes; i++)
        for (uint32_t j = i + 1; j < n_nodes; j++)
            if (strcmp(names[i], names[j]) == 0) {
                snprintf(err, CN_ERR_LEN, "node '%s' is listed twice", names[i]);
                return NULL;
            }
    struct cn_ring *r = cn_calloc(1, sizeof(*r));
    r->n_nodes = n_nodes;
    r->vnodes = vnodes;
    r->n_points = n_nodes * vnodes;
    r->points = cn_calloc(r->n_points, sizeof(*r->points));
    char buf[1024];
    for (uint32_t i = 0; i < n_nodes; i++) {
        for (uint32_t v = 0; v < vnodes; v++) {
            int n = snprintf(buf, sizeof(buf), "%s#%u", names[i], v);
            size_t len = n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1;
            struct cn_ring_point *pt = &r->points[i * vnodes + v];
            pt->hash = cn_ring_hash(buf, len);
            pt->node = i;
        }
    }
    qsort(r->points, r->n_points, sizeof(*r->points), cn_ring_point_cmp);
    return r;
}

void cn_ring_free(struct cn_ring *r)
{
    if (r == NULL)
        return;
    cn_free(r->points);
    cn_free(r);
}

uint32_t cn_ring_nodes(const struct cn_ring *r)
{
    return r->n_nodes;
}

/* Index of the first point whose hash is >= h (wrapping to 0). */
static uint32_t cn_ring_first_at(const struct cn_ring *r, uint64_t h)
{
    uint32_t lo = 0, hi = r->n_points;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (r->points[mid].hash < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == r->n_points ? 0 : lo;
}

uint32_t cn_ring_lookup(const struct cn_ring *r, const void *key, size_t len, uint32_t n,
                        uint32_t *out)
{
    uint32_t want = CN_MIN(n, r->n_nodes), got = 0;
    uint32_t i = cn_ring_first_at(r, cn_ring_hash(key, len));
    for (uint32_t step = 0; step < r->n_points && got < want; step++) {
        uint32_t node = r->points[(i + step) % r->n_points].node;
        int seen = 0;
        for (uint32_t k = 0; k < got; k++)
            seen |= out[k] == node;
        if (!seen)
            out[got++] = node;
    }
    return got;
}

int cn_ring_validate(const struct cn_ring *r)
{
    uint32_t *count = cn_calloc(r->n_nodes, sizeof(uint32_t));
    int rc = CN_OK;
    for (uint32_t i = 0; i < r->n_points; i++) {
        if (r->points[i].node >= r->n_nodes ||
            (i > 0 && cn_ring_point_cmp(&r->points[i - 1], &r->points[i]) > 0)) {
            rc = CN_CORRUPT;
            break;
        }
        count[r->points[i].node]++;
    }
    for (uint32_t i = 0; rc == CN_OK && i < r->n_nodes; i++)
        if (count[i] != r->vnodes)
            rc = CN_CORRUPT;
    cn_free(count);
    return rc;
}
