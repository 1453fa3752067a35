/* Streaming PUT bodies into chunks (lo_put.h). Neither the writer nor
 * this holds the request (they know none: the body comes through a
 * gw_lo_put_source); the request's state holds this (its free function
 * calls gw_lo_put_free()), so a client that goes away frees it and the
 * writer reclaims what it wrote. */
#include "lo_put.h"

#include <string.h>

#include "lo_hasher.h"
#include "lo_writer.h"
#include "s3_error.h"
#include "store.h"

#include "cn/alloc.h"
#include "cn/log.h"

struct gw_lo_put {
    const struct gw_lo_env *lo;
    struct gw_lo_put_source src;
    uint64_t reqid;
    char okey[GW_KEYS_MAX];
    size_t okey_len;
    enum gw_lo_put_mode mode;
    gw_lo_put_done_cb done;
    void *arg;
    struct gw_lo_writer *w;
    struct evbuffer *tail;   /* the body reader's last bytes (its buffer) */
    int body_done;
    int finished;            /* done() ran */
    int committed;
    int md5_outside;         /* the writer's hasher thread computes the MD5 */
    struct gw_lo_seg seg;
};

/* Calls done once; lp may be freed when it returns. */
static void gw_lo_put_finish(struct gw_lo_put *lp, enum gw_s3_err err, const char *why)
{
    if (lp->finished)
        return;
    lp->finished = 1;
    if (err == GW_S3_OK && lp->w != NULL)
        gw_lo_writer_seg(lp->w, &lp->seg);
    lp->done(lp->arg, err, why);
}

/* Every chunk is stored (and hashed): with the MD5 off the loop, it is the
 * body's now, and Content-MD5 is checked before the caller commits. */
static void gw_lo_put_complete(struct gw_lo_put *lp)
{
    if (!lp->md5_outside) {
        gw_lo_put_finish(lp, GW_S3_OK, NULL);
        return;
    }
    const struct gw_checksum *md5 = gw_lo_writer_md5(lp->w);
    if (md5 == NULL) {   /* OpenSSL could not set up MD5 for the stream */
        gw_lo_put_finish(lp, GW_S3_INTERNAL_ERROR, "MD5 unavailable");
        return;
    }
    gw_lo_put_finish(lp, lp->src.md5_done(lp->src.ctx, md5), NULL);
}

/* After the last byte was handed over: feeds the tail; completes when every
 * chunk is stored and hashed. */
static void gw_lo_put_drive_tail(struct gw_lo_put *lp)
{
    int rc = gw_lo_writer_feed(lp->w, lp->tail, 1);
    if (rc == CN_OK && gw_lo_writer_inflight(lp->w) == 0)
        gw_lo_put_complete(lp);
}

/* A chunk answered. */
static void gw_lo_put_on_writer(struct gw_lo_writer *w, void *arg)
{
    struct gw_lo_put *lp = arg;
    if (lp->finished)
        return;
    if (gw_lo_writer_error(w) != NULL) {
        /* rc is not CN_OK here: the writer has an error */
        gw_lo_put_finish(lp, gw_s3_error_from_store(gw_lo_writer_rc(w)), gw_lo_writer_error(w));
        return;
    }
    if (lp->body_done)
        gw_lo_put_drive_tail(lp);
    else
        lp->src.resume(lp->src.ctx);
}

static void gw_lo_put_make_writer(struct gw_lo_put *lp)
{
    const struct gw_lo_env *lo = lp->lo;
    struct gw_lo_writer_config wc = {
        .store = lo->store,
        .reclaim = lo->reclaim,
        .okey = lp->okey,
        .okey_len = lp->okey_len,
        .ver = lp->reqid,
        .chunk_len = lo->chunk_len,
        .max_inflight = lo->write_inflight,
        .reqid = lp->reqid,
        .pool = lo->pool,
        .hasher = lp->md5_outside ? lo->hasher : NULL,
        .base = lo->base,
    };
    lp->w = gw_lo_writer_new(&wc, gw_lo_put_on_writer, lp);
}

/* New decoded bytes from the source: chunk them, or keep holding them
 * while an AUTO body is still under the threshold. */
int gw_lo_put_data(struct gw_lo_put *lp, struct evbuffer *data)
{
    if (lp->w == NULL) {
        if (lp->mode == GW_LO_PUT_AUTO && lp->src.decoded(lp->src.ctx) < lp->lo->threshold)
            return 1;
        gw_lo_put_make_writer(lp);
    }
    /* CN_ERR: a chunk failed; its callback answers, so just stop reading */
    return gw_lo_writer_feed(lp->w, data, 0) == CN_OK;
}

/* The source's body ended. */
void gw_lo_put_body_end(struct gw_lo_put *lp, enum gw_s3_err err, struct evbuffer *data)
{
    if (err != GW_S3_OK) {
        gw_lo_put_finish(lp, err, NULL);
        return;
    }
    lp->body_done = 1;
    lp->tail = data;
    if (lp->w == NULL && lp->mode == GW_LO_PUT_ALWAYS)
        gw_lo_put_make_writer(lp);
    if (lp->w == NULL) {
        gw_lo_put_finish(lp, GW_S3_OK, NULL); /* small: the caller writes one record */
        return;
    }
    if (gw_lo_writer_error(lp->w) != NULL)
        return; /* the failed chunk's callback answered or will */
    gw_lo_put_drive_tail(lp);
}

struct gw_lo_put *gw_lo_put_new(const struct gw_lo_env *lo, const struct gw_lo_put_source *src,
                                uint64_t reqid, const char *okey, size_t okey_len,
                                enum gw_lo_put_mode mode, gw_lo_put_done_cb done, void *arg)
{
    CN_ASSERT(okey_len <= GW_KEYS_MAX);
    struct gw_lo_put *lp = cn_calloc(1, sizeof(*lp));
    lp->lo = lo;
    lp->src = *src;
    lp->reqid = reqid;
    memcpy(lp->okey, okey, okey_len);
    lp->okey_len = okey_len;
    lp->mode = mode;
    lp->done = done;
    lp->arg = arg;
    /* an AUTO body may end small and be stored whole: the reader hashes it */
    lp->md5_outside = mode == GW_LO_PUT_ALWAYS && lo->hasher != NULL;
    return lp;
}

void gw_lo_put_begin(struct gw_lo_put *lp, uint64_t limit)
{
    lp->src.start(lp->src.ctx, limit, lp->md5_outside, lp);
}

int gw_lo_put_chunked(const struct gw_lo_put *lp)
{
    return lp->w != NULL;
}

struct evbuffer *gw_lo_put_small(const struct gw_lo_put *lp)
{
    return lp->tail;
}

void gw_lo_put_seg(const struct gw_lo_put *lp, struct gw_lo_seg *out)
{
    *out = lp->seg;
}

void gw_lo_put_commit(struct gw_lo_put *lp)
{
    CN_ASSERT(lp->finished && !lp->committed);
    lp->committed = 1;
    if (lp->w != NULL)
        gw_lo_writer_commit(lp->w);
    lp->w = NULL;
}

void gw_lo_put_free(struct gw_lo_put *lp)
{
    if (lp == NULL)
        return;
    gw_lo_writer_abandon(lp->w);
    cn_free(lp);
}
