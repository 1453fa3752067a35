/* A streaming decoder for `Content-Encoding: aws-chunked` bodies, the three
 * forms S3 accepts with SigV4:
 *   STREAMING-AWS4-HMAC-SHA256-PAYLOAD          each chunk signed, chained
 *   STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER  the same + a signed trailer
 *   STREAMING-UNSIGNED-PAYLOAD-TRAILER          no signatures, a trailer
 * Wire form: `hex-size[;chunk-signature=SIG]\r\n data \r\n` ... a 0-size
 * chunk, then (trailer forms) `name:value\r\n` lines
 * [`x-amz-trailer-signature:SIG\r\n`] and a final `\r\n`.
 * The gateway pushes the HTTP body through it in pieces of any size (down to
 * one byte) and receives the decoded data as spans of its own input. */
#ifndef GW_AWS_CHUNKED_H
#define GW_AWS_CHUNKED_H

#include <stddef.h>
#include <stdint.h>

#include "checksum.h"
#include "s3_error.h"
#include "sigv4.h"

#define GW_AWS_CHUNKED_DEFAULT_MAX_CHUNK (16u * 1024 * 1024)
#define GW_AWS_CHUNKED_LINE_MAX 4096    /* a chunk header or trailer line */
#define GW_AWS_CHUNKED_TRAILER_MAX 8192 /* all trailer lines together */
#define GW_AWS_CHUNKED_MIN_CHUNK_AWS 8192

struct gw_aws_chunked_config {
    enum gw_sigv4_payload mode;         /* one of the three STREAMING forms */
    /* For the two signed forms: the verdict of gw_sigv4_verify() (signing
     * key, seed signature, amz_date, scope are copied). Ignored otherwise. */
    const struct gw_sigv4_result *auth;
    int64_t decoded_length;             /* x-amz-decoded-content-length, or -1
                                           when absent (then not checked) */
    /* The x-amz-trailer header value ("x-amz-checksum-crc32", comma-
     * separated names allowed), NULL if absent. Each named trailer must come;
     * a trailer that was not announced is refused. A trailer named
     * x-amz-checksum-<algo> is verified over the decoded data. */
    const char *trailer_names;
    size_t trailer_names_len;
    size_t max_chunk_size;              /* 0: GW_AWS_CHUNKED_DEFAULT_MAX_CHUNK */
    size_t min_chunk_size;              /* 0: not checked. S3 refuses a chunk
                                           other than the last one below
                                           8192 bytes (InvalidChunkSizeError);
                                           many clients do not follow it */
};

struct gw_aws_chunked;

/* Receives decoded data: a span inside the input given to _feed(), valid only
 * during the call. Data is handed over before its chunk's signature (and the
 * trailer checksum) is checked: commit nothing until _feed() returned
 * CN_DONE. Return CN_OK to go on; any other value stops _feed(), which
 * returns it. */
typedef int (*gw_aws_chunked_data_cb)(void *arg, const char *data, size_t len);

/* Creates a decoder. Returns NULL with *err set when cfg is unusable: mode
 * not a streaming form, a signed form without auth, or trailer_names naming
 * an unsupported checksum (InvalidRequest / InvalidArgument). */
struct gw_aws_chunked *gw_aws_chunked_new(const struct gw_aws_chunked_config *cfg,
                                          enum gw_s3_err *err);
void gw_aws_chunked_free(struct gw_aws_chunked *d);

/* Feeds the next len bytes of the body. Returns:
 *   CN_AGAIN   all input consumed (*used == len), the body is not over;
 *   CN_DONE    the body ended and every check passed (signatures, trailer
 *              checksum, decoded length); *used says where it ended: bytes
 *              after it are not part of the body (the caller refuses them);
 *   CN_INVAL   malformed framing -> *err IncompleteBody (decoded length
 *              differs from x-amz-decoded-content-length) or InvalidRequest /
 *              InvalidArgument (bad size line, missing CRLF, bad trailer);
 *   CN_TOOBIG  a line, the trailer or a chunk over its limit -> InvalidRequest
 *              (EntityTooLarge for a chunk over max_chunk_size)
 *   CN_CORRUPT a chunk or trailer signature is wrong -> SignatureDoesNotMatch;
 *              a trailer checksum differs -> BadDigest; it is not valid base64
 *              of the right size -> InvalidRequest;
 *   any other value returned by cb (then *err = InternalError).
 * After anything but CN_AGAIN the decoder is finished: further calls return
 * the same result without reading input. If the HTTP body ends while _feed()
 * still answers CN_AGAIN, the caller answers IncompleteBody. */
int gw_aws_chunked_feed(struct gw_aws_chunked *d, const char *in, size_t len, size_t *used,
                        gw_aws_chunked_data_cb cb, void *arg, enum gw_s3_err *err);

/* Call when the HTTP body ended while _feed() still answered CN_AGAIN.
 * Some clients end a trailer without the final empty line; when every
 * announced trailer (and its signature) was received this returns CN_DONE,
 * otherwise CN_INVAL with *err = IncompleteBody. After any other result of
 * _feed() it returns that result again. */
int gw_aws_chunked_finish(struct gw_aws_chunked *d, enum gw_s3_err *err);

/* Decoded bytes handed to cb so far. */
uint64_t gw_aws_chunked_decoded_bytes(const struct gw_aws_chunked *d);

/* After CN_DONE: the checksum trailer that was received and verified, as
 * the client sent it (base64). CN_OK, or CN_NOTFOUND if there was none. */
int gw_aws_chunked_trailer_checksum(const struct gw_aws_chunked *d,
                                    enum gw_checksum_algo *algo,
                                    char b64[GW_CHECKSUM_B64_MAX]);

#endif
