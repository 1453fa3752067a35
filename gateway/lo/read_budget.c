/* The per-worker read-ahead budget (read_budget.h): a byte counter, a count
 * of streams inside, and a FIFO of GETs waiting to enter, each with its own
 * deadline. Bytes given back wake the queue from the loop (an active
 * event), never from inside the caller's stack. */
#include "read_budget.h"

#include "cn/alloc.h"
#include "cn/rc.h"

struct gw_read_budget {
    struct event_base *base;
    uint64_t cap;
    uint64_t used;
    uint32_t streams;
    uint32_t waiting;
    int64_t max_wait_ms;
    struct gw_read_budget_waiter *head, *tail;
    struct event *wake;          /* lets waiters in, from the loop */
};

static void gw_read_budget_on_wake(evutil_socket_t fd, short what, void *arg);
static void gw_read_budget_unlink(struct gw_read_budget *b, struct gw_read_budget_waiter *w);

struct gw_read_budget *gw_read_budget_new(struct event_base *base, uint64_t cap,
                                          int64_t max_wait_ms)
{
    CN_ASSERT(cap >= 2 * (uint64_t)GW_READ_BUDGET_MIN_SLICE);
    struct gw_read_budget *b = cn_calloc(1, sizeof(*b));
    b->base = base;
    b->cap = cap;
    b->max_wait_ms = max_wait_ms;
    b->wake = event_new(base, -1, 0, gw_read_budget_on_wake, b);
    return b;
}

void gw_read_budget_free(struct gw_read_budget *b)
{
    if (b == NULL)
        return;
    while (b->head != NULL) /* at shutdown: forgotten, their callbacks never run */
        gw_read_budget_unlink(b, b->head);
    event_free(b->wake);
    cn_free(b);
}

/* The slice for `want` with `extra` streams more than are counted. */
static uint64_t gw_read_budget_slice_n(const struct gw_read_budget *b, uint64_t want,
                                       uint32_t extra)
{
    uint64_t n = (uint64_t)b->streams + b->waiting + extra;
    uint64_t share = b->cap / (4 * (n > 0 ? n : 1));
    uint64_t pow2 = GW_READ_BUDGET_MIN_SLICE;
    while (pow2 * 2 <= share)
        pow2 *= 2;
    return CN_MIN(want, pow2);
}

uint64_t gw_read_budget_slice(const struct gw_read_budget *b, uint64_t want)
{
    return gw_read_budget_slice_n(b, want, 0);
}

/* Lets w in if its base fits: returns 1 and counts it as a stream. */
static int gw_read_budget_try_enter(struct gw_read_budget *b, struct gw_read_budget_waiter *w)
{
    /* a queued waiter is counted already; one entering at once is not */
    uint64_t slice = gw_read_budget_slice_n(b, w->want, w->queued ? 0 : 1);
    if (b->used + 2 * slice > b->cap)
        return 0;
    w->slice = slice;
    b->used += 2 * slice;
    b->streams++;
    return 1;
}

/* Unlinks w (queued) from the FIFO. */
static void gw_read_budget_unlink(struct gw_read_budget *b, struct gw_read_budget_waiter *w)
{
    struct gw_read_budget_waiter **pp = &b->head, *prev = NULL;
    while (*pp != w) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    *pp = w->next;
    if (b->tail == w)
        b->tail = prev;
    w->next = NULL;
    w->queued = 0;
    b->waiting--;
    event_free(w->timer);
    w->timer = NULL;
}

/* A waiter's deadline: it leaves the queue refused. */
static void gw_read_budget_on_deadline(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_read_budget_waiter *w = arg;
    struct gw_read_budget *b = w->budget;
    int was_head = b->head == w;
    gw_read_budget_unlink(b, w);
    if (was_head && b->head != NULL)
        event_active(b->wake, 0, 0); /* the next one may fit */
    w->cb(w, 0); /* may free its owner: nothing of w after */
}

/* Lets in waiters from the head of the queue while their base fits. */
static void gw_read_budget_on_wake(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_read_budget *b = arg;
    while (b->head != NULL) {
        struct gw_read_budget_waiter *w = b->head;
        /* counted as waiting while its slice is chosen, like an entering GET */
        if (!gw_read_budget_try_enter(b, w))
            return;
        gw_read_budget_unlink(b, w);
        w->cb(w, 1); /* may give bytes back or free its owner: nothing of w after */
    }
}

int gw_read_budget_enter(struct gw_read_budget *b, struct gw_read_budget_waiter *w,
                         uint64_t want, gw_read_budget_cb cb, void *arg)
{
    CN_ASSERT(!w->queued);
    w->cb = cb;
    w->arg = arg;
    w->want = want;
    w->slice = 0;
    w->next = NULL;
    w->budget = b;
    if (b->head == NULL && gw_read_budget_try_enter(b, w))
        return 1;
    w->queued = 1;
    b->waiting++;
    if (b->tail != NULL)
        b->tail->next = w;
    else
        b->head = w;
    b->tail = w;
    w->timer = evtimer_new(b->base, gw_read_budget_on_deadline, w);
    struct timeval tv = {b->max_wait_ms / 1000, (b->max_wait_ms % 1000) * 1000};
    evtimer_add(w->timer, &tv);
    return 0;
}

void gw_read_budget_cancel(struct gw_read_budget *b, struct gw_read_budget_waiter *w)
{
    if (!w->queued)
        return;
    int was_head = b->head == w;
    gw_read_budget_unlink(b, w);
    if (was_head && b->head != NULL)
        event_active(b->wake, 0, 0); /* the next one may fit */
}

void gw_read_budget_leave(struct gw_read_budget *b, uint64_t held)
{
    CN_ASSERT(b->streams > 0 && held <= b->used);
    b->streams--;
    gw_read_budget_give(b, held);
}

int gw_read_budget_take(struct gw_read_budget *b, uint64_t n)
{
    if (b->head != NULL || b->used + n > b->cap - b->cap / 4)
        return 0;
    b->used += n;
    return 1;
}

void gw_read_budget_give(struct gw_read_budget *b, uint64_t n)
{
    CN_ASSERT(n <= b->used);
    b->used -= n;
    if (b->head != NULL && n > 0)
        event_active(b->wake, 0, 0);
}

uint64_t gw_read_budget_cap(const struct gw_read_budget *b)
{
    return b->cap;
}

uint64_t gw_read_budget_used(const struct gw_read_budget *b)
{
    return b->used;
}

uint32_t gw_read_budget_streams(const struct gw_read_budget *b)
{
    return b->streams;
}

uint32_t gw_read_budget_waiting(const struct gw_read_budget *b)
{
    return b->waiting;
}
