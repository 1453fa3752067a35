/* The reporter (see run.h). Window protocol, with no lock on the hot path:
 * loops fill stats slot (epoch & 1). To close an interval the reporter
 * bumps the epoch, wakes the loops and waits until each has acknowledged the
 * new epoch (seen == epoch), or has retired; from then on no loop writes
 * the old slot, which the reporter merges and empties. */
#include "run.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cn/alloc.h"
#include "cn/time.h"
#include "integrity.h"
#include "keygen.h"
#include "loop.h"
#include "plot.h"
#include "report.h"

/* How often the progress line (and the reporter) wakes up. */
#define BENCH_RUN_TICK_US 1000000ULL

static atomic_int bench_run_interrupted;

void bench_run_interrupt(void)
{
    atomic_store(&bench_run_interrupted, 1);
}

struct bench_run {
    const struct bench_settings *s;
    struct bench_shared sh;
    struct bench_loop *loops;
    int nloops;
    struct bench_stats tick;     /* since the last harvest */
    struct bench_stats window;   /* since the last CSV row */
    struct bench_stats total;    /* the whole run */
    struct bench_report *report;
    char dir[2048];
    uint64_t t0, last_row;
    int progress;
};

/* mkdir -p */
static int bench_run_mkdirs(const char *path, char err[CN_ERR_LEN])
{
    char buf[2048];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof(buf)) {
        snprintf(err, CN_ERR_LEN, "bad results path '%s'", path);
        return CN_INVAL;
    }
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
            snprintf(err, CN_ERR_LEN, "mkdir %s: %s", buf, strerror(errno));
            return CN_IO;
        }
        buf[i] = c;
    }
    return CN_OK;
}

int bench_run_results_dir(const struct bench_settings *s, char *dir, size_t dirlen,
                          char err[CN_ERR_LEN])
{
    if (s->out_dir[0] != '\0') {
        snprintf(dir, dirlen, "%s", s->out_dir);
        return bench_run_mkdirs(dir, err);
    }
    if (bench_run_mkdirs(s->test_dir, err) != CN_OK)
        return CN_IO;
    /* basho_bench names runs by local time, YYYYMMDD_HHMMSS */
    char stamp[64];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(stamp, sizeof(stamp), "%Y%m%d_%H%M%S", &tm);
    for (int i = 1; i < 100; i++) {
        char name[80];
        if (i == 1)
            snprintf(name, sizeof(name), "%s", stamp);
        else
            snprintf(name, sizeof(name), "%s_%d", stamp, i);
        snprintf(dir, dirlen, "%s/%s", s->test_dir, name);
        if (mkdir(dir, 0755) == 0) {
            char link[2048];
            snprintf(link, sizeof(link), "%s/current", s->test_dir);
            unlink(link);
            if (symlink(name, link) != 0) {
                snprintf(err, CN_ERR_LEN, "symlink %s: %s", link, strerror(errno));
                return CN_IO;
            }
            return CN_OK;
        }
        if (errno != EEXIST)
            break;
    }
    snprintf(err, CN_ERR_LEN, "mkdir %s: %s", dir, strerror(errno));
    return CN_IO;
}

/* Closes the current interval and adds what every loop recorded in it to
 * r->tick. Waits (briefly) for each loop to move to the new epoch. */
static void bench_run_harvest(struct bench_run *r)
{
    uint64_t e = atomic_load(&r->sh.epoch);
    atomic_store_explicit(&r->sh.epoch, e + 1, memory_order_release);
    for (int i = 0; i < r->nloops; i++)
        bench_loop_wake(&r->loops[i]);
    for (int i = 0; i < r->nloops; i++) {
        struct bench_loop *l = &r->loops[i];
        while (!atomic_load_explicit(&l->retired, memory_order_acquire) &&
               atomic_load_explicit(&l->seen, memory_order_acquire) != e + 1) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
        bench_stats_merge(&r->tick, &l->slot[e & 1]);
        bench_stats_reset(&l->slot[e & 1]);
        if (atomic_load_explicit(&l->retired, memory_order_acquire)) {
            /* a retired loop may have written the new slot before it ended */
            bench_stats_merge(&r->tick, &l->slot[(e + 1) & 1]);
            bench_stats_reset(&l->slot[(e + 1) & 1]);
        }
    }
}

static int bench_run_all_retired(struct bench_run *r)
{
    for (int i = 0; i < r->nloops; i++)
        if (!atomic_load_explicit(&r->loops[i].retired, memory_order_acquire))
            return 0;
    return 1;
}

static void bench_run_sleep_until(uint64_t t)
{
    uint64_t now = cn_time_mono_us();
    if (t <= now)
        return;
    uint64_t d = CN_MIN(t - now, (uint64_t)100000);
    struct timespec ts = {(time_t)(d / 1000000), (long)(d % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* The live line: elapsed/total, ops/s, MB/s, p99 and errors of the last tick. */
static void bench_run_progress(struct bench_run *r, uint64_t now, uint64_t tick_us)
{
    struct bench_stats all;
    bench_stats_init(&all, 1);
    for (size_t i = 0; i < r->tick.nops; i++)
        cn_hist_merge(all.op[0].lat, r->tick.op[i].lat);
    double secs = tick_us > 0 ? (double)tick_us / 1e6 : 1;
    double el = (double)(now - r->t0) / 1e6;
    uint64_t bytes = bench_stats_total_bytes_in(&r->tick) + bench_stats_total_bytes_out(&r->tick);
    double left = r->s->duration_s > el ? r->s->duration_s - el : 0;
    fprintf(stdout, "\r\033[K[%7.1fs elapsed %7.1fs left] %10.0f ops/s %9.1f MB/s  p99 %7" PRIu64
                    " us  errors %" PRIu64,
            el, left, (double)bench_stats_total_ok(&r->tick) / secs,
            (double)bytes / 1e6 / secs, cn_hist_percentile(all.op[0].lat, 99),
            bench_stats_total_errors(&r->total) + bench_stats_total_errors(&r->tick));
    fflush(stdout);
    bench_stats_fini(&all);
}

/* Moves r->tick into the window and the total; writes a row when due. */
static void bench_run_account(struct bench_run *r, uint64_t now, int row)
{
    bench_stats_merge(&r->window, &r->tick);
    bench_stats_merge(&r->total, &r->tick);
    bench_stats_reset(&r->tick);
    if (row) {
        bench_report_window(r->report, now - r->t0, now - r->last_row, &r->window);
        bench_stats_reset(&r->window);
        r->last_row = now;
    }
}

static void bench_run_setup(struct bench_run *r, const struct bench_settings *s)
{
    r->s = s;
    r->sh.s = s;
    bench_valgen_init(&r->sh.valgen, &s->valgen, s->seed);
    if (s->integrity) {
        r->sh.integrity = bench_integrity_new(bench_keygen_limit(&s->keygen));
        r->sh.md5 = EVP_MD_fetch(NULL, "MD5", NULL);
        CN_ASSERT(r->sh.md5 != NULL);
    }
    for (size_t i = 0; i < s->nops; i++)
        r->sh.total_weight += s->ops[i].weight;
    atomic_init(&r->sh.epoch, 0);
    atomic_init(&r->sh.stop, 0);
    r->nloops = s->threads;
    r->loops = cn_calloc((size_t)r->nloops, sizeof(*r->loops));
    for (int i = 0; i < r->nloops; i++) {
        int first = (int)((int64_t)s->concurrent * i / r->nloops);
        int end = (int)((int64_t)s->concurrent * (i + 1) / r->nloops);
        bench_loop_init(&r->loops[i], &r->sh, i, first, (size_t)(end - first));
    }
    bench_stats_init(&r->tick, s->nops);
    bench_stats_init(&r->window, s->nops);
    bench_stats_init(&r->total, s->nops);
}

static void bench_run_teardown(struct bench_run *r)
{
    for (int i = 0; i < r->nloops; i++)
        bench_loop_fini(&r->loops[i]);
    cn_free(r->loops);
    bench_integrity_free(r->sh.integrity);
    EVP_MD_free(r->sh.md5);
    bench_valgen_fini(&r->sh.valgen);
    bench_stats_fini(&r->tick);
    bench_stats_fini(&r->window);
    bench_stats_fini(&r->total);
}

/* The reporter's loop: ticks, windows, the end. Returns the end time. */
static uint64_t bench_run_drive(struct bench_run *r)
{
    const struct bench_settings *s = r->s;
    uint64_t interval = (uint64_t)(s->report_interval_s * 1e6);
    uint64_t deadline = r->t0 + (uint64_t)(s->duration_s * 1e6);
    uint64_t next_row = r->t0 + interval, next_tick = r->t0 + BENCH_RUN_TICK_US;
    uint64_t last_tick = r->t0;
    for (;;) {
        uint64_t wake = CN_MIN(CN_MIN(next_row, next_tick), deadline);
        bench_run_sleep_until(wake);
        uint64_t now = cn_time_mono_us();
        int done = bench_run_all_retired(r) || atomic_load(&bench_run_interrupted);
        if (now >= deadline || done)
            return now;
        if (now < next_tick && now < next_row)
            continue;
        bench_run_harvest(r);
        if (r->progress)
            bench_run_progress(r, now, now - last_tick);
        last_tick = now;
        int row = now >= next_row;
        bench_run_account(r, now, row);
        while (next_row <= now)
            next_row += interval;
        while (next_tick <= now)
            next_tick += BENCH_RUN_TICK_US;
    }
}

/* After the loops are joined: the last (partial) window, errors.csv, the
 * JSON, the plot and the table. */
static int bench_run_finish(struct bench_run *r, uint64_t end, FILE *out, char err[CN_ERR_LEN])
{
    const struct bench_settings *s = r->s;
    bench_run_harvest(r);
    bench_run_account(r, end, 1);
    int rc = bench_report_close(r->report);
    r->report = NULL;
    if (rc != CN_OK) {
        snprintf(err, CN_ERR_LEN, "%s: writing the CSV files failed", r->dir);
        return rc;
    }
    struct bench_errors errs = {0};
    struct bench_report_run run = {.results_dir = r->dir, .elapsed_s = (double)(end - r->t0) / 1e6};
    for (int i = 0; i < r->nloops; i++) {
        bench_errors_merge(&errs, &r->loops[i].errors);
        run.integrity_checked += r->loops[i].integrity_checked;
        run.integrity_unverifiable += r->loops[i].integrity_unverifiable;
    }
    if (bench_report_errors(r->dir, s, &errs, err) != CN_OK)
        return CN_IO;
    char path[4096];
    snprintf(path, sizeof(path), "%s/summary.json", r->dir);
    FILE *f = fopen(path, "w");
    if (f != NULL) {
        bench_report_json(f, s, &r->total, &errs, &run);
        fclose(f);
    }
    if (s->json_path[0] != '\0') {
        FILE *j = strcmp(s->json_path, "-") == 0 ? out : fopen(s->json_path, "w");
        if (j == NULL) {
            snprintf(err, CN_ERR_LEN, "%s: %s", s->json_path, strerror(errno));
            return CN_IO;
        }
        bench_report_json(j, s, &r->total, &errs, &run);
        if (j != out)
            fclose(j);
    }
    if (r->progress)
        fprintf(out, "\r\033[K");
    if (s->plot) {
        char why[CN_ERR_LEN];
        if (bench_plot_script(r->dir, s, why) != CN_OK || bench_plot_draw(r->dir, why) != CN_OK)
            fprintf(stderr, "cairn-bench: warning: %s\n", why);
    }
    if (strcmp(s->json_path, "-") != 0)
        bench_report_table(out, s, &r->total, &errs, &run);
    return CN_OK;
}

int bench_run(const struct bench_settings *s, FILE *out, char err[CN_ERR_LEN])
{
    struct bench_run r;
    memset(&r, 0, sizeof(r));
    if (bench_run_results_dir(s, r.dir, sizeof(r.dir), err) != CN_OK)
        return CN_IO;
    char path[4096];
    snprintf(path, sizeof(path), "%s/bench.config", r.dir);
    FILE *f = fopen(path, "w");
    if (f != NULL) {
        bench_settings_dump(s, f);
        fclose(f);
    }
    r.report = bench_report_open(r.dir, s, err);
    if (r.report == NULL)
        return CN_IO;
    r.progress = s->progress < 0 ? isatty(fileno(out)) : s->progress;
    bench_run_setup(&r, s);
    r.t0 = r.last_row = cn_time_mono_us();
    int started = 0;
    for (; started < r.nloops; started++)
        if (pthread_create(&r.loops[started].thread, NULL, bench_loop_main, &r.loops[started]) != 0)
            break;
    if (started < r.nloops)
        atomic_store(&r.sh.stop, 1);
    uint64_t end = started < r.nloops ? cn_time_mono_us() : bench_run_drive(&r);
    atomic_store_explicit(&r.sh.stop, 1, memory_order_release);
    for (int i = 0; i < started; i++) {
        bench_loop_wake(&r.loops[i]);
        pthread_join(r.loops[i].thread, NULL);
    }
    for (int i = started; i < r.nloops; i++)
        atomic_store(&r.loops[i].retired, 1);
    int rc;
    if (started < r.nloops) {
        snprintf(err, CN_ERR_LEN, "could not start thread %d", started);
        bench_report_close(r.report);
        rc = CN_ERR;
    } else {
        rc = bench_run_finish(&r, end, out, err);
    }
    bench_run_teardown(&r);
    return rc;
}
