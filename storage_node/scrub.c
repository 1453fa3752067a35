/* Scrub: re-reads every record of every container and verifies its header
 * and every data block. The calling thread walks the record headers of each
 * container in file order and hands spans of up to 1 MiB to n reader/checksum
 * threads through a small bounded queue, so disk reads stay sequential-ish
 * and checksumming runs in parallel. A corrupt record that the index still
 * points at is reported through the callback; one it no longer points at is
 * only counted. */
#include "store_priv.h"

#include <stdio.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/crc.h"
#include "cn/time.h"

#define SN_SCRUB_SPAN_BLOCKS 16u   /* 1 MiB per job */

/* One record being verified, shared by its spans; the last span to finish
 * reports it. */
struct sn_scrub_rec {
    atomic_int pending;
    atomic_int corrupt;
    uint32_t bad_block;
    int live;
    struct sn_ival v;
    uint8_t *key;
    uint32_t klen;
};

struct sn_scrub_job {
    struct sn_container *c;      /* referenced by the job */
    struct sn_scrub_rec *rec;
    uint64_t pos;                /* file offset of the span */
    uint64_t len;
    uint32_t first_block;
    uint32_t crcs[SN_SCRUB_SPAN_BLOCKS];
};

struct sn_scrub {
    struct sn_store *s;
    sn_scrub_cb cb;
    void *arg;
    struct sn_scrub_result *res;
    pthread_mutex_t m;           /* queue, result and callback */
    pthread_cond_t not_empty, not_full;
    struct sn_scrub_job *q;
    size_t q_cap, q_head, q_n;
    int done;
};

static void sn_scrub_report(struct sn_scrub *sc, const uint8_t *key, uint32_t klen,
                            const struct sn_ival *v, const char *why)
{
    /* marked so that a read through a gateway, or cairn-admin repair,
     * rewrites it from a replica (outside the lock: it waits for the writer) */
    sn_store_mark_corrupt(sc->s, key, klen, v->ver, v->ts);
    pthread_mutex_lock(&sc->m);
    sc->res->corrupt++;
    atomic_fetch_add(&sc->s->scrub_corrupt, 1);
    if (sc->cb != NULL)
        sc->cb(sc->arg, key, klen, v, why);
    pthread_mutex_unlock(&sc->m);
}

/* The last span of a record calls this. */
static void sn_scrub_rec_finish(struct sn_scrub *sc, struct sn_scrub_rec *rec)
{
    if (atomic_load(&rec->corrupt)) {
        char why[64];
        snprintf(why, sizeof(why), "block %u checksum mismatch", rec->bad_block);
        if (rec->live) {
            sn_scrub_report(sc, rec->key, rec->klen, &rec->v, why);
        } else {
            pthread_mutex_lock(&sc->m);
            sc->res->corrupt_dead++;
            pthread_mutex_unlock(&sc->m);
        }
    }
    cn_free(rec->key);
    cn_free(rec);
}

static void sn_scrub_verify_job(struct sn_scrub *sc, struct sn_scrub_job *j, uint8_t *buf)
{
    int bad = sn_container_pread(j->c, buf, (size_t)j->len, j->pos) != CN_OK;
    uint32_t b = 0;
    for (uint64_t off = 0; !bad && off < j->len; off += SN_RECORD_BLOCK, b++) {
        size_t n = (size_t)CN_MIN((uint64_t)SN_RECORD_BLOCK, j->len - off);
        bad = cn_crc32c(0, buf + off, n) != j->crcs[b];
    }
    if (bad) {
        j->rec->bad_block = j->first_block + b - (b > 0);
        atomic_store(&j->rec->corrupt, 1);
    }
    pthread_mutex_lock(&sc->m);
    sc->res->bytes += j->len;
    pthread_mutex_unlock(&sc->m);
    sn_metrics_scrub_progress(sc->s->o.metrics, 0, j->len);
    sn_container_unref(j->c);
    if (atomic_fetch_sub(&j->rec->pending, 1) == 1)
        sn_scrub_rec_finish(sc, j->rec);
}

static void *sn_scrub_worker(void *arg)
{
    struct sn_scrub *sc = arg;
    uint8_t *buf = cn_malloc((size_t)SN_SCRUB_SPAN_BLOCKS * SN_RECORD_BLOCK);
    pthread_mutex_lock(&sc->m);
    for (;;) {
        while (sc->q_n == 0 && !sc->done)
            pthread_cond_wait(&sc->not_empty, &sc->m);
        if (sc->q_n == 0)
            break;
        struct sn_scrub_job j = sc->q[sc->q_head];
        sc->q_head = (sc->q_head + 1) % sc->q_cap;
        sc->q_n--;
        pthread_cond_signal(&sc->not_full);
        pthread_mutex_unlock(&sc->m);
        sn_scrub_verify_job(sc, &j, buf);
        pthread_mutex_lock(&sc->m);
    }
    pthread_mutex_unlock(&sc->m);
    cn_free(buf);
    return NULL;
}

static void sn_scrub_push(struct sn_scrub *sc, const struct sn_scrub_job *j)
{
    pthread_mutex_lock(&sc->m);
    while (sc->q_n == sc->q_cap)
        pthread_cond_wait(&sc->not_full, &sc->m);
    sc->q[(sc->q_head + sc->q_n) % sc->q_cap] = *j;
    sc->q_n++;
    pthread_cond_signal(&sc->not_empty);
    pthread_mutex_unlock(&sc->m);
}

/* Queues the spans of the record whose header ri lies at off in c. */
static void sn_scrub_record(struct sn_scrub *sc, struct sn_container *c, uint64_t off,
                            const struct sn_record_info *ri)
{
    struct sn_scrub_rec *rec = cn_calloc(1, sizeof(*rec));
    struct sn_ival cur;
    char err[CN_ERR_LEN];
    rec->live = sn_index_get(sc->s->ix, ri->key, ri->key_len, &cur, err) == CN_OK &&
                cur.cid == c->id && cur.off == off;
    sn_store_ival_from(&rec->v, ri, c->id, off);
    rec->key = cn_memdup(ri->key, ri->key_len);
    rec->klen = ri->key_len;
    uint32_t n_spans = (ri->n_blocks + SN_SCRUB_SPAN_BLOCKS - 1) / SN_SCRUB_SPAN_BLOCKS;
    atomic_init(&rec->pending, (int)n_spans);
    atomic_init(&rec->corrupt, 0);
    for (uint32_t sp = 0; sp < n_spans; sp++) {
        struct sn_scrub_job j;
        j.first_block = sp * SN_SCRUB_SPAN_BLOCKS;
        uint32_t nb = CN_MIN(SN_SCRUB_SPAN_BLOCKS, ri->n_blocks - j.first_block);
        uint64_t start = (uint64_t)j.first_block << SN_RECORD_BLOCK_LOG2;
        j.len = CN_MIN((uint64_t)nb << SN_RECORD_BLOCK_LOG2, ri->data_len - start);
        j.pos = off + ri->hdr_len + start;
        for (uint32_t b = 0; b < nb; b++)
            j.crcs[b] = sn_record_block_crc(ri, j.first_block + b);
        j.c = c;
        j.rec = rec;
        sn_container_ref(c);
        sn_scrub_push(sc, &j);
    }
    pthread_mutex_lock(&sc->m);
    sc->res->records++;
    pthread_mutex_unlock(&sc->m);
    sn_metrics_scrub_progress(sc->s->o.metrics, 1, 0);
    if (n_spans == 0)
        sn_scrub_rec_finish(sc, rec);
}

/* After a header failed at bad_off in c, the records past it cannot be
 * reached by walking: verify those the index points at through the read
 * path, and report the ones that fail. */
static void sn_scrub_fallback(struct sn_scrub *sc, struct sn_container *c, uint64_t bad_off)
{
    struct sn_index_iter *it = sn_index_iter_new(sc->s->ix);
    sn_index_iter_seek(it, NULL, 0);
    for (;; sn_index_iter_next(it)) {
        const uint8_t *k;
        uint32_t klen;
        struct sn_ival v;
        int rc = sn_index_iter_get(it, &k, &klen, &v);
        if (rc == CN_DONE)
            break;
        if (rc != CN_OK || v.cid != c->id || v.off < bad_off ||
            (v.flags & SN_RECORD_FLAG_TOMBSTONE))
            continue;
        struct sn_read r;
        char err[CN_ERR_LEN];
        rc = sn_store_read(sc->s, k, klen, SN_READ_DATA, 0, 0, &r, err);
        sn_read_fini(&r);
        if (rc == CN_CORRUPT)
            sn_scrub_report(sc, k, klen, &v, err);
    }
    sn_index_iter_free(it);
}

static void sn_scrub_container(struct sn_scrub *sc, struct sn_container *c, uint64_t end)
{
    struct sn_buf hb = {0};
    struct sn_record_info ri;
    char err[CN_ERR_LEN];
    uint64_t off = SN_CONTAINER_HDR;
    for (;;) {
        int rc = sn_container_read_header(c, off, end, &hb, &ri, err);
        if (rc == CN_DONE)
            break;
        if (rc != CN_OK) {
            pthread_mutex_lock(&sc->m);
            sc->res->headers_corrupt++;
            pthread_mutex_unlock(&sc->m);
            sn_scrub_fallback(sc, c, off);
            break;
        }
        sn_scrub_record(sc, c, off, &ri);
        off += sn_record_total_len(&ri);
    }
    sn_buf_fini(&hb);
}

int sn_scrub_run(struct sn_store *s, uint32_t n_threads, sn_scrub_cb cb, void *arg,
                 struct sn_scrub_result *res, char err[CN_ERR_LEN])
{
    struct sn_scrub sc = {.s = s, .cb = cb, .arg = arg, .res = res};
    uint64_t t0 = cn_time_mono_us();
    memset(res, 0, sizeof(*res));
    n_threads = CN_MAX(n_threads, 1u);
    pthread_mutex_init(&sc.m, NULL);
    pthread_cond_init(&sc.not_empty, NULL);
    pthread_cond_init(&sc.not_full, NULL);
    sc.q_cap = 2 * (size_t)n_threads;
    sc.q = cn_calloc(sc.q_cap, sizeof(*sc.q));
    pthread_t *th = cn_calloc(n_threads, sizeof(*th));
    uint32_t started = 0;
    int rc = CN_OK;
    pthread_mutex_lock(&s->admin);
    sn_metrics_scrub_running(s->o.metrics, 1);
    for (; started < n_threads; started++)
        if (pthread_create(&th[started], NULL, sn_scrub_worker, &sc) != 0) {
            snprintf(err, CN_ERR_LEN, "cannot start scrub threads");
            rc = CN_ERR;
            break;
        }
    /* the containers as they are now, each with a reference and an end */
    pthread_mutex_lock(&s->lock);
    size_t n = s->n_cons;
    struct sn_container **cs = cn_calloc(n + 1, sizeof(*cs));
    uint64_t *ends = cn_calloc(n + 1, sizeof(*ends));
    for (size_t i = 0; i < n; i++) {
        cs[i] = s->cons[i];
        ends[i] = cs[i]->indexed_upto;
        sn_container_ref(cs[i]);
    }
    pthread_mutex_unlock(&s->lock);
    for (size_t i = 0; i < n; i++) {
        if (started > 0)
            sn_scrub_container(&sc, cs[i], ends[i]);
        res->containers++;
        sn_container_unref(cs[i]);
    }
    pthread_mutex_lock(&sc.m);
    sc.done = 1;
    pthread_cond_broadcast(&sc.not_empty);
    pthread_mutex_unlock(&sc.m);
    for (uint32_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    sn_metrics_scrub_running(s->o.metrics, 0);
    pthread_mutex_unlock(&s->admin);
    atomic_fetch_add(&s->scrubs, 1);
    res->elapsed_us = cn_time_mono_us() - t0;
    cn_free(cs);
    cn_free(ends);
    cn_free(th);
    cn_free(sc.q);
    pthread_mutex_destroy(&sc.m);
    pthread_cond_destroy(&sc.not_empty);
    pthread_cond_destroy(&sc.not_full);
    return rc;
}
