/* TLS for the HTTP listeners: the server's SSL_CTX (certificate chain and
 * key from PEM files, TLS 1.2 and up, forward-secret AEAD ciphers), handed
 * to every worker thread, and replaced whole by a reload (SIGHUP) so new
 * connections get the new certificate while open ones keep the old. Part of
 * the HTTP layer: it knows files and sockets, nothing of S3. */
#ifndef GW_HTTP_TLS_H
#define GW_HTTP_TLS_H

#include <stddef.h>

#include <openssl/ssl.h>

#include "cn/rc.h"

struct gw_http_tls;

/* Loads cert_file (PEM, the server certificate then its intermediates) and
 * key_file (PEM private key matching it). Returns NULL with err on an
 * unreadable file, a bad PEM or a key that does not match; the caller frees
 * the result with gw_http_tls_free(). */
struct gw_http_tls *gw_http_tls_new(const char *cert_file, const char *key_file,
                                    char err[CN_ERR_LEN]);
/* Reads the same two files again into a new SSL_CTX and swaps it in for
 * connections accepted from now on. Any thread. On error returns CN_ERR with
 * err and the old certificate stays in use. */
int gw_http_tls_reload(struct gw_http_tls *t, char err[CN_ERR_LEN]);
/* A new server-side SSL for one accepted connection, from the current
 * SSL_CTX (the SSL holds its own reference to it). Any thread. NULL on
 * allocation failure; the caller owns the result. */
SSL *gw_http_tls_ssl_new(struct gw_http_tls *t);
/* Writes "subject, serial S, expires DATE" of the current certificate into
 * buf (for the log). */
void gw_http_tls_describe(struct gw_http_tls *t, char *buf, size_t len);
/* Frees t (NULL is fine). Connections still open keep their SSL_CTX
 * reference. */
void gw_http_tls_free(struct gw_http_tls *t);

#endif
