/* CURVE keys onto ZeroMQ sockets (see msg/curve.h). */
#include "msg/curve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

int msg_curve_available(void)
{
    return zmq_has("curve");
}

int msg_curve_public(const struct cn_curve_key *secret, struct cn_curve_key *pub,
                     char err[CN_ERR_LEN])
{
    if (!msg_curve_available() || zmq_curve_public(pub->z85, secret->z85) != 0) {
        snprintf(err, CN_ERR_LEN, "cannot derive the public key: %s",
                 msg_curve_available() ? zmq_strerror(zmq_errno())
                                       : "libzmq was built without CURVE");
        return CN_INVAL;
    }
    return CN_OK;
}

int msg_curve_keypair(struct cn_curve_key *pub, struct cn_curve_key *secret,
                      char err[CN_ERR_LEN])
{
    if (!msg_curve_available() || zmq_curve_keypair(pub->z85, secret->z85) != 0) {
        snprintf(err, CN_ERR_LEN, "cannot make a key pair: %s",
                 msg_curve_available() ? zmq_strerror(zmq_errno())
                                       : "libzmq was built without CURVE");
        return CN_ERR;
    }
    return CN_OK;
}

int msg_curve_client_load(struct msg_curve_client *k, const char *secret_file,
                          const char *server_file, char err[CN_ERR_LEN])
{
    memset(k, 0, sizeof(*k));
    if (secret_file == NULL || secret_file[0] == '\0' || server_file == NULL ||
        server_file[0] == '\0') {
        snprintf(err, CN_ERR_LEN, "auth = curve needs a secret key file and the nodes' "
                 "public key file");
        return CN_INVAL;
    }
    int rc = cn_curve_key_load(secret_file, 1, &k->secret_key, err);
    if (rc == CN_OK)
        rc = cn_curve_key_load(server_file, 0, &k->server, err);
    if (rc == CN_OK)
        rc = msg_curve_public(&k->secret_key, &k->public_key, err);
    if (rc != CN_OK) {
        memset(k, 0, sizeof(*k));
        return rc;
    }
    k->enabled = 1;
    return CN_OK;
}

int msg_curve_client_from_env(struct msg_curve_client *k, const char *auth,
                              const char *secret_file, const char *server_file,
                              char err[CN_ERR_LEN])
{
    memset(k, 0, sizeof(*k));
    if (auth == NULL)
        auth = getenv("CAIRN_STORAGE_AUTH");
    if (secret_file == NULL)
        secret_file = getenv("CAIRN_STORAGE_CURVE_SECRET_KEY_FILE");
    if (server_file == NULL)
        server_file = getenv("CAIRN_STORAGE_CURVE_SERVER_KEY_FILE");
    if (auth == NULL || auth[0] == '\0' || strcmp(auth, "none") == 0)
        return CN_OK;
    if (strcmp(auth, "curve") != 0) {
        snprintf(err, CN_ERR_LEN, "storage auth '%s' is not one of none|curve", auth);
        return CN_INVAL;
    }
    return msg_curve_client_load(k, secret_file, server_file, err);
}

int msg_curve_client_apply(const struct msg_curve_client *k, void *sock, char err[CN_ERR_LEN])
{
    if (k == NULL || !k->enabled)
        return CN_OK;
    /* the 41-byte form is Z85 text with its NUL */
    if (zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, k->server.z85, sizeof(k->server.z85)) != 0 ||
        zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, k->public_key.z85,
                       sizeof(k->public_key.z85)) != 0 ||
        zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, k->secret_key.z85,
                       sizeof(k->secret_key.z85)) != 0) {
        snprintf(err, CN_ERR_LEN, "CURVE client keys: %s", zmq_strerror(zmq_errno()));
        return CN_ERR;
    }
    return CN_OK;
}

int msg_curve_server_apply(void *sock, const struct cn_curve_key *secret, const char *domain,
                           char err[CN_ERR_LEN])
{
    int one = 1;
    if (zmq_setsockopt(sock, ZMQ_CURVE_SERVER, &one, sizeof(one)) != 0 ||
        zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, secret->z85, sizeof(secret->z85)) != 0 ||
        zmq_setsockopt(sock, ZMQ_ZAP_DOMAIN, domain, strlen(domain)) != 0) {
        snprintf(err, CN_ERR_LEN, "CURVE server: %s", zmq_strerror(zmq_errno()));
        return CN_ERR;
    }
    return CN_OK;
}
