/* AWS Signature Version 2 as S3 checks it ("Signing and Authenticating REST
 * Requests"): the Authorization header "AWS AKID:signature" and presigned
 * URLs (AWSAccessKeyId, Signature, Expires in the query). The signature is
 * base64(HMAC-SHA1(secret, StringToSign)) over
 *     VERB \n Content-MD5 \n Content-Type \n Date \n
 *     CanonicalizedAmzHeaders CanonicalizedResource
 * It sits beside sigv4.c: the router asks gw_sigv2_detect() which of the two
 * a request uses, and the verdict has SigV4's shape (struct gw_sigv4_result)
 * so the handlers read who signed it the same way. */
#ifndef GW_SIGV2_H
#define GW_SIGV2_H

#include <stddef.h>
#include <stdint.h>

#include "cn/rc.h"
#include "credentials.h"
#include "sigv4.h"

struct evbuffer;

#define GW_SIGV2_SIG_B64 28            /* base64 of a 20-byte HMAC-SHA1 */
#define GW_SIGV2_SIG_MAX 64            /* longest Signature value we read */
#define GW_SIGV2_ACCESS_KEY_MAX 128
#define GW_SIGV2_EXPIRES_MAX 20        /* digits of an Expires value */
#define GW_SIGV2_INPUT_MAX (64u * 1024) /* path, query, one header value */

/* The parsed credentials of either form, decoded and copied. */
struct gw_sigv2_auth {
    int presigned;
    char access_key[GW_SIGV2_ACCESS_KEY_MAX + 1];
    size_t access_key_len;
    char signature[GW_SIGV2_SIG_MAX + 1];
    size_t signature_len;
    char expires_str[GW_SIGV2_EXPIRES_MAX + 1]; /* presigned: Expires as sent */
    int64_t expires;                            /* presigned: seconds since the epoch */
};

struct gw_sigv2_config {
    const struct gw_credentials *creds; /* borrowed: must outlive the verifier */
    int max_skew_s;                     /* 0: GW_SIGV4_MAX_SKEW_S */
};

/* One per event-loop thread (it reuses a buffer): not thread-safe. Returns
 * NULL only if cfg is invalid (creds NULL). Free with _free() (NULL ok). */
struct gw_sigv2 *gw_sigv2_new(const struct gw_sigv2_config *cfg);
void gw_sigv2_free(struct gw_sigv2 *v);
/* Points the verifier at a reloaded table. */
void gw_sigv2_set_credentials(struct gw_sigv2 *v, const struct gw_credentials *creds);

/* Does req use SigV2? 1 when its Authorization header is "AWS ..." (not
 * AWS4-HMAC-SHA256), or when it has no Authorization header, no
 * X-Amz-Algorithm and an AWSAccessKeyId or Signature query parameter;
 * else 0 (SigV4, anonymous, or another scheme: gw_sigv4_verify answers). */
int gw_sigv2_detect(const struct gw_sigv4_request *req);

/* Authenticates a SigV2 request. vhost_bucket (len bytes, NULL/0: path
 * style) is the bucket named by the Host header: the canonicalized resource
 * then starts with "/" + bucket, as S3 builds it. Returns CN_OK (res->cred is
 * the signer, res->payload GW_SIGV4_PAYLOAD_UNSIGNED: SigV2 signs no body;
 * Content-MD5, when sent, is checked by the body reader) or CN_INVAL with
 * res->err / res->message:
 *   both the header and the query form -> InvalidArgument
 *   header not "AWS AKID:signature" -> InvalidArgument
 *   query without all of AWSAccessKeyId, Signature, Expires, or an Expires
 *       that is not seconds since the epoch -> AccessDenied
 *   presigned past Expires -> AccessDenied "Request has expired"
 *       (GW_S3_EXPIRED_PRESIGNED), before anything else is looked at
 *   header auth without a Date or x-amz-date that parses -> AccessDenied
 *   unknown access key -> InvalidAccessKeyId
 *   |date - now| > max skew (header auth) -> RequestTimeTooSkewed
 *   path, query or a header value over 64 KiB -> RequestHeaderSectionTooLarge
 *   wrong signature -> SignatureDoesNotMatch (res->string_to_sign holds
 *       what fits of ours).
 * res is always fully written; req is only read. */
int gw_sigv2_verify(struct gw_sigv2 *v, const struct gw_sigv4_request *req,
                    const char *vhost_bucket, size_t vhost_len, struct gw_sigv4_result *res);

/* ---- building blocks (exposed for tests, the fuzz target and POST) ---- */

/* Parses an Authorization header value. CN_OK and *out, CN_NOTFOUND when it
 * is not "AWS " (another scheme), CN_INVAL with res->err/message when the
 * key or signature is missing, empty or too long, or the key holds a byte
 * that no access key has. */
int gw_sigv2_parse_authorization(const char *value, size_t len, struct gw_sigv2_auth *out,
                                 struct gw_sigv4_result *res);
/* Parses AWSAccessKeyId, Signature and Expires of a raw query (names and
 * values percent-decoded; '+' stays '+' as base64 needs). CN_NOTFOUND when
 * none of the three is present, CN_INVAL with res->err/message when one is
 * missing, repeated, too long, or Expires is not a decimal number. */
int gw_sigv2_parse_query(const char *query, size_t len, struct gw_sigv2_auth *out,
                         struct gw_sigv4_result *res);

/* Appends the StringToSign of req to out. date is the Date line's value
 * (presigned: the Expires value; header auth: NULL, and the verifier takes
 * the Date header, or "" when an x-amz-date header is present). Returns
 * CN_OK, CN_INVAL (a bad percent escape in a sub-resource value) or
 * CN_TOOBIG (path, query or a header value over GW_SIGV2_INPUT_MAX). */
int gw_sigv2_string_to_sign(const struct gw_sigv4_request *req, const char *vhost_bucket,
                            size_t vhost_len, const char *date, size_t date_len,
                            struct evbuffer *out);

/* base64(HMAC-SHA1(secret, msg)) into out (28 chars + NUL). */
void gw_sigv2_sign(const char *secret, size_t secret_len, const char *msg, size_t len,
                   char out[GW_SIGV2_SIG_B64 + 1]);

/* Is name (len bytes, decoded) one of the sub-resources that S3 puts in the
 * canonicalized resource? 1/0. */
int gw_sigv2_is_subresource(const char *name, size_t len);

#endif
