/* One key's repair as a small state machine: HEAD every replica, then (if
 * some are stale) GET the newest from a holder, then PUT or DELETE it to
 * the stale ones. The op frees itself after its last reply. */
#include "repair.h"

#include <stdio.h>
#include <string.h>

#include "cluster_metrics.h"

#include "cn/alloc.h"
#include "cn/crc.h"
#include "cn/log.h"
#include "cn/version.h"

enum gw_repair_state { GW_REPAIR_ERR, GW_REPAIR_ABSENT, GW_REPAIR_LIVE, GW_REPAIR_TOMB };

struct gw_repair_replica {
    uint32_t node;
    enum gw_repair_state state;
    uint64_t ts, ver;
    int stale;
    int extra;           /* not a replica: a source only (gw_repair_key_from) */
};

struct gw_repair_op {
    struct gw_store *s;
    char *key;
    size_t key_len;
    gw_repair_cb cb;
    void *arg;
    struct gw_repair_replica rep[GW_REPAIR_MAX_REPLICAS];
    uint32_t n;
    uint32_t outstanding;
    int newest;          /* index into rep of the newest holder, -1: none */
    uint32_t next_src;   /* GET: the next holder to try */
    uint64_t len;        /* the copied record's data length */
    struct gw_repair_result res;
};

int gw_repair_result_failed(const struct gw_repair_result *res, uint32_t node)
{
    for (uint32_t i = 0; i < res->n_failed; i++)
        if (res->failed[i] == node)
            return 1;
    return 0;
}

static void gw_repair_fail_node(struct gw_repair_op *op, uint32_t node)
{
    if (!gw_repair_result_failed(&op->res, node) && op->res.n_failed < GW_REPAIR_MAX_REPLICAS)
        op->res.failed[op->res.n_failed++] = node;
}

static void gw_repair_finish(struct gw_repair_op *op)
{
    op->res.rc = op->res.n_failed == 0 ? CN_OK : CN_IO;
    if (op->res.written > 0)
        CN_LOG(CN_LOG_DEBUG, "repair: %u of %u replicas rewritten", op->res.written, op->n);
    if (op->cb != NULL)
        op->cb(&op->res, op->arg);
    cn_free(op->key);
    cn_free(op);
}

/* ---- phase 3: writes to the stale replicas ---------------------------- */

static void gw_repair_on_write(struct gw_storage_reply *r, void *arg)
{
    struct gw_repair_op *op = arg;
    if (r->rc == CN_OK && r->m.st == MSG_ST_OK) {
        op->res.written++;
        op->res.bytes += op->len;
    } else
        gw_repair_fail_node(op, r->node);
    if (--op->outstanding == 0)
        gw_repair_finish(op);
}

/* Sends the tombstone (ts, ver) to every stale replica. */
static void gw_repair_send_tombstones(struct gw_repair_op *op, uint64_t ts, uint64_t ver)
{
    for (uint32_t i = 0; i < op->n; i++) {
        if (!op->rep[i].stale)
            continue;
        struct msg m;
        msg_init_request(&m, MSG_OP_DELETE, 0);
        m.key = (struct msg_bytes){(const uint8_t *)op->key, (uint32_t)op->key_len};
        m.ts = ts;
        m.ver = ver;
        MSG_SET(&m, MSG_F_KEY);
        MSG_SET(&m, MSG_F_TS);
        MSG_SET(&m, MSG_F_VER);
        op->outstanding++;
        gw_cluster_metrics_repair_write(op->rep[i].node, op->cb != NULL);
        gw_storage_client_send(gw_store_client(op->s), op->rep[i].node, &m, NULL,
                               gw_repair_on_write, op);
    }
}

/* Sends the record of the GET reply r to every stale replica. */
static void gw_repair_send_records(struct gw_repair_op *op, struct gw_storage_reply *r)
{
    const struct msg *g = &r->m;
    struct gw_store_record rec = {
        .key = op->key, .key_len = op->key_len, .ver = g->ver, .ts = g->ts,
    };
    gw_store_record_from_reply(&rec, g);
    struct evbuffer *buf = evbuffer_new();
    gw_storage_reply_move_payload(r, buf);
    struct gw_blob *data = gw_blob_from_evbuffer(buf);
    op->len = gw_blob_len(data);
    for (uint32_t i = 0; i < op->n; i++) {
        if (!op->rep[i].stale)
            continue;
        op->outstanding++;
        gw_cluster_metrics_repair_write(op->rep[i].node, op->cb != NULL);
        gw_store_send_record(op->s, op->rep[i].node, &rec, data, gw_repair_on_write, op);
    }
    gw_blob_unref(data);
}

/* ---- phase 2: read the newest version -------------------------------- */

static void gw_repair_fetch(struct gw_repair_op *op);

static void gw_repair_on_get(struct gw_storage_reply *r, void *arg)
{
    struct gw_repair_op *op = arg;
    op->outstanding--;
    const struct msg *g = &r->m;
    int ok = r->rc == CN_OK && g->st == MSG_ST_OK && MSG_HAS(g, MSG_F_TS) &&
             MSG_HAS(g, MSG_F_VER) && MSG_HAS(g, MSG_F_CRC) &&
             cn_crc32c(0, g->payload.ptr, g->payload.len) == g->crc;
    if (ok) {
        gw_repair_send_records(op, r);
    } else if (r->rc == CN_OK && g->st == MSG_ST_NOT_FOUND && (g->flags & MSG_FLAG_TOMBSTONE)) {
        gw_repair_send_tombstones(op, g->ts, g->ver); /* deleted meanwhile */
    } else {
        gw_repair_fetch(op);
        return;
    }
    if (op->outstanding == 0)
        gw_repair_finish(op);
}

/* GETs the whole record from the next replica that holds the newest
 * version; when none is left, the stale replicas count as failed. */
static void gw_repair_fetch(struct gw_repair_op *op)
{
    const struct gw_repair_replica *best = &op->rep[op->newest];
    while (op->next_src < op->n) {
        const struct gw_repair_replica *c = &op->rep[op->next_src++];
        if (c->state != GW_REPAIR_LIVE || c->ts != best->ts || c->ver != best->ver)
            continue;
        struct msg m;
        msg_init_request(&m, MSG_OP_GET, 0);
        m.key = (struct msg_bytes){(const uint8_t *)op->key, (uint32_t)op->key_len};
        MSG_SET(&m, MSG_F_KEY);
        op->outstanding++;
        gw_storage_client_send(gw_store_client(op->s), c->node, &m, NULL, gw_repair_on_get, op);
        return;
    }
    for (uint32_t i = 0; i < op->n; i++)
        if (op->rep[i].stale)
            gw_repair_fail_node(op, op->rep[i].node);
    gw_repair_finish(op);
}

/* ---- phase 1: every replica's version -------------------------------- */

/* All HEADs answered: mark the stale replicas and start the copy. */
static void gw_repair_compare(struct gw_repair_op *op)
{
    op->newest = -1;
    for (uint32_t i = 0; i < op->n; i++) {
        const struct gw_repair_replica *c = &op->rep[i];
        if ((c->state == GW_REPAIR_LIVE || c->state == GW_REPAIR_TOMB) &&
            (op->newest < 0 || cn_version_newer(c->ts, c->ver, op->rep[op->newest].ts,
                                                op->rep[op->newest].ver)))
            op->newest = (int)i;
    }
    if (op->newest < 0) {
        gw_repair_finish(op);
        return;
    }
    const struct gw_repair_replica *best = &op->rep[op->newest];
    op->res.newest_live = best->state == GW_REPAIR_LIVE;
    op->res.newest_ts = best->ts;
    op->res.newest_ver = best->ver;
    for (uint32_t i = 0; i < op->n; i++) {
        struct gw_repair_replica *c = &op->rep[i];
        if (c->extra) {
            if (c->state == GW_REPAIR_LIVE || c->state == GW_REPAIR_TOMB) {
                uint32_t k = op->res.n_extra_held++;
                op->res.extra_held[k] = c->node;
                op->res.extra_ts[k] = c->ts;
                op->res.extra_ver[k] = c->ver;
            }
            continue;
        }
        c->stale = c->state == GW_REPAIR_ABSENT ||
                   ((c->state == GW_REPAIR_LIVE || c->state == GW_REPAIR_TOMB) &&
                    cn_version_newer(best->ts, best->ver, c->ts, c->ver));
        op->res.stale += (uint32_t)c->stale;
    }
    if (op->res.stale == 0) {
        gw_repair_finish(op);
        return;
    }
    if (best->state == GW_REPAIR_TOMB) {
        gw_repair_send_tombstones(op, best->ts, best->ver);
        return;
    }
    op->next_src = 0;
    gw_repair_fetch(op);
}

static void gw_repair_on_head(struct gw_storage_reply *r, void *arg)
{
    struct gw_repair_op *op = arg;
    struct gw_repair_replica *c = NULL;
    for (uint32_t i = 0; i < op->n; i++)
        if (op->rep[i].node == r->node)
            c = &op->rep[i];
    CN_ASSERT(c != NULL);
    const struct msg *m = &r->m;
    if (r->rc == CN_OK && m->st == MSG_ST_OK && MSG_HAS(m, MSG_F_TS) && MSG_HAS(m, MSG_F_VER)) {
        c->state = GW_REPAIR_LIVE;
    } else if (r->rc == CN_OK && m->st == MSG_ST_NOT_FOUND) {
        int tomb = (m->flags & MSG_FLAG_TOMBSTONE) && MSG_HAS(m, MSG_F_TS);
        c->state = tomb ? GW_REPAIR_TOMB : GW_REPAIR_ABSENT;
    } else if (r->rc == CN_OK && m->st == MSG_ST_CORRUPT) {
        /* the node marked its copy corrupt: it takes the newest version
         * again, even one with the same (ts, ver) (docs/cluster.md) */
        c->state = GW_REPAIR_ABSENT;
    } else {
        c->state = GW_REPAIR_ERR;
        if (!c->extra)   /* an extra node is a possible source, not a replica to fix */
            gw_repair_fail_node(op, r->node);
    }
    c->ts = m->ts;
    c->ver = m->ver;
    if (--op->outstanding == 0)
        gw_repair_compare(op);
}

void gw_repair_key(struct gw_store *s, const void *key, size_t key_len, gw_repair_cb cb,
                   void *arg)
{
    gw_repair_key_from(s, key, key_len, NULL, 0, cb, arg);
}

void gw_repair_key_from(struct gw_store *s, const void *key, size_t key_len,
                        const uint32_t *extra, uint32_t n_extra, gw_repair_cb cb, void *arg)
{
    struct gw_repair_op *op = cn_calloc(1, sizeof(*op));
    op->s = s;
    op->key = cn_memdup(key, key_len);
    op->key_len = key_len;
    op->cb = cb;
    op->arg = arg;
    uint32_t nodes[GW_REPAIR_MAX_REPLICAS];
    op->n = gw_store_replicas(s, key, key_len, nodes, GW_REPAIR_MAX_REPLICAS);
    uint32_t n_rep = op->n;
    for (uint32_t j = 0; j < n_extra && op->n < GW_REPAIR_MAX_REPLICAS; j++) {
        int dup = 0;
        for (uint32_t i = 0; i < op->n; i++)
            dup |= nodes[i] == extra[j];
        if (!dup)
            nodes[op->n++] = extra[j];
    }
    op->outstanding = op->n;
    for (uint32_t i = 0; i < op->n; i++) {
        op->rep[i].node = nodes[i];
        op->rep[i].extra = i >= n_rep;
    }
    for (uint32_t i = 0; i < op->n; i++) {
        struct msg m;
        msg_init_request(&m, MSG_OP_HEAD, 0);
        m.key = (struct msg_bytes){(const uint8_t *)op->key, (uint32_t)key_len};
        MSG_SET(&m, MSG_F_KEY);
        gw_storage_client_send(gw_store_client(s), nodes[i], &m, NULL, gw_repair_on_head, op);
    }
}
