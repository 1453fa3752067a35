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
    uint32_t n_points;
    struct cn_ring_point *points;
    uint32_t *node_points; /* points of each node */
    uint32_t *zone;        /* zone number of each node; NULL: no zones */
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
    return cn_ring_new_weighted(names, NULL, NULL, n_nodes, vnodes, err);
}

/* Numbers the distinct zone names (NULL and "" are one "no zone" zone). */
static uint32_t *cn_ring_zone_numbers(const char *const *zones, uint32_t n_nodes)
{
    uint32_t *z = cn_calloc(n_nodes, sizeof(uint32_t));
    for (uint32_t i = 0; i < n_nodes; i++) {
        const char *zi = zones[i] != NULL ? zones[i] : "";
        z[i] = i;
        for (uint32_t j = 0; j < i; j++) {
            const char *zj = zones[j] != NULL ? zones[j] : "";
            if (strcmp(zi, zj) == 0) {
                z[i] = z[j];
                break;
            }
        }
    }
    return z;
}

/* Points of node i: vnodes per weight 100, at least 1 when the weight is
 * not 0; weight 0 (a node leaving the cluster) places no point, so the node
 * keeps its index but owns nothing. */
static uint32_t cn_ring_points_of(const uint32_t *weights, uint32_t i, uint32_t vnodes)
{
    if (weights == NULL)
        return vnodes;
    if (weights[i] == 0)
        return 0;
    uint64_t pts = (uint64_t)vnodes * weights[i] / 100;
    return pts > 0 ? (uint32_t)CN_MIN(pts, (uint64_t)1 << 27) : 1;
}

/* Checks names and weights; returns the total point count or 0 with err. */
static uint32_t cn_ring_check_nodes(const char *const *names, const uint32_t *weights,
                                    uint32_t n_nodes, uint32_t vnodes, char err[CN_ERR_LEN])
{
    if (n_nodes == 0 || vnodes == 0) {
        snprintf(err, CN_ERR_LEN, "a ring needs at least one node and one vnode");
        return 0;
    }
    uint64_t total = 0;
    for (uint32_t i = 0; i < n_nodes; i++) {
        for (uint32_t j = i + 1; j < n_nodes; j++)
            if (strcmp(names[i], names[j]) == 0) {
                snprintf(err, CN_ERR_LEN, "node '%s' is listed twice", names[i]);
                return 0;
            }
        total += cn_ring_points_of(weights, i, vnodes);
    }
    if (total == 0) {
        snprintf(err, CN_ERR_LEN, "every node has weight 0");
        return 0;
    }
    if (total > (1u << 26)) {
        snprintf(err, CN_ERR_LEN, "ring too large (%llu points)", (unsigned long long)total);
        return 0;
    }
    return (uint32_t)total;
}

struct cn_ring *cn_ring_new_weighted(const char *const *names, const uint32_t *weights,
                                     const char *const *zones, uint32_t n_nodes,
                                     uint32_t vnodes, char err[CN_ERR_LEN])
{
    uint32_t total = cn_ring_check_nodes(names, weights, n_nodes, vnodes, err);
    if (total == 0)
        return NULL;
    struct cn_ring *r = cn_calloc(1, sizeof(*r));
    r->n_nodes = n_nodes;
    r->n_points = total;
    r->points = cn_calloc(r->n_points, sizeof(*r->points));
    r->node_points = cn_calloc(n_nodes, sizeof(uint32_t));
    r->zone = zones != NULL ? cn_ring_zone_numbers(zones, n_nodes) : NULL;
    char buf[1024];
    uint32_t at = 0;
    for (uint32_t i = 0; i < n_nodes; i++) {
        r->node_points[i] = cn_ring_points_of(weights, i, vnodes);
        for (uint32_t v = 0; v < r->node_points[i]; v++) {
            int n = snprintf(buf, sizeof(buf), "%s#%u", names[i], v);
            size_t len = n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1;
            struct cn_ring_point *pt = &r->points[at++];
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
    cn_free(r->node_points);
    cn_free(r->zone);
    cn_free(r);
}

uint32_t cn_ring_nodes(const struct cn_ring *r)
{
    return r->n_nodes;
}

uint32_t cn_ring_node_points(const struct cn_ring *r, uint32_t node)
{
    return node < r->n_nodes ? r->node_points[node] : 0;
}

uint32_t cn_ring_total_points(const struct cn_ring *r)
{
    return r->n_points;
}

double cn_ring_ownership(const struct cn_ring *r, uint32_t node)
{
    /* the point at index i owns (points[i-1], points[i]]; the first one also
     * owns the wrap-around arc after the last */
    double owned = 0;
    for (uint32_t i = 0; i < r->n_points; i++) {
        if (r->points[i].node != node)
            continue;
        uint64_t prev = r->points[i == 0 ? r->n_points - 1 : i - 1].hash;
        owned += (double)(r->points[i].hash - prev); /* unsigned: wraps for i == 0 */
    }
    if (r->n_points == 1)
        return 1.0;
    return owned / 18446744073709551616.0;
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

/* Collects the distinct nodes met walking clockwise from point i, in order,
 * stopping once `stop` were found (or every node was). Returns the count. */
static uint32_t cn_ring_walk(const struct cn_ring *r, uint32_t i, uint32_t stop, uint32_t *out)
{
    uint32_t got = 0;
    for (uint32_t step = 0; step < r->n_points && got < stop; step++) {
        uint32_t node = r->points[(i + step) % r->n_points].node;
        int seen = 0;
        for (uint32_t k = 0; k < got; k++)
            seen |= out[k] == node;
        if (!seen)
            out[got++] = node;
    }
    return got;
}

uint32_t cn_ring_lookup(const struct cn_ring *r, const void *key, size_t len, uint32_t n,
                        uint32_t *out)
{
    return cn_ring_replicas_at(r, cn_ring_first_at(r, cn_ring_hash(key, len)), n, out);
}

uint32_t cn_ring_replicas_at(const struct cn_ring *r, uint32_t i, uint32_t n, uint32_t *out)
{
    CN_ASSERT(i < r->n_points);
    uint32_t want = CN_MIN(n, r->n_nodes);
    if (r->zone == NULL)
        return cn_ring_walk(r, i, want, out);
    /* zones: every node in walk order, then distinct zones first */
    uint32_t order_small[64];
    uint32_t *order = r->n_nodes <= 64 ? order_small : cn_malloc(r->n_nodes * sizeof(uint32_t));
    uint32_t all = cn_ring_walk(r, i, r->n_nodes, order), got = 0;
    for (uint32_t k = 0; k < all && got < want; k++) {
        int zone_used = 0;
        for (uint32_t j = 0; j < got; j++)
            zone_used |= r->zone[out[j]] == r->zone[order[k]];
        if (!zone_used) {
            out[got++] = order[k];
            order[k] = UINT32_MAX;
        }
    }
    for (uint32_t k = 0; k < all && got < want; k++)
        if (order[k] != UINT32_MAX)
            out[got++] = order[k];
    if (order != order_small)
        cn_free(order);
    return got;
}

uint64_t cn_ring_point_hash(const struct cn_ring *r, uint32_t i)
{
    CN_ASSERT(i < r->n_points);
    return r->points[i].hash;
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
        if (count[i] != r->node_points[i])
            rc = CN_CORRUPT;
    cn_free(count);
    return rc;
}
