/* The read-ahead window of one large-object GET when
 * large_object.read_prefetch (depth) and/or reading_chunked_obj_len (slice
 * length) are `auto`: a pure function of what the stream observed since
 * its last slice was delivered, as TCP's congestion window and Linux's
 * read-ahead window grow and shrink. The read pipeline feeds it one
 * observation per delivered slice; unit tests feed it by hand.
 *
 *  - the client waited for us (its output ran empty while slices were
 *    outstanding), the window was what held the stream back (every slot
 *    of the depth was in use, not the client's high-water mark: TCP's
 *    "cwnd-limited" test, RFC 7661, without which a slow client that
 *    empties its small queue would grow the window for nothing) and the
 *    nodes are idle (this slice came back about as fast as the fastest
 *    one seen, so more requests would not just queue behind each other):
 *    the window grows one step, in this order: the depth up to
 *    GW_READ_AHEAD_START_DEPTH (two slices, one in flight while the other
 *    is written: below that nothing overlaps); then the slice doubles up
 *    to GW_READ_AHEAD_MAX_SLICE (per-slice costs — a request, a reply,
 *    wakeups on both sides — are most of a fast stream's CPU, so a byte
 *    is cheapest in long slices); then the depth doubles. Nothing takes
 *    depth x slice past GW_READ_AHEAD_MAX_WINDOW (4 MiB), so a fast
 *    stream settles at 2 x 2 MiB. The pipeline keeps depth x slice in
 *    flight, ready and queued toward the client beyond the one slice
 *    being sent: an auto stream holds at most (depth + 1) x slice, 6 MiB;
 *  - the client is the bottleneck (its output reached the high-water
 *    mark): one step back, in the reverse order: the depth halves down to
 *    GW_READ_AHEAD_START_DEPTH, then the slice halves (a slow client gets
 *    short slices), then the depth goes to 1;
 *  - otherwise (the nodes are busy, or the client keeps pace): no change.
 * When the read-ahead budget (read_budget.h) shortens the slices a stream
 * may use (many streams share it), an auto slice follows it down and the
 * window grows in depth instead, as with a pinned slice: crowded streams
 * keep enough bytes ahead of their clients, within the same window. */
#ifndef GW_READ_AHEAD_H
#define GW_READ_AHEAD_H

#include <stdint.h>

#define GW_READ_AHEAD_MAX_DEPTH 16u           /* slots of an auto stream */
#define GW_READ_AHEAD_START_DEPTH 2u
#define GW_READ_AHEAD_START_SLICE (512u * 1024)  /* LeoFS's and cairn's sweeps */
#define GW_READ_AHEAD_MIN_SLICE (128u * 1024)
#define GW_READ_AHEAD_MAX_SLICE (2u * 1024 * 1024)
#define GW_READ_AHEAD_IDLE_FACTOR 2u          /* latency within 2x the least: idle */
#define GW_READ_AHEAD_MAX_WINDOW (4u * 1024 * 1024) /* depth x slice; a stream holds
                                                       (depth + 1) x slice, <= 6 MiB */

/* One stream's window. Fixed settings pin a dimension: min == max. */
struct gw_read_ahead {
    uint32_t depth, min_depth, max_depth;
    uint64_t slice, min_slice, max_slice;
    uint64_t max_window;        /* depth x slice never grows past it */
    uint64_t least_latency_us;  /* the fastest slice seen (0: none yet) */
};

/* What the stream saw around one delivered slice. */
struct gw_read_ahead_obs {
    int client_waited;      /* the output was empty when the slice arrived */
    int window_limited;     /* the depth, not the high-water mark, stopped requests */
    int client_full;        /* the output reached the high-water mark */
    uint64_t latency_us;    /* the slice's time from request to answer */
    uint64_t slice_cap;     /* the longest slice the read-ahead budget lets the
                               stream use now (its share); 0: no cap */
};

/* Sets up a window: depth 0 = auto (GW_READ_AHEAD_START_DEPTH within
 * [1, GW_READ_AHEAD_MAX_DEPTH]), else pinned; slice 0 = auto
 * (GW_READ_AHEAD_START_SLICE within [GW_READ_AHEAD_MIN_SLICE,
 * min(GW_READ_AHEAD_MAX_SLICE, slice_cap)]), else pinned. slice_cap is
 * the chunk length (a slice never crosses a chunk). */
void gw_read_ahead_init(struct gw_read_ahead *ra, uint32_t depth, uint64_t slice,
                        uint64_t slice_cap);

/* The next window after observation o. */
void gw_read_ahead_update(struct gw_read_ahead *ra, const struct gw_read_ahead_obs *o);

#endif
