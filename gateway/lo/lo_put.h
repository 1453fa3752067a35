/* The body side of a large PUT or part upload: the request body is streamed
 * (s3_body.c) into a chunk writer (lo_writer.c) as it arrives, with the
 * reader paused while the writer has its chunks in flight. The handler that
 * owns it writes the record that references the chunks (object parent or
 * part record) once done() says the body verified and every chunk is
 * stored, then calls gw_lo_put_commit(); if the request ends otherwise,
 * gw_lo_put_free() reclaims the chunks.
 *
 * In GW_LO_PUT_AUTO mode (PutObject of unknown length) the body is held
 * until it reaches large_object.threshold_of_chunk_len; a shorter body is
 * handed back whole (gw_lo_put_small()) for a single-record write. */
#ifndef GW_LO_PUT_H
#define GW_LO_PUT_H

#include <stdint.h>

#include <event2/buffer.h>

#include "lo_map.h"
#include "request.h"

enum gw_lo_put_mode {
    GW_LO_PUT_AUTO,    /* chunk once the body reaches the threshold */
    GW_LO_PUT_ALWAYS,  /* chunk from the first byte (parts, declared large bodies) */
};

struct gw_lo_put;

/* Runs once: err GW_S3_OK when the body verified and is stored (as chunks,
 * or whole in gw_lo_put_small()); otherwise the error to answer (why: a
 * message or NULL). The callee may end the request (freeing lp through its
 * state's free function). */
typedef void (*gw_lo_put_done_cb)(struct gw_req *r, enum gw_s3_err err, const char *why,
                                  void *arg);

/* Creates the streaming PUT of r into chunks of the object okey. The
 * caller stores it in its handler state (freed with it), then calls
 * gw_lo_put_begin(). */
struct gw_lo_put *gw_lo_put_new(struct gw_req *r, const char *okey, size_t okey_len,
                                enum gw_lo_put_mode mode, gw_lo_put_done_cb done, void *arg);
/* Starts reading the body: at most limit bytes (more: EntityTooLarge, before
 * 100 Continue when the declared length says so). done() may run before
 * this returns. */
void gw_lo_put_begin(struct gw_lo_put *lp, uint64_t limit);

/* After done(GW_S3_OK): 1 when the body was chunked (see gw_lo_put_seg()),
 * 0 when it is in gw_lo_put_small() (owned by the body reader). */
int gw_lo_put_chunked(const struct gw_lo_put *lp);
struct evbuffer *gw_lo_put_small(const struct gw_lo_put *lp);
void gw_lo_put_seg(const struct gw_lo_put *lp, struct gw_lo_seg *out);

/* The chunks are referenced by a stored record: they are kept. */
void gw_lo_put_commit(struct gw_lo_put *lp);
/* Frees lp; uncommitted chunks are reclaimed. NULL is a no-op. */
void gw_lo_put_free(struct gw_lo_put *lp);

#endif
