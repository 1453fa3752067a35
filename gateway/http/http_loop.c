/* One thread's listener, connections and graceful drain (http_loop.h). */
#include "http_loop.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "accept.h"
#include "conn.h"
#include "http_tls.h"

#include "cn/log.h"

void gw_http_loop_init(struct gw_http_loop *l, struct event_base *base,
                       const struct gw_http_opts *opts, const struct gw_http_app *app,
                       uint32_t index, uint64_t id_prefix)
{
    memset(l, 0, sizeof(*l));
    l->base = base;
    l->opts = *opts;
    l->app = *app;
    l->index = index;
    l->id_prefix = id_prefix;
}

uint64_t gw_http_loop_next_request_id(struct gw_http_loop *l)
{
    /* 24 random bits drawn at the process's start, 8 of thread, 32 of
     * counter: unique within a run, and two gateways (or two runs of one)
     * share a prefix with probability 2^-24 */
    return ((l->id_prefix & 0xffffffull) << 40) | ((uint64_t)(l->index & 0xff) << 32) |
           (++l->next_req & 0xffffffffull);
}

static void gw_http_loop_on_accept(struct evconnlistener *lis, evutil_socket_t fd,
                                   struct sockaddr *addr, int len, void *arg)
{
    (void)lis;
    (void)addr;
    (void)len;
    gw_conn_accept(arg, fd, NULL);
}

/* An HTTPS connection: the same state machine over a TLS bufferevent, with
 * the certificate current at accept time. */
static void gw_http_loop_on_accept_tls(struct evconnlistener *lis, evutil_socket_t fd,
                                       struct sockaddr *addr, int len, void *arg)
{
    (void)lis;
    (void)addr;
    (void)len;
    struct gw_http_loop *l = arg;
    SSL *ssl = gw_http_tls_ssl_new(l->tls);
    if (ssl == NULL) {
        evutil_closesocket(fd);
        return;
    }
    gw_conn_accept(l, fd, ssl);
}

/* Binds a listener on addr:*port calling cb (see gw_http_loop_listen). */
static struct evconnlistener *gw_http_loop_bind(struct gw_http_loop *l, const char *addr,
                                                int *port, evconnlistener_cb cb,
                                                char err[CN_ERR_LEN])
{
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_port = htons((uint16_t)*port);
    if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
        snprintf(err, CN_ERR_LEN, "http.listen: '%s' is not an IPv4 address", addr);
        return NULL;
    }
    struct evconnlistener *lis = evconnlistener_new_bind(
        l->base, cb, l, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_REUSEABLE_PORT,
        1024, (struct sockaddr *)&sin, sizeof(sin));
    if (lis == NULL) {
        snprintf(err, CN_ERR_LEN, "cannot listen on %s:%d: %s", addr, *port, strerror(errno));
        return NULL;
    }
    if (*port == 0) {
        socklen_t sl = sizeof(sin);
        getsockname(evconnlistener_get_fd(lis), (struct sockaddr *)&sin, &sl);
        *port = ntohs(sin.sin_port);
    }
    return lis;
}

int gw_http_loop_listen(struct gw_http_loop *l, const char *addr, int *port,
                        char err[CN_ERR_LEN])
{
    l->listener = gw_http_loop_bind(l, addr, port, gw_http_loop_on_accept, err);
    return l->listener != NULL ? CN_OK : CN_IO;
}

int gw_http_loop_listen_tls(struct gw_http_loop *l, const char *addr, int *port,
                            struct gw_http_tls *tls, char err[CN_ERR_LEN])
{
    l->tls = tls;
    l->tls_listener = gw_http_loop_bind(l, addr, port, gw_http_loop_on_accept_tls, err);
    return l->tls_listener != NULL ? CN_OK : CN_IO;
}

void gw_http_loop_drain_check(struct gw_http_loop *l)
{
    if (l->draining && l->n_conn_mem == 0)
        event_base_loopexit(l->base, NULL);
}

static void gw_http_loop_on_drain_deadline(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_http_loop *l = arg;
    cn_warn("thread %u: %llu connections still busy after http.shutdown_timeout, exiting",
            l->index, (unsigned long long)l->n_conns);
    event_base_loopexit(l->base, NULL);
}

void gw_http_loop_drain(struct gw_http_loop *l)
{
    if (l->draining)
        return;
    l->draining = 1;
    if (l->listener != NULL)   /* closed: new connections are refused, not queued */
        evconnlistener_free(l->listener);
    if (l->tls_listener != NULL)
        evconnlistener_free(l->tls_listener);
    l->listener = l->tls_listener = NULL;
    gw_accept_sync(l);
    for (struct gw_conn *c = l->conns, *next; c != NULL; c = next) {
        next = c->next;   /* closing unlinks c only later, from the loop */
        gw_conn_close_when_idle(c);
    }
    int64_t ms = l->opts.shutdown_timeout_ms;
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)((ms % 1000) * 1000)};
    l->drain_deadline = evtimer_new(l->base, gw_http_loop_on_drain_deadline, l);
    evtimer_add(l->drain_deadline, &tv);
    gw_http_loop_drain_check(l);
}

void gw_http_loop_fini(struct gw_http_loop *l)
{
    if (l->listener != NULL)
        evconnlistener_free(l->listener);
    if (l->tls_listener != NULL)
        evconnlistener_free(l->tls_listener);
    l->listener = l->tls_listener = NULL;
    if (l->base != NULL)
        gw_conn_close_all(l);
    if (l->drain_deadline != NULL)
        event_free(l->drain_deadline);
    l->drain_deadline = NULL;
    gw_accept_worker_fini(l);
}
