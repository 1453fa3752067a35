/* Unit tests of the connection cap's arithmetic (gateway/http/accept.c): the
 * fds kept back and the cap derived from the fd limit. */
#include "accept.h"

#include "cn/rc.h"
#include "cn/test.h"

CN_TEST_GLOBALS;

static void test_accept_derive(void)
{
    static const struct {
        uint64_t nofile, reserve, want;
    } cases[] = {
        {1048576, 88, 1048576 - 88},   /* a container's usual limit */
        {65536, 1000, 64536},
        {4096 + 88, 88, 4096},         /* raised to exactly the minimum */
        {1024, 88, 936},               /* a hard limit of 1024: below 4096 */
        {256, 88, 168},                /* the security test's limit */
        {100, 88, 50},                 /* the reserve would take most: half */
        {1, 88, 1},
        {0, 88, 1},
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(cases); i++)
        CN_CHECK_EQ_INT(gw_accept_derive_max(cases[i].nofile, cases[i].reserve), cases[i].want);
}

static void test_accept_reserve(void)
{
    /* measured with 1-3 nodes and 2-4 threads: 26, 34, 56 fds in use */
    CN_CHECK(gw_accept_reserve(2, 1) >= 2 * 26);
    CN_CHECK(gw_accept_reserve(2, 3) >= 2 * 34);
    CN_CHECK(gw_accept_reserve(4, 3) >= 56 + 32);
    CN_CHECK(gw_accept_reserve(64, 100) > gw_accept_reserve(64, 10));
    CN_CHECK(gw_accept_reserve(256, 1000) < 2000000);   /* no overflow, sane */
}

static void test_accept_counting(void)
{
    struct gw_accept *a = gw_accept_new(3, 2);
    CN_CHECK_EQ_INT(gw_accept_max(a), 3);
    CN_CHECK_EQ_INT(gw_accept_open(a), 0);
    gw_accept_free(a);
    a = gw_accept_new(0, 1);   /* a cap of 0 would never accept: at least 1 */
    CN_CHECK_EQ_INT(gw_accept_max(a), 1);
    gw_accept_free(a);
}

static const struct cn_test_case cases[] = {
    {"derive", test_accept_derive},
    {"reserve", test_accept_reserve},
    {"counting", test_accept_counting},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
