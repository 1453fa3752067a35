/* Process-wide setup and the worker threads. Every worker binds the same
 * address with SO_REUSEPORT so the kernel spreads connections over the
 * loops; each worker talks to the nodes through its own DEALER sockets. */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <event2/thread.h>
#include <openssl/crypto.h>
#include <zmq.h>

#include "accept.h"
#include "access_log.h"
#include "bucket_owner.h"
#include "cluster.h"
#include "cluster_metrics.h"
#include "http_tls.h"
#include "key_sync.h"
#include "collector.h"
#include "map_sync.h"
#include "rebalance.h"
#include "lifecycle_run.h"
#include "request.h"
#include "s3_status.h"
#include "s3_metrics.h"
#include "lo_metrics.h"
#include "sigv2.h"
#include "lo_reclaim.h"
#include "lo_hasher.h"
#include "lo_pool.h"
#include "read_budget.h"
#include "worker.h"

#include "cn/alloc.h"
#include "cn/cluster.h"
#include "cn/crc.h"
#include "cn/log.h"
#include "cn/metrics_http.h"
#include "cn/time.h"

/* How long start-up waits for the workers' node sockets to connect
 * (gw_storage_client_await_connect): a CURVE handshake over loopback takes
 * milliseconds; a node down at start costs this once. */
#define GW_SERVER_CONNECT_WAIT_US (1000u * 1000u)

/* A worker's credentials table (key_sync.h): the sync puts a new one in
 * `pending` and wakes the worker, which swaps it in on its own thread. */
struct gw_server_keys {
    struct event *swap;
    _Atomic(struct gw_credentials *) pending;
    struct gw_credentials *cur;     /* held: what the worker's verifiers use */
};

/* A worker's cluster map (map_sync.h): the follower puts the view it adopted
 * in `pending` and wakes the worker, which applies it on its own thread. */
struct gw_server_map {
    struct event *swap;
    _Atomic(const struct gw_cluster_view *) pending;
};

struct gw_server {
    const struct gw_config *cfg;
    struct gw_credentials *creds;
    struct gw_server_keys *keys;        /* one per worker */
    struct gw_key_sync *key_sync;       /* on worker 0; NULL: s3.master_key_file empty */
    struct gw_server_map *maps;         /* one per worker */
    struct gw_map_sync *map_sync;       /* on worker 0; NULL: cluster.map_refresh 0 */
    struct gw_cluster *cluster; /* nodes, ring, quorums, node states, hints */
    void *zmq;
    struct gw_worker *workers;
    uint32_t n_workers;
    struct gw_accept *accept;   /* the connection cap of all workers */
    struct gw_http_loop **loops;        /* each worker's, for the metrics */
    struct gw_s3_metrics *metrics;      /* NULL: metrics.port 0 */
    struct gw_access_log *access;       /* the access lines (log.access_file) */
    struct gw_s3_status_info status;    /* what GET /_cairn/status shows of the start */
    struct cn_metrics_http *metrics_http;
    int port;
    struct gw_lc_run *lifecycle;        /* on worker 0; NULL: lifecycle.enabled false */
    struct gw_collector *collector;     /* on worker 0; NULL: collector.interval 0 */
    struct gw_rebalance *rebalance;     /* on worker 0; NULL: rebalance.enabled false */
    struct gw_http_tls *tls;    /* the HTTPS certificate; NULL: http.tls_port 0 */
    int tls_port;
    uint64_t id_prefix;   /* request ids' random top bits (http_loop.c) */
    int stopping;   /* a first SIGTERM/SIGINT came: the next one stops at once */
    struct event_base *ctl;          /* the main thread's loop: signals, the workers' ends */
    struct event *worker_ended;      /* activated by each worker thread as it ends */
    atomic_uint n_ended;
};

/* What the S3 layer takes from the settings (s3_ctx.h): limits computed
 * once, the large-object settings its modules use. */
static void gw_server_s3_opts(const struct gw_config *cfg, struct gw_s3_ctx *x)
{
    uint64_t chunked = (uint64_t)cfg->lo_max_chunks * (uint64_t)cfg->lo_chunk_len;
    x->opts = (struct gw_s3_opts){
        .region = cfg->s3_region,
        .domain = cfg->s3_domain,
        .max_key_len = (size_t)cfg->s3_max_key_len,
        .max_keys = (uint32_t)cfg->s3_max_keys,
        .default_object_ownership = cfg->s3_default_object_ownership,
        .put_limit = CN_MIN((uint64_t)cfg->s3_max_object_size, chunked),
        /* S3's 5 GiB per part too */
        .part_limit = CN_MIN(CN_MIN((uint64_t)5 << 30, chunked), (uint64_t)cfg->s3_max_object_size),
    };
    x->lo = (struct gw_lo_env){
        .base = x->lo.base,
        .store = x->store,
        .reclaim = x->reclaim,
        .threshold = (uint64_t)cfg->lo_threshold,
        .chunk_len = (uint32_t)cfg->lo_chunk_len,
        .write_inflight = (uint32_t)cfg->lo_write_inflight,
        .max_chunks = (uint32_t)cfg->lo_max_chunks,
        .read_len = (uint64_t)cfg->lo_read_len,
        .read_prefetch = (uint32_t)cfg->lo_read_prefetch,
        .read_budget = x->lo.read_budget,
        .pool = x->lo.pool,
        .read_retries = (uint32_t)cfg->lo_read_retries,
        .read_retry_backoff_ms = cfg->lo_read_retry_backoff_ms,
        .output_high_water = (uint64_t)cfg->http_output_high_water,
        .reclaim_delay_ms = cfg->lo_reclaim_delay_ms,
    };
}

/* The HTTP layer's settings, from the http.* settings. */
static void gw_server_http_opts(const struct gw_config *cfg, struct gw_http_opts *o)
{
    *o = (struct gw_http_opts){
        .header_timeout_ms = cfg->http_header_timeout_ms,
        .keepalive_timeout_ms = cfg->http_keepalive_timeout_ms,
        .body_idle_timeout_ms = cfg->http_body_idle_timeout_ms,
        .shutdown_timeout_ms = cfg->http_shutdown_timeout_ms,
        .body_buffer = (uint64_t)cfg->http_body_buffer,
        .output_high_water = (uint64_t)cfg->http_output_high_water,
        .read_size = (uint64_t)cfg->http_read_size,
        .limits = {
            .max_request_line = (uint32_t)cfg->http_max_request_line,
            .max_headers = (uint32_t)cfg->http_max_headers,
            .max_head_bytes = (uint32_t)cfg->http_max_header_bytes,
        },
    };
}

/* One worker's share of large_object.read_ahead_budget: room for at least
 * one stream's base (two of the shortest slices) each. */
static uint64_t gw_server_read_budget_share(const struct gw_server *s)
{
    uint64_t share = (uint64_t)s->cfg->lo_read_ahead_budget / s->n_workers;
    return CN_MAX(share, 2 * (uint64_t)GW_READ_BUDGET_MIN_SLICE);
}

static int gw_server_worker_init(struct gw_server *s, uint32_t i, char err[CN_ERR_LEN])
{
    struct gw_worker *w = &s->workers[i];
    w->server = s;
    w->index = i;
    w->cfg = s->cfg;
    w->creds = s->creds;
    /* the epoll changelist: event changes made within one loop iteration
     * are merged and applied once before the next wait, so an event added
     * and deleted again in one iteration costs no epoll_ctl (a small
     * response's write event: conn.c, gw_conn_flush_now). Safe because the
     * gateway never dup()s a descriptor it gives libevent. */
    struct event_config *ec = event_config_new();
    if (ec != NULL)
        event_config_set_flag(ec, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
    w->base = ec != NULL ? event_base_new_with_config(ec) : NULL;
    if (ec != NULL)
        event_config_free(ec);
    if (w->base == NULL) {
        snprintf(err, CN_ERR_LEN, "event_base_new failed");
        return CN_ERR;
    }
    struct gw_http_opts opts;
    struct gw_http_app app;
    gw_server_http_opts(s->cfg, &opts);
    gw_req_app_init(&app, &w->s3);   /* the S3 layer answers this loop's requests */
    gw_http_loop_init(&w->http, w->base, &opts, &app, i, s->id_prefix);
    w->client = gw_cluster_client_new(s->cluster, w->base, s->zmq, err);
    if (w->client == NULL)
        return CN_ERR;
    struct gw_s3_ctx *x = &w->s3;
    x->store = gw_cluster_store_new(s->cluster, w->client);
    x->reclaim = gw_lo_reclaim_new(w->base, x->store);
    x->owners = gw_bucket_owner_cache_new((uint64_t)s->cfg->s3_bucket_owner_ttl_ms);
    x->metrics = s->metrics;
    x->access = s->access;
    x->status = &s->status;
    x->cluster = s->cluster;
    x->draining = &w->http.draining;
    x->lo.base = w->base;
    gw_server_s3_opts(s->cfg, x);
    /* each worker holds its share of the budget: together, never more */
    x->lo.read_budget = gw_read_budget_new(w->base, gw_server_read_budget_share(s),
                                           s->cfg->lo_read_queue_timeout_ms);
    /* free chunk buffers kept: one PUT's worth (docs/large-objects.md) */
    x->lo.pool = gw_lo_pool_new(x->lo.chunk_len, x->lo.write_inflight + 1);
    /* large PUTs' MD5 off the loop; without the thread, on the loop */
    x->lo.hasher = gw_lo_hasher_new();
    struct gw_sigv4_config sc = {
        .creds = s->creds,
        .region = s->cfg->s3_region,
        .max_skew_s = (int)(s->cfg->s3_clock_skew_ms / 1000),
    };
    x->sigv4 = gw_sigv4_new(&sc);
    if (x->sigv4 == NULL) {
        snprintf(err, CN_ERR_LEN, "cannot set up the SigV4 verifier");
        return CN_ERR;
    }
    x->creds = s->creds;
    if (s->cfg->s3_sigv2) {   /* NULL: SigV2 is refused as an unsupported mechanism */
        struct gw_sigv2_config v2 = {.creds = s->creds, .max_skew_s = sc.max_skew_s};
        x->sigv2 = gw_sigv2_new(&v2);
    }
    if (gw_http_loop_listen(&w->http, s->cfg->http_listen, &s->port, err) != CN_OK)
        return CN_ERR;
    if (s->tls != NULL && gw_http_loop_listen_tls(&w->http, s->cfg->http_listen, &s->tls_port,
                                                  s->tls, err) != CN_OK)
        return CN_ERR;
    return gw_accept_worker_init(s->accept, &w->http, err);
}

/* Sets up the connection cap: http.max_connections, or one derived from
 * RLIMIT_NOFILE (raised first toward the cap plus the fds the gateway keeps
 * for itself, where the hard limit allows). Logs what it chose. */
static void gw_server_accept_init(struct gw_server *s)
{
    uint32_t n_nodes = cn_cluster_nodes(gw_cluster_nodes(s->cluster));
    uint64_t reserve = gw_accept_reserve(s->n_workers, n_nodes);
    uint64_t set = (uint64_t)s->cfg->http_max_connections;
    uint64_t hard = 0;
    uint64_t nofile = gw_accept_raise_nofile((set > 0 ? set : GW_ACCEPT_MIN_DERIVED) + reserve,
                                             &hard);
    uint64_t max = set;
    if (nofile == 0) {
        max = set > 0 ? set : GW_ACCEPT_MIN_DERIVED;
        cn_warn("cannot read RLIMIT_NOFILE: %s", strerror(errno));
    } else if (set == 0) {
        max = gw_accept_derive_max(nofile, reserve);
    } else if (set + reserve > nofile) {
        cn_warn("http.max_connections %llu is above what the fd limit %llu allows (hard "
                "limit %llu, %llu kept for storage sockets and files): accept() will fail "
                "and back off first", (unsigned long long)set, (unsigned long long)nofile,
                (unsigned long long)hard, (unsigned long long)reserve);
    }
    s->accept = gw_accept_new(max, s->n_workers);
    cn_info("at most %llu client connections (http.max_connections %llu, fd limit %llu, "
            "%llu fds kept back)", (unsigned long long)max, (unsigned long long)set,
            (unsigned long long)nofile, (unsigned long long)reserve);
}

/* The lifecycle worker runs on worker 0's loop with its store and
 * reclaimer; it names itself in the lease by host, port and pid. */
static void gw_server_lifecycle_init(struct gw_server *s)
{
    const struct gw_config *cfg = s->cfg;
    char host[64] = "gateway";
    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "gateway");
    host[sizeof(host) - 1] = '\0';
    char holder[128];
    snprintf(holder, sizeof(holder), "%s:%d pid %d", host, s->port, (int)getpid());
    struct gw_lc_run_opts o = {
        .day_us = (uint64_t)cfg->lifecycle_day_length_ms * 1000,
        .interval_us = (uint64_t)cfg->lifecycle_interval_ms * 1000,
        .lease_us = (uint64_t)cfg->lifecycle_lease_time_ms * 1000,
        /* a racing claim is written within one storage request */
        .settle_us = (uint64_t)cfg->storage_request_timeout_ms * 1000 + 500000,
        .max_deletes_per_sec = (uint32_t)cfg->lifecycle_max_deletes_per_sec,
        .reclaim_delay_ms = cfg->lo_reclaim_delay_ms,
        .holder = holder,
    };
    struct gw_worker *w = &s->workers[0];
    s->lifecycle = gw_lc_run_new(w->base, w->s3.store, w->s3.reclaim, &o,
                                 s->metrics != NULL ? gw_s3_metrics_registry(s->metrics) : NULL);
}

/* The chunk collector runs on worker 0's loop with its store, named in
 * its lease as the lifecycle worker is. An object record is looked up on
 * N - W + 1 replicas at least, so one of them holds any acknowledged
 * write. */
static void gw_server_collector_init(struct gw_server *s)
{
    const struct gw_config *cfg = s->cfg;
    char host[64] = "gateway";
    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "gateway");
    host[sizeof(host) - 1] = '\0';
    char holder[128];
    snprintf(holder, sizeof(holder), "%s:%d pid %d", host, s->port, (int)getpid());
    uint32_t n, w, r, d;
    gw_cluster_quorum_values(s->cluster, &n, &w, &r, &d);
    struct gw_collector_opts o = {
        .interval_us = (uint64_t)cfg->collector_interval_ms * 1000,
        .grace_us = (uint64_t)cfg->collector_grace_ms * 1000,
        .lease_us = (uint64_t)cfg->collector_lease_time_ms * 1000,
        .settle_us = (uint64_t)cfg->storage_request_timeout_ms * 1000 + 500000,
        .max_rate = (uint32_t)cfg->collector_max_rate,
        .min_answers = n - CN_MIN(w, n) + 1,
        .holder = holder,
    };
    struct gw_worker *wk = &s->workers[0];
    s->collector = gw_collector_new(wk->base, wk->s3.store, &o,
                                    s->metrics != NULL ? gw_s3_metrics_registry(s->metrics)
                                                       : NULL);
}

/* The rebalance worker runs on worker 0's loop with its store, named in its
 * lease as the lifecycle worker is. */
static void gw_server_rebalance_init(struct gw_server *s)
{
    const struct gw_config *cfg = s->cfg;
    char host[64] = "gateway";
    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "gateway");
    host[sizeof(host) - 1] = '\0';
    char holder[128];
    snprintf(holder, sizeof(holder), "%s:%d pid %d", host, s->port, (int)getpid());
    struct gw_rebalance_opts o = {
        .interval_us = (uint64_t)cfg->rebalance_interval_ms * 1000,
        .lease_us = (uint64_t)cfg->rebalance_lease_time_ms * 1000,
        .settle_us = (uint64_t)cfg->storage_request_timeout_ms * 1000 + 500000,
        .inflight = (uint32_t)cfg->rebalance_inflight,
        .page = 100,
        .default_bps = (uint64_t)cfg->rebalance_throttle,
        .purge = cfg->rebalance_purge,
        .map_delay_us = 2 * (uint64_t)(cfg->cluster_map_refresh_ms +
                                       cfg->storage_request_timeout_ms) * 1000,
        .holder = holder,
    };
    struct gw_worker *w = &s->workers[0];
    s->rebalance = gw_rebalance_new(w->base, w->s3.store, s->cluster, &o,
                                    s->metrics != NULL ? gw_s3_metrics_registry(s->metrics)
                                                       : NULL);
}

/* On worker i's thread: takes the pending table into its verifiers. */
static void gw_server_on_keys_swap(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_worker *w = arg;
    struct gw_server_keys *k = &w->server->keys[w->index];
    struct gw_credentials *t = atomic_exchange(&k->pending, NULL);
    if (t == NULL)
        return;
    gw_sigv4_set_credentials(w->s3.sigv4, t);
    if (w->s3.sigv2 != NULL)
        gw_sigv2_set_credentials(w->s3.sigv2, t);
    w->s3.creds = t;
    w->creds = t;
    gw_credentials_free(k->cur);   /* requests still on the old one hold their own */
    k->cur = t;
}

/* The sync's publish (key_sync.h): every worker gets t at its next turn. */
static void gw_server_keys_publish(struct gw_credentials *t, void *arg)
{
    struct gw_server *s = arg;
    for (uint32_t i = 0; i < s->n_workers; i++) {
        struct gw_credentials *old = atomic_exchange(&s->keys[i].pending,
                                                     gw_credentials_hold(t));
        gw_credentials_free(old);   /* never taken: a newer one replaces it */
        event_active(s->keys[i].swap, EV_READ, 0);   /* thread-safe: evthread is on */
    }
    gw_credentials_free(t);
}

/* Follows the keys kept in the cluster when a master key is set. */
static int gw_server_keys_init(struct gw_server *s, char err[CN_ERR_LEN])
{
    s->keys = cn_calloc(s->n_workers, sizeof(*s->keys));
    for (uint32_t i = 0; i < s->n_workers; i++) {
        s->keys[i].cur = gw_credentials_hold(s->creds);
        atomic_init(&s->keys[i].pending, NULL);
        s->keys[i].swap = event_new(s->workers[i].base, -1, 0, gw_server_on_keys_swap,
                                    &s->workers[i]);
    }
    const struct gw_config *cfg = s->cfg;
    if (cfg->s3_master_key_file == NULL || cfg->s3_master_key_file[0] == '\0') {
        cn_info("s3.master_key_file is not set: only the credentials file's keys are accepted");
        return CN_OK;
    }
    struct gw_key_sync_opts o = {
        .interval_ms = cfg->s3_keys_refresh_ms,
        .max_keys = (uint32_t)cfg->s3_keys_max,
        .file = s->creds,
        .reg = s->metrics != NULL ? gw_s3_metrics_registry(s->metrics) : NULL,
    };
    if (gw_key_master_load(cfg->s3_master_key_file, o.master_key, err) != CN_OK)
        return CN_ERR;
    struct gw_worker *w = &s->workers[0];
    s->key_sync = gw_key_sync_new(w->base, w->s3.store, &o, gw_server_keys_publish, s);
    OPENSSL_cleanse(o.master_key, sizeof(o.master_key));
    cn_info("keys kept in the cluster are followed every %lld ms (at most %lld)",
            (long long)cfg->s3_keys_refresh_ms, (long long)cfg->s3_keys_max);
    return CN_OK;
}

/* On worker i's thread: applies the pending cluster view to its client and
 * store (views live as long as the cluster: nothing to free). */
static void gw_server_on_map_swap(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_worker *w = arg;
    const struct gw_cluster_view *v = atomic_exchange(&w->server->maps[w->index].pending, NULL);
    char err[CN_ERR_LEN];
    if (v != NULL && gw_cluster_apply(w->server->cluster, v, w->client, w->s3.store, err) != CN_OK)
        cn_error("worker %u keeps its ring: cluster map version %llu: %s", w->index,
                 (unsigned long long)gw_cluster_view_version(v), err);
}

/* The map follower's publish (map_sync.h): every worker applies v at its
 * next turn (a newer view replaces one not applied yet). */
static void gw_server_map_publish(const struct gw_cluster_view *v, void *arg)
{
    struct gw_server *s = arg;
    for (uint32_t i = 0; i < s->n_workers; i++) {
        atomic_store(&s->maps[i].pending, v);
        event_active(s->maps[i].swap, EV_READ, 0);   /* thread-safe: evthread is on */
    }
}

/* Follows the cluster map kept on the nodes unless cluster.map_refresh is 0. */
static void gw_server_map_init(struct gw_server *s)
{
    s->maps = cn_calloc(s->n_workers, sizeof(*s->maps));
    for (uint32_t i = 0; i < s->n_workers; i++) {
        atomic_init(&s->maps[i].pending, NULL);
        s->maps[i].swap = event_new(s->workers[i].base, -1, 0, gw_server_on_map_swap,
                                    &s->workers[i]);
    }
    if (s->cfg->cluster_map_refresh_ms <= 0) {
        cn_info("cluster.map_refresh is 0: the cluster map kept on the nodes is not followed");
        return;
    }
    struct gw_worker *w = &s->workers[0];
    s->map_sync = gw_map_sync_new(w->base, s->cluster, w->client, s->cfg->cluster_map_refresh_ms,
                                  s->metrics != NULL ? gw_s3_metrics_registry(s->metrics) : NULL,
                                  gw_server_map_publish, s);
    cn_info("the cluster map kept on the nodes is followed every %lld ms",
            (long long)s->cfg->cluster_map_refresh_ms);
}

/* libevent's own messages (its default writes them to stderr unformatted
 * and unlimited) go through our log, so they are rate limited too. */
static void gw_server_on_libevent_log(int severity, const char *msg)
{
    switch (severity) {
    case EVENT_LOG_DEBUG: cn_debug("libevent: %s", msg); break;
    case EVENT_LOG_MSG: cn_info("libevent: %s", msg); break;
    case EVENT_LOG_WARN: cn_warn("libevent: %s", msg); break;
    default: cn_error("libevent: %s", msg); break;
    }
}

/* The settings that differ from their defaults as a JSON object (cn_free):
 * both dumps of the table, compared line by line (same keys, same order). */
static char *gw_server_changed_settings(const struct gw_config *cfg)
{
    struct gw_config def;
    char err[CN_ERR_LEN], *a = NULL, *b = NULL;
    size_t alen = 0, blen = 0;
    struct evbuffer *out = evbuffer_new();
    evbuffer_add(out, "{", 1);
    FILE *fa = open_memstream(&a, &alen), *fb = open_memstream(&b, &blen);
    if (fa != NULL && fb != NULL && cn_config_init(gw_config_table, &def, err) == CN_OK) {
        cn_config_dump(gw_config_table, cfg, fa);
        cn_config_dump(gw_config_table, &def, fb);
        cn_config_fini(gw_config_table, &def);
    }
    if (fa != NULL)
        fclose(fa);
    if (fb != NULL)
        fclose(fb);
    int first = 1;
    for (char *p = a, *q = b; p != NULL && q != NULL && *p != '\0' && *q != '\0';) {
        char *pe = strchr(p, '\n'), *qe = strchr(q, '\n');
        if (pe == NULL || qe == NULL)
            break;
        const char *eq = strstr(p, " = ");
        if (eq != NULL && eq < pe && (pe - p != qe - q || memcmp(p, q, (size_t)(pe - p)) != 0)) {
            evbuffer_add_printf(out, "%s\n    ", first ? "" : ",");
            gw_s3_status_json_str(out, p, (size_t)(eq - p));
            evbuffer_add(out, ": ", 2);
            gw_s3_status_json_str(out, eq + 3, (size_t)(pe - eq - 3));
            first = 0;
        }
        p = pe + 1;
        q = qe + 1;
    }
    evbuffer_add_printf(out, "%s}", first ? "" : "\n  ");
    free(a);
    free(b);
    size_t n = evbuffer_get_length(out);
    char *json = cn_malloc(n + 1);
    evbuffer_remove(out, json, n);
    json[n] = '\0';
    evbuffer_free(out);
    return json;
}

/* Fills s->status: start time, threads, the ring's digest and vnodes, the
 * changed settings. */
static void gw_server_status_info(struct gw_server *s)
{
    const struct cn_cluster *cl = gw_cluster_nodes(s->cluster);
    uint32_t crc = 0, v = (uint32_t)s->cfg->ring_vnodes;
    for (uint32_t i = 0; i < cn_cluster_nodes(cl); i++) {
        const struct cn_cluster_node *n = cn_cluster_node(cl, i);
        const char *zone = n->zone != NULL ? n->zone : "";
        crc = cn_crc32c(crc, n->id, strlen(n->id) + 1);
        crc = cn_crc32c(crc, n->address, strlen(n->address) + 1);
        crc = cn_crc32c(crc, &n->weight, sizeof(n->weight));
        crc = cn_crc32c(crc, zone, strlen(zone) + 1);
    }
    crc = cn_crc32c(crc, &v, sizeof(v));
    s->status.started_us = cn_time_now_us();
    s->status.started_mono_us = cn_time_mono_us();
    s->status.threads = s->n_workers;
    s->status.vnodes = v;
    snprintf(s->status.ring_digest, sizeof(s->status.ring_digest), "%08x", crc);
    s->status.settings_json = gw_server_changed_settings(s->cfg);
}

/* Request ids name the version of every record a request writes (and the
 * chunk keys of a large object), so two gateways must not issue the same
 * one: their top 24 bits are random per process. (They were the start
 * second's low bits: two gateways started in the same second issued the
 * same ids.) Falls back to time and pid if getrandom fails. */
static uint64_t gw_server_id_prefix(void)
{
    uint32_t v;
    if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
        v = (uint32_t)(cn_time_now_us() ^ ((uint64_t)getpid() << 20));
    return v & 0xffffffu;
}

struct gw_server *gw_server_new(const struct gw_config *cfg, char err[CN_ERR_LEN])
{
    evthread_use_pthreads();
    event_set_log_callback(gw_server_on_libevent_log);
    struct gw_server *s = cn_calloc(1, sizeof(*s));
    s->cfg = cfg;
    s->port = (int)cfg->http_port;
    s->id_prefix = gw_server_id_prefix();
    if (gw_credentials_load_file(cfg->s3_credentials, &s->creds, err) != CN_OK)
        goto fail;
    s->cluster = gw_cluster_new(cfg, err);
    if (s->cluster == NULL)
        goto fail;
    if (gw_access_log_new(cfg->log_access_file, (enum gw_access_log_format)cfg->log_format,
                          (size_t)cfg->log_access_buffer, &s->access, err) != CN_OK)
        goto fail;
    if (cfg->http_tls_port > 0) {
        s->tls_port = (int)cfg->http_tls_port;
        s->tls = gw_http_tls_new(cfg->http_tls_cert_file, cfg->http_tls_key_file, err);
        if (s->tls == NULL)
            goto fail;
    }
    s->zmq = zmq_ctx_new();
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    s->n_workers = cfg->http_threads > 0 ? (uint32_t)cfg->http_threads
                                         : (uint32_t)(cores > 0 ? cores : 1);
    s->workers = cn_calloc(s->n_workers, sizeof(*s->workers));
    gw_server_status_info(s);
    gw_server_accept_init(s);
    if (cfg->metrics_port > 0) {
        s->loops = cn_calloc(s->n_workers, sizeof(*s->loops));
        for (uint32_t i = 0; i < s->n_workers; i++)
            s->loops[i] = &s->workers[i].http;
        s->metrics = gw_s3_metrics_new(s->loops, s->n_workers);
        gw_s3_metrics_watch_access_log(s->metrics, s->access);
        gw_lo_metrics_register(gw_s3_metrics_registry(s->metrics));
        gw_cluster_metrics_register(gw_s3_metrics_registry(s->metrics), s->cluster);
    }
    for (uint32_t i = 0; i < s->n_workers; i++)
        if (gw_server_worker_init(s, i, err) != CN_OK)
            goto fail;
    if (cfg->lifecycle_enabled)
        gw_server_lifecycle_init(s);
    if (cfg->collector_interval_ms > 0)
        gw_server_collector_init(s);
    if (cfg->rebalance_enabled)
        gw_server_rebalance_init(s);
    if (gw_server_keys_init(s, err) != CN_OK)
        goto fail;
    gw_server_map_init(s);
    if (s->metrics != NULL &&
        cn_metrics_http_new(cfg->metrics_listen, (uint16_t)cfg->metrics_port,
                            gw_s3_metrics_registry(s->metrics), &s->metrics_http,
                            err) != CN_OK)
        goto fail;
    if (s->metrics_http != NULL)
        cn_info("metrics on http://%s:%lld/metrics", cfg->metrics_listen,
                (long long)cfg->metrics_port);
    char desc[128];
    gw_cluster_describe(s->cluster, desc, sizeof(desc));
    cn_info("listening on %s:%d, %u threads, %s", cfg->http_listen, s->port, s->n_workers, desc);
    if (s->tls != NULL) {
        char cert[512];
        gw_http_tls_describe(s->tls, cert, sizeof(cert));
        cn_info("HTTPS on %s:%d: %s", cfg->http_listen, s->tls_port, cert);
    }
    return s;
fail:
    gw_server_free(s);
    return NULL;
}

int gw_server_port(const struct gw_server *s)
{
    return s->port;
}

static void *gw_server_thread(void *arg)
{
    struct gw_worker *w = arg;
    event_base_dispatch(w->base);
    atomic_fetch_add(&w->server->n_ended, 1);
    event_active(w->server->worker_ended, EV_READ, 0);   /* thread-safe: evthread is on */
    return NULL;
}

static void gw_server_on_worker_ended(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_server *s = arg;
    if (atomic_load(&s->n_ended) == s->n_workers)
        event_base_loopexit(s->ctl, NULL);
}

/* ---- graceful stop ---- */

static void gw_server_on_drain(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_worker *w = arg;
    gw_http_loop_drain(&w->http);
}

static void gw_server_on_signal(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    struct gw_server *s = arg;
    if (s->stopping) {
        cn_warn("signal %d again: exiting without waiting for connections", (int)sig);
        for (uint32_t i = 0; i < s->n_workers; i++)
            event_base_loopexit(s->workers[i].base, NULL);
        return;
    }
    s->stopping = 1;
    uint64_t busy = 0;
    for (uint32_t i = 0; i < s->n_workers; i++)
        busy += s->workers[i].http.n_conns;   /* a glance from another thread: only logged */
    cn_info("signal %d: stopping; %llu connections to finish (http.shutdown_timeout %lld ms)",
            (int)sig, (unsigned long long)busy, (long long)s->cfg->http_shutdown_timeout_ms);
    /* each loop drains its own connections, on its own thread */
    struct timeval now = {0, 0};
    for (uint32_t i = 0; i < s->n_workers; i++)
        event_base_once(s->workers[i].base, -1, EV_TIMEOUT, gw_server_on_drain, &s->workers[i],
                        &now);
}

/* SIGHUP: the access log's file is opened again (logrotate moved it);
 * the HTTPS certificate and key are read again and used for the
 * connections accepted from now on; a file that does not load leaves the
 * old certificate (or access log file) in place (logged). */
static void gw_server_on_reload(evutil_socket_t sig, short what, void *arg)
{
    (void)sig;
    (void)what;
    struct gw_server *s = arg;
    char err[CN_ERR_LEN];
    if (s->cfg->log_access_file[0] != '\0') {
        if (gw_access_log_reopen(s->access, err) != CN_OK)
            cn_error("SIGHUP: access log not reopened, the previous file stays: %s", err);
        else
            cn_info("SIGHUP: access log %s reopened", s->cfg->log_access_file);
    }
    if (s->tls == NULL) {
        cn_info("SIGHUP: no TLS certificate to reload (http.tls_port is 0)");
        return;
    }
    if (gw_http_tls_reload(s->tls, err) != CN_OK) {
        cn_error("SIGHUP: TLS certificate not reloaded, the previous one stays: %s", err);
        return;
    }
    char cert[512];
    gw_http_tls_describe(s->tls, cert, sizeof(cert));
    cn_info("SIGHUP: TLS certificate reloaded: %s", cert);
}

/* The workers run on their own threads; the main thread's loop takes the
 * signals (so it keeps answering a second one while workers drain) and ends
 * when every worker has ended. */
int gw_server_run(struct gw_server *s)
{
    signal(SIGPIPE, SIG_IGN);
    s->ctl = event_base_new();
    if (s->ctl == NULL)
        return CN_ERR;
    s->worker_ended = event_new(s->ctl, -1, EV_PERSIST, gw_server_on_worker_ended, s);
    struct event *sigint = evsignal_new(s->ctl, SIGINT, gw_server_on_signal, s);
    struct event *sigterm = evsignal_new(s->ctl, SIGTERM, gw_server_on_signal, s);
    event_add(sigint, NULL);
    event_add(sigterm, NULL);
    struct event *sighup = evsignal_new(s->ctl, SIGHUP, gw_server_on_reload, s);
    event_add(sighup, NULL);
    /* the workers' first requests must not race their sockets' connects;
     * a signal meanwhile is caught above and handled once the loop runs */
    uint64_t connect_by = cn_time_mono_us() + GW_SERVER_CONNECT_WAIT_US;
    uint32_t unconnected = 0;
    for (uint32_t i = 0; i < s->n_workers; i++)
        unconnected += gw_storage_client_await_connect(s->workers[i].client, connect_by);
    if (unconnected > 0)
        cn_warn("%u storage node connections not up after %d ms (a node down?): their first "
                "requests will mark them down", unconnected,
                (int)(GW_SERVER_CONNECT_WAIT_US / 1000));
    for (uint32_t i = 0; i < s->n_workers; i++)
        pthread_create(&s->workers[i].thread, NULL, gw_server_thread, &s->workers[i]);
    event_base_dispatch(s->ctl);
    for (uint32_t i = 0; i < s->n_workers; i++)
        pthread_join(s->workers[i].thread, NULL);
    event_free(sigint);
    event_free(sigterm);
    event_free(sighup);
    event_free(s->worker_ended);
    event_base_free(s->ctl);
    s->ctl = NULL;
    return CN_OK;
}

void gw_server_free(struct gw_server *s)
{
    if (s == NULL)
        return;
    if (s->accept != NULL)   /* the closes below must not wake freed workers */
        gw_accept_stop(s->accept);
    for (uint32_t i = 0; s->workers != NULL && i < s->n_workers; i++) {
        struct gw_worker *w = &s->workers[i];
        gw_http_loop_fini(&w->http);
        if (i == 0) {
            gw_lc_run_close(s->lifecycle);
            gw_collector_close(s->collector);
            gw_rebalance_close(s->rebalance);
            gw_key_sync_close(s->key_sync);
            gw_map_sync_close(s->map_sync);
        }
        gw_lo_reclaim_close(w->s3.reclaim);
        gw_storage_client_free(w->client);
        if (i == 0) {
            gw_lc_run_free(s->lifecycle);   /* its timer is on this loop */
            gw_collector_free(s->collector);
            gw_rebalance_free(s->rebalance);
            gw_key_sync_free(s->key_sync);
            gw_map_sync_free(s->map_sync);
        }
        if (s->maps != NULL && s->maps[i].swap != NULL)
            event_free(s->maps[i].swap);
        if (s->keys != NULL) {
            if (s->keys[i].swap != NULL)
                event_free(s->keys[i].swap);
            gw_credentials_free(atomic_exchange(&s->keys[i].pending, NULL));
            gw_credentials_free(s->keys[i].cur);
        }
        gw_lo_reclaim_free(w->s3.reclaim);
        gw_read_budget_free(w->s3.lo.read_budget);
        gw_lo_hasher_free(w->s3.lo.hasher);   /* its blob references go back first */
        gw_lo_pool_close(w->s3.lo.pool);   /* freed when ZeroMQ gave its buffers back */
        gw_store_free(w->s3.store);
        gw_sigv4_free(w->s3.sigv4);
        gw_sigv2_free(w->s3.sigv2);
        gw_bucket_owner_cache_free(w->s3.owners);
        if (w->base != NULL)
            event_base_free(w->base);
    }
    cn_metrics_http_free(s->metrics_http);   /* before the registry it reads */
    cn_free(s->workers);
    gw_accept_free(s->accept);
    gw_s3_metrics_free(s->metrics);
    if (s->access != NULL) {   /* after the loops: closing them logs the requests cut short */
        uint64_t dropped = gw_access_log_dropped(s->access);
        gw_access_log_free(s->access);
        if (dropped > 0)
            cn_warn("%llu access lines were dropped (the file was slower than the requests; "
                    "log.access_buffer)", (unsigned long long)dropped);
    }
    cn_free(s->loops);
    cn_free(s->keys);
    cn_free(s->maps);
    if (s->zmq != NULL)
        zmq_ctx_term(s->zmq);
    gw_cluster_free(s->cluster);
    gw_credentials_free(s->creds);
    cn_free(s->status.settings_json);
    gw_http_tls_free(s->tls);   /* after the loops: their connections hold SSL_CTX refs */
    cn_free(s);
}
