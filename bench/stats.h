/* What one thread measures in one interval, per operation: a latency
 * histogram of the successful requests (microseconds), counts, and bytes.
 * Each event-loop thread owns two of these and writes one while the
 * reporter reads the other (see run.c), so recording takes no lock and
 * allocates nothing. Also the table of distinct errors. */
#ifndef BENCH_STATS_H
#define BENCH_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "cn/hist.h"
#include "settings.h"

/* Latencies above an hour are clamped into the last bucket. */
#define BENCH_STATS_MAX_LATENCY_US 3600000000ULL

struct bench_op_stats {
    struct cn_hist *lat;
    uint64_t ok;
    uint64_t errors;
    uint64_t not_found;         /* 404s counted as ok (not_found_ok) */
    uint64_t bytes_in;
    uint64_t bytes_out;
};

struct bench_stats {
    size_t nops;
    struct bench_op_stats op[BENCH_OPS_MAX];
};

void bench_stats_init(struct bench_stats *st, size_t nops);
void bench_stats_fini(struct bench_stats *st);
void bench_stats_reset(struct bench_stats *st);
void bench_stats_merge(struct bench_stats *dst, const struct bench_stats *src);

/* Records one finished request: its latency when ok. No allocation. */
static inline void bench_stats_ok(struct bench_stats *st, size_t op, uint64_t latency_us)
{
    st->op[op].ok++;
    cn_hist_record(st->op[op].lat, latency_us);
}

/* Sums over all operations. */
uint64_t bench_stats_total_ok(const struct bench_stats *st);
uint64_t bench_stats_total_errors(const struct bench_stats *st);
uint64_t bench_stats_total_bytes_in(const struct bench_stats *st);
uint64_t bench_stats_total_bytes_out(const struct bench_stats *st);

enum bench_error_kind {
    BENCH_ERR_HTTP,             /* code: the HTTP status */
    BENCH_ERR_CURL,             /* code: the CURLcode */
    BENCH_ERR_INTEGRITY,        /* code: 0 body differs, 1 object missing */
};

#define BENCH_ERRORS_MAX 64

#define BENCH_ERROR_SAMPLE 160

struct bench_error_count {
    uint16_t op;
    uint16_t kind;
    int32_t code;
    uint64_t count;
    char sample[BENCH_ERROR_SAMPLE];  /* start of the first such response body */
};

/* Distinct errors and how often; past BENCH_ERRORS_MAX they go to other. */
struct bench_errors {
    struct bench_error_count e[BENCH_ERRORS_MAX];
    size_t n;
    uint64_t other;
};

/* Counts an error; sample (may be NULL) is kept for the first of its kind,
 * printable characters only. */
void bench_errors_add(struct bench_errors *errs, size_t op, enum bench_error_kind kind,
                      int code, uint64_t count, const char *sample);
void bench_errors_merge(struct bench_errors *dst, const struct bench_errors *src);

/* The basho_bench-style name of an error: {get,{http,503}},
 * {put,{curl,operation_timedout}}, {get,integrity_mismatch}. */
void bench_errors_name(const struct bench_error_count *e, const struct bench_settings *s,
                       char *out, size_t outlen);

/* <0, 0 or >0 as the two errors' names ({Op, Reason}) compare in Erlang's
 * term order, the order basho_bench sorts errors.csv in (lists:sort). */
int bench_errors_cmp(const struct bench_error_count *a, const struct bench_error_count *b,
                     const struct bench_settings *s);

#endif
