/* cairn-admin's record access on the nodes (records.h). */
#include "records.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include "cn/alloc.h"
#include "cn/crc.h"
#include "cn/hlc.h"
#include "cn/rc.h"
#include "msg/msg.h"

#define ADM_REC_PAGE 1000

void adm_rec_conn_init(struct adm_rec_conn *cx, const struct adm_keys_opts *o)
{
    cx->zctx = zmq_ctx_new();
    cx->n = cn_cluster_nodes(o->cl);
    cx->c = cn_calloc(cx->n > 0 ? cx->n : 1, sizeof(*cx->c));
}

void adm_rec_conn_fini(struct adm_rec_conn *cx)
{
    for (uint32_t i = 0; i < cx->n; i++)
        msg_client_free(cx->c[i]);
    cn_free(cx->c);
    zmq_ctx_term(cx->zctx);
}

int adm_rec_call(const struct adm_keys_opts *o, struct adm_rec_conn *cx, uint32_t node,
                 struct msg *req, struct msg_reply *rep, char err[CN_ERR_LEN])
{
    if (cx->c[node] == NULL) {
        const char *ep = cn_cluster_node(o->cl, node)->address;
        cx->c[node] = msg_client_new_curve(cx->zctx, ep, o->curve, err);
        if (cx->c[node] == NULL)
            return CN_IO;
    }
    int rc = msg_client_call(cx->c[node], req, rep, o->timeout_ms, err);
    if (rc != CN_OK) {   /* a late reply must not answer the next request */
        msg_client_free(cx->c[node]);
        cx->c[node] = NULL;
    }
    return rc;
}

/* Key order, the newest version of each first. */
static int adm_rec_ent_cmp(const void *a, const void *b)
{
    const struct adm_rec_ent *x = a, *y = b;
    size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
    int r = memcmp(x->key, y->key, n);
    if (r != 0)
        return r;
    if (x->key_len != y->key_len)
        return x->key_len < y->key_len ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts > y->ts ? -1 : 1;
    return x->ver > y->ver ? -1 : x->ver < y->ver;
}

static void adm_rec_push(struct adm_rec_set *s, const struct msg_entry *e, uint32_t node)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->v = cn_realloc(s->v, s->cap * sizeof(*s->v));
    }
    struct adm_rec_ent *x = &s->v[s->n++];
    memset(x, 0, sizeof(*x));
    memcpy(x->key, e->key.ptr, e->key.len);
    x->key_len = e->key.len;
    size_t el = e->etag.len <= ADM_REC_ETAG_MAX ? e->etag.len : 0;
    memcpy(x->etag, e->etag.ptr, el);
    x->ts = e->ts;
    x->ver = e->ver;
    x->flags = e->flags;
    x->node = node;
}

/* One node's listing of prefix appended to s. CN_OK or CN_IO with err. */
static int adm_rec_list_node(const struct adm_keys_opts *o, struct adm_rec_conn *cx,
                             uint32_t node, const char *prefix, size_t prefix_len, size_t max,
                             struct adm_rec_set *s, char err[CN_ERR_LEN])
{
    char after[ADM_REC_KEY_MAX];
    size_t after_len = 0;
    for (;;) {
        struct msg req;
        struct msg_reply rep;
        msg_init_request(&req, MSG_OP_LIST, 0);
        req.prefix = (struct msg_bytes){(const uint8_t *)prefix, (uint32_t)prefix_len};
        MSG_SET(&req, MSG_F_PREFIX);
        if (after_len > 0) {
            req.after = (struct msg_bytes){(const uint8_t *)after, (uint32_t)after_len};
            MSG_SET(&req, MSG_F_AFTER);
        }
        req.limit = ADM_REC_PAGE;
        MSG_SET(&req, MSG_F_LIMIT);
        req.flags = MSG_LIST_TOMBSTONES;
        MSG_SET(&req, MSG_F_FLAGS);
        if (adm_rec_call(o, cx, node, &req, &rep, err) != CN_OK)
            return CN_IO;
        if (rep.m.st != MSG_ST_OK) {
            snprintf(err, CN_ERR_LEN, "LIST: %s", msg_status_str(rep.m.st));
            msg_reply_release(&rep);
            return CN_IO;
        }
        for (uint32_t i = 0; i < rep.m.n_ents && s->n < max; i++) {
            const struct msg_entry *e = &rep.m.ents[i];
            if (e->key.len >= prefix_len && e->key.len <= ADM_REC_KEY_MAX &&
                memcmp(e->key.ptr, prefix, prefix_len) == 0)
                adm_rec_push(s, e, node);
        }
        int more = rep.m.more && rep.m.n_ents > 0;
        if (more) {
            const struct msg_entry *e = &rep.m.ents[rep.m.n_ents - 1];
            after_len = CN_MIN((size_t)e->key.len, sizeof(after));
            memcpy(after, e->key.ptr, after_len);
        }
        msg_reply_release(&rep);
        if (!more || s->n >= max)
            return CN_OK;
    }
}

int adm_rec_list(const struct adm_keys_opts *o, struct adm_rec_conn *cx, const char *prefix,
                 size_t prefix_len, int keep_tombstones, size_t max, struct adm_rec_set *s)
{
    memset(s, 0, sizeof(*s));
    for (uint32_t i = 0; i < cn_cluster_nodes(o->cl); i++) {
        char err[CN_ERR_LEN];
        if (adm_rec_list_node(o, cx, i, prefix, prefix_len, max, s, err) == CN_OK)
            s->answered++;
        else
            fprintf(stderr, "cairn-admin: %s: %s\n", cn_cluster_node(o->cl, i)->address, err);
    }
    if (s->n > 1)
        qsort(s->v, s->n, sizeof(*s->v), adm_rec_ent_cmp);
    size_t w = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (w > 0 && s->v[w - 1].key_len == s->v[i].key_len &&
            memcmp(s->v[w - 1].key, s->v[i].key, s->v[i].key_len) == 0)
            continue;   /* an older version of the key just kept */
        s->v[w++] = s->v[i];
    }
    s->n = w;
    if (!keep_tombstones) {
        w = 0;
        for (size_t i = 0; i < s->n; i++)
            if (!(s->v[i].flags & MSG_FLAG_TOMBSTONE))
                s->v[w++] = s->v[i];
        s->n = w;
    }
    return s->answered > 0 ? CN_OK : CN_IO;
}

int adm_rec_any(const struct adm_keys_opts *o, struct adm_rec_conn *cx, const char *prefix,
                size_t prefix_len)
{
    int answered = 0;
    for (uint32_t i = 0; i < cn_cluster_nodes(o->cl); i++) {
        struct msg req;
        struct msg_reply rep;
        char err[CN_ERR_LEN];
        msg_init_request(&req, MSG_OP_LIST, 0);
        req.prefix = (struct msg_bytes){(const uint8_t *)prefix, (uint32_t)prefix_len};
        MSG_SET(&req, MSG_F_PREFIX);
        req.limit = 1;
        MSG_SET(&req, MSG_F_LIMIT);
        if (adm_rec_call(o, cx, i, &req, &rep, err) != CN_OK)
            continue;
        int found = rep.m.st == MSG_ST_OK && rep.m.n_ents > 0;
        answered |= rep.m.st == MSG_ST_OK;
        msg_reply_release(&rep);
        if (found)
            return 1;
    }
    return answered ? 0 : -1;
}

int adm_rec_get(const struct adm_keys_opts *o, struct adm_rec_conn *cx, uint32_t node,
                const char *key, size_t key_len, struct msg_reply *rep, char err[CN_ERR_LEN])
{
    struct msg req;
    msg_init_request(&req, MSG_OP_GET, 0);
    req.key = (struct msg_bytes){(const uint8_t *)key, (uint32_t)key_len};
    MSG_SET(&req, MSG_F_KEY);
    if (adm_rec_call(o, cx, node, &req, rep, err) != CN_OK)
        return CN_IO;
    if (rep->m.st == MSG_ST_OK)
        return CN_OK;
    int rc = rep->m.st == MSG_ST_NOT_FOUND ? CN_NOTFOUND : CN_IO;
    snprintf(err, CN_ERR_LEN, "GET: %s", msg_status_str(rep->m.st));
    msg_reply_release(rep);
    return rc;
}

uint32_t adm_rec_put(const struct adm_keys_opts *o, const struct adm_rec_write *w,
                     uint32_t *n_rep)
{
    uint32_t nodes[16];
    uint32_t n = cn_ring_lookup(o->ring, w->key, w->key_len, o->replicas, nodes);
    *n_rep = n;
    struct adm_rec_conn cx;
    adm_rec_conn_init(&cx, o);
    uint32_t acks = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct msg req;
        struct msg_reply rep;
        char err[CN_ERR_LEN];
        msg_init_request(&req, w->del ? MSG_OP_DELETE : MSG_OP_PUT, 0);
        req.key = (struct msg_bytes){(const uint8_t *)w->key, (uint32_t)w->key_len};
        req.ts = w->ts;
        req.ver = w->ts;
        MSG_SET(&req, MSG_F_KEY);
        MSG_SET(&req, MSG_F_TS);
        MSG_SET(&req, MSG_F_VER);
        if (!w->del) {
            const void *p = w->payload != NULL ? w->payload : "";
            req.crc = cn_crc32c(0, p, w->len);
            MSG_SET(&req, MSG_F_CRC);
            req.etag = w->etag != NULL ? (struct msg_bytes){(const uint8_t *)w->etag,
                                                            (uint32_t)w->etag_len}
                                       : (struct msg_bytes){(const uint8_t *)"", 0};
            MSG_SET(&req, MSG_F_ETAG);
            if (w->meta != NULL) {
                req.meta = (struct msg_bytes){w->meta, (uint32_t)w->meta_len};
                MSG_SET(&req, MSG_F_META);
            }
            req.payload = (struct msg_bytes){p, (uint32_t)w->len};
        }
        if (adm_rec_call(o, &cx, nodes[i], &req, &rep, err) != CN_OK) {
            fprintf(stderr, "cairn-admin: %s: %s\n", cn_cluster_node(o->cl, nodes[i])->address,
                    err);
            continue;
        }
        if (rep.m.st == MSG_ST_OK)
            acks++;
        else
            fprintf(stderr, "cairn-admin: %s: %s\n", cn_cluster_node(o->cl, nodes[i])->address,
                    msg_status_str(rep.m.st));
        msg_reply_release(&rep);
    }
    adm_rec_conn_fini(&cx);
    return acks;
}

uint64_t adm_rec_next_ts(uint64_t newest)
{
    uint64_t now = cn_hlc_now(cn_hlc_default());
    return now > newest ? now : newest + 1;
}
