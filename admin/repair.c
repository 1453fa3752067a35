/* Anti-entropy repair, the full pass and the per-key repair: a k-way merge
 * of every node's sorted key stream (LIST with tombstones, one page per node
 * at a time), then per key a compare and, for stale replicas, a copy from a
 * holder of the newest version. Blocking protocol clients, one per node.
 * The digest pass (repair_digest.c) runs first unless --full. */
#include "repair.h"
#include "repair_int.h"

#include <stdio.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/crc.h"
#include "cn/ring.h"
#include "cn/time.h"
#include "cn/version.h"
#include "msg/client.h"

int adm_repair_send(struct adm_repair *rp, struct msg_client *c, struct msg *req,
                    char why[CN_ERR_LEN])
{
    req->id = ++rp->next_id;
    rp->counts->requests++;
    return msg_client_send(c, req, NULL, NULL, why) == CN_OK ? CN_OK : CN_IO;
}

int adm_repair_recv_any(struct adm_repair *rp, struct msg_client *c, int timeout_ms,
                        struct msg_reply *rep, char why[CN_ERR_LEN])
{
    int rc = msg_client_recv(c, rep, timeout_ms, why);
    if (rc == CN_OK)
        rp->counts->bytes_read += zmq_msg_size(&rep->hdr) +
                                  (rep->has_payload ? zmq_msg_size(&rep->payload) : 0);
    return rc;
}

int adm_repair_recv(struct adm_repair *rp, struct msg_client *c, uint64_t id,
                    struct msg_reply *rep, char why[CN_ERR_LEN])
{
    int timeout_ms = rp->o->timeout_ms;
    uint64_t deadline = cn_time_mono_us() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms) * 1000u;
    for (;;) {
        int left = -1;
        if (timeout_ms >= 0) {
            uint64_t now = cn_time_mono_us();
            left = now >= deadline ? 0 : (int)((deadline - now) / 1000u);
        }
        int rc = adm_repair_recv_any(rp, c, left, rep, why);
        if (rc != CN_OK || rep->m.id == id)
            return rc;
        msg_reply_release(rep);   /* a late answer to a request that timed out */
    }
}

int adm_repair_call(struct adm_repair *rp, struct msg_client *c, const struct msg *req,
                    struct msg_reply *rep, char why[CN_ERR_LEN])
{
    struct msg m = *req;
    if (adm_repair_send(rp, c, &m, why) != CN_OK)
        return CN_IO;
    return adm_repair_recv(rp, c, m.id, rep, why);
}

static void adm_repair_page_free(struct adm_repair_cursor *c)
{
    for (uint32_t i = 0; i < c->n; i++)
        cn_free(c->ents[i].key);
    cn_free(c->ents);
    c->ents = NULL;
    c->n = c->pos = 0;
}

/* Fetches the cursor's next page. CN_OK (possibly empty), CN_IO with err. */
static int adm_repair_fetch(struct adm_repair *rp, struct adm_repair_cursor *c,
                            char err[CN_ERR_LEN])
{
    struct msg req;
    struct msg_reply rep;
    msg_init_request(&req, MSG_OP_LIST, 0);
    req.prefix = (struct msg_bytes){(const uint8_t *)"", 0};
    MSG_SET(&req, MSG_F_PREFIX);
    if (c->after != NULL) {
        req.after = (struct msg_bytes){c->after, c->after_len};
        MSG_SET(&req, MSG_F_AFTER);
    }
    req.limit = ADM_REPAIR_PAGE;
    MSG_SET(&req, MSG_F_LIMIT);
    req.flags = MSG_LIST_TOMBSTONES;
    MSG_SET(&req, MSG_F_FLAGS);
    char why[CN_ERR_LEN];
    if (adm_repair_call(rp, c->c, &req, &rep, why) != CN_OK) {
        snprintf(err, CN_ERR_LEN, "%s: LIST: %s", c->address, why);
        return CN_IO;
    }
    int rc = CN_OK;
    if (rep.m.st != MSG_ST_OK) {
        snprintf(err, CN_ERR_LEN, "%s: LIST: %s", c->address, msg_status_str(rep.m.st));
        rc = CN_IO;
    } else {
        adm_repair_page_free(c);
        c->ents = cn_calloc(rep.m.n_ents + 1, sizeof(*c->ents));
        for (uint32_t i = 0; i < rep.m.n_ents; i++) {
            const struct msg_entry *e = &rep.m.ents[i];
            c->ents[i] = (struct adm_repair_ent){cn_memdup(e->key.ptr, e->key.len), e->key.len,
                                                 e->ts, e->ver, e->flags};
        }
        c->n = rep.m.n_ents;
        rp->counts->listed += rep.m.n_ents;
        c->more = rep.m.more && rep.m.n_ents > 0;
        if (c->n > 0) {
            cn_free(c->after);
            c->after = cn_memdup(c->ents[c->n - 1].key, c->ents[c->n - 1].key_len);
            c->after_len = c->ents[c->n - 1].key_len;
        }
    }
    msg_reply_release(&rep);
    return rc;
}

/* The cursor's current entry, fetching the next page when needed; NULL at
 * the end. */
static const struct adm_repair_ent *adm_repair_peek(struct adm_repair *rp,
                                                    struct adm_repair_cursor *c, int *rc,
                                                    char err[CN_ERR_LEN])
{
    if (c->pos == c->n && c->more)
        *rc = adm_repair_fetch(rp, c, err);
    return c->pos < c->n ? &c->ents[c->pos] : NULL;
}

int adm_repair_key_cmp(const uint8_t *a, uint32_t al, const uint8_t *b, uint32_t bl)
{
    uint32_t n = CN_MIN(al, bl);
    int c = n > 0 ? memcmp(a, b, n) : 0;   /* an empty key may be NULL */
    return c != 0 ? c : (al < bl ? -1 : al > bl);
}

/* Sends one write (PUT with payload, or DELETE) to node; counts it. */
static void adm_repair_write(struct adm_repair *rp, uint32_t node, struct msg *req)
{
    struct msg_reply rep;
    char why[CN_ERR_LEN];
    int rc = adm_repair_call(rp, rp->cur[node].c, req, &rep, why);
    if (rc == CN_OK && rep.m.st == MSG_ST_OK) {
        rp->counts->repaired++;
    } else {
        rp->counts->failed++;
        printf("repair: write to %s failed: %s\n", rp->cur[node].address,
               rc == CN_OK ? msg_status_str(rep.m.st) : why);
    }
    if (rc == CN_OK)
        msg_reply_release(&rep);
}

/* Copies the newest version of key from node src to the stale nodes. */
static void adm_repair_copy(struct adm_repair *rp, const struct adm_repair_ent *best,
                            uint32_t src, const uint32_t *stale, uint32_t n_stale)
{
    struct msg req;
    if (best->flags & MSG_FLAG_TOMBSTONE) {
        for (uint32_t i = 0; i < n_stale; i++) {
            msg_init_request(&req, MSG_OP_DELETE, 0);
            req.key = (struct msg_bytes){best->key, best->key_len};
            req.ts = best->ts;
            req.ver = best->ver;
            MSG_SET(&req, MSG_F_KEY);
            MSG_SET(&req, MSG_F_TS);
            MSG_SET(&req, MSG_F_VER);
            adm_repair_write(rp, stale[i], &req);
        }
        return;
    }
    struct msg_reply g;
    char why[CN_ERR_LEN];
    msg_init_request(&req, MSG_OP_GET, 0);
    req.key = (struct msg_bytes){best->key, best->key_len};
    MSG_SET(&req, MSG_F_KEY);
    if (adm_repair_call(rp, rp->cur[src].c, &req, &g, why) != CN_OK) {
        printf("repair: read from %s failed: %s\n", rp->cur[src].address, why);
        rp->counts->failed += n_stale;
        return;
    }
    const struct msg *m = &g.m;
    if (m->st != MSG_ST_OK || cn_crc32c(0, m->payload.ptr, m->payload.len) != m->crc) {
        /* changed meanwhile (deleted, rewritten) or corrupt: a later repair
         * sees the new state */
        printf("repair: read from %s: %s\n", rp->cur[src].address,
               m->st != MSG_ST_OK ? msg_status_str(m->st) : "crc mismatch");
        rp->counts->failed += n_stale;
        msg_reply_release(&g);
        return;
    }
    for (uint32_t i = 0; i < n_stale; i++) {
        msg_init_request(&req, MSG_OP_PUT, 0);
        req.key = (struct msg_bytes){best->key, best->key_len};
        req.crc = m->crc;
        req.ts = m->ts;
        req.ver = m->ver;
        MSG_SET(&req, MSG_F_KEY);
        MSG_SET(&req, MSG_F_CRC);
        MSG_SET(&req, MSG_F_TS);
        MSG_SET(&req, MSG_F_VER);
        if (MSG_HAS(m, MSG_F_ETAG)) {
            req.etag = m->etag;
            MSG_SET(&req, MSG_F_ETAG);
        }
        if (MSG_HAS(m, MSG_F_META)) {
            req.meta = m->meta;
            MSG_SET(&req, MSG_F_META);
        }
        req.payload = m->payload;
        rp->counts->bytes += m->payload.len;
        adm_repair_write(rp, stale[i], &req);
    }
    msg_reply_release(&g);
}

/* The records skip_unplaced leaves out (repair.h). */
static int adm_repair_unplaced(const char *key, size_t len)
{
    static const char *const names[] = {"s/cluster", "s/rebalance", "s/collector",
                                        "s/lifecycle"};
    for (size_t i = 0; i < CN_ARRAY_LEN(names); i++)
        if (len == strlen(names[i]) && memcmp(key, names[i], len) == 0)
            return 1;
    return 0;
}

void adm_repair_key(struct adm_repair *rp, const struct adm_repair_ent *const *have)
{
    const struct adm_repair_ent *best = NULL;
    uint32_t src = 0;
    for (uint32_t i = 0; i < rp->n; i++) {
        const struct adm_repair_ent *e = have[i];
        /* a copy marked corrupt is never the source */
        if (e != NULL && !(e->flags & MSG_FLAG_CORRUPT) &&
            (best == NULL || cn_version_newer(e->ts, e->ver, best->ts, best->ver))) {
            best = e;
            src = i;
        }
    }
    /* the version replicas are held to: the newest copy overall, or with
     * against_leaving the leaving nodes' newest (none: nothing at risk) */
    const struct adm_repair_ent *ref = best;
    if (rp->o->against_leaving) {
        ref = NULL;
        for (uint32_t i = 0; i < rp->n; i++) {
            const struct adm_repair_ent *e = have[i];
            if (e != NULL && !(e->flags & MSG_FLAG_CORRUPT) &&
                cn_cluster_node(rp->cl, i)->leaving &&
                (ref == NULL || cn_version_newer(e->ts, e->ver, ref->ts, ref->ver)))
                ref = e;
        }
        if (ref == NULL)
            return;
    }
    if (best == NULL) {   /* every copy listed is marked corrupt: none to copy */
        rp->counts->failed++;
        return;
    }
    if (rp->o->skip_unplaced && adm_repair_unplaced((const char *)best->key, best->key_len))
        return;
    if (rp->o->written_before_us != 0 && best->ts >= rp->o->written_before_us) {
        rp->counts->recent++;
        return;
    }
    if (rp->o->against_leaving)
        rp->counts->leaving_keys++;
    uint32_t replicas[CN_CLUSTER_MAX_NODES], stale[CN_CLUSTER_MAX_NODES], n_stale = 0;
    uint32_t nr = cn_ring_lookup(rp->ring, best->key, best->key_len, rp->o->replicas, replicas);
    for (uint32_t k = 0; k < nr; k++) {
        const struct adm_repair_ent *e = have[replicas[k]];
        if (e != NULL && !(e->flags & MSG_FLAG_CORRUPT) &&
            !cn_version_newer(ref->ts, ref->ver, e->ts, e->ver))
            continue;
        stale[n_stale++] = replicas[k];
        if (rp->o->verbose)
            printf("  differs: '%.*s' on %s (%s)\n", (int)best->key_len,
                   (const char *)best->key, rp->cur[replicas[k]].address,
                   e == NULL ? "missing" : (e->flags & MSG_FLAG_CORRUPT) ? "corrupt" : "older");
    }
    rp->counts->differences += n_stale;
    if (n_stale > 0 && !rp->o->dry_run)
        adm_repair_copy(rp, best, src, stale, n_stale);
}

/* The merge: repeatedly take the smallest current key over all cursors. */
static int adm_repair_merge(struct adm_repair *rp, char err[CN_ERR_LEN])
{
    const struct adm_repair_ent **have = cn_calloc(rp->n, sizeof(*have));
    int rc = CN_OK;
    for (;;) {
        const struct adm_repair_ent *min = NULL;
        for (uint32_t i = 0; i < rp->n && rc == CN_OK; i++) {
            have[i] = adm_repair_peek(rp, &rp->cur[i], &rc, err);
            if (have[i] != NULL && (min == NULL || adm_repair_key_cmp(have[i]->key,
                                    have[i]->key_len, min->key, min->key_len) < 0))
                min = have[i];
        }
        if (rc != CN_OK || min == NULL)
            break;
        for (uint32_t i = 0; i < rp->n; i++)
            if (have[i] != NULL && adm_repair_key_cmp(have[i]->key, have[i]->key_len, min->key,
                                                      min->key_len) != 0)
                have[i] = NULL;
        rp->counts->keys++;
        adm_repair_key(rp, have);
        for (uint32_t i = 0; i < rp->n; i++)
            if (have[i] != NULL)
                rp->cur[i].pos++;
    }
    cn_free(have);
    return rc;
}

int adm_repair_run(const struct cn_cluster *cl, const struct adm_repair_opts *o,
                   struct adm_repair_counts *out, char err[CN_ERR_LEN])
{
    memset(out, 0, sizeof(*out));
    struct adm_repair rp = {cl, o, NULL, NULL, cn_cluster_nodes(cl), out, 0};
    rp.ring = cn_cluster_ring(cl, o->vnodes, err);
    if (rp.ring == NULL)
        return CN_INVAL;
    void *zctx = zmq_ctx_new();
    rp.cur = cn_calloc(rp.n, sizeof(*rp.cur));
    struct msg_limits lim;
    msg_limits_default(&lim);
    lim.max_payload_len = 4ull << 30;
    int rc = CN_OK;
    for (uint32_t i = 0; i < rp.n && rc == CN_OK; i++) {
        rp.cur[i].address = cn_cluster_node(cl, i)->address;
        rp.cur[i].c = msg_client_new_curve(zctx, rp.cur[i].address, o->curve, err);
        if (rp.cur[i].c == NULL)
            rc = CN_IO;
        else
            msg_client_set_limits(rp.cur[i].c, &lim);
    }
    int full = o->full || o->against_leaving;   /* digests compare replica sets only */
    if (rc == CN_OK && !full) {
        out->digest = 1;
        rc = adm_repair_digest_run(&rp, err);
        if (rc == CN_NOTFOUND) {
            printf("repair: %s; running the full pass\n", err);
            memset(out, 0, sizeof(*out));
            full = 1;
            rc = CN_OK;
        }
    }
    for (uint32_t i = 0; i < rp.n && rc == CN_OK && full; i++)
        rc = adm_repair_fetch(&rp, &rp.cur[i], err);
    if (rc == CN_OK && full)
        rc = adm_repair_merge(&rp, err);
    for (uint32_t i = 0; i < rp.n; i++) {
        adm_repair_page_free(&rp.cur[i]);
        cn_free(rp.cur[i].after);
        if (rp.cur[i].c != NULL)
            msg_client_free(rp.cur[i].c);
    }
    cn_free(rp.cur);
    cn_ring_free(rp.ring);
    zmq_ctx_term(zctx);
    return rc;
}
