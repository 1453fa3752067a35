/* One thread's listener, connections and graceful drain (http_loop.h). */
#include "http_loop.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "accept.h"
#include "conn.h"

#include "cn/log.h"

void gw_http_loop_init(struct gw_http_loop *l, struct event_base *base,
                       const struct gw_http_opts *opts, const struct gw_http_app *app,
                       uint32_t index, uint64_t boot_s)
{
    memset(l, 0, sizeof(*l));
    l->base = base;
    l->opts = *opts;
    l->app = *app;
    l->index = index;
    l->boot_s = boot_s;
}

uint64_t gw_http_loop_next_request_id(struct gw_http_loop *l)
{
    /* 24 bits of boot time, 8 of thread, 32 of counter: unique per run */
    return ((l->boot_s & 0xffffffull) << 40) | ((uint64_t)(l->index & 0xff) << 32) |
           (++l->next_req & 0xffffffffull);
}

static void gw_http_loop_on_accept(struct evconnlistener *lis, evutil_socket_t fd,
                                   struct sockaddr *addr, int len, void *arg)
{
    (void)lis;
    (void)addr;
    (void)len;
    gw_conn_accept(arg, fd);
}

int gw_http_loop_listen(struct gw_http_loop *l, const char *addr, int *port,
                        char err[CN_ERR_LEN])
{
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_port = htons((uint16_t)*port);
    if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
        snprintf(err, CN_ERR_LEN, "http.listen: '%s' is not an IPv4 address", addr);
        return CN_INVAL;
    }
    l->listener = evconnlistener_new_bind(
        l->base, gw_http_loop_on_accept, l,
        LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_REUSEABLE_PORT, 1024,
        (struct sockaddr *)&sin, sizeof(sin));
    if (l->listener == NULL) {
        snprintf(err, CN_ERR_LEN, "cannot listen on %s:%d: %s", addr, *port, strerror(errno));
        return CN_IO;
    }
    if (*port == 0) {
        socklen_t sl = sizeof(sin);
        getsockname(evconnlistener_get_fd(l->listener), (struct sockaddr *)&sin, &sl);
        *port = ntohs(sin.sin_port);
    }
    return CN_OK;
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
    l->listener = NULL;
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
    l->listener = NULL;
    if (l->base != NULL)
        gw_conn_close_all(l);
    if (l->drain_deadline != NULL)
        event_free(l->drain_deadline);
    l->drain_deadline = NULL;
    gw_accept_worker_fini(l);
}
