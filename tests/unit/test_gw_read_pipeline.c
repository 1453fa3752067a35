/* The large-object read pipeline (gateway/lo/read_pipeline.c) over a fake
 * store and a fake client: the test answers slice reads by hand, in any
 * order and at any time, and reads the client's output when it likes.
 * Cases: in-order delivery of answers that come back out of order, the
 * prefetch bound, a failed or wrong slice mid-stream, a slow client
 * (high-water mark), ranges across chunk and part boundaries, empty and
 * one-byte ranges, a client that goes away mid-stream, and a random soak.
 * Every payload is handed over by reference and counted back when freed;
 * the ASan build (tests/run.sh, CN_SANITIZE) shows what leaks. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/test.h"
#include "lo_map.h"
#include "read_budget.h"
#include "read_pipeline.h"

CN_TEST_GLOBALS;

#define FAKE_MAX_PENDING 512
#define FAKE_MAX_GETS 4096

/* The object's byte at offset pos: every byte of every chunk is known. */
static uint8_t obj_byte(uint64_t pos)
{
    return (uint8_t)((pos * 131u) ^ (pos >> 7) ^ (pos >> 15));
}

/* One read the fake store was asked for. */
struct fake_get {
    struct gw_read_pipeline_io *io;
    uint32_t seg, chunk;    /* which chunk the key named */
    uint64_t base;          /* object offset of that chunk */
    uint64_t chunk_size;
    uint64_t off, len;
};

/* The store: remembers each get until the test answers it. */
struct fake_store {
    const struct gw_lo_map *map;   /* the test's copy of the pipeline's map */
    const char *okey;
    size_t okey_len;
    struct fake_get pending[FAKE_MAX_PENDING];
    uint32_t n_pending;
    uint32_t max_pending;
    struct fake_get log[FAKE_MAX_GETS];
    uint32_t n_gets;
    int fail_at_once;              /* answer every get with CN_IO before returning */
    long payloads_out;             /* handed to the pipeline by reference */
    long payloads_freed;           /* ... and released by their evbuffer */
    uint64_t answered_bytes;       /* payload bytes handed over */
    int retrying;                  /* the pipeline retries: waits hold the client too */
    const void *last_payload;
    struct fake_client *client;    /* to check holds against reads in flight */
};

/* The client: its output, the response's end, and the request's holds. */
struct fake_client {
    struct evbuffer *out;          /* queued toward the client */
    struct evbuffer *sink;         /* where bytes go once it is gone */
    struct evbuffer *got;          /* what it read */
    struct gw_read_pipeline *p;    /* freed as the request would free it */
    int holds;
    int gone;                      /* the connection was reaped */
    int waiting;                   /* wait_drain() was called */
    int n_wait;
    int ended, aborted;
    int admitted, refused;         /* admit() (headers out) / refuse() (503) */
    char why[2048];
    struct fake_store *store;
    uint64_t kernel;               /* taken from out, not yet sent (sink.unsent) */
};

/* ---- the fake store ---------------------------------------------------- */

static void fake_payload_free(const void *data, size_t len, void *arg)
{
    (void)len;
    struct fake_store *fs = arg;
    fs->payloads_freed++;
    free((void *)data);
}

/* Finds the chunk that key names (what a node would look up). */
static int fake_find_chunk(const struct fake_store *fs, const char *key, size_t key_len,
                           struct fake_get *g)
{
    for (uint32_t s = 0; s < fs->map->n_segs; s++) {
        const struct gw_lo_seg *seg = &fs->map->segs[s];
        for (uint32_t c = 0; c < gw_lo_seg_chunks(seg); c++) {
            char k[GW_LO_KEY_MAX];
            size_t n = gw_lo_map_chunk_key(k, fs->okey, fs->okey_len, seg->ver, c);
            if (n == key_len && memcmp(k, key, n) == 0) {
                g->seg = s;
                g->chunk = c;
                g->base = fs->map->starts[s] + (uint64_t)c * seg->chunk_len;
                g->chunk_size = gw_lo_seg_chunk_size(seg, c);
                return 1;
            }
        }
    }
    return 0;
}

static void fake_store_get(void *ctx, struct gw_read_pipeline_io *io)
{
    struct fake_store *fs = ctx;
    struct fake_get g = {.io = io, .off = io->off, .len = io->len};
    CN_CHECK(fake_find_chunk(fs, io->key, io->key_len, &g));
    CN_CHECK(io->len > 0 && io->off + io->len <= g.chunk_size);
    CN_CHECK(io->rc == CN_OK && evbuffer_get_length(io->dst) == 0);
    if (fs->client != NULL && !fs->client->gone && !fs->retrying)
        CN_CHECK_EQ_INT(fs->client->holds, fs->n_pending + 1);
    if (fs->client != NULL && !fs->client->gone && fs->retrying) /* + retry waits */
        CN_CHECK(fs->client->holds >= (int)fs->n_pending + 1);
    CN_ASSERT(fs->n_gets < FAKE_MAX_GETS && fs->n_pending < FAKE_MAX_PENDING);
    fs->log[fs->n_gets++] = g;
    if (fs->fail_at_once) {
        io->rc = CN_IO;
        snprintf(io->err, sizeof(io->err), "no replica is up");
        gw_read_pipeline_io_done(io);
        return;
    }
    fs->pending[fs->n_pending++] = g;
    if (fs->n_pending > fs->max_pending)
        fs->max_pending = fs->n_pending;
}

enum fake_answer { FAKE_OK, FAKE_FAIL, FAKE_SHORT, FAKE_WRONG_SIZE, FAKE_TIMEOUT,
                   FAKE_NOTFOUND };

/* Answers pending read i (removed first: the answer may start new reads). */
static void fake_answer(struct fake_store *fs, uint32_t i, enum fake_answer how)
{
    CN_ASSERT(i < fs->n_pending);
    struct fake_get g = fs->pending[i];
    memmove(&fs->pending[i], &fs->pending[i + 1], (fs->n_pending - i - 1) * sizeof(g));
    fs->n_pending--;
    struct gw_read_pipeline_io *io = g.io;
    if (how == FAKE_FAIL || how == FAKE_TIMEOUT || how == FAKE_NOTFOUND) {
        io->rc = how == FAKE_FAIL ? CN_IO : how == FAKE_TIMEOUT ? CN_TIMEOUT : CN_NOTFOUND;
        snprintf(io->err, sizeof(io->err), "every replica failed");
        gw_read_pipeline_io_done(io);
        return;
    }
    uint64_t len = how == FAKE_SHORT ? g.len - 1 : g.len;
    uint8_t *data = malloc(len + 1);
    for (uint64_t k = 0; k < len; k++)
        data[k] = obj_byte(g.base + g.off + k);
    CN_ASSERT(evbuffer_add_reference(io->dst, data, len, fake_payload_free, fs) == 0);
    fs->payloads_out++;
    fs->answered_bytes += len;
    fs->last_payload = data;
    io->node = 2;
    io->record_size = how == FAKE_WRONG_SIZE ? g.chunk_size + 1 : g.chunk_size;
    gw_read_pipeline_io_done(io);
}

/* Answers every pending read, newest first (the worst order for the
 * client), until none is left or the request is over. */
static void fake_answer_all_reversed(struct fake_store *fs)
{
    while (fs->n_pending > 0)
        fake_answer(fs, fs->n_pending - 1, FAKE_OK);
}

/* ---- the fake client --------------------------------------------------- */

static void fake_client_free_pipeline(struct fake_client *c)
{
    gw_read_pipeline_free(c->p);
    c->p = NULL;
}

static uint64_t fake_sink_unsent(void *ctx)
{
    const struct fake_client *c = ctx;
    return c->kernel;
}

static struct evbuffer *fake_sink_body(void *ctx)
{
    struct fake_client *c = ctx;
    if (c->gone) { /* as gw_req_reply_body(): bytes for a gone client vanish */
        evbuffer_drain(c->sink, evbuffer_get_length(c->sink));
        return c->sink;
    }
    return c->out;
}

static void fake_sink_wait_drain(void *ctx)
{
    struct fake_client *c = ctx;
    c->waiting = 1;
    c->n_wait++;
}

/* The request is done: its state's free function frees the pipeline right here, as
 * gw_req_reply_end() does through the connection. */
static void fake_sink_end(void *ctx)
{
    struct fake_client *c = ctx;
    CN_CHECK_EQ_INT(c->holds, 0);
    c->ended++;
    fake_client_free_pipeline(c);
}

static void fake_sink_abort(void *ctx, const char *why)
{
    struct fake_client *c = ctx;
    c->aborted++;
    snprintf(c->why, sizeof(c->why), "%s", why);
}

static void fake_sink_admit(void *ctx)
{
    struct fake_client *c = ctx;
    c->admitted++;
}

/* As gw_lo_get's refuse: a 503 ends the request, which frees the pipeline. */
static void fake_sink_refuse(void *ctx)
{
    struct fake_client *c = ctx;
    CN_CHECK_EQ_INT(c->holds, 0);
    c->refused++;
    fake_client_free_pipeline(c);
}

static void fake_sink_hold(void *ctx)
{
    struct fake_client *c = ctx;
    c->holds++;
}

/* As gw_req_release(): the last hold of a gone client frees the request. */
static int fake_sink_release(void *ctx)
{
    struct fake_client *c = ctx;
    CN_ASSERT(c->holds > 0);
    c->holds--;
    if (!c->gone)
        return 1;
    if (c->holds == 0)
        fake_client_free_pipeline(c);
    return 0;
}

/* The connection is reaped (the client went away, or after an abort): the
 * request's memory goes with the last hold. */
static void fake_client_gone(struct fake_client *c)
{
    c->gone = 1;
    evbuffer_drain(c->out, evbuffer_get_length(c->out));
    if (c->holds == 0)
        fake_client_free_pipeline(c);
}

/* The client reads up to n bytes; when the output is empty and the
 * pipeline waits, the connection's drain callback runs. */
static void fake_client_read(struct fake_client *c, size_t n)
{
    evbuffer_remove_buffer(c->out, c->got, n);
    if (c->waiting && evbuffer_get_length(c->out) == 0 && c->p != NULL) {
        c->waiting = 0;
        gw_read_pipeline_drained(c->p);
    }
}

/* ---- a test's world ---------------------------------------------------- */

struct world {
    struct gw_lo_map map;          /* the test's copy */
    struct fake_store fs;
    struct fake_client c;
    uint64_t first, len;
};

#define OKEY "o/bkt/dir/large.bin"

/* Builds the maps and a pipeline over [first, first+len) with options opt
 * (not started). */
static void world_init_opt(struct world *w, const struct gw_lo_seg *segs, uint32_t n,
                           int multipart, uint64_t first, uint64_t len,
                           const struct gw_read_pipeline_options *opt)
{
    memset(w, 0, sizeof(*w));
    CN_ASSERT(gw_lo_map_init(&w->map, segs, n, multipart) == CN_OK);
    struct gw_lo_map moved;
    CN_ASSERT(gw_lo_map_init(&moved, segs, n, multipart) == CN_OK);
    w->fs.map = &w->map;
    w->fs.okey = OKEY;
    w->fs.okey_len = strlen(OKEY);
    w->fs.client = &w->c;
    w->c.out = evbuffer_new();
    w->c.sink = evbuffer_new();
    w->c.got = evbuffer_new();
    w->c.store = &w->fs;
    w->first = first;
    w->len = len;
    const struct gw_read_pipeline_store store = {.get = fake_store_get, .ctx = &w->fs};
    const struct gw_read_pipeline_sink sink = {
        .body = fake_sink_body, .unsent = fake_sink_unsent, .wait_drain = fake_sink_wait_drain, .end = fake_sink_end,
        .abort = fake_sink_abort, .hold = fake_sink_hold, .release = fake_sink_release,
        .admit = fake_sink_admit, .refuse = fake_sink_refuse, .ctx = &w->c,
    };
    w->c.p = gw_read_pipeline_new(&store, &sink, opt, OKEY, strlen(OKEY), &moved, first, len);
    CN_CHECK(moved.segs == NULL && moved.n_segs == 0); /* moved in */
}

/* Builds the maps and a pipeline over [first, first+len) (not started). */
static void world_init(struct world *w, const struct gw_lo_seg *segs, uint32_t n, int multipart,
                       uint64_t first, uint64_t len, uint64_t slice_len, uint32_t prefetch,
                       uint64_t high_water)
{
    const struct gw_read_pipeline_options opt = {
        .slice_len = slice_len, .prefetch = prefetch, .output_high_water = high_water,
    };
    world_init_opt(w, segs, n, multipart, first, len, &opt);
}

/* Checks that the client read exactly the range's bytes. */
static void world_check_bytes(struct world *w)
{
    CN_CHECK_EQ_INT(evbuffer_get_length(w->c.got), w->len);
    size_t n = evbuffer_get_length(w->c.got);
    const uint8_t *b = evbuffer_pullup(w->c.got, -1);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += b[i] != obj_byte(w->first + i);
    CN_CHECK_EQ_INT(bad, 0);
}

/* Everything the pipeline was handed is released, and it is freed. */
static void world_fini(struct world *w)
{
    CN_CHECK(w->c.p == NULL);
    if (w->c.p != NULL) { /* a failed case: free it anyway, the leak is not the point */
        while (w->fs.n_pending > 0)
            fake_answer(&w->fs, 0, FAKE_FAIL);
        gw_read_pipeline_free(w->c.p);
        w->c.p = NULL;
    }
    evbuffer_free(w->c.out);
    evbuffer_free(w->c.sink);
    evbuffer_free(w->c.got);
    CN_CHECK_EQ_INT(w->fs.payloads_freed, w->fs.payloads_out);
    CN_CHECK_EQ_INT(w->c.holds, 0);
    gw_lo_map_fini(&w->map);
}

/* Drives a started pipeline to its end: answers in reverse order, the
 * client reading everything whenever nothing is in flight. */
static void world_run_reversed(struct world *w)
{
    for (int guard = 0; w->c.p != NULL && guard < 100000; guard++) {
        if (w->fs.n_pending > 0)
            fake_answer_all_reversed(&w->fs);
        else
            fake_client_read(&w->c, SIZE_MAX);
    }
    fake_client_read(&w->c, SIZE_MAX);
}

/* ---- cases ------------------------------------------------------------- */

/* Answers that come back newest first are held until the oldest arrives,
 * then written in object order, by reference (the bytes the client gets
 * are the store's own). */
static void test_in_order(void)
{
    const struct gw_lo_seg seg = {0x11, 5500, 1000};
    struct world w;
    world_init(&w, &seg, 1, 0, 0, 5500, 400, 4, 1 << 20);
    gw_read_pipeline_start(w.c.p);
    CN_CHECK_EQ_INT(w.fs.n_pending, 4);
    /* slices stop at chunk boundaries: [0,400) [400,800) [800,1000) [1000,1400) */
    CN_CHECK(w.fs.pending[2].chunk == 0 && w.fs.pending[2].off == 800 &&
             w.fs.pending[2].len == 200);
    CN_CHECK(w.fs.pending[3].chunk == 1 && w.fs.pending[3].off == 0);
    fake_answer(&w.fs, 3, FAKE_OK);
    fake_answer(&w.fs, 1, FAKE_OK);
    fake_answer(&w.fs, 1, FAKE_OK);
    CN_CHECK_EQ_INT(evbuffer_get_length(w.c.out), 0); /* the oldest is late */
    CN_CHECK_EQ_INT(w.fs.n_pending, 1);
    const void *first_payload = NULL;
    fake_answer(&w.fs, 0, FAKE_OK);
    first_payload = w.fs.last_payload;
    CN_CHECK_EQ_INT(evbuffer_get_length(w.c.out), 1400);
    struct evbuffer_iovec v;
    CN_CHECK(evbuffer_peek(w.c.out, -1, NULL, &v, 1) >= 1 && v.iov_base == first_payload);
    /* 1400 bytes queued is above the high-water mark: nothing new asked */
    CN_CHECK_EQ_INT(w.fs.n_pending, 0);
    CN_CHECK(w.c.waiting);
    world_run_reversed(&w);
    CN_CHECK_EQ_INT(w.c.ended, 1);
    CN_CHECK_EQ_INT(w.c.aborted, 0);
    world_check_bytes(&w);
    world_fini(&w);
}

/* However answers interleave, no more than `prefetch` reads are in flight,
 * and with a client that keeps up the pipeline fills all of them. */
static void test_prefetch_bound(void)
{
    static const uint32_t depths[] = {1, 2, 3, 4, 7, 16};
    const struct gw_lo_seg seg = {0x22, 20000, 1500};
    srand(7);
    for (size_t d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
        struct world w;
        world_init(&w, &seg, 1, 0, 123, 19000, 256, depths[d], 1 << 20);
        gw_read_pipeline_start(w.c.p);
        for (int guard = 0; w.c.p != NULL && guard < 100000; guard++) {
            CN_CHECK(w.fs.n_pending <= depths[d]);
            if (w.fs.n_pending > 0)
                fake_answer(&w.fs, (uint32_t)rand() % w.fs.n_pending, FAKE_OK);
            else
                fake_client_read(&w.c, SIZE_MAX);
        }
        fake_client_read(&w.c, SIZE_MAX);
        CN_CHECK_EQ_INT(w.fs.max_pending, depths[d]);
        CN_CHECK_EQ_INT(w.c.ended, 1);
        world_check_bytes(&w);
        world_fini(&w);
    }
}

/* A slice that every replica failed (the store retried them) cuts the
 * response short once: nothing more is asked, the answers still in flight
 * are dropped, and the request frees the pipeline when the last one is in.
 * A wrong-length answer and a wrong record size are failures too, and so
 * is a store that fails before get() returns. */
static void test_slice_failure(void)
{
    static const enum fake_answer kinds[] = {FAKE_FAIL, FAKE_SHORT, FAKE_WRONG_SIZE};
    static const char *const whys[] = {"every replica failed", "returned 799 bytes",
                                       "of a 1001-byte record"};
    const struct gw_lo_seg segs[] = {{0x31, 2000, 1000}, {0x32, 3000, 1000}};
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        struct world w;
        world_init(&w, segs, 2, 1, 0, 5000, 800, 4, 1 << 20);
        gw_read_pipeline_start(w.c.p);
        fake_answer(&w.fs, 0, FAKE_OK);
        fake_client_read(&w.c, SIZE_MAX);
        uint32_t gets = w.fs.n_gets;
        /* in flight: [800,1000) [1000,1800) [1800,2000) and part 2's [2000,2800) */
        CN_CHECK(w.fs.n_pending == 4 && w.fs.pending[3].seg == 1);
        fake_answer(&w.fs, 3, kinds[k]);
        CN_CHECK_EQ_INT(w.c.aborted, 1);
        CN_CHECK(strstr(w.c.why, whys[k]) != NULL);
        CN_CHECK(strstr(w.c.why, "GET bkt/dir/large.bin aborted at byte 2000") != NULL);
        CN_CHECK(strstr(w.c.why, "(part 2)") != NULL);
        /* an answer before the connection is reaped is ignored */
        size_t queued = evbuffer_get_length(w.c.out);
        fake_answer(&w.fs, 0, FAKE_OK);
        CN_CHECK_EQ_INT(evbuffer_get_length(w.c.out), queued);
        fake_client_gone(&w.c);
        CN_CHECK(w.c.p != NULL); /* reads still in flight hold it */
        while (w.fs.n_pending > 0)
            fake_answer(&w.fs, 0, FAKE_OK);
        CN_CHECK_EQ_INT(w.fs.n_gets, gets);
        CN_CHECK_EQ_INT(w.c.aborted, 1);
        CN_CHECK_EQ_INT(w.c.ended, 0);
        world_fini(&w);
    }
    struct world w;
    world_init(&w, segs, 2, 1, 0, 5000, 800, 4, 1 << 20);
    w.fs.fail_at_once = 1;
    gw_read_pipeline_start(w.c.p);
    CN_CHECK_EQ_INT(w.fs.n_gets, 1);
    CN_CHECK_EQ_INT(w.c.aborted, 1);
    CN_CHECK(strstr(w.c.why, "no replica is up") != NULL);
    fake_client_gone(&w.c);
    world_fini(&w);
}

/* A client slower than the nodes: once a slice length (or the configured
 * high-water mark, when lower) is queued, no read starts until the
 * connection reports its output drained. */
static void test_slow_client(void)
{
    const struct gw_lo_seg seg = {0x41, 4000, 1000};
    struct world w;
    world_init(&w, &seg, 1, 0, 0, 4000, 100, 4, 1 << 20);
    gw_read_pipeline_start(w.c.p);
    CN_CHECK_EQ_INT(w.fs.n_gets, 4);
    fake_answer(&w.fs, 0, FAKE_OK);
    /* 100 bytes queued: at the mark, so no refill */
    CN_CHECK_EQ_INT(w.fs.n_gets, 4);
    CN_CHECK(w.c.waiting);
    fake_answer_all_reversed(&w.fs);
    CN_CHECK_EQ_INT(evbuffer_get_length(w.c.out), 400);
    CN_CHECK_EQ_INT(w.fs.n_gets, 4);
    /* the client reads a little: still above the mark */
    evbuffer_remove_buffer(w.c.out, w.c.got, 250);
    int waits = w.c.n_wait;
    gw_read_pipeline_drained(w.c.p);
    CN_CHECK_EQ_INT(w.fs.n_gets, 4);
    CN_CHECK_EQ_INT(w.c.n_wait, waits + 1); /* asked to be called again */
    fake_client_read(&w.c, SIZE_MAX);
    CN_CHECK_EQ_INT(w.fs.n_gets, 8);
    CN_CHECK_EQ_INT(w.fs.n_pending, 4);
    world_run_reversed(&w);
    CN_CHECK_EQ_INT(w.c.ended, 1);
    world_check_bytes(&w);
    world_fini(&w);

    /* http.output_high_water below a slice: it is the mark (the first
     * slice, [600, 1000), is shorter than a slice but above it) */
    world_init(&w, &seg, 1, 0, 600, 3400, 500, 4, 300);
    gw_read_pipeline_start(w.c.p);
    CN_CHECK_EQ_INT(w.fs.n_gets, 4);
    fake_answer(&w.fs, 0, FAKE_OK);
    CN_CHECK_EQ_INT(evbuffer_get_length(w.c.out), 400);
    CN_CHECK(w.c.waiting && w.fs.n_gets == 4);
    world_run_reversed(&w);
    CN_CHECK_EQ_INT(w.c.ended, 1);
    world_check_bytes(&w);
    world_fini(&w);
}

/* A range over uneven parts (an empty one, a 7-byte one, a 1-byte one)
 * is read chunk by chunk: each read names the right chunk of the right
 * part, never crosses its end, and the bytes come out in object order. */
static void test_boundaries(void)
{
    const struct gw_lo_seg segs[] = {
        {0x51, 2500, 1000}, {0x52, 0, 1000}, {0x53, 7, 1000}, {0x54, 3000, 1024}, {0x55, 1, 1},
    };
    /* [2400, 2510): the end of part 1, all of part 3, the start of part 4 */
    struct world w;
    world_init(&w, segs, 5, 1, 2400, 110, 4096, 8, 1 << 20);
    gw_read_pipeline_start(w.c.p);
    CN_CHECK_EQ_INT(w.fs.n_gets, 3);
    CN_CHECK(w.fs.log[0].seg == 0 && w.fs.log[0].chunk == 2 && w.fs.log[0].off == 400 &&
             w.fs.log[0].len == 100);
    CN_CHECK(w.fs.log[1].seg == 2 && w.fs.log[1].chunk == 0 && w.fs.log[1].off == 0 &&
             w.fs.log[1].len == 7);
    CN_CHECK(w.fs.log[2].seg == 3 && w.fs.log[2].chunk == 0 && w.fs.log[2].off == 0 &&
             w.fs.log[2].len == 3);
    world_run_reversed(&w);
    CN_CHECK_EQ_INT(w.c.ended, 1);
    world_check_bytes(&w);
    world_fini(&w);

    /* the whole object in 600-byte slices: every read stays in its chunk
     * and the reads tile the object */
    world_init(&w, segs, 5, 1, 0, 2500 + 7 + 3000 + 1, 600, 3, 1 << 20);
    gw_read_pipeline_start(w.c.p);
    world_run_reversed(&w);
    CN_CHECK_EQ_INT(w.c.ended, 1);
    uint64_t pos = 0;
    for (uint32_t i = 0; i < w.fs.n_gets; i++) {
        const struct fake_get *g = &w.fs.log[i];
        CN_CHECK(g->seg != 1);
        CN_CHECK(g->len <= 600 && g->off + g->len <= g->chunk_size);
        CN_CHECK_EQ_INT(g->base + g->off, pos);
        pos += g->len;
    }
    CN_CHECK_EQ_INT(pos, w.map.size);
    world_check_bytes(&w);
    world_fini(&w);
}

/* An empty range ends at once without a read; a one-byte range is one
 * one-byte read (at a chunk's first byte and at the object's last). */
static void test_tiny_ranges(void)
{
    const struct gw_lo_seg segs[] = {{0x61, 3000, 1000}, {0x62, 1, 1}};
    struct world w;
    world_init(&w, segs, 2, 1, 1000, 0, 512, 4, 1 << 20);
    gw_read_pipeline_start(w.c.p);
    CN_CHECK_EQ_INT(w.c.ended, 1);
    CN_CHECK_EQ_INT(w.fs.n_gets, 0);
    world_fini(&w);

    static const uint64_t at[] = {0, 1000, 2999, 3000};
    for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
        world_init(&w, segs, 2, 1, at[i], 1, 512, 4, 1 << 20);
        gw_read_pipeline_start(w.c.p);
        CN_CHECK_EQ_INT(w.fs.n_gets, 1);
        CN_CHECK_EQ_INT(w.fs.pending[0].len, 1);
        fake_answer(&w.fs, 0, FAKE_OK);
        CN_CHECK_EQ_INT(w.c.ended, 1);
        fake_client_read(&w.c, SIZE_MAX);
        world_check_bytes(&w);
        world_fini(&w);
    }
}

/* The client goes away mid-stream: with reads in flight (answered OK or
 * failed afterwards, in any order) the last answer frees the pipeline;
 * with none in flight (it waited for a drain) the reap frees it. Nothing
 * is written, ended or aborted after. */
static void test_client_gone(void)
{
    const struct gw_lo_seg segs[] = {{0x71, 3000, 1000}, {0x72, 3000, 1000}};
    struct world w;
    world_init(&w, segs, 2, 1, 0, 6000, 700, 4, 1 << 20);
    gw_read_pipeline_start(w.c.p);
    fake_answer(&w.fs, 0, FAKE_OK);
    fake_client_read(&w.c, 10); /* partway through */
    CN_CHECK_EQ_INT(w.fs.n_pending, 3);
    fake_client_gone(&w.c);
    uint32_t gets = w.fs.n_gets;
    fake_answer(&w.fs, 1, FAKE_OK);
    fake_answer(&w.fs, 1, FAKE_FAIL);
    CN_CHECK(w.c.p != NULL);
    fake_answer(&w.fs, 0, FAKE_OK);
    CN_CHECK(w.c.p == NULL);
    CN_CHECK_EQ_INT(w.fs.n_gets, gets);
    CN_CHECK_EQ_INT(w.c.ended + w.c.aborted, 0);
    world_fini(&w);

    world_init(&w, segs, 2, 1, 0, 6000, 700, 4, 1 << 20);
    gw_read_pipeline_start(w.c.p);
    fake_answer_all_reversed(&w.fs);
    CN_CHECK(w.c.waiting && w.fs.n_pending == 0);
    fake_client_gone(&w.c);
    CN_CHECK(w.c.p == NULL);
    CN_CHECK_EQ_INT(w.c.ended + w.c.aborted, 0);
    world_fini(&w);
}

/* Random parts, ranges, slice lengths, depths, answer orders and client
 * reads: the client always gets exactly its range. */
static void test_random_soak(void)
{
    srand(42);
    for (int iter = 0; iter < 300; iter++) {
        struct gw_lo_seg segs[6];
        uint32_t n = 1 + (uint32_t)rand() % 6;
        uint64_t size = 0;
        for (uint32_t i = 0; i < n; i++) {
            segs[i].ver = 0x1000 + i;
            segs[i].size = (uint64_t)(rand() % 4) == 0 ? (uint64_t)rand() % 3
                                                        : (uint64_t)rand() % 5000;
            segs[i].chunk_len = 1 + (uint32_t)rand() % 1200;
            size += segs[i].size;
        }
        if (size == 0)
            continue;
        uint64_t first = (uint64_t)rand() % size;
        uint64_t len = (uint64_t)rand() % (size - first + 1);
        uint64_t slice = 1 + (uint64_t)rand() % 900;
        uint32_t depth = 1 + (uint32_t)rand() % 6;
        uint64_t hw = 1 + (uint64_t)rand() % 3000;
        struct world w;
        world_init(&w, segs, n, n > 1, first, len, slice, depth, hw);
        gw_read_pipeline_start(w.c.p);
        for (int guard = 0; w.c.p != NULL && guard < 1000000; guard++) {
            CN_CHECK(w.fs.n_pending <= depth);
            if (w.fs.n_pending > 0 && rand() % 3 != 0)
                fake_answer(&w.fs, (uint32_t)rand() % w.fs.n_pending, FAKE_OK);
            else
                fake_client_read(&w.c, 1 + (size_t)rand() % 2000);
        }
        fake_client_read(&w.c, SIZE_MAX);
        CN_CHECK_EQ_INT(w.c.ended, 1);
        world_check_bytes(&w);
        world_fini(&w);
    }
}

/* ---- the read-ahead budget and retries ---------------------------------- */

/* The test's clock: it moves only when a test moves it. */
static uint64_t fake_now = 1000000;

static uint64_t fake_clock(void)
{
    return fake_now;
}


/* Bytes a world holds: answers handed over that its client has not read
 * (ready slices and the client's output) plus the reads in flight. */
static uint64_t world_held(const struct world *w)
{
    uint64_t n = w->fs.answered_bytes - evbuffer_get_length(w->c.got);
    for (uint32_t i = 0; i < w->fs.n_pending; i++)
        n += w->fs.pending[i].len;
    return n;
}

static void loop_run(struct event_base *base)
{
    for (int i = 0; i < 4; i++)
        event_base_loop(base, EVLOOP_NONBLOCK);
}

/* Six streams share a budget with room for four bases: four start at once
 * (their headers go out), two wait without reading anything, and get in as
 * the first ones end; at every step the streams together hold no more than
 * the budget counts, and the budget no more than its cap. The client reads
 * slowly and in pieces, answers come in any order, and every stream gets
 * its bytes. A stream ends only once its output is sent. */
static void budget_shared(uint64_t slice_len, uint32_t prefetch)
{
    enum { N = 6 };
    struct event_base *base = event_base_new();
    struct gw_read_budget *b = gw_read_budget_new(base, 512 * 1024, 60000);
    const struct gw_lo_seg seg = {0x81, 700000, 300000};
    struct gw_read_pipeline_options opt = {
        .slice_len = slice_len, .prefetch = prefetch, .output_high_water = 1 << 20,
        .budget = b, .clock_us = fake_clock,
    };
    static struct world w[N];
    for (int i = 0; i < N; i++) {
        world_init_opt(&w[i], &seg, 1, 0, (uint64_t)i * 1000, 600000, &opt);
        gw_read_pipeline_start(w[i].c.p);
    }
    int started = 0;
    for (int i = 0; i < N; i++) {
        started += w[i].c.admitted;
        if (!w[i].c.admitted)
            CN_CHECK_EQ_INT(w[i].fs.n_gets, 0);
    }
    /* 128 KiB slices for the first, 64 KiB bases for the next: two fit
     * beside the first one's read-ahead, which leaves a quarter free */
    CN_CHECK(started >= 1 && started < N);
    CN_CHECK_EQ_INT(gw_read_budget_waiting(b), N - started);
    srand(11);
    int live = N;
    for (int guard = 0; live > 0 && guard < 2000000; guard++) {
        struct world *x = &w[rand() % N];
        if (x->c.p == NULL)
            continue;
        if (x->fs.n_pending > 0 && rand() % 2)
            fake_answer(&x->fs, (uint32_t)rand() % x->fs.n_pending, FAKE_OK);
        else
            fake_client_read(&x->c, 1 + (size_t)rand() % 100000);
        if (x->c.p == NULL)
            live--;
        if (guard % 64 == 0)
            loop_run(base);
        uint64_t held = 0;
        for (int i = 0; i < N; i++)
            held += world_held(&w[i]);
        CN_CHECK(held <= gw_read_budget_used(b));
        CN_CHECK(gw_read_budget_used(b) <= gw_read_budget_cap(b));
        if (live > 0 && guard % 1000 == 999)
            loop_run(base);
    }
    for (int i = 0; i < N; i++) {
        CN_CHECK_EQ_INT(w[i].c.admitted, 1);
        CN_CHECK_EQ_INT(w[i].c.ended, 1);
        CN_CHECK_EQ_INT(evbuffer_get_length(w[i].c.out), 0); /* sent before the end */
        world_check_bytes(&w[i]);
        world_fini(&w[i]);
    }
    CN_CHECK_EQ_INT(gw_read_budget_used(b), 0);
    CN_CHECK_EQ_INT(gw_read_budget_streams(b), 0);
    gw_read_budget_free(b);
    event_base_free(base);
}

/* ... with fixed settings, and with auto depth and slice (whose window may
 * queue more than a slice toward the client: a stream the budget stops
 * with nothing in flight waits for its output to drain, never stalls). */
static void test_budget_shared(void)
{
    budget_shared(128 * 1024, 4);
    budget_shared(0, 0);
}

/* A stream that finds no room waits with nothing sent or read, and past
 * the budget's max wait is refused (the owner answers 503 and frees it);
 * one whose client goes away while it waits leaves the queue. */
static void test_budget_refused(void)
{
    struct event_base *base = event_base_new();
    struct gw_read_budget *b = gw_read_budget_new(base, 128 * 1024, 20); /* one base */
    const struct gw_lo_seg seg = {0x91, 400000, 200000};
    struct gw_read_pipeline_options opt = {
        .slice_len = 128 * 1024, .prefetch = 2, .output_high_water = 1 << 20, .budget = b,
    };
    struct world a, late, gone;
    world_init_opt(&a, &seg, 1, 0, 0, 400000, &opt);
    gw_read_pipeline_start(a.c.p);
    CN_CHECK_EQ_INT(a.c.admitted, 1);
    world_init_opt(&late, &seg, 1, 0, 0, 400000, &opt);
    gw_read_pipeline_start(late.c.p);
    world_init_opt(&gone, &seg, 1, 0, 0, 400000, &opt);
    gw_read_pipeline_start(gone.c.p);
    CN_CHECK_EQ_INT(late.c.admitted + gone.c.admitted, 0);
    CN_CHECK_EQ_INT(gw_read_budget_waiting(b), 2);
    fake_client_gone(&gone.c); /* no hold while waiting: freed now */
    CN_CHECK(gone.c.p == NULL);
    CN_CHECK_EQ_INT(gw_read_budget_waiting(b), 1);
    event_base_dispatch(base); /* the deadline */
    CN_CHECK_EQ_INT(late.c.refused, 1);
    CN_CHECK_EQ_INT(late.c.admitted + late.fs.n_gets + late.c.ended + late.c.aborted, 0);
    CN_CHECK(late.c.p == NULL);
    world_run_reversed(&a);
    CN_CHECK_EQ_INT(a.c.ended, 1);
    world_check_bytes(&a);
    world_fini(&a);
    world_fini(&late);
    world_fini(&gone);
    CN_CHECK_EQ_INT(gw_read_budget_used(b), 0);
    gw_read_budget_free(b);
    event_base_free(base);
}

/* A slice that timed out (or could not be sent) is asked again after a
 * backoff, holding the owner while it waits, and the stream goes on; one
 * that keeps failing past read_retries cuts the response; a missing record
 * is not retried. The client that goes away during a retry wait frees the
 * pipeline when the wait ends. */
static void test_retry(void)
{
    struct event_base *base = event_base_new();
    const struct gw_lo_seg seg = {0xa1, 5000, 1000};
    struct gw_read_pipeline_options opt = {
        .slice_len = 500, .prefetch = 3, .output_high_water = 1 << 20, .base = base,
        .retries = 2, .retry_backoff_ms = 1,
    };
    struct world w;
    world_init_opt(&w, &seg, 1, 0, 0, 5000, &opt);
    w.fs.retrying = 1;
    gw_read_pipeline_start(w.c.p);
    fake_answer(&w.fs, 1, FAKE_TIMEOUT);
    fake_answer(&w.fs, 0, FAKE_FAIL);
    CN_CHECK_EQ_INT(w.c.aborted, 0);
    CN_CHECK_EQ_INT(w.c.holds, 3);  /* one read in flight, two waits */
    uint32_t gets = w.fs.n_gets;
    event_base_dispatch(base);      /* both waits end: asked again */
    CN_CHECK_EQ_INT(w.fs.n_gets, gets + 2);
    CN_CHECK(w.fs.log[gets].off == 500 || w.fs.log[gets].off == 0);
    fake_answer(&w.fs, 0, FAKE_TIMEOUT); /* a second failure of the same slice */
    event_base_dispatch(base);
    world_run_reversed(&w);
    CN_CHECK_EQ_INT(w.c.aborted, 0);
    CN_CHECK_EQ_INT(w.c.ended, 1);
    world_check_bytes(&w);
    world_fini(&w);

    /* three timeouts of one slice with two retries: cut, and said so */
    world_init_opt(&w, &seg, 1, 0, 0, 5000, &opt);
    w.fs.retrying = 1;
    gw_read_pipeline_start(w.c.p);
    for (int k = 0; k < 3; k++) {
        for (uint32_t i = 0; i < w.fs.n_pending; i++)
            if (w.fs.pending[i].off == 0 && w.fs.pending[i].chunk == 0) {
                fake_answer(&w.fs, i, FAKE_TIMEOUT);
                break;
            }
        event_base_dispatch(base);
    }
    CN_CHECK_EQ_INT(w.c.aborted, 1);
    CN_CHECK(strstr(w.c.why, "every retry failed too") != NULL);
    fake_client_gone(&w.c);
    while (w.fs.n_pending > 0)
        fake_answer(&w.fs, 0, FAKE_OK);
    world_fini(&w);

    /* not found: no retry */
    world_init_opt(&w, &seg, 1, 0, 0, 5000, &opt);
    gw_read_pipeline_start(w.c.p);
    gets = w.fs.n_gets;
    fake_answer(&w.fs, 0, FAKE_NOTFOUND);
    CN_CHECK_EQ_INT(w.c.aborted, 1);
    fake_client_gone(&w.c);
    while (w.fs.n_pending > 0)
        fake_answer(&w.fs, 0, FAKE_OK);
    event_base_dispatch(base);
    CN_CHECK_EQ_INT(w.fs.n_gets, gets);
    world_fini(&w);

    /* the client goes away during a retry wait */
    world_init_opt(&w, &seg, 1, 0, 0, 5000, &opt);
    w.fs.retrying = 1;
    gw_read_pipeline_start(w.c.p);
    fake_answer(&w.fs, 0, FAKE_TIMEOUT);
    fake_client_gone(&w.c);
    while (w.fs.n_pending > 0)
        fake_answer(&w.fs, 0, FAKE_OK);
    CN_CHECK(w.c.p != NULL);  /* the wait holds it */
    gets = w.fs.n_gets;
    event_base_dispatch(base);
    CN_CHECK(w.c.p == NULL);
    CN_CHECK_EQ_INT(w.fs.n_gets, gets);
    world_fini(&w);
    event_base_free(base);
}

/* ---- auto read-ahead ----------------------------------------------------- */

/* A client that reads everything as soon as it arrives and nodes that
 * answer at once:
 * the stream (depth and slice auto) lengthens its slices to 2 MiB before
 * it deepens, and settles at two of them (its 4 MiB window, which counts
 * the slice queued toward the client): one in flight while the client
 * takes the other, not 8 x 512 KiB (four times the slice requests per
 * byte); every byte arrives. */
static void test_auto_fast_client(void)
{
    const struct gw_lo_seg seg = {0xb1, 40 << 20, 4 << 20};
    const struct gw_read_pipeline_options opt = {
        .output_high_water = 4 << 20, .clock_us = fake_clock,
    };
    struct world w;
    world_init_opt(&w, &seg, 1, 0, 0, 40 << 20, &opt);
    gw_read_pipeline_start(w.c.p);
    CN_CHECK_EQ_INT(w.fs.n_pending, 2);                 /* it starts at 2 */
    CN_CHECK_EQ_INT(w.fs.pending[0].len, 512 * 1024);
    for (int guard = 0; w.c.p != NULL && guard < 100000; guard++) {
        /* each answer finds the client done with everything before it */
        if (w.fs.n_pending > 0)
            fake_answer(&w.fs, 0, FAKE_OK);
        fake_client_read(&w.c, SIZE_MAX);
    }
    uint64_t longest = 0;
    for (uint32_t i = 0; i < w.fs.n_gets; i++)
        longest = w.fs.log[i].len > longest ? w.fs.log[i].len : longest;
    CN_CHECK(w.fs.max_pending >= 1 && w.fs.max_pending <= 2); /* the window counts the slice queued */
    CN_CHECK_EQ_INT(longest, 2048 * 1024);
    /* it got there within the first few slices: all but the first few
     * of the 40 MiB came in 2 MiB slices */
    CN_CHECK(w.fs.n_gets <= 20 + 4);
    CN_CHECK_EQ_INT(w.c.ended, 1);
    world_check_bytes(&w);
    world_fini(&w);
}

/* An auto stream at 2 x 2 MiB whose client stops reading: one slice
 * queued toward the client does not count against the window, so two
 * slices stay in flight while it is sent (counting it left one in flight
 * only once the client had taken everything: the client starved for a
 * slice's latency at each one); a second slice queued does count, so the
 * stream never holds more than (depth + 1) x slice = 6 MiB. */
static void test_auto_one_slice_queued(void)
{
    const struct gw_lo_seg seg = {0xb3, 40 << 20, 4 << 20};
    const struct gw_read_pipeline_options opt = {
        .output_high_water = 8 << 20, .clock_us = fake_clock,
    };
    struct world w;
    world_init_opt(&w, &seg, 1, 0, 0, 40 << 20, &opt);
    gw_read_pipeline_start(w.c.p);
    for (int i = 0; i < 6; i++) { /* a fast client: 2 x 2 MiB */
        fake_answer(&w.fs, 0, FAKE_OK);
        fake_client_read(&w.c, SIZE_MAX);
    }
    CN_CHECK_EQ_INT(w.fs.n_pending, 2);
    CN_CHECK_EQ_INT(w.fs.pending[0].len, 2 << 20);
    CN_CHECK_EQ_INT(w.fs.pending[1].len, 2 << 20);
    fake_answer(&w.fs, 0, FAKE_OK);          /* the client reads nothing now */
    CN_CHECK_EQ_INT(evbuffer_get_length(w.c.out), 2 << 20);
    CN_CHECK_EQ_INT(w.fs.n_pending, 2);      /* one queued, two in flight */
    uint64_t most_ahead = 0;
    for (int guard = 0; w.fs.n_pending > 0 && guard < 100; guard++) {
        fake_answer(&w.fs, 0, FAKE_OK);
        uint64_t ahead = evbuffer_get_length(w.c.out);
        for (uint32_t i = 0; i < w.fs.n_pending; i++)
            ahead += w.fs.pending[i].len;
        most_ahead = ahead > most_ahead ? ahead : most_ahead;
    }
    CN_CHECK_EQ_INT(most_ahead, 6 << 20);
    CN_CHECK_EQ_INT(evbuffer_get_length(w.c.out), 6 << 20); /* and it stopped there */
    for (int guard = 0; w.c.p != NULL && guard < 100000; guard++) {
        fake_client_read(&w.c, SIZE_MAX);
        if (w.fs.n_pending > 0)
            fake_answer(&w.fs, 0, FAKE_OK);
    }
    fake_client_read(&w.c, SIZE_MAX);
    CN_CHECK_EQ_INT(w.c.ended, 1);
    world_check_bytes(&w);
    world_fini(&w);
}

/* A client slower than the nodes (it reads 64 KiB between two answers,
 * which come 5 ms apart): answers find half the window still queued, so
 * the slice halves down to 128 KiB at depth 2; the window then settles
 * where the client neither waits long nor has much queued — between one
 * and two 128 KiB slices ahead (at one, the client empties its output
 * before the next slice comes, so it grows; at two, it shrinks) — far
 * below the 2 x 2 MiB a fast client's window reaches (growing the depth
 * first kept 512 KiB slices and up to 1 MiB ahead); every byte arrives. */
static void test_auto_slow_client(void)
{
    const struct gw_lo_seg seg = {0xb2, 24 << 20, 4 << 20};
    const struct gw_read_pipeline_options opt = {
        .output_high_water = 4 << 20, .clock_us = fake_clock,
    };
    struct world w;
    world_init_opt(&w, &seg, 1, 0, 0, 24 << 20, &opt);
    gw_read_pipeline_start(w.c.p);
    uint64_t most_ahead = 0, longest = 0;
    for (int guard = 0; w.c.p != NULL && guard < 1000000; guard++) {
        fake_now += 5000;
        if (w.fs.n_pending > 0)
            fake_answer(&w.fs, 0, FAKE_OK);
        if (w.c.p == NULL)
            break;
        evbuffer_remove_buffer(w.c.out, w.c.got, 64 * 1024);
        if (w.c.waiting && evbuffer_get_length(w.c.out) < (2 << 20)) {
            w.c.waiting = 0;
            gw_read_pipeline_drained(w.c.p);
        }
        if (w.fs.n_gets > 40 && w.c.p != NULL) { /* once the window settled */
            uint64_t ahead = evbuffer_get_length(w.c.out);
            for (uint32_t i = 0; i < w.fs.n_pending; i++) {
                ahead += w.fs.pending[i].len;
                longest = w.fs.pending[i].len > longest ? w.fs.pending[i].len : longest;
            }
            most_ahead = ahead > most_ahead ? ahead : most_ahead;
        }
    }
    fake_client_read(&w.c, SIZE_MAX);
    CN_CHECK(longest > 0 && longest <= 256 * 1024);
    CN_CHECK(most_ahead <= 512 * 1024);
    CN_CHECK_EQ_INT(w.c.ended, 1);
    world_check_bytes(&w);
    world_fini(&w);
}

/* A slow client behind a kernel socket buffer that absorbs what the
 * gateway queues (up to 4 MiB, as Linux autotunes it) and sends 64 KiB
 * per 5 ms: the connection's own output is always empty, so without the
 * kernel's unsent count the stream took every answer for a client that
 * waited and grew to 2 x 2 MiB (8 readers at 20 MB/s held 51-61 MiB of
 * RSS). With it, the stream sees the client behind: its slices grow once
 * at most (the first answer found the kernel's queue empty), and once the
 * queue is full they shrink. */
static void test_auto_kernel_queue(void)
{
    const struct gw_lo_seg seg = {0xb4, 24 << 20, 4 << 20};
    const struct gw_read_pipeline_options opt = {
        .output_high_water = 4 << 20, .clock_us = fake_clock,
    };
    const uint64_t cap = 4 << 20, rate = 64 * 1024;
    struct world w;
    world_init_opt(&w, &seg, 1, 0, 0, 24 << 20, &opt);
    gw_read_pipeline_start(w.c.p);
    uint64_t longest = 0, last = 0;
    for (int guard = 0; w.c.p != NULL && guard < 1000000; guard++) {
        fake_now += 5000;
        if (w.fs.n_pending > 0)
            fake_answer(&w.fs, 0, FAKE_OK);
        if (w.c.p == NULL)
            break;
        /* the kernel sends, then takes what fits from the output */
        w.c.kernel -= w.c.kernel < rate ? w.c.kernel : rate;
        size_t take = evbuffer_get_length(w.c.out);
        if (take > cap - w.c.kernel)
            take = cap - w.c.kernel;
        evbuffer_remove_buffer(w.c.out, w.c.got, take);
        w.c.kernel += take;
        if (w.c.waiting && evbuffer_get_length(w.c.out) < (2 << 20)) {
            w.c.waiting = 0;
            gw_read_pipeline_drained(w.c.p);
        }
        for (uint32_t i = 0; i < w.fs.n_pending; i++) {
            longest = w.fs.pending[i].len > longest ? w.fs.pending[i].len : longest;
            last = w.fs.pending[i].len;
        }
    }
    fake_client_read(&w.c, SIZE_MAX);
    CN_CHECK(longest > 0 && longest <= 1024 * 1024); /* one step, while the kernel was empty */
    CN_CHECK(last > 0 && last < 512 * 1024);
    CN_CHECK_EQ_INT(w.c.ended, 1);
    world_check_bytes(&w);
    world_fini(&w);
}

static const struct cn_test_case cases[] = {
    {"in_order", test_in_order},
    {"prefetch_bound", test_prefetch_bound},
    {"slice_failure", test_slice_failure},
    {"slow_client", test_slow_client},
    {"boundaries", test_boundaries},
    {"tiny_ranges", test_tiny_ranges},
    {"client_gone", test_client_gone},
    {"random_soak", test_random_soak},
    {"budget_shared", test_budget_shared},
    {"budget_refused", test_budget_refused},
    {"retry", test_retry},
    {"auto_fast_client", test_auto_fast_client},
    {"auto_slow_client", test_auto_slow_client},
    {"auto_one_slice_queued", test_auto_one_slice_queued},
    {"auto_kernel_queue", test_auto_kernel_queue},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
