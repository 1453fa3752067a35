/* Pipelined slice reads (read_pipeline.h). Slots form a ring of `prefetch`
 * entries in object order: `head` is the oldest slice not yet written to
 * the client, `count` the slots in use. A slot's read holds the sink's
 * owner (sink.hold) so the pipeline outlives a client that went away until
 * every answer came back. */
#include "read_pipeline.h"

#include <stdio.h>
#include <string.h>

#include "lo_metrics.h"

#include "cn/alloc.h"

enum gw_read_slot_state { GW_READ_SLOT_WAIT, GW_READ_SLOT_READY };

struct gw_read_slot {
    enum gw_read_slot_state state;
    struct gw_lo_slice slice;
    uint64_t pos;                   /* object offset of the slice */
    struct gw_read_pipeline_io io;  /* io.dst holds the slice once READY */
};

struct gw_read_pipeline {
    struct gw_read_pipeline_store store;
    struct gw_read_pipeline_sink sink;
    char okey[GW_KEYS_MAX];
    size_t okey_len;
    struct gw_lo_map map;
    uint64_t next;              /* object offset of the next slice to request */
    uint64_t end;               /* exclusive */
    uint64_t written;           /* bytes queued toward the client */
    uint64_t slice_len;
    uint64_t high_water;        /* bytes queued toward the client that pause us */
    uint32_t prefetch;
    struct gw_read_slot *slots;
    uint32_t head, count;
    int failed;
    int done;
};

struct gw_read_pipeline *gw_read_pipeline_new(const struct gw_read_pipeline_store *store,
                                              const struct gw_read_pipeline_sink *sink,
                                              const struct gw_read_pipeline_options *opt,
                                              const char *okey, size_t okey_len,
                                              struct gw_lo_map *map, uint64_t first,
                                              uint64_t len)
{
    CN_ASSERT(okey_len <= GW_KEYS_MAX && first + len <= map->size);
    CN_ASSERT(opt->slice_len > 0 && opt->prefetch > 0);
    struct gw_read_pipeline *p = cn_calloc(1, sizeof(*p));
    p->store = *store;
    p->sink = *sink;
    memcpy(p->okey, okey, okey_len);
    p->okey_len = okey_len;
    p->map = *map;
    memset(map, 0, sizeof(*map));
    p->next = first;
    p->end = first + len;
    p->written = first;
    p->slice_len = opt->slice_len;
    p->prefetch = opt->prefetch;
    /* one slice queued toward the client is enough to keep its socket
     * busy (the kernel buffers more): the GET's memory stays about
     * (read_prefetch + 1) x slice length */
    p->high_water = CN_MIN(opt->output_high_water, p->slice_len);
    p->slots = cn_calloc(p->prefetch, sizeof(*p->slots));
    for (uint32_t i = 0; i < p->prefetch; i++) {
        p->slots[i].io.p = p;
        p->slots[i].io.slot = i;
        p->slots[i].io.dst = evbuffer_new();
    }
    return p;
}

void gw_read_pipeline_free(struct gw_read_pipeline *p)
{
    if (p == NULL)
        return;
    for (uint32_t i = 0; i < p->prefetch; i++)
        evbuffer_free(p->slots[i].io.dst);
    cn_free(p->slots);
    gw_lo_map_fini(&p->map);
    cn_free(p);
}

static void gw_read_pipeline_pump(struct gw_read_pipeline *p);

/* Cuts the response short: the client sees a truncated body. */
static void gw_read_pipeline_abort(struct gw_read_pipeline *p, const struct gw_read_slot *s,
                                   const char *why)
{
    const struct gw_lo_seg *seg = &p->map.segs[s->slice.seg];
    char msg[GW_KEYS_MAX + 2 * CN_ERR_LEN];
    snprintf(msg, sizeof(msg),
             "GET %.*s aborted at byte %llu: chunk %u of segment %016llx (part %u), "
             "slice [%llu, +%llu): %s",
             (int)p->okey_len - 2, p->okey + 2, (unsigned long long)s->pos, s->slice.chunk,
             (unsigned long long)seg->ver, s->slice.seg + 1, (unsigned long long)s->slice.off,
             (unsigned long long)s->slice.len, why);
    p->failed = 1;
    gw_lo_metrics_add(GW_LO_M_GET_ABORTS, 1);
    p->sink.abort(p->sink.ctx, msg);
}

void gw_read_pipeline_io_done(struct gw_read_pipeline_io *io)
{
    struct gw_read_pipeline *p = io->p;
    struct gw_read_slot *s = &p->slots[io->slot];
    CN_ASSERT(s->state == GW_READ_SLOT_WAIT);
    gw_lo_metrics_add(GW_LO_M_SLICES_IN_FLIGHT, -1);
    if (!p->sink.release(p->sink.ctx) || p->failed)
        return; /* the client is gone (p may be freed) or we gave up */
    if (io->rc != CN_OK) {
        char why[CN_ERR_LEN + 32];
        snprintf(why, sizeof(why), "%s (%s)", cn_rc_str(io->rc), io->err);
        gw_read_pipeline_abort(p, s, why);
        return;
    }
    size_t got = evbuffer_get_length(io->dst);
    if (got != s->slice.len || io->record_size != s->slice.chunk_size) {
        char why[128];
        snprintf(why, sizeof(why), "node %u returned %zu bytes of a %llu-byte record, "
                 "expected %llu of %llu", io->node, got,
                 (unsigned long long)io->record_size, (unsigned long long)s->slice.len,
                 (unsigned long long)s->slice.chunk_size);
        evbuffer_drain(io->dst, got);
        gw_read_pipeline_abort(p, s, why);
        return;
    }
    s->state = GW_READ_SLOT_READY;
    gw_read_pipeline_pump(p);
}

/* Requests the slice at p->next into the next free slot. */
static void gw_read_pipeline_request(struct gw_read_pipeline *p)
{
    struct gw_read_slot *s = &p->slots[(p->head + p->count) % p->prefetch];
    p->count++;
    gw_lo_metrics_slice_requested(p->count);
    s->state = GW_READ_SLOT_WAIT;
    s->pos = p->next;
    gw_lo_map_slice(&p->map, p->next, p->end, p->slice_len, &s->slice);
    p->next += s->slice.len;
    char key[GW_LO_KEY_MAX];
    size_t klen = gw_lo_map_chunk_key(key, p->okey, p->okey_len, p->map.segs[s->slice.seg].ver,
                                      s->slice.chunk);
    struct gw_read_pipeline_io *io = &s->io;
    io->key = key;
    io->key_len = klen;
    io->off = s->slice.off;
    io->len = s->slice.len;
    io->rc = CN_OK;
    io->err[0] = '\0';
    io->node = 0;
    io->record_size = 0;
    p->sink.hold(p->sink.ctx);
    p->store.get(p->store.ctx, io); /* io->key is valid only during the call */
}

/* Writes ready slices in order, then requests more unless the client's
 * output is above the high-water mark. */
static void gw_read_pipeline_pump(struct gw_read_pipeline *p)
{
    struct evbuffer *out = p->sink.body(p->sink.ctx);
    while (p->count > 0 && p->slots[p->head].state == GW_READ_SLOT_READY) {
        struct gw_read_slot *s = &p->slots[p->head];
        p->written += evbuffer_get_length(s->io.dst);
        evbuffer_add_buffer(out, s->io.dst);
        p->head = (p->head + 1) % p->prefetch;
        p->count--;
    }
    if (p->written == p->end) {
        CN_ASSERT(p->count == 0);
        p->done = 1;
        p->sink.end(p->sink.ctx);
        return;
    }
    if (evbuffer_get_length(p->sink.body(p->sink.ctx)) >= p->high_water) {
        gw_lo_metrics_add(GW_LO_M_BACKPRESSURE_PAUSES, 1);
        p->sink.wait_drain(p->sink.ctx);
        return;
    }
    /* a store that fails at once calls abort() inside request() */
    while (p->count < p->prefetch && p->next < p->end && !p->failed)
        gw_read_pipeline_request(p);
}

void gw_read_pipeline_start(struct gw_read_pipeline *p)
{
    gw_read_pipeline_pump(p);
}

void gw_read_pipeline_drained(struct gw_read_pipeline *p)
{
    if (!p->failed && !p->done)
        gw_read_pipeline_pump(p);
}
