/* Key and value generators of cairn-bench: the distributions stay within
 * statistical tolerance of what basho_bench gives, sequences end, bodies can
 * be regenerated to check a read. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cn/test.h"
#include "keygen.h"
#include "valgen.h"

CN_TEST_GLOBALS;

static void test_keygen_uniform(void)
{
    /* 10 keys, 200,000 draws: every key near 20,000 (chi-square, 9 dof,
     * 99.99th percentile is about 33.7) and never outside 1..10 */
    struct bench_keygen_spec spec = {BENCH_KEYGEN_UNIFORM, 1, 10};
    struct bench_keygen g;
    struct bench_rng r;
    bench_keygen_init(&g, &spec, 0, 1);
    bench_rng_init(&r, 42, 1);
    long counts[11] = {0};
    enum { N = 200000 };
    for (int i = 0; i < N; i++) {
        int64_t k;
        CN_CHECK_EQ_INT(bench_keygen_next(&g, &r, &k), CN_OK);
        if (k < 1 || k > 10) {
            CN_CHECK(k >= 1 && k <= 10);
            return;
        }
        counts[k]++;
    }
    double chi = 0;
    for (int k = 1; k <= 10; k++)
        chi += pow(counts[k] - N / 10.0, 2) / (N / 10.0);
    CN_CHECK(chi < 33.7);
    /* the three-argument form starts where told */
    struct bench_keygen_spec spec3 = {BENCH_KEYGEN_UNIFORM, 1000, 5};
    bench_keygen_init(&g, &spec3, 0, 1);
    for (int i = 0; i < 1000; i++) {
        int64_t k;
        bench_keygen_next(&g, &r, &k);
        CN_CHECK(k >= 1000 && k <= 1004);
    }
}

static void test_keygen_sequential(void)
{
    struct bench_keygen_spec spec = {BENCH_KEYGEN_SEQUENTIAL, 0, 5};
    struct bench_keygen g;
    struct bench_rng r;
    bench_rng_init(&r, 1, 1);
    /* every worker walks the whole range, then is done */
    for (int w = 0; w < 2; w++) {
        bench_keygen_init(&g, &spec, w, 2);
        int64_t k;
        for (int64_t want = 0; want < 5; want++) {
            CN_CHECK_EQ_INT(bench_keygen_next(&g, &r, &k), CN_OK);
            CN_CHECK_EQ_INT(k, want);
        }
        CN_CHECK_EQ_INT(bench_keygen_next(&g, &r, &k), CN_DONE);
        CN_CHECK_EQ_INT(bench_keygen_next(&g, &r, &k), CN_DONE);
    }
    CN_CHECK_EQ_INT(bench_keygen_limit(&spec), 5);
}

static void test_keygen_partitioned(void)
{
    /* 3 workers share 10..109 exactly once, in order, the last takes the rest */
    struct bench_keygen_spec spec = {BENCH_KEYGEN_PARTITIONED, 10, 100};
    struct bench_rng r;
    bench_rng_init(&r, 1, 1);
    int seen[200] = {0};
    int per_worker[3] = {0};
    for (int w = 0; w < 3; w++) {
        struct bench_keygen g;
        bench_keygen_init(&g, &spec, w, 3);
        int64_t k, prev = -1;
        while (bench_keygen_next(&g, &r, &k) == CN_OK) {
            CN_CHECK(k > prev);
            prev = k;
            if (k >= 10 && k < 110)
                seen[k]++;
            else
                CN_CHECK(k >= 10 && k < 110);
            per_worker[w]++;
        }
    }
    for (int k = 10; k < 110; k++)
        CN_CHECK_EQ_INT(seen[k], 1);
    CN_CHECK_EQ_INT(per_worker[0], 33);
    CN_CHECK_EQ_INT(per_worker[1], 33);
    CN_CHECK_EQ_INT(per_worker[2], 34);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void test_keygen_pareto(void)
{
    /* basho_bench pareto_int N: Lomax(scale N/10, shape 1.5). Median is
     * 0.1 N (2^(2/3) - 1) = 0.0587 N; 97.3 % of keys are below N; 23.9 % of
     * keys are below 0.02 N */
    enum { N = 100000, DRAWS = 200000 };
    static int64_t v[DRAWS];
    struct bench_keygen_spec spec = {BENCH_KEYGEN_PARETO, 0, N};
    struct bench_keygen g;
    struct bench_rng r;
    bench_keygen_init(&g, &spec, 0, 1);
    bench_rng_init(&r, 7, 3);
    long below_n = 0, below_2pct = 0;
    for (int i = 0; i < DRAWS; i++) {
        CN_CHECK_EQ_INT(bench_keygen_next(&g, &r, &v[i]), CN_OK);
        CN_CHECK(v[i] >= 0);
        below_n += v[i] < N;
        below_2pct += v[i] < N / 100 * 2; /* < 0.02 N */
    }
    qsort(v, DRAWS, sizeof(v[0]), cmp_i64);
    double median = (double)v[DRAWS / 2];
    CN_CHECK(fabs(median - 0.0587 * N) < 0.003 * N);
    CN_CHECK(fabs((double)below_n / DRAWS - 0.9726) < 0.003);
    /* P(X < 0.02 N) = 1 - (1 + 0.2)^-1.5 = 0.2393 */
    CN_CHECK(fabs((double)below_2pct / DRAWS - 0.2393) < 0.005);
}

static void test_valgen_sizes(void)
{
    struct bench_rng r;
    bench_rng_init(&r, 5, 5);
    struct bench_valgen v;
    struct bench_valgen_spec fixed = {.groups = {{1, 4096, 4096}}, .ngroups = 1};
    bench_valgen_init(&v, &fixed, 1);
    for (int i = 0; i < 100; i++)
        CN_CHECK_EQ_INT(bench_valgen_size(&v, &r), 4096);
    CN_CHECK_EQ_INT(bench_valgen_min_size(&v), 4096);
    bench_valgen_fini(&v);

    /* uniform_bin 100..199: all within, mean near 149.5, each decile used */
    struct bench_valgen_spec uni = {.groups = {{1, 100, 199}}, .ngroups = 1};
    bench_valgen_init(&v, &uni, 1);
    double sum = 0;
    int deciles[10] = {0};
    enum { N = 100000 };
    for (int i = 0; i < N; i++) {
        int64_t s = bench_valgen_size(&v, &r);
        CN_CHECK(s >= 100 && s <= 199);
        sum += (double)s;
        deciles[(s - 100) / 10]++;
    }
    CN_CHECK(fabs(sum / N - 149.5) < 0.5);
    for (int d = 0; d < 10; d++)
        CN_CHECK(abs(deciles[d] - N / 10) < N / 100);
    bench_valgen_fini(&v);

    /* value_size_groups: weights 9:1 between two disjoint ranges */
    struct bench_valgen_spec groups = {
        .groups = {{9, 10, 20}, {1, 1000000, 2000000}}, .ngroups = 2};
    bench_valgen_init(&v, &groups, 1);
    long big = 0;
    for (int i = 0; i < N; i++) {
        int64_t s = bench_valgen_size(&v, &r);
        CN_CHECK((s >= 10 && s <= 20) || (s >= 1000000 && s <= 2000000));
        big += s >= 1000000;
    }
    CN_CHECK(labs(big - N / 10) < N / 100);
    CN_CHECK_EQ_INT(bench_valgen_min_size(&v), 10);
    bench_valgen_fini(&v);

    /* exponential_bin 1000 + Exp(mean 500): mean near 1500 */
    struct bench_valgen_spec ex = {.groups = {{1, 1000, 0}}, .ngroups = 1, .exp_mean = 500};
    bench_valgen_init(&v, &ex, 1);
    sum = 0;
    for (int i = 0; i < N; i++) {
        int64_t s = bench_valgen_size(&v, &r);
        CN_CHECK(s >= 1000);
        sum += (double)s;
    }
    CN_CHECK(fabs(sum / N - 1500) < 15);
    bench_valgen_fini(&v);
}

static void test_valgen_bodies(void)
{
    struct bench_valgen_spec fixed = {.groups = {{1, 100, 100}}, .ngroups = 1};
    struct bench_valgen v, v2;
    bench_valgen_init(&v, &fixed, 99);
    bench_valgen_init(&v2, &fixed, 99);
    CN_CHECK(memcmp(v.src, v2.src, v.srclen) == 0); /* same seed, same bytes */
    bench_valgen_fini(&v2);
    /* a body read in pieces (wrapping the source) equals the whole, and
     * compare() finds it equal, and finds a flipped byte */
    enum { LEN = 10 << 20 };
    unsigned char *whole = malloc(LEN), *piece = malloc(LEN);
    uint64_t origin = v.srclen - 1000;
    bench_valgen_fill(&v, origin, 0, whole, LEN);
    size_t at = 0;
    while (at < LEN) {
        size_t n = CN_MIN((size_t)LEN - at, (size_t)777777);
        bench_valgen_fill(&v, origin, at, piece + at, n);
        at += n;
    }
    CN_CHECK(memcmp(whole, piece, LEN) == 0);
    CN_CHECK_EQ_INT(bench_valgen_compare(&v, origin, 0, whole, LEN), 0);
    CN_CHECK_EQ_INT(bench_valgen_compare(&v, origin, 5000000, whole + 5000000, 1000), 0);
    whole[4321] ^= 1;
    CN_CHECK(bench_valgen_compare(&v, origin, 0, whole, LEN) != 0);
    /* two origins give different bodies */
    bench_valgen_fill(&v, origin + 1, 0, piece, 4096);
    CN_CHECK(memcmp(piece, whole, 4096) != 0);
    free(whole);
    free(piece);
    bench_valgen_fini(&v);
}

static const struct cn_test_case cases[] = {
    {"keygen_uniform", test_keygen_uniform},
    {"keygen_sequential", test_keygen_sequential},
    {"keygen_partitioned", test_keygen_partitioned},
    {"keygen_pareto", test_keygen_pareto},
    {"valgen_sizes", test_valgen_sizes},
    {"valgen_bodies", test_valgen_bodies},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
