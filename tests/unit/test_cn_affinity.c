/* Unit tests of CPU lists (common/affinity.c): the kernel's notation is
 * read exactly, anything else is refused with nothing set, and applying a
 * list restricts the threads started afterwards. */
#include "cn/affinity.h"

#include <pthread.h>
#include <string.h>

#include "cn/rc.h"
#include "cn/test.h"

CN_TEST_GLOBALS;

static void test_parse_good(void)
{
    cpu_set_t set;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(cn_cpu_list_parse("", &set, err), CN_OK);
    CN_CHECK_EQ_INT(CPU_COUNT(&set), 0);
    CN_CHECK_EQ_INT(cn_cpu_list_parse("  ", &set, err), CN_OK);
    CN_CHECK_EQ_INT(CPU_COUNT(&set), 0);
    CN_CHECK_EQ_INT(cn_cpu_list_parse("3", &set, err), CN_OK);
    CN_CHECK(CPU_COUNT(&set) == 1 && CPU_ISSET(3, &set));
    CN_CHECK_EQ_INT(cn_cpu_list_parse("0,2,4-7", &set, err), CN_OK);
    CN_CHECK_EQ_INT(CPU_COUNT(&set), 6);
    CN_CHECK(CPU_ISSET(0, &set) && !CPU_ISSET(1, &set) && CPU_ISSET(2, &set) &&
             !CPU_ISSET(3, &set) && CPU_ISSET(4, &set) && CPU_ISSET(7, &set) &&
             !CPU_ISSET(8, &set));
    CN_CHECK_EQ_INT(cn_cpu_list_parse(" 1 , 5-5 ", &set, err), CN_OK);
    CN_CHECK(CPU_COUNT(&set) == 2 && CPU_ISSET(1, &set) && CPU_ISSET(5, &set));
    CN_CHECK_EQ_INT(cn_cpu_list_parse("1023", &set, err), CN_OK);
    CN_CHECK(CPU_ISSET(1023, &set));
}

static void test_parse_bad(void)
{
    static const char *const bad[] = {
        ",", "1,", ",1", "1,,2", "-1", "1-", "3-1", "a", "1a", "0x1", "1 2", "1024",
        "0-1024", "99999999999999999999", "1;2", "+1", "1-2-3", "1\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cpu_set_t set;
        char err[CN_ERR_LEN] = "";
        CPU_SET(0, &set);
        int rc = cn_cpu_list_parse(bad[i], &set, err);
        if (rc != CN_INVAL)
            fprintf(stderr, "accepted \"%s\"\n", bad[i]);
        CN_CHECK_EQ_INT(rc, CN_INVAL);
        CN_CHECK_EQ_INT(CPU_COUNT(&set), 0);
        CN_CHECK(strstr(err, "bad CPU list") != NULL);
    }
}

static void *test_thread_cpus(void *arg)
{
    cpu_set_t *got = arg;
    sched_getaffinity(0, sizeof(*got), got);
    return NULL;
}

static void test_apply(void)
{
    char err[CN_ERR_LEN];
    cpu_set_t before, got;
    CN_CHECK_EQ_INT(sched_getaffinity(0, sizeof(before), &before), 0);
    /* empty: nothing changes */
    CN_CHECK_EQ_INT(cn_cpu_affinity_apply("", err), CN_OK);
    CN_CHECK_EQ_INT(sched_getaffinity(0, sizeof(got), &got), 0);
    CN_CHECK(CPU_EQUAL(&before, &got));
    CN_CHECK_EQ_INT(cn_cpu_affinity_apply("x", err), CN_INVAL);
    /* a CPU this process may not use (the highest number) is refused */
    if (!CPU_ISSET(1023, &before)) {
        CN_CHECK_EQ_INT(cn_cpu_affinity_apply("1023", err), CN_ERR);
        CN_CHECK(strstr(err, "cannot run on CPUs") != NULL);
    }
    /* the lowest CPU we may use: this thread and a thread started later */
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, &before))
            first = c;
    char list[16];
    snprintf(list, sizeof(list), "%d", first);
    CN_CHECK_EQ_INT(cn_cpu_affinity_apply(list, err), CN_OK);
    pthread_t t;
    CPU_ZERO(&got);
    CN_CHECK_EQ_INT(pthread_create(&t, NULL, test_thread_cpus, &got), 0);
    pthread_join(t, NULL);
    CN_CHECK(CPU_COUNT(&got) == 1 && CPU_ISSET(first, &got));
    sched_setaffinity(0, sizeof(before), &before);
}

static const struct cn_test_case cases[] = {
    {"parse_good", test_parse_good},
    {"parse_bad", test_parse_bad},
    {"apply", test_apply},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
