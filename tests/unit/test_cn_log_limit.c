/* Unit tests of the log rate limit (common/log_limit.c) and of its use by
 * cn_log_write (common/log.c): bursts, windows, independent sites, reports
 * of suppressed lines, collisions, and the lines that reach stderr. */
#include "cn/log_limit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cn/log.h"
#include "cn/rc.h"
#include "cn/test.h"

CN_TEST_GLOBALS;

static struct cn_log_limit lim;   /* 20 KB: not on the stack */

/* One line of a scripted case: site index, time, what must happen. */
struct step {
    int site;          /* index into sites[] */
    uint64_t t;        /* ms */
    int write;         /* expected verdict */
    uint64_t rep_n;    /* expected report carried by the verdict (0: none) */
    int rep_site;      /* its site, when rep_n > 0 */
};

static const char sites[2][8] = {"a.c:1", "b.c:2"};

struct script {
    const char *name;
    uint64_t window;
    uint32_t burst;
    struct step steps[12];
    size_t n;
};

static const struct script scripts[] = {
    {"burst then suppress, report at the next window", 100, 2,
     {{0, 0, 1, 0, 0}, {0, 10, 1, 0, 0}, {0, 20, 0, 0, 0}, {0, 99, 0, 0, 0},
      {0, 100, 1, 2, 0}, {0, 101, 1, 0, 0}, {0, 102, 0, 0, 0}, {0, 500, 1, 1, 0}},
     8},
    {"sites are independent", 100, 1,
     {{0, 0, 1, 0, 0}, {0, 1, 0, 0, 0}, {1, 2, 1, 0, 0}, {1, 3, 0, 0, 0},
      {0, 4, 0, 0, 0}, {1, 150, 1, 1, 1}, {0, 150, 1, 2, 0}},
     7},
    {"burst 0 writes everything", 100, 0,
     {{0, 0, 1, 0, 0}, {0, 0, 1, 0, 0}, {0, 0, 1, 0, 0}, {0, 0, 1, 0, 0}},
     4},
    {"a quiet window reports nothing", 50, 1,
     {{0, 0, 1, 0, 0}, {0, 60, 1, 0, 0}, {0, 61, 0, 0, 0}, {0, 200, 1, 1, 0},
      {0, 300, 1, 0, 0}},
     5},
};

static void test_log_limit_scripts(void)
{
    for (size_t k = 0; k < CN_ARRAY_LEN(scripts); k++) {
        const struct script *sc = &scripts[k];
        cn_log_limit_init(&lim, sc->window, sc->burst);
        for (size_t i = 0; i < sc->n; i++) {
            const struct step *st = &sc->steps[i];
            struct cn_log_limit_report rep;
            int w = cn_log_limit_check(&lim, sites[st->site], st->t, &rep);
            if (w != st->write || rep.n != st->rep_n ||
                (st->rep_n > 0 && rep.site != sites[st->rep_site])) {
                fprintf(stderr, "  %s: step %zu: write %d rep %llu (want %d %llu)\n", sc->name,
                        i, w, (unsigned long long)rep.n, st->write,
                        (unsigned long long)st->rep_n);
                cn_test_failed_checks++;
            }
        }
    }
}

static void test_log_limit_due(void)
{
    struct cn_log_limit_report reps[4];
    cn_log_limit_init(&lim, 100, 1);
    struct cn_log_limit_report rep;
    CN_CHECK_EQ_INT(cn_log_limit_check(&lim, sites[0], 0, &rep), 1);
    for (int i = 0; i < 5; i++)
        CN_CHECK_EQ_INT(cn_log_limit_check(&lim, sites[0], 10, &rep), 0);
    CN_CHECK_EQ_INT(cn_log_limit_due(&lim, 50, reps, 4), 0);    /* window still open */
    CN_CHECK_EQ_INT(cn_log_limit_due(&lim, 120, reps, 4), 1);   /* the site went quiet */
    CN_CHECK(reps[0].site == sites[0]);
    CN_CHECK_EQ_INT(reps[0].n, 5);
    CN_CHECK_EQ_INT(lim.pending, 0);
    CN_CHECK_EQ_INT(cn_log_limit_due(&lim, 500, reps, 4), 0);   /* reported once */
    CN_CHECK_EQ_INT(cn_log_limit_check(&lim, sites[0], 501, &rep), 1);
    CN_CHECK_EQ_INT(rep.n, 0);
    /* the sweep runs at most once per window */
    CN_CHECK_EQ_INT(cn_log_limit_check(&lim, sites[0], 502, &rep), 0);
    CN_CHECK_EQ_INT(cn_log_limit_due(&lim, 560, reps, 4), 0);   /* swept: window open */
    CN_CHECK_EQ_INT(cn_log_limit_due(&lim, 610, reps, 4), 0);   /* due, but swept at 560 */
    CN_CHECK_EQ_INT(cn_log_limit_due(&lim, 700, reps, 4), 1);
}

/* More sites than slots: sets overflow and evict, yet every suppressed
 * line is reported exactly once (by a check or by a sweep). */
static void test_log_limit_collisions(void)
{
    enum { N_SITES = 3 * CN_LOG_LIMIT_SLOTS, LINES = 5 };
    static char many[N_SITES];
    struct cn_log_limit_report rep, reps[CN_LOG_LIMIT_SLOTS];
    uint64_t dropped = 0, reported = 0;
    cn_log_limit_init(&lim, 1000, 2);
    for (int round = 0; round < 3; round++) {
        for (int s = 0; s < N_SITES; s++)
            for (int i = 0; i < LINES; i++) {
                dropped += !cn_log_limit_check(&lim, &many[s], (uint64_t)round * 10, &rep);
                reported += rep.n;
            }
    }
    size_t n = cn_log_limit_due(&lim, 5000, reps, CN_ARRAY_LEN(reps));
    for (size_t i = 0; i < n; i++)
        reported += reps[i].n;
    CN_CHECK(dropped > 0);
    CN_CHECK_EQ_INT(reported, dropped);
    CN_CHECK_EQ_INT(lim.pending, 0);
    /* one flooding site keeps its slot among many occasional ones */
    cn_log_limit_init(&lim, 1000, 2);
    uint64_t flood_written = 0;
    for (int i = 0; i < 1000; i++) {
        flood_written += cn_log_limit_check(&lim, &many[0], 1, &rep);
        cn_log_limit_check(&lim, &many[1 + i % 200], 1, &rep);
    }
    CN_CHECK(flood_written < 50);
}

/* Reads what the process wrote to fd (a temp file) into buf. */
static size_t read_back(FILE *f, char *buf, size_t len)
{
    fflush(f);
    rewind(f);
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    return n;
}

static size_t count_lines(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

static void test_log_write_limited(void)
{
    FILE *f = tmpfile();
    CN_CHECK(f != NULL);
    if (f == NULL)
        return;
    int saved = dup(STDERR_FILENO);
    dup2(fileno(f), STDERR_FILENO);
    cn_log_init("test", CN_LOG_DEBUG);
    cn_log_set_limit(40, 3);
    for (int i = 0; i < 1000; i++)
        cn_warn("flood %d", i);
    for (int i = 0; i < 20; i++)
        cn_debug("debug %d", i);      /* never limited */
    usleep(60 * 1000);
    cn_warn("after the window");
    dup2(saved, STDERR_FILENO);
    close(saved);
    cn_log_set_limit(0, 0);
    static char buf[64 * 1024];
    read_back(f, buf, sizeof(buf));
    fclose(f);
    CN_CHECK_EQ_INT(count_lines(buf, " WARN flood "), 3);
    CN_CHECK_EQ_INT(count_lines(buf, " DEBUG debug "), 20);
    CN_CHECK_EQ_INT(count_lines(buf, "after the window"), 1);
    CN_CHECK_EQ_INT(count_lines(buf, "997 similar lines suppressed (unit/test_cn_log_limit.c:"),
                    1);
}

static const struct cn_test_case cases[] = {
    {"scripts", test_log_limit_scripts},
    {"due", test_log_limit_due},
    {"collisions", test_log_limit_collisions},
    {"write_limited", test_log_write_limited},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
