/* A tiny unit-test harness (libevent tinytest, memcached testapp.c): each test
 * file defines a table of { "name", fn } cases and calls cn_test_main().
 * A failed check prints where and marks the case failed; the case goes on. */
#ifndef CN_TEST_H
#define CN_TEST_H

#include <stdio.h>
#include <string.h>

struct cn_test_case {
    const char *name;
    void (*fn)(void);
};

extern int cn_test_failed_checks;

#define CN_CHECK(cond)                                                         \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "  FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);  \
            cn_test_failed_checks++;                                           \
        }                                                                      \
    } while (0)

#define CN_CHECK_EQ_INT(a, b)                                                  \
    do {                                                                       \
        long long cn_a_ = (long long)(a), cn_b_ = (long long)(b);              \
        if (cn_a_ != cn_b_) {                                                  \
            fprintf(stderr, "  FAIL %s:%d: %s == %s (%lld != %lld)\n",         \
                    __FILE__, __LINE__, #a, #b, cn_a_, cn_b_);                 \
            cn_test_failed_checks++;                                           \
        }                                                                      \
    } while (0)

#define CN_CHECK_EQ_STR(a, b)                                                  \
    do {                                                                       \
        const char *cn_a_ = (a), *cn_b_ = (b);                                 \
        if (cn_a_ == NULL || cn_b_ == NULL || strcmp(cn_a_, cn_b_) != 0) {     \
            fprintf(stderr, "  FAIL %s:%d: %s == %s (\"%s\" != \"%s\")\n",     \
                    __FILE__, __LINE__, #a, #b, cn_a_ ? cn_a_ : "(null)",      \
                    cn_b_ ? cn_b_ : "(null)");                                 \
            cn_test_failed_checks++;                                           \
        }                                                                      \
    } while (0)

/* Runs every case (or only those named in argv) and returns the exit code. */
static inline int cn_test_main(const struct cn_test_case *cases, int argc, char **argv)
{
    int failed = 0, ran = 0;
    for (const struct cn_test_case *c = cases; c->name != NULL; c++) {
        if (argc > 1) {
            int want = 0;
            for (int i = 1; i < argc; i++)
                want |= strcmp(argv[i], c->name) == 0;
            if (!want)
                continue;
        }
        int before = cn_test_failed_checks;
        c->fn();
        ran++;
        int bad = cn_test_failed_checks != before;
        failed += bad;
        fprintf(stderr, "%s %s\n", bad ? "FAIL" : "ok  ", c->name);
    }
    fprintf(stderr, "%d/%d cases passed\n", ran - failed, ran);
    return failed == 0 && ran > 0 ? 0 : 1;
}

#define CN_TEST_GLOBALS int cn_test_failed_checks = 0

#endif
