/* Chunk buffers of large-object writes (lo_pool.h): a mutex-guarded stack
 * of free buffers, bounded by keep, emptied when no writer holds the pool. */
#include "lo_pool.h"

#include <pthread.h>

#include "cn/alloc.h"
#include "cn/log.h"
#include "cn/rc.h"

struct gw_lo_pool {
    pthread_mutex_t mu;
    size_t buf_len;
    uint32_t keep;
    uint32_t holders;    /* writers using the pool */
    uint32_t in_use;     /* buffers taken, not given back */
    uint32_t n_free;
    uint64_t allocated;
    int closed;
    void **free_bufs;    /* keep slots */
};

struct gw_lo_pool *gw_lo_pool_new(size_t buf_len, uint32_t keep)
{
    CN_ASSERT(buf_len > 0);
    struct gw_lo_pool *p = cn_calloc(1, sizeof(*p));
    pthread_mutex_init(&p->mu, NULL);
    p->buf_len = buf_len;
    p->keep = keep;
    p->free_bufs = cn_calloc(keep > 0 ? keep : 1, sizeof(void *));
    return p;
}

static void gw_lo_pool_destroy(struct gw_lo_pool *p)
{
    pthread_mutex_destroy(&p->mu);
    cn_free(p->free_bufs);
    cn_free(p);
}

/* Frees the kept buffers; called with the lock held. */
static void gw_lo_pool_drop_free_locked(struct gw_lo_pool *p)
{
    while (p->n_free > 0)
        cn_free(p->free_bufs[--p->n_free]);
}

void gw_lo_pool_close(struct gw_lo_pool *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->closed = 1;
    gw_lo_pool_drop_free_locked(p);
    int last = p->in_use == 0;
    pthread_mutex_unlock(&p->mu);
    if (last)
        gw_lo_pool_destroy(p);
}

size_t gw_lo_pool_buf_len(const struct gw_lo_pool *p)
{
    return p->buf_len;
}

void gw_lo_pool_hold(struct gw_lo_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->holders++;
    pthread_mutex_unlock(&p->mu);
}

void gw_lo_pool_release(struct gw_lo_pool *p)
{
    pthread_mutex_lock(&p->mu);
    CN_ASSERT(p->holders > 0);
    if (--p->holders == 0)
        gw_lo_pool_drop_free_locked(p);
    pthread_mutex_unlock(&p->mu);
}

void *gw_lo_pool_get(struct gw_lo_pool *p)
{
    void *buf = NULL;
    pthread_mutex_lock(&p->mu);
    CN_ASSERT(!p->closed);
    p->in_use++;
    if (p->n_free > 0)
        buf = p->free_bufs[--p->n_free];
    else
        p->allocated++;
    pthread_mutex_unlock(&p->mu);
    if (buf == NULL && (buf = cn_malloc(p->buf_len)) == NULL) {
        pthread_mutex_lock(&p->mu);   /* the allocation-failure test hook */
        p->in_use--;
        pthread_mutex_unlock(&p->mu);
    }
    return buf;
}

void gw_lo_pool_put(struct gw_lo_pool *p, void *buf)
{
    pthread_mutex_lock(&p->mu);
    CN_ASSERT(p->in_use > 0);
    p->in_use--;
    if (!p->closed && p->holders > 0 && p->n_free < p->keep) {
        p->free_bufs[p->n_free++] = buf;
        buf = NULL;
    }
    int last = p->closed && p->in_use == 0;
    pthread_mutex_unlock(&p->mu);
    cn_free(buf);
    if (last)
        gw_lo_pool_destroy(p);
}

void gw_lo_pool_stats(struct gw_lo_pool *p, struct gw_lo_pool_stats *st)
{
    pthread_mutex_lock(&p->mu);
    st->in_use = p->in_use;
    st->kept = p->n_free;
    st->allocated = p->allocated;
    pthread_mutex_unlock(&p->mu);
}
