/* What the large-object modules of one worker thread work with: the loop,
 * the replicated store, the reclaimer of old chunks, and the
 * large_object.* settings they need, copied in when the worker is
 * assembled (server.c), so a setting can be followed from config.c to its
 * use and the modules do not reach through the worker. */
#ifndef GW_LO_ENV_H
#define GW_LO_ENV_H

#include <stdint.h>

#include <event2/event.h>

struct gw_store;
struct gw_lo_reclaim;
struct gw_read_budget;
struct gw_lo_pool;
struct gw_lo_hasher;

struct gw_lo_env {
    struct event_base *base;
    struct gw_store *store;
    struct gw_lo_reclaim *reclaim;
    uint64_t threshold;          /* threshold_of_chunk_len: bodies from here are chunked */
    uint32_t chunk_len;          /* chunked_obj_len */
    uint32_t write_inflight;     /* chunks of one write in flight */
    struct gw_lo_pool *pool;     /* the worker's chunk buffers (lo_pool.h) */
    struct gw_lo_hasher *hasher; /* the worker's MD5 thread (lo_hasher.h); NULL: on the loop */
    uint32_t max_chunks;         /* max_chunked_objs */
    uint64_t read_len;           /* reading_chunked_obj_len: one slice */
    uint32_t read_prefetch;      /* slices in flight per GET */
    struct gw_read_budget *read_budget; /* the worker's share of read_ahead_budget */
    uint32_t read_retries;       /* read_retries: asks again of a slice that timed out */
    int64_t read_retry_backoff_ms; /* read_retry_backoff: the first wait before one */
    uint64_t output_high_water;  /* http.output_high_water: a GET's read-ahead stops here */
    int64_t reclaim_delay_ms;    /* old chunks live this long after a replace */
};

#endif
