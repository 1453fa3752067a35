/* The large-object GET's wiring (lo_get.h): the store and the sink of a
 * read pipeline, over the worker's store and one request. Each slice read
 * holds the request, so g (freed with the request) outlives every read. */
#include "lo_get.h"

#include <stdio.h>

#include "lo_metrics.h"
#include "read_pipeline.h"
#include "s3_error.h"
#include "store.h"

#include "cn/alloc.h"
#include "cn/log.h"

struct gw_lo_get {
    struct gw_req *r;
    gw_req_cb on_drain;
    uint64_t len;             /* Content-Length, sent on admission */
    struct gw_read_pipeline *p;
};

/* ---- the store: chunk slices from the cluster ------------------------- */

/* A slice's answer: the payload moves to io->dst (a reference to the
 * reply's frame, not a copy), then the pipeline takes over. */
static void gw_lo_get_on_store(struct gw_store_result *res, void *arg)
{
    struct gw_read_pipeline_io *io = arg;
    io->rc = res->rc;
    if (res->rc != CN_OK) {
        snprintf(io->err, sizeof(io->err), "%s", res->err);
    } else {
        const struct msg *m = &res->reply->m;
        io->node = res->reply->node;
        io->record_size = m->size;
        /* a short or long answer is moved too: the pipeline checks the
         * length and drops it */
        if (gw_storage_reply_move_payload(res->reply, io->dst) != CN_OK) {
            io->rc = CN_ERR;
            snprintf(io->err, sizeof(io->err), "payload of node %u not taken", io->node);
        }
    }
    gw_read_pipeline_io_done(io);
}

static void gw_lo_get_store_get(void *ctx, struct gw_read_pipeline_io *io)
{
    struct gw_store *store = ctx;
    gw_store_get_immutable(store, io->key, io->key_len, io->off, io->len, gw_lo_get_on_store, io);
}

/* ---- the sink: the request's response ---------------------------------- */

static struct evbuffer *gw_lo_get_sink_body(void *ctx)
{
    struct gw_lo_get *g = ctx;
    return gw_req_reply_body(g->r);
}

static void gw_lo_get_sink_wait_drain(void *ctx)
{
    struct gw_lo_get *g = ctx;
    gw_req_on_drain(g->r, g->on_drain);
}

static void gw_lo_get_sink_end(void *ctx)
{
    struct gw_lo_get *g = ctx;
    gw_req_reply_end(g->r);
}

static void gw_lo_get_sink_abort(void *ctx, const char *why)
{
    struct gw_lo_get *g = ctx;
    CN_LOGR(CN_LOG_ERROR, g->r->id, "%s", why);
    gw_req_abort(g->r);
}

static void gw_lo_get_sink_hold(void *ctx)
{
    struct gw_lo_get *g = ctx;
    gw_req_hold(g->r);
}

/* The read-ahead budget let the GET in: its headers (built by the
 * handler) go out now. */
static void gw_lo_get_sink_admit(void *ctx)
{
    struct gw_lo_get *g = ctx;
    gw_req_reply_send_headers(g->r, g->len);
}

/* The GET waited large_object.read_queue_timeout for room: 503 SlowDown
 * (the headers were not sent), which ends the request and frees g. */
static void gw_lo_get_sink_refuse(void *ctx)
{
    struct gw_lo_get *g = ctx;
    CN_LOGR(CN_LOG_WARN, g->r->id, "large-object GET refused: no read-ahead budget within "
            "large_object.read_queue_timeout");
    gw_req_error(g->r, GW_S3_SLOW_DOWN, NULL);
}

/* The last release frees the request, and g with it: nothing after. */
static int gw_lo_get_sink_release(void *ctx)
{
    struct gw_lo_get *g = ctx;
    return gw_req_release(g->r);
}

struct gw_lo_get *gw_lo_get_new(struct gw_req *r, const char *okey, size_t okey_len,
                                struct gw_lo_map *map, uint64_t first, uint64_t len,
                                gw_req_cb on_drain)
{
    const struct gw_lo_env *lo = &r->s3->lo;
    struct gw_lo_get *g = cn_calloc(1, sizeof(*g));
    g->r = r;
    g->on_drain = on_drain;
    g->len = len;
    const struct gw_read_pipeline_store store = {
        .get = gw_lo_get_store_get,
        .ctx = lo->store,
    };
    const struct gw_read_pipeline_sink sink = {
        .body = gw_lo_get_sink_body,
        .wait_drain = gw_lo_get_sink_wait_drain,
        .end = gw_lo_get_sink_end,
        .abort = gw_lo_get_sink_abort,
        .hold = gw_lo_get_sink_hold,
        .release = gw_lo_get_sink_release,
        .admit = gw_lo_get_sink_admit,
        .refuse = gw_lo_get_sink_refuse,
        .ctx = g,
    };
    const struct gw_read_pipeline_options opt = {
        .slice_len = lo->read_len,
        .prefetch = lo->read_prefetch,
        .output_high_water = lo->output_high_water,
        .budget = lo->read_budget,
        .base = lo->base,
        .retries = lo->read_retries,
        .retry_backoff_ms = lo->read_retry_backoff_ms,
    };
    g->p = gw_read_pipeline_new(&store, &sink, &opt, okey, okey_len, map, first, len);
    gw_lo_metrics_add(GW_LO_M_GETS_IN_FLIGHT, 1);
    return g;
}

void gw_lo_get_start(struct gw_lo_get *g)
{
    gw_read_pipeline_start(g->p);
}

void gw_lo_get_drained(struct gw_lo_get *g)
{
    gw_read_pipeline_drained(g->p);
}

void gw_lo_get_free(struct gw_lo_get *g)
{
    if (g == NULL)
        return;
    gw_read_pipeline_free(g->p);
    gw_lo_metrics_add(GW_LO_M_GETS_IN_FLIGHT, -1);
    cn_free(g);
}
