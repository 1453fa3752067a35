/* The per-worker read-ahead budget (gateway/lo/read_budget.c) on a real
 * libevent loop: streams enter with a base of two slices, the slice length
 * shrinks as streams crowd in (never below the minimum), a GET without
 * room waits in FIFO order and is let in when bytes come back, extra depth
 * is refused while anyone waits, a waiter past its deadline is refused,
 * and a cancelled waiter never hears back. The counter never exceeds the
 * cap. */
#include <stdint.h>
#include <string.h>

#include <event2/event.h>

#include "cn/rc.h"
#include "cn/test.h"
#include "read_budget.h"

CN_TEST_GLOBALS;

#define KIB 1024u
#define MIB (1024u * 1024u)

struct waiter_rec {
    struct gw_read_budget_waiter w;
    int calls;
    int admitted;
    int order;        /* when its callback ran, among all waiters */
};

static int g_order;

static void on_admit(struct gw_read_budget_waiter *w, int admitted)
{
    struct waiter_rec *r = w->arg;
    r->calls++;
    r->admitted = admitted;
    r->order = ++g_order;
}

/* Runs the loop until nothing is active (a few passes: wakes chain). */
static void loop_run(struct event_base *base)
{
    for (int i = 0; i < 8; i++)
        event_base_loop(base, EVLOOP_NONBLOCK);
}

/* A lone stream gets the slice it asked for; as streams crowd in, entering
 * ones get shorter slices (powers of two, never below the minimum), and
 * once the bases fill the budget newcomers wait. Streams inside shrink to
 * the current slice (as the pipeline does on its next pump) and give the
 * difference back, which lets the waiters in: 40 streams fit in 16 MiB. */
static void test_slice_shrinks(void)
{
    struct event_base *base = event_base_new();
    struct gw_read_budget *b = gw_read_budget_new(base, 16 * MIB, 60000);
    CN_CHECK_EQ_INT(gw_read_budget_slice(b, 512 * KIB), 512 * KIB);
    CN_CHECK_EQ_INT(gw_read_budget_slice(b, 4 * KIB), 4 * KIB);
    struct waiter_rec r[40];
    memset(r, 0, sizeof(r));
    int inside = 0;
    uint64_t prev = 512 * KIB;
    for (int i = 0; i < 40; i++) {
        int in = gw_read_budget_enter(b, &r[i].w, 512 * KIB, on_admit, &r[i]);
        CN_CHECK(gw_read_budget_used(b) <= gw_read_budget_cap(b));
        if (!in)
            continue;
        CN_CHECK_EQ_INT(i, inside); /* nobody enters past a waiter */
        inside++;
        uint64_t sl = r[i].w.slice;
        CN_CHECK(sl >= GW_READ_BUDGET_MIN_SLICE && sl <= prev && (sl & (sl - 1)) == 0);
        prev = sl;
    }
    CN_CHECK(inside >= 16 && inside < 40);
    CN_CHECK_EQ_INT(gw_read_budget_waiting(b), 40 - inside);
    CN_CHECK_EQ_INT(r[0].w.slice, 512 * KIB);   /* the first had the budget to itself */
    /* 16 MiB / (4 x 40) = 102 KiB: the 64 KiB power of two */
    uint64_t now = gw_read_budget_slice(b, 512 * KIB);
    CN_CHECK_EQ_INT(now, 64 * KIB);
    for (int i = 0; i < inside; i++) {
        gw_read_budget_give(b, 2 * (r[i].w.slice - now));
        r[i].w.slice = now;
    }
    loop_run(base);
    CN_CHECK_EQ_INT(gw_read_budget_streams(b), 40);
    CN_CHECK_EQ_INT(gw_read_budget_waiting(b), 0);
    for (int i = inside; i < 40; i++) {
        CN_CHECK(r[i].calls == 1 && r[i].admitted);
        CN_CHECK_EQ_INT(r[i].w.slice, 64 * KIB);
    }
    CN_CHECK_EQ_INT(gw_read_budget_used(b), 40 * 128 * KIB);
    for (int i = 0; i < 40; i++)
        gw_read_budget_leave(b, 2 * r[i].w.slice);
    CN_CHECK_EQ_INT(gw_read_budget_used(b), 0);
    CN_CHECK_EQ_INT(gw_read_budget_streams(b), 0);
    gw_read_budget_free(b);
    event_base_free(base);
}

/* A full budget: new GETs wait in order; depth beyond the base stops at
 * three quarters of the cap, and altogether while anyone waits; bytes
 * given back let waiters in from the loop, head first, as many as fit. */
static void test_fifo_wait(void)
{
    struct event_base *base = event_base_new();
    struct gw_read_budget *b = gw_read_budget_new(base, 1 * MIB, 60000);
    struct waiter_rec big, w0, w1, w2, w3;
    memset(&big, 0, sizeof(big));
    memset(&w0, 0, sizeof(w0));
    memset(&w1, 0, sizeof(w1));
    memset(&w2, 0, sizeof(w2));
    memset(&w3, 0, sizeof(w3));
    g_order = 0;
    CN_CHECK(gw_read_budget_enter(b, &big.w, 512 * KIB, on_admit, &big));
    CN_CHECK_EQ_INT(big.w.slice, 256 * KIB);               /* 1 MiB / 4 */
    CN_CHECK(gw_read_budget_take(b, 256 * KIB));           /* depth, to 3/4 */
    CN_CHECK(!gw_read_budget_take(b, 64 * KIB));           /* the last quarter is for GETs */
    CN_CHECK(gw_read_budget_enter(b, &w0.w, 512 * KIB, on_admit, &w0));
    CN_CHECK_EQ_INT(w0.w.slice, 128 * KIB);                /* 1 MiB / (4 x 2) */
    CN_CHECK_EQ_INT(gw_read_budget_used(b), 1 * MIB);
    CN_CHECK(!gw_read_budget_enter(b, &w1.w, 512 * KIB, on_admit, &w1));
    CN_CHECK(!gw_read_budget_enter(b, &w2.w, 512 * KIB, on_admit, &w2));
    CN_CHECK(!gw_read_budget_enter(b, &w3.w, 512 * KIB, on_admit, &w3));
    CN_CHECK_EQ_INT(gw_read_budget_waiting(b), 3);
    loop_run(base);
    CN_CHECK_EQ_INT(w1.calls + w2.calls + w3.calls, 0);
    /* room appears, but waiters go first: no more depth for anyone */
    gw_read_budget_give(b, 256 * KIB);
    CN_CHECK(!gw_read_budget_take(b, 64 * KIB));
    loop_run(base);
    /* 5 streams counted: 1 MiB / 20 -> the 64 KiB minimum; two bases fit */
    CN_CHECK(w1.calls == 1 && w1.admitted && w1.order == 1);
    CN_CHECK(w2.calls == 1 && w2.admitted && w2.order == 2);
    CN_CHECK_EQ_INT(w1.w.slice, 64 * KIB);
    CN_CHECK_EQ_INT(w3.calls, 0);
    CN_CHECK_EQ_INT(gw_read_budget_used(b), 1 * MIB);
    gw_read_budget_leave(b, 2 * big.w.slice);              /* a stream ends */
    loop_run(base);
    CN_CHECK(w3.calls == 1 && w3.admitted && w3.order == 3);
    CN_CHECK_EQ_INT(gw_read_budget_waiting(b), 0);
    CN_CHECK(gw_read_budget_take(b, 64 * KIB));           /* nobody waits: depth again */
    gw_read_budget_give(b, 64 * KIB);
    gw_read_budget_leave(b, 2 * w0.w.slice);
    gw_read_budget_leave(b, 2 * w1.w.slice);
    gw_read_budget_leave(b, 2 * w2.w.slice);
    gw_read_budget_leave(b, 2 * w3.w.slice);
    CN_CHECK_EQ_INT(gw_read_budget_used(b), 0);
    CN_CHECK_EQ_INT(gw_read_budget_streams(b), 0);
    gw_read_budget_free(b);
    event_base_free(base);
}

/* A waiter past its deadline is refused (once); one behind it that fits
 * is then let in; a cancelled waiter never hears back. */
static void test_deadline_and_cancel(void)
{
    struct event_base *base = event_base_new();
    struct gw_read_budget *b = gw_read_budget_new(base, 128 * KIB, 20); /* one base */
    struct waiter_rec s, late, gone;
    memset(&s, 0, sizeof(s));
    memset(&late, 0, sizeof(late));
    memset(&gone, 0, sizeof(gone));
    CN_CHECK(gw_read_budget_enter(b, &s.w, 128 * KIB, on_admit, &s));
    CN_CHECK_EQ_INT(gw_read_budget_used(b), 128 * KIB);
    CN_CHECK(!gw_read_budget_enter(b, &gone.w, 128 * KIB, on_admit, &gone));
    CN_CHECK(!gw_read_budget_enter(b, &late.w, 128 * KIB, on_admit, &late));
    gw_read_budget_cancel(b, &gone.w);
    gw_read_budget_cancel(b, &gone.w); /* twice: a no-op */
    CN_CHECK_EQ_INT(gw_read_budget_waiting(b), 1);
    event_base_dispatch(base); /* until the deadline fired: nothing else is pending */
    CN_CHECK_EQ_INT(late.calls, 1);
    CN_CHECK_EQ_INT(late.admitted, 0);
    CN_CHECK_EQ_INT(gone.calls, 0);
    CN_CHECK_EQ_INT(gw_read_budget_waiting(b), 0);
    CN_CHECK_EQ_INT(gw_read_budget_streams(b), 1);
    gw_read_budget_leave(b, 2 * s.w.slice);
    CN_CHECK_EQ_INT(gw_read_budget_used(b), 0);
    gw_read_budget_free(b);
    event_base_free(base);
}

static const struct cn_test_case cases[] = {
    {"slice_shrinks", test_slice_shrinks},
    {"fifo_wait", test_fifo_wait},
    {"deadline_and_cancel", test_deadline_and_cancel},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
