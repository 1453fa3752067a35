/* ZAP handler of the storage node: the allow-list of client keys and the
 * RFC 27 request/reply exchange with libzmq (see zap.h). */
#include "zap.h"

#include <stdio.h>
#include <string.h>
#include <zmq.h>

#include "cn/alloc.h"
#include "cn/curve_key.h"
#include "cn/log.h"

#define SN_ZAP_ENDPOINT "inproc://zeromq.zap.01"
#define SN_ZAP_FRAMES 7 /* version, request id, domain, address, identity,
                           mechanism, credentials (CURVE: one) */

struct sn_zap {
    void *sock;
    char *path;
    struct cn_curve_keyset *allowed;
};

int sn_zap_new(void *zctx, const char *allow_path, struct sn_zap **out, char err[CN_ERR_LEN])
{
    struct sn_zap *z = cn_calloc(1, sizeof(*z));
    int zero = 0, rc;
    *out = NULL;
    z->path = cn_strdup(allow_path);
    if ((rc = cn_curve_keyset_load(allow_path, &z->allowed, err)) != CN_OK)
        goto fail;
    z->sock = zmq_socket(zctx, ZMQ_REP);
    if (z->sock == NULL || zmq_setsockopt(z->sock, ZMQ_LINGER, &zero, sizeof(zero)) != 0 ||
        zmq_bind(z->sock, SN_ZAP_ENDPOINT) != 0) {
        snprintf(err, CN_ERR_LEN, "ZAP handler %s: %s", SN_ZAP_ENDPOINT,
                 zmq_strerror(zmq_errno()));
        rc = CN_ERR;
        goto fail;
    }
    *out = z;
    return CN_OK;
fail:
    sn_zap_free(z);
    return rc;
}

void *sn_zap_socket(struct sn_zap *z)
{
    return z->sock;
}

static void sn_zap_send(void *sock, const void *p, size_t len, int more)
{
    zmq_send(sock, p, len, more ? ZMQ_SNDMORE : 0);
}

/* Reads one request's frames into f (at most SN_ZAP_FRAMES, the rest
 * dropped); returns how many, 0 when none was waiting. */
static int sn_zap_recv(struct sn_zap *z, zmq_msg_t f[SN_ZAP_FRAMES])
{
    int n = 0, more = 1;
    while (more) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, z->sock, n == 0 ? ZMQ_DONTWAIT : 0) < 0) {
            zmq_msg_close(&m);
            return n;
        }
        more = zmq_msg_more(&m);
        if (n < SN_ZAP_FRAMES) {
            zmq_msg_init(&f[n]);
            zmq_msg_move(&f[n++], &m);
        }
        zmq_msg_close(&m);
    }
    return n;
}

/* Decides one request: 200 with the key as User-Id when it is a CURVE
 * handshake by a listed key, else 400. */
static void sn_zap_answer(struct sn_zap *z, zmq_msg_t *f, int n)
{
    char key[CN_CURVE_KEY_LEN + 1] = "";
    int ok = n == SN_ZAP_FRAMES && zmq_msg_size(&f[5]) == 5 &&
             memcmp(zmq_msg_data(&f[5]), "CURVE", 5) == 0 && zmq_msg_size(&f[6]) == 32 &&
             zmq_z85_encode(key, zmq_msg_data(&f[6]), 32) != NULL &&
             cn_curve_keyset_has(z->allowed, key, CN_CURVE_KEY_LEN);
    char addr[64] = "?";
    if (n > 3)
        snprintf(addr, sizeof(addr), "%.*s", (int)CN_MIN(zmq_msg_size(&f[3]), 63u),
                 (const char *)zmq_msg_data(&f[3]));
    if (ok)
        cn_debug("ZAP: client %s from %s accepted", key, addr);
    else
        cn_warn("ZAP: client %s from %s refused: %s", key[0] ? key : "(no CURVE key)", addr,
                key[0] ? "not on the allow-list" : "not a CURVE handshake");
    sn_zap_send(z->sock, "1.0", 3, 1);
    if (n > 1)
        sn_zap_send(z->sock, zmq_msg_data(&f[1]), zmq_msg_size(&f[1]), 1);
    else
        sn_zap_send(z->sock, "", 0, 1);
    sn_zap_send(z->sock, ok ? "200" : "400", 3, 1);
    const char *text = ok ? "OK" : "client key not allowed";
    sn_zap_send(z->sock, text, strlen(text), 1);
    sn_zap_send(z->sock, key, ok ? CN_CURVE_KEY_LEN : 0, 1);
    sn_zap_send(z->sock, "", 0, 0);
}

void sn_zap_serve(struct sn_zap *z)
{
    for (int k = 0; k < 64; k++) {
        zmq_msg_t f[SN_ZAP_FRAMES];
        int n = sn_zap_recv(z, f);
        if (n == 0)
            return;
        sn_zap_answer(z, f, n);
        for (int i = 0; i < n; i++)
            zmq_msg_close(&f[i]);
    }
}

int sn_zap_reload(struct sn_zap *z, char err[CN_ERR_LEN])
{
    struct cn_curve_keyset *s = NULL;
    int rc = cn_curve_keyset_load(z->path, &s, err);
    if (rc != CN_OK)
        return rc;
    cn_curve_keyset_free(z->allowed);
    z->allowed = s;
    return CN_OK;
}

size_t sn_zap_allowed_count(const struct sn_zap *z)
{
    return cn_curve_keyset_count(z->allowed);
}

int sn_zap_allowed(const struct sn_zap *z, const char *user_id)
{
    return user_id != NULL && cn_curve_keyset_has(z->allowed, user_id, strlen(user_id));
}

void sn_zap_free(struct sn_zap *z)
{
    if (z == NULL)
        return;
    if (z->sock != NULL)
        zmq_close(z->sock);
    cn_curve_keyset_free(z->allowed);
    cn_free(z->path);
    cn_free(z);
}
