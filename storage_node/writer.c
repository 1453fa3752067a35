/* The writer thread: group commit. It takes every queued write at once,
 * decides which are newer than what the index holds, appends those records to
 * the active container with one pwritev, syncs once (writethrough), writes
 * one LevelDB batch, then completes them all. It is the only thread that
 * appends or changes the index (compaction's relocations, tombstone purges
 * and container drops go through it too), so its check-then-set is atomic. */
#include "store_priv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cn/alloc.h"
#include "cn/time.h"
#include "cn/version.h"

/* ---- the index batch with its overlay ---- */

void sn_writer_apply_init(struct sn_apply *a)
{
    memset(a, 0, sizeof(*a));
    a->b = sn_index_batch_new();
}

void sn_writer_apply_fini(struct sn_apply *a)
{
    sn_index_batch_free(a->b);
    cn_free(a->ents);
    memset(a, 0, sizeof(*a));
}

int sn_writer_apply_lookup(struct sn_store *s, struct sn_apply *a, const uint8_t *key,
                           uint32_t klen, struct sn_ival *cur, char err[CN_ERR_LEN])
{
    for (size_t i = a->n; i-- > 0;) {
        const struct sn_apply_ent *e = &a->ents[i];
        if (e->klen == klen && memcmp(e->key, key, klen) == 0) {
            if (e->purged)
                return CN_NOTFOUND;
            *cur = e->v;
            return CN_OK;
        }
    }
    return sn_index_get(s->ix, key, klen, cur, err);
}

/* Adds (sign 1) or takes away (sign -1) the record v describes to/from its
 * container's live accounting. Caller holds s->lock. */
static void sn_writer_account_locked(struct sn_store *s, const struct sn_ival *v, int sign)
{
    struct sn_container *c = sn_store_container_find_locked(s, v->cid);
    if (c == NULL)
        return;   /* a record in a container that is gone: nothing to count */
    uint64_t bytes = v->hdr_len + v->data_len, n = 1;
    if (sign < 0) {   /* unsigned wrap-around subtracts */
        bytes = 0 - bytes;
        n = 0 - n;
    }
    c->live_bytes += bytes;
    c->live_records += n;
    if (v->flags & SN_RECORD_FLAG_TOMBSTONE) {
        c->live_tombstones += n;
        c->tombstone_bytes += bytes;
    }
    c->meta_dirty = 1;
}

static void sn_writer_apply_push(struct sn_apply *a, const uint8_t *key, uint32_t klen,
                                 int purged, const struct sn_ival *v)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 64;
        a->ents = cn_realloc(a->ents, a->cap * sizeof(*a->ents));
    }
    a->ents[a->n++] = (struct sn_apply_ent){key, klen, purged, *v};
}

void sn_writer_apply_set(struct sn_store *s, struct sn_apply *a, const uint8_t *key,
                         uint32_t klen, const struct sn_ival *nv, const struct sn_ival *old)
{
    sn_writer_apply_push(a, key, klen, 0, nv);
    sn_index_batch_put(a->b, key, klen, nv);
    pthread_mutex_lock(&s->lock);
    sn_writer_account_locked(s, nv, 1);
    if (old != NULL)
        sn_writer_account_locked(s, old, -1);
    pthread_mutex_unlock(&s->lock);
}

void sn_writer_apply_del(struct sn_store *s, struct sn_apply *a, const uint8_t *key,
                         uint32_t klen, const struct sn_ival *old)
{
    sn_writer_apply_push(a, key, klen, 1, old);
    sn_index_batch_del(a->b, key, klen);
    pthread_mutex_lock(&s->lock);
    sn_writer_account_locked(s, old, -1);
    pthread_mutex_unlock(&s->lock);
}

int sn_writer_apply_commit(struct sn_store *s, struct sn_apply *a, int sync,
                           char err[CN_ERR_LEN])
{
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n_cons; i++) {
        struct sn_container *c = s->cons[i];
        if (!c->meta_dirty)
            continue;
        struct sn_index_cacct acct = {c->indexed_upto, c->live_bytes, c->live_records,
                                      c->live_tombstones, c->tombstone_bytes, 1};
        sn_index_batch_put_container(a->b, c->id, &acct);
        c->meta_dirty = 0;
    }
    pthread_mutex_unlock(&s->lock);
    int rc = sn_index_write(s->ix, a->b, sync, err);
    sn_index_batch_clear(a->b);
    a->n = 0;
    return rc;
}

/* ---- appending a batch ---- */

/* Values from this size on leave the page cache once synced (writethrough):
 * filling fresh page-cache pages was ~70 % of a node's CPU on a 1 GiB PUT,
 * and writing into pages just given back costs a fraction of that
 * (bench/results/large-put-cpu-2vcpu.md). Smaller records stay cached. */
#define SN_WRITER_UNCACHE_MIN (1u << 20)

/* A large value of the batch, to drop from the cache after the sync. */
struct sn_writer_uncache {
    struct sn_container *c;   /* in the store's table for the whole batch */
    uint64_t off, len;
};

/* Records of the batch waiting to be appended to the active container. */
struct sn_writer_pending {
    struct iovec *iov;
    int n_iov, cap_iov;
    uint64_t bytes;
    uint64_t appended;     /* bytes flushed so far in this batch (metrics) */
    struct sn_writer_uncache *unc;
    uint32_t n_unc, cap_unc;
};

/* Notes a large value placed at off in c (writethrough only: the pages of
 * other modes are still dirty when the batch ends). */
static void sn_writer_uncache_add(struct sn_store *s, struct sn_writer_pending *p,
                                  const struct sn_wreq *w, struct sn_container *c, uint64_t off)
{
    if (s->o.sync_mode != SN_SYNC_WRITETHROUGH || w->op != SN_WOP_PUT ||
        w->ri.data_len < SN_WRITER_UNCACHE_MIN)
        return;
    if (p->n_unc == p->cap_unc) {
        p->cap_unc = p->cap_unc ? p->cap_unc * 2 : 16;
        p->unc = cn_realloc(p->unc, (size_t)p->cap_unc * sizeof(*p->unc));
    }
    p->unc[p->n_unc++] = (struct sn_writer_uncache){c, off, sn_record_total_len(&w->ri)};
}

static void sn_writer_pending_add(struct sn_writer_pending *p, const void *ptr, uint64_t len)
{
    if (len == 0)
        return;
    if (p->n_iov == p->cap_iov) {
        p->cap_iov = p->cap_iov ? p->cap_iov * 2 : 64;
        p->iov = cn_realloc(p->iov, (size_t)p->cap_iov * sizeof(*p->iov));
    }
    p->iov[p->n_iov++] = (struct iovec){(void *)(uintptr_t)ptr, (size_t)len};
    p->bytes += len;
}

/* Appends what is pending to the active container. */
static int sn_writer_flush(struct sn_store *s, struct sn_writer_pending *p,
                           char err[CN_ERR_LEN])
{
    int rc = CN_OK;
    if (p->bytes > 0)
        rc = sn_container_append(s->active, p->iov, p->n_iov, p->bytes, err);
    if (rc == CN_OK) {
        p->appended += p->bytes;
        pthread_mutex_lock(&s->lock);
        s->active->indexed_upto = s->active->len;
        s->active->meta_dirty = 1;
        if (p->bytes > 0)
            s->active->last_append_us = cn_time_now_us();
        pthread_mutex_unlock(&s->lock);
    }
    p->n_iov = 0;
    p->bytes = 0;
    return rc;
}

/* Syncs the full active container and starts a new one. */
static int sn_writer_roll(struct sn_store *s, char err[CN_ERR_LEN])
{
    struct sn_container *c = NULL;
    int rc = sn_container_sync(s->active, err);
    if (rc == CN_OK)
        rc = sn_container_create(s->dir_containers, s->next_cid, &c, err);
    if (rc != CN_OK)
        return rc;
    pthread_mutex_lock(&s->lock);
    s->next_cid++;
    c->meta_dirty = 1;
    sn_store_container_add_locked(s, c);
    s->active = c;
    pthread_mutex_unlock(&s->lock);
    return CN_OK;
}

/* Decides whether w applies, given what the key holds (found: have cur). */
static int sn_writer_decide(const struct sn_wreq *w, int found, const struct sn_ival *cur)
{
    if (w->op == SN_WOP_RELOCATE || w->op == SN_WOP_PURGE)
        return found && cur->cid == w->old_cid && cur->off == w->old_off &&
               cur->ver == w->ri.ver && cur->ts == w->ri.ts &&
               (w->op == SN_WOP_RELOCATE || (cur->flags & SN_RECORD_FLAG_TOMBSTONE));
    if (w->op == SN_WOP_FORGET)
        return found && cur->ver == w->ri.ver && cur->ts == w->ri.ts;
    if (w->op == SN_WOP_MARK)
        return found && cur->ver == w->ri.ver && cur->ts == w->ri.ts &&
               !(cur->flags & (SN_RECORD_FLAG_TOMBSTONE | SN_IVAL_FLAG_CORRUPT));
    /* a copy of the very version a marked record holds is its repair */
    if (found && (cur->flags & SN_IVAL_FLAG_CORRUPT) && cur->ts == w->ri.ts &&
        cur->ver == w->ri.ver)
        return 1;
    return !found || cn_version_newer(w->ri.ts, w->ri.ver, cur->ts, cur->ver);
}

/* Places one write of the batch: decides, reserves its place in the active
 * container (rolling first if full), and sets it in the index batch. */
static int sn_writer_place(struct sn_store *s, struct sn_apply *a, struct sn_writer_pending *p,
                           struct sn_wreq *w)
{
    struct sn_ival cur, nv;
    int rc = sn_writer_apply_lookup(s, a, w->ri.key, w->ri.key_len, &cur, w->err);
    if (rc != CN_OK && rc != CN_NOTFOUND)
        return rc;
    int found = rc == CN_OK;
    w->applied = sn_writer_decide(w, found, &cur);
    if (!w->applied) {
        if (found) {
            w->cur_ver = cur.ver;
            w->cur_ts = cur.ts;
            w->cur_flags = cur.flags;
        }
        return CN_OK;
    }
    if (w->op == SN_WOP_PURGE || w->op == SN_WOP_FORGET) {
        sn_writer_apply_del(s, a, w->ri.key, w->ri.key_len, &cur);
        return CN_OK;
    }
    if (w->op == SN_WOP_MARK) {   /* the same record, flagged: no append */
        nv = cur;
        nv.flags |= SN_IVAL_FLAG_CORRUPT;
        sn_writer_apply_set(s, a, w->ri.key, w->ri.key_len, &nv, &cur);
        return CN_OK;
    }
    if (found && (cur.flags & SN_IVAL_FLAG_CORRUPT) &&
        (w->op == SN_WOP_PUT || w->op == SN_WOP_DELETE))
        atomic_fetch_add(&s->corrupt_repaired, 1);
    uint64_t total = sn_record_total_len(&w->ri);
    uint64_t at = s->active->len + p->bytes;
    if (at > SN_CONTAINER_HDR && at + total > s->o.max_container_len) {
        if ((rc = sn_writer_flush(s, p, w->err)) != CN_OK ||
            (rc = sn_writer_roll(s, w->err)) != CN_OK)
            return rc;
        at = s->active->len;
    }
    sn_writer_pending_add(p, w->hdr, w->ri.hdr_len);
    sn_writer_pending_add(p, w->data, w->ri.data_len);
    sn_writer_uncache_add(s, p, w, s->active, at);
    sn_store_ival_from(&nv, &w->ri, s->active->id, at);
    if (w->op == SN_WOP_RELOCATE)   /* the same bytes: still corrupt */
        nv.flags |= cur.flags & SN_IVAL_FLAG_CORRUPT;
    sn_writer_apply_set(s, a, w->ri.key, w->ri.key_len, &nv, found ? &cur : NULL);
    w->cur_ver = nv.ver;
    w->cur_ts = nv.ts;
    w->cur_flags = nv.flags;
    return CN_OK;
}

/* Syncs every container with unsynced appends (only the writer appends, so
 * only it reads `unsynced`; the fdatasync runs outside the table lock so
 * readers are not held up). */
static int sn_writer_sync_all(struct sn_store *s, char err[CN_ERR_LEN])
{
    struct sn_container *todo[8];
    size_t n = 0;
    int rc = CN_OK;
    uint64_t t0 = cn_time_mono_us();
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n_cons && n < CN_ARRAY_LEN(todo); i++)
        if (s->cons[i]->unsynced) {
            todo[n++] = s->cons[i];
            sn_container_ref(s->cons[i]);
        }
    pthread_mutex_unlock(&s->lock);
    for (size_t i = 0; i < n; i++) {
        if (rc == CN_OK)
            rc = sn_container_sync(todo[i], err);
        sn_container_unref(todo[i]);
    }
    atomic_fetch_add(&s->syncs, 1);
    sn_metrics_fsync(s->o.metrics, cn_time_mono_us() - t0);
    return rc;
}

/* DROP: the container is empty of live records; unlink its file (durably)
 * and then forget it in the index (synced by the caller) and the table.
 * Unlinking first matters: a file left behind without its index entry would
 * be scanned from the start on the next open, and a record in it could come
 * back over a tombstone that was purged. Only the writer changes the
 * accounting, so the check stays true while the lock is dropped. */
static void sn_writer_drop(struct sn_store *s, struct sn_apply *a, struct sn_wreq *w)
{
    pthread_mutex_lock(&s->lock);
    struct sn_container *c = sn_store_container_find_locked(s, w->old_cid);
    int ok = c != NULL && c != s->active && c->live_records == 0;
    if (ok)
        sn_container_ref(c);
    pthread_mutex_unlock(&s->lock);
    if (!ok) {
        snprintf(w->err, CN_ERR_LEN, "container %08x cannot be dropped", w->old_cid);
        w->rc = CN_INVAL;
        return;
    }
    w->rc = sn_container_unlink(c, s->dir_containers, w->err);
    if (w->rc == CN_OK) {
        pthread_mutex_lock(&s->lock);
        sn_index_batch_del_container(a->b, c->id);
        sn_store_container_remove_locked(s, c->id);
        pthread_mutex_unlock(&s->lock);
        w->applied = 1;
    }
    sn_container_unref(c);
}

/* Runs one batch (the list at head) and completes every write in it. */
static void sn_writer_run_batch(struct sn_store *s, struct sn_wreq *head)
{
    struct sn_apply a;
    struct sn_writer_pending p = {0};
    char err[CN_ERR_LEN] = "";
    int rc = CN_OK, need_sync = s->o.sync_mode == SN_SYNC_WRITETHROUGH, index_sync = 0;
    uint32_t n_writes = 0;
    sn_writer_apply_init(&a);
    for (struct sn_wreq *w = head; w != NULL; w = w->next) {
        w->rc = CN_OK;
        n_writes++;
        if (w->op == SN_WOP_DROP) {
            sn_writer_drop(s, &a, w);
            index_sync = 1;
            continue;
        }
        if (w->op == SN_WOP_RELOCATE)
            need_sync = index_sync = 1;
        if (w->op == SN_WOP_PURGE || w->op == SN_WOP_MARK || w->op == SN_WOP_FORGET)
            index_sync = 1;
        if (rc == CN_OK && (w->rc = sn_writer_place(s, &a, &p, w)) != CN_OK) {
            rc = w->rc;
            snprintf(err, sizeof(err), "%s", w->err);
        }
    }
    if (rc == CN_OK)
        rc = sn_writer_flush(s, &p, err);
    if (rc == CN_OK && need_sync)
        rc = sn_writer_sync_all(s, err);
    if (rc == CN_OK && need_sync)   /* clean now: their pages can go */
        for (uint32_t i = 0; i < p.n_unc; i++)
            sn_container_uncache(p.unc[i].c, p.unc[i].off, p.unc[i].len);
    if (rc == CN_OK)
        rc = sn_writer_apply_commit(s, &a, index_sync, err);
    sn_writer_apply_fini(&a);
    cn_free(p.iov);
    cn_free(p.unc);
    atomic_fetch_add(&s->batches, 1);
    sn_metrics_batch(s->o.metrics, n_writes, p.appended);
    for (struct sn_wreq *w = head, *next; w != NULL; w = next) {
        next = w->next;
        if (rc != CN_OK && w->rc == CN_OK) {
            w->rc = rc;
            snprintf(w->err, CN_ERR_LEN, "%s", err);
        }
        if (w->rc == CN_OK && w->op == SN_WOP_PUT)
            atomic_fetch_add(&s->puts, 1);
        else if (w->rc == CN_OK && w->op == SN_WOP_DELETE)
            atomic_fetch_add(&s->deletes, 1);
        else if (w->rc == CN_OK && w->op == SN_WOP_RELOCATE && w->applied)
            atomic_fetch_add(&s->relocations, 1);
        else if (w->rc == CN_OK && w->op == SN_WOP_PURGE && w->applied)
            atomic_fetch_add(&s->tombstones_purged, 1);
        else if (w->rc == CN_OK && w->op == SN_WOP_FORGET && w->applied)
            atomic_fetch_add(&s->copies_purged, 1);
        if (w->rc == CN_OK && !w->applied && (w->op == SN_WOP_PUT || w->op == SN_WOP_DELETE))
            atomic_fetch_add(&s->stale_writes, 1);
        w->done_cb(w, w->arg);
    }
}

/* Takes up to max_batch writes / max_batch_bytes off the queue. Caller holds
 * wlock. */
static struct sn_wreq *sn_writer_take_locked(struct sn_store *s)
{
    struct sn_wreq *head = s->q_head, *last = head;
    uint64_t bytes = sn_record_total_len(&head->ri);
    uint32_t n = 1;
    while (last->next != NULL && n < s->o.max_batch &&
           bytes + sn_record_total_len(&last->next->ri) <= s->o.max_batch_bytes) {
        last = last->next;
        bytes += sn_record_total_len(&last->ri);
        n++;
    }
    s->q_head = last->next;
    if (s->q_head == NULL)
        s->q_tail = NULL;
    s->q_len -= n;
    last->next = NULL;
    return head;
}

static void sn_writer_deadline(struct timespec *ts, uint64_t ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += (time_t)(ms / 1000);
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/* The periodic policy: sync when the interval has passed since the last. */
static void sn_writer_periodic(struct sn_store *s, uint64_t *last_sync_us)
{
    uint64_t now = cn_time_mono_us();
    if (s->o.sync_mode != SN_SYNC_PERIODIC ||
        now - *last_sync_us < s->o.sync_interval_ms * 1000)
        return;
    char err[CN_ERR_LEN];
    if (s->active->unsynced && sn_writer_sync_all(s, err) != CN_OK) {
        /* the next interval retries; the writes stay readable meanwhile */
    }
    *last_sync_us = now;
}

static void *sn_writer_main(void *arg)
{
    struct sn_store *s = arg;
    uint64_t last_sync = cn_time_mono_us();
    pthread_mutex_lock(&s->wlock);
    for (;;) {
        while (s->q_head == NULL && !s->stopping) {
            if (s->o.sync_mode == SN_SYNC_PERIODIC) {
                struct timespec ts;
                sn_writer_deadline(&ts, s->o.sync_interval_ms);
                pthread_cond_timedwait(&s->wcond, &s->wlock, &ts);
                pthread_mutex_unlock(&s->wlock);
                sn_writer_periodic(s, &last_sync);
                pthread_mutex_lock(&s->wlock);
            } else {
                pthread_cond_wait(&s->wcond, &s->wlock);
            }
        }
        if (s->q_head == NULL && s->stopping)
            break;
        struct sn_wreq *batch = sn_writer_take_locked(s);
        pthread_mutex_unlock(&s->wlock);
        sn_writer_run_batch(s, batch);
        sn_writer_periodic(s, &last_sync);
        pthread_mutex_lock(&s->wlock);
    }
    pthread_mutex_unlock(&s->wlock);
    return NULL;
}

int sn_writer_start(struct sn_store *s, char err[CN_ERR_LEN])
{
    int e = pthread_create(&s->writer, NULL, sn_writer_main, s);
    if (e != 0) {
        snprintf(err, CN_ERR_LEN, "writer thread: %s", strerror(e));
        return CN_ERR;
    }
    s->writer_started = 1;
    return CN_OK;
}

void sn_writer_stop(struct sn_store *s)
{
    if (!s->writer_started)
        return;
    pthread_mutex_lock(&s->wlock);
    s->stopping = 1;
    pthread_cond_signal(&s->wcond);
    pthread_mutex_unlock(&s->wlock);
    pthread_join(s->writer, NULL);
    s->writer_started = 0;
}

void sn_store_submit(struct sn_store *s, struct sn_wreq *w)
{
    w->next = NULL;
    w->rc = CN_OK;
    w->applied = 0;
    w->err[0] = '\0';
    pthread_mutex_lock(&s->wlock);
    if (s->stopping) {
        pthread_mutex_unlock(&s->wlock);
        w->rc = CN_ERR;
        snprintf(w->err, CN_ERR_LEN, "store is shutting down");
        w->done_cb(w, w->arg);
        return;
    }
    if (s->q_tail != NULL)
        s->q_tail->next = w;
    else
        s->q_head = w;
    s->q_tail = w;
    s->q_len++;
    pthread_cond_signal(&s->wcond);
    pthread_mutex_unlock(&s->wlock);
}

struct sn_writer_waiter {
    pthread_mutex_t m;
    pthread_cond_t c;
    int done;
};

static void sn_writer_wait_done(struct sn_wreq *w, void *arg)
{
    struct sn_writer_waiter *wt = arg;
    (void)w;
    pthread_mutex_lock(&wt->m);
    wt->done = 1;
    pthread_cond_signal(&wt->c);
    pthread_mutex_unlock(&wt->m);
}

int sn_store_submit_wait(struct sn_store *s, struct sn_wreq *w)
{
    struct sn_writer_waiter wt = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    w->done_cb = sn_writer_wait_done;
    w->arg = &wt;
    sn_store_submit(s, w);
    pthread_mutex_lock(&wt.m);
    while (!wt.done)
        pthread_cond_wait(&wt.c, &wt.m);
    pthread_mutex_unlock(&wt.m);
    pthread_mutex_destroy(&wt.m);
    pthread_cond_destroy(&wt.c);
    return w->rc;
}
