/* The chunked PUT writer (gateway/lo/lo_writer.c) over a fake store whose
 * chunk writes the test answers by hand (each answer stands for the store's
 * verdict: W acks reached, or not). Cases: bodies cut into chunk_len chunks
 * under the max_inflight bound, with the bytes and keys the map will name;
 * a failed chunk after some succeeded (the error sticks, nothing more is
 * sent, and abandoning reclaims every chunk sent once the ones in flight
 * answered); an abandoned idle writer; a committed one reclaims nothing.
 * Each case runs again with chunk buffers from a pool (lo_pool.h): the same
 * bytes and keys, at most max_inflight + 1 buffers ever allocated, every
 * buffer given back, none kept once the writer let go. With a hasher
 * thread (lo_hasher.h): the MD5 of the body, a chunk busy until both its
 * write answered and it was hashed (same buffer bound), and an abandon with
 * chunks unhashed gives every buffer back. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <unistd.h>

#include "cn/rc.h"
#include "cn/test.h"
#include "checksum.h"
#include "lo_hasher.h"
#include "lo_map.h"
#include "lo_pool.h"
#include "lo_writer.h"

CN_TEST_GLOBALS;

#define FAKE_MAX 256
#define OKEY "o/bkt/big"
#define VER 0xabcdef01ULL

static struct gw_lo_pool *test_pool;   /* the writers' pool, or NULL */
static struct gw_lo_hasher *test_hasher; /* the writers' MD5 thread, or NULL */
static struct event_base *test_base;

/* One chunk write the writer started. */
struct fake_put {
    char key[GW_LO_KEY_MAX];
    size_t key_len;
    uint64_t ver;
    struct gw_blob *blob;   /* a reference held until answered */
    gw_store_cb cb;
    void *arg;
};

struct fake_store {
    struct fake_put pending[FAKE_MAX];
    uint32_t n_pending, max_pending, n_puts;
    struct evbuffer *stored;         /* the bytes of every chunk written OK, in order */
    int n_reclaims;
    struct gw_lo_seg reclaimed;
    char reclaimed_okey[64];
    int callbacks;                   /* the writer's cb ran */
    struct gw_lo_writer *w;          /* feeds again from cb, as lo_put.c does */
    struct evbuffer *body;
    int last;
    int feed_rc;
};

static void fake_put(void *ctx, const struct gw_store_record *rec, struct gw_blob *blob,
                     gw_store_cb cb, void *arg)
{
    struct fake_store *fs = ctx;
    CN_ASSERT(fs->n_pending < FAKE_MAX);
    struct fake_put *p = &fs->pending[fs->n_pending++];
    memcpy(p->key, rec->key, rec->key_len);
    p->key_len = rec->key_len;
    p->ver = rec->ver;
    gw_blob_ref(blob);
    p->blob = blob;
    p->cb = cb;
    p->arg = arg;
    fs->n_puts++;
    if (fs->n_pending > fs->max_pending)
        fs->max_pending = fs->n_pending;
}

static void fake_reclaim(void *ctx, const char *okey, size_t okey_len, const struct gw_lo_seg *seg,
                         uint64_t reqid)
{
    (void)reqid;
    struct fake_store *fs = ctx;
    fs->n_reclaims++;
    fs->reclaimed = *seg;
    snprintf(fs->reclaimed_okey, sizeof(fs->reclaimed_okey), "%.*s", (int)okey_len, okey);
}

/* Answers the oldest pending chunk write with rc; the key must be the
 * chunk key of the next index checked. */
static void fake_answer(struct fake_store *fs, int rc)
{
    CN_ASSERT(fs->n_pending > 0);
    struct fake_put p = fs->pending[0];
    memmove(&fs->pending[0], &fs->pending[1], (fs->n_pending - 1) * sizeof(p));
    fs->n_pending--;
    if (rc == CN_OK)
        evbuffer_add(fs->stored, gw_blob_data(p.blob), gw_blob_len(p.blob));
    struct gw_store_result res = {.rc = rc, .acks = rc == CN_OK ? 2 : 0};
    if (rc != CN_OK)
        snprintf(res.err, sizeof(res.err), "1 of 2 acks");
    p.cb(&res, p.arg);
    gw_blob_unref(p.blob);
}

/* The owner's callback: feed what is left, as lo_put.c does. */
static void fake_on_writer(struct gw_lo_writer *w, void *arg)
{
    struct fake_store *fs = arg;
    CN_CHECK(w == fs->w);
    fs->callbacks++;
    fs->feed_rc = gw_lo_writer_feed(w, fs->body, fs->last);
}

static uint8_t body_byte(size_t i)
{
    return (uint8_t)(i * 7 + (i >> 9));
}

static void fake_init(struct fake_store *fs, size_t body_len, uint32_t chunk_len,
                      uint32_t max_inflight)
{
    memset(fs, 0, sizeof(*fs));
    fs->stored = evbuffer_new();
    fs->body = evbuffer_new();
    for (size_t i = 0; i < body_len; i++) {
        uint8_t b = body_byte(i);
        evbuffer_add(fs->body, &b, 1);
    }
    const struct gw_lo_writer_store io = {.put = fake_put, .reclaim = fake_reclaim, .ctx = fs};
    const struct gw_lo_writer_config cfg = {
        .io = &io, .okey = OKEY, .okey_len = strlen(OKEY), .ver = VER,
        .chunk_len = chunk_len, .max_inflight = max_inflight, .reqid = 1,
        .pool = test_pool,
        .hasher = test_hasher,
        .base = test_base,
    };
    fs->w = gw_lo_writer_new(&cfg, fake_on_writer, fs);
}

static void fake_fini(struct fake_store *fs)
{
    CN_CHECK_EQ_INT(fs->n_pending, 0);
    evbuffer_free(fs->stored);
    evbuffer_free(fs->body);
}

/* Every chunk key the writer used, in order, is the map's key of index i. */
static void check_key(const struct fake_put *p, uint32_t idx)
{
    char k[GW_LO_KEY_MAX];
    size_t n = gw_lo_map_chunk_key(k, OKEY, strlen(OKEY), VER, idx);
    CN_CHECK(p->key_len == n && memcmp(p->key, k, n) == 0);
    CN_CHECK_EQ_INT(p->ver, VER);
}

/* A body of 10.5 chunks with 3 in flight at most: CN_AGAIN while full, the
 * owner's callback feeds on, the last chunk is short, the segment adds up
 * and the stored bytes are the body's. Commit reclaims nothing. */
static void test_chunks_and_bound(void)
{
    static const size_t lens[] = {10500, 1000, 1, 999, 0};
    for (size_t t = 0; t < sizeof(lens) / sizeof(lens[0]); t++) {
        struct fake_store fs;
        fake_init(&fs, lens[t], 1000, 3);
        fs.last = 1;
        fs.feed_rc = gw_lo_writer_feed(fs.w, fs.body, 1);
        uint32_t idx = 0;
        while (fs.n_pending > 0) {
            CN_CHECK(fs.n_pending <= 3);
            if (test_pool != NULL) {   /* in flight + the one being filled */
                struct gw_lo_pool_stats st;
                gw_lo_pool_stats(test_pool, &st);
                CN_CHECK(st.in_use <= 4);
            }
            CN_CHECK_EQ_INT(gw_lo_writer_inflight(fs.w), fs.n_pending);
            check_key(&fs.pending[0], idx++);
            fake_answer(&fs, CN_OK);
        }
        CN_CHECK_EQ_INT(fs.feed_rc, CN_OK);
        CN_CHECK_EQ_INT(fs.n_puts, (lens[t] + 999) / 1000);
        CN_CHECK_EQ_INT(fs.max_pending, CN_MIN(3, fs.n_puts));
        CN_CHECK(gw_lo_writer_error(fs.w) == NULL);
        struct gw_lo_seg seg;
        gw_lo_writer_seg(fs.w, &seg);
        CN_CHECK(seg.ver == VER && seg.size == lens[t] && seg.chunk_len == 1000);
        CN_CHECK_EQ_INT(evbuffer_get_length(fs.stored), lens[t]);
        const uint8_t *b = evbuffer_pullup(fs.stored, -1);
        size_t bad = 0;
        for (size_t i = 0; i < lens[t]; i++)
            bad += b[i] != body_byte(i);
        CN_CHECK_EQ_INT(bad, 0);
        gw_lo_writer_commit(fs.w);
        CN_CHECK_EQ_INT(fs.n_reclaims, 0);
        fake_fini(&fs);
    }
}

/* Chunk 3 of 8 fails (its write did not reach W acks) while 4 and 5 are in
 * flight: the error sticks (CN_ERR, the store's words and rc), nothing more
 * is sent, and abandoning waits for 4 and 5, then reclaims all 6 chunks
 * sent (ver and chunk_len as the map would name them); the owner's
 * callback does not run after the abandon. */
static void test_failure_reclaims(void)
{
    struct fake_store fs;
    fake_init(&fs, 8000, 1000, 3);
    fs.last = 1;
    CN_CHECK_EQ_INT(gw_lo_writer_feed(fs.w, fs.body, 1), CN_AGAIN);
    fake_answer(&fs, CN_OK);   /* chunk 0; 3 sent */
    fake_answer(&fs, CN_OK);   /* chunk 1; 4 sent */
    fake_answer(&fs, CN_OK);   /* chunk 2; 5 sent */
    CN_CHECK_EQ_INT(fs.n_puts, 6);
    fake_answer(&fs, CN_IO);   /* chunk 3 */
    CN_CHECK_EQ_INT(fs.feed_rc, CN_ERR);
    CN_CHECK_EQ_INT(gw_lo_writer_rc(fs.w), CN_IO);
    CN_CHECK(gw_lo_writer_error(fs.w) != NULL &&
             strstr(gw_lo_writer_error(fs.w), "1 of 2 acks") != NULL);
    CN_CHECK_EQ_INT(fs.n_puts, 6);
    CN_CHECK_EQ_INT(gw_lo_writer_feed(fs.w, fs.body, 1), CN_ERR);
    CN_CHECK_EQ_INT(fs.n_pending, 2);
    int cbs = fs.callbacks;
    gw_lo_writer_abandon(fs.w);
    CN_CHECK_EQ_INT(fs.n_reclaims, 0); /* chunks 4 and 5 may still land */
    fake_answer(&fs, CN_OK);
    CN_CHECK_EQ_INT(fs.n_reclaims, 0);
    fake_answer(&fs, CN_OK);
    CN_CHECK_EQ_INT(fs.n_reclaims, 1);
    CN_CHECK_EQ_INT(fs.callbacks, cbs);
    CN_CHECK(fs.reclaimed.ver == VER && fs.reclaimed.chunk_len == 1000);
    CN_CHECK_EQ_INT(gw_lo_seg_chunks(&fs.reclaimed), 6);
    CN_CHECK_EQ_STR(fs.reclaimed_okey, OKEY);
    fake_fini(&fs);
}

/* The client goes away mid-body: the owner abandons a writer with chunks
 * in flight and none failed; they are all reclaimed after their answers.
 * An idle writer that sent nothing reclaims nothing. */
static void test_abandon(void)
{
    struct fake_store fs;
    fake_init(&fs, 2500, 1000, 4);
    CN_CHECK_EQ_INT(gw_lo_writer_feed(fs.w, fs.body, 0), CN_OK); /* 2 sent, 500 held */
    CN_CHECK_EQ_INT(fs.n_puts, 2);
    gw_lo_writer_abandon(fs.w);
    fake_answer(&fs, CN_OK);
    fake_answer(&fs, CN_TIMEOUT);
    CN_CHECK_EQ_INT(fs.n_reclaims, 1);
    CN_CHECK_EQ_INT(gw_lo_seg_chunks(&fs.reclaimed), 2);
    CN_CHECK_EQ_INT(fs.callbacks, 0);
    fake_fini(&fs);

    fake_init(&fs, 10, 1000, 4);
    CN_CHECK_EQ_INT(gw_lo_writer_feed(fs.w, fs.body, 0), CN_OK);
    CN_CHECK_EQ_INT(fs.n_puts, 0);
    gw_lo_writer_abandon(fs.w);
    CN_CHECK_EQ_INT(fs.n_reclaims, 0);
    fake_fini(&fs);
    gw_lo_writer_abandon(NULL);
}

/* Runs fn with writers over a pool of 1000-byte buffers keeping 4 (the
 * cases use 3 or 4 in flight): buffers are reused (at most max_alloc
 * allocated over the case's writers), all come back, none stay kept once
 * no writer holds the pool, and the pool frees cleanly (ASan). A writer
 * peaks at max_inflight + 2 buffers: those in flight, the one being
 * filled, and the one whose answer is being handled (fake_answer drops its
 * reference after the callback that feeds on, as a replica's send may
 * still hold one after W acks). */
static void run_with_pool(void (*fn)(void), uint64_t max_alloc)
{
    test_pool = gw_lo_pool_new(1000, 4);
    fn();
    struct gw_lo_pool_stats st;
    gw_lo_pool_stats(test_pool, &st);
    CN_CHECK_EQ_INT(st.in_use, 0);
    CN_CHECK_EQ_INT(st.kept, 0);
    CN_CHECK(st.allocated <= max_alloc);
    gw_lo_pool_close(test_pool);
    test_pool = NULL;
}

static void test_chunks_and_bound_pool(void)
{
    /* writers of 11, 1, 1, 1 and 0 chunks: 5 + 1 + 1 + 1 buffers at most
     * for 14 chunks sent */
    run_with_pool(test_chunks_and_bound, 8);
}

static void test_failure_reclaims_pool(void)
{
    run_with_pool(test_failure_reclaims, 5);   /* 7 chunks filled, 3 in flight */
}

static void test_abandon_pool(void)
{
    run_with_pool(test_abandon, 4);   /* 2 sent + 1 filling; then 1 */
}

/* A pool whose buffers are shorter than the chunk is not used (the writer
 * falls back to contiguous allocations), so a chunk never overruns. */
static void test_pool_too_short(void)
{
    test_pool = gw_lo_pool_new(999, 4);
    test_chunks_and_bound();
    struct gw_lo_pool_stats st;
    gw_lo_pool_stats(test_pool, &st);
    CN_CHECK_EQ_INT(st.allocated, 0);
    gw_lo_pool_close(test_pool);
    test_pool = NULL;
}

/* Runs the loop a little: the hasher's progress arrives there. */
static void run_loop_a_little(void)
{
    event_base_loop(test_base, EVLOOP_NONBLOCK);
    usleep(500);
}

/* With a hasher and a pool: every size of test_chunks_and_bound stored
 * whole, at most 3 writes in flight and 4 buffers out, busy until hashed,
 * and the MD5 is the body's; abandoning with chunks unhashed returns every
 * buffer once the hasher drained. */
static void test_with_hasher(void)
{
    test_pool = gw_lo_pool_new(1000, 4);
    test_hasher = gw_lo_hasher_new();
    CN_CHECK(test_hasher != NULL);
    static const size_t lens[] = {10500, 1000, 1, 0};
    for (size_t t = 0; t < CN_ARRAY_LEN(lens); t++) {
        struct fake_store fs;
        fake_init(&fs, lens[t], 1000, 3);
        uint8_t *body = malloc(lens[t] + 1);
        evbuffer_copyout(fs.body, body, lens[t]);
        fs.last = 1;
        fs.feed_rc = gw_lo_writer_feed(fs.w, fs.body, 1);
        for (int spins = 0; spins < 20000 && gw_lo_writer_inflight(fs.w) > 0; spins++) {
            struct gw_lo_pool_stats st;
            gw_lo_pool_stats(test_pool, &st);
            CN_CHECK(st.in_use <= 4 && fs.n_pending <= 3);
            CN_CHECK(gw_lo_writer_inflight(fs.w) >= fs.n_pending);
            CN_CHECK(gw_lo_writer_md5(fs.w) == NULL);
            if (fs.n_pending > 0)
                fake_answer(&fs, CN_OK);
            else
                run_loop_a_little();
        }
        CN_CHECK_EQ_INT(gw_lo_writer_inflight(fs.w), 0);
        CN_CHECK_EQ_INT(fs.feed_rc, CN_OK);
        CN_CHECK_EQ_INT(evbuffer_get_length(fs.stored), lens[t]);
        const struct gw_checksum *sum = gw_lo_writer_md5(fs.w);
        CN_CHECK(sum != NULL);
        unsigned char want[16], got[GW_CHECKSUM_MAX_DIGEST];
        gw_checksum_md5(body, lens[t], want);
        CN_CHECK(sum != NULL && gw_checksum_digest(sum, GW_CHECKSUM_MD5, got) == 16 &&
                 memcmp(want, got, 16) == 0);
        gw_lo_writer_commit(fs.w);
        CN_CHECK_EQ_INT(fs.n_reclaims, 0);
        free(body);
        fake_fini(&fs);
    }
    /* abandoned mid-body, chunks written but maybe not hashed */
    struct fake_store fs;
    fake_init(&fs, 2500, 1000, 4);
    CN_CHECK_EQ_INT(gw_lo_writer_feed(fs.w, fs.body, 0), CN_OK);
    CN_CHECK_EQ_INT(fs.n_puts, 2);
    gw_lo_writer_abandon(fs.w);
    fake_answer(&fs, CN_OK);
    fake_answer(&fs, CN_OK);
    CN_CHECK_EQ_INT(fs.n_reclaims, 1);
    CN_CHECK_EQ_INT(fs.callbacks, 0);
    fake_fini(&fs);
    gw_lo_hasher_free(test_hasher);   /* drains: its references go back */
    test_hasher = NULL;
    event_base_loop(test_base, EVLOOP_NONBLOCK);
    CN_CHECK_EQ_INT(fs.callbacks, 0);
    struct gw_lo_pool_stats st;
    gw_lo_pool_stats(test_pool, &st);
    CN_CHECK_EQ_INT(st.in_use, 0);
    CN_CHECK_EQ_INT(st.kept, 0);
    gw_lo_pool_close(test_pool);
    test_pool = NULL;
}

static const struct cn_test_case cases[] = {
    {"chunks_and_bound", test_chunks_and_bound},
    {"failure_reclaims", test_failure_reclaims},
    {"abandon", test_abandon},
    {"chunks_and_bound_pool", test_chunks_and_bound_pool},
    {"failure_reclaims_pool", test_failure_reclaims_pool},
    {"abandon_pool", test_abandon_pool},
    {"pool_too_short", test_pool_too_short},
    {"with_hasher", test_with_hasher},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    evthread_use_pthreads();
    test_base = event_base_new();
    int rc = cn_test_main(cases, argc, argv);
    event_base_free(test_base);
    return rc;
}
