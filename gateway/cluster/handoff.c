/* Per-node hint counters and the holders' counts (see handoff.h): a
 * max × max table held[holder][node] under one mutex, and per node an atomic
 * sum of its column that reads take without the lock. Node ids are the
 * cluster's slot table, published by an atomic count. */
#include "handoff.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/rc.h"

struct gw_handoff_node {
    atomic_uint_fast64_t pending;
    uint64_t added, replayed, dropped;
};

struct gw_handoff {
    pthread_mutex_t lock;
    const char *const *ids;         /* the slot table's ids; [0, named) set */
    _Atomic uint32_t named;
    uint32_t n_nodes;               /* max: the table's side */
    uint64_t *held;                 /* [holder * n_nodes + node] */
    struct gw_handoff_node *nodes;
};

struct gw_handoff *gw_handoff_new(const char *const *ids, uint32_t max_nodes)
{
    struct gw_handoff *h = cn_calloc(1, sizeof(*h));
    pthread_mutex_init(&h->lock, NULL);
    h->ids = ids;
    atomic_init(&h->named, 0);
    h->n_nodes = max_nodes;
    h->held = cn_calloc((size_t)h->n_nodes * h->n_nodes, sizeof(*h->held));
    h->nodes = cn_calloc(h->n_nodes, sizeof(*h->nodes));
    for (uint32_t i = 0; i < h->n_nodes; i++)
        atomic_init(&h->nodes[i].pending, 0);
    return h;
}

void gw_handoff_free(struct gw_handoff *h)
{
    if (h == NULL)
        return;
    cn_free(h->held);
    cn_free(h->nodes);
    pthread_mutex_destroy(&h->lock);
    cn_free(h);
}

void gw_handoff_set_nodes(struct gw_handoff *h, uint32_t n)
{
    CN_ASSERT(n <= h->n_nodes && n >= atomic_load_explicit(&h->named, memory_order_relaxed));
    atomic_store_explicit(&h->named, n, memory_order_release);
}

uint32_t gw_handoff_nodes(const struct gw_handoff *h)
{
    return atomic_load_explicit(&((struct gw_handoff *)h)->named, memory_order_acquire);
}

const char *gw_handoff_node_id(const struct gw_handoff *h, uint32_t node)
{
    CN_ASSERT(node < gw_handoff_nodes(h));
    return h->ids[node];
}

int gw_handoff_node_find(const struct gw_handoff *h, const void *id, size_t id_len)
{
    for (uint32_t i = gw_handoff_nodes(h); i-- > 0;) {
        const char *nid = h->ids[i];
        if (strlen(nid) == id_len && memcmp(nid, id, id_len) == 0)
            return (int)i;
    }
    return -1;
}

/* Sets held[holder][node] and moves node's pending by the difference. */
static void gw_handoff_held_locked(struct gw_handoff *h, uint32_t holder, uint32_t node,
                                   uint64_t count)
{
    uint64_t *cell = &h->held[(size_t)holder * h->n_nodes + node];
    atomic_fetch_add(&h->nodes[node].pending, count - *cell); /* wraps when lower */
    *cell = count;
}

void gw_handoff_added(struct gw_handoff *h, uint32_t holder, uint32_t node)
{
    CN_ASSERT(holder < h->n_nodes && node < h->n_nodes);
    pthread_mutex_lock(&h->lock);
    h->nodes[node].added++;
    gw_handoff_held_locked(h, holder, node, h->held[(size_t)holder * h->n_nodes + node] + 1);
    pthread_mutex_unlock(&h->lock);
}

void gw_handoff_dropped(struct gw_handoff *h, uint32_t node)
{
    CN_ASSERT(node < h->n_nodes);
    pthread_mutex_lock(&h->lock);
    h->nodes[node].dropped++;
    pthread_mutex_unlock(&h->lock);
}

void gw_handoff_replayed(struct gw_handoff *h, uint32_t node, uint64_t n)
{
    CN_ASSERT(node < h->n_nodes);
    pthread_mutex_lock(&h->lock);
    h->nodes[node].replayed += n;
    pthread_mutex_unlock(&h->lock);
}

void gw_handoff_set_held(struct gw_handoff *h, uint32_t holder, uint32_t node, uint64_t count)
{
    CN_ASSERT(holder < h->n_nodes && node < h->n_nodes);
    pthread_mutex_lock(&h->lock);
    gw_handoff_held_locked(h, holder, node, count);
    pthread_mutex_unlock(&h->lock);
}

void gw_handoff_stats(struct gw_handoff *h, uint32_t node, struct gw_handoff_stats *st)
{
    CN_ASSERT(node < h->n_nodes);
    pthread_mutex_lock(&h->lock);
    st->pending = atomic_load(&h->nodes[node].pending);
    st->added = h->nodes[node].added;
    st->replayed = h->nodes[node].replayed;
    st->dropped = h->nodes[node].dropped;
    pthread_mutex_unlock(&h->lock);
}

uint64_t gw_handoff_pending(const struct gw_handoff *h, uint32_t node)
{
    CN_ASSERT(node < h->n_nodes);
    return atomic_load(&h->nodes[node].pending);
}

int gw_handoff_validate(struct gw_handoff *h)
{
    int rc = CN_OK;
    pthread_mutex_lock(&h->lock);
    for (uint32_t node = 0; node < h->n_nodes; node++) {
        uint64_t sum = 0;
        for (uint32_t holder = 0; holder < h->n_nodes; holder++)
            sum += h->held[(size_t)holder * h->n_nodes + node];
        if (sum != atomic_load(&h->nodes[node].pending))
            rc = CN_CORRUPT;
    }
    pthread_mutex_unlock(&h->lock);
    return rc;
}
