/* DIGEST (protocol 1.1, PROTOCOL.md): walk the index from `after` in key
 * order, put each record (tombstones included) whose ring hash lies in the
 * request's arcs into its sub-range, and sum the record digests
 * (msg/digest.h). The walk stops past `upto` or after max_digest_scan
 * index entries; then only the sub-ranges before the one it stopped in are
 * answered and `more` is set. With `limit`, the records counted are also
 * kept (at most limit) and sent as `ents` when the whole range fits. */
#include "digest.h"

#include <string.h>

#include "cn/alloc.h"
#include "cn/ring.h"
#include "handler.h"
#include "msg/digest.h"
#include "store.h"

struct sn_digest_walk {
    struct msg_digest_split sp;
    struct msg_digest_sum sums[MSG_DIGEST_MAX_FANOUT];
    const struct msg_digest_arc *arcs;
    uint32_t n_arcs;
    int has_arcs;
    const struct msg_bytes *upto;   /* NULL: no upper bound */
    uint32_t idx;                   /* sub-range of the last key seen */
    uint32_t scanned, max_scan;
    uint32_t complete;              /* sub-ranges answered */
    int more;                       /* stopped by the scan cap */
    uint8_t *lo, *hi;               /* first and last key counted (owned) */
    uint32_t lo_len, hi_len, hi_cap;
    struct msg_entry *ents;         /* with `limit`: the records counted, while */
    uint32_t n_ents, max_ents;      /* they number at most max_ents */
    int ents_over;
};

/* Keeps a counted record for the reply's ents (key and etag copied). */
static void sn_digest_keep(struct sn_digest_walk *w, const uint8_t *key, uint32_t klen,
                           const struct sn_ival *v)
{
    if (w->ents == NULL || w->ents_over)
        return;
    if (w->n_ents == w->max_ents) {
        w->ents_over = 1;
        return;
    }
    /* the folded form whatever the request's version: what was digested */
    sn_handler_entry(&w->ents[w->n_ents++], 1, key, klen, v);
}

static int sn_digest_key_cmp(const uint8_t *a, uint32_t al, const uint8_t *b, uint32_t bl)
{
    uint32_t n = CN_MIN(al, bl);
    int c = n > 0 ? memcmp(a, b, n) : 0;   /* an empty bin may be NULL */
    return c != 0 ? c : (al < bl ? -1 : al > bl);
}

/* Per index entry after `after`, in order: 1 stops the walk. */
static int sn_digest_walk_cb(void *arg, const uint8_t *key, uint32_t klen,
                             const struct sn_ival *v)
{
    struct sn_digest_walk *w = arg;
    if (w->upto != NULL && sn_digest_key_cmp(key, klen, w->upto->ptr, w->upto->len) > 0)
        return 1;
    w->idx = msg_digest_split_index(&w->sp, w->idx, key, klen);
    if (w->scanned == w->max_scan) {
        w->more = 1;   /* this key's sub-range is not complete */
        w->complete = w->idx;
        return 1;
    }
    w->scanned++;
    if (w->has_arcs && !msg_digest_arcs_contain(w->arcs, w->n_arcs, cn_ring_hash(key, klen)))
        return 0;
    uint64_t h[2];
    /* a record with osize is digested in its folded form, so that a copy
     * written by a client of version 2 (or to a node of version 2) sums
     * the same */
    uint8_t folded[MSG_ETAG_FOLD_MAX];
    uint32_t with_osize;
    struct msg_bytes etag = sn_handler_etag(1, v->etag, v->etag_len, v->has_osize, v->osize,
                                            folded, &with_osize);
    msg_digest_record(key, klen, v->ts, v->ver, v->flags, v->data_len, etag.ptr, etag.len, h);
    msg_digest_sum_add(&w->sums[w->idx], h);
    sn_digest_keep(w, key, klen, v);
    if (w->lo == NULL) {
        w->lo = cn_memdup(key, klen);
        w->lo_len = klen;
    }
    if (klen > w->hi_cap) {
        cn_free(w->hi);
        w->hi = cn_malloc(klen);
        w->hi_cap = klen;
    }
    memcpy(w->hi, key, klen);
    w->hi_len = klen;
    return 0;
}

/* Checks the request; fills w's split and arcs. NULL or the error text. */
static const char *sn_digest_check(const struct msg *q, struct sn_digest_walk *w,
                                   struct msg_digest_arc *arcs)
{
    if (q->fanout < 1 || q->fanout > MSG_DIGEST_MAX_FANOUT)
        return "fanout must be 1 to 256";
    const uint8_t *a = MSG_HAS(q, MSG_F_AFTER) ? q->after.ptr : (const uint8_t *)"";
    uint32_t alen = MSG_HAS(q, MSG_F_AFTER) ? q->after.len : 0;
    if (MSG_HAS(q, MSG_F_UPTO)) {
        if (sn_digest_key_cmp(q->upto.ptr, q->upto.len, a, alen) <= 0)
            return "upto must sort after after";
        w->upto = &q->upto;
    }
    if (MSG_HAS(q, MSG_F_ARCS)) {
        if (msg_digest_arcs_unpack(&q->arcs, arcs, MSG_DIGEST_MAX_ARCS, &w->n_arcs) != CN_OK)
            return "arcs must be sorted disjoint (first, last) pairs of u64";
        w->arcs = arcs;
        w->has_arcs = 1;
    }
    msg_digest_split_init(&w->sp, a, alen, MSG_HAS(q, MSG_F_UPTO) ? q->upto.ptr : NULL,
                          MSG_HAS(q, MSG_F_UPTO) ? q->upto.len : 0, MSG_HAS(q, MSG_F_UPTO),
                          q->fanout);
    return NULL;
}

void sn_digest_handle(struct sn_job *j)
{
    const struct msg *q = &j->req;
    struct sn_digest_walk *w = cn_calloc(1, sizeof(*w));
    struct msg_digest_arc *arcs = cn_calloc(MSG_DIGEST_MAX_ARCS, sizeof(*arcs));
    uint8_t *packed = NULL;
    w->max_scan = sn_server_opts(j->srv)->max_digest_scan;
    if (w->max_scan == 0)   /* opts built without it (tests): the documented default */
        w->max_scan = 100000;
    const char *bad = sn_digest_check(q, w, arcs);
    if (bad != NULL) {
        sn_server_reply_error(j, MSG_ST_BAD_REQUEST, bad);
        goto out;
    }
    w->complete = q->fanout;
    if (MSG_HAS(q, MSG_F_LIMIT)) {
        w->max_ents = q->limit;
        w->ents = cn_calloc((size_t)q->limit + 1, sizeof(*w->ents));
    }
    char err[CN_ERR_LEN];
    int more_keys = 0;
    int rc = sn_store_list_ex(sn_server_store(j->srv), (const uint8_t *)"", 0,
                              MSG_HAS(q, MSG_F_AFTER) ? q->after.ptr : NULL,
                              MSG_HAS(q, MSG_F_AFTER) ? q->after.len : 0, UINT32_MAX, 1,
                              sn_digest_walk_cb, w, &more_keys, err);
    if (rc != CN_OK) {
        sn_server_reply_error(j, sn_handler_status(rc), err);
        goto out;
    }
    struct msg rep;
    msg_init_reply(&rep, q, MSG_ST_OK);
    packed = cn_malloc((size_t)w->complete * MSG_DIGEST_SUM_LEN + 1);
    msg_digest_sums_pack(w->sums, w->complete, packed);
    rep.sums = (struct msg_bytes){packed, w->complete * MSG_DIGEST_SUM_LEN};
    rep.more = (uint32_t)w->more;
    MSG_SET(&rep, MSG_F_SUMS);
    MSG_SET(&rep, MSG_F_MORE);
    int with_ents = !w->more && w->ents != NULL && !w->ents_over;
    uint32_t nonempty = 0;
    for (uint32_t i = 0; i < w->complete; i++)
        nonempty += w->sums[i].count > 0;
    /* lo and hi serve to narrow a range whose records all fell in one
     * sub-range: only then, only for a whole answer, and not with ents */
    if (!w->more && w->lo != NULL && !with_ents && nonempty <= 1) {
        rep.lo = (struct msg_bytes){w->lo, w->lo_len};
        rep.hi = (struct msg_bytes){w->hi, w->hi_len};
        MSG_SET(&rep, MSG_F_LO);
        MSG_SET(&rep, MSG_F_HI);
    }
    if (with_ents) {
        rep.ents = w->ents;
        rep.n_ents = w->n_ents;
        MSG_SET(&rep, MSG_F_ENTS);
    }
    sn_server_reply(j, &rep, NULL, NULL, 0);
out:
    for (uint32_t i = 0; i < w->n_ents; i++)
        cn_free((void *)(uintptr_t)w->ents[i].key.ptr);
    cn_free(w->ents);
    cn_free(packed);
    cn_free(w->lo);
    cn_free(w->hi);
    cn_free(w);
    cn_free(arcs);
}
