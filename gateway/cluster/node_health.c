/* Node up/down states shared by the worker threads: one atomic word per
 * field, so marking, probing claims and reads never take a lock. */
#include "node_health.h"

#include <stdatomic.h>

#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/time.h"

struct gw_node_health_node {
    atomic_int down;
    atomic_int probing;
    atomic_uint_fast64_t marked_down;
    atomic_uint_fast64_t marked_up;
    atomic_uint_fast64_t down_since_us;
    atomic_uint_fast64_t up_since_us;
    atomic_uint vmax;   /* the protocol version its last reply said it speaks; 0: unknown */
};

struct gw_node_health {
    uint32_t n_nodes;
    struct gw_node_health_node *nodes;
};

struct gw_node_health *gw_node_health_new(uint32_t n_nodes)
{
    CN_ASSERT(n_nodes >= 1);
    struct gw_node_health *h = cn_calloc(1, sizeof(*h));
    h->n_nodes = n_nodes;
    h->nodes = cn_calloc(n_nodes, sizeof(*h->nodes));
    for (uint32_t i = 0; i < n_nodes; i++) {
        atomic_init(&h->nodes[i].down, 0);
        atomic_init(&h->nodes[i].probing, 0);
        atomic_init(&h->nodes[i].marked_down, 0);
        atomic_init(&h->nodes[i].marked_up, 0);
        atomic_init(&h->nodes[i].down_since_us, 0);
        atomic_init(&h->nodes[i].up_since_us, 0);
        atomic_init(&h->nodes[i].vmax, 0);
    }
    return h;
}

void gw_node_health_free(struct gw_node_health *h)
{
    if (h == NULL)
        return;
    cn_free(h->nodes);
    cn_free(h);
}

uint32_t gw_node_health_nodes(const struct gw_node_health *h)
{
    return h->n_nodes;
}

void gw_node_health_set_vmax(struct gw_node_health *h, uint32_t node, uint32_t vmax)
{
    CN_ASSERT(node < h->n_nodes);
    atomic_store_explicit(&h->nodes[node].vmax, vmax, memory_order_relaxed);
}

uint32_t gw_node_health_vmax(const struct gw_node_health *h, uint32_t node)
{
    CN_ASSERT(node < h->n_nodes);
    return atomic_load_explicit(&h->nodes[node].vmax, memory_order_relaxed);
}

int gw_node_health_is_up(const struct gw_node_health *h, uint32_t node)
{
    CN_ASSERT(node < h->n_nodes);
    return !atomic_load_explicit(&h->nodes[node].down, memory_order_acquire);
}

int gw_node_health_mark_down(struct gw_node_health *h, uint32_t node)
{
    CN_ASSERT(node < h->n_nodes);
    struct gw_node_health_node *n = &h->nodes[node];
    int expected = 0;
    if (!atomic_compare_exchange_strong(&n->down, &expected, 1))
        return 0;
    atomic_store(&n->down_since_us, cn_time_mono_us());
    atomic_fetch_add(&n->marked_down, 1);
    return 1;
}

int gw_node_health_mark_up(struct gw_node_health *h, uint32_t node)
{
    CN_ASSERT(node < h->n_nodes);
    struct gw_node_health_node *n = &h->nodes[node];
    int expected = 1;
    if (!atomic_compare_exchange_strong(&n->down, &expected, 0))
        return 0;
    atomic_store(&n->down_since_us, 0);
    atomic_store(&n->up_since_us, cn_time_mono_us());
    atomic_fetch_add(&n->marked_up, 1);
    return 1;
}

int gw_node_health_claim_probe(struct gw_node_health *h, uint32_t node)
{
    CN_ASSERT(node < h->n_nodes);
    int expected = 0;
    return atomic_compare_exchange_strong(&h->nodes[node].probing, &expected, 1);
}

void gw_node_health_release_probe(struct gw_node_health *h, uint32_t node)
{
    CN_ASSERT(node < h->n_nodes);
    atomic_store(&h->nodes[node].probing, 0);
}

void gw_node_health_stats(const struct gw_node_health *h, uint32_t node,
                          struct gw_node_health_stats *st)
{
    CN_ASSERT(node < h->n_nodes);
    const struct gw_node_health_node *n = &h->nodes[node];
    st->up = !atomic_load(&n->down);
    st->marked_down = atomic_load(&n->marked_down);
    st->marked_up = atomic_load(&n->marked_up);
    st->down_since_us = atomic_load(&n->down_since_us);
    st->up_since_us = atomic_load(&n->up_since_us);
}
