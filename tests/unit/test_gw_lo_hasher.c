/* The MD5 thread of large-object writes (gateway/lo/lo_hasher.c): chunks of
 * several streams queued on one hasher come out as the MD5 of each
 * stream's bytes in queue order, progress is reported on the stream's own
 * loop thread, a wrong Content-MD5 is told from the right one, a pool
 * buffer goes back only when both the hasher and the sender (the test's
 * own reference) let go of it, in either order, and a stream closed with
 * chunks still queued drops them and gives every buffer back (ASan checks
 * the frees). A gate blocks the hasher thread inside a blob's give-back so
 * the "still queued" states are deterministic, not raced. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "checksum.h"
#include "cn/rc.h"
#include "cn/test.h"
#include "lo_hasher.h"
#include "lo_pool.h"
#include "store.h"

CN_TEST_GLOBALS;

static struct event_base *base;
static pthread_t loop_thread;

struct progress {
    struct gw_lo_hash_stream *s;
    int calls;
    int wrong_thread;
};

static void on_progress(void *arg)
{
    struct progress *p = arg;
    p->calls++;
    p->wrong_thread += !pthread_equal(pthread_self(), loop_thread);
}

/* Runs the loop until s hashed n chunks (or 10 s went by). */
static void wait_hashed(struct gw_lo_hash_stream *s, uint32_t n)
{
    for (int i = 0; i < 10000 && gw_lo_hash_stream_hashed(s) < n; i++) {
        event_base_loop(base, EVLOOP_NONBLOCK);
        usleep(1000);
    }
    /* and the wake-up it posted runs */
    event_base_loop(base, EVLOOP_NONBLOCK);
}

static uint8_t byte_at(uint32_t seed, size_t i)
{
    return (uint8_t)(seed * 131 + i * 7 + (i >> 11));
}

static void free_cb(void *data, void *arg)
{
    (void)arg;
    free(data);
}

/* Two streams with interleaved chunks of odd sizes on one hasher: each
 * stream's MD5 is the one-shot MD5 of its bytes in order; callbacks ran on
 * this thread; a Content-MD5 of other bytes is a mismatch. */
static void test_order_and_mismatch(void)
{
    struct gw_lo_hasher *h = gw_lo_hasher_new();
    CN_CHECK(h != NULL);
    struct progress p[2] = {{0}};
    uint8_t *whole[2];
    size_t total[2] = {0, 0};
    static const size_t lens[] = {1, 4096, 65537, 3, 100000, 0, 777, 262144};
    size_t all = 0;
    for (size_t i = 0; i < CN_ARRAY_LEN(lens); i++)
        all += lens[i];
    for (int k = 0; k < 2; k++) {
        p[k].s = gw_lo_hash_stream_new(h, base, on_progress, &p[k]);
        whole[k] = malloc(all);
    }
    for (size_t i = 0; i < CN_ARRAY_LEN(lens); i++) {
        for (int k = 0; k < 2; k++) {
            uint8_t *b = malloc(lens[i] + 1);
            for (size_t j = 0; j < lens[i]; j++)
                b[j] = byte_at((uint32_t)k, total[k] + j);
            memcpy(whole[k] + total[k], b, lens[i]);
            total[k] += lens[i];
            struct gw_blob *blob = gw_blob_from_buffer(b, lens[i], free_cb, NULL);
            gw_lo_hash_stream_add(p[k].s, blob);
            gw_blob_unref(blob);   /* the hasher holds its own */
        }
    }
    for (int k = 0; k < 2; k++) {
        wait_hashed(p[k].s, CN_ARRAY_LEN(lens));
        CN_CHECK_EQ_INT(gw_lo_hash_stream_hashed(p[k].s), CN_ARRAY_LEN(lens));
        const struct gw_checksum *sum = gw_lo_hash_stream_final(p[k].s);
        CN_CHECK(sum != NULL);
        unsigned char want[16], got[GW_CHECKSUM_MAX_DIGEST];
        gw_checksum_md5(whole[k], total[k], want);
        CN_CHECK_EQ_INT(gw_checksum_digest(sum, GW_CHECKSUM_MD5, got), 16);
        CN_CHECK(memcmp(want, got, 16) == 0);
        /* Content-MD5 as a client sends it: the other stream's is BadDigest */
        struct gw_checksum mine;
        CN_CHECK_EQ_INT(gw_checksum_init(&mine, GW_CHECKSUM_BIT(GW_CHECKSUM_MD5)), CN_OK);
        gw_checksum_update(&mine, whole[k], total[k]);
        gw_checksum_final(&mine);
        char b64[GW_CHECKSUM_B64_MAX];
        CN_CHECK_EQ_INT(gw_checksum_base64(&mine, GW_CHECKSUM_MD5, b64), CN_OK);
        CN_CHECK_EQ_INT(gw_checksum_verify_base64(sum, GW_CHECKSUM_MD5, b64, strlen(b64)),
                        CN_OK);
        gw_checksum_fini(&mine);
        CN_CHECK(p[k].calls >= 1 && p[k].wrong_thread == 0);
    }
    char b64[GW_CHECKSUM_B64_MAX];
    const struct gw_checksum *s0 = gw_lo_hash_stream_final(p[0].s);
    const struct gw_checksum *s1 = gw_lo_hash_stream_final(p[1].s);
    CN_CHECK_EQ_INT(gw_checksum_base64(s1, GW_CHECKSUM_MD5, b64), CN_OK);
    CN_CHECK_EQ_INT(gw_checksum_verify_base64(s0, GW_CHECKSUM_MD5, b64, strlen(b64)),
                    CN_CORRUPT);
    for (int k = 0; k < 2; k++) {
        gw_lo_hash_stream_close(p[k].s);
        free(whole[k]);
    }
    gw_lo_hasher_free(h);
}

/* The gate: a blob whose give-back, when the hasher thread runs it (its
 * reference was the last), waits until the test opens it. */
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_open, gate_reached;

static void gate_cb(void *data, void *arg)
{
    (void)arg;
    free(data);
    if (pthread_equal(pthread_self(), loop_thread))
        return;   /* the hasher was done with it first: not a gate */
    pthread_mutex_lock(&gate_mu);
    gate_reached = 1;
    pthread_cond_broadcast(&gate_cv);
    while (!gate_open)
        pthread_cond_wait(&gate_cv, &gate_mu);
    pthread_mutex_unlock(&gate_mu);
}

/* Queues gate blobs on s until the hasher thread is held in one (the
 * hasher may finish one before the test drops its reference; then the
 * next is tried). Returns how many were queued. */
static uint32_t gate_block(struct gw_lo_hash_stream *s)
{
    gate_open = gate_reached = 0;
    for (uint32_t n = 1;; n++) {
        struct gw_blob *g = gw_blob_from_buffer(calloc(1, 16), 16, gate_cb, NULL);
        gw_lo_hash_stream_add(s, g);
        gw_blob_unref(g);
        pthread_mutex_lock(&gate_mu);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;
        while (!gate_reached &&
               pthread_cond_timedwait(&gate_cv, &gate_mu, &until) == 0)
            ;
        int held = gate_reached;
        pthread_mutex_unlock(&gate_mu);
        if (held)
            return n;
    }
}

static void gate_release(void)
{
    pthread_mutex_lock(&gate_mu);
    gate_open = 1;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
}

static void pool_give_back(void *data, void *arg)
{
    gw_lo_pool_put(arg, data);
}

static uint32_t pool_in_use(struct gw_lo_pool *pool)
{
    struct gw_lo_pool_stats st;
    gw_lo_pool_stats(pool, &st);
    return st.in_use;
}

/* A pool buffer stays out while either the hasher or the sender holds it. */
static void test_buffers_returned(void)
{
    struct gw_lo_pool *pool = gw_lo_pool_new(4096, 4);
    gw_lo_pool_hold(pool);
    struct gw_lo_hasher *h = gw_lo_hasher_new();
    struct progress p = {0};
    p.s = gw_lo_hash_stream_new(h, base, on_progress, &p);

    /* the send lets go first: the buffer waits for the hasher */
    uint32_t n = gate_block(p.s);
    void *buf = gw_lo_pool_get(pool);
    memset(buf, 1, 4096);
    struct gw_blob *blob = gw_blob_from_buffer(buf, 4096, pool_give_back, pool);
    gw_lo_hash_stream_add(p.s, blob);
    gw_blob_unref(blob);   /* the "replica send" answered */
    CN_CHECK_EQ_INT(pool_in_use(pool), 1);
    CN_CHECK(gw_lo_hash_stream_final(p.s) == NULL);   /* not all hashed */
    gate_release();
    wait_hashed(p.s, n + 1);
    CN_CHECK_EQ_INT(pool_in_use(pool), 0);

    /* the hasher lets go first: the buffer waits for the send */
    buf = gw_lo_pool_get(pool);
    memset(buf, 2, 4096);
    blob = gw_blob_from_buffer(buf, 4096, pool_give_back, pool);
    gw_lo_hash_stream_add(p.s, blob);
    wait_hashed(p.s, n + 2);
    CN_CHECK_EQ_INT(gw_lo_hash_stream_hashed(p.s), n + 2);
    CN_CHECK_EQ_INT(pool_in_use(pool), 1);
    gw_blob_unref(blob);
    CN_CHECK_EQ_INT(pool_in_use(pool), 0);
    gw_lo_hash_stream_close(p.s);

    /* closed with chunks queued behind the gate: dropped, buffers back, no
     * callback after the close */
    p.s = gw_lo_hash_stream_new(h, base, on_progress, &p);
    gate_block(p.s);
    for (int i = 0; i < 3; i++) {
        buf = gw_lo_pool_get(pool);
        blob = gw_blob_from_buffer(buf, 4096, pool_give_back, pool);
        gw_lo_hash_stream_add(p.s, blob);
        gw_blob_unref(blob);
    }
    CN_CHECK_EQ_INT(pool_in_use(pool), 3);
    int calls = p.calls;
    gw_lo_hash_stream_close(p.s);
    gate_release();
    gw_lo_hasher_free(h);   /* drains the queue, then joins */
    event_base_loop(base, EVLOOP_NONBLOCK);
    CN_CHECK_EQ_INT(p.calls, calls);
    CN_CHECK_EQ_INT(pool_in_use(pool), 0);
    gw_lo_pool_release(pool);
    gw_lo_pool_close(pool);
}

static const struct cn_test_case cases[] = {
    {"order_and_mismatch", test_order_and_mismatch},
    {"buffers_returned", test_buffers_returned},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    evthread_use_pthreads();
    base = event_base_new();
    loop_thread = pthread_self();
    int rc = cn_test_main(cases, argc, argv);
    event_base_free(base);
    return rc;
}
