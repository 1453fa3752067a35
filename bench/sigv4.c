/* SigV4 signer (see sigv4.h), over OpenSSL's one-shot SHA256 and HMAC. */
#include "sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cn/hex.h"

static void bench_sigv4_hmac(const void *key, size_t keylen, const char *data, size_t len,
                             unsigned char out[32])
{
    unsigned int outlen = 32;
    HMAC(EVP_sha256(), key, (int)keylen, (const unsigned char *)data, len, out, &outlen);
}

void bench_sigv4_init(struct bench_sigv4 *s, const char *access_key, const char *secret,
                      const char *region, const char *service)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->access_key, sizeof(s->access_key), "%s", access_key);
    snprintf(s->secret, sizeof(s->secret), "AWS4%s", secret);
    snprintf(s->region, sizeof(s->region), "%s", region);
    snprintf(s->service, sizeof(s->service), "%s", service);
}

/* kSigning = HMAC(HMAC(HMAC(HMAC("AWS4"+secret, date), region), service),
 * "aws4_request"), recomputed only when the date changes. */
static void bench_sigv4_key(struct bench_sigv4 *s, const char *date)
{
    if (memcmp(s->key_date, date, 8) == 0)
        return;
    unsigned char k1[32], k2[32];
    bench_sigv4_hmac(s->secret, strlen(s->secret), date, 8, k1);
    bench_sigv4_hmac(k1, 32, s->region, strlen(s->region), k2);
    bench_sigv4_hmac(k2, 32, s->service, strlen(s->service), k1);
    bench_sigv4_hmac(k1, 32, "aws4_request", 12, s->signing_key);
    memcpy(s->key_date, date, 8);
    s->key_date[8] = '\0';
}

int bench_sigv4_sign(struct bench_sigv4 *s, const char *method, const char *uri,
                     const char *query, const struct bench_sigv4_header *headers,
                     size_t nheaders, const char *payload_hash, const char *amz_date,
                     char *auth, size_t authlen)
{
    char creq[8192], signed_names[1024], sts[512], hex[65];
    size_t n = 0, sn = 0;
    int w = snprintf(creq, sizeof(creq), "%s\n%s\n%s\n", method, uri, query);
    if (w < 0 || (size_t)w >= sizeof(creq))
        return CN_TOOBIG;
    n = (size_t)w;
    signed_names[0] = '\0';
    for (size_t i = 0; i < nheaders; i++) {
        w = snprintf(creq + n, sizeof(creq) - n, "%s:%s\n", headers[i].name, headers[i].value);
        if (w < 0 || (size_t)w >= sizeof(creq) - n)
            return CN_TOOBIG;
        n += (size_t)w;
        w = snprintf(signed_names + sn, sizeof(signed_names) - sn, "%s%s", i ? ";" : "",
                     headers[i].name);
        if (w < 0 || (size_t)w >= sizeof(signed_names) - sn)
            return CN_TOOBIG;
        sn += (size_t)w;
    }
    w = snprintf(creq + n, sizeof(creq) - n, "\n%s\n%s", signed_names, payload_hash);
    if (w < 0 || (size_t)w >= sizeof(creq) - n)
        return CN_TOOBIG;
    n += (size_t)w;

    unsigned char digest[32];
    SHA256((const unsigned char *)creq, n, digest);
    cn_hex_encode(digest, 32, hex);
    char date[9];
    memcpy(date, amz_date, 8);
    date[8] = '\0';
    w = snprintf(sts, sizeof(sts), "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s", amz_date,
                 date, s->region, s->service, hex);
    if (w < 0 || (size_t)w >= sizeof(sts))
        return CN_TOOBIG;
    bench_sigv4_key(s, date);
    bench_sigv4_hmac(s->signing_key, 32, sts, (size_t)w, digest);
    cn_hex_encode(digest, 32, hex);
    w = snprintf(auth, authlen,
                 "AWS4-HMAC-SHA256 Credential=%s/%s/%s/%s/aws4_request, SignedHeaders=%s, "
                 "Signature=%s",
                 s->access_key, date, s->region, s->service, signed_names, hex);
    return (w < 0 || (size_t)w >= authlen) ? CN_TOOBIG : CN_OK;
}

void bench_sigv4_sha256_hex(const void *data, size_t len, char out[65])
{
    unsigned char digest[32];
    SHA256((const unsigned char *)data, len, digest);
    cn_hex_encode(digest, 32, out);
}

void bench_sigv4_amz_date(long long epoch_s, char out[17])
{
    time_t t = (time_t)epoch_s;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}
