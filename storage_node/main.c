/* cairn-storage: the storage node daemon. Reads its settings (file,
 * CAIRN_* environment, --set), opens the store (recovering it), serves the
 * protocol until SIGTERM/SIGINT, then answers what is in flight, flushes the
 * queued writes and syncs. SIGHUP re-reads the allow-list of client keys. */
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cn/affinity.h"
#include "cn/curve_key.h"
#include "cn/log.h"
#include "config.h"
#include "hint.h"
#include "metrics.h"
#include "cn/metrics_http.h"
#include "msg/curve.h"
#include "server.h"
#include "store.h"

static struct sn_server *sn_main_server;

static void sn_main_on_signal(int sig)
{
    if (sn_main_server == NULL)
        return;
    if (sig == SIGHUP)
        sn_server_reload(sn_main_server);
    else
        sn_server_stop(sn_main_server);
}

/* auth = curve: loads the node's secret key (refusing a file others may
 * read) and logs its public key, which clients configure; auth = none: says
 * loudly that anyone who reaches the port is served. */
static int sn_main_auth(const struct sn_config *cfg, struct cn_curve_key *secret,
                        char err[CN_ERR_LEN])
{
    struct cn_curve_key pub;
    if (cfg->auth == SN_AUTH_NONE && strncmp(cfg->listen, "ipc://", 6) == 0 &&
        cfg->listen[6] != '@') {
        cn_info("auth = none on a Unix socket: %s is mode 0600, so only this user's "
                "processes may connect (docs/security.md)", cfg->listen);
        return CN_OK;
    }
    if (cfg->auth == SN_AUTH_NONE) {
        cn_warn("auth = none: any process that reaches %s may read, write and delete every "
                "object; set auth = curve (docs/security.md)", cfg->listen);
        return CN_OK;
    }
    if (!msg_curve_available()) {
        snprintf(err, CN_ERR_LEN, "auth = curve: libzmq was built without CURVE");
        return CN_INVAL;
    }
    int rc = cn_curve_key_load(cfg->curve_secret_key_file, 1, secret, err);
    if (rc == CN_OK)
        rc = msg_curve_public(secret, &pub, err);
    if (rc != CN_OK)
        return rc;
    cn_info("auth = curve: node public key %s, allowed clients in %s", pub.z85,
            cfg->curve_allowed_clients_file);
    return CN_OK;
}

static void sn_main_store_opts(const struct sn_config *c, struct sn_store_opts *o)
{
    sn_store_opts_default(o);
    o->data_dir = c->data_dir;
    o->sync_mode = c->sync_mode;
    o->sync_interval_ms = (uint64_t)c->sync_interval_ms;
    o->max_container_len = (uint64_t)c->max_container_len;
    o->read_mmap = c->read_mmap;
    o->dead_ratio_pct = (uint32_t)c->dead_ratio_pct;
    o->tombstone_gc_after_ms = (uint64_t)c->tombstone_gc_after_ms;
    o->compact_min_dead_bytes = (uint64_t)c->compaction_min_dead;
    o->compact_max_rate = (uint64_t)c->compaction_max_rate;
    o->index_cache = (size_t)c->index_cache;
    o->max_batch = (uint32_t)c->max_batch;
}

static void sn_main_server_opts(const struct sn_config *c, const struct cn_curve_key *secret,
                                struct sn_server_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->listen = c->listen;
    o->node_id = c->node_id;
    o->io_threads = (uint32_t)c->io_threads;
    o->scrub_threads = (uint32_t)c->scrub_threads;
    o->max_inflight = (uint32_t)c->max_inflight;
    o->inline_max = (uint64_t)c->inline_max;
    /* compaction.interval, the older key, wins when set */
    o->compaction_interval_ms = (uint64_t)(c->compaction_interval_ms > 0
                                               ? c->compaction_interval_ms
                                               : c->compaction_check_ms);
    msg_limits_default(&o->limits);
    o->limits.max_key_len = (uint32_t)c->max_key_len;
    o->limits.max_meta_len = (uint32_t)c->max_meta_len;
    o->limits.max_payload_len = (uint64_t)c->max_record_len;
    o->limits.max_list = (uint32_t)c->max_list;
    o->max_digest_scan = (uint32_t)c->max_digest_scan;
    if (c->auth == SN_AUTH_CURVE) {
        o->curve_secret = secret;
        o->curve_allowed_clients_file = c->curve_allowed_clients_file;
    }
}

/* Logs what opening the store found: each repair recovery made, then the
 * totals. */
static void sn_main_log_open(const struct sn_config *cfg, struct sn_store *store)
{
    const char *const *notes;
    size_t n = sn_store_notes(store, &notes);
    struct sn_store_stats st;
    for (size_t i = 0; i < n; i++)
        cn_warn("recovery: %s", notes[i]);
    sn_store_stats(store, &st);
    if (st.torn_tails > n)
        cn_warn("recovery: %llu more torn tails not listed",
                (unsigned long long)(st.torn_tails - n));
    cn_info("store %s: %llu records and %llu tombstones in %llu containers "
            "(%llu recovered, %llu torn tails cut)",
            cfg->data_dir, (unsigned long long)st.records, (unsigned long long)st.tombstones,
            (unsigned long long)st.containers, (unsigned long long)st.recovered_records,
            (unsigned long long)st.torn_tails);
}

/* Logs the hints held for peers (hinted handoff) at start. */
static void sn_main_log_hints(struct sn_hints *h)
{
    struct sn_hint_stats st;
    sn_hints_stats(h, &st);
    if (st.held > 0 || st.dropped_corrupt > 0)
        cn_info("hints: %llu held for peers (%llu bytes), %llu undecodable dropped",
                (unsigned long long)st.held, (unsigned long long)st.bytes,
                (unsigned long long)st.dropped_corrupt);
}

/* Starts the metrics endpoint over the running store and server. */
static int sn_main_metrics_start(const struct sn_config *cfg, struct sn_metrics *m,
                                 struct sn_store *store, struct sn_server *srv,
                                 struct cn_metrics_http **out)
{
    char err[CN_ERR_LEN];
    *out = NULL;
    if (m == NULL)
        return CN_OK;
    sn_metrics_attach(m, store, srv);
    if (cn_metrics_http_new(cfg->metrics_listen, (uint16_t)cfg->metrics_port, sn_metrics_registry(m), out, err) !=
        CN_OK) {
        cn_error("%s", err);
        return CN_ERR;
    }
    cn_info("metrics on http://%s:%lld/metrics", cfg->metrics_listen,
            (long long)cfg->metrics_port);
    return CN_OK;
}

static int sn_main_serve(const struct sn_config *cfg)
{
    struct sn_store_opts so;
    struct sn_server_opts vo;
    struct sn_store *store = NULL;
    struct sn_server *srv = NULL;
    struct sn_metrics *metrics = NULL;
    struct cn_metrics_http *mhttp = NULL;
    struct cn_curve_key secret;
    char err[CN_ERR_LEN];
    if (sn_main_auth(cfg, &secret, err) != CN_OK) {
        cn_error("%s", err);
        return 1;
    }
    sn_main_store_opts(cfg, &so);
    sn_main_server_opts(cfg, &secret, &vo);
    if (cfg->metrics_port != 0)
        metrics = sn_metrics_new(cfg->data_dir);
    so.metrics = vo.metrics = metrics;
    if (sn_store_open(&so, &store, err) != CN_OK) {
        cn_error("cannot open store in %s: %s", cfg->data_dir, err);
        sn_metrics_free(metrics);
        return 1;
    }
    sn_main_log_open(cfg, store);
    struct sn_hint_opts ho = {(uint64_t)cfg->handoff_max_hints,
                              (uint64_t)cfg->handoff_max_hint_bytes,
                              cfg->sync_mode == SN_SYNC_WRITETHROUGH};
    if (sn_hints_open(sn_store_index(store), &ho, &vo.hints, err) != CN_OK) {
        cn_error("cannot open the hints in %s: %s", cfg->data_dir, err);
        sn_store_close(store, NULL);
        sn_metrics_free(metrics);
        return 1;
    }
    sn_main_log_hints(vo.hints);
    if (sn_server_new(&vo, store, &srv, err) != CN_OK) {
        cn_error("%s", err);
        sn_hints_free(vo.hints);
        sn_store_close(store, NULL);
        sn_metrics_free(metrics);
        return 1;
    }
    if (sn_main_metrics_start(cfg, metrics, store, srv, &mhttp) != CN_OK) {
        sn_server_free(srv);
        sn_hints_free(vo.hints);
        sn_store_close(store, NULL);
        sn_metrics_free(metrics);
        return 1;
    }
    sn_main_server = srv;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = sn_main_on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    cn_info("node %s listening on %s (%lld io threads, sync_mode %d)", cfg->node_id,
            cfg->listen, (long long)cfg->io_threads, cfg->sync_mode);
    int rc = sn_server_run(srv, 30000);
    cn_info("shutting down: flushing queued writes");
    cn_metrics_http_free(mhttp);
    sn_main_server = NULL;
    sn_server_free(srv);
    sn_hints_free(vo.hints);
    if (sn_store_close(store, err) != CN_OK) {
        cn_error("closing the store: %s", err);
        rc = CN_IO;
    }
    sn_metrics_free(metrics);   /* the writer counted until the store closed */
    cn_info("stopped");
    return rc == CN_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    struct sn_config cfg;
    char err[CN_ERR_LEN];
    memset(&cfg, 0, sizeof(cfg));
    int rc = cn_config_cli(sn_config_table, &cfg, "cairn-storage", "CAIRN_", argc, argv, err);
    if (rc == CN_DONE) {
        cn_config_fini(sn_config_table, &cfg);
        return 0;
    }
    if (rc == CN_OK)
        rc = sn_config_check(&cfg, err);
    /* before any thread starts (ZeroMQ's, the I/O pool, the writer): they
     * inherit it */
    if (rc == CN_OK)
        rc = cn_cpu_affinity_apply(cfg.cpu_affinity, err);
    if (rc != CN_OK) {
        fprintf(stderr, "cairn-storage: %s\n", err);
        cn_config_fini(sn_config_table, &cfg);
        return 2;
    }
    cn_log_init("cairn-storage", cfg.log_level);
    /* GET buffers (slice + up to 128 KiB) come and go at a high rate: keep
     * buffers below 32 MiB in malloc's heaps instead of a fresh mmap each,
     * whose page faults and unmaps cost more than the checksum (measured:
     * docs/storage.md). The heaps keep at most the peak in use. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    int ret = sn_main_serve(&cfg);
    cn_config_fini(sn_config_table, &cfg);
    return ret;
}
