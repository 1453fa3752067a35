/* The self-tuning read-ahead window (gateway/lo/read_ahead.c) as a pure
 * function of observations: pinned settings never move; auto grows the
 * slice (then the depth) while the client waits and the nodes answer as
 * fast as ever, holds when the nodes slow down or the client keeps pace,
 * and shrinks in the reverse order (the slice, then the depth) while the
 * client is the bottleneck, always within its bounds. */
#include <stdint.h>

#include "cn/test.h"
#include "read_ahead.h"

CN_TEST_GLOBALS;

#define KIB 1024u

static const struct gw_read_ahead_obs WAITED = {.client_waited = 1, .window_limited = 1,
                                                .latency_us = 1000};
static const struct gw_read_ahead_obs FULL = {.client_full = 1, .latency_us = 1000};
static const struct gw_read_ahead_obs PACE = {.latency_us = 1000};

/* Numbers pin a dimension: nothing moves it. */
static void test_pinned(void)
{
    struct gw_read_ahead ra;
    gw_read_ahead_init(&ra, 4, 512 * KIB, UINT64_MAX);
    for (int i = 0; i < 50; i++)
        gw_read_ahead_update(&ra, i % 2 ? &WAITED : &FULL);
    CN_CHECK_EQ_INT(ra.depth, 4);
    CN_CHECK_EQ_INT(ra.slice, 512 * KIB);
    /* auto depth with a pinned slice: only the depth moves */
    gw_read_ahead_init(&ra, 0, 256 * KIB, UINT64_MAX);
    for (int i = 0; i < 50; i++)
        gw_read_ahead_update(&ra, &WAITED);
    CN_CHECK_EQ_INT(ra.depth, GW_READ_AHEAD_MAX_DEPTH);
    CN_CHECK_EQ_INT(ra.slice, 256 * KIB);
}

/* A client that always waits, nodes that answer in constant time: the
 * slice doubles first, from 512K to 2M, at depth 2 (the 4 MiB window), and
 * the depth does not move (growing the depth first settled at 8 x 512K:
 * four times the slice requests per byte); with shorter slices pinned the
 * depth reaches 16; with the depth pinned at 1, the slice doubles from
 * 512K to 2M; with the slice capped at 1M (the chunk), the slice reaches
 * 1M before the depth doubles to 4. */
static void test_grow(void)
{
    struct gw_read_ahead ra;
    gw_read_ahead_init(&ra, 0, 0, UINT64_MAX);
    CN_CHECK_EQ_INT(ra.depth, GW_READ_AHEAD_START_DEPTH);
    CN_CHECK_EQ_INT(ra.slice, GW_READ_AHEAD_START_SLICE);
    static const uint64_t slices[] = {1024 * KIB, 2048 * KIB, 2048 * KIB, 2048 * KIB};
    for (int i = 0; i < 4; i++) {
        gw_read_ahead_update(&ra, &WAITED);
        CN_CHECK_EQ_INT(ra.depth, 2);
        CN_CHECK_EQ_INT(ra.slice, slices[i]);
    }
    /* a client keeping pace changes nothing */
    for (int i = 0; i < 10; i++)
        gw_read_ahead_update(&ra, &PACE);
    CN_CHECK_EQ_INT(ra.depth, 2);
    CN_CHECK_EQ_INT(ra.slice, 2048 * KIB);
    gw_read_ahead_init(&ra, 0, 256 * KIB, UINT64_MAX);
    for (int i = 0; i < 10; i++)
        gw_read_ahead_update(&ra, &WAITED);
    CN_CHECK_EQ_INT(ra.depth, 16);
    gw_read_ahead_init(&ra, 1, 0, UINT64_MAX);
    static const uint64_t slices1[] = {1024 * KIB, 2048 * KIB, 2048 * KIB};
    for (int i = 0; i < 3; i++) {
        gw_read_ahead_update(&ra, &WAITED);
        CN_CHECK_EQ_INT(ra.slice, slices1[i]);
        CN_CHECK_EQ_INT(ra.depth, 1);
    }
    gw_read_ahead_init(&ra, 0, 0, 1024 * KIB);
    static const uint32_t depths[] = {2, 4, 4};
    for (int i = 0; i < 3; i++) {
        gw_read_ahead_update(&ra, &WAITED);
        CN_CHECK_EQ_INT(ra.slice, 1024 * KIB);
        CN_CHECK_EQ_INT(ra.depth, depths[i]);
    }
    /* a pinned depth above 2 lets the slice grow up to the window */
    gw_read_ahead_init(&ra, 4, 0, UINT64_MAX);
    for (int i = 0; i < 10; i++)
        gw_read_ahead_update(&ra, &WAITED);
    CN_CHECK_EQ_INT(ra.depth, 4);
    CN_CHECK_EQ_INT(ra.slice, 1024 * KIB);
}

/* The client waits, but the slices come back more than twice as slowly as
 * the fastest one seen: the nodes are busy, more depth would only queue
 * there, so the window holds; when they are fast again it grows. It holds
 * too when the high-water mark, not the window, held the stream back.
 * (A 512K chunk caps the slice, so only the depth moves.) A new slice
 * length forgets the fastest latency: longer slices take longer. */
static void test_hold(void)
{
    struct gw_read_ahead ra;
    gw_read_ahead_init(&ra, 0, 0, 512 * KIB);
    gw_read_ahead_update(&ra, &WAITED);               /* least latency 1 ms, depth 4 */
    CN_CHECK_EQ_INT(ra.depth, 4);
    const struct gw_read_ahead_obs slow = {.client_waited = 1, .window_limited = 1,
                                           .latency_us = 2500};
    for (int i = 0; i < 10; i++)
        gw_read_ahead_update(&ra, &slow);
    CN_CHECK_EQ_INT(ra.depth, 4);
    const struct gw_read_ahead_obs ok = {.client_waited = 1, .window_limited = 1,
                                         .latency_us = 2000};
    gw_read_ahead_update(&ra, &ok);                   /* within 2x: idle enough */
    CN_CHECK_EQ_INT(ra.depth, 8);
    CN_CHECK_EQ_INT(ra.least_latency_us, 1000);
    /* the client waited, but the high-water mark held the stream back,
     * not the window: more depth would not have helped */
    const struct gw_read_ahead_obs hw = {.client_waited = 1, .latency_us = 1000};
    for (int i = 0; i < 10; i++)
        gw_read_ahead_update(&ra, &hw);
    CN_CHECK_EQ_INT(ra.depth, 8);

    /* auto slice: 1 ms at 512K, then the slice is 1M and its first answer
     * (2 ms, the client keeping pace) is the new reference; one at 6 ms
     * holds the window, one at 2.5 ms grows it */
    gw_read_ahead_init(&ra, 0, 0, UINT64_MAX);
    gw_read_ahead_update(&ra, &WAITED);
    CN_CHECK_EQ_INT(ra.slice, 1024 * KIB);
    CN_CHECK_EQ_INT(ra.least_latency_us, 0);
    const struct gw_read_ahead_obs pace2 = {.latency_us = 2000};
    const struct gw_read_ahead_obs busy = {.client_waited = 1, .window_limited = 1,
                                           .latency_us = 6000};
    gw_read_ahead_update(&ra, &pace2);
    CN_CHECK_EQ_INT(ra.least_latency_us, 2000);
    for (int i = 0; i < 5; i++)
        gw_read_ahead_update(&ra, &busy);
    CN_CHECK_EQ_INT(ra.slice, 1024 * KIB);
    CN_CHECK_EQ_INT(ra.depth, 2);
    gw_read_ahead_update(&ra, &slow);
    CN_CHECK_EQ_INT(ra.slice, 2048 * KIB);
    CN_CHECK_EQ_INT(ra.depth, 2);
}

/* A client slower than the nodes: the reverse of growing. From 2 x 2M the
 * slice halves down to 128K (a slow client gets short slices and the
 * stream holds 256K, not 4M), then the depth goes to 1 and stays; once
 * the client waits the depth comes back to 2 first, then the slice grows.
 * Above the pipelined depth (slices capped at 1M: 4 x 1M), the depth
 * halves to 2 first; with a slice pinned the depth goes down to 1. */
static void test_shrink(void)
{
    struct gw_read_ahead ra;
    gw_read_ahead_init(&ra, 0, 0, UINT64_MAX);
    for (int i = 0; i < 3; i++)
        gw_read_ahead_update(&ra, &WAITED);
    CN_CHECK_EQ_INT(ra.depth, 2);
    CN_CHECK_EQ_INT(ra.slice, 2048 * KIB);
    static const uint32_t depths[] = {2, 2, 2, 2, 1, 1};
    static const uint64_t slices[] = {1024 * KIB, 512 * KIB, 256 * KIB, 128 * KIB,
                                      128 * KIB, 128 * KIB};
    for (int i = 0; i < 6; i++) {
        gw_read_ahead_update(&ra, &FULL);
        CN_CHECK_EQ_INT(ra.depth, depths[i]);
        CN_CHECK_EQ_INT(ra.slice, slices[i]);
    }
    gw_read_ahead_update(&ra, &WAITED);
    CN_CHECK_EQ_INT(ra.depth, 2);
    CN_CHECK_EQ_INT(ra.slice, 128 * KIB);
    gw_read_ahead_update(&ra, &WAITED);
    CN_CHECK_EQ_INT(ra.depth, 2);
    CN_CHECK_EQ_INT(ra.slice, 256 * KIB);

    gw_read_ahead_init(&ra, 0, 0, 1024 * KIB);
    for (int i = 0; i < 3; i++)
        gw_read_ahead_update(&ra, &WAITED);
    CN_CHECK_EQ_INT(ra.depth, 4);
    gw_read_ahead_update(&ra, &FULL);
    CN_CHECK_EQ_INT(ra.depth, 2);
    CN_CHECK_EQ_INT(ra.slice, 1024 * KIB);
    gw_read_ahead_update(&ra, &FULL);
    CN_CHECK_EQ_INT(ra.depth, 2);
    CN_CHECK_EQ_INT(ra.slice, 512 * KIB);

    gw_read_ahead_init(&ra, 0, 256 * KIB, UINT64_MAX);
    for (int i = 0; i < 10; i++)
        gw_read_ahead_update(&ra, &WAITED);
    CN_CHECK_EQ_INT(ra.depth, 16);
    static const uint32_t pinned[] = {8, 4, 2, 1, 1};
    for (int i = 0; i < 5; i++) {
        gw_read_ahead_update(&ra, &FULL);
        CN_CHECK_EQ_INT(ra.depth, pinned[i]);
        CN_CHECK_EQ_INT(ra.slice, 256 * KIB);
    }
}

/* The read-ahead budget's share caps the slice (many streams): an auto
 * slice follows it down and the window grows in depth instead (growing
 * only the slice kept a crowded stream at 2 x 64 KiB ahead of its client);
 * once the cap is lifted the slice grows again, the window never past
 * 4 MiB. A pinned slice is left alone (the pipeline shortens what it
 * uses). */
static void test_budget_cap(void)
{
    struct gw_read_ahead ra;
    gw_read_ahead_init(&ra, 0, 0, UINT64_MAX);
    struct gw_read_ahead_obs capped = WAITED;
    capped.slice_cap = 64 * KIB;
    gw_read_ahead_update(&ra, &capped);
    CN_CHECK_EQ_INT(ra.slice, 64 * KIB);
    CN_CHECK_EQ_INT(ra.depth, 4);
    for (int i = 0; i < 10; i++)
        gw_read_ahead_update(&ra, &capped);
    CN_CHECK_EQ_INT(ra.slice, 64 * KIB);
    CN_CHECK_EQ_INT(ra.depth, 16);
    for (int i = 0; i < 10; i++) {
        gw_read_ahead_update(&ra, &WAITED);
        CN_CHECK((uint64_t)ra.depth * ra.slice <= GW_READ_AHEAD_MAX_WINDOW);
    }
    CN_CHECK_EQ_INT(ra.slice, 256 * KIB);
    CN_CHECK_EQ_INT(ra.depth, 16);
    /* a cap of 1M: the slice reaches it, then the depth doubles */
    gw_read_ahead_init(&ra, 0, 0, UINT64_MAX);
    capped.slice_cap = 1024 * KIB;
    static const uint32_t depths[] = {2, 4, 4};
    for (int i = 0; i < 3; i++) {
        gw_read_ahead_update(&ra, &capped);
        CN_CHECK_EQ_INT(ra.slice, 1024 * KIB);
        CN_CHECK_EQ_INT(ra.depth, depths[i]);
    }
    gw_read_ahead_init(&ra, 0, 512 * KIB, UINT64_MAX);
    capped.slice_cap = 64 * KIB;
    gw_read_ahead_update(&ra, &capped);
    CN_CHECK_EQ_INT(ra.slice, 512 * KIB);
}

/* The slice never exceeds the cap (a chunk length below the most slice),
 * and a cap below the least slice is the slice. */
static void test_cap(void)
{
    struct gw_read_ahead ra;
    gw_read_ahead_init(&ra, 0, 0, 256 * KIB);
    CN_CHECK_EQ_INT(ra.slice, 256 * KIB);
    for (int i = 0; i < 20; i++)
        gw_read_ahead_update(&ra, &WAITED);
    CN_CHECK_EQ_INT(ra.slice, 256 * KIB);
    gw_read_ahead_init(&ra, 0, 0, 64 * KIB);
    CN_CHECK_EQ_INT(ra.slice, 64 * KIB);
    for (int i = 0; i < 20; i++)
        gw_read_ahead_update(&ra, &FULL);
    CN_CHECK_EQ_INT(ra.slice, 64 * KIB);
    CN_CHECK_EQ_INT(ra.depth, 1);
}

/* Random observations: the window always stays within its bounds. */
static void test_bounds_soak(void)
{
    struct gw_read_ahead ra;
    gw_read_ahead_init(&ra, 0, 0, UINT64_MAX);
    uint32_t x = 12345;
    for (int i = 0; i < 100000; i++) {
        x = x * 1103515245u + 12345u;
        const struct gw_read_ahead_obs o = {
            .client_waited = (x >> 8) & 1, .client_full = ((x >> 9) & 3) == 0,
            .window_limited = (x >> 11) & 1,
            .latency_us = 1 + ((x >> 12) % 5000),
        };
        gw_read_ahead_update(&ra, &o);
        CN_CHECK(ra.depth >= 1 && ra.depth <= GW_READ_AHEAD_MAX_DEPTH);
        CN_CHECK(ra.slice >= GW_READ_AHEAD_MIN_SLICE && ra.slice <= GW_READ_AHEAD_MAX_SLICE);
        CN_CHECK((uint64_t)ra.depth * ra.slice <= GW_READ_AHEAD_MAX_WINDOW);
    }
}

static const struct cn_test_case cases[] = {
    {"pinned", test_pinned},
    {"grow", test_grow},
    {"hold", test_hold},
    {"shrink", test_shrink},
    {"cap", test_cap},
    {"budget_cap", test_budget_cap},
    {"bounds_soak", test_bounds_soak},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
