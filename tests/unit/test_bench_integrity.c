/* The integrity table: verdicts for reads that did and did not race a write. */
#include "integrity.h"

#include <string.h>

#include "cn/test.h"

CN_TEST_GLOBALS;

static const unsigned char A[16] = "AAAAAAAAAAAAAAA";
static const unsigned char B[16] = "BBBBBBBBBBBBBBB";

static void put(struct bench_integrity *t, int64_t key, const unsigned char *md5, int64_t size)
{
    bench_integrity_write_begin(t, key);
    bench_integrity_write_end(t, key, 1, 0, md5, size, 7);
}

static void test_integrity_quiet(void)
{
    struct bench_integrity *t = bench_integrity_new(100);
    struct bench_integrity_snap snap;
    /* never written: nothing to say */
    bench_integrity_peek(t, 5, &snap);
    CN_CHECK_EQ_INT(bench_integrity_judge(t, 5, &snap, 0, A, 10), BENCH_INTEGRITY_UNVERIFIABLE);
    put(t, 5, A, 10);
    bench_integrity_peek(t, 5, &snap);
    CN_CHECK(snap.state == BENCH_INTEGRITY_PRESENT && snap.size == 10 && snap.origin == 7);
    CN_CHECK_EQ_INT(bench_integrity_judge(t, 5, &snap, 0, A, 10), BENCH_INTEGRITY_OK);
    CN_CHECK_EQ_INT(bench_integrity_judge(t, 5, &snap, 0, B, 10), BENCH_INTEGRITY_MISMATCH);
    CN_CHECK_EQ_INT(bench_integrity_judge(t, 5, &snap, 0, A, 9), BENCH_INTEGRITY_MISMATCH);
    CN_CHECK_EQ_INT(bench_integrity_judge(t, 5, &snap, 1, A, 0), BENCH_INTEGRITY_MISSING);
    CN_CHECK_EQ_INT(bench_integrity_judge_range(t, 5, &snap, 0, 1), BENCH_INTEGRITY_OK);
    CN_CHECK_EQ_INT(bench_integrity_judge_range(t, 5, &snap, 0, 0), BENCH_INTEGRITY_MISMATCH);
    /* deleted: 404 is right, a body is wrong */
    bench_integrity_write_begin(t, 5);
    bench_integrity_write_end(t, 5, 1, 1, NULL, 0, 0);
    bench_integrity_peek(t, 5, &snap);
    CN_CHECK_EQ_INT(bench_integrity_judge(t, 5, &snap, 1, A, 0), BENCH_INTEGRITY_OK);
    CN_CHECK_EQ_INT(bench_integrity_judge(t, 5, &snap, 0, A, 10), BENCH_INTEGRITY_MISMATCH);
    /* a failed write leaves the key unknown */
    bench_integrity_write_begin(t, 5);
    bench_integrity_write_end(t, 5, 0, 0, B, 10, 0);
    bench_integrity_peek(t, 5, &snap);
    CN_CHECK_EQ_INT(bench_integrity_judge(t, 5, &snap, 0, A, 10), BENCH_INTEGRITY_UNVERIFIABLE);
    /* keys outside the table are not tracked */
    bench_integrity_peek(t, 100, &snap);
    CN_CHECK(!snap.tracked);
    put(t, 100, A, 1);
    CN_CHECK_EQ_INT(bench_integrity_judge(t, 100, &snap, 0, B, 1), BENCH_INTEGRITY_UNVERIFIABLE);
    bench_integrity_free(t);
}

static void test_integrity_races(void)
{
    struct bench_integrity *t = bench_integrity_new(10);
    struct bench_integrity_snap snap;
    put(t, 1, A, 10);
    /* a GET starts, a PUT of B runs meanwhile: A or B is fine, C is not
     * provable, and nothing is called a mismatch */
    bench_integrity_peek(t, 1, &snap);
    bench_integrity_write_begin(t, 1);
    CN_CHECK_EQ_INT(bench_integrity_judge(t, 1, &snap, 0, A, 10), BENCH_INTEGRITY_OK);
    bench_integrity_write_end(t, 1, 1, 0, B, 10, 3);
    CN_CHECK_EQ_INT(bench_integrity_judge(t, 1, &snap, 0, B, 10), BENCH_INTEGRITY_OK);
    static const unsigned char C[16] = "CCCCCCCCCCCCCCC";
    CN_CHECK_EQ_INT(bench_integrity_judge(t, 1, &snap, 0, C, 10), BENCH_INTEGRITY_UNVERIFIABLE);
    CN_CHECK_EQ_INT(bench_integrity_judge(t, 1, &snap, 1, C, 0), BENCH_INTEGRITY_UNVERIFIABLE);
    CN_CHECK_EQ_INT(bench_integrity_judge_range(t, 1, &snap, 0, 0), BENCH_INTEGRITY_UNVERIFIABLE);
    /* a GET that starts while a PUT is in flight is not judged on old data */
    bench_integrity_write_begin(t, 1);
    bench_integrity_peek(t, 1, &snap);
    CN_CHECK_EQ_INT(snap.writers, 1);
    bench_integrity_write_end(t, 1, 1, 0, A, 10, 3);
    CN_CHECK_EQ_INT(bench_integrity_judge(t, 1, &snap, 0, C, 10), BENCH_INTEGRITY_UNVERIFIABLE);
    CN_CHECK_EQ_INT(bench_integrity_judge(t, 1, &snap, 0, A, 10), BENCH_INTEGRITY_OK);
    /* overlapping writes: the server may have applied them in either order,
     * so the result is unknown until a write that overlapped nothing */
    bench_integrity_write_begin(t, 2);
    bench_integrity_write_begin(t, 2);
    bench_integrity_write_end(t, 2, 1, 1, NULL, 0, 0);  /* DELETE answered first */
    bench_integrity_write_end(t, 2, 1, 0, A, 10, 3);    /* PUT answered last */
    bench_integrity_peek(t, 2, &snap);
    CN_CHECK(snap.state == BENCH_INTEGRITY_UNKNOWN);
    CN_CHECK_EQ_INT(bench_integrity_judge(t, 2, &snap, 1, A, 0), BENCH_INTEGRITY_UNVERIFIABLE);
    put(t, 2, B, 10);
    bench_integrity_peek(t, 2, &snap);
    CN_CHECK(snap.state == BENCH_INTEGRITY_PRESENT);
    CN_CHECK_EQ_INT(bench_integrity_judge(t, 2, &snap, 0, B, 10), BENCH_INTEGRITY_OK);
    bench_integrity_free(t);
}

static const struct cn_test_case cases[] = {
    {"quiet", test_integrity_quiet},
    {"races", test_integrity_races},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
