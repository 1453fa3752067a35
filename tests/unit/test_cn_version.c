/* Unit tests of the order of record versions (common/version.c): ts decides,
 * ver breaks a tie, equal is not newer, and the extremes of u64 compare
 * without wrapping. */
#include "cn/version.h"

#include <stdint.h>
#include <stdlib.h>

#include "cn/test.h"

CN_TEST_GLOBALS;

static void test_version_ts_decides(void)
{
    CN_CHECK_EQ_INT(cn_version_cmp(2, 0, 1, 9), 1);
    CN_CHECK_EQ_INT(cn_version_cmp(1, 9, 2, 0), -1);
    CN_CHECK(cn_version_newer(2, 0, 1, 9));
    CN_CHECK(!cn_version_newer(1, 9, 2, 0));
}

static void test_version_ver_breaks_tie(void)
{
    CN_CHECK_EQ_INT(cn_version_cmp(5, 3, 5, 2), 1);
    CN_CHECK_EQ_INT(cn_version_cmp(5, 2, 5, 3), -1);
    CN_CHECK(cn_version_newer(5, 3, 5, 2));
    CN_CHECK(!cn_version_newer(5, 2, 5, 3));
}

static void test_version_equal(void)
{
    CN_CHECK_EQ_INT(cn_version_cmp(7, 7, 7, 7), 0);
    CN_CHECK(!cn_version_newer(7, 7, 7, 7));
    CN_CHECK_EQ_INT(cn_version_cmp(0, 0, 0, 0), 0);
}

static void test_version_extremes(void)
{
    /* a difference of more than INT64_MAX must not flip the sign */
    CN_CHECK_EQ_INT(cn_version_cmp(UINT64_MAX, 0, 0, UINT64_MAX), 1);
    CN_CHECK_EQ_INT(cn_version_cmp(0, UINT64_MAX, UINT64_MAX, 0), -1);
    CN_CHECK_EQ_INT(cn_version_cmp(1, UINT64_MAX, 1, 0), 1);
    CN_CHECK(cn_version_newer(1, UINT64_MAX, 1, 0));
}

static void test_version_antisymmetric(void)
{
    /* cmp(a, b) == -cmp(b, a), and newer agrees with cmp, on a small grid */
    for (uint64_t t1 = 0; t1 < 4; t1++)
        for (uint64_t v1 = 0; v1 < 4; v1++)
            for (uint64_t t2 = 0; t2 < 4; t2++)
                for (uint64_t v2 = 0; v2 < 4; v2++) {
                    int c = cn_version_cmp(t1, v1, t2, v2);
                    CN_CHECK_EQ_INT(c, -cn_version_cmp(t2, v2, t1, v1));
                    CN_CHECK_EQ_INT(cn_version_newer(t1, v1, t2, v2), c > 0);
                    CN_CHECK_EQ_INT(c, t1 != t2 ? (t1 > t2 ? 1 : -1)
                                                : (v1 > v2) - (v1 < v2));
                }
}

static const struct cn_test_case cases[] = {
    {"ts_decides", test_version_ts_decides},
    {"ver_breaks_tie", test_version_ver_breaks_tie},
    {"equal", test_version_equal},
    {"extremes", test_version_extremes},
    {"antisymmetric", test_version_antisymmetric},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
