/* Process-wide setup and the worker threads. Every worker binds the same
 * address with SO_REUSEPORT so the kernel spreads connections over the
 * loops; each worker talks to the nodes through its own DEALER sockets. */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/thread.h>
#include <zmq.h>

#include "conn.h"
#include "worker.h"

#include "cn/alloc.h"
#include "cn/log.h"
#include "cn/ring.h"
#include "cn/time.h"

#define GW_SERVER_MAX_NODES 256

struct gw_server {
    const struct gw_config *cfg;
    struct gw_credentials *creds;
    struct cn_ring *ring;
    char *nodes[GW_SERVER_MAX_NODES];
    uint32_t n_nodes;
    uint32_t n_replicas;
    uint32_t write_quorum;
    void *zmq;
    struct gw_worker *workers;
    uint32_t n_workers;
    int port;
    uint64_t boot_s;
};

uint64_t gw_worker_next_request_id(struct gw_worker *w)
{
    /* 24 bits of boot time, 8 of thread, 32 of counter: unique per run */
    return ((w->server->boot_s & 0xffffffull) << 40) | ((uint64_t)(w->index & 0xff) << 32) |
           (++w->next_req & 0xffffffffull);
}

/* Splits storage.nodes ("a,b , c") into s->nodes. */
static int gw_server_parse_nodes(struct gw_server *s, const char *list, char err[CN_ERR_LEN])
{
    const char *p = list;
    while (*p != '\0') {
        while (*p == ' ' || *p == ',' || *p == '\t')
            p++;
        const char *e = p;
        while (*e != '\0' && *e != ',')
            e++;
        const char *t = e;
        while (t > p && (t[-1] == ' ' || t[-1] == '\t'))
            t--;
        if (t > p) {
            if (s->n_nodes == GW_SERVER_MAX_NODES) {
                snprintf(err, CN_ERR_LEN, "storage.nodes: more than %d nodes",
                         GW_SERVER_MAX_NODES);
                return CN_INVAL;
            }
            s->nodes[s->n_nodes++] = cn_strndup(p, (size_t)(t - p));
        }
        p = e;
    }
    if (s->n_nodes == 0) {
        snprintf(err, CN_ERR_LEN, "storage.nodes names no node");
        return CN_INVAL;
    }
    return CN_OK;
}

/* N = min(3, nodes) unless set; W = 2 (1 when N is 1) unless set. */
static int gw_server_quorums(struct gw_server *s, char err[CN_ERR_LEN])
{
    const struct gw_config *cfg = s->cfg;
    s->n_replicas = cfg->consistency_replicas > 0 ? (uint32_t)cfg->consistency_replicas
                                                  : CN_MIN(3u, s->n_nodes);
    if (s->n_replicas > s->n_nodes) {
        snprintf(err, CN_ERR_LEN, "consistency.num_of_replicas (%u) is above the %u nodes",
                 s->n_replicas, s->n_nodes);
        return CN_INVAL;
    }
    s->write_quorum = cfg->consistency_write > 0 ? (uint32_t)cfg->consistency_write
                                                 : (s->n_replicas == 1 ? 1u : 2u);
    if (s->write_quorum > s->n_replicas) {
        snprintf(err, CN_ERR_LEN, "consistency.write (%u) is above the replica count (%u)",
                 s->write_quorum, s->n_replicas);
        return CN_INVAL;
    }
    return CN_OK;
}

static void gw_server_on_accept(struct evconnlistener *l, evutil_socket_t fd,
                                struct sockaddr *addr, int len, void *arg)
{
    (void)l;
    (void)addr;
    (void)len;
    gw_conn_accept(arg, fd);
}

/* Binds the worker's listener; the first one resolves port 0. */
static int gw_server_listen(struct gw_server *s, struct gw_worker *w, char err[CN_ERR_LEN])
{
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_port = htons((uint16_t)s->port);
    if (inet_pton(AF_INET, s->cfg->http_listen, &sin.sin_addr) != 1) {
        snprintf(err, CN_ERR_LEN, "http.listen: '%s' is not an IPv4 address",
                 s->cfg->http_listen);
        return CN_INVAL;
    }
    w->listener = evconnlistener_new_bind(
        w->base, gw_server_on_accept, w,
        LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_REUSEABLE_PORT, 1024,
        (struct sockaddr *)&sin, sizeof(sin));
    if (w->listener == NULL) {
        snprintf(err, CN_ERR_LEN, "cannot listen on %s:%d: %s", s->cfg->http_listen, s->port,
                 strerror(errno));
        return CN_IO;
    }
    if (s->port == 0) {
        socklen_t sl = sizeof(sin);
        getsockname(evconnlistener_get_fd(w->listener), (struct sockaddr *)&sin, &sl);
        s->port = ntohs(sin.sin_port);
    }
    return CN_OK;
}

static int gw_server_worker_init(struct gw_server *s, uint32_t i, char err[CN_ERR_LEN])
{
    struct gw_worker *w = &s->workers[i];
    w->server = s;
    w->index = i;
    w->cfg = s->cfg;
    w->creds = s->creds;
    w->http_limits.max_request_line = (uint32_t)s->cfg->http_max_request_line;
    w->http_limits.max_headers = (uint32_t)s->cfg->http_max_headers;
    w->http_limits.max_head_bytes = (uint32_t)s->cfg->http_max_header_bytes;
    w->base = event_base_new();
    if (w->base == NULL) {
        snprintf(err, CN_ERR_LEN, "event_base_new failed");
        return CN_ERR;
    }
    w->client = gw_storage_client_new(w->base, s->zmq, s->nodes, s->n_nodes,
                                      s->cfg->storage_request_timeout_ms, err);
    if (w->client == NULL)
        return CN_ERR;
    w->store = gw_store_new(s->ring, w->client, s->n_replicas, s->write_quorum);
    struct gw_sigv4_config sc = {
        .creds = s->creds,
        .region = s->cfg->s3_region,
        .max_skew_s = (int)(s->cfg->s3_clock_skew_ms / 1000),
    };
    w->sigv4 = gw_sigv4_new(&sc);
    if (w->sigv4 == NULL) {
        snprintf(err, CN_ERR_LEN, "cannot set up the SigV4 verifier");
        return CN_ERR;
    }
    return gw_server_listen(s, w, err);
}

struct gw_server *gw_server_new(const struct gw_config *cfg, char err[CN_ERR_LEN])
{
    evthread_use_pthreads();
    struct gw_server *s = cn_calloc(1, sizeof(*s));
    s->cfg = cfg;
    s->port = (int)cfg->http_port;
    s->boot_s = cn_time_now_us() / 1000000;
    if (gw_credentials_load_file(cfg->s3_credentials, &s->creds, err) != CN_OK)
        goto fail;
    if (gw_server_parse_nodes(s, cfg->storage_nodes, err) != CN_OK ||
        gw_server_quorums(s, err) != CN_OK)
        goto fail;
    s->ring = cn_ring_new((const char *const *)s->nodes, s->n_nodes, (uint32_t)cfg->ring_vnodes,
                          err);
    if (s->ring == NULL)
        goto fail;
    s->zmq = zmq_ctx_new();
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    s->n_workers = cfg->http_threads > 0 ? (uint32_t)cfg->http_threads
                                         : (uint32_t)(cores > 0 ? cores : 1);
    s->workers = cn_calloc(s->n_workers, sizeof(*s->workers));
    for (uint32_t i = 0; i < s->n_workers; i++)
        if (gw_server_worker_init(s, i, err) != CN_OK)
            goto fail;
    cn_info("listening on %s:%d, %u threads, %u storage nodes (N=%u W=%u)", cfg->http_listen,
            s->port, s->n_workers, s->n_nodes, s->n_replicas, s->write_quorum);
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
    return NULL;
}

static void gw_server_on_signal(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    struct gw_server *s = arg;
    cn_info("signal %d: shutting down", (int)sig);
    for (uint32_t i = 0; i < s->n_workers; i++)
        event_base_loopexit(s->workers[i].base, NULL);
}

int gw_server_run(struct gw_server *s)
{
    signal(SIGPIPE, SIG_IGN);
    for (uint32_t i = 1; i < s->n_workers; i++)
        pthread_create(&s->workers[i].thread, NULL, gw_server_thread, &s->workers[i]);
    struct event *sigint = evsignal_new(s->workers[0].base, SIGINT, gw_server_on_signal, s);
    struct event *sigterm = evsignal_new(s->workers[0].base, SIGTERM, gw_server_on_signal, s);
    event_add(sigint, NULL);
    event_add(sigterm, NULL);
    event_base_dispatch(s->workers[0].base);
    for (uint32_t i = 1; i < s->n_workers; i++)
        pthread_join(s->workers[i].thread, NULL);
    event_free(sigint);
    event_free(sigterm);
    return CN_OK;
}

void gw_server_free(struct gw_server *s)
{
    if (s == NULL)
        return;
    for (uint32_t i = 0; s->workers != NULL && i < s->n_workers; i++) {
        struct gw_worker *w = &s->workers[i];
        if (w->listener != NULL)
            evconnlistener_free(w->listener);
        gw_store_free(w->store);
        gw_storage_client_free(w->client);
        gw_sigv4_free(w->sigv4);
        if (w->base != NULL)
            event_base_free(w->base);
    }
    cn_free(s->workers);
    if (s->zmq != NULL)
        zmq_ctx_term(s->zmq);
    cn_ring_free(s->ring);
    for (uint32_t i = 0; i < s->n_nodes; i++)
        cn_free(s->nodes[i]);
    gw_credentials_free(s->creds);
    cn_free(s);
}
