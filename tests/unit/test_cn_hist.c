/* Unit tests of the log-linear histogram (common/hist.c): bucket arithmetic,
 * percentiles against known data, merge and reset. */
#include "cn/hist.h"

#include <stdlib.h>

#include "cn/rc.h"
#include "cn/test.h"

CN_TEST_GLOBALS;

static void test_hist_buckets(void)
{
    /* every value lies inside its bucket, buckets are contiguous and the
     * relative width stays under 1/128 */
    for (uint64_t v = 0; v < 5000000; v += 1 + v / 1000) {
        uint32_t i = cn_hist_bucket_of(v);
        CN_CHECK(cn_hist_bucket_low(i) <= v && v <= cn_hist_bucket_high(i));
        if (i > 0)
            CN_CHECK_EQ_INT(cn_hist_bucket_high(i - 1) + 1, cn_hist_bucket_low(i));
        uint64_t width = cn_hist_bucket_high(i) - cn_hist_bucket_low(i) + 1;
        CN_CHECK(width * 128 <= cn_hist_bucket_low(i) + 128);
    }
    for (uint64_t v = 0; v < 256; v++)
        CN_CHECK_EQ_INT(cn_hist_bucket_low(cn_hist_bucket_of(v)), v);
    uint64_t big = UINT64_MAX;
    CN_CHECK(cn_hist_bucket_high(cn_hist_bucket_of(big)) == big);
}

static void test_hist_empty(void)
{
    struct cn_hist *h = cn_hist_new(3600000000ULL);
    CN_CHECK_EQ_INT(cn_hist_count(h), 0);
    CN_CHECK_EQ_INT(cn_hist_percentile(h, 99), 0);
    CN_CHECK_EQ_INT(cn_hist_min(h), 0);
    CN_CHECK_EQ_INT(cn_hist_max(h), 0);
    CN_CHECK(cn_hist_mean(h) == 0.0);
    CN_CHECK_EQ_INT(cn_hist_validate(h), CN_OK);
    cn_hist_free(h);
}

static int within(uint64_t got, uint64_t want, double rel)
{
    double d = (double)got - (double)want;
    if (d < 0)
        d = -d;
    return d <= rel * (double)want + 0.5;
}

static void test_hist_uniform_known(void)
{
    /* 1..100000 once each: percentile p is p*1000 by nearest rank */
    struct cn_hist *h = cn_hist_new(3600000000ULL);
    for (uint64_t v = 100000; v >= 1; v--)
        cn_hist_record(h, v);
    CN_CHECK_EQ_INT(cn_hist_validate(h), CN_OK);
    CN_CHECK_EQ_INT(cn_hist_count(h), 100000);
    CN_CHECK_EQ_INT(cn_hist_min(h), 1);
    CN_CHECK_EQ_INT(cn_hist_max(h), 100000);
    CN_CHECK(cn_hist_mean(h) > 50000.49 && cn_hist_mean(h) < 50000.51);
    CN_CHECK(within(cn_hist_percentile(h, 50), 50000, 1.0 / 128));
    CN_CHECK(within(cn_hist_percentile(h, 95), 95000, 1.0 / 128));
    CN_CHECK(within(cn_hist_percentile(h, 99), 99000, 1.0 / 128));
    CN_CHECK(within(cn_hist_percentile(h, 99.9), 99900, 1.0 / 128));
    CN_CHECK_EQ_INT(cn_hist_percentile(h, 100), 100000);
    CN_CHECK_EQ_INT(cn_hist_percentile(h, 0), 1);
    cn_hist_free(h);
}

static void test_hist_small_exact(void)
{
    /* small values are exact: 10 x 5, 89 x 7, 1 x 200 */
    struct cn_hist *h = cn_hist_new(1000000);
    cn_hist_record_n(h, 5, 10);
    cn_hist_record_n(h, 7, 89);
    cn_hist_record(h, 200);
    CN_CHECK_EQ_INT(cn_hist_percentile(h, 10), 5);
    CN_CHECK_EQ_INT(cn_hist_percentile(h, 10.5), 7);
    CN_CHECK_EQ_INT(cn_hist_percentile(h, 50), 7);
    CN_CHECK_EQ_INT(cn_hist_percentile(h, 99), 7);
    CN_CHECK_EQ_INT(cn_hist_percentile(h, 99.5), 200);
    CN_CHECK_EQ_INT(cn_hist_percentile(h, 99.9), 200);
    CN_CHECK(cn_hist_mean(h) > 8.72 && cn_hist_mean(h) < 8.74); /* 873/100 */
    cn_hist_free(h);
}

static void test_hist_bimodal_merge(void)
{
    /* two threads' histograms merged: 990 fast (100us), 10 slow (50ms) */
    struct cn_hist *a = cn_hist_new(3600000000ULL);
    struct cn_hist *b = cn_hist_new(3600000000ULL);
    struct cn_hist *m = cn_hist_new(3600000000ULL);
    cn_hist_record_n(a, 100, 990);
    cn_hist_record_n(b, 50000, 10);
    CN_CHECK_EQ_INT(cn_hist_merge(m, a), CN_OK);
    CN_CHECK_EQ_INT(cn_hist_merge(m, b), CN_OK);
    CN_CHECK_EQ_INT(cn_hist_validate(m), CN_OK);
    CN_CHECK_EQ_INT(cn_hist_count(m), 1000);
    CN_CHECK_EQ_INT(cn_hist_percentile(m, 99), 100);
    CN_CHECK(within(cn_hist_percentile(m, 99.9), 50000, 1.0 / 128));
    CN_CHECK_EQ_INT(cn_hist_max(m), 50000);
    CN_CHECK_EQ_INT(cn_hist_min(m), 100);
    struct cn_hist *other = cn_hist_new(1000);
    CN_CHECK_EQ_INT(cn_hist_merge(m, other), CN_INVAL);
    cn_hist_reset(m);
    CN_CHECK_EQ_INT(cn_hist_validate(m), CN_OK);
    CN_CHECK_EQ_INT(cn_hist_count(m), 0);
    cn_hist_record(m, 3);
    CN_CHECK_EQ_INT(cn_hist_validate(m), CN_OK);
    CN_CHECK_EQ_INT(cn_hist_percentile(m, 50), 3);
    cn_hist_free(a);
    cn_hist_free(b);
    cn_hist_free(m);
    cn_hist_free(other);
}

static void test_hist_random_vs_sorted(void)
{
    /* random data: every percentile within 1/128 of the exact order statistic */
    enum { N = 20000 };
    static uint64_t vals[N];
    struct cn_hist *h = cn_hist_new(3600000000ULL);
    uint64_t x = 88172645463325252ULL;
    for (int i = 0; i < N; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        vals[i] = 1 + x % 2000000;
        cn_hist_record(h, vals[i]);
    }
    /* insertion-free exact rank via counting: sort */
    for (int i = 1; i < N; i++) {
        uint64_t v = vals[i];
        int j = i - 1;
        while (j >= 0 && vals[j] > v) {
            vals[j + 1] = vals[j];
            j--;
        }
        vals[j + 1] = v;
    }
    static const double ps[] = {1, 25, 50, 90, 95, 99, 99.9};
    for (size_t k = 0; k < CN_ARRAY_LEN(ps); k++) {
        size_t rank = (size_t)(ps[k] / 100.0 * N + 0.999999);
        CN_CHECK(within(cn_hist_percentile(h, ps[k]), vals[rank - 1], 1.0 / 128));
    }
    CN_CHECK_EQ_INT(cn_hist_validate(h), CN_OK);
    cn_hist_free(h);
}

static void test_hist_over_max(void)
{
    struct cn_hist *h = cn_hist_new(1000);
    cn_hist_record(h, 5000000);
    cn_hist_record(h, 10);
    CN_CHECK_EQ_INT(cn_hist_validate(h), CN_OK);
    CN_CHECK_EQ_INT(cn_hist_max(h), 5000000);
    CN_CHECK_EQ_INT(cn_hist_percentile(h, 100), 5000000);
    CN_CHECK_EQ_INT(cn_hist_percentile(h, 50), 10);
    cn_hist_free(h);
}

static const struct cn_test_case cases[] = {
    {"buckets", test_hist_buckets},
    {"empty", test_hist_empty},
    {"uniform_known", test_hist_uniform_known},
    {"small_exact", test_hist_small_exact},
    {"bimodal_merge", test_hist_bimodal_merge},
    {"random_vs_sorted", test_hist_random_vs_sorted},
    {"over_max", test_hist_over_max},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
