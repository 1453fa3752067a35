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
#include "cn/log.h"

#define GW_STORE_MAX_REPLICAS 16

struct gw_blob {
    atomic_int refs;
    struct evbuffer *buf;
    const void *data;
    size_t len;
    uint32_t crc;
};

struct gw_store {
    const struct cn_ring *ring;
    struct gw_storage_client *client;
    uint32_t n;
    uint32_t w;
};

enum gw_store_kind { GW_STORE_PUT, GW_STORE_DEL, GW_STORE_GET, GW_STORE_HEAD, GW_STORE_LIST };

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
    uint32_t acks, fails, not_found, corrupt;
    int last_rc;
    char err[CN_ERR_LEN];
    /* reads */
    char *key;
    size_t key_len;
    int whole;
    uint64_t off, len;
    /* lists */
    struct gw_store_entry *ents;
    uint32_t n_ents, cap_ents;
    int have_bound;
    char *bound;
    uint32_t bound_len;
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
    return s;
}

void gw_store_free(struct gw_store *s)
{
    cn_free(s);
}

static struct gw_store_op *gw_store_op_new(struct gw_store *s, enum gw_store_kind kind,
                                           const void *key, size_t key_len)
{
    struct gw_store_op *op = cn_calloc(1, sizeof(*op));
    op->s = s;
    op->kind = kind;
    op->last_rc = CN_NOTFOUND;
    if (key != NULL) {
        op->n_replicas = cn_ring_lookup(s->ring, key, key_len, s->n, op->replicas);
        op->key = cn_memdup(key, key_len);
        op->key_len = key_len;
    }
    return op;
}

static void gw_store_op_free(struct gw_store_op *op)
{
    for (uint32_t i = 0; i < op->n_ents; i++)
        cn_free(op->ents[i].key);
    cn_free(op->ents);
    cn_free(op->bound);
    cn_free(op->key);
    cn_free(op);
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
    default:
        snprintf(op->err, sizeof(op->err), "node %u: %s: %.*s", r->node,
                 msg_status_str(r->m.st), (int)r->m.err.len, (const char *)r->m.err.ptr);
        return CN_INVAL;
    }
}

/* ---- writes ---------------------------------------------------------- */

static void gw_store_on_write_reply(struct gw_storage_reply *r, void *arg)
{
    struct gw_store_op *op = arg;
    op->outstanding--;
    int rc = gw_store_reply_rc(op, r);
    if (rc == CN_OK) {
        op->acks++;
    } else {
        op->fails++;
        op->last_rc = rc;
        CN_LOG(CN_LOG_WARN, "replica write failed: %s", op->err);
    }
    /* Answer once every replica answered (or timed out), succeeding with W
     * acks: until read repair exists (replication issue), answering at the
     * W-th ack would let a read or listing that reaches the lagging replica
     * first miss the write. A dead node costs storage.request_timeout. */
    if (op->outstanding == 0 && op->acks >= op->s->w)
        gw_store_op_finish(op, CN_OK, NULL);
    else if (op->fails > op->n_replicas - op->s->w)
        gw_store_op_finish(op, op->last_rc == CN_NOTFOUND ? CN_IO : op->last_rc, NULL);
    if (op->outstanding == 0)
        gw_store_op_free(op);
}

void gw_store_put(struct gw_store *s, const struct gw_store_record *rec, struct gw_blob *data,
                  gw_store_cb cb, void *arg)
{
    struct gw_store_op *op = gw_store_op_new(s, GW_STORE_PUT, rec->key, rec->key_len);
    op->cb = cb;
    op->arg = arg;
    op->outstanding = op->n_replicas;
    for (uint32_t i = 0; i < op->n_replicas; i++) {
        struct msg m;
        msg_init_request(&m, MSG_OP_PUT, 0);
        m.key = (struct msg_bytes){rec->key, (uint32_t)rec->key_len};
        MSG_SET(&m, MSG_F_KEY);
        m.crc = data != NULL ? data->crc : 0;
        MSG_SET(&m, MSG_F_CRC);
        m.ver = rec->ver;
        m.ts = rec->ts;
        MSG_SET(&m, MSG_F_VER);
        MSG_SET(&m, MSG_F_TS);
        if (rec->etag != NULL) {
            m.etag = (struct msg_bytes){rec->etag, (uint32_t)rec->etag_len};
            MSG_SET(&m, MSG_F_ETAG);
        }
        if (rec->meta != NULL) {
            m.meta = (struct msg_bytes){rec->meta, (uint32_t)rec->meta_len};
            MSG_SET(&m, MSG_F_META);
        }
        struct gw_storage_payload pl = {"", 0, NULL, NULL};
        if (data != NULL) {
            gw_blob_ref(data);
            pl = (struct gw_storage_payload){data->data, data->len, gw_blob_zmq_free, data};
        }
        gw_storage_client_send(s->client, op->replicas[i], &m, &pl, gw_store_on_write_reply, op);
    }
}

void gw_store_delete(struct gw_store *s, const void *key, size_t key_len, uint64_t ver,
                     uint64_t ts, gw_store_cb cb, void *arg)
{
    struct gw_store_op *op = gw_store_op_new(s, GW_STORE_DEL, key, key_len);
    op->cb = cb;
    op->arg = arg;
    op->outstanding = op->n_replicas;
    for (uint32_t i = 0; i < op->n_replicas; i++) {
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

static void gw_store_on_read_reply(struct gw_storage_reply *r, void *arg)
{
    struct gw_store_op *op = arg;
    int rc = gw_store_reply_rc(op, r);
    if (rc == CN_OK && op->kind == GW_STORE_GET &&
        cn_crc32c(0, r->m.payload.ptr, r->m.payload.len) != r->m.crc) {
        snprintf(op->err, sizeof(op->err), "node %u: payload fails its crc", r->node);
        CN_LOG(CN_LOG_WARN, "%s", op->err);
        rc = CN_CORRUPT;
    }
    if (rc == CN_OK) {
        gw_store_op_finish(op, CN_OK, r);
        gw_store_op_free(op);
        return;
    }
    if (rc == CN_NOTFOUND && (r->m.flags & MSG_FLAG_TOMBSTONE)) {
        gw_store_op_finish(op, CN_NOTFOUND, NULL); /* deleted: authoritative */
        gw_store_op_free(op);
        return;
    }
    op->not_found += rc == CN_NOTFOUND;
    op->corrupt += rc == CN_CORRUPT;
    if (rc != CN_NOTFOUND)
        op->last_rc = rc;
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
    msg_init_request(&m, op->kind == GW_STORE_GET ? MSG_OP_GET : MSG_OP_HEAD, 0);
    m.key = (struct msg_bytes){(const uint8_t *)op->key, (uint32_t)op->key_len};
    MSG_SET(&m, MSG_F_KEY);
    if (op->kind == GW_STORE_GET && !op->whole) {
        m.off = op->off;
        m.len = op->len;
        MSG_SET(&m, MSG_F_OFF);
        MSG_SET(&m, MSG_F_LEN);
    }
    gw_storage_client_send(op->s->client, op->replicas[op->next++], &m, NULL,
                           gw_store_on_read_reply, op);
}

void gw_store_get(struct gw_store *s, const void *key, size_t key_len, int whole, uint64_t off,
                  uint64_t len, gw_store_cb cb, void *arg)
{
    struct gw_store_op *op = gw_store_op_new(s, GW_STORE_GET, key, key_len);
    op->cb = cb;
    op->arg = arg;
    op->whole = whole;
    op->off = off;
    op->len = len;
    gw_store_read_next(op);
}

void gw_store_head(struct gw_store *s, const void *key, size_t key_len, gw_store_cb cb,
                   void *arg)
{
    struct gw_store_op *op = gw_store_op_new(s, GW_STORE_HEAD, key, key_len);
    op->cb = cb;
    op->arg = arg;
    gw_store_read_next(op);
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
    if (a->ts != b->ts) /* newest first */
        return a->ts > b->ts ? -1 : 1;
    return a->ver > b->ver ? -1 : a->ver < b->ver;
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
        d->ver = e->ver;
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

/* All nodes answered: sort, de-duplicate, cut at the bound, call back. */
static void gw_store_list_finish(struct gw_store_op *op)
{
    struct gw_store_list_result res;
    memset(&res, 0, sizeof(res));
    if (op->fails >= op->s->n) {
        res.rc = op->last_rc;
        snprintf(res.err, sizeof(res.err), "%s", op->err);
        op->list_cb(&res, op->arg);
        return;
    }
    if (op->n_ents > 0)
        qsort(op->ents, op->n_ents, sizeof(*op->ents), gw_store_entry_cmp);
    uint32_t out = 0;
    for (uint32_t i = 0; i < op->n_ents; i++) {
        struct gw_store_entry *e = &op->ents[i];
        int dup = out > 0 && gw_store_key_cmp(op->ents[out - 1].key, op->ents[out - 1].key_len,
                                              e->key, e->key_len) == 0;
        int beyond = op->have_bound &&
                     gw_store_key_cmp(e->key, e->key_len, op->bound, op->bound_len) > 0;
        if (dup || beyond) {
            cn_free(e->key);
            continue;
        }
        op->ents[out++] = *e;
    }
    op->n_ents = out;
    res.rc = CN_OK;
    res.ents = op->ents;
    res.n_ents = out;
    res.more = op->have_bound;
    op->list_cb(&res, op->arg);
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
    if (--op->outstanding == 0) {
        gw_store_list_finish(op);
        gw_store_op_free(op);
    }
}

void gw_store_list(struct gw_store *s, const void *prefix, size_t prefix_len, const void *after,
                   size_t after_len, uint32_t limit, gw_store_list_cb cb, void *arg)
{
    struct gw_store_op *op = gw_store_op_new(s, GW_STORE_LIST, NULL, 0);
    op->list_cb = cb;
    op->arg = arg;
    uint32_t nodes = cn_ring_nodes(s->ring);
    op->outstanding = nodes;
    for (uint32_t i = 0; i < nodes; i++) {
        struct msg m;
        msg_init_request(&m, MSG_OP_LIST, 0);
        m.prefix = (struct msg_bytes){prefix, (uint32_t)prefix_len};
        MSG_SET(&m, MSG_F_PREFIX);
        if (after_len > 0) {
            m.after = (struct msg_bytes){after, (uint32_t)after_len};
            MSG_SET(&m, MSG_F_AFTER);
        }
        m.limit = limit;
        MSG_SET(&m, MSG_F_LIMIT);
        gw_storage_client_send(s->client, i, &m, NULL, gw_store_on_list_reply, op);
    }
}
