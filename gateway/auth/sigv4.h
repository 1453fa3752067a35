/* AWS Signature Version 4 as S3 checks it: the Authorization header
 * (AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...) and
 * presigned URLs (X-Amz-Algorithm, X-Amz-Credential, X-Amz-Date,
 * X-Amz-Expires, X-Amz-SignedHeaders, X-Amz-Signature). Works on an abstract
 * view of the request so it does not depend on the HTTP parser. On success it
 * hands back what the aws-chunked decoder needs (signing key, seed
 * signature, date, scope) and how the payload must be checked. */
#ifndef GW_SIGV4_H
#define GW_SIGV4_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "cn/rc.h"
#include "credentials.h"
#include "s3_error.h"

struct evbuffer;

/* One request header as received: name in any case, value as sent (not
 * trimmed). Repeated names are allowed (their values are joined with ','). */
struct gw_sigv4_header {
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
};

/* The request as the verifier sees it. Nothing needs NUL termination. */
struct gw_sigv4_request {
    const char *method;           /* "GET" ... */
    size_t method_len;
    const char *path;             /* raw path as sent, still percent-encoded,
                                     without the query ("/bucket/a%20b") */
    size_t path_len;
    const char *query;            /* raw query after '?', without it; NULL/0 */
    size_t query_len;
    const struct gw_sigv4_header *headers;
    size_t n_headers;
    /* Overrides the payload hash of the canonical request; NULL: the value
     * of the x-amz-content-sha256 header (header auth, where it is required)
     * or X-Amz-Content-Sha256 in the query / UNSIGNED-PAYLOAD (presigned). */
    const char *payload_hash;
    size_t payload_hash_len;
    time_t now;                   /* the gateway's clock, seconds UTC */
};

/* How the body must be read, from x-amz-content-sha256. */
enum gw_sigv4_payload {
    GW_SIGV4_PAYLOAD_SHA256 = 0,  /* hex SHA-256 given: the caller hashes
                                     the body and answers
                                     XAmzContentSHA256Mismatch if it differs
                                     from result.payload_hash */
    GW_SIGV4_PAYLOAD_UNSIGNED,    /* UNSIGNED-PAYLOAD (always for presigned
                                     unless the query names a hash) */
    GW_SIGV4_PAYLOAD_STREAMING,   /* STREAMING-AWS4-HMAC-SHA256-PAYLOAD */
    GW_SIGV4_PAYLOAD_STREAMING_TRAILER,          /* ...-PAYLOAD-TRAILER */
    GW_SIGV4_PAYLOAD_STREAMING_UNSIGNED_TRAILER, /* STREAMING-UNSIGNED-PAYLOAD-TRAILER */
};

#define GW_SIGV4_SIG_HEX 64           /* hex chars of a signature */
#define GW_SIGV4_SCOPE_MAX 128        /* "20130524/us-east-1/s3/aws4_request" */
#define GW_SIGV4_REGION_MAX 64
#define GW_SIGV4_AMZ_DATE_LEN 16      /* "20130524T000000Z" */
#define GW_SIGV4_STRING_TO_SIGN_MAX 256
#define GW_SIGV4_MAX_SKEW_S 900       /* 15 minutes, as S3 */
#define GW_SIGV4_MAX_EXPIRES_S 604800 /* 7 days */

/* The verdict. On success err is GW_S3_OK and every field below is set; on
 * failure err and message say what to answer (message "" means the table's
 * default), and string_to_sign / canonical_request_hash are set when the
 * failure is SignatureDoesNotMatch (S3 returns <StringToSign> and
 * <CanonicalRequest> details; we give what fits, never the secret). */
struct gw_sigv4_result {
    enum gw_s3_err err;
    char message[CN_ERR_LEN];
    int presigned;                          /* 1: query-string auth */
    enum gw_sigv4_payload payload;
    char payload_hash[GW_SIGV4_SIG_HEX + 1];/* lower-case, PAYLOAD_SHA256 only */
    const struct gw_cred *cred;             /* the signer: points into the
                                               gw_credentials table */
    unsigned char signing_key[32];          /* kSigning, for aws-chunked */
    char signature[GW_SIGV4_SIG_HEX + 1];   /* the seed signature (lower-case) */
    char amz_date[GW_SIGV4_AMZ_DATE_LEN + 1];
    char scope[GW_SIGV4_SCOPE_MAX];         /* date/region/s3/aws4_request */
    char region[GW_SIGV4_REGION_MAX + 1];
    char string_to_sign[GW_SIGV4_STRING_TO_SIGN_MAX];
};

struct gw_sigv4_config {
    const struct gw_credentials *creds; /* borrowed: must outlive the verifier */
    const char *region;     /* copied; NULL or "": any region is accepted,
                               else another one is AuthorizationHeaderMalformed
                               (or AuthorizationQueryParametersError) */
    int max_skew_s;         /* 0: GW_SIGV4_MAX_SKEW_S */
    int allow_unsigned_amz_headers; /* 0 (default, as S3): an x-amz-* header
                               present but not in SignedHeaders is refused
                               with AccessDenied "There were headers present
                               in the request which were not signed" */
};

/* A verifier holds the settings and a small cache of signing keys (per
 * access key + date + region). One per event-loop thread: not thread-safe.
 * Returns NULL only if cfg is invalid (creds NULL). Free with _free(). */
struct gw_sigv4 *gw_sigv4_new(const struct gw_sigv4_config *cfg);
void gw_sigv4_free(struct gw_sigv4 *v);
/* Points the verifier at a reloaded table and empties the key cache. */
void gw_sigv4_set_credentials(struct gw_sigv4 *v, const struct gw_credentials *creds);
/* The table the verifier uses now (valid as long as the credentials its
 * results point into). */
const struct gw_credentials *gw_sigv4_credentials(const struct gw_sigv4 *v);

/* Authenticates req. Returns:
 *   CN_OK        signed correctly; res says who and how to read the body;
 *   CN_NOTFOUND  no authentication at all (anonymous request); res->err is
 *                AccessDenied should the caller refuse anonymous access;
 *   CN_INVAL     refused: res->err / res->message say what to answer.
 * Refusals and their errors:
 *   SigV2 or other schemes ("AWS ak:sig", AWSAccessKeyId=, ECDSA)
 *       -> InvalidRequest "...Please use AWS4-HMAC-SHA256."; a SigV2
 *       presigned query past its Expires -> AccessDenied "Request has
 *       expired" (GW_S3_EXPIRED_PRESIGNED), as S3 answers it
 *   both the header and the query form -> InvalidArgument
 *   malformed header / credential / service / terminal / region / a missing
 *       part, host not signed, credential date != x-amz-date date
 *       -> AuthorizationHeaderMalformed (query form:
 *       AuthorizationQueryParametersError, also X-Amz-Expires not in
 *       1..604800)
 *   no x-amz-date (header auth) -> AccessDenied
 *   unknown access key -> InvalidAccessKeyId
 *   |x-amz-date - now| > max skew (header auth) -> RequestTimeTooSkewed;
 *   presigned: now > X-Amz-Date + X-Amz-Expires -> AccessDenied
 *       "Request has expired" (GW_S3_EXPIRED_PRESIGNED), X-Amz-Date more than
 *       the skew in the future -> AccessDenied "Request is not valid yet"
 *   x-amz-content-sha256 missing (header auth) -> InvalidRequest; not a hex
 *       SHA-256 nor a known literal -> InvalidArgument; the ECDSA streaming
 *       forms -> NotImplemented
 *   x-amz-content-sha256 or another x-amz-* header present but unsigned
 *       -> AccessDenied (see allow_unsigned_amz_headers)
 *   wrong signature -> SignatureDoesNotMatch.
 * res is always fully written; req is only read. */
int gw_sigv4_verify(struct gw_sigv4 *v, const struct gw_sigv4_request *req,
                    struct gw_sigv4_result *res);

/* ---- building blocks (exposed for tests, the fuzz target and tools) --- */

#define GW_SIGV4_MAX_SIGNED_HEADERS 128
#define GW_SIGV4_SIGNED_HEADERS_MAX 4096

/* The parsed credentials of either form, decoded and copied (so the
 * presigned query's %2F are resolved). Slices point into the struct. */
struct gw_sigv4_slice {
    const char *p;
    size_t len;
};
struct gw_sigv4_auth {
    int presigned;
    char credential[256];
    char signed_headers[GW_SIGV4_SIGNED_HEADERS_MAX];
    char signature[GW_SIGV4_SIG_HEX + 1];
    char amz_date[GW_SIGV4_AMZ_DATE_LEN + 1]; /* presigned: X-Amz-Date */
    int64_t expires;                          /* presigned: X-Amz-Expires */
    struct gw_sigv4_slice access_key, date, region, service, terminal;
    size_t n_signed;
    struct gw_sigv4_slice signed_list[GW_SIGV4_MAX_SIGNED_HEADERS];
};

/* Parses an Authorization header value. CN_OK and *out, CN_NOTFOUND when it
 * is not an AWS4-HMAC-SHA256 header at all (other scheme), or CN_INVAL with
 * res->err/message (AuthorizationHeaderMalformed and friends). Checks form
 * only: lengths, characters, credential parts (the access key is what
 * precedes the last four '/'), an 8-digit date, service "s3", terminal
 * "aws4_request", signed header names non-empty lower-case tokens (in the
 * order given: the canonical request follows it), a 64-char lower-case hex
 * signature. */
int gw_sigv4_parse_authorization(const char *value, size_t len, struct gw_sigv4_auth *out,
                                 struct gw_sigv4_result *res);
/* Parses the X-Amz-* parameters of a raw query (CN_NOTFOUND if there is no
 * X-Amz-Algorithm, CN_INVAL with AuthorizationQueryParametersError...). */
int gw_sigv4_parse_query(const char *query, size_t len, struct gw_sigv4_auth *out,
                         struct gw_sigv4_result *res);

/* Appends the canonical request of req under auth's signed headers to out
 * (for presigned, X-Amz-Signature is left out of the query). payload_hash
 * is the last line. Returns CN_OK, CN_INVAL (a bad percent escape in path or
 * query) or CN_TOOBIG (path/query/header section over 64 KiB). */
int gw_sigv4_canonical_request(const struct gw_sigv4_request *req,
                               const struct gw_sigv4_auth *auth, const char *payload_hash,
                               size_t payload_hash_len, struct evbuffer *out);

/* kSigning = HMAC(HMAC(HMAC(HMAC("AWS4"+secret, date8), region), "s3"),
 * "aws4_request"). */
void gw_sigv4_signing_key(const char *secret, size_t secret_len, const char *date8,
                          const char *region, size_t region_len, unsigned char out[32]);
/* HMAC-SHA256(key, msg) as lower-case hex (65 bytes with the NUL). */
void gw_sigv4_hmac_hex(const unsigned char key[32], const char *msg, size_t len,
                       char out[GW_SIGV4_SIG_HEX + 1]);

#endif
