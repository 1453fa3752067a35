/* The result files, byte-compatible with basho_bench where it has them:
 * summary.csv, <op>_latencies.csv, errors.csv; and beyond it bytes.csv
 * (throughput per window), summary.json (the whole run, for sweep scripts)
 * and the final table a person reads. */
#ifndef BENCH_REPORT_H
#define BENCH_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cn/rc.h"
#include "settings.h"
#include "stats.h"

struct bench_report;

/* Opens every per-window file in dir and writes the headers. On error fills
 * err and returns NULL (files already opened are closed). */
struct bench_report *bench_report_open(const char *dir, const struct bench_settings *s,
                                       char err[CN_ERR_LEN]);

/* One row in each per-window file. elapsed_us: since the start; window_us:
 * since the previous row. */
void bench_report_window(struct bench_report *r, uint64_t elapsed_us, uint64_t window_us,
                         const struct bench_stats *w);

/* Flushes and closes; returns CN_IO when a write failed. */
int bench_report_close(struct bench_report *r);

/* errors.csv: "error","count" and one row per distinct error. */
int bench_report_errors(const char *dir, const struct bench_settings *s,
                        const struct bench_errors *errs, char err[CN_ERR_LEN]);

/* What the final summary needs beyond the totals. */
struct bench_report_run {
    const char *results_dir;
    double elapsed_s;
    uint64_t integrity_checked;
    uint64_t integrity_unverifiable;
};

/* The final table, for people. */
void bench_report_table(FILE *out, const struct bench_settings *s, const struct bench_stats *t,
                        const struct bench_errors *errs, const struct bench_report_run *run);

/* The final summary as one JSON object. */
void bench_report_json(FILE *out, const struct bench_settings *s, const struct bench_stats *t,
                       const struct bench_errors *errs, const struct bench_report_run *run);

/* Formatting used by the writers, exposed for tests. */
/* A duration in microseconds as Erlang's ~w prints the float seconds:
 * 10000000 -> "10.0", 10000123 -> "10.000123", 50 -> "5.0e-5". */
void bench_report_secs(uint64_t us, char *out, size_t outlen);
/* One <op>_latencies.csv row (with the newline). */
void bench_report_latency_row(char *out, size_t outlen, uint64_t elapsed_us, uint64_t window_us,
                              const struct bench_op_stats *op);
/* One summary.csv row (with the newline). */
void bench_report_summary_row(char *out, size_t outlen, uint64_t elapsed_us, uint64_t window_us,
                              const struct bench_stats *w);

#define BENCH_REPORT_SUMMARY_HEADER "elapsed, window, total, successful, failed\n"
#define BENCH_REPORT_LATENCY_HEADER \
    "elapsed, window, n, min, mean, median, 95th, 99th, 99_9th, max, errors\n"
#define BENCH_REPORT_ERRORS_HEADER "\"error\",\"count\"\n"
#define BENCH_REPORT_BYTES_HEADER \
    "elapsed, window, bytes_received, bytes_sent, received_per_sec, sent_per_sec\n"

#endif
