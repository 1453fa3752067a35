/* Unit tests of the hybrid logical clock (common/hlc.c): timestamps only go
 * up, stay at the wall clock when nothing runs ahead, follow an observed
 * timestamp from a clock ahead, replace an old version with a newer one,
 * ignore absurd observations, and stay strictly increasing across threads. */
#include "cn/hlc.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "cn/test.h"
#include "cn/time.h"

CN_TEST_GLOBALS;

static void test_hlc_monotonic(void)
{
    struct cn_hlc h;
    cn_hlc_init(&h, 0);
    uint64_t prev = cn_hlc_now(&h);
    for (int i = 0; i < 100000; i++) {
        uint64_t t = cn_hlc_now(&h);
        CN_CHECK(t > prev);
        prev = t;
    }
}

static void test_hlc_tracks_wall(void)
{
    struct cn_hlc h;
    cn_hlc_init(&h, 0);
    uint64_t before = cn_time_now_us();
    uint64_t t = cn_hlc_now(&h);
    uint64_t after = cn_time_now_us();
    CN_CHECK(t >= before && t <= after + 1);
}

static void test_hlc_offset(void)
{
    struct cn_hlc h;
    cn_hlc_init(&h, -10 * 1000000ll);
    uint64_t wall = cn_time_now_us();
    uint64_t t = cn_hlc_now(&h);
    CN_CHECK(t < wall - 9 * 1000000ull);
    CN_CHECK(t > wall - 11 * 1000000ull);
}

/* A clock 10 s behind reads a record stamped by a clock on time: its next
 * timestamps are after that record's. */
static void test_hlc_observe_ahead(void)
{
    struct cn_hlc behind;
    cn_hlc_init(&behind, -10 * 1000000ll);
    uint64_t seen = cn_time_now_us();
    CN_CHECK(cn_hlc_now(&behind) < seen);
    cn_hlc_observe(&behind, seen);
    uint64_t t = cn_hlc_now(&behind);
    CN_CHECK(t > seen);
    CN_CHECK(t <= seen + 2);   /* a logical tick, not a jump */
    CN_CHECK(cn_hlc_now(&behind) > t);
}

static void test_hlc_observe_older_is_noop(void)
{
    struct cn_hlc h;
    cn_hlc_init(&h, 0);
    uint64_t t = cn_hlc_now(&h);
    cn_hlc_observe(&h, t - 1000000);
    uint64_t u = cn_hlc_now(&h);
    CN_CHECK(u > t && u < t + 1000000);
}

static void test_hlc_after(void)
{
    struct cn_hlc h;
    cn_hlc_init(&h, 0);
    uint64_t wall = cn_time_now_us();
    CN_CHECK(cn_hlc_after(&h, 5) >= wall);               /* old far past: wall */
    uint64_t ahead = wall + 5 * 1000000ull;
    uint64_t t = cn_hlc_after(&h, ahead);
    CN_CHECK(t == ahead + 1);                           /* old ahead: just after */
    CN_CHECK(cn_hlc_now(&h) > t);                       /* and the clock moved */
}

static void test_hlc_absurd_not_adopted(void)
{
    struct cn_hlc h;
    cn_hlc_init(&h, 0);
    uint64_t far = cn_time_now_us() + CN_HLC_MAX_AHEAD_US * 2;
    cn_hlc_observe(&h, far);
    CN_CHECK(cn_hlc_now(&h) < far - CN_HLC_MAX_AHEAD_US);
    /* the write that replaces it still follows it */
    CN_CHECK(cn_hlc_after(&h, far) == far + 1);
    CN_CHECK(cn_hlc_now(&h) < far - CN_HLC_MAX_AHEAD_US);
    CN_CHECK(cn_hlc_after(&h, UINT64_MAX) > 0);
}

#define HLC_THREADS 4
#define HLC_PER 20000
static struct cn_hlc hlc_shared;
static uint64_t hlc_out[HLC_THREADS][HLC_PER];

static void *hlc_thread(void *arg)
{
    uint64_t *out = arg;
    for (int i = 0; i < HLC_PER; i++)
        out[i] = (i % 3) ? cn_hlc_now(&hlc_shared) : cn_hlc_after(&hlc_shared, out[0]);
    return NULL;
}

static int hlc_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Threads sharing one clock never get the same timestamp. */
static void test_hlc_threads_unique(void)
{
    pthread_t t[HLC_THREADS];
    cn_hlc_init(&hlc_shared, 0);
    for (int i = 0; i < HLC_THREADS; i++)
        pthread_create(&t[i], NULL, hlc_thread, hlc_out[i]);
    for (int i = 0; i < HLC_THREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < HLC_THREADS; i++)
        for (int j = 1; j < HLC_PER; j++)
            CN_CHECK(hlc_out[i][j] > hlc_out[i][j - 1]);
    uint64_t *all = malloc(sizeof(hlc_out));
    for (int i = 0; i < HLC_THREADS; i++)
        for (int j = 0; j < HLC_PER; j++)
            all[i * HLC_PER + j] = hlc_out[i][j];
    qsort(all, HLC_THREADS * HLC_PER, sizeof(*all), hlc_cmp);
    int dups = 0;
    for (int i = 1; i < HLC_THREADS * HLC_PER; i++)
        dups += all[i] == all[i - 1];
    CN_CHECK_EQ_INT(dups, 0);
    free(all);
}

static void test_hlc_default_env(void)
{
    /* set before the first use: the process clock takes it */
    setenv("CAIRN_TEST_CLOCK_OFFSET_US", "-20000000", 1);
    struct cn_hlc *h = cn_hlc_default();
    CN_CHECK(h == cn_hlc_default());
    uint64_t wall = cn_time_now_us();
    CN_CHECK(cn_hlc_wall_us(h) < wall - 19 * 1000000ull);
}

static const struct cn_test_case cases[] = {
    {"monotonic", test_hlc_monotonic},
    {"tracks_wall", test_hlc_tracks_wall},
    {"offset", test_hlc_offset},
    {"observe_ahead", test_hlc_observe_ahead},
    {"observe_older_is_noop", test_hlc_observe_older_is_noop},
    {"after", test_hlc_after},
    {"absurd_not_adopted", test_hlc_absurd_not_adopted},
    {"threads_unique", test_hlc_threads_unique},
    {"default_env", test_hlc_default_env},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
