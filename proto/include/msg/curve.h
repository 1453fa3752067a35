/* Transport security of the protocol: ZeroMQ CURVE on the DEALER -> ROUTER
 * connections (docs/security.md). A storage node is a CURVE server with its
 * own key pair; gateways, cairn-admin and cairn-sn-bench are CURVE clients
 * with their own key pair and the nodes' public key (one cluster key pair
 * for every node). Key files are read by cn/curve_key.h; this module puts
 * the keys on sockets. */
#ifndef MSG_CURVE_H
#define MSG_CURVE_H

#include "cn/curve_key.h"
#include "cn/rc.h"

/* A client's keys. enabled 0: plain (auth = none). */
struct msg_curve_client {
    int enabled;
    struct cn_curve_key server;     /* the nodes' public key */
    struct cn_curve_key public_key; /* derived from secret_key */
    struct cn_curve_key secret_key;
};

/* 1 when this libzmq was built with CURVE. */
int msg_curve_available(void);

/* Derives the public key of secret. Returns CN_OK, or CN_INVAL with err. */
int msg_curve_public(const struct cn_curve_key *secret, struct cn_curve_key *pub,
                     char err[CN_ERR_LEN]);

/* A new random key pair. CN_ERR with err when libzmq has no CURVE. */
int msg_curve_keypair(struct cn_curve_key *pub, struct cn_curve_key *secret,
                      char err[CN_ERR_LEN]);

/* Loads a client's keys: its secret key file (mode 0600 or stricter) and the
 * file holding the nodes' public key; sets enabled. On error k is zeroed and
 * err names the file. */
int msg_curve_client_load(struct msg_curve_client *k, const char *secret_file,
                          const char *server_file, char err[CN_ERR_LEN]);

/* The tools' settings from the environment, under the gateway's names:
 * CAIRN_STORAGE_AUTH (none, the default, or curve),
 * CAIRN_STORAGE_CURVE_SECRET_KEY_FILE and CAIRN_STORAGE_CURVE_SERVER_KEY_FILE.
 * The overrides (NULL: the environment's) come from command-line flags. */
int msg_curve_client_from_env(struct msg_curve_client *k, const char *auth,
                              const char *secret_file, const char *server_file,
                              char err[CN_ERR_LEN]);

/* Makes a DEALER a CURVE client of k (no-op when not enabled). Call before
 * zmq_connect. Returns CN_OK or CN_ERR with err. */
int msg_curve_client_apply(const struct msg_curve_client *k, void *sock, char err[CN_ERR_LEN]);

/* Makes a ROUTER a CURVE server with secret; ZAP requests carry domain.
 * Call before zmq_bind. Returns CN_OK or CN_ERR with err. */
int msg_curve_server_apply(void *sock, const struct cn_curve_key *secret, const char *domain,
                           char err[CN_ERR_LEN]);

#endif
