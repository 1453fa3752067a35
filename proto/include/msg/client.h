/* A blocking protocol client over one ZeroMQ DEALER socket, for tools and
 * benchmarks (cairn-admin, cairn-sn-bench) — the gateway has its own
 * event-driven client. Requests may be pipelined: send several, then receive
 * replies in whatever order the node answers. Not thread-safe: one client per
 * thread. */
#ifndef MSG_CLIENT_H
#define MSG_CLIENT_H

#include <zmq.h>

#include "msg/curve.h"
#include "msg/msg.h"

struct msg_client;

/* A received reply: `m` points into the frames it owns. Release with
 * msg_reply_release(). */
struct msg_reply {
    struct msg m;
    zmq_msg_t hdr;
    zmq_msg_t payload;
    int has_payload;
    int live_;
};

/* Connects to endpoint ("tcp://127.0.0.1:7001"). zctx may be NULL (the client
 * then owns a context). Returns NULL and fills err on failure. The caller
 * frees with msg_client_free(). */
struct msg_client *msg_client_new(void *zctx, const char *endpoint, char err[CN_ERR_LEN]);

/* msg_client_new() as a CURVE client with keys (NULL or not enabled: plain).
 * A node that refuses the keys never answers: calls time out. */
struct msg_client *msg_client_new_curve(void *zctx, const char *endpoint,
                                        const struct msg_curve_client *keys,
                                        char err[CN_ERR_LEN]);
void msg_client_free(struct msg_client *c);

/* Raises the decoder's limits for replies (LIST pages, big slices). */
void msg_client_set_limits(struct msg_client *c, const struct msg_limits *lim);

/* Sends request m (and m->payload for PUT: copied by ZeroMQ unless
 * zero_copy_free is given, in which case the payload buffer is handed to
 * ZeroMQ and zero_copy_free(ptr, hint) is called when it is sent). The
 * request id is the caller's. Returns CN_OK or CN_ERR with err filled. */
int msg_client_send(struct msg_client *c, const struct msg *m,
                    void (*zero_copy_free)(void *data, void *hint), void *hint,
                    char err[CN_ERR_LEN]);

/* Waits up to timeout_ms (-1: forever) for the next reply, decodes it into r.
 * Returns CN_OK, CN_TIMEOUT, or CN_INVAL/CN_ERR for a frame that did not
 * decode (err says why; r needs no release then). */
int msg_client_recv(struct msg_client *c, struct msg_reply *r, int timeout_ms,
                    char err[CN_ERR_LEN]);

void msg_reply_release(struct msg_reply *r);

/* Send one request and wait for its reply (skipping stale replies to other
 * ids). Returns as msg_client_recv(). */
int msg_client_call(struct msg_client *c, const struct msg *m, struct msg_reply *r,
                    int timeout_ms, char err[CN_ERR_LEN]);

#endif
