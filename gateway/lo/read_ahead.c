/* The self-tuning read-ahead window (read_ahead.h): multiplicative growth
 * while the client starves and the nodes are idle, multiplicative decrease
 * while the client is the bottleneck. No clock, no I/O: the pipeline
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

/* Grows the window one step: depth first, then the slice, within the
 * most window. */
static void gw_read_ahead_grow(struct gw_read_ahead *ra)
{
    uint32_t depth = CN_MIN(ra->depth * 2, ra->max_depth);
    uint64_t slice = CN_MIN(ra->slice * 2, ra->max_slice);
    if (depth > ra->depth && (uint64_t)depth * ra->slice <= ra->max_window)
        ra->depth = depth;
    else if (slice > ra->slice && (uint64_t)ra->depth * slice <= ra->max_window) {
        ra->slice = slice;
        ra->least_latency_us = 0; /* longer slices take longer: learn again */
    }
}

/* Shrinks the window one step: depth first, then the slice. */
static void gw_read_ahead_shrink(struct gw_read_ahead *ra)
{
    if (ra->depth > ra->min_depth)
        ra->depth = CN_MAX(ra->depth / 2, ra->min_depth);
    else if (ra->slice > ra->min_slice) {
        ra->slice = CN_MAX(ra->slice / 2, ra->min_slice);
        ra->least_latency_us = 0;
    }
}

void gw_read_ahead_update(struct gw_read_ahead *ra, const struct gw_read_ahead_obs *o)
{
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
        gw_read_ahead_grow(ra);
}
