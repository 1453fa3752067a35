/* The listeners' TLS context (http_tls.h). One SSL_CTX at a time behind a
 * mutex: a worker takes it only to call SSL_new (which keeps its own
 * reference), a reload builds the next one outside the lock and swaps the
 * pointer, so neither side waits on file reads or handshakes. */
#include "http_tls.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/x509.h>

#include "cn/alloc.h"

/* TLS 1.2 suites: ECDHE key exchange and AEAD only (TLS 1.3's defaults
 * are already that). Clients choose among them. */
#define GW_HTTP_TLS_CIPHERS                                                          \
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"                     \
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"                     \
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"

struct gw_http_tls {
    pthread_mutex_t lock;
    SSL_CTX *ctx;        /* under lock: the one new connections get */
    char *cert_file;
    char *key_file;
};

/* Formats OpenSSL's first queued error (the root cause: "no start line",
 * "key values mismatch", a missing file) after what and file, then clears
 * the queue. */
static void gw_http_tls_err(char err[CN_ERR_LEN], const char *what, const char *file)
{
    unsigned long e = ERR_peek_error();
    char reason[256] = "unknown error";
    if (e != 0)
        ERR_error_string_n(e, reason, sizeof(reason));
    snprintf(err, CN_ERR_LEN, "%s %s: %s", what, file, reason);
    ERR_clear_error();
}

/* A new SSL_CTX with the two files loaded and checked; NULL with err. */
static SSL_CTX *gw_http_tls_ctx_new(const char *cert_file, const char *key_file,
                                    char err[CN_ERR_LEN])
{
    ERR_clear_error();
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL) {
        gw_http_tls_err(err, "cannot create the TLS context for", cert_file);
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    /* renegotiation is a denial-of-service lever and libevent's TLS
     * bufferevents do not need it; compression leaks (CRIME) */
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
    /* idle keep-alive connections give their 2 x 34 KiB record buffers back */
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    if (SSL_CTX_set_cipher_list(ctx, GW_HTTP_TLS_CIPHERS) != 1) {
        gw_http_tls_err(err, "cannot set the TLS 1.2 ciphers for", cert_file);
        goto fail;
    }
    if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1) {
        gw_http_tls_err(err, "http.tls_cert_file: cannot load", cert_file);
        goto fail;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1) {
        gw_http_tls_err(err, "http.tls_key_file: cannot load", key_file);
        goto fail;
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
        gw_http_tls_err(err, "http.tls_key_file: does not match the certificate:", key_file);
        goto fail;
    }
    return ctx;
fail:
    SSL_CTX_free(ctx);
    return NULL;
}

struct gw_http_tls *gw_http_tls_new(const char *cert_file, const char *key_file,
                                    char err[CN_ERR_LEN])
{
    SSL_CTX *ctx = gw_http_tls_ctx_new(cert_file, key_file, err);
    if (ctx == NULL)
        return NULL;
    struct gw_http_tls *t = cn_calloc(1, sizeof(*t));
    pthread_mutex_init(&t->lock, NULL);
    t->ctx = ctx;
    t->cert_file = cn_strdup(cert_file);
    t->key_file = cn_strdup(key_file);
    return t;
}

int gw_http_tls_reload(struct gw_http_tls *t, char err[CN_ERR_LEN])
{
    SSL_CTX *ctx = gw_http_tls_ctx_new(t->cert_file, t->key_file, err);
    if (ctx == NULL)
        return CN_ERR;
    pthread_mutex_lock(&t->lock);
    SSL_CTX *old = t->ctx;
    t->ctx = ctx;
    pthread_mutex_unlock(&t->lock);
    SSL_CTX_free(old);   /* freed for real with the last SSL made from it */
    return CN_OK;
}

SSL *gw_http_tls_ssl_new(struct gw_http_tls *t)
{
    pthread_mutex_lock(&t->lock);
    SSL *ssl = SSL_new(t->ctx);
    pthread_mutex_unlock(&t->lock);
    return ssl;
}

void gw_http_tls_describe(struct gw_http_tls *t, char *buf, size_t len)
{
    snprintf(buf, len, "no certificate");
    pthread_mutex_lock(&t->lock);
    X509 *x = SSL_CTX_get0_certificate(t->ctx);
    if (x != NULL) {
        char subject[256] = "";
        X509_NAME_oneline(X509_get_subject_name(x), subject, sizeof(subject));
        char serial[80] = "?";
        BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);
        char *hex = bn != NULL ? BN_bn2hex(bn) : NULL;
        if (hex != NULL)
            snprintf(serial, sizeof(serial), "%s", hex);
        OPENSSL_free(hex);
        BN_free(bn);
        char expires[64] = "?";
        BIO *mem = BIO_new(BIO_s_mem());
        if (mem != NULL && ASN1_TIME_print(mem, X509_get0_notAfter(x)) == 1) {
            int n = BIO_read(mem, expires, (int)sizeof(expires) - 1);
            expires[n > 0 ? n : 0] = '\0';
        }
        BIO_free(mem);
        snprintf(buf, len, "%s, serial %s, expires %s", subject, serial, expires);
    }
    pthread_mutex_unlock(&t->lock);
}

void gw_http_tls_free(struct gw_http_tls *t)
{
    if (t == NULL)
        return;
    SSL_CTX_free(t->ctx);
    pthread_mutex_destroy(&t->lock);
    cn_free(t->cert_file);
    cn_free(t->key_file);
    cn_free(t);
}
