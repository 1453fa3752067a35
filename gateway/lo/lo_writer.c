/* Chunked writes (lo_writer.h). A chunk is collected in a pool buffer
 * (`buf`, one copy out of the body reader's evbuffer) or, without a pool, in
 * `cur` (moved without copying where chains allow, made contiguous once),
 * and sent to its N replicas from one blob (one zmq_msg per replica over
 * the same bytes). */
#include "lo_writer.h"

#include <stdio.h>
#include <string.h>

#include "lo_hasher.h"
#include "lo_metrics.h"
#include "lo_pool.h"

#include "cn/alloc.h"
#include "cn/hlc.h"
#include "cn/log.h"

struct gw_lo_writer {
    struct gw_lo_writer_config cfg;
    struct gw_lo_writer_store io;
    char okey[GW_KEYS_MAX];
    gw_lo_writer_cb cb;
    void *arg;
    struct evbuffer *cur;   /* the chunk being filled (no pool) */
    uint8_t *buf;           /* the chunk being filled (pool; NULL until a byte comes) */
    size_t buf_have;
    uint32_t next_idx;      /* chunks sent so far */
    uint64_t sent;          /* bytes sent so far */
    uint32_t inflight;      /* chunk writes not answered */
    /* with a hasher: chunks written or hashed not both; chunks below
     * `hashed` are hashed (in order), and for those at or above it
     * sent_done[idx % max_inflight] says whether the write answered */
    struct gw_lo_hash_stream *hs;
    uint32_t busy;
    uint32_t hashed;
    uint8_t *sent_done;
    int abandoned;
    int rc;                 /* first failure */
    char err[CN_ERR_LEN];
};

/* ---- the default store: the worker's cluster and reclaimer ---------- */

static void gw_lo_writer_store_put(void *ctx, const struct gw_store_record *rec,
                                   struct gw_blob *blob, gw_store_cb cb, void *arg)
{
    const struct gw_lo_writer_config *cfg = ctx;
    gw_store_put(cfg->store, rec, blob, cb, arg);
}

static void gw_lo_writer_store_reclaim(void *ctx, const char *okey, size_t okey_len,
                                       const struct gw_lo_seg *seg, uint64_t reqid)
{
    const struct gw_lo_writer_config *cfg = ctx;
    gw_lo_reclaim_segs(cfg->reclaim, okey, okey_len, seg, 1, 0, reqid);
}

/* One chunk write's context: which chunk answered. */
struct gw_lo_writer_chunk {
    struct gw_lo_writer *w;
    uint32_t idx;
};

static void gw_lo_writer_on_hashed(void *arg);

struct gw_lo_writer *gw_lo_writer_new(const struct gw_lo_writer_config *cfg, gw_lo_writer_cb cb,
                                      void *arg)
{
    CN_ASSERT(cfg->chunk_len > 0 && cfg->max_inflight > 0 && cfg->okey_len <= GW_KEYS_MAX);
    struct gw_lo_writer *w = cn_calloc(1, sizeof(*w));
    w->cfg = *cfg;
    if (cfg->io != NULL) {
        w->io = *cfg->io;
    } else {
        w->io.put = gw_lo_writer_store_put;
        w->io.reclaim = gw_lo_writer_store_reclaim;
        w->io.ctx = &w->cfg;
    }
    w->cfg.io = NULL; /* copied into w->io */
    memcpy(w->okey, cfg->okey, cfg->okey_len);
    w->cfg.okey = w->okey;
    w->cb = cb;
    w->arg = arg;
    if (cfg->pool != NULL && gw_lo_pool_buf_len(cfg->pool) >= cfg->chunk_len)
        gw_lo_pool_hold(cfg->pool);
    else
        w->cfg.pool = NULL;
    if (w->cfg.pool == NULL)
        w->cur = evbuffer_new();
    if (cfg->hasher != NULL && cfg->base != NULL)
        w->hs = gw_lo_hash_stream_new(cfg->hasher, cfg->base, gw_lo_writer_on_hashed, w);
    if (w->hs != NULL)
        w->sent_done = cn_calloc(cfg->max_inflight, 1);
    w->rc = CN_OK;
    return w;
}

static void gw_lo_writer_free(struct gw_lo_writer *w)
{
    gw_lo_hash_stream_close(w->hs);
    cn_free(w->sent_done);
    if (w->cfg.pool != NULL) {
        if (w->buf != NULL)
            gw_lo_pool_put(w->cfg.pool, w->buf);
        gw_lo_pool_release(w->cfg.pool);
    } else {
        evbuffer_free(w->cur);
    }
    cn_free(w);
}

/* A sent chunk's last reference went (any thread): its buffer goes back. */
static void gw_lo_writer_give_back(void *data, void *arg)
{
    gw_lo_pool_put(arg, data);
}

/* The bytes filled so far. */
static size_t gw_lo_writer_have(const struct gw_lo_writer *w)
{
    return w->cfg.pool != NULL ? w->buf_have : evbuffer_get_length(w->cur);
}

/* Moves n bytes of data into the chunk being filled. */
static void gw_lo_writer_take(struct gw_lo_writer *w, struct evbuffer *data, size_t n)
{
    if (w->cfg.pool == NULL) {
        evbuffer_remove_buffer(data, w->cur, n);
        return;
    }
    if (w->buf == NULL)
        w->buf = gw_lo_pool_get(w->cfg.pool);
    /* NULL only under cn_alloc's failure hook, which no writer test arms;
     * cn_malloc aborts on a real OOM, as every other allocation here */
    CN_ASSERT(w->buf != NULL);
    int got = evbuffer_remove(data, w->buf + w->buf_have, n);
    CN_ASSERT(got == (int)n);
    w->buf_have += n;
}

/* The filled chunk as a blob; the writer starts a new one. */
static struct gw_blob *gw_lo_writer_blob(struct gw_lo_writer *w)
{
    if (w->cfg.pool == NULL) {
        struct gw_blob *blob = gw_blob_from_evbuffer(w->cur);
        w->cur = evbuffer_new();
        return blob;
    }
    struct gw_blob *blob = gw_blob_from_buffer(w->buf, w->buf_have, gw_lo_writer_give_back,
                                               w->cfg.pool);
    w->buf = NULL;
    w->buf_have = 0;
    return blob;
}

/* An abandoned writer whose last chunk answered: reclaim and free. */
static void gw_lo_writer_finish_abandon(struct gw_lo_writer *w)
{
    if (w->next_idx > 0) {
        struct gw_lo_seg seg = {w->cfg.ver, (uint64_t)w->next_idx * w->cfg.chunk_len,
                                w->cfg.chunk_len};
        CN_LOGR(CN_LOG_INFO, w->cfg.reqid, "reclaiming %u chunks of an unfinished write",
                w->next_idx);
        w->io.reclaim(w->io.ctx, w->okey, w->cfg.okey_len, &seg, w->cfg.reqid);
    }
    gw_lo_writer_free(w);
}

static void gw_lo_writer_on_chunk(struct gw_store_result *res, void *arg)
{
    struct gw_lo_writer_chunk *c = arg;
    struct gw_lo_writer *w = c->w;
    uint32_t idx = c->idx;
    cn_free(c);
    w->inflight--;
    if (w->hs == NULL || idx < w->hashed)
        w->busy--;
    else
        w->sent_done[idx % w->cfg.max_inflight] = 1;
    gw_lo_metrics_add(GW_LO_M_PUT_CHUNKS_IN_FLIGHT, -1);
    if (res->rc != CN_OK && w->rc == CN_OK) {
        w->rc = res->rc;
        snprintf(w->err, sizeof(w->err), "chunk write failed: %s", res->err);
        CN_LOGR(CN_LOG_WARN, w->cfg.reqid, "%s", w->err);
    }
    if (w->abandoned) {
        if (w->inflight == 0)
            gw_lo_writer_finish_abandon(w);
        return;
    }
    w->cb(w, w->arg);
}

/* The hasher finished chunks (loop): those whose write answered too are
 * no longer busy. */
static void gw_lo_writer_on_hashed(void *arg)
{
    struct gw_lo_writer *w = arg;
    uint32_t now = gw_lo_hash_stream_hashed(w->hs);
    for (; w->hashed < now; w->hashed++) {
        uint8_t *done = &w->sent_done[w->hashed % w->cfg.max_inflight];
        if (*done) {
            *done = 0;
            w->busy--;
        }
    }
    w->cb(w, w->arg);   /* never abandoned here: abandon closed the stream */
}

/* Sends cur as chunk next_idx. */
static void gw_lo_writer_send(struct gw_lo_writer *w)
{
    struct gw_blob *blob = gw_lo_writer_blob(w);
    char key[GW_LO_KEY_MAX];
    size_t klen = gw_lo_map_chunk_key(key, w->okey, w->cfg.okey_len, w->cfg.ver, w->next_idx);
    struct gw_store_record rec = {
        .key = key,
        .key_len = klen,
        .ver = w->cfg.ver,
        .ts = cn_hlc_now(cn_hlc_default()),
    };
    struct gw_lo_writer_chunk *c = cn_calloc(1, sizeof(*c));
    c->w = w;
    c->idx = w->next_idx;
    w->next_idx++;
    w->sent += gw_blob_len(blob);
    w->inflight++;
    w->busy++;
    gw_lo_metrics_add(GW_LO_M_PUT_CHUNKS, 1);
    gw_lo_metrics_add(GW_LO_M_PUT_CHUNKS_IN_FLIGHT, 1);
    if (w->hs != NULL) {
        w->sent_done[c->idx % w->cfg.max_inflight] = 0;
        gw_lo_hash_stream_add(w->hs, blob);   /* in byte order: one FIFO thread */
    }
    w->io.put(w->io.ctx, &rec, blob, gw_lo_writer_on_chunk, c);
    gw_blob_unref(blob);
}

int gw_lo_writer_feed(struct gw_lo_writer *w, struct evbuffer *data, int last)
{
    CN_ASSERT(!w->abandoned);
    for (;;) {
        if (w->rc != CN_OK)
            return CN_ERR;
        size_t have = gw_lo_writer_have(w);
        size_t room = w->cfg.chunk_len - have;
        size_t n = CN_MIN(room, evbuffer_get_length(data));
        if (n > 0)
            gw_lo_writer_take(w, data, n);
        have += n;
        int empty = evbuffer_get_length(data) == 0;
        int ready = have == w->cfg.chunk_len || (last && empty && have > 0);
        if (!ready)
            return empty ? CN_OK : CN_AGAIN;
        if (w->busy >= w->cfg.max_inflight)
            return CN_AGAIN;
        gw_lo_writer_send(w);
    }
}

uint32_t gw_lo_writer_inflight(const struct gw_lo_writer *w)
{
    return w->busy;
}

const struct gw_checksum *gw_lo_writer_md5(struct gw_lo_writer *w)
{
    return w->hs != NULL && w->busy == 0 ? gw_lo_hash_stream_final(w->hs) : NULL;
}

const char *gw_lo_writer_error(const struct gw_lo_writer *w)
{
    return w->rc != CN_OK ? w->err : NULL;
}

int gw_lo_writer_rc(const struct gw_lo_writer *w)
{
    return w->rc;
}

void gw_lo_writer_seg(const struct gw_lo_writer *w, struct gw_lo_seg *out)
{
    out->ver = w->cfg.ver;
    out->size = w->sent;
    out->chunk_len = w->cfg.chunk_len;
}

void gw_lo_writer_commit(struct gw_lo_writer *w)
{
    CN_ASSERT(w->busy == 0 && !w->abandoned);
    gw_lo_writer_free(w);
}

void gw_lo_writer_abandon(struct gw_lo_writer *w)
{
    if (w == NULL)
        return;
    CN_ASSERT(!w->abandoned);
    w->abandoned = 1;
    gw_lo_hash_stream_close(w->hs);   /* chunks not hashed yet are dropped */
    w->hs = NULL;
    if (w->inflight == 0)
        gw_lo_writer_finish_abandon(w);
}
