/* Result files and the final summary (see report.h). */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "cn/alloc.h"

struct bench_report {
    FILE *summary;
    FILE *bytes;
    FILE *lat[BENCH_OPS_MAX];
    size_t nops;
    int failed;
};

void bench_report_secs(uint64_t us, char *out, size_t outlen)
{
    if (us == 0) {
        snprintf(out, outlen, "0.0");
        return;
    }
    if (us >= 1000) {
        /* decimal, trailing zeros trimmed but one digit kept after '.' */
        int n = snprintf(out, outlen, "%" PRIu64 ".%06" PRIu64, us / 1000000, us % 1000000);
        if (n <= 0 || (size_t)n >= outlen)
            return;
        while (n > 2 && out[n - 1] == '0' && out[n - 2] != '.')
            out[--n] = '\0';
        return;
    }
    /* below a millisecond Erlang switches to d.ddde-N */
    char digits[8];
    int nd = snprintf(digits, sizeof(digits), "%" PRIu64, us);
    int exp = (nd - 1) - 6;
    while (nd > 1 && digits[nd - 1] == '0')
        digits[--nd] = '\0';
    snprintf(out, outlen, "%c.%se%d", digits[0], nd > 1 ? digits + 1 : "0", exp);
}

void bench_report_latency_row(char *out, size_t outlen, uint64_t elapsed_us, uint64_t window_us,
                              const struct bench_op_stats *op)
{
    char el[32], win[32];
    bench_report_secs(elapsed_us, el, sizeof(el));
    bench_report_secs(window_us, win, sizeof(win));
    const struct cn_hist *h = op->lat;
    if (cn_hist_count(h) == 0) {
        snprintf(out, outlen, "%s, %s, 0, 0, 0, 0, 0, 0, 0, 0, %" PRIu64 "\n", el, win,
                 op->errors);
        return;
    }
    snprintf(out, outlen,
             "%s, %s, %" PRIu64 ", %" PRIu64 ", %.1f, %" PRIu64 ", %" PRIu64 ", %" PRIu64
             ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 "\n",
             el, win, cn_hist_count(h), cn_hist_min(h), cn_hist_mean(h),
             cn_hist_percentile(h, 50), cn_hist_percentile(h, 95), cn_hist_percentile(h, 99),
             cn_hist_percentile(h, 99.9), cn_hist_max(h), op->errors);
}

void bench_report_summary_row(char *out, size_t outlen, uint64_t elapsed_us, uint64_t window_us,
                              const struct bench_stats *w)
{
    char el[32], win[32];
    bench_report_secs(elapsed_us, el, sizeof(el));
    bench_report_secs(window_us, win, sizeof(win));
    uint64_t ok = bench_stats_total_ok(w), bad = bench_stats_total_errors(w);
    snprintf(out, outlen, "%s, %s, %" PRIu64 ", %" PRIu64 ", %" PRIu64 "\n", el, win, ok + bad,
             ok, bad);
}

static FILE *bench_report_create(const char *dir, const char *name, const char *header,
                                 char err[CN_ERR_LEN])
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        snprintf(err, CN_ERR_LEN, "%s: %s", path, strerror(errno));
        return NULL;
    }
    fputs(header, f);
    return f;
}

struct bench_report *bench_report_open(const char *dir, const struct bench_settings *s,
                                       char err[CN_ERR_LEN])
{
    struct bench_report *r = cn_calloc(1, sizeof(*r));
    r->nops = s->nops;
    r->summary = bench_report_create(dir, "summary.csv", BENCH_REPORT_SUMMARY_HEADER, err);
    if (r->summary == NULL)
        goto fail;
    r->bytes = bench_report_create(dir, "bytes.csv", BENCH_REPORT_BYTES_HEADER, err);
    if (r->bytes == NULL)
        goto fail;
    for (size_t i = 0; i < s->nops; i++) {
        char name[BENCH_LABEL_LEN + 32];
        snprintf(name, sizeof(name), "%s_latencies.csv", s->ops[i].label);
        r->lat[i] = bench_report_create(dir, name, BENCH_REPORT_LATENCY_HEADER, err);
        if (r->lat[i] == NULL)
            goto fail;
    }
    return r;
fail:
    bench_report_close(r);
    return NULL;
}

void bench_report_window(struct bench_report *r, uint64_t elapsed_us, uint64_t window_us,
                         const struct bench_stats *w)
{
    char row[512], el[32], win[32];
    bench_report_summary_row(row, sizeof(row), elapsed_us, window_us, w);
    fputs(row, r->summary);
    for (size_t i = 0; i < r->nops; i++) {
        bench_report_latency_row(row, sizeof(row), elapsed_us, window_us, &w->op[i]);
        fputs(row, r->lat[i]);
    }
    uint64_t in = bench_stats_total_bytes_in(w), out = bench_stats_total_bytes_out(w);
    double secs = window_us > 0 ? (double)window_us / 1e6 : 1.0;
    bench_report_secs(elapsed_us, el, sizeof(el));
    bench_report_secs(window_us, win, sizeof(win));
    fprintf(r->bytes, "%s, %s, %" PRIu64 ", %" PRIu64 ", %.0f, %.0f\n", el, win, in, out,
            (double)in / secs, (double)out / secs);
    /* a reader (a sweep script, tail -f) sees each window as it lands */
    fflush(r->summary);
    fflush(r->bytes);
    for (size_t i = 0; i < r->nops; i++)
        fflush(r->lat[i]);
}

static void bench_report_fclose(struct bench_report *r, FILE **f)
{
    if (*f == NULL)
        return;
    if (ferror(*f) || fclose(*f) != 0)
        r->failed = 1;
    *f = NULL;
}

int bench_report_close(struct bench_report *r)
{
    if (r == NULL)
        return CN_OK;
    bench_report_fclose(r, &r->summary);
    bench_report_fclose(r, &r->bytes);
    for (size_t i = 0; i < BENCH_OPS_MAX; i++)
        bench_report_fclose(r, &r->lat[i]);
    int rc = r->failed ? CN_IO : CN_OK;
    cn_free(r);
    return rc;
}

int bench_report_errors(const char *dir, const struct bench_settings *s,
                        const struct bench_errors *errs, char err[CN_ERR_LEN])
{
    FILE *f = bench_report_create(dir, "errors.csv", BENCH_REPORT_ERRORS_HEADER, err);
    if (f == NULL)
        return CN_IO;
    /* sorted as basho_bench sorts them (Erlang term order); at most 64 */
    const struct bench_error_count *order[BENCH_ERRORS_MAX];
    for (size_t i = 0; i < errs->n; i++) {
        size_t j = i;
        for (; j > 0 && bench_errors_cmp(order[j - 1], &errs->e[i], s) > 0; j--)
            order[j] = order[j - 1];
        order[j] = &errs->e[i];
    }
    for (size_t i = 0; i < errs->n; i++) {
        char name[128];
        bench_errors_name(order[i], s, name, sizeof(name));
        fprintf(f, "\"%s\",\"%" PRIu64 "\"\n", name, order[i]->count);
    }
    if (errs->other)
        fprintf(f, "\"other\",\"%" PRIu64 "\"\n", errs->other);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        snprintf(err, CN_ERR_LEN, "%s/errors.csv: write failed", dir);
        return CN_IO;
    }
    return CN_OK;
}

/* Sums the per-operation stats into one (for the "all" row). */
static void bench_report_total(const struct bench_stats *t, struct bench_stats *all)
{
    bench_stats_init(all, 1);
    for (size_t i = 0; i < t->nops; i++) {
        cn_hist_merge(all->op[0].lat, t->op[i].lat);
        all->op[0].ok += t->op[i].ok;
        all->op[0].errors += t->op[i].errors;
        all->op[0].not_found += t->op[i].not_found;
        all->op[0].bytes_in += t->op[i].bytes_in;
        all->op[0].bytes_out += t->op[i].bytes_out;
    }
}

static void bench_report_table_row(FILE *out, const char *name, const struct bench_op_stats *o,
                                   double secs)
{
    const struct cn_hist *h = o->lat;
    double mb = (double)(o->bytes_in + o->bytes_out) / 1e6 / secs;
    fprintf(out,
            "%-12s %10" PRIu64 " %8" PRIu64 " %9" PRIu64 " %11.1f %9.1f %9.1f %8" PRIu64
            " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %9" PRIu64 "\n",
            name, o->ok, o->errors, o->not_found, (double)o->ok / secs, mb, cn_hist_mean(h),
            cn_hist_percentile(h, 50), cn_hist_percentile(h, 95), cn_hist_percentile(h, 99),
            cn_hist_percentile(h, 99.9), cn_hist_max(h));
}

void bench_report_table(FILE *out, const struct bench_settings *s, const struct bench_stats *t,
                        const struct bench_errors *errs, const struct bench_report_run *run)
{
    double secs = run->elapsed_s > 0 ? run->elapsed_s : 1;
    fprintf(out, "\n%-12s %10s %8s %9s %11s %9s %9s %8s %8s %8s %8s %9s\n", "op", "ok", "errors",
            "not_found", "ops/s", "MB/s", "mean_us", "p50_us", "p95_us", "p99_us", "p99.9_us",
            "max_us");
    for (size_t i = 0; i < t->nops; i++)
        bench_report_table_row(out, s->ops[i].label, &t->op[i], secs);
    if (t->nops > 1) {
        struct bench_stats all;
        bench_report_total(t, &all);
        bench_report_table_row(out, "all", &all.op[0], secs);
        bench_stats_fini(&all);
    }
    for (size_t i = 0; i < errs->n; i++) {
        char name[128];
        bench_errors_name(&errs->e[i], s, name, sizeof(name));
        fprintf(out, "error %-40s %" PRIu64 "%s%s\n", name, errs->e[i].count,
                errs->e[i].sample[0] ? "  e.g. " : "", errs->e[i].sample);
    }
    if (s->integrity)
        fprintf(out, "integrity: %" PRIu64 " reads verified, %" PRIu64
                     " unverifiable (raced a write or key never written)\n",
                run->integrity_checked, run->integrity_unverifiable);
    fprintf(out, "%.1f s, %d workers, results in %s\n", run->elapsed_s, s->concurrent,
            run->results_dir);
}

static void bench_report_json_op(FILE *out, const char *name, const struct bench_op_stats *o,
                                 double secs)
{
    const struct cn_hist *h = o->lat;
    fprintf(out,
            "\"%s\":{\"ok\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"not_found\":%" PRIu64
            ",\"ops_per_sec\":%.3f,\"bytes_received\":%" PRIu64 ",\"bytes_sent\":%" PRIu64
            ",\"bytes_per_sec\":%.0f,\"latency_us\":{\"min\":%" PRIu64 ",\"mean\":%.1f"
            ",\"p50\":%" PRIu64 ",\"p95\":%" PRIu64 ",\"p99\":%" PRIu64 ",\"p99_9\":%" PRIu64
            ",\"max\":%" PRIu64 "}}",
            name, o->ok, o->errors, o->not_found, (double)o->ok / secs, o->bytes_in, o->bytes_out,
            (double)(o->bytes_in + o->bytes_out) / secs, cn_hist_min(h), cn_hist_mean(h),
            cn_hist_percentile(h, 50), cn_hist_percentile(h, 95), cn_hist_percentile(h, 99),
            cn_hist_percentile(h, 99.9), cn_hist_max(h));
}

/* Writes s as a JSON string (labels, paths, error names). */
static void bench_report_json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 32)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

void bench_report_json(FILE *out, const struct bench_settings *s, const struct bench_stats *t,
                       const struct bench_errors *errs, const struct bench_report_run *run)
{
    double secs = run->elapsed_s > 0 ? run->elapsed_s : 1;
    struct bench_stats all;
    bench_report_total(t, &all);
    fprintf(out, "{\"results_dir\":");
    bench_report_json_str(out, run->results_dir);
    fprintf(out, ",\"elapsed_s\":%.3f,\"concurrent\":%d,\"threads\":%d,\"mode\":", run->elapsed_s,
            s->concurrent, s->threads);
    if (s->mode_max)
        fprintf(out, "\"max\"");
    else
        fprintf(out, "{\"rate\":%.17g}", s->rate);
    fprintf(out, ",\"ops\":{");
    for (size_t i = 0; i < t->nops; i++) {
        if (i)
            fputc(',', out);
        bench_report_json_op(out, s->ops[i].label, &t->op[i], secs);
    }
    fprintf(out, "},");
    bench_report_json_op(out, "total", &all.op[0], secs);
    fprintf(out, ",\"errors\":{");
    for (size_t i = 0; i < errs->n; i++) {
        char name[128];
        bench_errors_name(&errs->e[i], s, name, sizeof(name));
        if (i)
            fputc(',', out);
        bench_report_json_str(out, name);
        fprintf(out, ":%" PRIu64, errs->e[i].count);
    }
    if (errs->other)
        fprintf(out, "%s\"other\":%" PRIu64, errs->n ? "," : "", errs->other);
    fprintf(out, "},\"integrity\":{\"enabled\":%s,\"verified\":%" PRIu64
                 ",\"unverifiable\":%" PRIu64 "}}\n",
            s->integrity ? "true" : "false", run->integrity_checked, run->integrity_unverifiable);
    bench_stats_fini(&all);
}
