/* Event-loop thread (see loop.h): curl_multi_perform / curl_multi_poll over
 * its workers, publishing which epoch it has finished with. */
#include "loop.h"

#include <string.h>

#include "cn/alloc.h"
#include "cn/time.h"

/* Longest sleep in curl_multi_poll: bounds how late a stop or an epoch is
 * noticed even if a wakeup were lost. */
#define BENCH_LOOP_MAX_POLL_MS 50

void bench_loop_init(struct bench_loop *l, struct bench_shared *sh, int id, int first_id,
                     size_t nworkers)
{
    const struct bench_settings *s = sh->s;
    memset(l, 0, sizeof(*l));
    l->id = id;
    l->sh = sh;
    l->multi = curl_multi_init();
    CN_ASSERT(l->multi != NULL);
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
    bench_stats_fini(&l->slot[0]);
    bench_stats_fini(&l->slot[1]);
    memset(l, 0, sizeof(*l));
}

void bench_loop_wake(struct bench_loop *l)
{
    curl_multi_wakeup(l->multi);
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

void *bench_loop_main(void *arg)
{
    struct bench_loop *l = arg;
    struct bench_shared *sh = l->sh;
    size_t active = l->nworkers;
    uint64_t now = cn_time_mono_us();
    for (size_t i = 0; i < l->nworkers; i++)
        l->workers[i].next_start_us = now;
    for (;;) {
        uint64_t e = atomic_load_explicit(&sh->epoch, memory_order_acquire);
        l->cur = &l->slot[e & 1];
        int stopping = atomic_load_explicit(&sh->stop, memory_order_acquire);
        if (stopping)
            break;
        int running = 0;
        curl_multi_perform(l->multi, &running);
        active -= bench_loop_reap(l, 0);
        uint64_t next = UINT64_MAX;
        now = cn_time_mono_us();
        if (!sh->s->mode_max || running == 0)
            active -= bench_loop_start_due(l, now, &next);
        if (sh->s->recv_rate > 0)
            next = CN_MIN(next, bench_loop_unpause_due(l, now));
        atomic_store_explicit(&l->seen, e, memory_order_release);
        if (active == 0)
            break;
        int timeout = BENCH_LOOP_MAX_POLL_MS;
        if (next != UINT64_MAX) {
            now = cn_time_mono_us();
            uint64_t wait_ms = next > now ? (next - now + 999) / 1000 : 0;
            timeout = (int)CN_MIN(wait_ms, (uint64_t)timeout);
        }
        if (timeout > 0 || running > 0)
            curl_multi_poll(l->multi, NULL, 0, timeout, NULL);
    }
    /* requests still in flight at the end are dropped, as basho_bench does */
    for (size_t i = 0; i < l->nworkers; i++)
        if (l->workers[i].state == BENCH_WORKER_RUNNING)
            curl_multi_remove_handle(l->multi, l->workers[i].easy);
    atomic_store_explicit(&l->retired, 1, memory_order_release);
    return NULL;
}
