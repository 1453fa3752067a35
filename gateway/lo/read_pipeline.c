/* Pipelined slice reads (read_pipeline.h). Slots form a ring of `prefetch`
 * entries (the most depth the window allows) in object order: `head` is the oldest slice not yet written to
 * the client, `count` the slots in use. A slot's read (or its wait before
 * a retry) holds the sink's owner (sink.hold) so the pipeline outlives a
 * client that went away until every answer came back. With a read-ahead
 * budget, `reserved` bytes are held from it and never less than what the
 * stream holds: slices in the ring (`ring_bytes`) plus the bytes queued
 * toward the client. */
#include "read_pipeline.h"

#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "read_ahead.h"
#include "read_budget.h"
#include "lo_metrics.h"

#include "cn/alloc.h"
#include "cn/time.h"

#define GW_READ_RETRY_MAX_MS 5000 /* the longest wait between two asks of a slice */
#define GW_READ_BURST_US 1000     /* answers closer than this to the last delivery
                                     came in one burst: they say nothing of the client */

enum gw_read_slot_state { GW_READ_SLOT_WAIT, GW_READ_SLOT_READY, GW_READ_SLOT_RETRY };

struct gw_read_slot {
    enum gw_read_slot_state state;
    struct gw_lo_slice slice;
    uint64_t pos;                   /* object offset of the slice */
    uint32_t tries;                 /* asks after the first */
    uint64_t asked_us;              /* when it was (last) asked for */
    uint64_t latency_us;            /* how long its answer took */
    struct event *retry;            /* armed in GW_READ_SLOT_RETRY */
    struct gw_read_pipeline_io io;  /* io.dst holds the slice once READY */
};

struct gw_read_pipeline {
    struct gw_read_pipeline_store store;
    struct gw_read_pipeline_sink sink;
    struct gw_read_pipeline_options opt;
    char okey[GW_KEYS_MAX];
    size_t okey_len;
    struct gw_lo_map map;
    uint64_t next;              /* object offset of the next slice to request */
    uint64_t end;               /* exclusive */
    uint64_t written;           /* bytes queued toward the client */
    uint64_t slice_len;         /* now: the window's, shorter when the budget is short */
    uint64_t high_water;        /* bytes queued toward the client that pause us */
    uint32_t prefetch;          /* slots: the most depth */
    struct gw_read_ahead ra;    /* the window: depth and slice (fixed or auto) */
    uint64_t delivered_us;      /* when slices were last written to the client */
    int window_limited;         /* the last requests stopped at the window */
    int autotune;               /* depth or slice auto: the window bounds the bytes
                                   ahead of the client (in flight, ready, queued) */
    struct gw_read_slot *slots;
    uint32_t head, count;
    uint64_t ring_bytes;        /* bytes of the slices in the ring */
    uint64_t reserved;          /* held from the budget (once admitted) */
    struct gw_read_budget_waiter waiter;
    int admitted;
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
    /* slice_len 0 / prefetch 0: auto (read_ahead.h) */
    CN_ASSERT(opt->retries == 0 || opt->base != NULL);
    CN_ASSERT(opt->budget == NULL || sink->refuse != NULL);
    struct gw_read_pipeline *p = cn_calloc(1, sizeof(*p));
    p->store = *store;
    p->sink = *sink;
    p->opt = *opt;
    memcpy(p->okey, okey, okey_len);
    p->okey_len = okey_len;
    p->map = *map;
    memset(map, 0, sizeof(*map));
    p->next = first;
    p->end = first + len;
    p->written = first;
    gw_read_ahead_init(&p->ra, opt->prefetch, opt->slice_len, UINT64_MAX);
    p->slice_len = p->ra.slice;
    p->prefetch = p->ra.max_depth;
    p->autotune = opt->prefetch == 0 || opt->slice_len == 0;
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
    for (uint32_t i = 0; i < p->prefetch; i++) {
        evbuffer_free(p->slots[i].io.dst);
        if (p->slots[i].retry != NULL)
            event_free(p->slots[i].retry);
    }
    if (p->opt.budget != NULL && p->admitted)
        gw_read_budget_leave(p->opt.budget, p->reserved);
    else if (p->opt.budget != NULL)
        gw_read_budget_cancel(p->opt.budget, &p->waiter);
    cn_free(p->slots);
    gw_lo_map_fini(&p->map);
    cn_free(p);
}

static void gw_read_pipeline_pump(struct gw_read_pipeline *p);

static uint64_t gw_read_pipeline_now(const struct gw_read_pipeline *p)
{
    return p->opt.clock_us != NULL ? p->opt.clock_us() : cn_time_mono_us();
}

static void gw_read_pipeline_issue(struct gw_read_pipeline *p, struct gw_read_slot *s);

/* The bytes an auto stream keeps ahead of its client (in flight, ready and
 * queued toward it beyond the one slice being sent): depth slices. */
static uint64_t gw_read_pipeline_window(const struct gw_read_pipeline *p)
{
    return (uint64_t)p->ra.depth * p->slice_len;
}

/* 1 when an auto stream's window has no room for len more bytes. One
 * slice queued toward the client does not count (as with fixed settings,
 * where one slice queued pauses requests): with 2 MiB slices at depth 2,
 * counting it left one slice in flight only after the client had taken
 * everything, and the client starved for a slice's latency each time. So
 * an auto stream holds at most (depth + 1) x slice. */
static int gw_read_pipeline_window_full(const struct gw_read_pipeline *p, uint64_t queued,
                                        uint64_t len)
{
    uint64_t beyond = queued > p->slice_len ? queued - p->slice_len : 0;
    return p->ring_bytes + beyond + len > gw_read_pipeline_window(p);
}

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

/* A slice's retry wait is over: ask again (the wait held the owner). */
static void gw_read_pipeline_on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_read_slot *s = arg;
    struct gw_read_pipeline *p = s->io.p;
    if (!p->sink.release(p->sink.ctx) || p->failed)
        return; /* the client is gone (p may be freed) or we gave up */
    gw_read_pipeline_issue(p, s);
}

/* A slice failed on every replica: 1 when it is worth asking again (a
 * timeout or a failed send, i.e. overload or a node restarting; not a
 * missing record or bad bytes) and tries are left; then the slot waits. */
static int gw_read_pipeline_retry(struct gw_read_pipeline *p, struct gw_read_slot *s)
{
    if ((s->io.rc != CN_TIMEOUT && s->io.rc != CN_IO) || s->tries >= p->opt.retries)
        return 0;
    int64_t ms = p->opt.retry_backoff_ms;
    for (uint32_t i = 0; i < s->tries && ms < GW_READ_RETRY_MAX_MS; i++)
        ms *= 2;
    ms = CN_MIN(ms, GW_READ_RETRY_MAX_MS);
    s->tries++;
    s->state = GW_READ_SLOT_RETRY;
    gw_lo_metrics_add(GW_LO_M_SLICE_REASKS, 1);
    if (s->retry == NULL)
        s->retry = evtimer_new(p->opt.base, gw_read_pipeline_on_retry, s);
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    p->sink.hold(p->sink.ctx);
    evtimer_add(s->retry, &tv);
    return 1;
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
        if (gw_read_pipeline_retry(p, s))
            return;
        char why[CN_ERR_LEN + 64];
        snprintf(why, sizeof(why), "%s (%s)%s", cn_rc_str(io->rc), io->err,
                 s->tries > 0 ? ", every retry failed too" : "");
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
    s->latency_us = gw_read_pipeline_now(p) - s->asked_us;
    gw_read_pipeline_pump(p);
}

/* Hands slot s's slice to the store (first ask or a retry). */
static void gw_read_pipeline_issue(struct gw_read_pipeline *p, struct gw_read_slot *s)
{
    s->state = GW_READ_SLOT_WAIT;
    gw_lo_metrics_add(GW_LO_M_SLICES_IN_FLIGHT, 1);
    s->asked_us = gw_read_pipeline_now(p);
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

/* Requests slice (at p->next) into the next free slot. */
static void gw_read_pipeline_request(struct gw_read_pipeline *p, const struct gw_lo_slice *slice)
{
    struct gw_read_slot *s = &p->slots[(p->head + p->count) % p->prefetch];
    p->count++;
    gw_lo_metrics_slice_requested(p->count);
    s->pos = p->next;
    s->slice = *slice;
    s->tries = 0;
    p->next += slice->len;
    p->ring_bytes += slice->len;
    gw_read_pipeline_issue(p, s);
}

/* With a budget: sets the slice length the budget allows now (shorter as
 * streams crowd in, longer again when it can reserve the larger base) and
 * gives back what the stream reserved beyond max(base, what it holds). */
static void gw_read_pipeline_budget_adjust(struct gw_read_pipeline *p, uint64_t queued)
{
    struct gw_read_budget *b = p->opt.budget;
    uint64_t want = gw_read_budget_slice(b, p->ra.slice);
    if (want > p->slice_len && 2 * want > p->reserved &&
        !gw_read_budget_take(b, 2 * want - p->reserved))
        want = p->slice_len; /* no room to grow the base: keep it */
    else if (want > p->slice_len && 2 * want > p->reserved)
        p->reserved = 2 * want;
    p->slice_len = want;
    p->high_water = CN_MIN(p->opt.output_high_water, p->slice_len);
    uint64_t keep = CN_MAX(2 * p->slice_len, p->ring_bytes + queued);
    if (p->reserved > keep) {
        gw_read_budget_give(b, p->reserved - keep);
        p->reserved = keep;
    }
}

/* With a budget: 1 when the stream may hold len more bytes (reserving
 * more when it must). Always 1 for the first slice in flight of a stream
 * below its high-water mark: its base covers it. */
static int gw_read_pipeline_budget_room(struct gw_read_pipeline *p, uint64_t queued, uint64_t len)
{
    uint64_t need = p->ring_bytes + queued + len;
    if (need <= p->reserved)
        return 1;
    if (!gw_read_budget_take(p->opt.budget, need - p->reserved))
        return 0;
    p->reserved = need;
    return 1;
}

/* Writes ready slices in order, then requests more unless the client's
 * output is above the high-water mark. */
static void gw_read_pipeline_pump(struct gw_read_pipeline *p)
{
    struct evbuffer *out = p->sink.body(p->sink.ctx);
    size_t before = evbuffer_get_length(out);
    uint64_t latency_us = 0;
    int delivered = 0;
    while (p->count > 0 && p->slots[p->head].state == GW_READ_SLOT_READY) {
        struct gw_read_slot *s = &p->slots[p->head];
        latency_us = CN_MAX(latency_us, s->latency_us);
        delivered++;
        size_t n = evbuffer_get_length(s->io.dst);
        p->written += n;
        p->ring_bytes -= n;
        evbuffer_add_buffer(out, s->io.dst);
        p->head = (p->head + 1) % p->prefetch;
        p->count--;
    }
    size_t queued = evbuffer_get_length(p->sink.body(p->sink.ctx));
    if (p->written == p->end) {
        CN_ASSERT(p->count == 0);
        if (p->opt.budget != NULL && queued > 0) {
            /* the budget counts these bytes until they are sent */
            p->sink.wait_drain(p->sink.ctx);
            return;
        }
        p->done = 1;
        p->sink.end(p->sink.ctx);
        return;
    }
    if (delivered > 0) {
        /* the window learns from the level the client left its output at
         * when these slices came: empty (it waited for us) or still at the
         * mark a while after the last delivery (it is the bottleneck; right
         * after one, in the same burst of answers, it had no time) */
        uint64_t now = gw_read_pipeline_now(p);
        /* the kernel's socket queue is the client's too: a slow client
         * whose kernel buffer still absorbed everything (several MiB,
         * autotuned) did not wait for us, and growing its window for it
         * only held more memory (8 readers at 20 MB/s: 51-61 MiB of RSS
         * instead of 33). A client that keeps up leaves the kernel nothing
         * unsent (on loopback a write goes straight to its receive queue
         * while that has room); less than the shortest slice counts as
         * nothing. */
        uint64_t unsent = p->sink.unsent != NULL ? p->sink.unsent(p->sink.ctx) : 0;
        const struct gw_read_ahead_obs obs = {
            .client_waited = before == 0 && unsent < GW_READ_AHEAD_MIN_SLICE,
            .window_limited = p->window_limited,
            .client_full = before + unsent >= gw_read_pipeline_window(p) / 2 &&
                           now - p->delivered_us >= GW_READ_BURST_US,
            .latency_us = latency_us,
            .slice_cap = p->opt.budget != NULL ? gw_read_budget_slice(p->opt.budget, UINT64_MAX)
                                               : 0,
        };
        p->delivered_us = now;
        gw_read_ahead_update(&p->ra, &obs);
    }
    if (p->opt.budget != NULL)
        gw_read_pipeline_budget_adjust(p, queued);
    else
        p->slice_len = p->ra.slice;
    /* fixed: one slice queued pauses requests; auto: the window does */
    p->high_water = p->autotune ? p->opt.output_high_water
                                : CN_MIN(p->opt.output_high_water, p->slice_len);
    if (queued >= p->high_water) {
        p->window_limited = 0;
        gw_lo_metrics_add(GW_LO_M_BACKPRESSURE_PAUSES, 1);
        p->sink.wait_drain(p->sink.ctx);
        return;
    }
    /* a store that fails at once calls abort() inside request() */
    int window_full = 0;
    while (p->count < p->ra.depth && p->next < p->end && !p->failed) {
        struct gw_lo_slice slice;
        gw_lo_map_slice(&p->map, p->next, p->end, p->slice_len, &slice);
        if (p->autotune && gw_read_pipeline_window_full(p, queued, slice.len)) {
            window_full = 1;
            break;
        }
        if (p->opt.budget != NULL && !gw_read_pipeline_budget_room(p, queued, slice.len))
            break; /* shallower for now: an answer or a drain pumps again */
        gw_read_pipeline_request(p, &slice);
    }
    p->window_limited = (window_full || p->count >= p->ra.depth) && p->next < p->end;
    if (p->count == 0 && p->next < p->end && !p->failed) {
        /* the window or the budget is full of bytes queued toward the
         * client (with nothing queued the base always has room): only its
         * draining can start the next slice */
        gw_lo_metrics_add(GW_LO_M_BACKPRESSURE_PAUSES, 1);
        p->sink.wait_drain(p->sink.ctx);
    }
}

/* The budget let the stream in (or refused it) after a wait. */
static void gw_read_pipeline_on_admit(struct gw_read_budget_waiter *w, int admitted)
{
    struct gw_read_pipeline *p = w->arg;
    if (!admitted) {
        p->sink.refuse(p->sink.ctx); /* may free p */
        return;
    }
    p->admitted = 1;
    p->reserved = 2 * w->slice;
    p->slice_len = w->slice;
    p->high_water = CN_MIN(p->opt.output_high_water, p->slice_len);
    if (p->sink.admit != NULL)
        p->sink.admit(p->sink.ctx);
    gw_read_pipeline_pump(p);
}

void gw_read_pipeline_start(struct gw_read_pipeline *p)
{
    if (p->opt.budget == NULL) {
        if (p->sink.admit != NULL)
            p->sink.admit(p->sink.ctx);
        gw_read_pipeline_pump(p);
        return;
    }
    if (gw_read_budget_enter(p->opt.budget, &p->waiter, p->ra.slice,
                             gw_read_pipeline_on_admit, p))
        gw_read_pipeline_on_admit(&p->waiter, 1);
}

void gw_read_pipeline_drained(struct gw_read_pipeline *p)
{
    if (!p->failed && !p->done && (p->admitted || p->opt.budget == NULL))
        gw_read_pipeline_pump(p);
}
