/* The large-object GET: bytes [first, first+len) of an object are read as
 * slices of at most large_object.reading_chunked_obj_len that never cross a
 * chunk boundary, with up to large_object.read_prefetch slice requests in
 * flight to the nodes that hold them. Answers may come back in any order;
 * they are written to the client in order. No slice is requested while the
 * client's output buffer holds a slice length or more (or
 * http.output_high_water, if lower); requesting resumes from the
 * connection's drain callback. Each slice's CRC32C is verified (by
 * the store, which tries the next replica on an error, a timeout or a bad
 * checksum); when every replica failed, the response is cut short (the
 * connection is closed: the client sees fewer bytes than Content-Length)
 * and the log names the chunk and the reason.
 *
 * With read_prefetch and/or the slice length `auto` (0), each stream tunes
 * them itself (read_ahead.h) from what it sees at each delivered slice.
 *
 * Memory per GET: read_prefetch slices in flight plus the output high-water
 * mark: about (read_prefetch + 1) x slice length; auto: (depth + 1) x
 * slice, at most 6 MiB (read_ahead.h). With a
 * read-ahead budget (read_budget.h) the stream also waits for room before
 * its headers, holds at most what it reserved (slices in flight and ready,
 * plus bytes queued toward the client), goes shallower and uses shorter
 * slices when the budget is short, and ends only once its output drained,
 * so every byte it put there was counted until sent.
 *
 * A slice that timed out or could not be sent on every replica is asked
 * again (options.retries times, backing off from retry_backoff_ms) before
 * the response is cut: a GET whose headers went out is not truncated by a
 * passing overload.
 *
 * The pipeline knows neither the cluster nor the connection: it reads
 * through a gw_read_pipeline_store and writes to a gw_read_pipeline_sink,
 * both handed in at creation. lo_get.c wires the worker's store and the
 * request; tests/unit/test_gw_read_pipeline.c wires a fake store and a fake
 * client. */
#ifndef GW_READ_PIPELINE_H
#define GW_READ_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "lo_map.h"

#include "cn/rc.h"

struct gw_read_pipeline;

/* One slice read handed to the store. It lives in the pipeline from the
 * store's get() until the store calls gw_read_pipeline_io_done() on it. */
struct gw_read_pipeline_io {
    /* in: the record's bytes [off, off+len); key is valid only during get() */
    const char *key;
    size_t key_len;
    uint64_t off;
    uint64_t len;
    /* out: on success the store appends the payload to dst (by reference,
     * not copied) and sets node and record_size; otherwise rc and err */
    struct evbuffer *dst;
    int rc;                  /* CN_OK, or the store's failure (store.h) */
    char err[CN_ERR_LEN];    /* why, when rc != CN_OK */
    uint32_t node;           /* the replica that answered */
    uint64_t record_size;    /* the full length of the record it holds */
    /* the pipeline's own: the store leaves them alone */
    struct gw_read_pipeline *p;
    uint32_t slot;
};

/* Where slices are read from. get() starts reading io (rc, node and
 * record_size are zero on entry) and must end in exactly one
 * gw_read_pipeline_io_done(io), normally from the event loop (possibly
 * before get() returns). ctx is the implementation's own. */
struct gw_read_pipeline_store {
    void (*get)(void *ctx, struct gw_read_pipeline_io *io);
    void *ctx;
};

/* Where the body goes (the request's response, after its headers). ctx is
 * the implementation's own.
 *  - body: the buffer body bytes are appended to (moved, never copied); its
 *    length is what is queued toward the client (0 once it is gone).
 *  - unsent: bytes already taken from body that the client has not been
 *    sent yet further down (the kernel's socket queue): with body's length,
 *    how far the client is behind. NULL: nothing beyond body.
 *  - wait_drain: call gw_read_pipeline_drained() once, when the client's
 *    output drained (the pipeline stopped asking for slices).
 *  - end: the last byte is queued; the response is complete.
 *  - abort: a slice failed; cut the response short (why says where and
 *    why, for the log). No more slices are requested.
 *  - hold / release: keep the owner (and so the pipeline) alive across one
 *    slice read or retry wait; release returns 0 when the client is gone,
 *    and then the pipeline may already be freed (the owner frees it with
 *    the last release), so the pipeline touches nothing after it.
 *  - admit: the stream may start: send the response headers now (called
 *    from gw_read_pipeline_start(), or later from the loop when it waited
 *    for the read-ahead budget). NULL: the caller sent them already.
 *  - refuse: the stream waited options.budget's max wait for room: answer
 *    an error instead of the headers (503 SlowDown); the owner frees the
 *    pipeline, possibly inside the call. Required with a budget. */
struct gw_read_pipeline_sink {
    struct evbuffer *(*body)(void *ctx);
    uint64_t (*unsent)(void *ctx);
    void (*wait_drain)(void *ctx);
    void (*end)(void *ctx);
    void (*abort)(void *ctx, const char *why);
    void (*hold)(void *ctx);
    int (*release)(void *ctx);
    void (*admit)(void *ctx);
    void (*refuse)(void *ctx);
    void *ctx;
};

struct gw_read_budget;
struct event_base;

/* The settings the pipeline needs (copied in). */
struct gw_read_pipeline_options {
    uint64_t slice_len;          /* large_object.reading_chunked_obj_len; 0: auto */
    uint32_t prefetch;           /* large_object.read_prefetch; 0: auto */
    uint64_t output_high_water;  /* http.output_high_water */
    struct gw_read_budget *budget; /* the worker's read-ahead budget; NULL: none */
    struct event_base *base;     /* retry timers; may be NULL when retries is 0 */
    uint32_t retries;            /* large_object.read_retries: asks again per slice */
    int64_t retry_backoff_ms;    /* the first wait before asking again; doubles */
    uint64_t (*clock_us)(void);  /* slice latencies for auto; NULL: cn_time_mono_us */
};

/* Creates the pipeline over map (moved in: map is zeroed) of the object
 * record okey, reading from store and writing to sink (both copied in).
 * The caller has sent the response headers; it calls
 * gw_read_pipeline_start() next and frees the pipeline when no slice is in
 * flight (when the owner's last hold is released). */
struct gw_read_pipeline *gw_read_pipeline_new(const struct gw_read_pipeline_store *store,
                                              const struct gw_read_pipeline_sink *sink,
                                              const struct gw_read_pipeline_options *opt,
                                              const char *okey, size_t okey_len,
                                              struct gw_lo_map *map, uint64_t first,
                                              uint64_t len);

/* Enters the budget (waiting for room, or refused through sink->refuse()),
 * calls sink->admit() and starts requesting slices; ends in sink->end()
 * when the last byte is queued (with a budget: and sent), or in
 * sink->abort() on a failed slice. Any of them may run before this returns
 * (an empty range ends at once). */
void gw_read_pipeline_start(struct gw_read_pipeline *p);

/* The store's answer to io (see gw_read_pipeline_store). May end the
 * response through the sink, or free the pipeline through release(). */
void gw_read_pipeline_io_done(struct gw_read_pipeline_io *io);

/* The sink's output drained after wait_drain(): requesting resumes. A no-op
 * once the response ended or failed. */
void gw_read_pipeline_drained(struct gw_read_pipeline *p);

/* Frees p with the slices it holds, leaving the budget (or its queue); only
 * when no slice is in flight or waiting for a retry. NULL is a no-op. */
void gw_read_pipeline_free(struct gw_read_pipeline *p);

#endif
