/* The digest pass of cairn-admin repair: repair by difference. The ring's
 * points are grouped by the set of N nodes they replicate to; for each such
 * replica set, the arcs of the hash space it holds are sent with every
 * DIGEST request, so each node sums exactly the keys the set shares. Ranges
 * are compared top-down (a stack, depth first): equal sums end a branch, a
 * differing sub-range is split again (DIGEST) until it holds at most
 * leaf_keys records, and only then are its records fetched (DIGEST with
 * limit, else LIST) and repaired key by key (adm_repair_key). Up to
 * ADM_DIGEST_BATCH ranges are asked of every member at once. Memory: the
 * stack holds at most about ADM_DIGEST_MAX_DEPTH * ADM_DIGEST_BATCH * fanout
 * ranges of two keys each, plus the batch's answers (6 KiB per range and
 * member) and one leaf's records. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "repair_int.h"

#include "cn/alloc.h"
#include "cn/time.h"
#include "msg/digest.h"

#define ADM_DIGEST_FANOUT 64
#define ADM_DIGEST_LEAF_KEYS 4
#define ADM_DIGEST_MAX_DEPTH 64
#define ADM_DIGEST_BATCH 16     /* ranges asked at once */

/* A replica set (node indexes, ascending) and the ring arcs it holds. */
struct adm_digest_set {
    uint32_t members[CN_CLUSTER_MAX_NODES];
    uint32_t n_members;
    struct msg_digest_arc *arcs;
    uint32_t n_arcs, cap;
};

/* A key range (after, upto] to compare; after empty: from the first key. */
struct adm_digest_range {
    uint8_t *after, *upto;
    uint32_t alen, ulen;
    int has_upto;
    uint32_t depth;
    uint64_t most;   /* the most records a member had in it (0: unknown) */
};

/* One member's answer for a range. */
struct adm_digest_answer {
    struct msg_digest_sum sums[MSG_DIGEST_MAX_FANOUT];
    uint32_t n;
    int more;
    uint8_t *lo, *hi;   /* owned; NULL when absent */
    uint32_t lo_len, hi_len;
};

struct adm_digest {
    struct adm_repair *rp;
    const struct adm_digest_set *set;
    const uint8_t *arcs;         /* packed arcs of this chunk; NULL: no filter */
    uint32_t arcs_len;
    uint32_t fanout, leaf_keys;  /* the most sub-ranges per DIGEST; a leaf's records */
    uint32_t cur;                /* the fanout of the range being compared */
    struct adm_digest_range *stack;
    uint32_t n_stack, cap_stack;
    struct adm_digest_range *leaves;   /* differing leaves of the current batch */
    uint32_t n_leaves, cap_leaves;
    struct adm_digest_answer *ans;   /* the range handled now: one per member */
    struct adm_digest_answer *all_ans;   /* ADM_DIGEST_BATCH ranges x members */
    int first_request;           /* no DIGEST answered yet in this run */
    uint64_t last_progress_us;
};

/* ---- replica sets ---- */

static int adm_digest_u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int adm_digest_arc_cmp(const void *a, const void *b)
{
    const struct msg_digest_arc *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

static void adm_digest_set_add_arc(struct adm_digest_set *s, uint64_t first, uint64_t last)
{
    if (s->n_arcs == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->arcs = cn_realloc(s->arcs, s->cap * sizeof(*s->arcs));
    }
    s->arcs[s->n_arcs++] = (struct msg_digest_arc){first, last};
}

/* Groups the ring's points by replica set; returns the sets (caller frees
 * each arcs and the array), arcs sorted and merged. */
static struct adm_digest_set *adm_digest_sets(const struct cn_ring *r, uint32_t replicas,
                                              uint32_t *n_out)
{
    uint32_t points = cn_ring_total_points(r), n = 0;
    struct adm_digest_set *sets = cn_calloc(points, sizeof(*sets));
    for (uint32_t i = 0; i < points; i++) {
        struct adm_digest_set cur = {0};
        cur.n_members = cn_ring_replicas_at(r, i, replicas, cur.members);
        qsort(cur.members, cur.n_members, sizeof(uint32_t), adm_digest_u32_cmp);
        uint32_t k = 0;
        while (k < n && (sets[k].n_members != cur.n_members ||
                         memcmp(sets[k].members, cur.members, cur.n_members * sizeof(uint32_t))))
            k++;
        if (k == n)
            sets[n++] = cur;
        uint64_t prev = cn_ring_point_hash(r, i == 0 ? points - 1 : i - 1);
        uint64_t h = cn_ring_point_hash(r, i);
        if (i == 0) {   /* point 0 also takes the hashes above the last point */
            if (prev != UINT64_MAX)
                adm_digest_set_add_arc(&sets[k], prev + 1, UINT64_MAX);
            adm_digest_set_add_arc(&sets[k], 0, h);
        } else if (prev != h) {
            adm_digest_set_add_arc(&sets[k], prev + 1, h);
        }
    }
    for (uint32_t k = 0; k < n; k++) {
        struct adm_digest_set *s = &sets[k];
        qsort(s->arcs, s->n_arcs, sizeof(*s->arcs), adm_digest_arc_cmp);
        uint32_t m = 0;
        for (uint32_t i = 0; i < s->n_arcs; i++) {
            if (m > 0 && s->arcs[m - 1].last != UINT64_MAX &&
                s->arcs[m - 1].last + 1 == s->arcs[i].first)
                s->arcs[m - 1].last = s->arcs[i].last;
            else
                s->arcs[m++] = s->arcs[i];
        }
        s->n_arcs = m;
    }
    *n_out = n;
    return sets;
}

/* ---- the stack of ranges ---- */

static void adm_digest_push(struct adm_digest *d, const uint8_t *after, uint32_t alen,
                            const uint8_t *upto, uint32_t ulen, int has_upto, uint32_t depth,
                            uint64_t most)
{
    if (d->n_stack == d->cap_stack) {
        d->cap_stack = d->cap_stack ? d->cap_stack * 2 : 256;
        d->stack = cn_realloc(d->stack, d->cap_stack * sizeof(*d->stack));
    }
    struct adm_digest_range *r = &d->stack[d->n_stack++];
    r->after = alen ? cn_memdup(after, alen) : NULL;
    r->alen = alen;
    r->upto = has_upto ? cn_memdup(upto, ulen ? ulen : 1) : NULL;
    r->ulen = ulen;
    r->has_upto = has_upto;
    r->depth = depth;
    r->most = most;
}

static void adm_digest_range_free(struct adm_digest_range *r)
{
    cn_free(r->after);
    cn_free(r->upto);
}

static void adm_digest_answer_clear(struct adm_digest_answer *a)
{
    cn_free(a->lo);
    cn_free(a->hi);
    memset(a, 0, sizeof(*a));
}

/* ---- asking the members ---- */

/* Sends DIGEST for r to node; *id is the request's id. CN_OK or CN_IO. */
static int adm_digest_ask_send(struct adm_digest *d, uint32_t node,
                               const struct adm_digest_range *r, uint64_t *id,
                               char err[CN_ERR_LEN])
{
    struct adm_repair *rp = d->rp;
    struct msg req;
    char why[CN_ERR_LEN];
    msg_init_request(&req, MSG_OP_DIGEST, 0);
    if (r->alen > 0) {
        req.after = (struct msg_bytes){r->after, r->alen};
        MSG_SET(&req, MSG_F_AFTER);
    }
    if (r->has_upto) {
        req.upto = (struct msg_bytes){r->upto, r->ulen};
        MSG_SET(&req, MSG_F_UPTO);
    }
    req.fanout = d->cur;
    MSG_SET(&req, MSG_F_FANOUT);
    if (d->arcs != NULL) {
        req.arcs = (struct msg_bytes){d->arcs, d->arcs_len};
        MSG_SET(&req, MSG_F_ARCS);
    }
    if (adm_repair_send(rp, rp->cur[node].c, &req, why) != CN_OK) {
        snprintf(err, CN_ERR_LEN, "%s: DIGEST: %s", rp->cur[node].address, why);
        return CN_IO;
    }
    *id = req.id;
    return CN_OK;
}

/* Reads node's DIGEST reply into a (fanout d->cur). CN_OK, CN_NOTFOUND (the
 * node does not know DIGEST), CN_IO. Does not release rep. */
static int adm_digest_answer_parse(struct adm_digest *d, uint32_t node,
                                   const struct msg_reply *rep, struct adm_digest_answer *a,
                                   char err[CN_ERR_LEN])
{
    const char *addr = d->rp->cur[node].address;
    adm_digest_answer_clear(a);
    if (rep->m.st == MSG_ST_BAD_REQUEST && d->first_request) {
        snprintf(err, CN_ERR_LEN, "%s does not answer DIGEST (%.*s)", addr,
                 (int)rep->m.err.len, (const char *)rep->m.err.ptr);
        return CN_NOTFOUND;
    }
    if (rep->m.st != MSG_ST_OK) {
        snprintf(err, CN_ERR_LEN, "%s: DIGEST: %s %.*s", addr, msg_status_str(rep->m.st),
                 (int)rep->m.err.len, (const char *)rep->m.err.ptr);
        return CN_IO;
    }
    if (msg_digest_sums_unpack(&rep->m.sums, a->sums, d->cur, &a->n) != CN_OK) {
        snprintf(err, CN_ERR_LEN, "%s: DIGEST: malformed sums (%u bytes)", addr,
                 rep->m.sums.len);
        return CN_IO;
    }
    a->more = rep->m.more || a->n < d->cur;
    if (MSG_HAS(&rep->m, MSG_F_LO) && MSG_HAS(&rep->m, MSG_F_HI) && rep->m.lo.len > 0 &&
        rep->m.hi.len > 0) {
        a->lo = cn_memdup(rep->m.lo.ptr, rep->m.lo.len);
        a->lo_len = rep->m.lo.len;
        a->hi = cn_memdup(rep->m.hi.ptr, rep->m.hi.len);
        a->hi_len = rep->m.hi.len;
    }
    return CN_OK;
}

/* ---- leaves ---- */

struct adm_digest_list {
    struct adm_repair_ent *ents;
    uint32_t n, cap, pos;
};

/* Lists member node's keys in (after, upto] (tombstones included). */
static int adm_digest_list(struct adm_digest *d, uint32_t node, const struct adm_digest_range *r,
                           uint64_t hint, struct adm_digest_list *out, char err[CN_ERR_LEN])
{
    struct adm_repair *rp = d->rp;
    const uint8_t *after = r->after;
    uint32_t alen = r->alen;
    for (;;) {
        struct msg req;
        struct msg_reply rep;
        char why[CN_ERR_LEN];
        msg_init_request(&req, MSG_OP_LIST, 0);
        req.prefix = (struct msg_bytes){(const uint8_t *)"", 0};
        MSG_SET(&req, MSG_F_PREFIX);
        if (alen > 0) {
            req.after = (struct msg_bytes){after, alen};
            MSG_SET(&req, MSG_F_AFTER);
        }
        req.limit = (uint32_t)CN_MIN((uint64_t)ADM_REPAIR_PAGE, hint + 1);
        MSG_SET(&req, MSG_F_LIMIT);
        req.flags = MSG_LIST_TOMBSTONES;
        MSG_SET(&req, MSG_F_FLAGS);
        if (adm_repair_call(rp, rp->cur[node].c, &req, &rep, why) != CN_OK) {
            snprintf(err, CN_ERR_LEN, "%s: LIST: %s", rp->cur[node].address, why);
            return CN_IO;
        }
        if (rep.m.st != MSG_ST_OK) {
            snprintf(err, CN_ERR_LEN, "%s: LIST: %s", rp->cur[node].address,
                     msg_status_str(rep.m.st));
            msg_reply_release(&rep);
            return CN_IO;
        }
        rp->counts->listed += rep.m.n_ents;
        int past = 0;
        for (uint32_t i = 0; i < rep.m.n_ents && !past; i++) {
            const struct msg_entry *e = &rep.m.ents[i];
            if (r->has_upto && adm_repair_key_cmp(e->key.ptr, e->key.len, r->upto, r->ulen) > 0) {
                past = 1;
                break;
            }
            if (out->n == out->cap) {
                out->cap = out->cap ? out->cap * 2 : 32;
                out->ents = cn_realloc(out->ents, out->cap * sizeof(*out->ents));
            }
            out->ents[out->n++] = (struct adm_repair_ent){
                cn_memdup(e->key.ptr, e->key.len), e->key.len, e->ts, e->ver, e->flags};
        }
        int more = rep.m.more && rep.m.n_ents > 0 && !past;
        msg_reply_release(&rep);
        if (!more)
            return CN_OK;
        after = out->ents[out->n - 1].key;
        alen = out->ents[out->n - 1].key_len;
    }
}

/* Asks node for the records of r (this set's arcs only) with DIGEST and
 * `limit`; *id is the request's id. CN_OK or CN_IO. */
static int adm_digest_ents_send(struct adm_digest *d, uint32_t node,
                                const struct adm_digest_range *r, uint64_t *id,
                                char err[CN_ERR_LEN])
{
    struct adm_repair *rp = d->rp;
    struct msg req;
    char why[CN_ERR_LEN];
    msg_init_request(&req, MSG_OP_DIGEST, 0);
    if (r->alen > 0) {
        req.after = (struct msg_bytes){r->after, r->alen};
        MSG_SET(&req, MSG_F_AFTER);
    }
    if (r->has_upto) {
        req.upto = (struct msg_bytes){r->upto, r->ulen};
        MSG_SET(&req, MSG_F_UPTO);
    }
    req.fanout = 1;
    MSG_SET(&req, MSG_F_FANOUT);
    req.limit = ADM_REPAIR_PAGE;
    MSG_SET(&req, MSG_F_LIMIT);
    if (d->arcs != NULL) {
        req.arcs = (struct msg_bytes){d->arcs, d->arcs_len};
        MSG_SET(&req, MSG_F_ARCS);
    }
    if (adm_repair_send(rp, rp->cur[node].c, &req, why) != CN_OK) {
        snprintf(err, CN_ERR_LEN, "%s: DIGEST: %s", rp->cur[node].address, why);
        return CN_IO;
    }
    *id = req.id;
    return CN_OK;
}

/* Reads the answer to adm_digest_ents_send(): CN_OK with *got 1 and the
 * entries appended to out, or *got 0 when the node did not send them (more
 * than the limit now, or its scan cap): the caller lists the range
 * instead. CN_IO when the node failed. Does not release rep. */
static int adm_digest_ents_parse(struct adm_digest *d, uint32_t node,
                                 const struct msg_reply *rep, struct adm_digest_list *out,
                                 int *got, char err[CN_ERR_LEN])
{
    struct adm_repair *rp = d->rp;
    *got = 0;
    if (rep->m.st != MSG_ST_OK) {
        snprintf(err, CN_ERR_LEN, "%s: DIGEST: %s", rp->cur[node].address,
                 msg_status_str(rep->m.st));
        return CN_IO;
    }
    if (MSG_HAS(&rep->m, MSG_F_ENTS)) {
        *got = 1;
        rp->counts->listed += rep->m.n_ents;
        out->cap = out->n + rep->m.n_ents + 1;
        out->ents = cn_realloc(out->ents, out->cap * sizeof(*out->ents));
        for (uint32_t i = 0; i < rep->m.n_ents; i++) {
            const struct msg_entry *e = &rep->m.ents[i];
            out->ents[out->n++] = (struct adm_repair_ent){
                cn_memdup(e->key.ptr, e->key.len), e->key.len, e->ts, e->ver, e->flags};
        }
    }
    return CN_OK;
}

/* Whether key's replica set is d's set. */
static int adm_digest_in_set(struct adm_digest *d, const uint8_t *key, uint32_t klen)
{
    uint32_t reps[CN_CLUSTER_MAX_NODES];
    uint32_t n = cn_ring_lookup(d->rp->ring, key, klen, d->rp->o->replicas, reps);
    if (n != d->set->n_members)
        return 0;
    qsort(reps, n, sizeof(uint32_t), adm_digest_u32_cmp);
    return memcmp(reps, d->set->members, n * sizeof(uint32_t)) == 0;
}

/* Merges the members' records of one differing leaf range (l: one list
 * per member, freed here) and repairs each key of this replica set. */
static void adm_digest_leaf_merge(struct adm_digest *d, struct adm_digest_list *l)
{
    struct adm_repair *rp = d->rp;
    uint32_t nm = d->set->n_members;
    const struct adm_repair_ent **have = cn_calloc(rp->n, sizeof(*have));
    for (;;) {
        const struct adm_repair_ent *min = NULL;
        for (uint32_t m = 0; m < nm; m++) {
            const struct adm_repair_ent *e = l[m].pos < l[m].n ? &l[m].ents[l[m].pos] : NULL;
            if (e != NULL && (min == NULL ||
                              adm_repair_key_cmp(e->key, e->key_len, min->key, min->key_len) < 0))
                min = e;
        }
        if (min == NULL)
            break;
        memset(have, 0, rp->n * sizeof(*have));
        for (uint32_t m = 0; m < nm; m++) {
            const struct adm_repair_ent *e = l[m].pos < l[m].n ? &l[m].ents[l[m].pos] : NULL;
            if (e != NULL && adm_repair_key_cmp(e->key, e->key_len, min->key, min->key_len) == 0)
                have[d->set->members[m]] = e;
        }
        if (adm_digest_in_set(d, min->key, min->key_len)) {
            rp->counts->keys++;
            adm_repair_key(rp, have);
        }
        for (uint32_t m = 0; m < nm; m++)
            if (have[d->set->members[m]] != NULL)
                l[m].pos++;
    }
    for (uint32_t m = 0; m < nm; m++) {
        for (uint32_t i = 0; i < l[m].n; i++)
            cn_free(l[m].ents[i].key);
        cn_free(l[m].ents);
        l[m] = (struct adm_digest_list){0};
    }
    cn_free(have);
}

/* Fetches the members' records of up to ADM_DIGEST_BATCH differing leaf
 * ranges at once (DIGEST with limit; LIST for a member that did not send
 * them), then merges and repairs each leaf in turn. */
static int adm_digest_leaves(struct adm_digest *d, const struct adm_digest_range *rs, uint32_t n,
                             char err[CN_ERR_LEN])
{
    struct adm_repair *rp = d->rp;
    uint32_t nm = d->set->n_members;
    struct adm_digest_list *l = cn_calloc((size_t)n * nm, sizeof(*l));
    uint64_t *ids = cn_calloc((size_t)n * nm, sizeof(*ids));
    int *got = cn_calloc((size_t)n * nm, sizeof(*got));
    int rc = CN_OK;
    for (uint32_t s = 0; s < n && rc == CN_OK; s++)
        for (uint32_t m = 0; m < nm && rc == CN_OK; m++)
            rc = adm_digest_ents_send(d, d->set->members[m], &rs[s], &ids[s * nm + m], err);
    for (uint32_t m = 0; m < nm && rc == CN_OK; m++) {
        struct msg_client *c = rp->cur[d->set->members[m]].c;
        for (uint32_t done = 0; done < n && rc == CN_OK;) {
            struct msg_reply rep;
            char why[CN_ERR_LEN];
            if (adm_repair_recv_any(rp, c, rp->o->timeout_ms, &rep, why) != CN_OK) {
                snprintf(err, CN_ERR_LEN, "%s: DIGEST: %s", rp->cur[d->set->members[m]].address,
                         why);
                rc = CN_IO;
                break;
            }
            uint32_t s = 0;
            while (s < n && ids[s * nm + m] != rep.m.id)
                s++;
            if (s < n) {   /* else a late answer to a request that timed out */
                rc = adm_digest_ents_parse(d, d->set->members[m], &rep, &l[s * nm + m],
                                           &got[s * nm + m], err);
                done++;
            }
            msg_reply_release(&rep);
        }
    }
    for (uint32_t s = 0; s < n && rc == CN_OK; s++) {
        rp->counts->leaves++;
        for (uint32_t m = 0; m < nm && rc == CN_OK; m++)
            if (!got[s * nm + m])
                rc = adm_digest_list(d, d->set->members[m], &rs[s], rs[s].most, &l[s * nm + m],
                                     err);
        if (rc == CN_OK)
            adm_digest_leaf_merge(d, &l[s * nm]);
    }
    for (uint32_t i = 0; i < n * nm; i++) {
        for (uint32_t k = 0; k < l[i].n; k++)
            cn_free(l[i].ents[k].key);
        cn_free(l[i].ents);
    }
    cn_free(l);
    cn_free(ids);
    cn_free(got);
    return rc;
}

/* ---- the descent ---- */

/* A key just below key (nothing lies between it and key that is >= a key
 * after it), clamped to at least r's start: the narrowed range's start.
 * Writes it into out (klen bytes); returns its length. */
static uint32_t adm_digest_below(const uint8_t *key, uint32_t klen, uint8_t *out)
{
    memcpy(out, key, klen - 1);
    if (key[klen - 1] == 0)
        return klen - 1;   /* key minus its last NUL: its immediate predecessor */
    out[klen - 1] = (uint8_t)(key[klen - 1] - 1);
    return klen;
}

/* When at most one sub-range holds any record on any member, the split did
 * not separate anything: push r narrowed to [smallest lo, largest hi] of
 * the members instead. Returns 1 when it pushed. */
static int adm_digest_narrow(struct adm_digest *d, const struct adm_digest_range *r)
{
    uint32_t nm = d->set->n_members, nonempty = 0;
    const struct adm_digest_answer *lo = NULL, *hi = NULL;
    uint64_t most = 0;
    for (uint32_t m = 0; m < nm; m++) {
        uint64_t c = 0;
        for (uint32_t i = 0; i < d->cur; i++)
            c += d->ans[m].sums[i].count;
        most = CN_MAX(most, c);
    }
    for (uint32_t i = 0; i < d->cur; i++) {
        int any = 0;
        for (uint32_t m = 0; m < nm; m++)
            any |= d->ans[m].sums[i].count > 0;
        nonempty += any;
    }
    if (nonempty > 1)
        return 0;
    for (uint32_t m = 0; m < nm; m++) {
        const struct adm_digest_answer *a = &d->ans[m];
        if (a->lo == NULL)
            continue;
        if (lo == NULL || adm_repair_key_cmp(a->lo, a->lo_len, lo->lo, lo->lo_len) < 0)
            lo = a;
        if (hi == NULL || adm_repair_key_cmp(a->hi, a->hi_len, hi->hi, hi->hi_len) > 0)
            hi = a;
    }
    if (lo == NULL)
        return 0;
    uint8_t *below = cn_malloc(lo->lo_len);
    uint32_t blen = adm_digest_below(lo->lo, lo->lo_len, below);
    const uint8_t *na = r->after;
    uint32_t nalen = r->alen;
    if (adm_repair_key_cmp(below, blen, r->after, r->alen) > 0) {
        na = below;
        nalen = blen;
    }
    int narrower = na != r->after || !r->has_upto ||
                   adm_repair_key_cmp(hi->hi, hi->hi_len, r->upto, r->ulen) < 0;
    if (narrower)
        adm_digest_push(d, na, nalen, hi->hi, hi->hi_len, 1, r->depth + 1, most);
    cn_free(below);
    return narrower;
}

/* Bound i of r's split into buf (plen + 8 bytes), or r's own ends. */
static void adm_digest_bound(const struct adm_digest_range *r, const struct msg_digest_split *sp,
                             uint32_t i, uint8_t *buf, const uint8_t **b, uint32_t *blen,
                             int *bounded)
{
    *bounded = 1;
    if (i == 0) {
        *b = r->after;
        *blen = r->alen;
    } else if (i == sp->fanout) {
        *b = r->upto;
        *blen = r->ulen;
        *bounded = r->has_upto;
    } else {
        *blen = msg_digest_split_bound(sp, i, buf);
        *b = buf;
    }
}

/* Sub-range i of r (or, with last, from i to r's end) as a range. */
static void adm_digest_sub(const struct adm_digest_range *r, const struct msg_digest_split *sp,
                           uint32_t i, int to_end, struct adm_digest_range *out,
                           uint8_t *buf_a, uint8_t *buf_u)
{
    const uint8_t *a, *u;
    uint32_t al, ul;
    int ba, bu;
    adm_digest_bound(r, sp, i, buf_a, &a, &al, &ba);
    adm_digest_bound(r, sp, to_end ? sp->fanout : i + 1, buf_u, &u, &ul, &bu);
    *out = (struct adm_digest_range){(uint8_t *)a, (uint8_t *)u, al, ul, bu, r->depth + 1, 0};
}

static void adm_digest_progress(struct adm_digest *d, int force)
{
    uint64_t now = cn_time_mono_us();
    if (!force && now - d->last_progress_us < 2000000)
        return;
    d->last_progress_us = now;
    const struct adm_repair_counts *c = d->rp->counts;
    printf("repair: progress: %llu ranges compared, %llu differing, %llu keys listed, "
           "%llu stale copies, %llu repaired, %llu bytes read, %llu bytes copied\n",
           (unsigned long long)c->ranges_compared, (unsigned long long)c->ranges_differing,
           (unsigned long long)c->listed, (unsigned long long)c->differences,
           (unsigned long long)c->repaired, (unsigned long long)c->bytes_read,
           (unsigned long long)c->bytes);
    fflush(stdout);
}

/* The fanout to ask for r: about two records per sub-range (a reply costs
 * 24 bytes a sub-range, listing a record about three times that). */
static uint32_t adm_digest_fanout_of(const struct adm_digest *d, const struct adm_digest_range *r)
{
    if (r->most == 0)
        return d->fanout;
    return (uint32_t)CN_MAX(2u, CN_MIN((uint64_t)d->fanout, (r->most + 1) / 2));
}

/* Queues a differing leaf range (copied) for adm_digest_leaves(). */
static void adm_digest_leaf_add(struct adm_digest *d, const struct adm_digest_range *r,
                                uint64_t most)
{
    if (d->n_leaves == d->cap_leaves) {
        d->cap_leaves = d->cap_leaves ? d->cap_leaves * 2 : 64;
        d->leaves = cn_realloc(d->leaves, d->cap_leaves * sizeof(*d->leaves));
    }
    struct adm_digest_range *l = &d->leaves[d->n_leaves++];
    *l = (struct adm_digest_range){r->alen ? cn_memdup(r->after, r->alen) : NULL,
                                   r->has_upto ? cn_memdup(r->upto, r->ulen ? r->ulen : 1) : NULL,
                                   r->alen, r->ulen, r->has_upto, r->depth, most};
}

/* Compares the members' answers (d->ans, fanout d->cur) for range r;
 * pushes what must be looked at more closely and queues the differing
 * leaves. */
static void adm_digest_handle(struct adm_digest *d, const struct adm_digest_range *r)
{
    struct adm_repair *rp = d->rp;
    uint32_t nm = d->set->n_members, k = d->cur;
    int more = 0;
    for (uint32_t m = 0; m < nm; m++) {
        k = CN_MIN(k, d->ans[m].n);
        more |= d->ans[m].more;
    }
    rp->counts->ranges_compared++;
    struct msg_digest_split sp;
    msg_digest_split_init(&sp, r->after ? r->after : (const uint8_t *)"", r->alen, r->upto,
                          r->ulen, r->has_upto, d->cur);
    uint8_t *ba = cn_malloc(sp.plen + MSG_DIGEST_WINDOW + 1);
    uint8_t *bu = cn_malloc(sp.plen + MSG_DIGEST_WINDOW + 1);
    int differs = 0;
    for (uint32_t i = 0; i < k; i++)
        for (uint32_t m = 1; m < nm; m++)
            differs |= !msg_digest_sum_eq(&d->ans[0].sums[i], &d->ans[m].sums[i]);
    if (differs && !more && r->depth + 1 < ADM_DIGEST_MAX_DEPTH && adm_digest_narrow(d, r))
        goto out;
    for (uint32_t i = 0; i < k; i++) {
        uint64_t most = 0;
        int same = 1;
        for (uint32_t m = 0; m < nm; m++) {
            most = CN_MAX(most, d->ans[m].sums[i].count);
            same &= msg_digest_sum_eq(&d->ans[0].sums[i], &d->ans[m].sums[i]);
        }
        if (same)
            continue;
        rp->counts->ranges_differing++;
        struct adm_digest_range sub;
        adm_digest_sub(r, &sp, i, 0, &sub, ba, bu);
        if (most <= d->leaf_keys || sub.depth >= ADM_DIGEST_MAX_DEPTH || d->fanout == 1)
            adm_digest_leaf_add(d, &sub, most);
        else
            adm_digest_push(d, sub.after, sub.alen, sub.upto, sub.ulen, sub.has_upto, sub.depth,
                            most);
    }
    if (k < d->cur) {
        /* a member's scan cap cut its answer short inside sub-range k: that
         * one holds more than the cap and is split; the rest is asked anew */
        struct adm_digest_range sub;
        adm_digest_sub(r, &sp, k, 0, &sub, ba, bu);
        adm_digest_push(d, sub.after, sub.alen, sub.upto, sub.ulen, sub.has_upto, sub.depth, 0);
        if (k + 1 < d->cur) {
            adm_digest_sub(r, &sp, k + 1, 1, &sub, ba, bu);
            adm_digest_push(d, sub.after, sub.alen, sub.upto, sub.ulen, sub.has_upto, r->depth, 0);
        }
    }
out:
    cn_free(ba);
    cn_free(bu);
}

/* Asks every member for DIGEST of up to ADM_DIGEST_BATCH ranges at once
 * (the nodes answer in any order), then handles each range's answers. */
static int adm_digest_batch(struct adm_digest *d, const struct adm_digest_range *rs, uint32_t n,
                            char err[CN_ERR_LEN])
{
    struct adm_repair *rp = d->rp;
    uint32_t nm = d->set->n_members, fan[ADM_DIGEST_BATCH];
    uint64_t *ids = cn_calloc((size_t)n * nm, sizeof(*ids));
    int rc = CN_OK;
    for (uint32_t s = 0; s < n && rc == CN_OK; s++) {
        d->cur = fan[s] = adm_digest_fanout_of(d, &rs[s]);
        for (uint32_t m = 0; m < nm && rc == CN_OK; m++)
            rc = adm_digest_ask_send(d, d->set->members[m], &rs[s], &ids[s * nm + m], err);
    }
    for (uint32_t m = 0; m < nm && rc == CN_OK; m++) {
        struct msg_client *c = rp->cur[d->set->members[m]].c;
        for (uint32_t got = 0; got < n && rc == CN_OK;) {
            struct msg_reply rep;
            char why[CN_ERR_LEN];
            if (adm_repair_recv_any(rp, c, rp->o->timeout_ms, &rep, why) != CN_OK) {
                snprintf(err, CN_ERR_LEN, "%s: DIGEST: %s", rp->cur[d->set->members[m]].address,
                         why);
                rc = CN_IO;
                break;
            }
            uint32_t s = 0;
            while (s < n && ids[s * nm + m] != rep.m.id)
                s++;
            if (s < n) {   /* else a late answer to a request that timed out */
                d->cur = fan[s];
                rc = adm_digest_answer_parse(d, d->set->members[m], &rep,
                                             &d->all_ans[s * nm + m], err);
                got++;
            }
            msg_reply_release(&rep);
        }
    }
    d->first_request = 0;
    for (uint32_t s = 0; s < n && rc == CN_OK; s++) {
        d->cur = fan[s];
        d->ans = &d->all_ans[s * nm];
        adm_digest_handle(d, &rs[s]);
    }
    for (uint32_t i = 0; i < d->n_leaves; i += ADM_DIGEST_BATCH)
        if (rc == CN_OK)
            rc = adm_digest_leaves(d, d->leaves + i, CN_MIN(ADM_DIGEST_BATCH, d->n_leaves - i),
                                   err);
    for (uint32_t i = 0; i < d->n_leaves; i++)
        adm_digest_range_free(&d->leaves[i]);
    d->n_leaves = 0;
    cn_free(ids);
    adm_digest_progress(d, 0);
    return rc;
}

/* Compares the whole key space of one replica set (arcs: this chunk's). */
static int adm_digest_set_run(struct adm_digest *d, char err[CN_ERR_LEN])
{
    int rc = CN_OK;
    adm_digest_push(d, NULL, 0, NULL, 0, 0, 0, 0);
    struct adm_digest_range batch[ADM_DIGEST_BATCH];
    while (d->n_stack > 0) {
        uint32_t n = 0;
        while (n < ADM_DIGEST_BATCH && d->n_stack > 0)
            batch[n++] = d->stack[--d->n_stack];
        if (rc == CN_OK)
            rc = adm_digest_batch(d, batch, n, err);
        for (uint32_t i = 0; i < n; i++)
            adm_digest_range_free(&batch[i]);
    }
    return rc;
}

int adm_repair_digest_run(struct adm_repair *rp, char err[CN_ERR_LEN])
{
    uint32_t n_sets = 0;
    struct adm_digest_set *sets = adm_digest_sets(rp->ring, rp->o->replicas, &n_sets);
    struct adm_digest d = {.rp = rp, .first_request = 1};
    d.fanout = rp->o->fanout ? CN_MIN(rp->o->fanout, MSG_DIGEST_MAX_FANOUT) : ADM_DIGEST_FANOUT;
    d.leaf_keys = rp->o->leaf_keys ? rp->o->leaf_keys : ADM_DIGEST_LEAF_KEYS;
    d.all_ans = cn_calloc((size_t)ADM_DIGEST_BATCH * rp->o->replicas, sizeof(*d.all_ans));
    d.last_progress_us = cn_time_mono_us();
    uint8_t *packed = cn_malloc(MSG_DIGEST_MAX_ARCS * MSG_DIGEST_ARC_LEN);
    int rc = CN_OK;
    for (uint32_t s = 0; s < n_sets && rc == CN_OK; s++) {
        d.set = &sets[s];
        if (sets[s].n_members < 2)
            continue;   /* one copy: nothing to compare it with */
        int whole = sets[s].n_arcs == 1 && sets[s].arcs[0].first == 0 &&
                    sets[s].arcs[0].last == UINT64_MAX;
        for (uint32_t off = 0; rc == CN_OK && (off < sets[s].n_arcs || (whole && off == 0));) {
            uint32_t n = CN_MIN(sets[s].n_arcs - off, MSG_DIGEST_MAX_ARCS);
            if (whole) {
                d.arcs = NULL;
            } else {
                msg_digest_arcs_pack(sets[s].arcs + off, n, packed);
                d.arcs = packed;
                d.arcs_len = n * MSG_DIGEST_ARC_LEN;
            }
            rc = adm_digest_set_run(&d, err);
            off += n;
        }
        if (rp->o->verbose) {
            printf("repair: replica set %u/%u (", s + 1, n_sets);
            for (uint32_t m = 0; m < sets[s].n_members; m++)
                printf("%s%s", m ? " " : "", rp->cur[sets[s].members[m]].address);
            printf(", %u arcs) done\n", sets[s].n_arcs);
        }
    }
    if (rc == CN_OK)
        adm_digest_progress(&d, 1);
    for (uint32_t i = 0; i < ADM_DIGEST_BATCH * rp->o->replicas; i++)
        adm_digest_answer_clear(&d.all_ans[i]);
    for (uint32_t s = 0; s < n_sets; s++)
        cn_free(sets[s].arcs);
    cn_free(sets);
    cn_free(d.all_ans);
    cn_free(d.stack);
    cn_free(d.leaves);
    cn_free(packed);
    return rc;
}
