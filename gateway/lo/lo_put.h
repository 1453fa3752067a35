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

#include "checksum.h"
#include "lo_env.h"
#include "lo_map.h"
#include "s3_error.h"

enum gw_lo_put_mode {
    GW_LO_PUT_AUTO,    /* chunk once the body reaches the threshold */
    GW_LO_PUT_ALWAYS,  /* chunk from the first byte (parts, declared large bodies) */
};

struct gw_lo_put;

/* Where the body comes from: the S3 layer's body reader over its request
 * (s3_body.h's gw_s3_body_lo_source()); the PUT knows no request. ctx is
 * the implementation's own and outlives the PUT.
 *  - start: starts reading at most limit decoded bytes (more:
 *    EntityTooLarge, before 100 Continue when the declared length says so),
 *    handing decoded bytes to gw_lo_put_data(lp, ...) as they come and the
 *    end to gw_lo_put_body_end(lp, ...) once. md5_outside: the body's MD5
 *    is computed by the chunk writer's hasher and given back to md5_done().
 *  - decoded: the decoded bytes so far.
 *  - resume: reading was paused (gw_lo_put_data() returned 0): go on.
 *  - md5_done: (md5_outside) the body's MD5; returns GW_S3_OK or the answer
 *    to a Content-MD5 it does not match. */
struct gw_lo_put_source {
    void (*start)(void *ctx, uint64_t limit, int md5_outside, struct gw_lo_put *lp);
    uint64_t (*decoded)(void *ctx);
    void (*resume)(void *ctx);
    enum gw_s3_err (*md5_done)(void *ctx, const struct gw_checksum *md5);
    void *ctx;
};

/* Runs once: err GW_S3_OK when the body verified and is stored (as chunks,
 * or whole in gw_lo_put_small()); otherwise the error to answer (why: a
 * message or NULL). The callee may end the request (freeing lp through its
 * state's free function). */
typedef void (*gw_lo_put_done_cb)(void *arg, enum gw_s3_err err, const char *why);

/* Creates the streaming PUT of src's body into chunks of the object okey,
 * with lo's store and settings (lo outlives the PUT; src is copied in);
 * reqid names the request in the chunks' versions and the log. The caller
 * stores it in its handler state (freed with it), then calls
 * gw_lo_put_begin(). */
struct gw_lo_put *gw_lo_put_new(const struct gw_lo_env *lo, const struct gw_lo_put_source *src,
                                uint64_t reqid, const char *okey, size_t okey_len,
                                enum gw_lo_put_mode mode, gw_lo_put_done_cb done, void *arg);
/* Starts reading the body (src's start()), at most limit bytes. done() may
 * run before this returns. */
void gw_lo_put_begin(struct gw_lo_put *lp, uint64_t limit);

/* From the source: new decoded bytes in data (taken from it). Returns 1 to
 * go on, 0 to pause reading until the source's resume() is called. */
int gw_lo_put_data(struct gw_lo_put *lp, struct evbuffer *data);
/* From the source, once: the body ended (err GW_S3_OK: verified; tail its
 * last bytes, the source's buffer) or failed (err). */
void gw_lo_put_body_end(struct gw_lo_put *lp, enum gw_s3_err err, struct evbuffer *tail);

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
