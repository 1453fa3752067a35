/* AWS Signature Version 4 for S3 requests. cairn-bench signs itself rather
 * than through CURLOPT_AWS_SIGV4: libcurl 7.88 hashes only POSTFIELDS (a
 * streamed PUT body would be signed as empty) and signs neither
 * x-amz-content-sha256 nor Range; and the derived signing key can be cached
 * per day, leaving one SHA-256 and one HMAC per request. */
#ifndef BENCH_SIGV4_H
#define BENCH_SIGV4_H

#include <stddef.h>

#include "cn/rc.h"

#define BENCH_SIGV4_EMPTY_SHA256 \
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define BENCH_SIGV4_UNSIGNED "UNSIGNED-PAYLOAD"

struct bench_sigv4 {
    char access_key[256];
    char secret[256];
    char region[64];
    char service[32];
    char key_date[9];              /* date of the cached signing key */
    unsigned char signing_key[32];
};

/* One header to sign: name in lower case, value trimmed. */
struct bench_sigv4_header {
    const char *name;
    const char *value;
};

void bench_sigv4_init(struct bench_sigv4 *s, const char *access_key, const char *secret,
                      const char *region, const char *service);

/* Writes the Authorization header value into auth. uri is the encoded path,
 * query the canonical query string ("" when none), headers sorted by name
 * and including host, x-amz-content-sha256 and x-amz-date; amz_date is
 * YYYYMMDDTHHMMSSZ. Returns CN_OK, or CN_TOOBIG when a buffer is short. */
int bench_sigv4_sign(struct bench_sigv4 *s, const char *method, const char *uri,
                     const char *query, const struct bench_sigv4_header *headers,
                     size_t nheaders, const char *payload_hash, const char *amz_date,
                     char *auth, size_t authlen);

/* The hex SHA-256 of len bytes (a signed payload's x-amz-content-sha256). */
void bench_sigv4_sha256_hex(const void *data, size_t len, char out[65]);

/* Formats a time (seconds since the epoch) as YYYYMMDDTHHMMSSZ. */
void bench_sigv4_amz_date(long long epoch_s, char out[17]);

#endif
