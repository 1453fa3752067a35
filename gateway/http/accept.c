/* Admission of client connections (see accept.h). One atomic counter for
 * the process; each worker enables or disables its own listener on its own
 * thread, told by an event that any thread may activate when the count
 * crosses the cap. */
#include "accept.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "http_loop.h"

#include "cn/alloc.h"
#include "cn/log.h"

struct gw_accept {
    uint64_t max;
    atomic_uint_fast64_t open;   /* connections taken over and not yet closed */
    atomic_int stopped;          /* teardown: no more cross-thread wake-ups */
    struct gw_http_loop **workers;  /* attached so far, for the wake-ups */
    uint32_t n_workers, n_attached;
};

uint64_t gw_accept_reserve(uint32_t n_workers, uint32_t n_nodes)
{
    /* measured: ~12 fds for the process (stdio, log, main loop, ZeroMQ
     * context) and per worker ~5 plus 2 per node; doubled per node so a
     * reconnecting socket and a margin fit */
    return 64 + (uint64_t)n_workers * (8 + 4 * (uint64_t)n_nodes);
}

uint64_t gw_accept_derive_max(uint64_t nofile, uint64_t reserve)
{
    if (nofile > 2 * reserve)
        return nofile - reserve;
    return nofile / 2 > 0 ? nofile / 2 : 1;
}

uint64_t gw_accept_raise_nofile(uint64_t want, uint64_t *hard)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    *hard = rl.rlim_max == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_max;
    if (rl.rlim_cur != RLIM_INFINITY && (uint64_t)rl.rlim_cur < want) {
        struct rlimit up = rl;
        up.rlim_cur = (rlim_t)CN_MIN(want, *hard);
        if (setrlimit(RLIMIT_NOFILE, &up) == 0)
            rl = up;
    }
    return rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
}

struct gw_accept *gw_accept_new(uint64_t max, uint32_t n_workers)
{
    struct gw_accept *a = cn_calloc(1, sizeof(*a));
    a->max = max > 0 ? max : 1;
    atomic_init(&a->open, 0);
    atomic_init(&a->stopped, 0);
    a->workers = cn_calloc(n_workers > 0 ? n_workers : 1, sizeof(*a->workers));
    a->n_workers = n_workers;
    return a;
}

void gw_accept_free(struct gw_accept *a)
{
    if (a == NULL)
        return;
    cn_free(a->workers);
    cn_free(a);
}

uint64_t gw_accept_max(const struct gw_accept *a)
{
    return a->max;
}

uint64_t gw_accept_open(const struct gw_accept *a)
{
    return atomic_load(&((struct gw_accept *)a)->open);
}

void gw_accept_sync(struct gw_http_loop *w)
{
    struct gw_accept *a = w->accept;
    int any = w->listener != NULL || w->tls_listener != NULL;
    int want = any && !w->draining && !w->accept_backoff && atomic_load(&a->open) < a->max;
    if (!any) {
        w->accept_on = 0;
        return;
    }
    if (want == w->accept_on)
        return;
    /* the plain and the HTTPS listener count against the same cap */
    struct evconnlistener *lis[] = {w->listener, w->tls_listener};
    for (size_t i = 0; i < CN_ARRAY_LEN(lis); i++) {
        if (lis[i] == NULL)
            continue;
        if (want)
            evconnlistener_enable(lis[i]);
        else
            evconnlistener_disable(lis[i]);
    }
    w->accept_on = want;
    cn_debug("thread %u: %s accepting (%llu open, cap %llu%s)", w->index,
             want ? "resumes" : "stops", (unsigned long long)atomic_load(&a->open),
             (unsigned long long)a->max, w->accept_backoff ? ", backing off" : "");
}

/* Any thread may run this: each worker re-checks on its own loop. */
static void gw_accept_wake_all(struct gw_accept *a)
{
    if (atomic_load(&a->stopped))
        return;
    for (uint32_t i = 0; i < a->n_attached; i++)
        event_active(a->workers[i]->accept_wake, EV_READ, 0);
}

static void gw_accept_on_wake(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gw_accept_sync(arg);
}

static void gw_accept_on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_http_loop *w = arg;
    w->accept_backoff = 0;
    gw_accept_sync(w);
}

/* accept() failed for a reason other than a retriable one (libevent
 * handles EAGAIN, EINTR, ECONNABORTED): most often EMFILE or ENFILE. The
 * pending connection stays readable, so retrying at once would spin; pause
 * this listener for a short while instead. */
static void gw_accept_on_error(struct evconnlistener *l, void *arg)
{
    (void)l;
    struct gw_http_loop *w = arg;
    int err = EVUTIL_SOCKET_ERROR();
    cn_warn("thread %u: accept: %s (%llu connections open); pausing accepts for %d ms",
            w->index, evutil_socket_error_to_string(err),
            (unsigned long long)atomic_load(&w->accept->open), GW_ACCEPT_BACKOFF_MS);
    w->accept_backoff = 1;
    gw_accept_sync(w);
    struct timeval tv = {0, GW_ACCEPT_BACKOFF_MS * 1000};
    evtimer_add(w->accept_retry, &tv);
}

int gw_accept_worker_init(struct gw_accept *a, struct gw_http_loop *w, char err[CN_ERR_LEN])
{
    CN_ASSERT(a->n_attached < a->n_workers);
    w->accept = a;
    w->accept_on = w->listener != NULL || w->tls_listener != NULL;
    w->accept_wake = event_new(w->base, -1, 0, gw_accept_on_wake, w);
    w->accept_retry = evtimer_new(w->base, gw_accept_on_retry, w);
    if (w->accept_wake == NULL || w->accept_retry == NULL) {
        snprintf(err, CN_ERR_LEN, "cannot create the accept events");
        return CN_ERR;
    }
    if (w->listener != NULL)
        evconnlistener_set_error_cb(w->listener, gw_accept_on_error);
    if (w->tls_listener != NULL)
        evconnlistener_set_error_cb(w->tls_listener, gw_accept_on_error);
    a->workers[a->n_attached++] = w;
    return CN_OK;
}

void gw_accept_worker_fini(struct gw_http_loop *w)
{
    if (w->accept_wake != NULL)
        event_free(w->accept_wake);
    if (w->accept_retry != NULL)
        event_free(w->accept_retry);
    w->accept_wake = w->accept_retry = NULL;
}

void gw_accept_stop(struct gw_accept *a)
{
    atomic_store(&a->stopped, 1);
}

void gw_accept_opened(struct gw_http_loop *w)
{
    struct gw_accept *a = w->accept;
    uint64_t now = atomic_fetch_add(&a->open, 1) + 1;
    if (now < a->max)
        return;
    /* this listener stops before libevent accepts the next one; the others
     * are told once, when the count reaches the cap */
    gw_accept_sync(w);
    if (now == a->max)
        gw_accept_wake_all(a);
}

void gw_accept_closed(struct gw_http_loop *w)
{
    struct gw_accept *a = w->accept;
    uint64_t before = atomic_fetch_sub(&a->open, 1);
    if (before == a->max)
        gw_accept_wake_all(a);
}
