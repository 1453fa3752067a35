/* Replicated records over the ring. Each operation is a gw_store_op that
 * lives until its last node reply (or timeout) arrives, even after its
 * callback ran: writes answer at W acks and collect the rest quietly. */
#include "store.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/crc.h"
#include "cn/hlc.h"
#include "cn/log.h"
#include "cn/time.h"
#include "cn/version.h"

#include "cluster_metrics.h"
#include "handoff.h"
#include "hint_replay.h"
#include "node_health.h"
#include "repair.h"

/* How long a digest read waits for its GET once R version answers are in
 * (gw_store_quorum_wait). */
#define GW_STORE_WAIT_MIN_US 2000u
#define GW_STORE_WAIT_MAX_US 50000u
/* ... and for a GET whose record is large: its bytes take time to come, at
 * GW_STORE_GET_BYTES_PER_US at least, up to GW_STORE_GET_WAIT_MAX_US */
#define GW_STORE_GET_BYTES_PER_US 64u
#define GW_STORE_GET_WAIT_MAX_US 250000u


struct gw_blob {
    atomic_int refs;
    struct evbuffer *buf;          /* gw_blob_from_evbuffer's, or NULL */
    void (*release)(void *data, void *arg); /* gw_blob_from_buffer's */
    void *release_arg;
    const void *data;
    size_t len;
    uint32_t crc;
};

struct gw_store {
    const struct cn_ring *ring;
    const struct cn_ring *fallback;  /* gw_store_view.fallback */
    const uint32_t *members;         /* NULL: every ring node */
    uint32_t n_members;
    struct gw_storage_client *client;
    uint32_t n;
    uint32_t w;
    uint32_t r;
    uint32_t d;
    struct gw_node_health *health;  /* from the client; NULL: all up */
    struct gw_handoff *handoff;
    struct gw_hint_replay *replayer; /* this thread replays the gateway's hints */
    uint32_t holds;       /* gw_store_hold: hint sends, replay steps in flight */
    uint32_t live_ops;    /* operations not yet freed */
    uint64_t read_us;     /* R > 1: moving average of the time R answers take, µs
                             (reads that did not widen) */
    int closing;          /* gw_store_free() ran; free with the last op */
    struct gw_store_stats stats;
};

enum gw_store_kind { GW_STORE_PUT, GW_STORE_DEL, GW_STORE_GET, GW_STORE_HEAD, GW_STORE_LIST,
                     GW_STORE_LOCK };

struct gw_store_op {
    struct gw_store *s;
    enum gw_store_kind kind;
    gw_store_cb cb;
    gw_store_list_cb list_cb;
    void *arg;
    int done;
    uint32_t replicas[GW_STORE_MAX_REPLICAS];
    uint32_t n_replicas;
    uint32_t next;        /* reads: the next replica to try */
    uint32_t outstanding;
    uint32_t quorum;      /* writes: W or D */
    uint32_t tok_nodes[GW_STORE_MAX_REPLICAS]; /* conditional PUT: replicas whose acks count */
    uint32_t n_tok_nodes;
    uint32_t tok_pending; /* conditional PUT: sends to tok_nodes not answered yet */
    uint64_t tok;         /* LOCK */
    uint32_t granted[GW_STORE_MAX_REPLICAS], n_granted, precondition, locked, precondition_absent;
    uint32_t acks, fails, not_found, corrupt;
    int last_rc;
    int tombstone;        /* a replica answered with a tombstone */
    /* writes: hinted handoff */
    uint64_t w_ts, w_ver;  /* the version written */
    uint32_t acked[GW_STORE_MAX_REPLICAS], n_acked;   /* replicas that stored it */
    uint32_t hint_for[GW_STORE_MAX_REPLICAS], n_hint_for; /* replicas that need a hint */
    int hint_finish;      /* the quorum is in: answer once the hints are kept */
    uint32_t hint_wait;   /* HINT_ADDs the answer waits for */
    char err[CN_ERR_LEN];
    /* reads */
    char *key;
    size_t key_len;
    int whole;
    int immutable;        /* a chunk's slice (gw_store_get_immutable) */
    uint64_t off, len;
    uint32_t missed;      /* R = 1: replicas that answered a plain NOT_FOUND */
    uint32_t answers;     /* R > 1: version answers (OK or NOT_FOUND) */
    int best_state;       /* R > 1: 0 none, 1 live, 2 tombstone */
    uint64_t best_ts, best_ver;
    int any_stale;
    int decided;          /* R > 1: the first R answers settled the read */
    uint64_t seen_ts[GW_STORE_MAX_REPLICAS], seen_ver[GW_STORE_MAX_REPLICAS];
    int seen_state[GW_STORE_MAX_REPLICAS];
    uint32_t seen_node[GW_STORE_MAX_REPLICAS];
    int digest;           /* R > 1 GET: data_node got the GET, the others a HEAD */
    uint32_t data_node;
    int data_answered;    /* the GET of a digest read answered (or failed) */
    int waited;           /* the wait for a late GET was armed */
    int get_wait;         /* the timer waits for the GET alone (the HEADs are in) */
    uint64_t best_size;   /* R > 1: the size of the newest version */
    struct gw_storage_reply *kept; /* R > 1: an answer that can serve, newest so far */
    uint64_t kept_ts, kept_ver;
    struct event *timer;  /* R > 1: widen to the other replicas / stop waiting for the GET */
    uint64_t t0_us;       /* R > 1: when the requests went out */
    /* lists */
    struct gw_store_entry *ents;   /* this round's entries from the nodes */
    uint32_t n_ents, cap_ents;
    int have_bound;
    char *bound;
    uint32_t bound_len;
    char *prefix;
    size_t prefix_len;
    uint32_t limit;
    struct gw_store_entry *live;   /* the answer so far: live keys in order */
    uint32_t n_live, cap_live;
    int trimmed;                   /* live keys were left out past limit */
    int keep_tombstones;           /* gw_store_list_all: a tombstone is a key too */
};

struct gw_blob *gw_blob_from_evbuffer(struct evbuffer *buf)
{
    struct gw_blob *b = cn_calloc(1, sizeof(*b));
    atomic_init(&b->refs, 1);
    b->buf = buf;
    b->len = evbuffer_get_length(buf);
    b->data = b->len > 0 ? (const void *)evbuffer_pullup(buf, -1) : (const void *)"";
    b->crc = cn_crc32c(0, b->data, b->len);
    return b;
}

struct gw_blob *gw_blob_from_buffer(const void *data, size_t len,
                                    void (*release)(void *data, void *arg), void *arg)
{
    struct gw_blob *b = cn_calloc(1, sizeof(*b));
    atomic_init(&b->refs, 1);
    b->data = data;
    b->len = len;
    b->release = release;
    b->release_arg = arg;
    b->crc = cn_crc32c(0, data, len);
    return b;
}

const void *gw_blob_data(const struct gw_blob *b)
{
    return b->data;
}

size_t gw_blob_len(const struct gw_blob *b)
{
    return b->len;
}

void gw_blob_ref(struct gw_blob *b)
{
    atomic_fetch_add(&b->refs, 1);
}

void gw_blob_unref(struct gw_blob *b)
{
    if (b == NULL || atomic_fetch_sub(&b->refs, 1) != 1)
        return;
    if (b->release != NULL)
        b->release((void *)(uintptr_t)b->data, b->release_arg);
    else
        evbuffer_free(b->buf);
    cn_free(b);
}

/* zmq free function: one reference per send. */
static void gw_blob_zmq_free(void *data, void *hint)
{
    (void)data;
    gw_blob_unref(hint);
}

struct gw_store *gw_store_new(const struct cn_ring *ring, struct gw_storage_client *client,
                              uint32_t n_replicas, uint32_t write_quorum)
{
    CN_ASSERT(n_replicas >= 1 && n_replicas <= GW_STORE_MAX_REPLICAS);
    CN_ASSERT(write_quorum >= 1 && write_quorum <= n_replicas);
    struct gw_store *s = cn_calloc(1, sizeof(*s));
    s->ring = ring;
    s->client = client;
    s->n = n_replicas;
    s->w = write_quorum;
    s->r = 1;
    s->d = write_quorum;
    s->health = gw_storage_client_health(client);
    return s;
}

static void gw_store_release(struct gw_store *s)
{
    cn_free(s);
}

void gw_store_free(struct gw_store *s)
{
    if (s == NULL)
        return;
    s->closing = 1;
    gw_hint_replay_stop(s->replayer);
    s->replayer = NULL;
    if (s->live_ops == 0 && s->holds == 0)
        gw_store_release(s);
}

void gw_store_hold(struct gw_store *s)
{
    s->holds++;
}

void gw_store_unhold(struct gw_store *s)
{
    CN_ASSERT(s->holds > 0);
    if (--s->holds == 0 && s->closing && s->live_ops == 0)
        gw_store_release(s);
}

struct gw_storage_client *gw_store_client(const struct gw_store *s)
{
    return s->client;
}

void gw_store_set_view(struct gw_store *s, const struct gw_store_view *v)
{
    s->ring = v->ring;
    s->fallback = v->fallback;
    s->members = v->members;
    s->n_members = v->members != NULL ? v->n_members : 0;
}

/* The nodes a listing asks: node k of them. */
static uint32_t gw_store_member_count(const struct gw_store *s)
{
    return s->members != NULL ? s->n_members : cn_ring_nodes(s->ring);
}

static uint32_t gw_store_member(const struct gw_store *s, uint32_t k)
{
    return s->members != NULL ? s->members[k] : k;
}

uint32_t gw_store_members(const struct gw_store *s, uint32_t *out, uint32_t max)
{
    uint32_t n = CN_MIN(gw_store_member_count(s), max);
    for (uint32_t k = 0; k < n; k++)
        out[k] = gw_store_member(s, k);
    return n;
}

uint32_t gw_store_replicas(const struct gw_store *s, const void *key, size_t key_len,
                           uint32_t *out, uint32_t max)
{
    uint32_t all[GW_STORE_MAX_REPLICAS];
    uint32_t n = cn_ring_lookup(s->ring, key, key_len, s->n, all);
    n = CN_MIN(n, max);
    memcpy(out, all, n * sizeof(*out));
    return n;
}

uint32_t gw_store_replicas_any(const struct gw_store *s, const void *key, size_t key_len,
                               uint32_t *out, uint32_t max)
{
    uint32_t n = gw_store_replicas(s, key, key_len, out, max);
    if (s->fallback == NULL)
        return n;
    uint32_t old[GW_STORE_MAX_REPLICAS];
    uint32_t no = cn_ring_lookup(s->fallback, key, key_len, s->n, old);
    for (uint32_t i = 0; i < no && n < max; i++) {
        int seen = 0;
        for (uint32_t k = 0; k < n && !seen; k++)
            seen = out[k] == old[i];
        if (!seen)
            out[n++] = old[i];
    }
    return n;
}

void gw_store_stats(const struct gw_store *s, struct gw_store_stats *st)
{
    *st = s->stats;
}

/* 0: up, 1: up but hints for it are still pending (it may be stale), 2: down. */
static int gw_store_node_rank(const struct gw_store *s, uint32_t node)
{
    if (s->health != NULL && !gw_node_health_is_up(s->health, node))
        return 2;
    if (s->handoff != NULL && gw_handoff_pending(s->handoff, node) > 0)
        return 1;
    return 0;
}

static int gw_store_node_down(const struct gw_store *s, uint32_t node)
{
    return s->health != NULL && !gw_node_health_is_up(s->health, node);
}

/* Orders replicas for a read: up nodes first, then nodes with pending
 * hints, then down nodes; ring order within each group (stable). */
static void gw_store_order_for_read(const struct gw_store *s, uint32_t *nodes, uint32_t n)
{
    uint32_t out[GW_STORE_MAX_REPLICAS], k = 0;
    for (int rank = 0; rank <= 2; rank++)
        for (uint32_t i = 0; i < n; i++)
            if (gw_store_node_rank(s, nodes[i]) == rank)
                out[k++] = nodes[i];
    memcpy(nodes, out, n * sizeof(*nodes));
}

/* A new operation on key's replicas in ring (key NULL: none). */
static struct gw_store_op *gw_store_op_new_on(struct gw_store *s, enum gw_store_kind kind,
                                              const void *key, size_t key_len,
                                              const struct cn_ring *ring)
{
    struct gw_store_op *op = cn_calloc(1, sizeof(*op));
    op->s = s;
    op->kind = kind;
    op->last_rc = CN_NOTFOUND;
    s->live_ops++;
    if (key != NULL) {
        op->n_replicas = cn_ring_lookup(ring, key, key_len, s->n, op->replicas);
        op->key = cn_memdup(key, key_len);
        op->key_len = key_len;
    }
    return op;
}

static struct gw_store_op *gw_store_op_new(struct gw_store *s, enum gw_store_kind kind,
                                           const void *key, size_t key_len)
{
    return gw_store_op_new_on(s, kind, key, key_len, s->ring);
}

static void gw_store_entries_free(struct gw_store_entry *e, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        cn_free(e[i].key);
    cn_free(e);
}

static void gw_store_op_free(struct gw_store_op *op)
{
    struct gw_store *s = op->s;
    gw_store_entries_free(op->ents, op->n_ents);
    gw_store_entries_free(op->live, op->n_live);
    cn_free(op->bound);
    cn_free(op->prefix);
    cn_free(op->key);
    gw_storage_reply_free(op->kept);
    if (op->timer != NULL)
        event_free(op->timer);
    cn_free(op);
    if (--s->live_ops == 0 && s->closing && s->holds == 0)
        gw_store_release(s);
}

/* Runs the user callback once. */
static void gw_store_op_finish(struct gw_store_op *op, int rc, struct gw_storage_reply *r)
{
    if (op->done)
        return;
    op->done = 1;
    struct gw_store_result res;
    memset(&res, 0, sizeof(res));
    res.rc = rc;
    res.reply = r;
    res.acks = op->acks;
    res.tombstone = rc == CN_NOTFOUND && (op->tombstone || op->best_state == 2);
    snprintf(res.err, sizeof(res.err), "%s", op->err);
    op->cb(&res, op->arg);
}

/* Maps a failed reply to a status and remembers why. */
static int gw_store_reply_rc(struct gw_store_op *op, const struct gw_storage_reply *r)
{
    if (r->rc != CN_OK) {
        snprintf(op->err, sizeof(op->err), "node %u: %s", r->node, r->err);
        return r->rc == CN_INVAL ? CN_IO : r->rc;
    }
    switch (r->m.st) {
    case MSG_ST_OK:
        return CN_OK;
    case MSG_ST_NOT_FOUND:
        return CN_NOTFOUND;
    case MSG_ST_CORRUPT:
        snprintf(op->err, sizeof(op->err), "node %u: corrupt: %.*s", r->node,
                 (int)r->m.err.len, (const char *)r->m.err.ptr);
        return CN_CORRUPT;
    case MSG_ST_BUSY:
    case MSG_ST_IO_ERROR:
        snprintf(op->err, sizeof(op->err), "node %u: %s", r->node, msg_status_str(r->m.st));
        return CN_IO;
    case MSG_ST_LOCKED:   /* a PUT under a lease that expired or was lost meanwhile */
        snprintf(op->err, sizeof(op->err), "node %u: the write's lease is gone", r->node);
        return CN_CONFLICT;
    default:
        snprintf(op->err, sizeof(op->err), "node %u: %s: %.*s", r->node,
                 msg_status_str(r->m.st), (int)r->m.err.len, (const char *)r->m.err.ptr);
        return CN_INVAL;
    }
}

/* ---- hinted handoff: HINT_ADD ---------------------------------------- */

/* One hint for a replica that missed a write, asked of the replicas that
 * took the write, one after the other, until one keeps it. */
struct gw_store_hint_req {
    struct gw_store *s;
    struct gw_store_op *op;       /* answers once this is done; NULL: nobody waits */
    uint32_t target;
    char *key;
    size_t key_len;
    uint64_t ts, ver;
    uint32_t holders[GW_STORE_MAX_REPLICAS], n_holders, next;
};

static void gw_store_on_hint_reply(struct gw_storage_reply *r, void *arg);

static void gw_store_hint_send(struct gw_store_hint_req *hr)
{
    struct gw_store *s = hr->s;
    const char *id = gw_handoff_node_id(s->handoff, hr->target);
    struct msg m;
    msg_init_request(&m, MSG_OP_HINT_ADD, 0);
    m.node = (struct msg_bytes){(const uint8_t *)id, (uint32_t)strlen(id)};
    m.key = (struct msg_bytes){(const uint8_t *)hr->key, (uint32_t)hr->key_len};
    m.ts = hr->ts;
    m.ver = hr->ver;
    MSG_SET(&m, MSG_F_NODE);
    MSG_SET(&m, MSG_F_KEY);
    MSG_SET(&m, MSG_F_TS);
    MSG_SET(&m, MSG_F_VER);
    gw_storage_client_send(s->client, hr->holders[hr->next++], &m, NULL, gw_store_on_hint_reply,
                           hr);
}

/* The hint is kept (or no holder would keep it): frees hr and lets the
 * write it belongs to answer. */
static void gw_store_hint_done(struct gw_store_hint_req *hr)
{
    struct gw_store *s = hr->s;
    struct gw_store_op *op = hr->op;
    cn_free(hr->key);
    cn_free(hr);
    if (op != NULL && --op->hint_wait == 0) {
        gw_store_op_finish(op, CN_OK, NULL);
        if (op->outstanding == 0)
            gw_store_op_free(op);
    }
    gw_store_unhold(s);
}

static void gw_store_on_hint_reply(struct gw_storage_reply *r, void *arg)
{
    struct gw_store_hint_req *hr = arg;
    struct gw_store *s = hr->s;
    if (r->rc == CN_OK && r->m.st == MSG_ST_OK) {
        gw_handoff_added(s->handoff, r->node, hr->target);
        s->stats.hints_added++;
    } else if (hr->next < hr->n_holders && !s->closing) {
        CN_LOG(CN_LOG_DEBUG, "node %u did not keep a hint for node %u (%s): next replica",
               r->node, hr->target, r->rc != CN_OK ? r->err : msg_status_str(r->m.st));
        gw_store_hint_send(hr);
        return;
    } else {
        gw_handoff_dropped(s->handoff, hr->target);
        s->stats.hints_dropped++;
        CN_LOG(CN_LOG_WARN, "no replica kept a hint for node %u (last: %s): a write it missed "
               "is only recovered by read repair or cairn-admin repair", hr->target,
               r->rc != CN_OK ? r->err : msg_status_str(r->m.st));
    }
    gw_store_hint_done(hr);
}

/* Has a replica that took op's write keep a hint that target missed it;
 * with wait, op answers only once that is done (op->hint_wait). */
static void gw_store_hint(struct gw_store_op *op, uint32_t target, int wait)
{
    struct gw_store *s = op->s;
    if (s->handoff == NULL || op->n_acked == 0)
        return;   /* no hints, or nothing stored anywhere to hint at */
    if (s->closing) {   /* the client may be going away: no new sends */
        gw_handoff_dropped(s->handoff, target);
        s->stats.hints_dropped++;
        return;
    }
    struct gw_store_hint_req *hr = cn_calloc(1, sizeof(*hr));
    hr->s = s;
    hr->op = wait ? op : NULL;
    hr->target = target;
    hr->key = cn_memdup(op->key, op->key_len);
    hr->key_len = op->key_len;
    hr->ts = op->w_ts;
    hr->ver = op->w_ver;
    memcpy(hr->holders, op->acked, op->n_acked * sizeof(uint32_t));
    hr->n_holders = op->n_acked;
    op->hint_wait += (uint32_t)wait;
    gw_store_hold(s);
    gw_store_hint_send(hr);
}

/* Answers a write once its quorum is in (after the hints of the replicas
 * that missed it are kept: a gateway that dies after answering must not
 * take them along) or out of reach. */
static void gw_store_write_settle(struct gw_store_op *op)
{
    if (op->done || op->hint_finish)
        return;
    if (op->acks >= op->quorum) {
        op->hint_finish = 1;
        for (uint32_t i = 0; i < op->n_hint_for; i++)
            gw_store_hint(op, op->hint_for[i], 1);
        op->n_hint_for = 0;
        if (op->hint_wait == 0)
            gw_store_op_finish(op, CN_OK, NULL);
    } else if (op->acks + (op->n_tok_nodes > 0 ? op->tok_pending : op->outstanding) <
               op->quorum) {
        gw_store_op_finish(op, op->last_rc == CN_NOTFOUND ? CN_IO : op->last_rc, NULL);
        for (uint32_t i = 0; i < op->n_hint_for; i++)
            gw_store_hint(op, op->hint_for[i], 0);   /* a partial write still lands */
        op->n_hint_for = 0;
    }
}

/* ---- writes ---------------------------------------------------------- */

/* Whether a failed write reply means the node may have missed the write
 * (and should get a hint): no answer, or a transient refusal. */
static int gw_store_write_missed(const struct gw_storage_reply *r)
{
    return r->rc == CN_TIMEOUT || r->rc == CN_IO ||
           (r->rc == CN_OK && (r->m.st == MSG_ST_BUSY || r->m.st == MSG_ST_IO_ERROR));
}

/* Whether node's ack counts toward a write's quorum: any replica's, except
 * for a conditional PUT, where only the replicas that granted the lease. */
static int gw_store_ack_counts(const struct gw_store_op *op, uint32_t node)
{
    if (op->n_tok_nodes == 0)
        return 1;
    for (uint32_t i = 0; i < op->n_tok_nodes; i++)
        if (op->tok_nodes[i] == node)
            return 1;
    return 0;
}

static void gw_store_on_write_reply(struct gw_storage_reply *r, void *arg)
{
    struct gw_store_op *op = arg;
    op->outstanding--;
    int rc = gw_store_reply_rc(op, r);
    int votes = gw_store_ack_counts(op, r->node);
    if (votes && op->n_tok_nodes > 0)
        op->tok_pending--;
    if (rc == CN_OK && op->n_acked < GW_STORE_MAX_REPLICAS)
        op->acked[op->n_acked++] = r->node;   /* it holds the write: a hint holder */
    if (rc == CN_OK && !votes) {
        /* stored on a replica that did not grant: it catches up, no vote */
    } else if (rc == CN_OK) {
        op->acks++;
    } else {
        op->fails++;
        op->last_rc = rc;
        CN_LOG(CN_LOG_DEBUG, "replica write failed: %s", op->err);
        if (gw_store_write_missed(r) && (op->done || op->hint_finish))
            gw_store_hint(op, r->node, 0);   /* after the answer: nobody waits */
        else if (gw_store_write_missed(r) && op->n_hint_for < GW_STORE_MAX_REPLICAS)
            op->hint_for[op->n_hint_for++] = r->node;
    }
    /* Answer at the quorum: a replica that lags is caught up by its hint,
     * by read repair, and listings let the newest version win. */
    gw_store_write_settle(op);
    if (op->outstanding == 0 && op->hint_wait == 0)
        gw_store_op_free(op);
}

/* Decides which replicas a write goes to: all of them, except down nodes
 * while enough up replicas remain for the quorum (those get a hint). Fills
 * send[i] and returns how many are sent to. */
static uint32_t gw_store_write_targets(struct gw_store_op *op, int *send)
{
    struct gw_store *s = op->s;
    uint32_t up = 0;
    for (uint32_t i = 0; i < op->n_replicas; i++)
        up += !gw_store_node_down(s, op->replicas[i]);
    uint32_t sent = 0;
    for (uint32_t i = 0; i < op->n_replicas; i++) {
        send[i] = up < op->quorum || !gw_store_node_down(s, op->replicas[i]);
        sent += (uint32_t)send[i];
        if (!send[i]) {   /* hinted once the write is in (gw_store_write_settle) */
            s->stats.skipped_down++;
            op->hint_for[op->n_hint_for++] = op->replicas[i];
        }
    }
    return sent;
}

/* Builds the PUT request of rec (data's crc). */
static void gw_store_put_msg(struct msg *m, const struct gw_store_record *rec,
                             const struct gw_blob *data)
{
    msg_init_request(m, MSG_OP_PUT, 0);
    m->key = (struct msg_bytes){rec->key, (uint32_t)rec->key_len};
    MSG_SET(m, MSG_F_KEY);
    m->crc = data != NULL ? data->crc : 0;
    MSG_SET(m, MSG_F_CRC);
    m->ver = rec->ver;
    m->ts = rec->ts;
    MSG_SET(m, MSG_F_VER);
    MSG_SET(m, MSG_F_TS);
    if (rec->etag != NULL) {
        m->etag = (struct msg_bytes){rec->etag, (uint32_t)rec->etag_len};
        MSG_SET(m, MSG_F_ETAG);
    }
    if (rec->meta != NULL) {
        m->meta = (struct msg_bytes){rec->meta, (uint32_t)rec->meta_len};
        MSG_SET(m, MSG_F_META);
    }
    if (rec->has_osize) {
        m->osize = rec->osize;
        MSG_SET(m, MSG_F_OSIZE);
    }
    if (rec->owner != NULL) {
        m->owner = (struct msg_bytes){rec->owner, (uint32_t)rec->owner_len};
        MSG_SET(m, MSG_F_OWNER);
    }
}

void gw_store_record_from_reply(struct gw_store_record *rec, const struct msg *m)
{
    rec->etag = MSG_HAS(m, MSG_F_ETAG) ? m->etag.ptr : NULL;
    rec->etag_len = MSG_HAS(m, MSG_F_ETAG) ? m->etag.len : 0;
    rec->meta = MSG_HAS(m, MSG_F_META) ? m->meta.ptr : NULL;
    rec->meta_len = MSG_HAS(m, MSG_F_META) ? m->meta.len : 0;
    rec->has_osize = MSG_HAS(m, MSG_F_OSIZE);
    rec->osize = m->osize;
    rec->owner = MSG_HAS(m, MSG_F_OWNER) ? m->owner.ptr : NULL;
    rec->owner_len = MSG_HAS(m, MSG_F_OWNER) ? m->owner.len : 0;
}

/* Whether the PUT of rec to node carries rec's lease token. */
static int gw_store_rec_tok(const struct gw_store_record *rec, uint32_t node)
{
    for (uint32_t i = 0; i < rec->n_tok_nodes; i++)
        if (rec->tok_nodes[i] == node)
            return 1;
    return 0;
}

/* The payload of a send of data: one blob reference, dropped by ZeroMQ. */
static struct gw_storage_payload gw_store_payload(struct gw_blob *data)
{
    if (data == NULL)
        return (struct gw_storage_payload){"", 0, NULL, NULL};
    gw_blob_ref(data);
    return (struct gw_storage_payload){data->data, data->len, gw_blob_zmq_free, data};
}

void gw_store_send_record(struct gw_store *s, uint32_t node, const struct gw_store_record *rec,
                          struct gw_blob *data, gw_storage_reply_cb cb, void *arg)
{
    struct msg m;
    gw_store_put_msg(&m, rec, data);
    struct gw_storage_payload pl = gw_store_payload(data);
    gw_storage_client_send(s->client, node, &m, &pl, cb, arg);
}

void gw_store_put(struct gw_store *s, const struct gw_store_record *rec, struct gw_blob *data,
                  gw_store_cb cb, void *arg)
{
    struct gw_store_op *op = gw_store_op_new(s, GW_STORE_PUT, rec->key, rec->key_len);
    op->cb = cb;
    op->arg = arg;
    op->quorum = CN_MIN(s->w, op->n_replicas);
    op->w_ts = rec->ts;
    op->w_ver = rec->ver;
    op->n_tok_nodes = CN_MIN(rec->n_tok_nodes, GW_STORE_MAX_REPLICAS);
    if (op->n_tok_nodes > 0)
        memcpy(op->tok_nodes, rec->tok_nodes, op->n_tok_nodes * sizeof(uint32_t));
    int send[GW_STORE_MAX_REPLICAS];
    op->outstanding = gw_store_write_targets(op, send);
    /* A conditional write goes only to the replicas that granted its lease:
     * another would store the record even when the granting ones then
     * refuse it (their lease gone), and a conditional write answered 409
     * must leave nothing a read can see. The others get a hint and catch up
     * as after being down (or by read repair). */
    for (uint32_t i = 0; i < op->n_replicas; i++)
        op->tok_pending += (uint32_t)(send[i] && gw_store_rec_tok(rec, op->replicas[i]));
    for (uint32_t i = 0; i < op->n_replicas && op->tok_pending > 0; i++) {
        if (send[i] && !gw_store_rec_tok(rec, op->replicas[i])) {
            send[i] = 0;
            op->outstanding--;
            if (op->n_hint_for < GW_STORE_MAX_REPLICAS)   /* hinted once the write is in */
                op->hint_for[op->n_hint_for++] = op->replicas[i];
        }
    }
    for (uint32_t i = 0; i < op->n_replicas; i++) {
        if (!send[i])
            continue;
        struct msg m;
        gw_store_put_msg(&m, rec, data);
        if (gw_store_rec_tok(rec, op->replicas[i])) {
            m.tok = rec->tok;
            MSG_SET(&m, MSG_F_TOK);
        }
        struct gw_storage_payload pl = gw_store_payload(data);
        gw_storage_client_send(s->client, op->replicas[i], &m, &pl, gw_store_on_write_reply, op);
    }
}

/* ---- conditional-write leases ---------------------------------------- */

static void gw_store_on_unlock_reply(struct gw_storage_reply *r, void *arg)
{
    (void)arg;
    if (r->rc != CN_OK || r->m.st != MSG_ST_OK)
        CN_LOG(CN_LOG_DEBUG, "UNLOCK on node %u failed (the lease expires on its own)", r->node);
}

void gw_store_unlock(struct gw_store *s, const void *key, size_t key_len, uint64_t tok,
                     const uint32_t *nodes, uint32_t n_nodes)
{
    for (uint32_t i = 0; i < n_nodes; i++) {
        struct msg m;
        msg_init_request(&m, MSG_OP_UNLOCK, 0);
        m.key = (struct msg_bytes){key, (uint32_t)key_len};
        m.tok = tok;
        MSG_SET(&m, MSG_F_KEY);
        MSG_SET(&m, MSG_F_TOK);
        gw_storage_client_send(s->client, nodes[i], &m, NULL, gw_store_on_unlock_reply, NULL);
    }
}

/* Decides a LOCK round: as soon as a quorum granted (a slow or dead
 * replica does not hold the write up), else once every replica answered or
 * was skipped, releasing what the failed round was granted and what
 * replicas that did not answer in time may have granted late (a stray lease
 * would hold other writers off until it expires). Runs the callback. */
static void gw_store_lock_decide(struct gw_store_op *op)
{
    int ok = op->n_granted >= op->quorum;
    if (!ok)
        gw_store_unlock(op->s, op->key, op->key_len, op->tok, op->granted, op->n_granted);
    gw_store_unlock(op->s, op->key, op->key_len, op->tok, op->tok_nodes, op->n_tok_nodes);
    op->n_tok_nodes = 0;
    op->done = 1;
    struct gw_store_result res;
    memset(&res, 0, sizeof(res));
    res.rc = ok ? CN_OK : CN_ERR;
    res.acks = op->n_granted;
    memcpy(res.granted, op->granted, sizeof(res.granted));
    res.n_granted = op->n_granted;
    res.precondition = op->precondition;
    res.precondition_absent = op->precondition_absent;
    res.locked = op->locked;
    snprintf(res.err, sizeof(res.err), "%s", op->err);
    op->cb(&res, op->arg);
}

/* Counts one LOCK answer (op->tok_nodes collects the replicas that failed
 * to answer: they may hold a late grant). An answer after the round was
 * decided (a success) is a grant nobody uses: released at once. */
static void gw_store_on_lock_reply(struct gw_storage_reply *r, void *arg)
{
    struct gw_store_op *op = arg;
    op->outstanding--;
    int granted = r->rc == CN_OK && r->m.st == MSG_ST_OK;
    if (op->done) {
        if (granted || r->rc != CN_OK)
            gw_store_unlock(op->s, op->key, op->key_len, op->tok, &r->node, 1);
    } else if (granted) {
        op->granted[op->n_granted++] = r->node;
    } else if (r->rc == CN_OK && r->m.st == MSG_ST_PRECONDITION) {
        op->precondition++;
        op->precondition_absent += !MSG_HAS(&r->m, MSG_F_VER);
    } else if (r->rc == CN_OK && r->m.st == MSG_ST_LOCKED) {
        op->locked++;
    } else {
        op->fails++;
        (void)gw_store_reply_rc(op, r);
        if (r->rc != CN_OK)
            op->tok_nodes[op->n_tok_nodes++] = r->node;
    }
    if (!op->done && (op->n_granted >= op->quorum || op->outstanding == 0))
        gw_store_lock_decide(op);
    if (op->outstanding == 0)
        gw_store_op_free(op);
}

void gw_store_lock(struct gw_store *s, const void *key, size_t key_len, uint64_t tok,
                   int has_ifver, uint64_t ifver, gw_store_cb cb, void *arg)
{
    struct gw_store_op *op = gw_store_op_new(s, GW_STORE_LOCK, key, key_len);
    op->cb = cb;
    op->arg = arg;
    op->tok = tok;
    /* a majority at least, whatever W is: two majorities always share a
     * replica, and a replica grants one token at a time */
    op->quorum = CN_MIN(CN_MAX(s->w, op->n_replicas / 2 + 1), op->n_replicas);
    /* replicas the gateway holds down are not asked (no grant from them:
     * a lease is a vote), unless too few would be left to win */
    uint32_t up = 0;
    for (uint32_t i = 0; i < op->n_replicas; i++)
        up += !gw_store_node_down(s, op->replicas[i]);
    int send[GW_STORE_MAX_REPLICAS];
    op->outstanding = 1; /* held while sending: a reply inline cannot decide early */
    for (uint32_t i = 0; i < op->n_replicas; i++) {
        send[i] = up < op->quorum || !gw_store_node_down(s, op->replicas[i]);
        op->outstanding += (uint32_t)send[i];
        if (!send[i]) {
            op->fails++;
            snprintf(op->err, sizeof(op->err), "node %u is down", op->replicas[i]);
        }
    }
    for (uint32_t i = 0; i < op->n_replicas; i++) {
        if (!send[i])
            continue;
        struct msg m;
        msg_init_request(&m, MSG_OP_LOCK, 0);
        m.key = (struct msg_bytes){(const uint8_t *)op->key, (uint32_t)key_len};
        m.tok = tok;
        MSG_SET(&m, MSG_F_KEY);
        MSG_SET(&m, MSG_F_TOK);
        if (has_ifver) {
            m.ifver = ifver;
            MSG_SET(&m, MSG_F_IFVER);
        }
        gw_storage_client_send(s->client, op->replicas[i], &m, NULL, gw_store_on_lock_reply, op);
    }
    if (--op->outstanding == 0) {
        if (!op->done)
            gw_store_lock_decide(op);
        gw_store_op_free(op);
    }
}

void gw_store_delete(struct gw_store *s, const void *key, size_t key_len, uint64_t ver,
                     uint64_t ts, gw_store_cb cb, void *arg)
{
    struct gw_store_op *op = gw_store_op_new(s, GW_STORE_DEL, key, key_len);
    op->cb = cb;
    op->arg = arg;
    op->quorum = CN_MIN(s->d, op->n_replicas);
    op->w_ts = ts;
    op->w_ver = ver;
    int send[GW_STORE_MAX_REPLICAS];
    op->outstanding = gw_store_write_targets(op, send);
    for (uint32_t i = 0; i < op->n_replicas; i++) {
        if (!send[i])
            continue;
        struct msg m;
        msg_init_request(&m, MSG_OP_DELETE, 0);
        m.key = (struct msg_bytes){(const uint8_t *)op->key, (uint32_t)key_len};
        m.ver = ver;
        m.ts = ts;
        MSG_SET(&m, MSG_F_KEY);
        MSG_SET(&m, MSG_F_VER);
        MSG_SET(&m, MSG_F_TS);
        gw_storage_client_send(s->client, op->replicas[i], &m, NULL, gw_store_on_write_reply, op);
    }
}

/* ---- reads ----------------------------------------------------------- */

static void gw_store_read_next(struct gw_store_op *op);

/* Builds the request of a read: the op's GET (data 1) or a HEAD. */
static void gw_store_read_msg(const struct gw_store_op *op, struct msg *m, int data)
{
    msg_init_request(m, data ? MSG_OP_GET : MSG_OP_HEAD, 0);
    m->key = (struct msg_bytes){(const uint8_t *)op->key, (uint32_t)op->key_len};
    MSG_SET(m, MSG_F_KEY);
    if (data && !op->whole) {
        m->off = op->off;
        m->len = op->len;
        MSG_SET(m, MSG_F_OFF);
        MSG_SET(m, MSG_F_LEN);
    }
}

/* Whether a GET reply's payload matches its crc (notes why not in op). */
static int gw_store_payload_ok(struct gw_store_op *op, const struct gw_storage_reply *r)
{
    if (cn_crc32c(0, r->m.payload.ptr, r->m.payload.len) == r->m.crc)
        return 1;
    snprintf(op->err, sizeof(op->err), "node %u: payload fails its crc", r->node);
    CN_LOG(CN_LOG_WARN, "%s", op->err);
    return 0;
}

/* A read saw a stale replica: repair the key in the background. */
static void gw_store_read_repair(struct gw_store_op *op)
{
    if (op->s->closing)
        return;
    op->s->stats.read_repairs++;
    gw_cluster_metrics_read_repair();
    gw_repair_key(op->s, op->key, op->key_len, NULL, NULL);
}

static void gw_store_on_read_reply(struct gw_storage_reply *r, void *arg)
{
    struct gw_store_op *op = arg;
    int rc = gw_store_reply_rc(op, r);
    if (rc == CN_OK && op->kind == GW_STORE_GET && !gw_store_payload_ok(op, r))
        rc = CN_CORRUPT;
    if (rc == CN_OK) {
        if (op->missed > 0)
            gw_store_read_repair(op);
        gw_store_op_finish(op, CN_OK, r);
        gw_store_op_free(op);
        return;
    }
    if (rc == CN_NOTFOUND && (r->m.flags & MSG_FLAG_TOMBSTONE)) {
        op->tombstone = 1;
        gw_store_op_finish(op, CN_NOTFOUND, NULL); /* deleted: authoritative */
        gw_store_op_free(op);
        return;
    }
    op->not_found += rc == CN_NOTFOUND;
    op->missed += rc == CN_NOTFOUND || rc == CN_CORRUPT;   /* repaired once served */
    op->corrupt += rc == CN_CORRUPT;
    if (rc != CN_NOTFOUND)
        op->last_rc = rc;
    if (op->immutable && op->next < op->n_replicas)
        gw_cluster_metrics_slice_retry();
    /* N - W + 1 replicas without the key: a write acknowledged by W
     * replicas would be on one of them, so the key is absent (and a hung
     * replica further down the list is not waited for) */
    uint32_t enough = op->n_replicas - CN_MIN(op->s->w, op->n_replicas) + 1;
    if (op->quorum <= 1 && op->not_found >= enough && op->not_found == op->next &&
        op->next < op->n_replicas) {
        gw_store_op_finish(op, CN_NOTFOUND, NULL);
        gw_store_op_free(op);
        return;
    }
    gw_store_read_next(op);
}

/* Asks the next replica, or finishes when none is left. */
static void gw_store_read_next(struct gw_store_op *op)
{
    if (op->next >= op->n_replicas) {
        int rc = op->not_found > 0 ? CN_NOTFOUND
                 : op->corrupt > 0 ? CN_CORRUPT
                                   : op->last_rc;
        gw_store_op_finish(op, rc == CN_NOTFOUND && op->not_found == 0 ? CN_IO : rc, NULL);
        gw_store_op_free(op);
        return;
    }
    struct msg m;
    gw_store_read_msg(op, &m, op->kind == GW_STORE_GET);
    gw_storage_client_send(op->s->client, op->replicas[op->next++], &m, NULL,
                           gw_store_on_read_reply, op);
}

/* ---- reads with R > 1: one round trip, versions compared ---------------- */

/* Whether (ts, ver) is the newest version seen so far. */
static int gw_store_is_best(const struct gw_store_op *op, uint64_t ts, uint64_t ver)
{
    return op->best_state == 1 && ts == op->best_ts && ver == op->best_ver;
}

/* Keeps r (an answer that can serve the read and holds the newest version
 * so far) until the read is settled, unless one of that version is kept. */
static void gw_store_keep(struct gw_store_op *op, struct gw_storage_reply *r)
{
    if (op->kept != NULL && gw_store_is_best(op, op->kept_ts, op->kept_ver))
        return;
    gw_storage_reply_free(op->kept);
    op->kept_ts = r->m.ts;
    op->kept_ver = r->m.ver;
    op->kept = gw_storage_reply_keep(op->s->client, r); /* r's fields go with it */
}

/* Reads the newest version from the replicas that answered with it, as a
 * second op that calls the user back: the answer that could have served
 * (the GET) was older, failed, or is still out. */
static void gw_store_quorum_fallback(struct gw_store_op *op)
{
    op->s->stats.read_fallbacks++;
    struct gw_store_op *data = gw_store_op_new(op->s, op->kind, NULL, 0);
    data->key = cn_memdup(op->key, op->key_len);
    data->key_len = op->key_len;
    data->cb = op->cb;
    data->arg = op->arg;
    data->whole = op->whole;
    data->off = op->off;
    data->len = op->len;
    data->quorum = op->quorum;
    for (uint32_t i = 0; i < op->answers; i++)
        if (op->seen_state[i] == 1 && gw_store_is_best(op, op->seen_ts[i], op->seen_ver[i]))
            data->replicas[data->n_replicas++] = op->seen_node[i];
    op->done = 1; /* the data op calls the user back now */
    gw_store_read_next(data);
}

/* How long a quorum read waits for its R answers before it asks the other
 * replicas: four times the average read time (2 ms to 50 ms, at the
 * timer). Widening is a hedge against a replica that hangs and is not yet
 * marked down, not against the ordinary spread of a busy machine, where
 * every widened read costs the nodes one more HEAD. Measured with 32
 * clients on 2 vCPUs (4 KiB, N=3): twice the average widened 14 % of GETs
 * and 39 % of the version reads before PUTs (reads wait for CPU behind
 * other daemons' threads there); the average plus four mean deviations
 * (TCP's retransmission timeout) 10 % and 39 %; four times the average
 * 1.2 % and 6 % (Cassandra's speculative retry waits for the 99th
 * percentile). A hung replica then costs an affected read four average
 * read times instead of two. */
static uint64_t gw_store_read_wait_us(const struct gw_store *s)
{
    return 4 * s->read_us;
}

/* Settles a read with R > 1 from the answers so far: called once, at the
 * R-th version answer (or after the wait for a late GET), or when every
 * replica asked has answered or failed.
 * cur: the answer being handled when it can serve and holds the newest
 * version, else NULL. The newest version is served from cur or from the
 * kept answer when one of them holds it, else read again from a holder
 * (gw_store_quorum_fallback). This op then only collects the late answers
 * and is freed by gw_store_on_version() when the last one is in. */
static void gw_store_quorum_decide(struct gw_store_op *op, struct gw_storage_reply *cur)
{
    op->decided = 1;
    evtimer_del(op->timer);
    if (op->answers >= op->quorum && op->next == op->quorum) {
        /* only reads that did not widen: a hung replica must not stretch
         * the wait of the reads after it */
        uint64_t took = cn_time_mono_us() - op->t0_us;
        op->s->read_us = op->s->read_us - op->s->read_us / 8 + took / 8;
    }
    if (op->answers < op->quorum)
        gw_store_op_finish(op, op->last_rc == CN_NOTFOUND ? CN_IO : op->last_rc, NULL);
    else if (op->best_state != 1)
        gw_store_op_finish(op, CN_NOTFOUND, NULL);
    else if (cur != NULL)
        gw_store_op_finish(op, CN_OK, cur);
    else if (op->kept != NULL && gw_store_is_best(op, op->kept_ts, op->kept_ver))
        gw_store_op_finish(op, CN_OK, op->kept);
    else
        gw_store_quorum_fallback(op);
    gw_storage_reply_free(op->kept);
    op->kept = NULL;
}

/* Every answer is in: repair the replicas asked that were stale or silent
 * (those not asked are left to hints and anti-entropy). */
static void gw_store_quorum_end(struct gw_store_op *op)
{
    for (uint32_t i = 0; i < op->answers; i++)
        if (op->seen_state[i] != op->best_state || op->seen_ts[i] != op->best_ts ||
            op->seen_ver[i] != op->best_ver)
            op->any_stale = 1;
    if (op->any_stale || (op->answers < op->next && op->best_state != 0))
        gw_store_read_repair(op);
    gw_store_op_free(op);
}

/* Records a version answer (OK or NOT_FOUND) of r; returns its state. */
static int gw_store_seen(struct gw_store_op *op, const struct gw_storage_reply *r, int rc)
{
    int state = rc == CN_OK ? 1 : (r->m.flags & MSG_FLAG_TOMBSTONE) ? 2 : 0;
    uint32_t i = op->answers++;
    op->seen_node[i] = r->node;
    op->seen_state[i] = state;
    op->seen_ts[i] = state != 0 ? r->m.ts : 0;
    op->seen_ver[i] = state != 0 ? r->m.ver : 0;
    if (state != 0)   /* later writes of this gateway come after what it read */
        cn_hlc_observe(cn_hlc_default(), op->seen_ts[i]);
    int newer = cn_version_newer(op->seen_ts[i], op->seen_ver[i], op->best_ts, op->best_ver);
    /* after the decision a late answer only feeds the repair */
    if (!op->decided && state != 0 && (op->best_state == 0 || newer)) {
        op->best_state = state;
        op->best_ts = op->seen_ts[i];
        op->best_ver = op->seen_ver[i];
        op->best_size = state == 1 && MSG_HAS(&r->m, MSG_F_SIZE) ? r->m.size : 0;
    }
    return state;
}

static void gw_store_quorum_send(struct gw_store_op *op, uint32_t i, int data);

/* Arms the op's timer to fire in us, at least GW_STORE_WAIT_MIN_US, at
 * most max_us. */
static void gw_store_timer_arm(struct gw_store_op *op, uint64_t us, uint64_t max_us)
{
    us = CN_MAX(us, GW_STORE_WAIT_MIN_US);
    us = CN_MIN(us, max_us);
    struct timeval tv = {(time_t)(us / 1000000), (suseconds_t)(us % 1000000)};
    evtimer_add(op->timer, &tv);
}

/* Arms the wait for a GET that is still out while the HEADs are in: twice
 * as long as the read took so far, plus the time the newest version's bytes
 * need at GW_STORE_GET_BYTES_PER_US. */
static void gw_store_get_wait_arm(struct gw_store_op *op)
{
    uint64_t us = 2 * (cn_time_mono_us() - op->t0_us) + op->best_size / GW_STORE_GET_BYTES_PER_US;
    gw_store_timer_arm(op, us, GW_STORE_GET_WAIT_MAX_US);
}

/* Asks up to k replicas not asked yet for their version. */
static void gw_store_quorum_widen(struct gw_store_op *op, uint32_t k)
{
    for (; k > 0 && op->next < op->n_replicas; k--)
        gw_store_quorum_send(op, op->next, 0);
}

/* The timer of an undecided read with R > 1. When only the GET is out (the
 * HEADs answered), it is given the time its bytes need first
 * (gw_store_get_wait_arm). Otherwise R answers are late, so every replica
 * not asked yet is asked now (and a late GET is not waited for once they
 * answer); or, when all were asked, the wait for a late GET is over and the
 * data is read from a holder of the newest version. */
static void gw_store_on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_store_op *op = arg;
    if (op->decided)
        return;
    if (op->digest && !op->data_answered && op->outstanding == 1 && !op->get_wait &&
        op->answers > 0) {
        op->get_wait = 1; /* only the GET is late: a large record takes time */
        gw_store_get_wait_arm(op);
        return;
    }
    if (op->next < op->n_replicas) {
        op->s->stats.read_widened++;
        gw_cluster_metrics_read_widened();
        op->waited = 1; /* the GET may be what is late: do not wait for it again */
        gw_store_quorum_widen(op, op->n_replicas);
        return;
    }
    if (op->answers >= op->quorum) /* else every replica is needed: its answer or timeout */
        gw_store_quorum_decide(op, NULL);
}

/* Whether the decision should wait for the GET of a digest read: R answers
 * are in (a replica failed and the next one answered instead), the newest
 * version is live and nothing that could serve it came yet, but the GET is
 * still out. The wait (gw_store_get_wait_arm) is never a request timeout: a
 * GET that hangs costs the read that wait, then the data is read from a
 * holder. Arms the wait once; 0: decide now. */
static int gw_store_quorum_wait(struct gw_store_op *op)
{
    if (!op->digest || op->data_answered || op->best_state != 1 ||
        op->answers < op->quorum || op->waited || op->s->closing)
        return 0;
    if (op->kept != NULL && gw_store_is_best(op, op->kept_ts, op->kept_ver))
        return 0;
    op->waited = 1;
    gw_store_get_wait_arm(op);
    return 1;
}

/* One answer of a read with R > 1. Answers that can serve the read: every
 * HEAD answer of a HEAD, the GET answer of a GET (with a good crc). */
static void gw_store_on_version(struct gw_storage_reply *r, void *arg)
{
    struct gw_store_op *op = arg;
    op->outstanding--;
    int rc = gw_store_reply_rc(op, r);
    int primary = op->digest && r->node == op->data_node;
    int serves = op->kind == GW_STORE_HEAD || primary;
    if (primary)
        op->data_answered = 1;
    if (rc == CN_OK && op->kind == GW_STORE_GET && serves && !gw_store_payload_ok(op, r))
        rc = CN_CORRUPT;
    int fresh = 0; /* r can serve and holds the newest version so far */
    if (rc == CN_OK || rc == CN_NOTFOUND) {
        int state = gw_store_seen(op, r, rc);
        fresh = serves && state == 1 && !op->decided && gw_store_is_best(op, r->m.ts, r->m.ver);
    } else {
        op->last_rc = rc;
        if (rc == CN_CORRUPT)
            op->any_stale = 1;   /* its copy is rewritten by the read repair */
        if (!op->decided)
            gw_store_quorum_widen(op, 1); /* a replica not asked yet answers instead */
    }
    if (!op->decided && (op->answers >= op->quorum || op->outstanding == 0) &&
        (fresh || !gw_store_quorum_wait(op)))
        gw_store_quorum_decide(op, fresh ? r : NULL);
    else if (fresh)
        gw_store_keep(op, r);
    if (op->outstanding == 0)
        gw_store_quorum_end(op);
}

/* Sends the read's GET (data 1) or a HEAD to replica i (the next one). */
static void gw_store_quorum_send(struct gw_store_op *op, uint32_t i, int data)
{
    CN_ASSERT(i == op->next);
    struct msg m;
    gw_store_read_msg(op, &m, data);
    op->outstanding++;
    op->next++;
    gw_storage_client_send(op->s->client, op->replicas[i], &m, NULL, gw_store_on_version, op);
}

/* R = 1: replicas one after the other. R > 1 (a quorum read): the first R
 * replicas (up ones first, ring order) are asked at once and their answers
 * decide; a replica that fails is replaced by the next one at once, and
 * when the R answers are late (twice the usual time, GW_STORE_WAIT_MIN_US ..
 * GW_STORE_WAIT_MAX_US) every other replica is asked too, so a hung replica
 * is never waited for beyond that. A GET asks the first replica for the
 * data and the others for their version only (HEAD), as Cassandra's digest
 * reads do: when the GET's version is the newest of the R answers it is
 * served with no second round trip. */
static void gw_store_read_start(struct gw_store_op *op, uint32_t want_r)
{
    gw_store_order_for_read(op->s, op->replicas, op->n_replicas);
    uint32_t r = CN_MIN(want_r, op->n_replicas);
    op->quorum = r;
    if (r <= 1) {
        gw_store_read_next(op);
        return;
    }
    op->last_rc = CN_IO;
    op->t0_us = cn_time_mono_us();
    op->digest = op->kind == GW_STORE_GET;
    op->data_node = op->replicas[0];
    op->timer = evtimer_new(gw_storage_client_base(op->s->client), gw_store_on_timer, op);
    gw_store_timer_arm(op, gw_store_read_wait_us(op->s), GW_STORE_WAIT_MAX_US);
    op->outstanding = 1; /* a guard: replies that come back inside the sends */
    for (uint32_t i = 0; i < r; i++)
        gw_store_quorum_send(op, i, op->digest && i == 0);
    op->outstanding--;
    if (!op->decided && (op->answers >= op->quorum || op->outstanding == 0))
        gw_store_quorum_decide(op, NULL);
    if (op->outstanding == 0)
        gw_store_quorum_end(op);
}

/* ---- reads across a ring change --------------------------------------- */

/* A read's arguments, kept while its first round (on the current ring)
 * runs, for a second round on the previous map's ring. */
struct gw_store_read_args {
    struct gw_store *s;
    enum gw_store_kind kind;
    int whole, immutable;
    uint64_t off, len;
    const void *key;
    size_t key_len;
    char *owned;                  /* the kept copy of key */
    const struct cn_ring *ring;   /* the ring a second round asks */
    gw_store_cb cb;
    void *arg;
};

static void gw_store_read_begin(const struct gw_store_read_args *a, const struct cn_ring *ring,
                                gw_store_cb cb, void *arg);

/* Whether key's replicas in the fallback ring are the ones already asked. */
static int gw_store_same_replicas(const struct gw_store *s, const void *key, size_t key_len)
{
    uint32_t a[GW_STORE_MAX_REPLICAS], b[GW_STORE_MAX_REPLICAS];
    uint32_t na = cn_ring_lookup(s->ring, key, key_len, s->n, a);
    uint32_t nb = cn_ring_lookup(s->fallback, key, key_len, s->n, b);
    for (uint32_t i = 0; i < nb; i++) {
        int found = 0;
        for (uint32_t k = 0; k < na && !found; k++)
            found = a[k] == b[i];
        if (!found)
            return 0;
    }
    return 1;
}

/* The first round's answer: a plain miss (no record, no tombstone) asks
 * the previous map's replicas, where the record may still be while the
 * data moves; anything else goes to the caller. */
static void gw_store_on_first_round(struct gw_store_result *res, void *arg)
{
    struct gw_store_read_args *a = arg;
    struct gw_store *s = a->s;
    if (res->rc == CN_NOTFOUND && !res->tombstone && !s->closing) {
        s->stats.read_prev_ring++;
        gw_store_read_begin(a, a->ring, a->cb, a->arg);
    } else {
        a->cb(res, a->arg);
    }
    cn_free(a->owned);
    cn_free(a);
}

/* Starts a read of ring's replicas calling cb(arg). */
static void gw_store_read_begin(const struct gw_store_read_args *a, const struct cn_ring *ring,
                                gw_store_cb cb, void *arg)
{
    struct gw_store_op *op = gw_store_op_new_on(a->s, a->kind, a->key, a->key_len, ring);
    op->cb = cb;
    op->arg = arg;
    op->whole = a->whole;
    op->immutable = a->immutable;
    op->off = a->off;
    op->len = a->len;
    gw_store_read_start(op, a->immutable ? 1 : a->s->r);
}

/* A read on the current ring, with a second round on the previous map's
 * ring (gw_store_view.fallback) when the first finds nothing there. */
static void gw_store_read(struct gw_store_read_args *a)
{
    struct gw_store *s = a->s;
    if (s->fallback == NULL || gw_store_same_replicas(s, a->key, a->key_len)) {
        gw_store_read_begin(a, s->ring, a->cb, a->arg);
        return;
    }
    struct gw_store_read_args *keep = cn_malloc(sizeof(*keep));
    *keep = *a;
    keep->owned = cn_memdup(a->key, a->key_len);
    keep->key = keep->owned;
    keep->ring = s->fallback;   /* what the second round asks */
    gw_store_read_begin(keep, s->ring, gw_store_on_first_round, keep);
}

void gw_store_get(struct gw_store *s, const void *key, size_t key_len, int whole, uint64_t off,
                  uint64_t len, gw_store_cb cb, void *arg)
{
    struct gw_store_read_args a = {
        .s = s, .kind = GW_STORE_GET, .whole = whole, .off = off, .len = len,
        .key = key, .key_len = key_len, .cb = cb, .arg = arg,
    };
    gw_store_read(&a);
}

void gw_store_get_immutable(struct gw_store *s, const void *key, size_t key_len, uint64_t off,
                            uint64_t len, gw_store_cb cb, void *arg)
{
    struct gw_store_read_args a = {
        .s = s, .kind = GW_STORE_GET, .immutable = 1, .off = off, .len = len,
        .key = key, .key_len = key_len, .cb = cb, .arg = arg,
    };
    gw_store_read(&a);
}

void gw_store_head(struct gw_store *s, const void *key, size_t key_len, gw_store_cb cb,
                   void *arg)
{
    struct gw_store_read_args a = {
        .s = s, .kind = GW_STORE_HEAD, .key = key, .key_len = key_len,
        .cb = cb, .arg = arg,
    };
    gw_store_read(&a);
}

/* ---- listings -------------------------------------------------------- */

static int gw_store_key_cmp(const char *a, uint32_t alen, const char *b, uint32_t blen)
{
    int c = memcmp(a, b, CN_MIN(alen, blen));
    if (c != 0)
        return c;
    return alen < blen ? -1 : alen > blen;
}

static int gw_store_entry_cmp(const void *x, const void *y)
{
    const struct gw_store_entry *a = x, *b = y;
    int c = gw_store_key_cmp(a->key, a->key_len, b->key, b->key_len);
    if (c != 0)
        return c;
    return -cn_version_cmp(a->ts, a->ver, b->ts, b->ver); /* newest first */
}

/* Copies one node's entries and narrows the bound. */
static void gw_store_list_absorb(struct gw_store_op *op, const struct msg *m)
{
    if (op->n_ents + m->n_ents > op->cap_ents) {
        op->cap_ents = (op->n_ents + m->n_ents) * 2;
        op->ents = cn_realloc(op->ents, op->cap_ents * sizeof(*op->ents));
    }
    for (uint32_t i = 0; i < m->n_ents; i++) {
        const struct msg_entry *e = &m->ents[i];
        struct gw_store_entry *d = &op->ents[op->n_ents++];
        d->key = cn_memdup(e->key.ptr, e->key.len);
        d->key_len = e->key.len;
        d->size = e->size;
        size_t el = CN_MIN(e->etag.len, sizeof(d->etag) - 1);
        memcpy(d->etag, e->etag.ptr, el);
        d->etag[el] = '\0';
        d->ts = e->ts;
        cn_hlc_observe(cn_hlc_default(), e->ts);
        d->ver = e->ver;
        d->flags = e->flags;
        d->has_osize = (int)e->has_osize;
        d->osize = e->osize;
        d->has_owner = (int)e->has_owner;
        size_t ol = e->has_owner ? CN_MIN(e->owner.len, sizeof(d->owner) - 1) : 0;
        if (ol > 0)
            memcpy(d->owner, e->owner.ptr, ol);
        d->owner[ol] = '\0';
    }
    if (m->more && m->n_ents > 0) {
        const struct msg_entry *last = &m->ents[m->n_ents - 1];
        if (!op->have_bound || gw_store_key_cmp((const char *)last->key.ptr, last->key.len,
                                                op->bound, op->bound_len) < 0) {
            cn_free(op->bound);
            op->bound = cn_memdup(last->key.ptr, last->key.len);
            op->bound_len = last->key.len;
            op->have_bound = 1;
        }
    }
}

static void gw_store_list_round(struct gw_store_op *op, const void *after, size_t after_len);

/* Moves this round's winners (newest per key, not a tombstone, not past
 * the bound) to the answer; frees the rest. */
static void gw_store_list_merge(struct gw_store_op *op)
{
    if (op->n_ents > 0)
        qsort(op->ents, op->n_ents, sizeof(*op->ents), gw_store_entry_cmp);
    const char *prev = NULL; /* key of the newest entry seen last (it may have moved) */
    uint32_t prev_len = 0;
    for (uint32_t i = 0; i < op->n_ents; i++) {
        struct gw_store_entry *e = &op->ents[i];
        int dup = prev != NULL && gw_store_key_cmp(prev, prev_len, e->key, e->key_len) == 0;
        int beyond = op->have_bound &&
                     gw_store_key_cmp(e->key, e->key_len, op->bound, op->bound_len) > 0;
        if (!dup) {
            prev = e->key; /* newest of its key (sorted newest first) */
            prev_len = e->key_len;
        }
        if (dup || beyond || ((e->flags & MSG_FLAG_TOMBSTONE) && !op->keep_tombstones))
            continue;
        if (op->n_live == op->limit) {
            op->trimmed = 1; /* a live key follows the page */
            continue;
        }
        if (op->n_live == op->cap_live) {
            op->cap_live = op->cap_live > 0 ? op->cap_live * 2 : 64;
            op->live = cn_realloc(op->live, op->cap_live * sizeof(*op->live));
        }
        op->live[op->n_live++] = *e;
        e->key = NULL; /* moved */
    }
}

/* Every node of this round answered: merge, then answer or read on. */
static void gw_store_list_finish(struct gw_store_op *op)
{
    struct gw_store_list_result res;
    memset(&res, 0, sizeof(res));
    if (op->fails >= CN_MIN(op->s->w, op->s->d)) {
        res.rc = op->last_rc;
        snprintf(res.err, sizeof(res.err), "%s", op->err);
        op->list_cb(&res, op->arg);
        gw_store_op_free(op);
        return;
    }
    gw_store_list_merge(op);
    gw_store_entries_free(op->ents, op->n_ents);
    op->ents = NULL;
    op->n_ents = op->cap_ents = 0;
    if (op->n_live < op->limit && op->have_bound) {
        /* only tombstones (or too few keys) so far: next page after the bound */
        char *after = op->bound;
        uint32_t after_len = op->bound_len;
        op->bound = NULL;
        op->have_bound = 0;
        gw_store_list_round(op, after, after_len);
        cn_free(after);
        return;
    }
    res.rc = CN_OK;
    res.ents = op->live;
    res.n_ents = op->n_live;
    res.more = op->have_bound || op->trimmed;
    op->list_cb(&res, op->arg);
    gw_store_op_free(op);
}

static void gw_store_on_list_reply(struct gw_storage_reply *r, void *arg)
{
    struct gw_store_op *op = arg;
    int rc = gw_store_reply_rc(op, r);
    if (rc == CN_OK) {
        gw_store_list_absorb(op, &r->m);
    } else {
        op->fails++;
        op->last_rc = rc == CN_NOTFOUND ? CN_IO : rc;
        CN_LOG(CN_LOG_WARN, "list failed: %s", op->err);
    }
    if (--op->outstanding == 0)
        gw_store_list_finish(op);
}

/* Asks every up node for its next page (tombstones included) after
 * `after`. Down nodes count as failed; when all are down they are asked
 * anyway. */
static void gw_store_list_round(struct gw_store_op *op, const void *after, size_t after_len)
{
    struct gw_store *s = op->s;
    uint32_t nodes = gw_store_member_count(s), up = 0;
    for (uint32_t k = 0; k < nodes; k++)
        up += !gw_store_node_down(s, gw_store_member(s, k));
    op->fails = 0;
    op->outstanding = 0;
    /* a page per node big enough that tombstones rarely need a second round */
    uint32_t node_limit = CN_MAX(op->limit, 100u);
    node_limit = CN_MIN(node_limit, 1000u);
    for (uint32_t k = 0; k < nodes; k++) {
        uint32_t i = gw_store_member(s, k);
        if (up > 0 && gw_store_node_down(s, i)) {
            op->fails++;
            op->last_rc = CN_IO;
            snprintf(op->err, sizeof(op->err), "node %u is down", i);
            continue;
        }
        op->outstanding++;
    }
    uint32_t to_send = op->outstanding;
    for (uint32_t k = 0; k < nodes && to_send > 0; k++) {
        uint32_t i = gw_store_member(s, k);
        if (up > 0 && gw_store_node_down(s, i))
            continue;
        struct msg m;
        msg_init_request(&m, MSG_OP_LIST, 0);
        m.prefix = (struct msg_bytes){(const uint8_t *)op->prefix, (uint32_t)op->prefix_len};
        MSG_SET(&m, MSG_F_PREFIX);
        if (after_len > 0) {
            m.after = (struct msg_bytes){after, (uint32_t)after_len};
            MSG_SET(&m, MSG_F_AFTER);
        }
        m.limit = node_limit;
        MSG_SET(&m, MSG_F_LIMIT);
        m.flags = MSG_LIST_TOMBSTONES;
        MSG_SET(&m, MSG_F_FLAGS);
        to_send--;
        gw_storage_client_send(s->client, i, &m, NULL, gw_store_on_list_reply, op);
    }
}

static void gw_store_list_start(struct gw_store *s, const void *prefix, size_t prefix_len,
                                const void *after, size_t after_len, uint32_t limit,
                                int keep_tombstones, gw_store_list_cb cb, void *arg)
{
    CN_ASSERT(limit >= 1);
    struct gw_store_op *op = gw_store_op_new(s, GW_STORE_LIST, NULL, 0);
    op->list_cb = cb;
    op->arg = arg;
    op->limit = limit;
    op->keep_tombstones = keep_tombstones;
    op->prefix = cn_memdup(prefix_len > 0 ? prefix : "", prefix_len);
    op->prefix_len = prefix_len;
    gw_store_list_round(op, after, after_len);
}

void gw_store_list(struct gw_store *s, const void *prefix, size_t prefix_len, const void *after,
                   size_t after_len, uint32_t limit, gw_store_list_cb cb, void *arg)
{
    gw_store_list_start(s, prefix, prefix_len, after, after_len, limit, 0, cb, arg);
}

void gw_store_list_all(struct gw_store *s, const void *prefix, size_t prefix_len,
                       const void *after, size_t after_len, uint32_t limit, gw_store_list_cb cb,
                       void *arg)
{
    gw_store_list_start(s, prefix, prefix_len, after, after_len, limit, 1, cb, arg);
}

void gw_store_configure(struct gw_store *s, const struct gw_store_options *o)
{
    CN_ASSERT(o->read_quorum >= 1 && o->read_quorum <= s->n);
    CN_ASSERT(o->delete_quorum >= 1 && o->delete_quorum <= s->n);
    s->r = o->read_quorum;
    s->d = o->delete_quorum;
    s->health = gw_storage_client_health(s->client);
    s->handoff = o->handoff;
    if (s->handoff != NULL && o->replay && s->replayer == NULL)
        s->replayer = gw_hint_replay_new(s, s->handoff, o->replay_interval_ms,
                                         o->replay_inflight);
}
