/* The self-tuning read-ahead window (read_ahead.h): multiplicative growth
 * while the client starves and the nodes are idle (the slice first, then
 * the depth), multiplicative decrease while the client is the bottleneck. No clock, no I/O: the pipeline
 * measures, this decides. */
#include "read_ahead.h"

#include "cn/rc.h"

void gw_read_ahead_init(struct gw_read_ahead *ra, uint32_t depth, uint64_t slice,
                        uint64_t slice_cap)
{
    ra->least_latency_us = 0;
    if (depth == 0) {
        ra->min_depth = 1;
        ra->max_depth = GW_READ_AHEAD_MAX_DEPTH;
        ra->depth = GW_READ_AHEAD_START_DEPTH;
    } else {
        ra->min_depth = ra->max_depth = ra->depth = depth;
    }
    if (slice == 0) {
        ra->max_slice = CN_MAX(CN_MIN((uint64_t)GW_READ_AHEAD_MAX_SLICE, slice_cap), 1);
        ra->min_slice = CN_MIN((uint64_t)GW_READ_AHEAD_MIN_SLICE, ra->max_slice);
        ra->slice = CN_MIN((uint64_t)GW_READ_AHEAD_START_SLICE, ra->max_slice);
    } else {
        ra->min_slice = ra->max_slice = ra->slice = slice;
    }
    ra->max_window = CN_MAX((uint64_t)GW_READ_AHEAD_MAX_WINDOW, (uint64_t)ra->depth * ra->slice);
}

/* The depth below which nothing overlaps: the first one grown back to and
 * the last one given up (a pinned depth never moves anyway). */
static uint32_t gw_read_ahead_pipelined(const struct gw_read_ahead *ra)
{
    return CN_MIN(GW_READ_AHEAD_START_DEPTH, ra->max_depth);
}

/* Sets the slice to `slice`; a new length has new latencies: learn again. */
static void gw_read_ahead_set_slice(struct gw_read_ahead *ra, uint64_t slice)
{
    ra->slice = slice;
    ra->least_latency_us = 0;
}

/* Grows the window one step, within the most window: the depth up to the
 * pipelined depth, then the slice, then the depth. Per-slice costs are
 * most of a fast stream's CPU, so the slice goes before depth. */
static void gw_read_ahead_grow(struct gw_read_ahead *ra, uint64_t slice_cap)
{
    uint32_t depth = CN_MIN(ra->depth * 2, ra->max_depth);
    uint64_t slice = CN_MIN(ra->slice * 2, CN_MIN(ra->max_slice, slice_cap));
    int depth_fits = depth > ra->depth && (uint64_t)depth * ra->slice <= ra->max_window;
    int slice_fits = slice > ra->slice && (uint64_t)ra->depth * slice <= ra->max_window;
    if (depth_fits && ra->depth < gw_read_ahead_pipelined(ra))
        ra->depth = CN_MIN(depth, gw_read_ahead_pipelined(ra));
    else if (slice_fits)
        gw_read_ahead_set_slice(ra, slice);
    else if (depth_fits)
        ra->depth = depth;
}

/* Shrinks the window one step, the reverse of growing: the depth down to
 * the pipelined depth, then the slice, then the depth down to its least. */
static void gw_read_ahead_shrink(struct gw_read_ahead *ra)
{
    uint32_t pipelined = CN_MAX(gw_read_ahead_pipelined(ra), ra->min_depth);
    if (ra->depth > pipelined)
        ra->depth = CN_MAX(ra->depth / 2, pipelined);
    else if (ra->slice > ra->min_slice)
        gw_read_ahead_set_slice(ra, CN_MAX(ra->slice / 2, ra->min_slice));
    else if (ra->depth > ra->min_depth)
        ra->depth = CN_MAX(ra->depth / 2, ra->min_depth);
}

void gw_read_ahead_update(struct gw_read_ahead *ra, const struct gw_read_ahead_obs *o)
{
    uint64_t cap = o->slice_cap > 0 ? o->slice_cap : UINT64_MAX;
    if (ra->min_slice < ra->max_slice && ra->slice > cap) /* auto: the budget's share */
        gw_read_ahead_set_slice(ra, cap);
    if (o->latency_us > 0 &&
        (ra->least_latency_us == 0 || o->latency_us < ra->least_latency_us))
        ra->least_latency_us = o->latency_us;
    if (o->client_full) {
        gw_read_ahead_shrink(ra);
        return;
    }
    int idle = ra->least_latency_us == 0 ||
               o->latency_us <= GW_READ_AHEAD_IDLE_FACTOR * ra->least_latency_us;
    if (o->client_waited && o->window_limited && idle)
        gw_read_ahead_grow(ra, cap);
}
