/* The chunk-buffer pool of large-object writes (gateway/lo/lo_pool.c):
 * buffers are reused, at most `keep` free ones are kept and only while a
 * writer holds the pool, buffers given back from another thread (as
 * ZeroMQ's I/O thread does) are counted, and a pool closed with buffers
 * still out is freed by the last give-back (ASan checks the frees). */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "cn/test.h"
#include "lo_pool.h"

CN_TEST_GLOBALS;

#define LEN 4096

/* Reuse and the keep bound. */
static void test_keep_bound(void)
{
    struct gw_lo_pool *p = gw_lo_pool_new(LEN, 2);
    CN_CHECK_EQ_INT(gw_lo_pool_buf_len(p), LEN);
    gw_lo_pool_hold(p);
    void *b[4];
    for (int i = 0; i < 4; i++) {
        b[i] = gw_lo_pool_get(p);
        memset(b[i], i, LEN);   /* the whole length is ours */
    }
    struct gw_lo_pool_stats st;
    gw_lo_pool_stats(p, &st);
    CN_CHECK(st.in_use == 4 && st.kept == 0 && st.allocated == 4);
    for (int i = 0; i < 4; i++)
        gw_lo_pool_put(p, b[i]);
    gw_lo_pool_stats(p, &st);
    CN_CHECK(st.in_use == 0 && st.kept == 2);   /* two freed, two kept */
    void *x = gw_lo_pool_get(p), *y = gw_lo_pool_get(p), *z = gw_lo_pool_get(p);
    gw_lo_pool_stats(p, &st);
    CN_CHECK_EQ_INT(st.allocated, 5);            /* two reused, one new */
    CN_CHECK(x == b[0] || x == b[1]);   /* the first two given back were kept */
    gw_lo_pool_put(p, x);
    gw_lo_pool_put(p, y);
    gw_lo_pool_put(p, z);
    gw_lo_pool_release(p);                        /* no writer: nothing kept */
    gw_lo_pool_stats(p, &st);
    CN_CHECK(st.in_use == 0 && st.kept == 0);
    gw_lo_pool_close(p);
}

/* Without a holder, a buffer given back is freed, not kept. */
static void test_no_holder(void)
{
    struct gw_lo_pool *p = gw_lo_pool_new(LEN, 8);
    void *b = gw_lo_pool_get(p);
    gw_lo_pool_put(p, b);
    struct gw_lo_pool_stats st;
    gw_lo_pool_stats(p, &st);
    CN_CHECK(st.in_use == 0 && st.kept == 0 && st.allocated == 1);
    gw_lo_pool_close(p);
    gw_lo_pool_close(NULL);
}

static void *give_back(void *arg)
{
    void **a = arg;
    gw_lo_pool_put(a[0], a[1]);
    return NULL;
}

/* Closed with two buffers out (ZeroMQ still sending): the pool lives until
 * both come back, the last one from another thread frees it. */
static void test_close_with_buffers_out(void)
{
    struct gw_lo_pool *p = gw_lo_pool_new(LEN, 4);
    gw_lo_pool_hold(p);
    void *b1 = gw_lo_pool_get(p), *b2 = gw_lo_pool_get(p);
    gw_lo_pool_put(p, gw_lo_pool_get(p));   /* kept */
    gw_lo_pool_release(p);
    gw_lo_pool_close(p);
    struct gw_lo_pool_stats st;
    gw_lo_pool_stats(p, &st);
    CN_CHECK(st.in_use == 2 && st.kept == 0);
    gw_lo_pool_put(p, b1);
    pthread_t t;
    void *arg[2] = {p, b2};
    CN_CHECK_EQ_INT(pthread_create(&t, NULL, give_back, arg), 0);
    pthread_join(t, NULL);   /* p is freed now */
}

static const struct cn_test_case cases[] = {
    {"keep_bound", test_keep_bound},
    {"no_holder", test_no_holder},
    {"close_with_buffers_out", test_close_with_buffers_out},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
