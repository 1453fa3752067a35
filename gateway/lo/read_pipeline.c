/* Pipelined slice reads (read_pipeline.h). Slots form a ring of `prefetch`
 * entries in object order: `head` is the oldest slice not yet written to
 * the client, `count` the slots in use. A slot's request holds the request
 * (gw_req_hold) so the pipeline outlives a client that went away until every
 * answer came back. */
#include "read_pipeline.h"

#include <stdio.h>
#include <string.h>

#include "worker.h"

#include "cn/alloc.h"
#include "cn/log.h"

enum gw_read_slot_state { GW_READ_SLOT_WAIT, GW_READ_SLOT_READY };

struct gw_read_slot {
    struct gw_read_pipeline *p;
    enum gw_read_slot_state state;
    struct gw_lo_slice slice;
    uint64_t pos;               /* object offset of the slice */
    struct evbuffer *buf;
};

struct gw_read_pipeline {
    struct gw_req *r;
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

struct gw_read_pipeline *gw_read_pipeline_new(struct gw_req *r, const char *okey,
                                              size_t okey_len, struct gw_lo_map *map,
                                              uint64_t first, uint64_t len)
{
    const struct gw_config *cfg = r->worker->cfg;
    struct gw_read_pipeline *p = cn_calloc(1, sizeof(*p));
    p->r = r;
    CN_ASSERT(okey_len <= GW_KEYS_MAX && first + len <= map->size);
    memcpy(p->okey, okey, okey_len);
    p->okey_len = okey_len;
    p->map = *map;
    memset(map, 0, sizeof(*map));
    p->next = first;
    p->end = first + len;
    p->written = first;
    p->slice_len = (uint64_t)cfg->lo_read_len;
    p->prefetch = (uint32_t)cfg->lo_read_prefetch;
    /* one slice queued toward the client is enough to keep its socket
     * busy (the kernel buffers more): the GET's memory stays about
     * (read_prefetch + 1) x slice length */
    p->high_water = CN_MIN((uint64_t)cfg->http_output_high_water, p->slice_len);
    p->slots = cn_calloc(p->prefetch, sizeof(*p->slots));
    for (uint32_t i = 0; i < p->prefetch; i++) {
        p->slots[i].p = p;
        p->slots[i].buf = evbuffer_new();
    }
    return p;
}

void gw_read_pipeline_free(struct gw_read_pipeline *p)
{
    if (p == NULL)
        return;
    for (uint32_t i = 0; i < p->prefetch; i++)
        evbuffer_free(p->slots[i].buf);
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
    CN_LOGR(CN_LOG_ERROR, p->r->id,
            "GET %.*s aborted at byte %llu: chunk %u of segment %016llx (part %u), "
            "slice [%llu, +%llu): %s",
            (int)p->okey_len - 2, p->okey + 2, (unsigned long long)s->pos, s->slice.chunk,
            (unsigned long long)seg->ver, s->slice.seg + 1, (unsigned long long)s->slice.off,
            (unsigned long long)s->slice.len, why);
    p->failed = 1;
    gw_req_abort(p->r);
}

static void gw_read_pipeline_on_slice(struct gw_store_result *res, void *arg)
{
    struct gw_read_slot *s = arg;
    struct gw_read_pipeline *p = s->p;
    if (!gw_req_release(p->r) || p->failed)
        return; /* the client is gone (p may be freed) or we gave up */
    if (res->rc != CN_OK) {
        char why[CN_ERR_LEN + 32];
        snprintf(why, sizeof(why), "%s (%s)", cn_rc_str(res->rc), res->err);
        gw_read_pipeline_abort(p, s, why);
        return;
    }
    const struct msg *m = &res->reply->m;
    if (m->payload.len != s->slice.len || m->size != s->slice.chunk_size) {
        char why[128];
        snprintf(why, sizeof(why), "node %u returned %u bytes of a %llu-byte record, "
                 "expected %llu of %llu", res->reply->node, m->payload.len,
                 (unsigned long long)m->size, (unsigned long long)s->slice.len,
                 (unsigned long long)s->slice.chunk_size);
        gw_read_pipeline_abort(p, s, why);
        return;
    }
    gw_storage_reply_move_payload(res->reply, s->buf);
    s->state = GW_READ_SLOT_READY;
    gw_read_pipeline_pump(p);
}

/* Requests the slice at p->next into the next free slot. */
static void gw_read_pipeline_request(struct gw_read_pipeline *p)
{
    struct gw_read_slot *s = &p->slots[(p->head + p->count) % p->prefetch];
    p->count++;
    s->state = GW_READ_SLOT_WAIT;
    s->pos = p->next;
    gw_lo_map_slice(&p->map, p->next, p->end, p->slice_len, &s->slice);
    p->next += s->slice.len;
    char key[GW_LO_KEY_MAX];
    size_t klen = gw_lo_map_chunk_key(key, p->okey, p->okey_len, p->map.segs[s->slice.seg].ver,
                                      s->slice.chunk);
    gw_req_hold(p->r);
    gw_store_get_immutable(p->r->worker->store, key, klen, s->slice.off, s->slice.len,
                           gw_read_pipeline_on_slice, s);
}

static void gw_read_pipeline_on_drain(struct gw_req *r);

/* Writes ready slices in order, then requests more unless the client's
 * output is above the high-water mark. */
static void gw_read_pipeline_pump(struct gw_read_pipeline *p)
{
    struct gw_req *r = p->r;
    while (p->count > 0 && p->slots[p->head].state == GW_READ_SLOT_READY) {
        struct gw_read_slot *s = &p->slots[p->head];
        p->written += evbuffer_get_length(s->buf);
        evbuffer_add_buffer(gw_req_reply_body(r), s->buf);
        p->head = (p->head + 1) % p->prefetch;
        p->count--;
    }
    if (p->written == p->end) {
        CN_ASSERT(p->count == 0);
        p->done = 1;
        gw_req_reply_end(r);
        return;
    }
    if (evbuffer_get_length(gw_req_reply_body(r)) >= p->high_water) {
        gw_req_on_drain(r, gw_read_pipeline_on_drain);
        return;
    }
    while (p->count < p->prefetch && p->next < p->end)
        gw_read_pipeline_request(p);
}

void gw_read_pipeline_start(struct gw_read_pipeline *p)
{
    gw_read_pipeline_pump(p);
}

/* h is the handler state whose first member points at the pipeline. */
static void gw_read_pipeline_on_drain(struct gw_req *r)
{
    struct gw_read_pipeline **pp = r->h;
    if (*pp != NULL && !(*pp)->failed && !(*pp)->done)
        gw_read_pipeline_pump(*pp);
}
