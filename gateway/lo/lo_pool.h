/* Chunk buffers of large-object writes: fixed buffers of chunked_obj_len
 * that a PUT (or UploadPart, or a copy) fills from the request body and
 * ZeroMQ sends to every replica, given back when the last send let go of
 * them and reused by the next chunk. Without it each chunk was made
 * contiguous in a fresh mmap of chunk_len (the gateway fixes glibc's mmap
 * threshold at 1 MiB), whose first touch faulted in and cleared every page:
 * ~13 % of the gateway's CPU on a 1 GiB PUT.
 *
 * Memory bound: buffers in use belong to the writers that hold them (each
 * at most (write_inflight + 1), lo_writer.h); besides those the pool keeps
 * at most `keep` free buffers, and none while no writer holds the pool, so
 * an idle gateway keeps nothing. One per worker; thread-safe, since
 * buffers are taken on the worker's loop and given back from ZeroMQ's I/O
 * thread. */
#ifndef GW_LO_POOL_H
#define GW_LO_POOL_H

#include <stddef.h>
#include <stdint.h>

struct gw_lo_pool;

/* A pool of buf_len-byte buffers keeping at most keep free ones. Never
 * NULL (allocation aborts on OOM). Freed by gw_lo_pool_close(). */
struct gw_lo_pool *gw_lo_pool_new(size_t buf_len, uint32_t keep);

/* Stops keeping free buffers and frees the pool once every buffer taken
 * from it came back (ZeroMQ may still hold some). p may be NULL. */
void gw_lo_pool_close(struct gw_lo_pool *p);

size_t gw_lo_pool_buf_len(const struct gw_lo_pool *p);

/* A writer starts or stops using the pool: free buffers are kept only
 * while at least one writer holds it (those left go when the last lets go). */
void gw_lo_pool_hold(struct gw_lo_pool *p);
void gw_lo_pool_release(struct gw_lo_pool *p);

/* A buffer of buf_len bytes (contents undefined), free or new; the caller
 * gives it back with gw_lo_pool_put(). NULL only when cn_alloc's failure
 * hook is armed (tests); the pool is then unchanged. */
void *gw_lo_pool_get(struct gw_lo_pool *p);

/* Gives buf back: kept for reuse (if the pool keeps fewer than keep and a
 * writer holds it) or freed. Any thread. May free the pool (closed, last
 * buffer). */
void gw_lo_pool_put(struct gw_lo_pool *p, void *buf);

/* Counters for tests and metrics: buffers taken and not given back, free
 * buffers kept, buffers allocated since the start. */
struct gw_lo_pool_stats {
    uint32_t in_use;
    uint32_t kept;
    uint64_t allocated;
};
void gw_lo_pool_stats(struct gw_lo_pool *p, struct gw_lo_pool_stats *st);

#endif
