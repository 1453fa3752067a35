/* The large-object GET's wiring (lo_get.h): a read pipeline's store over
 * the worker's store, its options from the large_object.* settings, and
 * the owner's sink. Each slice read holds the owner through the sink, so g
 * (freed with the owner's state) outlives every read. */
#include "lo_get.h"

#include <stdio.h>

#include "lo_metrics.h"
#include "read_pipeline.h"
#include "store.h"

#include "cn/alloc.h"

struct gw_lo_get {
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

struct gw_lo_get *gw_lo_get_new(const struct gw_lo_env *lo,
                                const struct gw_read_pipeline_sink *sink, const char *okey,
                                size_t okey_len, struct gw_lo_map *map, uint64_t first,
                                uint64_t len)
{
    struct gw_lo_get *g = cn_calloc(1, sizeof(*g));
    const struct gw_read_pipeline_store store = {
        .get = gw_lo_get_store_get,
        .ctx = lo->store,
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
    g->p = gw_read_pipeline_new(&store, sink, &opt, okey, okey_len, map, first, len);
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
