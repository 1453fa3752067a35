/* Reading an S3 request body: the decoder chain (HTTP framing is already
 * undone by conn.c; then aws-chunked when the signature says so) into a sink
 * evbuffer, with the checks S3 makes on the way: size limits before and
 * during the transfer, x-amz-content-sha256, aws-chunked chunk signatures
 * and trailer checksums, Content-MD5 and x-amz-checksum-* headers. The
 * caller gets the body only when every check passed, so nothing is stored
 * from a body that fails one. */
#ifndef GW_S3_BODY_H
#define GW_S3_BODY_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "checksum.h"
#include "request.h"

/* The body reader's state of one request (r->bs, made by the readers
 * below): freed with the request. NULL is a no-op. */
struct gw_s3_body;
void gw_s3_body_free(struct gw_s3_body *b);

/* done(r, GW_S3_OK, data) with the whole decoded body, or done(r, err, NULL).
 * data belongs to the reader (valid until the request ends); the callee may
 * move its bytes out. */
typedef void (*gw_s3_body_cb)(struct gw_req *r, enum gw_s3_err err, struct evbuffer *data);

/* Reads the body of r, at most limit decoded bytes (more: too_large, refused
 * before 100 Continue when the declared length already says so). */
void gw_s3_body_read(struct gw_req *r, size_t limit, enum gw_s3_err too_large, gw_s3_body_cb done);
/* gw_s3_body_read for the operations whose body S3 requires an integrity
 * header for (PutBucketCors, PutBucketTagging, PutBucketLifecycle...):
 * without Content-MD5 or an x-amz-checksum-* header (or trailer) the request
 * is answered 400 InvalidRequest "Missing required header for this request:
 * Content-MD5", as AWS answers; what is sent is verified as for any body.
 * Call it after the access decision, so a refused caller hears 403 first. */
void gw_s3_body_read_integrity(struct gw_req *r, size_t limit, enum gw_s3_err too_large,
                               gw_s3_body_cb done);
/* The same with flags: GW_S3_BODY_OBJECT_CHECKSUM_HEADERS says the request's
 * x-amz-checksum-* headers describe an object, not this body
 * (CompleteMultipartUpload), so they are not verified against it. */
#define GW_S3_BODY_OBJECT_CHECKSUM_HEADERS 1u
void gw_s3_body_read_flags(struct gw_req *r, size_t limit, enum gw_s3_err too_large,
                           unsigned flags, gw_s3_body_cb done);

/* Streaming form, for bodies too large to hold (the large-object path):
 * decoded bytes are appended to data and on_data(r, data, arg) is called
 * after each batch; it removes what it can use and returns 1 to go on or 0
 * to pause (it then calls gw_s3_body_resume() when it can take more; while
 * paused nothing is read from the client, so the connection's buffers bound
 * memory). When the body ended and every check passed, done(r, GW_S3_OK,
 * data, arg) hands over the bytes not yet taken; on a failed check or a
 * broken transfer done(r, err, NULL, arg). on_data is never called after
 * done. Checks that need the whole body (SHA-256, Content-MD5, checksums,
 * trailers) are decided only at the end: a consumer must not make what it
 * wrote visible before done says GW_S3_OK. */
typedef int (*gw_s3_body_data_cb)(struct gw_req *r, struct evbuffer *data, void *arg);
typedef void (*gw_s3_body_stream_cb)(struct gw_req *r, enum gw_s3_err err, struct evbuffer *data,
                                     void *arg);
/* flags: GW_S3_BODY_MD5_OUTSIDE says the consumer computes the MD5 of the
 * decoded bytes itself (the large-object hasher thread, lo_hasher.h): the
 * reader does not, does not check Content-MD5 at the end, and
 * gw_s3_body_md5_outside_done() must be called before the MD5 is read. */
#define GW_S3_BODY_MD5_OUTSIDE 2u
void gw_s3_body_stream(struct gw_req *r, uint64_t limit, enum gw_s3_err too_large,
                       unsigned flags, gw_s3_body_data_cb on_data, gw_s3_body_stream_cb done,
                       void *arg);
/* With GW_S3_BODY_MD5_OUTSIDE, after done(GW_S3_OK): md5 (gw_checksum with
 * MD5, final) of every decoded byte becomes the body's MD5
 * (gw_s3_body_md5_hex) and is checked against Content-MD5. Returns
 * GW_S3_OK or GW_S3_BAD_DIGEST (the consumer must then not keep what it
 * wrote). */
enum gw_s3_err gw_s3_body_md5_outside_done(struct gw_req *r, const struct gw_checksum *md5);

/* r's body as a large PUT's source (lo_put.h): its start() is
 * gw_s3_body_stream() (EntityTooLarge past the limit) feeding the PUT, and
 * the rest read r's body reader. r outlives the PUT (its state holds it). */
struct gw_lo_put_source;
void gw_s3_body_lo_source(struct gw_req *r, struct gw_lo_put_source *out);
/* Resumes a paused stream: on_data is offered the buffered bytes again and
 * reading goes on. No-op when the stream is not paused or has ended. */
void gw_s3_body_resume(struct gw_req *r);
/* Bytes decoded so far. */
uint64_t gw_s3_body_decoded(const struct gw_req *r);

/* After a successful read: lower-case hex MD5 of the decoded body. */
const char *gw_s3_body_md5_hex(const struct gw_req *r);

/* After a successful read: the x-amz-checksum-* the client sent (header or
 * trailer) and that was verified. CN_OK or CN_NOTFOUND. */
int gw_s3_body_checksum(const struct gw_req *r, enum gw_checksum_algo *algo,
                        char b64[GW_CHECKSUM_B64_MAX]);

/* The size the client declares for the decoded body (x-amz-decoded-content-
 * length for aws-chunked, else Content-Length), or -1 when unknown. */
int64_t gw_s3_body_declared_length(const struct gw_req *r);

#endif
