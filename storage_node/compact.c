/* Compaction: reclaims the space of overwritten and deleted records while the
 * node serves. For each old container whose dead share is over the
 * threshold, every record the index still points at is copied (bytes as they
 * are, CRCs included) into the active container through the writer, which
 * re-points the key only if it still points at the old place; then the
 * container is dropped from the index and table and its file unlinked.
 * Readers holding the container finish on their open fd. With tombstone GC
 * on, a tombstone older than the grace is not copied: the writer removes the
 * key from the index instead (SN_WOP_PURGE), if it still points there. */
#include "store_priv.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cn/alloc.h"
#include "cn/time.h"

#define SN_COMPACT_INFLIGHT_BYTES (16ull << 20)
#define SN_COMPACT_PACE_MIN_BATCH (256ull << 10)

/* How one run goes: which containers it takes and how fast it copies. */
struct sn_compact_plan {
    uint32_t dead_ratio_pct;
    uint64_t min_dead_bytes;
    uint64_t max_rate;          /* bytes per second; 0: no limit */
    int automatic;              /* stops on sn_compact_abort */
    uint64_t batch_bytes;       /* flush the moves past this many bytes */
    uint64_t t0_us, copied;     /* pacing: since when, how much */
};

/* A relocation in flight, with the record bytes it owns. */
struct sn_compact_move {
    struct sn_wreq w;
    uint8_t *buf;
};

/* Counts down the relocations of one flush. */
struct sn_compact_wait {
    pthread_mutex_t m;
    pthread_cond_t c;
    size_t pending;
};

static void sn_compact_done(struct sn_wreq *w, void *arg)
{
    struct sn_compact_wait *cw = arg;
    (void)w;
    pthread_mutex_lock(&cw->m);
    if (--cw->pending == 0)
        pthread_cond_signal(&cw->c);
    pthread_mutex_unlock(&cw->m);
}

/* Relocates the moves collected so far (all queued at once, so the writer
 * takes them as one batch with one sync) and waits for them. */
static int sn_compact_flush(struct sn_store *s, struct sn_compact_move *mv, size_t *n,
                            struct sn_compact_result *res, char err[CN_ERR_LEN])
{
    struct sn_compact_wait cw = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, *n};
    int rc = CN_OK;
    for (size_t i = 0; i < *n; i++) {
        mv[i].w.done_cb = sn_compact_done;
        mv[i].w.arg = &cw;
        sn_store_submit(s, &mv[i].w);
    }
    pthread_mutex_lock(&cw.m);
    while (cw.pending > 0)
        pthread_cond_wait(&cw.c, &cw.m);
    pthread_mutex_unlock(&cw.m);
    for (size_t i = 0; i < *n; i++) {
        if (mv[i].w.rc != CN_OK && rc == CN_OK) {
            rc = mv[i].w.rc;
            snprintf(err, CN_ERR_LEN, "%s", mv[i].w.err);
        }
        if (mv[i].w.rc == CN_OK && mv[i].w.applied && mv[i].w.op == SN_WOP_PURGE) {
            res->tombstones_purged++;
        } else if (mv[i].w.rc == CN_OK && mv[i].w.applied) {
            res->records_moved++;
            res->bytes_moved += sn_record_total_len(&mv[i].w.ri);
            sn_metrics_compaction_moved(s->o.metrics, sn_record_total_len(&mv[i].w.ri));
        }
        cn_free(mv[i].buf);
    }
    pthread_mutex_destroy(&cw.m);
    pthread_cond_destroy(&cw.c);
    *n = 0;
    return rc;
}

/* The newest tombstone ts that GC may purge now: tombstones with a ts
 * strictly below it are past the grace. 0 when GC is off. */
static uint64_t sn_compact_gc_before(const struct sn_store *s)
{
    uint64_t grace_us = s->o.tombstone_gc_after_ms * 1000, now = cn_time_now_us();
    if (s->o.tombstone_gc_after_ms == 0 || now <= grace_us)
        return 0;
    return now - grace_us;
}

/* Whether an automatic run should stop now (node shutting down). */
static int sn_compact_stopping(struct sn_store *s, const struct sn_compact_plan *p)
{
    return p->automatic && atomic_load(&s->compact_abort);
}

/* Called after each batch of `bytes` copied: sleeps until the run's average
 * is back under p->max_rate, in slices of at most 100 ms so that an abort is
 * seen quickly. Returns CN_AGAIN when the run must stop. */
static int sn_compact_pace(struct sn_store *s, struct sn_compact_plan *p, uint64_t bytes,
                           struct sn_compact_result *res)
{
    p->copied += bytes;
    if (p->max_rate == 0)
        return sn_compact_stopping(s, p) ? CN_AGAIN : CN_OK;
    uint64_t due_us = p->t0_us + p->copied * 1000000 / p->max_rate;
    for (;;) {
        if (sn_compact_stopping(s, p))
            return CN_AGAIN;
        uint64_t now = cn_time_mono_us();
        if (now >= due_us)
            return CN_OK;
        uint64_t wait = CN_MIN(due_us - now, 100000);
        struct timespec ts = {(time_t)(wait / 1000000), (long)(wait % 1000000) * 1000};
        nanosleep(&ts, NULL);
        uint64_t slept = cn_time_mono_us() - now;
        res->throttle_us += slept;
        atomic_fetch_add(&s->compact_throttle_us, slept);
    }
}

/* Copies the live records of c into the active container; tombstones with a
 * ts before gc_before are purged instead. Batches are flushed (and paced)
 * past p->batch_bytes. CN_AGAIN: stopped by sn_compact_abort. */
static int sn_compact_move_live(struct sn_store *s, struct sn_container *c, uint64_t end,
                                struct sn_compact_plan *p, struct sn_compact_result *res,
                                char err[CN_ERR_LEN])
{
    uint64_t gc_before = sn_compact_gc_before(s);
    struct sn_buf hb = {0};
    struct sn_record_info ri;
    struct sn_compact_move mv[64];
    size_t n = 0;
    uint64_t bytes = 0, off = SN_CONTAINER_HDR;
    int rc = CN_OK;
    for (;;) {
        rc = sn_container_read_header(c, off, end, &hb, &ri, err);
        if (rc != CN_OK)
            break;
        struct sn_ival cur;
        char ierr[CN_ERR_LEN];
        uint64_t total = sn_record_total_len(&ri);
        if (sn_index_get(s->ix, ri.key, ri.key_len, &cur, ierr) == CN_OK && cur.cid == c->id &&
            cur.off == off) {
            struct sn_compact_move *m = &mv[n++];
            memset(m, 0, sizeof(*m));
            m->buf = cn_malloc((size_t)total);
            rc = sn_container_pread(c, m->buf, (size_t)total, off);
            if (rc == CN_OK)
                rc = sn_record_parse(m->buf, ri.hdr_len, &m->w.ri, err);
            if (rc != CN_OK) {
                snprintf(err, CN_ERR_LEN, "container %08x: record at %llu unreadable", c->id,
                         (unsigned long long)off);
                n--;
                cn_free(m->buf);
                break;
            }
            int purge = (ri.flags & SN_RECORD_FLAG_TOMBSTONE) && ri.ts < gc_before;
            m->w.op = purge ? SN_WOP_PURGE : SN_WOP_RELOCATE;
            m->w.hdr = m->buf;
            m->w.data = m->buf + ri.hdr_len;
            m->w.old_cid = c->id;
            m->w.old_off = off;
            bytes += total;
        }
        off += total;
        if (n == CN_ARRAY_LEN(mv) || bytes >= p->batch_bytes) {
            if ((rc = sn_compact_flush(s, mv, &n, res, err)) != CN_OK)
                break;
            if ((rc = sn_compact_pace(s, p, bytes, res)) != CN_OK) {
                snprintf(err, CN_ERR_LEN, "stopped: the node is shutting down");
                break;
            }
            bytes = 0;
        }
    }
    int frc = sn_compact_flush(s, mv, &n, res, err);
    sn_buf_fini(&hb);
    if (rc == CN_DONE)
        rc = frc;
    if (rc == CN_OK && sn_compact_pace(s, p, bytes, res) != CN_OK) {
        snprintf(err, CN_ERR_LEN, "stopped: the node is shutting down");
        rc = CN_AGAIN;
    }
    return rc;
}

/* Compacts one container: moves its live records (purging old tombstones),
 * then has the writer unlink it and drop it. */
static int sn_compact_container(struct sn_store *s, struct sn_container *c,
                                struct sn_compact_plan *p, struct sn_compact_result *res,
                                char err[CN_ERR_LEN])
{
    pthread_mutex_lock(&s->lock);
    uint64_t end = c->indexed_upto;
    pthread_mutex_unlock(&s->lock);
    int rc = sn_compact_move_live(s, c, end, p, res, err);
    if (rc != CN_OK)
        return rc;
    struct sn_wreq drop;
    memset(&drop, 0, sizeof(drop));
    drop.op = SN_WOP_DROP;
    drop.old_cid = c->id;
    if ((rc = sn_store_submit_wait(s, &drop)) != CN_OK) {
        snprintf(err, CN_ERR_LEN, "%s", drop.err);
        return rc;
    }
    res->containers_reclaimed++;
    res->bytes_reclaimed += end;
    atomic_fetch_add(&s->containers_reclaimed, 1);
    atomic_fetch_add(&s->bytes_reclaimed, end);
    return CN_OK;
}

/* A container's dead bytes for choosing candidates: the space of records the
 * index no longer points at, plus, when tombstone GC is on and the container
 * was last appended to longer ago than the grace, its live tombstones (which
 * compaction would purge rather than copy). Caller holds s->lock. */
static uint64_t sn_compact_dead_locked(const struct sn_store *s, const struct sn_container *c,
                                       uint64_t now_us)
{
    uint64_t used = c->indexed_upto - SN_CONTAINER_HDR;
    uint64_t dead = used > c->live_bytes ? used - c->live_bytes : 0;
    uint64_t grace_us = s->o.tombstone_gc_after_ms * 1000;
    if (s->o.tombstone_gc_after_ms > 0 && c->last_append_us + grace_us < now_us)
        dead = CN_MIN(used, dead + c->tombstone_bytes);
    return dead;
}

/* Whether c is a candidate of plan p. Caller holds s->lock. */
static int sn_compact_wanted_locked(const struct sn_store *s, const struct sn_container *c,
                                    const struct sn_compact_plan *p, uint64_t now_us)
{
    uint64_t used = c->indexed_upto - SN_CONTAINER_HDR;
    uint64_t dead = sn_compact_dead_locked(s, c, now_us);
    if (c == s->active)
        return 0;
    if (used == 0)
        return 1;   /* an empty container left behind: drop it */
    return dead > 0 && dead * 100 >= (uint64_t)p->dead_ratio_pct * used &&
           dead >= p->min_dead_bytes;
}

/* The containers to compact, each with a reference; *n of them (v may be
 * NULL: then only counted). */
static struct sn_container **sn_compact_candidates(struct sn_store *s,
                                                   const struct sn_compact_plan *p, size_t *n)
{
    uint64_t now = cn_time_now_us();
    pthread_mutex_lock(&s->lock);
    struct sn_container **v = cn_calloc(s->n_cons + 1, sizeof(*v));
    *n = 0;
    for (size_t i = 0; i < s->n_cons; i++) {
        struct sn_container *c = s->cons[i];
        if (!sn_compact_wanted_locked(s, c, p, now))
            continue;
        sn_container_ref(c);
        v[(*n)++] = c;
    }
    pthread_mutex_unlock(&s->lock);
    return v;
}

/* The plan of an automatic run, from the store's options. */
static void sn_compact_plan_auto(const struct sn_store *s, struct sn_compact_plan *p)
{
    memset(p, 0, sizeof(*p));
    p->dead_ratio_pct = s->o.dead_ratio_pct;
    p->min_dead_bytes = s->o.compact_min_dead_bytes;
    p->max_rate = s->o.compact_max_rate;
    p->automatic = 1;
}

/* Runs plan p (see sn_compact_run). */
static int sn_compact_run_plan(struct sn_store *s, struct sn_compact_plan *p,
                               struct sn_compact_result *res, char err[CN_ERR_LEN])
{
    size_t n;
    int rc = CN_OK;
    memset(res, 0, sizeof(*res));
    /* a rate-limited run flushes about an eighth of a second's worth at a
     * time, so that its writes come in small groups, not 16 MiB bursts */
    p->batch_bytes = SN_COMPACT_INFLIGHT_BYTES;
    if (p->max_rate > 0)
        p->batch_bytes = CN_MAX(SN_COMPACT_PACE_MIN_BATCH,
                                CN_MIN(SN_COMPACT_INFLIGHT_BYTES, p->max_rate / 8));
    pthread_mutex_lock(&s->admin);
    p->t0_us = cn_time_mono_us();
    p->copied = 0;
    struct sn_container **v = sn_compact_candidates(s, p, &n);
    sn_metrics_compaction_start(s->o.metrics, n);
    for (size_t i = 0; i < n; i++) {
        char cerr[CN_ERR_LEN];
        int crc = res->aborted ? CN_AGAIN : CN_OK;
        if (crc == CN_OK) {
            res->containers_scanned++;
            crc = sn_compact_container(s, v[i], p, res, cerr);
        }
        if (crc == CN_AGAIN) {
            res->aborted = 1;
        } else if (crc != CN_OK) {
            res->containers_failed++;
            if (rc == CN_OK) {
                rc = CN_ERR;
                snprintf(err, CN_ERR_LEN, "%s", cerr);
            }
        }
        sn_container_unref(v[i]);
        sn_metrics_compaction_container_done(s->o.metrics);
    }
    cn_free(v);
    atomic_fetch_add(&s->compactions, 1);
    sn_metrics_compaction_end(s->o.metrics);
    pthread_mutex_unlock(&s->admin);
    return rc;
}

int sn_compact_run(struct sn_store *s, uint32_t dead_ratio_pct, struct sn_compact_result *res,
                   char err[CN_ERR_LEN])
{
    struct sn_compact_plan p;
    memset(&p, 0, sizeof(p));
    p.dead_ratio_pct = dead_ratio_pct ? dead_ratio_pct : s->o.dead_ratio_pct;
    return sn_compact_run_plan(s, &p, res, err);
}

int sn_compact_auto_claim(struct sn_store *s)
{
    struct sn_compact_plan p;
    uint64_t now = cn_time_now_us();
    int wanted = 0;
    if (atomic_load(&s->compact_abort) || atomic_load(&s->compact_auto_claimed))
        return 0;
    sn_compact_plan_auto(s, &p);
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n_cons && !wanted; i++)
        wanted = sn_compact_wanted_locked(s, s->cons[i], &p, now);
    pthread_mutex_unlock(&s->lock);
    if (!wanted)
        return 0;
    int expect = 0;
    return atomic_compare_exchange_strong(&s->compact_auto_claimed, &expect, 1);
}

int sn_compact_run_auto(struct sn_store *s, struct sn_compact_result *res,
                        char err[CN_ERR_LEN])
{
    struct sn_compact_plan p;
    sn_compact_plan_auto(s, &p);
    atomic_fetch_add(&s->auto_compactions, 1);
    int rc = sn_compact_run_plan(s, &p, res, err);
    atomic_store(&s->compact_auto_claimed, 0);
    return rc;
}

void sn_compact_abort(struct sn_store *s)
{
    atomic_store(&s->compact_abort, 1);
}
