/* The per-worker MD5 thread of large-object writes (lo_hasher.h): a FIFO of
 * (stream, blob) jobs under one mutex; after each job the stream's loop is
 * woken with event_active (evthread is on in the gateway). */
#include "lo_hasher.h"

#include <pthread.h>

#include "cn/alloc.h"
#include "cn/log.h"
#include "cn/rc.h"

struct gw_lo_hash_job {
    struct gw_lo_hash_job *next;
    struct gw_lo_hash_stream *s;
    struct gw_blob *blob;
};

struct gw_lo_hasher {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    struct gw_lo_hash_job *head, *tail;
    int stop;
};

struct gw_lo_hash_stream {
    struct gw_lo_hasher *h;
    struct event *ev;          /* on the loop: progress */
    gw_lo_hash_cb cb;
    void *arg;
    struct gw_checksum md5;    /* updated by the hasher thread only */
    uint32_t queued;           /* loop thread */
    uint32_t hashed;           /* under h->mu */
    uint32_t pending;          /* jobs queued for it, under h->mu */
    int closed;                /* under h->mu */
    int finaled;               /* loop thread */
};

static void gw_lo_hash_stream_destroy(struct gw_lo_hash_stream *s)
{
    gw_checksum_fini(&s->md5);
    cn_free(s);
}

/* One job, outside the lock: hashes unless the stream is closed. */
static void gw_lo_hasher_run_job(struct gw_lo_hasher *h, struct gw_lo_hash_job *j)
{
    struct gw_lo_hash_stream *s = j->s;
    pthread_mutex_lock(&h->mu);
    int closed = s->closed;
    pthread_mutex_unlock(&h->mu);
    if (!closed)   /* a stream closes only on its loop, and never reopens */
        gw_checksum_update(&s->md5, gw_blob_data(j->blob), gw_blob_len(j->blob));
    gw_blob_unref(j->blob);   /* may give the buffer back to the pool */
    pthread_mutex_lock(&h->mu);
    s->pending--;
    s->hashed++;
    int destroy = s->closed && s->pending == 0;
    if (!s->closed)
        event_active(s->ev, EV_READ, 0);
    pthread_mutex_unlock(&h->mu);
    if (destroy)
        gw_lo_hash_stream_destroy(s);
    cn_free(j);
}

static void *gw_lo_hasher_main(void *arg)
{
    struct gw_lo_hasher *h = arg;
    pthread_mutex_lock(&h->mu);
    for (;;) {
        while (h->head == NULL && !h->stop)
            pthread_cond_wait(&h->cv, &h->mu);
        struct gw_lo_hash_job *j = h->head;
        if (j == NULL)
            break;   /* stopping, queue empty */
        h->head = j->next;
        if (h->head == NULL)
            h->tail = NULL;
        pthread_mutex_unlock(&h->mu);
        gw_lo_hasher_run_job(h, j);
        pthread_mutex_lock(&h->mu);
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

struct gw_lo_hasher *gw_lo_hasher_new(void)
{
    struct gw_lo_hasher *h = cn_calloc(1, sizeof(*h));
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    if (pthread_create(&h->thread, NULL, gw_lo_hasher_main, h) != 0) {
        pthread_cond_destroy(&h->cv);
        pthread_mutex_destroy(&h->mu);
        cn_free(h);
        return NULL;
    }
    return h;
}

void gw_lo_hasher_free(struct gw_lo_hasher *h)
{
    if (h == NULL)
        return;
    pthread_mutex_lock(&h->mu);
    h->stop = 1;
    pthread_cond_signal(&h->cv);
    pthread_mutex_unlock(&h->mu);
    pthread_join(h->thread, NULL);
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
    cn_free(h);
}

static void gw_lo_hash_stream_on_event(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_lo_hash_stream *s = arg;
    s->cb(s->arg);
}

struct gw_lo_hash_stream *gw_lo_hash_stream_new(struct gw_lo_hasher *h, struct event_base *base,
                                                gw_lo_hash_cb cb, void *arg)
{
    struct gw_lo_hash_stream *s = cn_calloc(1, sizeof(*s));
    if (gw_checksum_init(&s->md5, GW_CHECKSUM_BIT(GW_CHECKSUM_MD5)) != CN_OK) {
        cn_free(s);
        return NULL;
    }
    s->h = h;
    s->cb = cb;
    s->arg = arg;
    s->ev = event_new(base, -1, 0, gw_lo_hash_stream_on_event, s);
    CN_ASSERT(s->ev != NULL);
    return s;
}

void gw_lo_hash_stream_add(struct gw_lo_hash_stream *s, struct gw_blob *blob)
{
    CN_ASSERT(!s->finaled);
    struct gw_lo_hash_job *j = cn_calloc(1, sizeof(*j));
    gw_blob_ref(blob);
    j->s = s;
    j->blob = blob;
    struct gw_lo_hasher *h = s->h;
    s->queued++;
    pthread_mutex_lock(&h->mu);
    s->pending++;
    if (h->tail != NULL)
        h->tail->next = j;
    else
        h->head = j;
    h->tail = j;
    pthread_cond_signal(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

uint32_t gw_lo_hash_stream_hashed(struct gw_lo_hash_stream *s)
{
    pthread_mutex_lock(&s->h->mu);
    uint32_t n = s->hashed;
    pthread_mutex_unlock(&s->h->mu);
    return n;
}

const struct gw_checksum *gw_lo_hash_stream_final(struct gw_lo_hash_stream *s)
{
    if (gw_lo_hash_stream_hashed(s) != s->queued)
        return NULL;
    /* the mutex taken above orders the hasher's updates before this */
    s->finaled = 1;
    gw_checksum_final(&s->md5);
    return &s->md5;
}

void gw_lo_hash_stream_close(struct gw_lo_hash_stream *s)
{
    if (s == NULL)
        return;
    struct gw_lo_hasher *h = s->h;
    pthread_mutex_lock(&h->mu);
    s->closed = 1;
    int destroy = s->pending == 0;
    struct event *ev = s->ev;   /* s may go with the hasher's last job */
    pthread_mutex_unlock(&h->mu);
    event_free(ev);   /* the hasher no longer touches it: closed */
    if (destroy)
        gw_lo_hash_stream_destroy(s);
}
