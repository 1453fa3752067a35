/* The storage node's ZAP handler (ZeroMQ RFC 27): with auth = curve the
 * node's ROUTER is a CURVE server, and libzmq asks this handler, over
 * inproc://zeromq.zap.01, whether each client key that completed the
 * handshake may connect. It says yes only to the keys of the allow-list
 * file, which SIGHUP reloads. Served from the ROUTER thread (server.c polls
 * its socket), so the list needs no lock. The accepted key is the User-Id of
 * every message of the connection, and server.c checks it against the
 * current list per request, so a key removed by a reload stops working on
 * connections already open too. */
#ifndef SN_ZAP_H
#define SN_ZAP_H

#include <stddef.h>
#include <stdint.h>

#include "cn/rc.h"

struct sn_zap;

/* Loads the allow-list at path and binds the handler in zctx (before the
 * ROUTER binds, so no handshake comes first). Returns CN_OK and *out (free
 * with sn_zap_free()), or an error with err and *out NULL. */
int sn_zap_new(void *zctx, const char *allow_path, struct sn_zap **out, char err[CN_ERR_LEN]);

/* The REP socket to poll for ZMQ_POLLIN. */
void *sn_zap_socket(struct sn_zap *z);

/* Answers every waiting ZAP request (ROUTER thread only). */
void sn_zap_serve(struct sn_zap *z);

/* Re-reads the allow-list file (ROUTER thread only). On error the old list
 * stays in force and err says why. */
int sn_zap_reload(struct sn_zap *z, char err[CN_ERR_LEN]);

/* Keys on the list now. */
size_t sn_zap_allowed_count(const struct sn_zap *z);

/* 1 when user_id (a message's "User-Id": the client's Z85 public key) is on
 * the list now. */
int sn_zap_allowed(const struct sn_zap *z, const char *user_id);

/* Unbinds and frees (NULL is a no-op). */
void sn_zap_free(struct sn_zap *z);

#endif
