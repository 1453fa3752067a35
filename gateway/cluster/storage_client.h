/* The gateway's transport to the storage nodes: per event-loop thread, one
 * ZeroMQ DEALER per node, woken through ZMQ_FD in libevent. Requests carry
 * ids; replies (in any order) are matched to pending requests, each with its
 * own timeout. PUT payloads go out without a copy (zmq_msg_init_data) and
 * GET payloads reach the client without a copy (evbuffer_add_reference).
 * A request that gets no reply in time marks its node down in the shared
 * node states (node_health.h), and the client probes it until it is back.
 * Not thread-safe: each worker thread owns its client. */
#ifndef GW_STORAGE_CLIENT_H
#define GW_STORAGE_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <zmq.h>

#include "msg/curve.h"
#include "msg/msg.h"

struct gw_storage_client;

/* What a reply callback gets. rc is CN_OK when m is a decoded reply (its st
 * may still be an error), CN_TIMEOUT when no reply came in time, CN_INVAL
 * when the reply could not be decoded (err says why), CN_IO when sending
 * failed. m and its borrowed bytes are valid only during the callback. */
struct gw_storage_reply {
    int rc;
    uint32_t node;
    struct msg m;
    char err[CN_ERR_LEN];
    zmq_msg_t frames_[2];
    int n_frames_;
};

typedef void (*gw_storage_reply_cb)(struct gw_storage_reply *r, void *arg);

/* A payload to send: bytes that stay valid until free_fn(data, hint) is
 * called — possibly from a ZeroMQ I/O thread, so free_fn must be
 * thread-safe. free_fn NULL: the bytes are static or outlive the request. */
struct gw_storage_payload {
    const void *data;
    size_t len;
    zmq_free_fn *free_fn;
    void *hint;
};

/* The most nodes a client holds (cn/cluster.h's CN_CLUSTER_MAX_NODES). */
#define GW_STORAGE_CLIENT_MAX_NODES 256

/* Creates the client: connects a DEALER to each endpoint, a CURVE client of
 * curve when it is enabled (NULL: plain; curve must outlive the client:
 * nodes added later use it). Returns
 * NULL with err on failure. timeout_ms bounds every request. A node that
 * refuses the keys looks down: sends to it fail as to a dead node. */
struct gw_storage_client *gw_storage_client_new(struct event_base *base, void *zmq_ctx,
                                                char *const *endpoints, uint32_t n_nodes,
                                                const struct msg_curve_client *curve,
                                                int64_t timeout_ms, char err[CN_ERR_LEN]);

/* Fails every pending request with CN_IO (callbacks run), closes the
 * sockets, frees the client. */
void gw_storage_client_free(struct gw_storage_client *c);

uint32_t gw_storage_client_nodes(const struct gw_storage_client *c);

/* Waits (blocking, before c's loop runs) until each node's socket is
 * connected or the monotonic clock passes deadline_us. The sockets use
 * ZMQ_IMMEDIATE, so a request sent before a socket's first connection
 * (a CURVE handshake takes milliseconds) fails and marks a live node down:
 * the gateway's start-up waits here for its workers' clients, with one
 * deadline for all (they connect in parallel). Returns how many sockets
 * are still unconnected (a node down at start: marked down by its first
 * request, as any down node). */
uint32_t gw_storage_client_await_connect(struct gw_storage_client *c, uint64_t deadline_us);
/* Connects one more node (a cluster map named it): it gets the next index.
 * On the client's thread. CN_ERR with err (the client unchanged) when it
 * cannot be connected or the client is full. */
int gw_storage_client_add_node(struct gw_storage_client *c, const char *endpoint,
                               char err[CN_ERR_LEN]);

/* Sends req (v and id are set here; req->payload is ignored) to node, with
 * the payload frame when payload is not NULL (a zmq_msg references the bytes;
 * to send the same bytes to several nodes pass the same payload each time,
 * and free_fn runs once per send). cb(reply, arg) runs exactly once, later,
 * from the event loop — never from inside this call. Returns the request id
 * (never 0). */
uint64_t gw_storage_client_send(struct gw_storage_client *c, uint32_t node, struct msg *req,
                                const struct gw_storage_payload *payload,
                                gw_storage_reply_cb cb, void *arg);

/* gw_storage_client_send() with its own timeout instead of the client's. */
uint64_t gw_storage_client_send_timeout(struct gw_storage_client *c, uint32_t node,
                                        struct msg *req,
                                        const struct gw_storage_payload *payload,
                                        int64_t timeout_ms, gw_storage_reply_cb cb, void *arg);

struct gw_node_health;

/* Shares the process's node states with this client: from now on a request
 * that gets no reply in time, or cannot be sent (no connection), marks its
 * node down, and one client probes a down node with PING (timeout
 * probe_timeout_ms) every probe_interval_ms until it answers and is marked
 * up. health must outlive the client and hold GW_STORAGE_CLIENT_MAX_NODES
 * nodes (nodes added later are watched too). */
void gw_storage_client_set_health(struct gw_storage_client *c, struct gw_node_health *health,
                                  int64_t probe_interval_ms, int64_t probe_timeout_ms);

/* Makes c ping every up node that has not answered c for a probe interval
 * (after set_health; one client per process is enough: the node states are
 * shared). A PING without a reply in time marks the node down like any
 * request, so readiness (GET /_cairn/ready) sees a stopped node even when
 * no request goes to it. */
void gw_storage_client_watch(struct gw_storage_client *c);

/* The shared node states (NULL when none were set) and the client's loop. */
struct gw_node_health *gw_storage_client_health(const struct gw_storage_client *c);
struct event_base *gw_storage_client_base(const struct gw_storage_client *c);

/* Forgets a pending request: its callback will not run. No-op when the id is
 * unknown (already answered). */
void gw_storage_client_cancel(struct gw_storage_client *c, uint64_t id);

/* Moves the reply's payload frame to the end of dst without copying (small
 * payloads are copied); the frame is freed when dst drains it. r->m.payload
 * must not be used afterwards. Returns CN_OK or CN_ERR. */
int gw_storage_reply_move_payload(struct gw_storage_reply *r, struct evbuffer *dst);

/* Keeps a reply past its callback: returns a heap copy that owns r's frames
 * (r itself must not be used afterwards). Free with gw_storage_reply_free(). */
struct gw_storage_reply *gw_storage_reply_keep(const struct gw_storage_client *c,
                                               struct gw_storage_reply *r);
void gw_storage_reply_free(struct gw_storage_reply *k);

#endif
