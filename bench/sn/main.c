/* cairn-sn-bench: a storage-node micro-benchmark over the protocol (one
 * DEALER per thread, msg_client). Each subcommand measures one thing and
 * prints one line of key=value pairs; bench/sn/run.py drives the matrix and
 * writes the tables of bench/results/storage-*.md.
 *
 *   load   --endpoint E --prefix P --count N --size S [--depth D]
 *   slice  --endpoint E --prefix P --count N --size S --slice L --depth D [--passes K]
 *   put    --endpoint E --writers W --size S --seconds T
 *   scrub  --endpoint E
 *   fadvise FILE...      (drop FILEs from the page cache: a cold run) */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cn/alloc.h"
#include "cn/build_info.h"
#include "cn/config.h"
#include "cn/crc.h"
#include "cn/time.h"
#include "msg/client.h"

struct bench_sn_opts {
    const char *endpoint, *prefix;
    uint64_t count, size, slice, depth, writers, seconds, passes;
};

/* Keys toward a node with auth = curve, from CAIRN_STORAGE_AUTH and the
 * key-file variables (msg/curve.h); not enabled otherwise. */
static struct msg_curve_client bench_sn_curve;

static void bench_sn_die(const char *what, const char *err)
{
    fprintf(stderr, "cairn-sn-bench: %s: %s\n", what, err);
    exit(1);
}

static uint64_t bench_sn_num(const char *s)
{
    int64_t v;
    if (cn_config_parse_size(s, &v) != CN_OK || v < 0)
        bench_sn_die("bad number", s);
    return (uint64_t)v;
}

static void bench_sn_key(char *out, size_t n, const char *prefix, uint64_t i)
{
    snprintf(out, n, "%s%08llu", prefix, (unsigned long long)i);
}

static void bench_sn_send_put(struct msg_client *c, const char *key, const uint8_t *data,
                              uint64_t size, uint32_t crc, uint64_t id)
{
    struct msg m;
    char err[CN_ERR_LEN];
    msg_init_request(&m, MSG_OP_PUT, id);
    m.key = (struct msg_bytes){(const uint8_t *)key, (uint32_t)strlen(key)};
    m.crc = crc;
    m.ver = 1;
    m.ts = cn_time_now_us();
    m.payload = (struct msg_bytes){data, (uint32_t)size};
    MSG_SET(&m, MSG_F_KEY);
    MSG_SET(&m, MSG_F_CRC);
    MSG_SET(&m, MSG_F_VER);
    MSG_SET(&m, MSG_F_TS);
    if (msg_client_send(c, &m, NULL, NULL, err) != CN_OK)
        bench_sn_die("send", err);
}

/* Waits for one reply and checks it is OK. */
static void bench_sn_expect_ok(struct msg_client *c, uint64_t *bytes)
{
    struct msg_reply r;
    char err[CN_ERR_LEN];
    if (msg_client_recv(c, &r, 120000, err) != CN_OK)
        bench_sn_die("recv", err);
    if (r.m.st != MSG_ST_OK)
        bench_sn_die("reply", msg_status_str(r.m.st));
    if (r.has_payload) {
        if (cn_crc32c(0, r.m.payload.ptr, r.m.payload.len) != r.m.crc)
            bench_sn_die("reply", "payload crc mismatch");
        *bytes += r.m.payload.len;
    }
    msg_reply_release(&r);
}

static int bench_sn_load(const struct bench_sn_opts *o)
{
    char err[CN_ERR_LEN], key[256];
    struct msg_client *c = msg_client_new_curve(NULL, o->endpoint, &bench_sn_curve, err);
    if (c == NULL)
        bench_sn_die("connect", err);
    uint8_t *data = cn_malloc(o->size + 1);
    uint64_t t0 = cn_time_mono_us(), inflight = 0, bytes = 0;
    for (uint64_t i = 0; i < o->count; i++) {
        for (uint64_t j = 0; j < o->size; j++)
            data[j] = (uint8_t)(j * 31 + i);
        bench_sn_key(key, sizeof(key), o->prefix, i);
        bench_sn_send_put(c, key, data, o->size, cn_crc32c(0, data, o->size), i + 1);
        if (++inflight >= o->depth) {
            bench_sn_expect_ok(c, &bytes);
            inflight--;
        }
    }
    while (inflight-- > 0)
        bench_sn_expect_ok(c, &bytes);
    double s = (double)(cn_time_mono_us() - t0) / 1e6;
    printf("op=load count=%llu size=%llu secs=%.3f mib_s=%.1f\n", (unsigned long long)o->count,
           (unsigned long long)o->size, s, (double)(o->count * o->size) / s / 1048576.0);
    cn_free(data);
    msg_client_free(c);
    return 0;
}

/* CPU seconds (user + system) this process has used so far. */
static double bench_sn_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Reads every record whole, in slices, `passes` times over, keeping `depth`
 * requests in flight; reports the client's own CPU time beside the rate. */
static int bench_sn_slice(const struct bench_sn_opts *o)
{
    char err[CN_ERR_LEN], key[256];
    struct msg_client *c = msg_client_new_curve(NULL, o->endpoint, &bench_sn_curve, err);
    if (c == NULL)
        bench_sn_die("connect", err);
    uint64_t per = (o->size + o->slice - 1) / o->slice, total = per * o->count * o->passes;
    uint64_t sent = 0, inflight = 0, bytes = 0, t0 = cn_time_mono_us();
    double cpu0 = bench_sn_cpu_s();
    while (sent < total || inflight > 0) {
        while (sent < total && inflight < o->depth) {
            struct msg m;
            msg_init_request(&m, MSG_OP_GET, sent + 1);
            bench_sn_key(key, sizeof(key), o->prefix, (sent / per) % o->count);
            m.key = (struct msg_bytes){(const uint8_t *)key, (uint32_t)strlen(key)};
            m.off = (sent % per) * o->slice;
            m.len = o->slice;
            MSG_SET(&m, MSG_F_KEY);
            MSG_SET(&m, MSG_F_OFF);
            MSG_SET(&m, MSG_F_LEN);
            if (msg_client_send(c, &m, NULL, NULL, err) != CN_OK)
                bench_sn_die("send", err);
            sent++;
            inflight++;
        }
        bench_sn_expect_ok(c, &bytes);
        inflight--;
    }
    double s = (double)(cn_time_mono_us() - t0) / 1e6, cpu = bench_sn_cpu_s() - cpu0;
    printf("op=slice slice=%llu depth=%llu bytes=%llu secs=%.3f mib_s=%.1f client_cpu_s=%.3f\n",
           (unsigned long long)o->slice, (unsigned long long)o->depth,
           (unsigned long long)bytes, s, (double)bytes / s / 1048576.0, cpu);
    msg_client_free(c);
    return 0;
}

struct bench_sn_writer {
    const struct bench_sn_opts *o;
    int id;
    uint64_t ops;
    uint64_t *lat;   /* microseconds of each op */
    uint64_t cap;
};

static void *bench_sn_writer_main(void *arg)
{
    struct bench_sn_writer *w = arg;
    const struct bench_sn_opts *o = w->o;
    char err[CN_ERR_LEN], key[256];
    struct msg_client *c = msg_client_new_curve(NULL, o->endpoint, &bench_sn_curve, err);
    if (c == NULL)
        bench_sn_die("connect", err);
    uint8_t *data = cn_malloc(o->size + 1);
    for (uint64_t j = 0; j < o->size; j++)
        data[j] = (uint8_t)(j * 7 + (uint64_t)w->id);
    uint32_t crc = cn_crc32c(0, data, o->size);
    uint64_t end = cn_time_mono_us() + o->seconds * 1000000, bytes = 0;
    while (cn_time_mono_us() < end) {
        char pfx[64];
        snprintf(pfx, sizeof(pfx), "w%d/", w->id);
        bench_sn_key(key, sizeof(key), pfx, w->ops % 1000);
        uint64_t t = cn_time_mono_us();
        bench_sn_send_put(c, key, data, o->size, crc, w->ops + 1);
        bench_sn_expect_ok(c, &bytes);
        if (w->ops == w->cap) {
            w->cap = w->cap ? w->cap * 2 : 4096;
            w->lat = cn_realloc(w->lat, w->cap * sizeof(*w->lat));
        }
        w->lat[w->ops++] = cn_time_mono_us() - t;
    }
    cn_free(data);
    msg_client_free(c);
    return NULL;
}

static int bench_sn_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int bench_sn_put(const struct bench_sn_opts *o)
{
    struct bench_sn_writer *w = cn_calloc(o->writers, sizeof(*w));
    pthread_t *th = cn_calloc(o->writers, sizeof(*th));
    uint64_t t0 = cn_time_mono_us(), n = 0;
    for (uint64_t i = 0; i < o->writers; i++) {
        w[i].o = o;
        w[i].id = (int)i;
        pthread_create(&th[i], NULL, bench_sn_writer_main, &w[i]);
    }
    for (uint64_t i = 0; i < o->writers; i++) {
        pthread_join(th[i], NULL);
        n += w[i].ops;
    }
    double s = (double)(cn_time_mono_us() - t0) / 1e6;
    uint64_t *all = cn_malloc((n + 1) * sizeof(*all)), k = 0;
    for (uint64_t i = 0; i < o->writers; i++) {
        memcpy(all + k, w[i].lat, w[i].ops * sizeof(*all));
        k += w[i].ops;
        cn_free(w[i].lat);
    }
    qsort(all, n, sizeof(*all), bench_sn_u64_cmp);
    printf("op=put writers=%llu size=%llu ops=%llu secs=%.3f ops_s=%.1f mib_s=%.1f p50_us=%llu "
           "p99_us=%llu\n",
           (unsigned long long)o->writers, (unsigned long long)o->size, (unsigned long long)n, s,
           (double)n / s, (double)n * (double)o->size / s / 1048576.0,
           (unsigned long long)(n ? all[n / 2] : 0),
           (unsigned long long)(n ? all[(n * 99) / 100] : 0));
    cn_free(all);
    cn_free(w);
    cn_free(th);
    return 0;
}

static int bench_sn_scrub(const struct bench_sn_opts *o)
{
    char err[CN_ERR_LEN];
    struct msg_client *c = msg_client_new_curve(NULL, o->endpoint, &bench_sn_curve, err);
    struct msg m;
    struct msg_reply r;
    if (c == NULL)
        bench_sn_die("connect", err);
    msg_init_request(&m, MSG_OP_SCRUB, 1);
    if (msg_client_call(c, &m, &r, 600000, err) != CN_OK)
        bench_sn_die("scrub", err);
    if (r.m.st != MSG_ST_OK)
        bench_sn_die("scrub", msg_status_str(r.m.st));
    uint64_t bytes = 0, us = 1, corrupt = 0, threads = 0;
    for (uint32_t i = 0; i < r.m.n_stats; i++) {
        const struct msg_stat *st = &r.m.stats[i];
        if (st->name.len == 5 && memcmp(st->name.ptr, "bytes", 5) == 0)
            bytes = st->value;
        else if (st->name.len == 10 && memcmp(st->name.ptr, "elapsed_us", 10) == 0)
            us = st->value ? st->value : 1;
        else if (st->name.len == 7 && memcmp(st->name.ptr, "corrupt", 7) == 0)
            corrupt = st->value;
        else if (st->name.len == 7 && memcmp(st->name.ptr, "threads", 7) == 0)
            threads = st->value;
    }
    printf("op=scrub threads=%llu bytes=%llu secs=%.3f mib_s=%.1f corrupt=%llu\n",
           (unsigned long long)threads, (unsigned long long)bytes, (double)us / 1e6,
           (double)bytes / ((double)us / 1e6) / 1048576.0, (unsigned long long)corrupt);
    msg_reply_release(&r);
    msg_client_free(c);
    return corrupt != 0;
}

static int bench_sn_fadvise(int argc, char **argv)
{
    for (int i = 2; i < argc; i++) {
        int fd = open(argv[i], O_RDONLY);
        if (fd < 0 || fdatasync(fd) != 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0)
            bench_sn_die("fadvise", argv[i]);
        close(fd);
    }
    return 0;
}

static void bench_sn_parse(int argc, char **argv, struct bench_sn_opts *o)
{
    *o = (struct bench_sn_opts){"tcp://127.0.0.1:7001", "bench/", 8, 1 << 20, 1 << 20, 1, 1, 2, 1};
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (strcmp(k, "--endpoint") == 0) o->endpoint = v;
        else if (strcmp(k, "--prefix") == 0) o->prefix = v;
        else if (strcmp(k, "--count") == 0) o->count = bench_sn_num(v);
        else if (strcmp(k, "--size") == 0) o->size = bench_sn_num(v);
        else if (strcmp(k, "--slice") == 0) o->slice = bench_sn_num(v);
        else if (strcmp(k, "--depth") == 0) o->depth = bench_sn_num(v);
        else if (strcmp(k, "--writers") == 0) o->writers = bench_sn_num(v);
        else if (strcmp(k, "--seconds") == 0) o->seconds = bench_sn_num(v);
        else if (strcmp(k, "--passes") == 0) o->passes = bench_sn_num(v);
        else bench_sn_die("unknown option", k);
    }
    if (o->slice == 0 || o->depth == 0 || o->writers == 0 || o->passes == 0)
        bench_sn_die("options", "slice, depth, writers and passes must be positive");
}

int main(int argc, char **argv)
{
    struct bench_sn_opts o;
    if (cn_build_info_version_flag("cairn-sn-bench", argc, argv))
        return 0;
    if (argc < 2) {
        fprintf(stderr, "usage: cairn-sn-bench load|slice|put|scrub|fadvise [--option value]...\n");
        return 2;
    }
    if (strcmp(argv[1], "fadvise") == 0)
        return bench_sn_fadvise(argc, argv);
    bench_sn_parse(argc, argv, &o);
    char err[CN_ERR_LEN];
    if (msg_curve_client_from_env(&bench_sn_curve, NULL, NULL, NULL, err) != CN_OK)
        bench_sn_die("storage auth", err);
    if (strcmp(argv[1], "load") == 0)
        return bench_sn_load(&o);
    if (strcmp(argv[1], "slice") == 0)
        return bench_sn_slice(&o);
    if (strcmp(argv[1], "put") == 0)
        return bench_sn_put(&o);
    if (strcmp(argv[1], "scrub") == 0)
        return bench_sn_scrub(&o);
    bench_sn_die("unknown subcommand", argv[1]);
    return 2;
}
