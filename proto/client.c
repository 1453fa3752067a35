/* Blocking protocol client: a DEALER socket, msg_encode() for headers and
 * msg_decode() for replies, which point into the received frames. */
#include "msg/client.h"

#include <errno.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/time.h"

struct msg_client {
    void *zctx;
    int own_ctx;
    void *sock;
    struct msg_limits lim;
};

struct msg_client *msg_client_new(void *zctx, const char *endpoint, char err[CN_ERR_LEN])
{
    return msg_client_new_curve(zctx, endpoint, NULL, err);
}

struct msg_client *msg_client_new_curve(void *zctx, const char *endpoint,
                                        const struct msg_curve_client *keys,
                                        char err[CN_ERR_LEN])
{
    struct msg_client *c = cn_calloc(1, sizeof(*c));
    int linger = 0, hwm = 0;
    msg_limits_default(&c->lim);
    c->lim.max_header_len = 64u << 20;
    c->lim.max_payload_len = 1ull << 30;
    c->lim.max_list = 100000;
    c->zctx = zctx;
    if (c->zctx == NULL) {
        c->zctx = zmq_ctx_new();
        c->own_ctx = 1;
    }
    c->sock = c->zctx ? zmq_socket(c->zctx, ZMQ_DEALER) : NULL;
    if (c->sock == NULL)
        goto fail;
    zmq_setsockopt(c->sock, ZMQ_LINGER, &linger, sizeof(linger));
    zmq_setsockopt(c->sock, ZMQ_SNDHWM, &hwm, sizeof(hwm));
    zmq_setsockopt(c->sock, ZMQ_RCVHWM, &hwm, sizeof(hwm));
    if (msg_curve_client_apply(keys, c->sock, err) != CN_OK) {
        msg_client_free(c);
        return NULL;
    }
    if (zmq_connect(c->sock, endpoint) != 0)
        goto fail;
    return c;
fail:
    snprintf(err, CN_ERR_LEN, "%s: %s", endpoint, zmq_strerror(zmq_errno()));
    msg_client_free(c);
    return NULL;
}

void msg_client_free(struct msg_client *c)
{
    if (c == NULL)
        return;
    if (c->sock != NULL)
        zmq_close(c->sock);
    if (c->own_ctx && c->zctx != NULL)
        zmq_ctx_term(c->zctx);
    cn_free(c);
}

void msg_client_set_limits(struct msg_client *c, const struct msg_limits *lim)
{
    c->lim = *lim;
}

static void msg_client_free_sbuf(void *data, void *hint)
{
    (void)hint;
    free(data); /* msgpack_sbuffer allocates with malloc */
}

int msg_client_send(struct msg_client *c, const struct msg *m,
                    void (*zero_copy_free)(void *data, void *hint), void *hint,
                    char err[CN_ERR_LEN])
{
    msgpack_sbuffer sb;
    zmq_msg_t hdr, pl;
    msgpack_sbuffer_init(&sb);
    if (msg_encode(m, 0, &sb, err) != CN_OK) {
        msgpack_sbuffer_destroy(&sb);
        return CN_ERR;
    }
    int more = msg_has_payload(m->op, 0);
    zmq_msg_init_data(&hdr, sb.data, sb.size, msg_client_free_sbuf, NULL);
    if (zmq_msg_send(&hdr, c->sock, more ? ZMQ_SNDMORE : 0) < 0) {
        zmq_msg_close(&hdr);
        snprintf(err, CN_ERR_LEN, "send: %s", zmq_strerror(zmq_errno()));
        return CN_ERR;
    }
    if (!more)
        return CN_OK;
    if (zero_copy_free != NULL)
        zmq_msg_init_data(&pl, (void *)m->payload.ptr, m->payload.len, zero_copy_free, hint);
    else {
        zmq_msg_init_size(&pl, m->payload.len);
        if (m->payload.len > 0)
            memcpy(zmq_msg_data(&pl), m->payload.ptr, m->payload.len);
    }
    if (zmq_msg_send(&pl, c->sock, 0) < 0) {
        zmq_msg_close(&pl);
        snprintf(err, CN_ERR_LEN, "send: %s", zmq_strerror(zmq_errno()));
        return CN_ERR;
    }
    return CN_OK;
}

/* Drops the remaining frames of a message whose start was already read. */
static void msg_client_drain(struct msg_client *c)
{
    int more = 1;
    size_t len = sizeof(more);
    zmq_getsockopt(c->sock, ZMQ_RCVMORE, &more, &len);
    while (more) {
        zmq_msg_t f;
        zmq_msg_init(&f);
        zmq_msg_recv(&f, c->sock, 0);
        more = zmq_msg_more(&f);
        zmq_msg_close(&f);
    }
}

int msg_client_recv(struct msg_client *c, struct msg_reply *r, int timeout_ms,
                    char err[CN_ERR_LEN])
{
    zmq_pollitem_t pi = {c->sock, 0, ZMQ_POLLIN, 0};
    memset(r, 0, sizeof(*r));
    int n = zmq_poll(&pi, 1, timeout_ms);
    if (n == 0) {
        snprintf(err, CN_ERR_LEN, "no reply within %d ms", timeout_ms);
        return CN_TIMEOUT;
    }
    if (n < 0) {
        snprintf(err, CN_ERR_LEN, "poll: %s", zmq_strerror(zmq_errno()));
        return CN_ERR;
    }
    zmq_msg_init(&r->hdr);
    zmq_msg_init(&r->payload);
    if (zmq_msg_recv(&r->hdr, c->sock, 0) < 0) {
        snprintf(err, CN_ERR_LEN, "recv: %s", zmq_strerror(zmq_errno()));
        goto fail;
    }
    if (zmq_msg_more(&r->hdr)) {
        zmq_msg_recv(&r->payload, c->sock, 0);
        r->has_payload = 1;
        if (zmq_msg_more(&r->payload)) {
            msg_client_drain(c);
            snprintf(err, CN_ERR_LEN, "reply has more than two frames");
            goto fail;
        }
    }
    if (msg_decode(&r->m, 1, zmq_msg_data(&r->hdr), zmq_msg_size(&r->hdr),
                   r->has_payload ? zmq_msg_data(&r->payload) : NULL,
                   r->has_payload ? zmq_msg_size(&r->payload) : 0, &c->lim, err) != CN_OK) {
        msg_release(&r->m);
        goto fail;
    }
    r->live_ = 1;
    return CN_OK;
fail:
    zmq_msg_close(&r->hdr);
    zmq_msg_close(&r->payload);
    memset(r, 0, sizeof(*r));
    return CN_INVAL;
}

void msg_reply_release(struct msg_reply *r)
{
    if (!r->live_)
        return;
    msg_release(&r->m);
    zmq_msg_close(&r->hdr);
    zmq_msg_close(&r->payload);
    r->live_ = 0;
}

int msg_client_call(struct msg_client *c, const struct msg *m, struct msg_reply *r,
                    int timeout_ms, char err[CN_ERR_LEN])
{
    if (msg_client_send(c, m, NULL, NULL, err) != CN_OK)
        return CN_ERR;
    uint64_t deadline = cn_time_mono_us() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms) * 1000u;
    for (;;) {
        int left = -1;
        if (timeout_ms >= 0) {
            uint64_t now = cn_time_mono_us();
            left = now >= deadline ? 0 : (int)((deadline - now) / 1000u);
        }
        int rc = msg_client_recv(c, r, left, err);
        if (rc != CN_OK || r->m.id == m->id)
            return rc;
        msg_reply_release(r); /* a late reply to an earlier, abandoned call */
    }
}
