/* cairn-bench result files: exact basho_bench headers and row formats, the
 * results folder with its `current` link, errors.csv and summary.json. */
#include "report.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cn/test.h"
#include "plot.h"
#include "run.h"

CN_TEST_GLOBALS;

static char *slurp(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void test_report_secs(void)
{
    char b[32];
    static const struct {
        uint64_t us;
        const char *want;
    } cases[] = {
        {10000000, "10.0"}, {10000123, "10.000123"}, {10500000, "10.5"},
        {1000, "0.001"},    {999, "9.99e-4"},        {50, "5.0e-5"},
        {0, "0.0"},         {1, "1.0e-6"},           {123456789, "123.456789"},
        {120000, "0.12"},
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(cases); i++) {
        bench_report_secs(cases[i].us, b, sizeof(b));
        CN_CHECK_EQ_STR(b, cases[i].want);
    }
}

static void test_report_rows(void)
{
    struct bench_stats st;
    bench_stats_init(&st, 2);
    char row[512];
    /* an empty window: zeros and the error count */
    st.op[0].errors = 3;
    bench_report_latency_row(row, sizeof(row), 10000321, 10000321, &st.op[0]);
    CN_CHECK_EQ_STR(row, "10.000321, 10.000321, 0, 0, 0, 0, 0, 0, 0, 0, 3\n");
    /* 1..1000 us: mean 500.5, percentiles by nearest rank, reported as the
     * highest value of their histogram bucket (500 shares one with 501) */
    for (uint64_t v = 1; v <= 1000; v++)
        bench_stats_ok(&st, 0, v);
    bench_report_latency_row(row, sizeof(row), 20000000, 10000000, &st.op[0]);
    CN_CHECK_EQ_STR(row, "20.0, 10.0, 1000, 1, 500.5, 501, 951, 991, 999, 1000, 3\n");
    bench_stats_ok(&st, 1, 7);
    st.op[1].errors = 2;
    bench_report_summary_row(row, sizeof(row), 20000000, 10000000, &st);
    CN_CHECK_EQ_STR(row, "20.0, 10.0, 1006, 1001, 5\n");
    bench_stats_fini(&st);
}

static void test_report_files(void)
{
    char tmpl[] = "/tmp/test_bench_report_XXXXXX";
    char *dir = mkdtemp(tmpl);
    CN_CHECK(dir != NULL);
    struct bench_settings s;
    bench_settings_init(&s);
    s.nops = 2;
    snprintf(s.ops[0].label, sizeof(s.ops[0].label), "get");
    snprintf(s.ops[1].label, sizeof(s.ops[1].label), "update");
    s.ops[1].kind = BENCH_OP_PUT;
    char err[CN_ERR_LEN];
    struct bench_report *r = bench_report_open(dir, &s, err);
    CN_CHECK(r != NULL);
    struct bench_stats st;
    bench_stats_init(&st, 2);
    bench_stats_ok(&st, 0, 100);
    st.op[0].bytes_in = 3000000;
    st.op[1].bytes_out = 1000000;
    st.op[1].errors = 1;
    bench_report_window(r, 10000000, 10000000, &st);
    bench_stats_reset(&st);
    bench_report_window(r, 12500000, 2500000, &st); /* the last, partial window */
    CN_CHECK_EQ_INT(bench_report_close(r), CN_OK);
    CN_CHECK_EQ_STR(slurp(dir, "summary.csv"),
                    "elapsed, window, total, successful, failed\n"
                    "10.0, 10.0, 2, 1, 1\n"
                    "12.5, 2.5, 0, 0, 0\n");
    CN_CHECK_EQ_STR(slurp(dir, "get_latencies.csv"),
                    "elapsed, window, n, min, mean, median, 95th, 99th, 99_9th, max, errors\n"
                    "10.0, 10.0, 1, 100, 100.0, 100, 100, 100, 100, 100, 0\n"
                    "12.5, 2.5, 0, 0, 0, 0, 0, 0, 0, 0, 0\n");
    CN_CHECK_EQ_STR(slurp(dir, "update_latencies.csv"),
                    "elapsed, window, n, min, mean, median, 95th, 99th, 99_9th, max, errors\n"
                    "10.0, 10.0, 0, 0, 0, 0, 0, 0, 0, 0, 1\n"
                    "12.5, 2.5, 0, 0, 0, 0, 0, 0, 0, 0, 0\n");
    CN_CHECK_EQ_STR(slurp(dir, "bytes.csv"),
                    "elapsed, window, bytes_received, bytes_sent, received_per_sec, sent_per_sec\n"
                    "10.0, 10.0, 3000000, 1000000, 300000, 100000\n"
                    "12.5, 2.5, 0, 0, 0, 0\n");

    struct bench_errors errs = {0};
    bench_errors_add(&errs, 0, BENCH_ERR_HTTP, 503, 2, NULL);
    bench_errors_add(&errs, 1, BENCH_ERR_CURL, 28, 1, NULL);
    bench_errors_add(&errs, 0, BENCH_ERR_HTTP, 503, 3, NULL);
    bench_errors_add(&errs, 0, BENCH_ERR_INTEGRITY, 0, 1, NULL);
    bench_errors_add(&errs, 1, BENCH_ERR_CURL, 99, 1, NULL);
    bench_errors_add(&errs, 0, BENCH_ERR_HTTP, 404, 4, NULL);
    bench_errors_add(&errs, 0, BENCH_ERR_INTEGRITY, 1, 2, NULL);
    bench_errors_add(&errs, 1, BENCH_ERR_CURL, 100, 1, NULL);
    bench_errors_add(&errs, 1, BENCH_ERR_HTTP, 500, 1, NULL);
    CN_CHECK_EQ_INT(bench_report_errors(dir, &s, &errs, err), CN_OK);
    /* basho_bench writes lists:sort of the {Key, Count} pairs: Erlang term
     * order, ops by name; atoms before tuples; {curl,_} before {http,_};
     * integers (by value, 99 before 100) before atoms */
    CN_CHECK_EQ_STR(slurp(dir, "errors.csv"),
                    "\"error\",\"count\"\n"
                    "\"{get,integrity_mismatch}\",\"1\"\n"
                    "\"{get,integrity_missing}\",\"2\"\n"
                    "\"{get,{http,404}}\",\"4\"\n"
                    "\"{get,{http,503}}\",\"5\"\n"
                    "\"{update,{curl,99}}\",\"1\"\n"
                    "\"{update,{curl,100}}\",\"1\"\n"
                    "\"{update,{curl,operation_timedout}}\",\"1\"\n"
                    "\"{update,{http,500}}\",\"1\"\n");

    /* summary.json names every op and the errors */
    struct bench_report_run run = {.results_dir = dir, .elapsed_s = 12.5};
    char json[8192] = "";
    FILE *mem = fmemopen(json, sizeof(json) - 1, "w");
    bench_stats_ok(&st, 0, 250);
    bench_report_json(mem, &s, &st, &errs, &run);
    fclose(mem);
    CN_CHECK(strstr(json, "\"elapsed_s\":12.500") != NULL);
    CN_CHECK(strstr(json, "\"get\":{\"ok\":1,") != NULL);
    CN_CHECK(strstr(json, "\"update\":{\"ok\":0,") != NULL);
    CN_CHECK(strstr(json, "\"{get,{http,503}}\":5") != NULL);
    CN_CHECK(strstr(json, "\"p99\":250") != NULL);
    bench_stats_fini(&st);

    /* the table a person reads has one row per op and the errors */
    char table[8192] = "";
    mem = fmemopen(table, sizeof(table) - 1, "w");
    bench_stats_init(&st, 2);
    bench_report_table(mem, &s, &st, &errs, &run);
    fclose(mem);
    CN_CHECK(strstr(table, "\nget ") != NULL && strstr(table, "\nupdate ") != NULL &&
             strstr(table, "\nall ") != NULL && strstr(table, "{get,{http,503}}") != NULL);
    bench_stats_fini(&st);

    const char *names[] = {"summary.csv", "get_latencies.csv", "update_latencies.csv",
                           "bytes.csv", "errors.csv"};
    char path[4096];
    for (size_t i = 0; i < CN_ARRAY_LEN(names); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

static void test_report_results_dir(void)
{
    char tmpl[] = "/tmp/test_bench_dir_XXXXXX";
    char *root = mkdtemp(tmpl);
    CN_CHECK(root != NULL);
    struct bench_settings s;
    bench_settings_init(&s);
    snprintf(s.test_dir, sizeof(s.test_dir), "%s/a/b", root);
    char dir1[2048], dir2[2048], err[CN_ERR_LEN], link[4096], target[4096];
    CN_CHECK_EQ_INT(bench_run_results_dir(&s, dir1, sizeof(dir1), err), CN_OK);
    CN_CHECK_EQ_INT(bench_run_results_dir(&s, dir2, sizeof(dir2), err), CN_OK);
    CN_CHECK(strcmp(dir1, dir2) != 0);
    /* YYYYMMDD_HHMMSS under test_dir, and current -> the latest */
    const char *base = dir1 + strlen(s.test_dir) + 1;
    CN_CHECK(strlen(base) == 15 && base[8] == '_');
    snprintf(link, sizeof(link), "%s/current", s.test_dir);
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    CN_CHECK(n > 0);
    target[n > 0 ? n : 0] = '\0';
    CN_CHECK_EQ_STR(target, dir2 + strlen(s.test_dir) + 1);
    struct stat st;
    CN_CHECK(stat(dir1, &st) == 0 && S_ISDIR(st.st_mode));
    /* --out: that folder as is */
    snprintf(s.out_dir, sizeof(s.out_dir), "%s/flat", root);
    CN_CHECK_EQ_INT(bench_run_results_dir(&s, dir1, sizeof(dir1), err), CN_OK);
    CN_CHECK_EQ_STR(dir1, s.out_dir);
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    CN_CHECK_EQ_INT(system(cmd), 0);
}

static void test_report_plot(void)
{
    char tmpl[] = "/tmp/test_bench_plot_XXXXXX";
    char *dir = mkdtemp(tmpl);
    CN_CHECK(dir != NULL);
    struct bench_settings s;
    bench_settings_init(&s);
    char err[CN_ERR_LEN], path[4096];
    CN_CHECK_EQ_INT(bench_plot_script(dir, &s, err), CN_OK);
    char *gp = slurp(dir, "summary.gp");
    CN_CHECK(gp != NULL && strstr(gp, "'summary.csv' skip 1 using 1:($4/$2)") != NULL &&
             strstr(gp, "'get_latencies.csv' skip 1 using 1:($9/1000)") != NULL);
    /* no gnuplot on PATH: a clear CN_NOTFOUND, not a failure */
    const char *old = getenv("PATH");
    char *saved = old ? strdup(old) : NULL;
    setenv("PATH", dir, 1);
    CN_CHECK_EQ_INT(bench_plot_draw(dir, err), CN_NOTFOUND);
    CN_CHECK(strstr(err, "gnuplot is not installed") != NULL);
    if (saved != NULL) {
        setenv("PATH", saved, 1);
        free(saved);
    }
    snprintf(path, sizeof(path), "%s/summary.gp", dir);
    unlink(path);
    rmdir(dir);
}

static const struct cn_test_case cases[] = {
    {"plot", test_report_plot},
    {"secs", test_report_secs},
    {"rows", test_report_rows},
    {"files", test_report_files},
    {"results_dir", test_report_results_dir},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
