/* The HTTPS listeners' TLS context (gateway/http/http_tls.c): loading a
 * certificate and key, refusing bad files with a reason, and the SIGHUP
 * reload that swaps the certificate or keeps the old one. The files are
 * made here with OpenSSL (a self-signed P-256 certificate per serial). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "cn/rc.h"
#include "cn/test.h"
#include "http_tls.h"

CN_TEST_GLOBALS;

static char test_dir[64];
static char cert_path[128], key_path[128], other_key_path[128], garbage_path[128];

/* Writes a self-signed certificate with this serial for key k to path. */
static void test_write_cert(const char *path, EVP_PKEY *k, long serial)
{
    X509 *x = X509_new();
    CN_CHECK(x != NULL);
    ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
    X509_gmtime_adj(X509_getm_notBefore(x), 0);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    X509_set_pubkey(x, k);
    X509_NAME *n = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)"127.0.0.1", -1,
                               -1, 0);
    X509_set_issuer_name(x, n);
    CN_CHECK(X509_sign(x, k, EVP_sha256()) > 0);
    FILE *f = fopen(path, "w");
    CN_CHECK(f != NULL && PEM_write_X509(f, x) == 1);
    fclose(f);
    X509_free(x);
}

static void test_write_key(const char *path, EVP_PKEY *k)
{
    FILE *f = fopen(path, "w");
    CN_CHECK(f != NULL && PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL) == 1);
    fclose(f);
}

/* A key pair, its certificate with serial 0x64, another key, a garbage file. */
static void test_setup(EVP_PKEY **k)
{
    snprintf(test_dir, sizeof(test_dir), "/tmp/cn-http-tls-XXXXXX");
    CN_CHECK(mkdtemp(test_dir) != NULL);
    snprintf(cert_path, sizeof(cert_path), "%s/cert.pem", test_dir);
    snprintf(key_path, sizeof(key_path), "%s/key.pem", test_dir);
    snprintf(other_key_path, sizeof(other_key_path), "%s/other.pem", test_dir);
    snprintf(garbage_path, sizeof(garbage_path), "%s/garbage.pem", test_dir);
    *k = EVP_EC_gen("P-256");
    EVP_PKEY *other = EVP_EC_gen("P-256");
    CN_CHECK(*k != NULL && other != NULL);
    test_write_key(key_path, *k);
    test_write_key(other_key_path, other);
    test_write_cert(cert_path, *k, 0x64);
    FILE *f = fopen(garbage_path, "w");
    fputs("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n", f);
    fclose(f);
    EVP_PKEY_free(other);
}

static void test_teardown(EVP_PKEY *k)
{
    EVP_PKEY_free(k);
    unlink(cert_path);
    unlink(key_path);
    unlink(other_key_path);
    unlink(garbage_path);
    rmdir(test_dir);
}

/* A good pair loads; connections get TLS 1.2 as their floor. */
static void test_load(void)
{
    EVP_PKEY *k;
    test_setup(&k);
    char err[CN_ERR_LEN] = "", desc[512];
    struct gw_http_tls *t = gw_http_tls_new(cert_path, key_path, err);
    CN_CHECK(t != NULL);
    if (t != NULL) {
        gw_http_tls_describe(t, desc, sizeof(desc));
        CN_CHECK(strstr(desc, "CN=127.0.0.1") != NULL && strstr(desc, "serial 64") != NULL);
        SSL *ssl = gw_http_tls_ssl_new(t);
        CN_CHECK(ssl != NULL);
        CN_CHECK_EQ_INT(SSL_get_min_proto_version(ssl), TLS1_2_VERSION);
        CN_CHECK(SSL_get_options(ssl) & SSL_OP_NO_RENEGOTIATION);
        SSL_free(ssl);
    }
    gw_http_tls_free(t);
    test_teardown(k);
}

/* Missing, malformed and mismatched files: NULL and a reason naming the
 * setting and the file. */
static void test_bad_files(void)
{
    EVP_PKEY *k;
    test_setup(&k);
    char err[CN_ERR_LEN] = "", missing[160];
    snprintf(missing, sizeof(missing), "%s/missing.pem", test_dir);
    CN_CHECK(gw_http_tls_new(missing, key_path, err) == NULL);
    CN_CHECK(strstr(err, "http.tls_cert_file") != NULL && strstr(err, missing) != NULL);
    CN_CHECK(gw_http_tls_new(garbage_path, key_path, err) == NULL);
    CN_CHECK(strstr(err, "http.tls_cert_file") != NULL && strstr(err, garbage_path) != NULL);
    CN_CHECK(gw_http_tls_new(cert_path, garbage_path, err) == NULL);
    CN_CHECK(strstr(err, "http.tls_key_file") != NULL);
    CN_CHECK(gw_http_tls_new(cert_path, other_key_path, err) == NULL);
    CN_CHECK(strstr(err, "http.tls_key_file") != NULL && strstr(err, "mismatch") != NULL);
    test_teardown(k);
}

/* A reload serves the new certificate to new connections, an SSL made
 * before keeps working; a broken file keeps the certificate in use. */
static void test_reload(void)
{
    EVP_PKEY *k;
    test_setup(&k);
    char err[CN_ERR_LEN] = "", desc[512];
    struct gw_http_tls *t = gw_http_tls_new(cert_path, key_path, err);
    CN_CHECK(t != NULL);
    if (t == NULL) {
        test_teardown(k);
        return;
    }
    SSL *before = gw_http_tls_ssl_new(t);
    test_write_cert(cert_path, k, 0x65);
    CN_CHECK_EQ_INT(gw_http_tls_reload(t, err), CN_OK);
    gw_http_tls_describe(t, desc, sizeof(desc));
    CN_CHECK(strstr(desc, "serial 65") != NULL);
    /* the old context lives on through the SSL made from it */
    X509 *old = SSL_get_certificate(before);
    CN_CHECK(old != NULL && ASN1_INTEGER_get(X509_get0_serialNumber(old)) == 0x64);
    SSL_free(before);
    rename(garbage_path, cert_path);
    CN_CHECK_EQ_INT(gw_http_tls_reload(t, err), CN_ERR);
    CN_CHECK(strstr(err, "http.tls_cert_file") != NULL);
    gw_http_tls_describe(t, desc, sizeof(desc));
    CN_CHECK(strstr(desc, "serial 65") != NULL);
    SSL *after = gw_http_tls_ssl_new(t);
    CN_CHECK(after != NULL && ASN1_INTEGER_get(X509_get0_serialNumber(
                                  SSL_get_certificate(after))) == 0x65);
    SSL_free(after);
    gw_http_tls_free(t);
    test_teardown(k);
}

static const struct cn_test_case cases[] = {
    {"load", test_load},
    {"bad_files", test_bad_files},
    {"reload", test_reload},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
