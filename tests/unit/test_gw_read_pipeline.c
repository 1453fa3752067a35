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

#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/test.h"
#include "lo_map.h"
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
    char why[2048];
    struct fake_store *store;
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
    if (fs->client != NULL && !fs->client->gone)
        CN_CHECK_EQ_INT(fs->client->holds, fs->n_pending + 1);
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

enum fake_answer { FAKE_OK, FAKE_FAIL, FAKE_SHORT, FAKE_WRONG_SIZE };

/* Answers pending read i (removed first: the answer may start new reads). */
static void fake_answer(struct fake_store *fs, uint32_t i, enum fake_answer how)
{
    CN_ASSERT(i < fs->n_pending);
    struct fake_get g = fs->pending[i];
    memmove(&fs->pending[i], &fs->pending[i + 1], (fs->n_pending - i - 1) * sizeof(g));
    fs->n_pending--;
    struct gw_read_pipeline_io *io = g.io;
    if (how == FAKE_FAIL) {
        io->rc = CN_IO;
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

/* The request is done: its h_free frees the pipeline right here, as
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

/* Builds the maps and a pipeline over [first, first+len) (not started). */
static void world_init(struct world *w, const struct gw_lo_seg *segs, uint32_t n, int multipart,
                       uint64_t first, uint64_t len, uint64_t slice_len, uint32_t prefetch,
                       uint64_t high_water)
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
        .body = fake_sink_body, .wait_drain = fake_sink_wait_drain, .end = fake_sink_end,
        .abort = fake_sink_abort, .hold = fake_sink_hold, .release = fake_sink_release,
        .ctx = &w->c,
    };
    const struct gw_read_pipeline_options opt = {
        .slice_len = slice_len, .prefetch = prefetch, .output_high_water = high_water,
    };
    w->c.p = gw_read_pipeline_new(&store, &sink, &opt, OKEY, strlen(OKEY), &moved, first, len);
    CN_CHECK(moved.segs == NULL && moved.n_segs == 0); /* moved in */
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

static const struct cn_test_case cases[] = {
    {"in_order", test_in_order},
    {"prefetch_bound", test_prefetch_bound},
    {"slice_failure", test_slice_failure},
    {"slow_client", test_slow_client},
    {"boundaries", test_boundaries},
    {"tiny_ranges", test_tiny_ranges},
    {"client_gone", test_client_gone},
    {"random_soak", test_random_soak},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
