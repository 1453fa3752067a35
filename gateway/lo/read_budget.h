/* The read-ahead budget of one worker thread: a cap on the bytes of slices
 * that all large-object GETs of the worker hold together (requested from
 * the nodes, waiting to be written in order, or queued toward their
 * clients). large_object.read_ahead_budget is shared out evenly between
 * the workers (server.c), so the gateway as a whole never holds more.
 *
 * A stream enters with a base of two slices (one in flight, one queued
 * toward its client): enough to always make progress, so a stream that
 * got in is never starved by the others. Depth beyond the base is taken
 * and given back slice by slice, only while no new GET waits and only up
 * to three quarters of the budget (the rest stays for GETs entering). The
 * slice length a stream may use shrinks as streams crowd in
 * (gw_read_budget_slice()). A GET that finds no room for its base waits in
 * a FIFO (before its response headers) and is refused only after
 * max_wait. Not thread-safe: one per worker, on its loop. */
#ifndef GW_READ_BUDGET_H
#define GW_READ_BUDGET_H

#include <stdint.h>

#include <event2/event.h>

/* The shortest slice the budget shrinks a stream to (unless the stream
 * asked for less). */
#define GW_READ_BUDGET_MIN_SLICE (64u * 1024)

struct gw_read_budget;
struct gw_read_budget_waiter;

/* A waiter's outcome: admitted (1: its base of 2 x w->slice is reserved
 * and it counts as a stream) or refused (0: it waited max_wait). Runs from
 * the loop; the budget no longer knows w. */
typedef void (*gw_read_budget_cb)(struct gw_read_budget_waiter *w, int admitted);

/* A GET waiting to enter; embedded in its owner. Fields are the budget's
 * except cb and arg (set by gw_read_budget_enter) and slice (read after
 * admission). */
struct gw_read_budget_waiter {
    gw_read_budget_cb cb;
    void *arg;
    uint64_t want;                       /* the slice length the stream would like */
    uint64_t slice;                      /* out: the slice length its base is for */
    struct gw_read_budget *budget;
    struct gw_read_budget_waiter *next;
    struct event *timer;
    int queued;
};

/* Creates a budget of cap bytes (at least 2 x GW_READ_BUDGET_MIN_SLICE)
 * on base; a GET waits at most max_wait_ms to enter. */
struct gw_read_budget *gw_read_budget_new(struct event_base *base, uint64_t cap,
                                          int64_t max_wait_ms);

/* Frees b (at shutdown, before its loop): waiters still queued are
 * forgotten (their callbacks never run), streams still inside must not
 * call it again. NULL: no-op. */
void gw_read_budget_free(struct gw_read_budget *b);

/* The slice length a stream that wants `want` may use now: want, or less
 * when many streams share the budget (a power of two, at least
 * GW_READ_BUDGET_MIN_SLICE, so that every stream's base fits in half the
 * budget). */
uint64_t gw_read_budget_slice(const struct gw_read_budget *b, uint64_t want);

/* A new GET asks to enter with slices of `want`. Returns 1 when it entered
 * at once (w->slice set, 2 x w->slice reserved; cb will not run), 0 when it
 * waits (cb runs later from the loop, exactly once, unless cancelled). */
int gw_read_budget_enter(struct gw_read_budget *b, struct gw_read_budget_waiter *w,
                         uint64_t want, gw_read_budget_cb cb, void *arg);

/* A waiting GET goes away: it leaves the queue and cb never runs. A no-op
 * when w is not queued. */
void gw_read_budget_cancel(struct gw_read_budget *b, struct gw_read_budget_waiter *w);

/* A stream that entered ends and gives back the held bytes it had
 * reserved (its base and any depth). */
void gw_read_budget_leave(struct gw_read_budget *b, uint64_t held);

/* A stream reserves n more bytes: 1 when taken; 0 when they would bring
 * the budget above three quarters full or a GET is waiting to enter
 * (waiters go first). */
int gw_read_budget_take(struct gw_read_budget *b, uint64_t n);

/* A stream gives back n bytes it had reserved; waiters are let in from the
 * loop. */
void gw_read_budget_give(struct gw_read_budget *b, uint64_t n);

/* What it holds, for tests and the log. */
uint64_t gw_read_budget_cap(const struct gw_read_budget *b);
uint64_t gw_read_budget_used(const struct gw_read_budget *b);
uint32_t gw_read_budget_streams(const struct gw_read_budget *b);
uint32_t gw_read_budget_waiting(const struct gw_read_budget *b);

#endif
