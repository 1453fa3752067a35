/* ZeroMQ DEALER transport to the storage nodes, integrated into libevent.
 * ZMQ_FD is edge-triggered: it signals when ZMQ_EVENTS may have changed, so
 * after every wakeup we receive until EAGAIN (which re-arms it), and after
 * every send we schedule a drain (a send can consume the edge of a reply that
 * had already arrived). Callbacks never run from inside send(). */
#include "storage_client.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/log.h"
#include "cn/time.h"

#include "cluster_metrics.h"
#include "node_health.h"

#define GW_SC_BUCKETS 4096u /* pending-request hash buckets (power of two) */

struct gw_sc_pending {
    uint64_t id;
    uint32_t node;
    gw_storage_reply_cb cb;
    void *arg;
    struct event *timer;
    struct gw_storage_client *client;
    struct gw_sc_pending *next;
    int send_failed;   /* the timer reports a send failure, not a timeout */
    uint64_t sent_us;  /* monotonic: the request's latency (cluster_metrics.h) */
    char why[128];
};

struct gw_sc_node {
    void *sock;
    struct event *ev;
    struct gw_storage_client *client;
    uint32_t index;
    struct event *probe;  /* armed while this client probes the node */
    int probe_owned;      /* this client holds the node's probe claim */
    uint64_t last_reply_us;   /* monotonic time of its last reply to this client */
    /* the newest protocol version the node speaks, from the `vmax` of its
     * last reply (a reply without one: 2); 0 until it first answered. A
     * node below 3 gets `osize` folded into the etag (msg_osize_downgrade).
     * With shared node states, theirs (learnt by any thread) is used. */
    uint32_t vmax;
};

struct gw_storage_client {
    struct event_base *base;
    struct gw_sc_node *nodes;       /* GW_STORAGE_CLIENT_MAX_NODES: never moved (events point in) */
    uint32_t n_nodes;
    void *zmq_ctx;                           /* for nodes added later */
    const struct msg_curve_client *curve;    /* the caller's; NULL: plain */
    struct timeval timeout;
    uint64_t next_id;
    struct gw_sc_pending *buckets[GW_SC_BUCKETS];
    struct msg_limits lim;
    struct gw_node_health *health; /* shared; NULL: no down marking */
    int64_t probe_interval_ms;
    int64_t probe_timeout_ms;
    struct event *watch;   /* gw_storage_client_watch(): pings idle up nodes */
};

static void gw_storage_client_node_failed(struct gw_storage_client *c, uint32_t node, int rc,
                                          const char *why);

static struct gw_sc_pending **gw_storage_client_slot(struct gw_storage_client *c, uint64_t id)
{
    struct gw_sc_pending **pp = &c->buckets[id & (GW_SC_BUCKETS - 1)];
    while (*pp != NULL && (*pp)->id != id)
        pp = &(*pp)->next;
    return pp;
}

/* Unlinks and returns the pending request id, or NULL. */
static struct gw_sc_pending *gw_storage_client_take(struct gw_storage_client *c, uint64_t id)
{
    struct gw_sc_pending **pp = gw_storage_client_slot(c, id);
    struct gw_sc_pending *p = *pp;
    if (p != NULL)
        *pp = p->next;
    return p;
}

static void gw_storage_client_pending_free(struct gw_sc_pending *p)
{
    event_free(p->timer);
    cn_free(p);
}

/* Runs the callback of a request that failed without a reply. */
static void gw_storage_client_fail(struct gw_sc_pending *p, int rc, const char *why)
{
    struct gw_storage_reply r;
    memset(&r, 0, sizeof(r));
    r.rc = rc;
    r.node = p->node;
    snprintf(r.err, sizeof(r.err), "%s", why);
    gw_storage_reply_cb cb = p->cb;
    void *arg = p->arg;
    gw_storage_client_pending_free(p);
    cb(&r, arg);
}

static void gw_storage_client_on_timeout(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_sc_pending *p = arg;
    struct gw_storage_client *c = p->client;
    CN_ASSERT(gw_storage_client_take(c, p->id) == p);
    int rc = p->send_failed ? CN_IO : CN_TIMEOUT;
    char why[CN_ERR_LEN];
    snprintf(why, sizeof(why), "%s",
             p->send_failed ? p->why : "storage node did not answer in time");
    if (!p->send_failed)
        CN_LOG(CN_LOG_DEBUG, "storage request %llu to node %u timed out",
               (unsigned long long)p->id, p->node);
    gw_cluster_metrics_node_failed(p->node, !p->send_failed);
    gw_storage_client_node_failed(c, p->node, rc, why);
    gw_storage_client_fail(p, rc, why);
}

/* Handles one received message (frames[0] header, frames[1] payload). */
static void gw_storage_client_dispatch(struct gw_sc_node *n, struct gw_storage_reply *r)
{
    struct gw_storage_client *c = n->client;
    const void *pl = r->n_frames_ > 1 ? zmq_msg_data(&r->frames_[1]) : NULL;
    size_t pl_len = r->n_frames_ > 1 ? zmq_msg_size(&r->frames_[1]) : 0;
    int rc = msg_decode(&r->m, 1, zmq_msg_data(&r->frames_[0]), zmq_msg_size(&r->frames_[0]),
                        pl, pl_len, &c->lim, r->err);
    if (!MSG_HAS(&r->m, MSG_F_ID)) {
        CN_LOG(CN_LOG_WARN, "node %u: reply without id dropped: %s", n->index, r->err);
        return;
    }
    n->last_reply_us = cn_time_mono_us();
    n->vmax = MSG_HAS(&r->m, MSG_F_VMAX) ? r->m.vmax : 2;
    if (c->health != NULL)   /* every thread learns it from any thread's reply */
        gw_node_health_set_vmax(c->health, n->index, n->vmax);
    struct gw_sc_pending *p = gw_storage_client_take(c, r->m.id);
    if (p == NULL) {
        CN_LOG(CN_LOG_DEBUG, "node %u: late reply %llu dropped", n->index,
               (unsigned long long)r->m.id);
        return;
    }
    r->rc = rc == CN_OK ? CN_OK : CN_INVAL;
    r->node = n->index;
    gw_cluster_metrics_node_reply(n->index, n->last_reply_us - p->sent_us);
    if (rc != CN_OK)
        CN_LOG(CN_LOG_WARN, "node %u: bad reply to %llu: %s", n->index,
               (unsigned long long)r->m.id, r->err);
    gw_storage_reply_cb cb = p->cb;
    void *arg = p->arg;
    gw_storage_client_pending_free(p);
    cb(r, arg);
}

/* Receives one multipart message; returns 0 when none was waiting (or the
 * socket cannot receive at all). */
static int gw_storage_client_recv_one(struct gw_sc_node *n)
{
    struct gw_storage_reply r;
    memset(&r.m, 0, sizeof(r.m));
    r.n_frames_ = 0;
    r.err[0] = '\0';
    int more = 1, extra = 0;
    while (more) {
        zmq_msg_t tmp, *f = r.n_frames_ < 2 ? &r.frames_[r.n_frames_] : &tmp;
        zmq_msg_init(f);
        if (zmq_msg_recv(f, n->sock, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(f);
            if (r.n_frames_ == 0)
                return 0;   /* EAGAIN: nothing waiting (or the context is ending) */
            break;
        }
        more = zmq_msg_more(f);
        if (f == &tmp) {
            zmq_msg_close(f);
            extra++;
        } else {
            r.n_frames_++;
        }
    }
    if (extra == 0 && r.n_frames_ > 0)
        gw_storage_client_dispatch(n, &r);
    else
        CN_LOG(CN_LOG_WARN, "node %u: malformed reply (%d frames) dropped", n->index,
               r.n_frames_ + extra);
    msg_release(&r.m);
    for (int i = 0; i < r.n_frames_; i++)
        zmq_msg_close(&r.frames_[i]);
    return 1;
}

/* ZMQ_FD wakeup (or a drain scheduled after a send): read until EAGAIN.
 * A non-blocking zmq_msg_recv that finds nothing processes the socket's
 * pending commands before it says EAGAIN (libzmq: socket_base_t::recv), as
 * a ZMQ_EVENTS query does, so the edge is re-armed exactly as with the
 * documented "check ZMQ_EVENTS" loop, with one command check per wakeup
 * instead of one per message plus one (each costs a getpid and a poll on
 * the mailbox's eventfd). A cap keeps one busy node from starving the
 * loop; a capped drain reschedules itself. */
static void gw_storage_client_on_readable(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_sc_node *n = arg;
    for (int i = 0; i < 256; i++)
        if (!gw_storage_client_recv_one(n))
            return;
    event_active(n->ev, EV_READ, 0);
}

static int gw_storage_client_node_open(struct gw_storage_client *c, void *zmq_ctx,
                                       uint32_t i, const char *endpoint,
                                       const struct msg_curve_client *curve,
                                       char err[CN_ERR_LEN])
{
    struct gw_sc_node *n = &c->nodes[i];
    n->client = c;
    n->index = i;
    n->sock = zmq_socket(zmq_ctx, ZMQ_DEALER);
    if (n->sock == NULL) {
        snprintf(err, CN_ERR_LEN, "zmq_socket: %s", zmq_strerror(errno));
        return CN_ERR;
    }
    int zero = 0, one = 1, hwm = 100000, hb_ivl = 1000, hb_timeout = 3000;
    zmq_setsockopt(n->sock, ZMQ_LINGER, &zero, sizeof(zero));
    /* queue only to a live connection: a send to a dead node fails at once
     * (EAGAIN) instead of waiting in a pipe for the request timeout */
    zmq_setsockopt(n->sock, ZMQ_IMMEDIATE, &one, sizeof(one));
    /* ZMTP heartbeats drop a connection whose peer vanished without a FIN
     * (cut link, powered-off host), so IMMEDIATE takes effect there too */
    zmq_setsockopt(n->sock, ZMQ_HEARTBEAT_IVL, &hb_ivl, sizeof(hb_ivl));
    zmq_setsockopt(n->sock, ZMQ_HEARTBEAT_TIMEOUT, &hb_timeout, sizeof(hb_timeout));
    zmq_setsockopt(n->sock, ZMQ_SNDHWM, &hwm, sizeof(hwm));
    zmq_setsockopt(n->sock, ZMQ_RCVHWM, &hwm, sizeof(hwm));
    if (msg_curve_client_apply(curve, n->sock, err) != CN_OK)
        return CN_ERR;
    if (zmq_connect(n->sock, endpoint) != 0) {
        snprintf(err, CN_ERR_LEN, "connect %s: %s", endpoint, zmq_strerror(errno));
        return CN_ERR;
    }
    int fd;
    size_t len = sizeof(fd);
    if (zmq_getsockopt(n->sock, ZMQ_FD, &fd, &len) != 0) {
        snprintf(err, CN_ERR_LEN, "ZMQ_FD: %s", zmq_strerror(errno));
        return CN_ERR;
    }
    n->ev = event_new(c->base, fd, EV_READ | EV_PERSIST, gw_storage_client_on_readable, n);
    event_add(n->ev, NULL);
    return CN_OK;
}

struct gw_storage_client *gw_storage_client_new(struct event_base *base, void *zmq_ctx,
                                                char *const *endpoints, uint32_t n_nodes,
                                                const struct msg_curve_client *curve,
                                                int64_t timeout_ms, char err[CN_ERR_LEN])
{
    struct gw_storage_client *c = cn_calloc(1, sizeof(*c));
    c->base = base;
    CN_ASSERT(n_nodes <= GW_STORAGE_CLIENT_MAX_NODES);
    c->n_nodes = n_nodes;
    c->nodes = cn_calloc(GW_STORAGE_CLIENT_MAX_NODES, sizeof(*c->nodes));
    c->zmq_ctx = zmq_ctx;
    c->curve = curve;
    c->timeout.tv_sec = timeout_ms / 1000;
    c->timeout.tv_usec = (timeout_ms % 1000) * 1000;
    c->next_id = 1;
    msg_limits_default(&c->lim);
    for (uint32_t i = 0; i < n_nodes; i++) {
        if (gw_storage_client_node_open(c, zmq_ctx, i, endpoints[i], curve, err) != CN_OK) {
            gw_storage_client_free(c);
            return NULL;
        }
    }
    return c;
}

void gw_storage_client_free(struct gw_storage_client *c)
{
    if (c == NULL)
        return;
    /* a failed request's callback may send another (a read trying the next
     * replica), possibly into a bucket already emptied: sweep until none is
     * left */
    for (int again = 1; again;) {
        again = 0;
        for (uint32_t b = 0; b < GW_SC_BUCKETS; b++) {
            while (c->buckets[b] != NULL) {
                struct gw_sc_pending *p = c->buckets[b];
                c->buckets[b] = p->next;
                gw_storage_client_fail(p, CN_IO, "gateway shutting down");
                again = 1;
            }
        }
    }
    if (c->watch != NULL)
        event_free(c->watch);
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        if (c->nodes[i].probe != NULL)
            event_free(c->nodes[i].probe);
        if (c->nodes[i].probe_owned)
            gw_node_health_release_probe(c->health, i);
        if (c->nodes[i].ev != NULL)
            event_free(c->nodes[i].ev);
        if (c->nodes[i].sock != NULL)
            zmq_close(c->nodes[i].sock);
    }
    cn_free(c->nodes);
    cn_free(c);
}

static void gw_storage_client_probe_fire(evutil_socket_t fd, short what, void *arg);

int gw_storage_client_add_node(struct gw_storage_client *c, const char *endpoint,
                               char err[CN_ERR_LEN])
{
    if (c->n_nodes == GW_STORAGE_CLIENT_MAX_NODES) {
        snprintf(err, CN_ERR_LEN, "more than %d nodes", GW_STORAGE_CLIENT_MAX_NODES);
        return CN_ERR;
    }
    uint32_t i = c->n_nodes;
    if (gw_storage_client_node_open(c, c->zmq_ctx, i, endpoint, c->curve, err) != CN_OK) {
        struct gw_sc_node *n = &c->nodes[i];
        if (n->ev != NULL)
            event_free(n->ev);
        if (n->sock != NULL)
            zmq_close(n->sock);
        memset(n, 0, sizeof(*n));
        return CN_ERR;
    }
    if (c->health != NULL)
        c->nodes[i].probe = evtimer_new(c->base, gw_storage_client_probe_fire, &c->nodes[i]);
    c->n_nodes++;
    return CN_OK;
}

uint32_t gw_storage_client_nodes(const struct gw_storage_client *c)
{
    return c->n_nodes;
}

uint32_t gw_storage_client_await_connect(struct gw_storage_client *c, uint64_t deadline_us)
{
    zmq_pollitem_t items[GW_STORAGE_CLIENT_MAX_NODES];
    for (;;) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < c->n_nodes; i++) {
            int events = 0;
            size_t len = sizeof(events);
            if (zmq_getsockopt(c->nodes[i].sock, ZMQ_EVENTS, &events, &len) == 0 &&
                (events & ZMQ_POLLOUT))
                continue;   /* a pipe to a connected peer exists */
            items[n].socket = c->nodes[i].sock;
            items[n].fd = 0;
            items[n].events = ZMQ_POLLOUT;
            items[n].revents = 0;
            n++;
        }
        uint64_t now = cn_time_mono_us();
        if (n == 0 || now >= deadline_us)
            return n;
        long ms = (long)((deadline_us - now + 999) / 1000);
        if (zmq_poll(items, (int)n, CN_MIN(ms, 10L)) < 0 && errno != EINTR)
            return n;
    }
}

/* zmq free function for payloads without an owner. */
static void gw_storage_client_no_free(void *data, void *hint)
{
    (void)data;
    (void)hint;
}

/* Encodes and sends the frames; returns CN_OK or CN_IO/CN_INVAL with err.
 * The request goes out in the form the node reads: to a node of version 3
 * (as its last reply said) reads ask for the version-3 reply form (`osize`
 * as a field); to any other node (older, or not heard from yet) a PUT with
 * `osize` is folded into the version-2 form, which every node stores and
 * every reader reads (docs/large-objects.md). */
static int gw_storage_client_send_frames(struct gw_sc_node *n, const struct msg *req_in,
                                         const struct gw_storage_payload *payload,
                                         char err[CN_ERR_LEN])
{
    struct msg req_copy = *req_in, *req = &req_copy;   /* the caller's may go to other nodes */
    uint8_t folded[MSG_ETAG_FOLD_MAX];
    const struct gw_node_health *h = n->client->health;
    uint32_t vmax = h != NULL ? gw_node_health_vmax(h, n->index) : n->vmax;
    if (vmax >= 3) {
        if (req->op == MSG_OP_GET || req->op == MSG_OP_HEAD || req->op == MSG_OP_LIST)
            req->v = 3;
    } else {
        msg_osize_downgrade(req, folded);
    }
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    int rc = msg_encode(req, 0, &sb, err);
    if (rc == CN_OK) {
        int flags = ZMQ_DONTWAIT | (payload != NULL ? ZMQ_SNDMORE : 0);
        if (zmq_send(n->sock, sb.data, sb.size, flags) < 0) {
            snprintf(err, CN_ERR_LEN, "send to node %u: %s", n->index, zmq_strerror(errno));
            rc = CN_IO;
        }
    }
    msgpack_sbuffer_destroy(&sb);
    if (rc != CN_OK || payload == NULL) {
        if (payload != NULL && payload->free_fn != NULL)
            payload->free_fn((void *)payload->data, payload->hint);
        return rc;
    }
    zmq_msg_t m;
    zmq_msg_init_data(&m, (void *)payload->data, payload->len,
                      payload->free_fn != NULL ? payload->free_fn : gw_storage_client_no_free,
                      payload->hint);
    if (zmq_msg_send(&m, n->sock, ZMQ_DONTWAIT) < 0) {
        /* a DEALER accepts all parts once it took the first */
        snprintf(err, CN_ERR_LEN, "send payload to node %u: %s", n->index, zmq_strerror(errno));
        zmq_msg_close(&m);
        return CN_IO;
    }
    return CN_OK;
}

uint64_t gw_storage_client_send(struct gw_storage_client *c, uint32_t node, struct msg *req,
                                const struct gw_storage_payload *payload,
                                gw_storage_reply_cb cb, void *arg)
{
    int64_t ms = (int64_t)c->timeout.tv_sec * 1000 + c->timeout.tv_usec / 1000;
    return gw_storage_client_send_timeout(c, node, req, payload, ms, cb, arg);
}

uint64_t gw_storage_client_send_timeout(struct gw_storage_client *c, uint32_t node,
                                        struct msg *req,
                                        const struct gw_storage_payload *payload,
                                        int64_t timeout_ms, gw_storage_reply_cb cb, void *arg)
{
    CN_ASSERT(node < c->n_nodes);
    struct gw_sc_pending *p = cn_calloc(1, sizeof(*p));
    p->id = c->next_id++;
    p->node = node;
    p->cb = cb;
    p->arg = arg;
    p->client = c;
    p->sent_us = cn_time_mono_us();
    p->timer = evtimer_new(c->base, gw_storage_client_on_timeout, p);
    req->id = p->id;
    MSG_SET(req, MSG_F_V);
    MSG_SET(req, MSG_F_ID);
    struct gw_sc_node *n = &c->nodes[node];
    char err[CN_ERR_LEN];
    struct gw_sc_pending **slot = gw_storage_client_slot(c, p->id);
    p->next = NULL;
    *slot = p;
    if (gw_storage_client_send_frames(n, req, payload, err) != CN_OK) {
        CN_LOG(CN_LOG_DEBUG, "%s", err);
        /* fail from the loop, not from inside send: a zero timeout */
        p->send_failed = 1;
        snprintf(p->why, sizeof(p->why), "%s", err);
        struct timeval now = {0, 0};
        evtimer_add(p->timer, &now);
    } else {
        struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
        evtimer_add(p->timer, &tv);
    }
    event_active(n->ev, EV_READ, 0); /* the send may have eaten a ZMQ_FD edge */
    return p->id;
}

void gw_storage_client_cancel(struct gw_storage_client *c, uint64_t id)
{
    struct gw_sc_pending *p = gw_storage_client_take(c, id);
    if (p != NULL)
        gw_storage_client_pending_free(p);
}

static void gw_storage_client_frame_cleanup(const void *data, size_t len, void *arg)
{
    (void)data;
    (void)len;
    zmq_msg_t *m = arg;
    zmq_msg_close(m);
    cn_free(m);
}

int gw_storage_reply_move_payload(struct gw_storage_reply *r, struct evbuffer *dst)
{
    if (r->n_frames_ < 2)
        return CN_OK;
    zmq_msg_t *f = &r->frames_[1];
    size_t len = zmq_msg_size(f);
    if (len < 4096)
        return evbuffer_add(dst, zmq_msg_data(f), len) == 0 ? CN_OK : CN_ERR;
    zmq_msg_t *held = cn_malloc(sizeof(*held));
    zmq_msg_init(held);
    zmq_msg_move(held, f); /* large frames keep their data pointer */
    r->m.payload.ptr = NULL;
    r->m.payload.len = 0;
    if (evbuffer_add_reference(dst, zmq_msg_data(held), len, gw_storage_client_frame_cleanup,
                               held) != 0) {
        gw_storage_client_frame_cleanup(NULL, 0, held);
        return CN_ERR;
    }
    return CN_OK;
}

struct gw_storage_reply *gw_storage_reply_keep(const struct gw_storage_client *c,
                                               struct gw_storage_reply *r)
{
    struct gw_storage_reply *k = cn_calloc(1, sizeof(*k));
    k->rc = r->rc;
    k->node = r->node;
    memcpy(k->err, r->err, sizeof(k->err));
    for (int i = 0; i < r->n_frames_; i++) {
        zmq_msg_init(&k->frames_[i]);
        zmq_msg_move(&k->frames_[i], &r->frames_[i]);
    }
    k->n_frames_ = r->n_frames_;
    /* the decoded fields may point into small frames whose bytes lived
     * inside the zmq_msg_t itself: decode again from the moved frames */
    msg_release(&r->m);
    memset(&r->m, 0, sizeof(r->m));
    if (k->rc == CN_OK && k->n_frames_ > 0) {
        const void *pl = k->n_frames_ > 1 ? zmq_msg_data(&k->frames_[1]) : NULL;
        size_t pl_len = k->n_frames_ > 1 ? zmq_msg_size(&k->frames_[1]) : 0;
        char err[CN_ERR_LEN];
        int rc = msg_decode(&k->m, 1, zmq_msg_data(&k->frames_[0]),
                            zmq_msg_size(&k->frames_[0]), pl, pl_len, &c->lim, err);
        CN_ASSERT(rc == CN_OK); /* the same bytes decoded a moment ago */
    }
    return k;
}

void gw_storage_reply_free(struct gw_storage_reply *k)
{
    if (k == NULL)
        return;
    msg_release(&k->m);
    for (int i = 0; i < k->n_frames_; i++)
        zmq_msg_close(&k->frames_[i]);
    cn_free(k);
}

/* ---- health: down marking and probes ---------------------------------- */

static void gw_storage_client_probe_arm(struct gw_sc_node *n, int64_t ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(n->probe, &tv);
}

/* PING answered (or not): an OK reply brings the node back up. */
static void gw_storage_client_on_probe(struct gw_storage_reply *r, void *arg)
{
    struct gw_sc_node *n = arg;
    struct gw_storage_client *c = n->client;
    if (r->rc == CN_OK && r->m.st == MSG_ST_OK) {
        if (gw_node_health_mark_up(c->health, n->index))
            CN_LOG(CN_LOG_WARN, "storage node %u is up again", n->index);
        n->probe_owned = 0;
        gw_node_health_release_probe(c->health, n->index);
        return;
    }
    gw_storage_client_probe_arm(n, c->probe_interval_ms);
}

static void gw_storage_client_probe_fire(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_sc_node *n = arg;
    struct gw_storage_client *c = n->client;
    struct msg m;
    msg_init_request(&m, MSG_OP_PING, 0);
    gw_storage_client_send_timeout(c, n->index, &m, NULL, c->probe_timeout_ms,
                                   gw_storage_client_on_probe, n);
}

/* A request to node failed without a reply: mark it down and, if no other
 * thread does, start probing it. */
static void gw_storage_client_node_failed(struct gw_storage_client *c, uint32_t node, int rc,
                                          const char *why)
{
    if (c->health == NULL)
        return;
    struct gw_sc_node *n = &c->nodes[node];
    if (gw_node_health_mark_down(c->health, node))
        CN_LOG(CN_LOG_WARN, "storage node %u marked down (%s: %s); probing every %lld ms", node,
               cn_rc_str(rc), why, (long long)c->probe_interval_ms);
    if (!n->probe_owned && gw_node_health_claim_probe(c->health, node)) {
        n->probe_owned = 1;
        /* the first probe soon: a connection still being set up at start
         * fails sends for a few milliseconds */
        gw_storage_client_probe_arm(n, CN_MIN(c->probe_interval_ms, 100));
    }
}

void gw_storage_client_set_health(struct gw_storage_client *c, struct gw_node_health *health,
                                  int64_t probe_interval_ms, int64_t probe_timeout_ms)
{
    CN_ASSERT(gw_node_health_nodes(health) >= GW_STORAGE_CLIENT_MAX_NODES);
    c->health = health;
    c->probe_interval_ms = probe_interval_ms;
    c->probe_timeout_ms = probe_timeout_ms;
    for (uint32_t i = 0; i < c->n_nodes; i++)
        if (c->nodes[i].probe == NULL)
            c->nodes[i].probe = evtimer_new(c->base, gw_storage_client_probe_fire, &c->nodes[i]);
}

/* A watch PING answered: the reply itself refreshed last_reply_us, and a
 * timeout already marked the node down (gw_storage_client_on_timeout). */
static void gw_storage_client_on_watch_reply(struct gw_storage_reply *r, void *arg)
{
    (void)r;
    (void)arg;
}

/* Every probe interval: PING each up node that sent this client nothing for
 * that long, so that a stopped node is marked down without traffic. */
static void gw_storage_client_watch_fire(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_storage_client *c = arg;
    uint64_t now = cn_time_mono_us(), idle_us = (uint64_t)c->probe_interval_ms * 1000;
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        if (!gw_node_health_is_up(c->health, i) || now - c->nodes[i].last_reply_us < idle_us)
            continue;
        struct msg m;
        msg_init_request(&m, MSG_OP_PING, 0);
        gw_storage_client_send_timeout(c, i, &m, NULL, c->probe_timeout_ms,
                                       gw_storage_client_on_watch_reply, NULL);
    }
}

void gw_storage_client_watch(struct gw_storage_client *c)
{
    CN_ASSERT(c->health != NULL && c->watch == NULL);
    c->watch = event_new(c->base, -1, EV_PERSIST, gw_storage_client_watch_fire, c);
    int64_t ms = c->probe_interval_ms;
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(c->watch, &tv);
}

struct gw_node_health *gw_storage_client_health(const struct gw_storage_client *c)
{
    return c->health;
}

struct event_base *gw_storage_client_base(const struct gw_storage_client *c)
{
    return c->base;
}
