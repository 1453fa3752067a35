/* Event-loop thread (see loop.h): epoll + curl_multi_socket_action over its
 * workers, publishing which epoch it has finished with. Waiting on epoll for
 * just the sockets that are ready, instead of poll() over all of them and
 * curl_multi_perform() over every transfer, keeps the cost per request flat
 * in the number of workers. */
#include "loop.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cn/alloc.h"
#include "cn/time.h"

/* Longest sleep in epoll_wait: bounds how late a stop or an epoch is
 * noticed even if a wakeup were lost. */
#define BENCH_LOOP_MAX_POLL_MS 50
#define BENCH_LOOP_EVENTS 256

/* CURLMOPT_SOCKETFUNCTION: keeps the epoll set in step with what libcurl
 * wants to hear about on socket fd. */
static int bench_loop_on_socket(CURL *easy, curl_socket_t fd, int what, void *arg, void *sockp)
{
    struct bench_loop *l = arg;
    (void)easy;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
        curl_multi_assign(l->multi, fd, NULL);
        return 0;
    }
    struct epoll_event ev = {0};
    ev.data.fd = fd;
    if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
        ev.events |= EPOLLIN;
    if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
        ev.events |= EPOLLOUT;
    int op = sockp != NULL ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(l->epfd, op, fd, &ev) != 0 && errno == ENOENT)
        epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev);
    else if (op == EPOLL_CTL_ADD && errno == EEXIST)
        epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev);
    curl_multi_assign(l->multi, fd, l);
    return 0;
}

/* CURLMOPT_TIMERFUNCTION: when libcurl next wants to be called with
 * CURL_SOCKET_TIMEOUT (-1: never). */
static int bench_loop_on_timer(CURLM *multi, long timeout_ms, void *arg)
{
    struct bench_loop *l = arg;
    (void)multi;
    l->timer_at_us = timeout_ms < 0 ? 0 : cn_time_mono_us() + (uint64_t)timeout_ms * 1000;
    if (timeout_ms == 0)
        l->timer_at_us = 1; /* due at once */
    return 0;
}

void bench_loop_init(struct bench_loop *l, struct bench_shared *sh, int id, int first_id,
                     size_t nworkers)
{
    const struct bench_settings *s = sh->s;
    memset(l, 0, sizeof(*l));
    l->id = id;
    l->sh = sh;
    l->multi = curl_multi_init();
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    l->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    CN_ASSERT(l->multi != NULL && l->epfd >= 0 && l->wakefd >= 0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = l->wakefd};
    CN_ASSERT(epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->wakefd, &ev) == 0);
    curl_multi_setopt(l->multi, CURLMOPT_SOCKETFUNCTION, bench_loop_on_socket);
    curl_multi_setopt(l->multi, CURLMOPT_SOCKETDATA, l);
    curl_multi_setopt(l->multi, CURLMOPT_TIMERFUNCTION, bench_loop_on_timer);
    curl_multi_setopt(l->multi, CURLMOPT_TIMERDATA, l);
    l->workers = cn_calloc(nworkers, sizeof(*l->workers));
    l->nworkers = nworkers;
    for (size_t i = 0; i < nworkers; i++)
        bench_worker_init(&l->workers[i], l, first_id + (int)i);
    bench_stats_init(&l->slot[0], s->nops);
    bench_stats_init(&l->slot[1], s->nops);
    l->cur = &l->slot[0];
    l->signing = s->access_key[0] != '\0';
    if (l->signing)
        bench_sigv4_init(&l->signer, s->access_key, s->secret_key, s->region, "s3");
    l->date_s = -1;
}

void bench_loop_fini(struct bench_loop *l)
{
    for (size_t i = 0; i < l->nworkers; i++)
        bench_worker_fini(&l->workers[i]);
    cn_free(l->workers);
    if (l->multi != NULL)
        curl_multi_cleanup(l->multi);
    if (l->epfd >= 0)
        close(l->epfd);
    if (l->wakefd >= 0)
        close(l->wakefd);
    bench_stats_fini(&l->slot[0]);
    bench_stats_fini(&l->slot[1]);
    memset(l, 0, sizeof(*l));
}

void bench_loop_wake(struct bench_loop *l)
{
    uint64_t one = 1;
    ssize_t n = write(l->wakefd, &one, sizeof(one));
    (void)n; /* EAGAIN: a wakeup is already pending */
}

/* Hands every finished transfer to its worker; in max mode starts the
 * worker's next request at once. Returns how many workers ran out of keys. */
static size_t bench_loop_reap(struct bench_loop *l, int stopping)
{
    CURLMsg *msg;
    int left;
    size_t done = 0;
    while ((msg = curl_multi_info_read(l->multi, &left)) != NULL) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        struct bench_worker *w = NULL;
        CURL *e = msg->easy_handle;
        CURLcode result = msg->data.result;
        curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&w);
        curl_multi_remove_handle(l->multi, e);
        uint64_t now = cn_time_mono_us();
        bench_worker_finish(w, result, now);
        if (!stopping && l->sh->s->mode_max && bench_worker_start(w, now) == CN_DONE)
            done++;
    }
    return done;
}

/* Rate mode: starts the workers whose time has come; returns the number that
 * ran out of keys and sets *next_us to the earliest pending start. */
static size_t bench_loop_start_due(struct bench_loop *l, uint64_t now, uint64_t *next_us)
{
    size_t done = 0;
    *next_us = UINT64_MAX;
    for (size_t i = 0; i < l->nworkers; i++) {
        struct bench_worker *w = &l->workers[i];
        if (w->state != BENCH_WORKER_WAITING)
            continue;
        if (w->next_start_us <= now) {
            if (bench_worker_start(w, now) == CN_DONE)
                done++;
        } else if (w->next_start_us < *next_us) {
            *next_us = w->next_start_us;
        }
    }
    return done;
}

/* recv_rate: resumes the paused transfers whose time has come; returns the
 * earliest time one still waits for (UINT64_MAX: none). */
static uint64_t bench_loop_unpause_due(struct bench_loop *l, uint64_t now)
{
    uint64_t next = UINT64_MAX;
    for (size_t i = 0; i < l->nworkers; i++) {
        uint64_t t = bench_worker_unpause(&l->workers[i], now);
        if (t != 0 && t < next)
            next = t;
    }
    return next;
}

/* Waits for socket readiness (or a timeout, or a wakeup) and lets libcurl
 * act on what is ready. */
static void bench_loop_wait(struct bench_loop *l, uint64_t until_us)
{
    struct epoll_event evs[BENCH_LOOP_EVENTS];
    uint64_t now = cn_time_mono_us();
    if (l->timer_at_us != 0 && l->timer_at_us < until_us)
        until_us = l->timer_at_us;
    int timeout = until_us <= now ? 0 : (int)CN_MIN((until_us - now + 999) / 1000,
                                                    (uint64_t)BENCH_LOOP_MAX_POLL_MS);
    int n = epoll_wait(l->epfd, evs, BENCH_LOOP_EVENTS, timeout);
    int running;
    for (int i = 0; i < n; i++) {
        if (evs[i].data.fd == l->wakefd) {
            uint64_t v;
            ssize_t r = read(l->wakefd, &v, sizeof(v));
            (void)r;
            continue;
        }
        int flags = 0;
        if (evs[i].events & (EPOLLIN | EPOLLHUP))
            flags |= CURL_CSELECT_IN;
        if (evs[i].events & EPOLLOUT)
            flags |= CURL_CSELECT_OUT;
        if (evs[i].events & EPOLLERR)
            flags |= CURL_CSELECT_ERR;
        curl_multi_socket_action(l->multi, evs[i].data.fd, flags, &running);
    }
    if (l->timer_at_us != 0 && l->timer_at_us <= cn_time_mono_us()) {
        l->timer_at_us = 0;
        curl_multi_socket_action(l->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
}

void *bench_loop_main(void *arg)
{
    struct bench_loop *l = arg;
    struct bench_shared *sh = l->sh;
    size_t active = l->nworkers;
    uint64_t now = cn_time_mono_us(), next = now;
    for (size_t i = 0; i < l->nworkers; i++)
        l->workers[i].next_start_us = now;
    for (;;) {
        uint64_t e = atomic_load_explicit(&sh->epoch, memory_order_acquire);
        l->cur = &l->slot[e & 1];
        if (atomic_load_explicit(&sh->stop, memory_order_acquire))
            break;
        bench_loop_wait(l, next);
        /* the epoch may have moved while we waited: record into its slot */
        e = atomic_load_explicit(&sh->epoch, memory_order_acquire);
        l->cur = &l->slot[e & 1];
        active -= bench_loop_reap(l, 0);
        next = UINT64_MAX;
        now = cn_time_mono_us();
        active -= bench_loop_start_due(l, now, &next);
        if (sh->s->recv_rate > 0)
            next = CN_MIN(next, bench_loop_unpause_due(l, now));
        atomic_store_explicit(&l->seen, e, memory_order_release);
        if (active == 0)
            break;
    }
    /* requests still in flight at the end are dropped, as basho_bench does */
    for (size_t i = 0; i < l->nworkers; i++)
        if (l->workers[i].state == BENCH_WORKER_RUNNING)
            curl_multi_remove_handle(l->multi, l->workers[i].easy);
    atomic_store_explicit(&l->retired, 1, memory_order_release);
    return NULL;
}
