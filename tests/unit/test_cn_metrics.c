/* cn/metrics.h: rendering of each type, units, merging across threads
 * (live and exited), histogram buckets with _sum/_count, label and HELP
 * escaping, collect callbacks, series hidden and shown with new labels. */
#include "cn/metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/test.h"

/* Renders m and checks that the page holds want (a run of whole lines). */
static int has_lines(struct cn_metrics *m, const char *want)
{
    char *page;
    size_t len;
    cn_metrics_render(m, &page, &len);
    int ok = strlen(page) == len && strstr(page, want) != NULL;
    if (!ok)
        fprintf(stderr, "  page:\n%s  wanted:\n%s", page, want);
    cn_free(page);
    return ok;
}

static void test_metrics_render_types(void)
{
    struct cn_metrics *m = cn_metrics_new();
    const char *put[] = {"op", "PUT", NULL}, *get[] = {"op", "GET", NULL};
    uint32_t c_put = cn_metrics_counter(m, "x_requests_total", "Requests.", 0, put);
    uint32_t c_get = cn_metrics_counter(m, "x_requests_total", "Requests.", 0, get);
    uint32_t g = cn_metrics_gauge(m, "x_inflight", "In flight.", 0, NULL);
    uint32_t secs = cn_metrics_counter(m, "x_busy_seconds_total", "Busy time.", -6, NULL);
    cn_metrics_add(m, c_put, 3);
    cn_metrics_add(m, c_get, 1);
    cn_metrics_add(m, g, 5);
    cn_metrics_sub(m, g, 7);
    cn_metrics_add(m, secs, 1500250);
    CN_CHECK(has_lines(m, "# HELP x_requests_total Requests.\n"
                          "# TYPE x_requests_total counter\n"
                          "x_requests_total{op=\"PUT\"} 3\n"
                          "x_requests_total{op=\"GET\"} 1\n"
                          "# HELP x_inflight In flight.\n"
                          "# TYPE x_inflight gauge\n"
                          "x_inflight -2\n"
                          "# HELP x_busy_seconds_total Busy time.\n"
                          "# TYPE x_busy_seconds_total counter\n"
                          "x_busy_seconds_total 1.50025\n"));
    CN_CHECK_EQ_INT(cn_metrics_value(m, c_put), 3);
    CN_CHECK_EQ_INT(cn_metrics_value(m, g), -2);
    cn_metrics_free(m);
}

/* A series registered ahead and hidden counts but is not rendered until
 * shown, then with the labels it is given; hiding it again drops it from
 * the page while its value stays. */
static void test_metrics_hide_show(void)
{
    struct cn_metrics *m = cn_metrics_new();
    static const uint64_t bounds[] = {10};
    const char *a[] = {"node", "s0", NULL}, *spare[] = {"node", "\x01slot1", NULL};
    const char *named[] = {"node", "s3", "reason", "timeout", NULL};
    uint32_t c0 = cn_metrics_counter(m, "x_fail_total", "Failures.", 0, a);
    uint32_t c1 = cn_metrics_counter(m, "x_fail_total", "Failures.", 0, spare);
    uint32_t h1 = cn_metrics_histogram(m, "x_wait_seconds", "Waits.", 0, spare, bounds, 1);
    cn_metrics_hide(m, c1);
    cn_metrics_hide(m, h1);
    cn_metrics_add(m, c0, 2);
    cn_metrics_add(m, c1, 5);   /* counted while hidden */
    cn_metrics_observe(m, h1, 3);
    char *page;
    size_t len;
    cn_metrics_render(m, &page, &len);
    CN_CHECK(strstr(page, "x_fail_total{node=\"s0\"} 2\n") != NULL);
    CN_CHECK(strstr(page, "slot1") == NULL && strstr(page, "x_wait_seconds_bucket") == NULL);
    cn_free(page);
    cn_metrics_show(m, c1, named);
    cn_metrics_show(m, h1, a);
    CN_CHECK(has_lines(m, "x_fail_total{node=\"s0\"} 2\n"
                          "x_fail_total{node=\"s3\",reason=\"timeout\"} 5\n"));
    CN_CHECK(has_lines(m, "x_wait_seconds_bucket{node=\"s0\",le=\"10\"} 1\n"));
    cn_metrics_hide(m, c0);
    cn_metrics_render(m, &page, &len);
    CN_CHECK(strstr(page, "node=\"s0\"} 2") == NULL);
    cn_free(page);
    CN_CHECK_EQ_INT(cn_metrics_value(m, c0), 2);
    cn_metrics_show(m, c0, NULL);   /* its own labels again */
    CN_CHECK(has_lines(m, "x_fail_total{node=\"s0\"} 2\n"));
    cn_metrics_free(m);
}

static void test_metrics_histogram(void)
{
    struct cn_metrics *m = cn_metrics_new();
    static const uint64_t bounds[] = {100, 1000, 250000};
    const char *l[] = {"op", "PUT", NULL};
    uint32_t h = cn_metrics_histogram(m, "x_duration_seconds", "Latency.", -6, l, bounds, 3);
    uint32_t n = cn_metrics_histogram(m, "x_batch_size", "Sizes.", 0, NULL, bounds, 1);
    const uint64_t values[] = {0, 100, 101, 1000, 999999, 250000};
    for (size_t i = 0; i < CN_ARRAY_LEN(values); i++)
        cn_metrics_observe(m, h, values[i]);
    cn_metrics_observe(m, n, 7);
    CN_CHECK(has_lines(m, "# TYPE x_duration_seconds histogram\n"
                          "x_duration_seconds_bucket{op=\"PUT\",le=\"0.0001\"} 2\n"
                          "x_duration_seconds_bucket{op=\"PUT\",le=\"0.001\"} 4\n"
                          "x_duration_seconds_bucket{op=\"PUT\",le=\"0.25\"} 5\n"
                          "x_duration_seconds_bucket{op=\"PUT\",le=\"+Inf\"} 6\n"
                          "x_duration_seconds_sum{op=\"PUT\"} 1.2512\n"
                          "x_duration_seconds_count{op=\"PUT\"} 6\n"));
    CN_CHECK(has_lines(m, "x_batch_size_bucket{le=\"100\"} 1\n"
                          "x_batch_size_bucket{le=\"+Inf\"} 1\n"
                          "x_batch_size_sum 7\n"
                          "x_batch_size_count 1\n"));
    CN_CHECK_EQ_INT(cn_metrics_value(m, h), 6);
    cn_metrics_free(m);
}

static void test_metrics_escaping(void)
{
    struct cn_metrics *m = cn_metrics_new();
    const char *l[] = {"path", "a\\b\"c\nd", "kind", "", NULL};
    uint32_t c = cn_metrics_counter(m, "x_odd_total", "Help with \\ and\nnewline \"kept\".", 0, l);
    cn_metrics_add(m, c, 1);
    CN_CHECK(has_lines(m, "# HELP x_odd_total Help with \\\\ and\\nnewline \"kept\".\n"
                          "# TYPE x_odd_total counter\n"
                          "x_odd_total{path=\"a\\\\b\\\"c\\nd\",kind=\"\"} 1\n"));
    cn_metrics_free(m);
}

struct merge_arg {
    struct cn_metrics *m;
    uint32_t c, g, h;
    pthread_barrier_t *hold;   /* keep the thread alive until the main one has read */
};

static void *merge_thread(void *p)
{
    struct merge_arg *a = p;
    for (int i = 0; i < 100000; i++) {
        cn_metrics_add(a->m, a->c, 1);
        cn_metrics_observe(a->m, a->h, (uint64_t)(i % 3));
    }
    cn_metrics_add(a->m, a->g, 2);
    if (a->hold != NULL) {
        pthread_barrier_wait(a->hold);   /* counted, */
        pthread_barrier_wait(a->hold);   /* read while alive */
    }
    cn_metrics_sub(a->m, a->g, 1);
    return NULL;
}

/* Four threads count at once; their shards are read live, then again after
 * they exited (merged into the registry by the key destructor). */
static void test_metrics_merge_threads(void)
{
    struct cn_metrics *m = cn_metrics_new();
    static const uint64_t bounds[] = {0, 1};
    uint32_t c = cn_metrics_counter(m, "x_ops_total", "Ops.", 0, NULL);
    uint32_t g = cn_metrics_gauge(m, "x_threads", "Threads.", 0, NULL);
    uint32_t h = cn_metrics_histogram(m, "x_v", "Values.", 0, NULL, bounds, 2);
    pthread_barrier_t hold;
    pthread_barrier_init(&hold, NULL, 5);
    pthread_t th[4];
    struct merge_arg a = {m, c, g, h, &hold};
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, merge_thread, &a);
    pthread_barrier_wait(&hold);
    CN_CHECK_EQ_INT(cn_metrics_value(m, c), 400000);
    CN_CHECK_EQ_INT(cn_metrics_value(m, g), 8);
    pthread_barrier_wait(&hold);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    CN_CHECK_EQ_INT(cn_metrics_value(m, c), 400000);
    CN_CHECK_EQ_INT(cn_metrics_value(m, g), 4);
    CN_CHECK_EQ_INT(cn_metrics_value(m, h), 400000);
    /* i % 3 over 100000: 33334 zeros, 33333 ones, 33333 twos per thread */
    CN_CHECK(has_lines(m, "x_v_bucket{le=\"0\"} 133336\n"
                          "x_v_bucket{le=\"1\"} 266668\n"
                          "x_v_bucket{le=\"+Inf\"} 400000\n"
                          "x_v_sum 399996\n"
                          "x_v_count 400000\n"));
    /* the main thread counts too, into its own shard */
    cn_metrics_add(m, c, 5);
    CN_CHECK_EQ_INT(cn_metrics_value(m, c), 400005);
    pthread_barrier_destroy(&hold);
    cn_metrics_free(m);
}

static void collect_cb(struct cn_metrics *m, void *arg)
{
    uint32_t *ids = arg;
    cn_metrics_set(m, ids[0], 1234567);
    cn_metrics_set(m, ids[1], -3);
}

static void test_metrics_collect(void)
{
    struct cn_metrics *m = cn_metrics_new();
    uint32_t ids[2];
    ids[0] = cn_metrics_gauge(m, "x_disk_bytes", "Disk.", 0, NULL);
    ids[1] = cn_metrics_gauge(m, "x_delta", "Delta.", 0, NULL);
    cn_metrics_on_collect(m, collect_cb, ids);
    CN_CHECK(has_lines(m, "x_disk_bytes 1234567\n# HELP x_delta Delta.\n"
                          "# TYPE x_delta gauge\nx_delta -3\n"));
    cn_metrics_free(m);
}

/* A registry nobody recorded into renders its families with zeros, and one
 * freed with live shards (this thread's) leaks nothing under ASan. */
static void test_metrics_zero_and_free(void)
{
    struct cn_metrics *m = cn_metrics_new();
    static const uint64_t bounds[] = {10};
    cn_metrics_counter(m, "x_a_total", "A.", 0, NULL);
    cn_metrics_histogram(m, "x_h_seconds", "H.", -3, NULL, bounds, 1);
    CN_CHECK(has_lines(m, "x_a_total 0\n# HELP x_h_seconds H.\n# TYPE x_h_seconds histogram\n"
                          "x_h_seconds_bucket{le=\"0.01\"} 0\nx_h_seconds_bucket{le=\"+Inf\"} 0\n"
                          "x_h_seconds_sum 0\nx_h_seconds_count 0\n"));
    cn_metrics_free(m);
    m = cn_metrics_new();
    uint32_t c = cn_metrics_counter(m, "x_b_total", "B.", 0, NULL);
    cn_metrics_add(m, c, 1);
    cn_metrics_free(m);
    /* a new registry on this thread must not see the old one's shard */
    m = cn_metrics_new();
    c = cn_metrics_counter(m, "x_c_total", "C.", 0, NULL);
    cn_metrics_add(m, c, 2);
    CN_CHECK_EQ_INT(cn_metrics_value(m, c), 2);
    cn_metrics_free(m);
}

CN_TEST_GLOBALS;

static const struct cn_test_case cases[] = {
    {"render_types", test_metrics_render_types},
    {"histogram", test_metrics_histogram},
    {"hide_show", test_metrics_hide_show},
    {"escaping", test_metrics_escaping},
    {"merge_threads", test_metrics_merge_threads},
    {"collect", test_metrics_collect},
    {"zero_and_free", test_metrics_zero_and_free},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
