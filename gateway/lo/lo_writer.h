/* The chunking sink of a large PUT or part upload: bytes fed in are cut
 * into chunks of chunk_len, each written to its replicas by its own key
 * (lo_map.h), with at most max_inflight chunks in flight. The writer does
 * not hold the request: its owner (the handler state) frees it with
 * gw_lo_writer_commit() once a record that references the chunks is
 * written, or gw_lo_writer_abandon() otherwise (then the chunks written so
 * far are reclaimed, after the chunks still in flight answered).
 *
 * Memory: at most (max_inflight + 1) x chunk_len bytes of chunks (with a
 * pool: at most max_inflight + 1 of its buffers at once). With a hasher
 * (lo_hasher.h) a chunk counts against max_inflight until both its write
 * answered and it was hashed, so the bound is unchanged. */
#ifndef GW_LO_WRITER_H
#define GW_LO_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "checksum.h"
#include "lo_map.h"
#include "lo_reclaim.h"
#include "store.h"

struct gw_lo_writer;

/* Where chunks go, as an interface (tests/unit/test_gw_lo_writer.c puts a
 * fake under it). put() writes rec with blob (a reference the callee takes
 * with gw_blob_ref() if it keeps it) and calls cb once from the loop, when
 * the write reached its quorum or cannot (gw_store_put()'s contract).
 * reclaim() schedules the deletion of every chunk of seg at once
 * (gw_lo_reclaim_segs()'s). ctx is the implementation's own. */
struct gw_lo_writer_store {
    void (*put)(void *ctx, const struct gw_store_record *rec, struct gw_blob *blob,
                gw_store_cb cb, void *arg);
    void (*reclaim)(void *ctx, const char *okey, size_t okey_len, const struct gw_lo_seg *seg,
                    uint64_t reqid);
    void *ctx;
};

struct gw_lo_writer_config {
    /* chunks go to io when set (copied), else to store and reclaim */
    const struct gw_lo_writer_store *io;
    struct gw_store *store;
    struct gw_lo_reclaim *reclaim;
    const char *okey;        /* the object's record key "o/..." (copied) */
    size_t okey_len;
    uint64_t ver;            /* names the chunks; unique per writer */
    uint32_t chunk_len;
    uint32_t max_inflight;
    uint64_t reqid;          /* for log lines */
    /* chunk buffers (lo_pool.h; its buf_len at least chunk_len): each
     * chunk is copied once into a reused buffer. NULL: each chunk is made
     * contiguous in a fresh allocation (gw_blob_from_evbuffer). */
    struct gw_lo_pool *pool;
    /* MD5 of the bytes on this thread (lo_hasher.h), progress reported on
     * base's loop; NULL: the caller hashes the bytes itself */
    struct gw_lo_hasher *hasher;
    struct event_base *base;
};

/* Called from the loop when a chunk write completed (successfully or not)
 * or, with a hasher, chunks were hashed, while the writer is owned; never
 * after commit or abandon. */
typedef void (*gw_lo_writer_cb)(struct gw_lo_writer *w, void *arg);

struct gw_lo_writer *gw_lo_writer_new(const struct gw_lo_writer_config *cfg, gw_lo_writer_cb cb,
                                      void *arg);

/* Moves bytes out of data into chunks and sends every full chunk while
 * fewer than max_inflight are in flight; with last, what remains once data
 * is empty is sent as the last (short) chunk. Returns CN_OK when data is
 * empty (and, with last, every byte is sent), CN_AGAIN when the writer is
 * full (cb runs when a chunk completes: feed again), CN_ERR when a chunk
 * write failed (gw_lo_writer_error() says why). */
int gw_lo_writer_feed(struct gw_lo_writer *w, struct evbuffer *data, int last);

/* Chunks in flight (with a hasher: being written or not yet hashed). */
uint32_t gw_lo_writer_inflight(const struct gw_lo_writer *w);
/* NULL, or why a chunk write failed (the store's words). */
const char *gw_lo_writer_error(const struct gw_lo_writer *w);
/* The failed chunk write's store status (CN_OK when none failed). */
int gw_lo_writer_rc(const struct gw_lo_writer *w);

/* The segment written: ver, bytes sent, chunk_len. Complete once a feed
 * with last returned CN_OK and gw_lo_writer_inflight() is 0. */
void gw_lo_writer_seg(const struct gw_lo_writer *w, struct gw_lo_seg *out);

/* With a hasher, once every chunk is hashed (gw_lo_writer_inflight() 0
 * after the last feed): the MD5 of every byte sent (gw_checksum with MD5).
 * NULL without a hasher or while chunks are being hashed. Valid until w
 * is freed. */
const struct gw_checksum *gw_lo_writer_md5(struct gw_lo_writer *w);

/* The chunks now belong to a committed record: frees w (which must be
 * idle). */
void gw_lo_writer_commit(struct gw_lo_writer *w);
/* Frees w and reclaims its chunks (once the ones in flight answered).
 * NULL is a no-op. */
void gw_lo_writer_abandon(struct gw_lo_writer *w);

#endif
