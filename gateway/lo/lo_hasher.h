/* The MD5 (S3 ETag) of large-object writes, off the event loop: each worker
 * has one hasher thread that hashes the chunk blobs of its writers in the
 * order they were queued, so a PUT stream's bytes are hashed in byte order
 * while the loop thread goes on receiving and sending. Each queued chunk
 * holds a blob reference (gw_blob_ref), so a pool buffer goes back only
 * once the hasher and every replica send let go of it.
 *
 * Queue bound: a writer queues a chunk only while it has fewer than
 * write_inflight chunks that are sending or not yet hashed (lo_writer.c),
 * so the queue holds at most write_inflight chunks per writer, and those
 * are the same buffers the writer's memory bound already counts. */
#ifndef GW_LO_HASHER_H
#define GW_LO_HASHER_H

#include <stdint.h>

#include <event2/event.h>

#include "checksum.h"
#include "store.h"

struct gw_lo_hasher;
struct gw_lo_hash_stream;

/* Starts the hasher thread. NULL if the thread cannot be started (the
 * caller then hashes on its loop). Freed by gw_lo_hasher_free(). */
struct gw_lo_hasher *gw_lo_hasher_new(void);
/* Hashes (or drops, for closed streams) what is queued, stops the thread
 * and frees h. Every stream must be closed first. NULL is a no-op. */
void gw_lo_hasher_free(struct gw_lo_hasher *h);

/* Called on base's loop after one or more chunks of the stream were hashed
 * (never after gw_lo_hash_stream_close()). */
typedef void (*gw_lo_hash_cb)(void *arg);

/* A stream of bytes to MD5 whose progress is reported on base's loop.
 * NULL only when OpenSSL fails to set up MD5. Closed (and freed) by
 * gw_lo_hash_stream_close(). */
struct gw_lo_hash_stream *gw_lo_hash_stream_new(struct gw_lo_hasher *h, struct event_base *base,
                                                gw_lo_hash_cb cb, void *arg);
/* Queues blob's bytes after those queued before (takes its own reference).
 * Loop thread only. */
void gw_lo_hash_stream_add(struct gw_lo_hash_stream *s, struct gw_blob *blob);
/* Chunks hashed so far (in queue order). */
uint32_t gw_lo_hash_stream_hashed(struct gw_lo_hash_stream *s);
/* Once every queued chunk is hashed: ends the MD5 and returns the sums
 * (MD5 only) for gw_checksum_hex()/verify; NULL while chunks are queued. */
const struct gw_checksum *gw_lo_hash_stream_final(struct gw_lo_hash_stream *s);
/* No more callbacks; chunks still queued are dropped unhashed (their blob
 * references released by the hasher thread) and s is freed once the
 * hasher is done with it. NULL is a no-op. Loop thread only. */
void gw_lo_hash_stream_close(struct gw_lo_hash_stream *s);

#endif
