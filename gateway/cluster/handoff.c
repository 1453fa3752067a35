/* Hint queues: per node a FIFO of keys plus a chained hash table over the
 * same entries, so a key written many times while its node is away is held
 * (and replayed) once. */
#include "handoff.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/ring.h"

#define GW_HANDOFF_BUCKETS 16384u /* per node, power of two */

struct gw_handoff_entry {
    struct gw_handoff_entry *next;  /* FIFO order */
    struct gw_handoff_entry *chain; /* hash bucket */
    uint64_t hash;
    size_t key_len;
    char key[];
};

struct gw_handoff_queue {
    struct gw_handoff_entry *head, *tail;
    struct gw_handoff_entry **table;
    atomic_uint_fast64_t pending;
    uint64_t added, replayed, dropped;
};

struct gw_handoff {
    pthread_mutex_t lock;
    uint32_t n_nodes;
    uint64_t max_hints;
    struct gw_handoff_queue *q;
};

struct gw_handoff *gw_handoff_new(uint32_t n_nodes, uint64_t max_hints)
{
    struct gw_handoff *h = cn_calloc(1, sizeof(*h));
    pthread_mutex_init(&h->lock, NULL);
    h->n_nodes = n_nodes;
    h->max_hints = max_hints;
    h->q = cn_calloc(n_nodes, sizeof(*h->q));
    for (uint32_t i = 0; i < n_nodes; i++)
        atomic_init(&h->q[i].pending, 0);
    return h;
}

void gw_handoff_free(struct gw_handoff *h)
{
    if (h == NULL)
        return;
    for (uint32_t i = 0; i < h->n_nodes; i++) {
        struct gw_handoff_entry *e = h->q[i].head;
        while (e != NULL) {
            struct gw_handoff_entry *next = e->next;
            cn_free(e);
            e = next;
        }
        cn_free(h->q[i].table);
    }
    cn_free(h->q);
    pthread_mutex_destroy(&h->lock);
    cn_free(h);
}

static struct gw_handoff_entry **gw_handoff_slot_locked(struct gw_handoff_queue *q, uint64_t hash,
                                                        const void *key, size_t key_len)
{
    struct gw_handoff_entry **pp = &q->table[hash & (GW_HANDOFF_BUCKETS - 1)];
    while (*pp != NULL && !((*pp)->hash == hash && (*pp)->key_len == key_len &&
                            memcmp((*pp)->key, key, key_len) == 0))
        pp = &(*pp)->chain;
    return pp;
}

int gw_handoff_add(struct gw_handoff *h, uint32_t node, const void *key, size_t key_len)
{
    CN_ASSERT(node < h->n_nodes);
    struct gw_handoff_queue *q = &h->q[node];
    uint64_t hash = cn_ring_hash(key, key_len);
    int rc = 1;
    pthread_mutex_lock(&h->lock);
    if (q->table == NULL)
        q->table = cn_calloc(GW_HANDOFF_BUCKETS, sizeof(*q->table));
    struct gw_handoff_entry **slot = gw_handoff_slot_locked(q, hash, key, key_len);
    if (*slot != NULL) {
        rc = 0;
    } else if (atomic_load(&q->pending) >= h->max_hints) {
        q->dropped++;
        rc = -1;
    } else {
        struct gw_handoff_entry *e = cn_malloc(sizeof(*e) + key_len);
        e->next = NULL;
        e->chain = NULL;
        e->hash = hash;
        e->key_len = key_len;
        memcpy(e->key, key, key_len);
        *slot = e;
        if (q->tail != NULL)
            q->tail->next = e;
        else
            q->head = e;
        q->tail = e;
        q->added++;
        atomic_fetch_add(&q->pending, 1);
    }
    pthread_mutex_unlock(&h->lock);
    return rc;
}

uint32_t gw_handoff_take(struct gw_handoff *h, uint32_t node, struct gw_handoff_hint *out,
                         uint32_t max)
{
    CN_ASSERT(node < h->n_nodes);
    struct gw_handoff_queue *q = &h->q[node];
    uint32_t n = 0;
    pthread_mutex_lock(&h->lock);
    while (n < max && q->head != NULL) {
        struct gw_handoff_entry *e = q->head;
        q->head = e->next;
        if (q->head == NULL)
            q->tail = NULL;
        struct gw_handoff_entry **slot = gw_handoff_slot_locked(q, e->hash, e->key, e->key_len);
        CN_ASSERT(*slot == e);
        *slot = e->chain;
        out[n].key = cn_memdup(e->key, e->key_len);
        out[n].key_len = e->key_len;
        n++;
        cn_free(e);
        atomic_fetch_sub(&q->pending, 1);
    }
    pthread_mutex_unlock(&h->lock);
    return n;
}

void gw_handoff_replayed(struct gw_handoff *h, uint32_t node, uint64_t n)
{
    CN_ASSERT(node < h->n_nodes);
    pthread_mutex_lock(&h->lock);
    h->q[node].replayed += n;
    pthread_mutex_unlock(&h->lock);
}

void gw_handoff_stats(struct gw_handoff *h, uint32_t node, struct gw_handoff_stats *st)
{
    CN_ASSERT(node < h->n_nodes);
    pthread_mutex_lock(&h->lock);
    st->pending = atomic_load(&h->q[node].pending);
    st->added = h->q[node].added;
    st->replayed = h->q[node].replayed;
    st->dropped = h->q[node].dropped;
    pthread_mutex_unlock(&h->lock);
}

uint64_t gw_handoff_pending(const struct gw_handoff *h, uint32_t node)
{
    CN_ASSERT(node < h->n_nodes);
    return atomic_load(&h->q[node].pending);
}

int gw_handoff_validate(struct gw_handoff *h)
{
    int rc = CN_OK;
    pthread_mutex_lock(&h->lock);
    for (uint32_t i = 0; i < h->n_nodes && rc == CN_OK; i++) {
        struct gw_handoff_queue *q = &h->q[i];
        uint64_t listed = 0, chained = 0;
        for (struct gw_handoff_entry *e = q->head; e != NULL; e = e->next) {
            listed++;
            if (e->next == NULL && e != q->tail)
                rc = CN_CORRUPT;
            if (*gw_handoff_slot_locked(q, e->hash, e->key, e->key_len) != e)
                rc = CN_CORRUPT;
        }
        for (uint32_t b = 0; q->table != NULL && b < GW_HANDOFF_BUCKETS; b++)
            for (struct gw_handoff_entry *e = q->table[b]; e != NULL; e = e->chain)
                chained++;
        if (listed != chained || listed != atomic_load(&q->pending))
            rc = CN_CORRUPT;
    }
    pthread_mutex_unlock(&h->lock);
    return rc;
}
