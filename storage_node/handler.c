/* Request handlers (see handler.h). They run on I/O threads, except SCRUB and
 * COMPACT which run on the admin thread; PUT and DELETE are finished by the
 * writer thread's callback. Every path ends in sn_server_reply*(). */
#include "handler.h"

#include <stdio.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/crc.h"
#include "cn/log.h"
#include "container.h"
#include "lease.h"
#include "digest.h"
#include "hint.h"

enum msg_status sn_handler_status(int rc)
{
    switch (rc) {
    case CN_OK: return MSG_ST_OK;
    case CN_NOTFOUND: return MSG_ST_NOT_FOUND;
    case CN_CORRUPT: return MSG_ST_CORRUPT;
    case CN_INVAL: return MSG_ST_BAD_REQUEST;
    case CN_TOOBIG: return MSG_ST_TOO_LARGE;
    case CN_IO: return MSG_ST_IO_ERROR;
    default: return MSG_ST_INTERNAL;
    }
}

struct msg_bytes sn_handler_etag(uint32_t req_v, const uint8_t *etag, uint32_t etag_len,
                                 uint32_t has_osize, uint64_t osize, uint8_t *buf,
                                 uint32_t *out_has_osize)
{
    *out_has_osize = 0;
    if (!has_osize)
        return (struct msg_bytes){etag, etag_len};
    if (req_v >= 3) {
        *out_has_osize = 1;
        return (struct msg_bytes){etag, etag_len};
    }
    /* a PUT with osize never has a longer etag (sn_handler_write), so the
     * other case cannot come from a record this node wrote: never abort on
     * what a disk holds, answer the etag as it is */
    if (etag_len > MSG_OSIZE_ETAG_MAX)
        return (struct msg_bytes){etag, etag_len};
    return (struct msg_bytes){buf, (uint32_t)msg_osize_fold(buf, etag, etag_len, osize)};
}

void sn_handler_entry(struct msg_entry *e, uint32_t req_v, const uint8_t *key, uint32_t klen,
                      const struct sn_ival *v)
{
    /* key and etag (and room for its folded form, when it has one) in one
     * owned block: the iterator's bytes do not last */
    size_t fold = v->has_osize && req_v < 3 ? MSG_ETAG_FOLD_MAX : 0;
    uint8_t *b = cn_malloc((size_t)klen + v->etag_len + fold + 1);
    memcpy(b, key, klen);
    memcpy(b + klen, v->etag, v->etag_len);
    memset(e, 0, sizeof(*e));
    e->key = (struct msg_bytes){b, klen};
    e->etag = sn_handler_etag(req_v, b + klen, v->etag_len, v->has_osize, v->osize,
                              b + klen + v->etag_len, &e->has_osize);
    e->osize = e->has_osize ? v->osize : 0;
    if (v->has_owner && req_v >= 3) {   /* older requests get it as the etag */
        e->owner = e->etag;
        e->has_owner = 1;
        e->etag = (struct msg_bytes){b + klen, 0};
    }
    e->size = v->data_len;
    e->ts = v->ts;
    e->ver = v->ver;
    e->flags = v->flags;
}

static void sn_handler_node(struct sn_job *j, struct msg *rep)
{
    const char *node = sn_server_opts(j->srv)->node_id;
    rep->node.ptr = (const uint8_t *)node;
    rep->node.len = (uint32_t)strlen(node);
    MSG_SET(rep, MSG_F_NODE);
}

static void sn_handler_ping(struct sn_job *j)
{
    struct msg rep;
    msg_init_reply(&rep, &j->req, MSG_ST_OK);
    sn_handler_node(j, &rep);
    sn_server_reply(j, &rep, NULL, NULL, 0);
}

/* ---- PUT and DELETE: prepared here, finished on the writer thread ---- */

static void sn_handler_write_done(struct sn_wreq *w, void *arg)
{
    struct sn_job *j = arg;
    struct msg rep;
    /* the record is in the index now: a LOCK that waits for this lease
     * sees it */
    if (MSG_HAS(&j->req, MSG_F_TOK))
        sn_lease_write_end(sn_server_leases(j->srv), j->req.key.ptr, j->req.key.len, j->req.tok);
    if (w->rc != CN_OK) {
        CN_LOGR(CN_LOG_ERROR, j->req.id, "%s failed: %s", msg_op_str(j->req.op), w->err);
        sn_server_reply_error(j, sn_handler_status(w->rc), w->err);
        return;
    }
    msg_init_reply(&rep, &j->req, MSG_ST_OK);
    rep.applied = (uint32_t)w->applied;
    MSG_SET(&rep, MSG_F_APPLIED);
    sn_server_reply(j, &rep, NULL, NULL, 0);
}

static void sn_handler_write(struct sn_job *j)
{
    const struct msg *q = &j->req;
    char err[CN_ERR_LEN];
    int is_put = q->op == MSG_OP_PUT;
    int has_osize = is_put && MSG_HAS(q, MSG_F_OSIZE);
    int has_owner = is_put && MSG_HAS(q, MSG_F_OWNER);
    if (has_osize && MSG_HAS(q, MSG_F_ETAG) && q->etag.len > MSG_OSIZE_ETAG_MAX) {
        /* its folded form, what an older client reads, must fit `etag` */
        sn_server_reply_error(j, MSG_ST_BAD_REQUEST,
                              "etag of a record with osize is over 107 bytes");
        return;
    }
    if (has_owner && (has_osize || (MSG_HAS(q, MSG_F_ETAG) && q->etag.len > 0))) {
        /* the owner takes the etag's place (an older client reads it there) */
        sn_server_reply_error(j, MSG_ST_BAD_REQUEST,
                              "a record with owner has no etag or osize");
        return;
    }
    const struct msg_bytes *etag = has_owner ? &q->owner
                                 : MSG_HAS(q, MSG_F_ETAG) ? &q->etag : NULL;
    /* encoding the record computes the block CRCs; the payload's crc is
     * checked against them combined, so the bytes are read once */
    int rc = sn_wreq_init_osize(&j->w, is_put ? SN_WOP_PUT : SN_WOP_DELETE, q->key.ptr,
                                q->key.len, MSG_HAS(q, MSG_F_META) ? q->meta.ptr : NULL,
                                MSG_HAS(q, MSG_F_META) ? q->meta.len : 0,
                                etag != NULL ? etag->ptr : NULL, etag != NULL ? etag->len : 0,
                                has_osize ? &q->osize : NULL, has_owner, q->ver, q->ts,
                                is_put ? q->payload.ptr : NULL, is_put ? q->payload.len : 0, err);
    if (rc != CN_OK) {
        sn_server_reply_error(j, sn_handler_status(rc), err);
        return;
    }
    if (is_put && sn_record_data_crc(&j->w.ri) != q->crc) {
        sn_wreq_fini(&j->w);
        sn_server_reply_error(j, MSG_ST_BAD_CHECKSUM, "payload does not match crc");
        return;
    }
    int leased = is_put && MSG_HAS(q, MSG_F_TOK);
    if (leased && sn_lease_write_begin(sn_server_leases(j->srv), q->key.ptr, q->key.len,
                                       q->tok) != MSG_ST_OK) {
        sn_wreq_fini(&j->w);
        sn_server_reply_error(j, MSG_ST_LOCKED, "the token does not hold the key's lease");
        return;
    }
    j->w.done_cb = sn_handler_write_done;
    j->w.arg = j;
    sn_store_submit(sn_server_store(j->srv), &j->w);
}

/* ---- PURGE: a rebalance drops a copy the node no longer owns ---- */

/* Removes the key only if it holds exactly (ts, ver): never a newer write,
 * and no tombstone is written (the owners keep the record). */
static void sn_handler_purge(struct sn_job *j)
{
    const struct msg *q = &j->req;
    char err[CN_ERR_LEN];
    int rc = sn_wreq_init(&j->w, SN_WOP_FORGET, q->key.ptr, q->key.len, NULL, 0, NULL, 0,
                          q->ver, q->ts, NULL, 0, err);
    if (rc != CN_OK) {
        sn_server_reply_error(j, sn_handler_status(rc), err);
        return;
    }
    j->w.done_cb = sn_handler_write_done;
    j->w.arg = j;
    sn_store_submit(sn_server_store(j->srv), &j->w);
}

/* ---- LOCK and UNLOCK: conditional-write leases (lease.h) ---- */

static void sn_handler_lock(struct sn_job *j)
{
    const struct msg *q = &j->req;
    char err[CN_ERR_LEN] = "";
    uint64_t cur_ver, cur_ts;
    enum msg_status st = sn_lease_take(sn_server_leases(j->srv), sn_server_store(j->srv),
                                       q->key.ptr, q->key.len, q->tok, MSG_HAS(q, MSG_F_IFVER),
                                       q->ifver, &cur_ver, &cur_ts, err);
    if (st != MSG_ST_OK && st != MSG_ST_PRECONDITION) {
        sn_server_reply_error(j, st, err[0] != '\0' ? err
                                 : st == MSG_ST_LOCKED ? "another writer holds the key's lease"
                                                       : "too many leases held");
        return;
    }
    struct msg rep;
    msg_init_reply(&rep, q, st);
    if (cur_ver != 0 || cur_ts != 0) {
        rep.ver = cur_ver;
        rep.ts = cur_ts;
        MSG_SET(&rep, MSG_F_VER);
        MSG_SET(&rep, MSG_F_TS);
    }
    sn_server_reply(j, &rep, NULL, NULL, 0);
}

static void sn_handler_unlock(struct sn_job *j)
{
    const struct msg *q = &j->req;
    sn_lease_drop(sn_server_leases(j->srv), q->key.ptr, q->key.len, q->tok);
    struct msg rep;
    msg_init_reply(&rep, q, MSG_ST_OK);
    sn_server_reply(j, &rep, NULL, NULL, 0);
}

/* ---- GET and HEAD ---- */

static void sn_handler_record_fields(struct msg *rep, const struct sn_read *r)
{
    rep->ver = r->ver;
    rep->ts = r->ts;
    rep->flags = r->flags;
    MSG_SET(rep, MSG_F_VER);
    MSG_SET(rep, MSG_F_TS);
    MSG_SET(rep, MSG_F_FLAGS);
}

static void sn_handler_unpin(void *container)
{
    sn_container_unref(container);
}

/* Reads the record a GET or HEAD asks for: sn_store_read(), or with
 * max_data > 0 sn_store_read_nowait() (the socket thread). */
static int sn_handler_do_read(struct sn_job *j, uint64_t max_data, struct sn_read *r,
                              char err[CN_ERR_LEN])
{
    const struct msg *q = &j->req;
    int get = q->op == MSG_OP_GET;
    int slice = get && (MSG_HAS(q, MSG_F_OFF) || MSG_HAS(q, MSG_F_LEN));
    uint64_t off = MSG_HAS(q, MSG_F_OFF) ? q->off : 0;
    uint64_t len = MSG_HAS(q, MSG_F_LEN) ? q->len : UINT64_MAX;
    int flags = (get ? SN_READ_DATA : 0) | (slice ? SN_READ_SLICE : 0);
    if (max_data > 0)
        return sn_store_read_nowait(sn_server_store(j->srv), q->key.ptr, q->key.len, flags, off,
                                    len, max_data, r, err);
    return sn_store_read(sn_server_store(j->srv), q->key.ptr, q->key.len, flags, off, len, r, err);
}

/* Answers a GET or HEAD with the outcome rc of its read r (taken over). */
static void sn_handler_read_reply(struct sn_job *j, int rc, struct sn_read *rd, const char *err)
{
    const struct msg *q = &j->req;
    int get = q->op == MSG_OP_GET;
    int slice = get && (MSG_HAS(q, MSG_F_OFF) || MSG_HAS(q, MSG_F_LEN));
    uint64_t off = MSG_HAS(q, MSG_F_OFF) ? q->off : 0;
    struct sn_read r = *rd;
    struct msg rep;
    if (rc == CN_NOTFOUND && (r.flags & SN_RECORD_FLAG_TOMBSTONE)) {
        msg_init_reply(&rep, q, MSG_ST_NOT_FOUND);
        sn_handler_record_fields(&rep, &r);
        sn_read_fini(&r);
        sn_server_reply(j, &rep, NULL, NULL, 0);
        return;
    }
    if (rc != CN_OK) {
        if (rc == CN_CORRUPT || rc == CN_IO)
            CN_LOGR(CN_LOG_ERROR, q->id, "%s: %s", msg_op_str(q->op), err);
        sn_read_fini(&r);
        sn_server_reply_error(j, sn_handler_status(rc), err);
        return;
    }
    msg_init_reply(&rep, q, MSG_ST_OK);
    sn_handler_record_fields(&rep, &r);
    rep.size = r.size;
    MSG_SET(&rep, MSG_F_SIZE);
    uint8_t folded[MSG_ETAG_FOLD_MAX];
    uint32_t with_osize = 0;
    rep.etag = sn_handler_etag(q->v, r.etag, r.etag_len, r.has_osize, r.osize, folded,
                               &with_osize);
    MSG_SET(&rep, MSG_F_ETAG);
    if (r.has_owner && q->v >= 3) {   /* older requests get it as the etag */
        rep.owner = rep.etag;
        rep.etag = (struct msg_bytes){(const uint8_t *)"", 0};
        MSG_SET(&rep, MSG_F_OWNER);
    }
    if (with_osize) {
        rep.osize = r.osize;
        MSG_SET(&rep, MSG_F_OSIZE);
    }
    rep.meta.ptr = r.meta ? r.meta : (const uint8_t *)"";
    rep.meta.len = r.meta_len;
    MSG_SET(&rep, MSG_F_META);
    if (!get) {
        sn_server_reply(j, &rep, NULL, NULL, 0);
        sn_read_fini(&r);
        return;
    }
    rep.off = slice ? off : 0;
    rep.crc = r.crc;
    MSG_SET(&rep, MSG_F_OFF);
    MSG_SET(&rep, MSG_F_CRC);
    /* the payload goes out without a copy: ZeroMQ releases what holds it
     * (the container mapping's reference, or r.buf) once sent */
    const uint8_t *data = r.data ? r.data : (const uint8_t *)"";
    if (r.pin != NULL) {
        struct sn_container *pin = r.pin;
        r.pin = NULL;
        sn_server_reply_pinned(j, &rep, data, r.len, sn_handler_unpin, pin);
    } else {
        uint8_t *owner = r.buf;
        r.buf = NULL;
        sn_server_reply(j, &rep, owner, data, r.len);
    }
    sn_read_fini(&r);
}

static void sn_handler_read(struct sn_job *j)
{
    struct sn_read r;
    char err[CN_ERR_LEN] = "";
    int rc = sn_handler_do_read(j, 0, &r, err);
    sn_handler_read_reply(j, rc, &r, err);
}

int sn_handler_read_inline(struct sn_job *j, uint64_t max_data)
{
    struct sn_read r;
    char err[CN_ERR_LEN] = "";
    CN_ASSERT(max_data > 0 && (j->req.op == MSG_OP_GET || j->req.op == MSG_OP_HEAD));
    int rc = sn_handler_do_read(j, max_data, &r, err);
    if (rc == CN_WOULDBLOCK)
        return rc;
    sn_handler_read_reply(j, rc, &r, err);
    return CN_OK;
}

/* ---- LIST ---- */

struct sn_handler_list {
    struct msg_entry *ents;
    uint32_t n;
    uint32_t req_v;   /* the request's version: the entries' form */
};

static int sn_handler_list_cb(void *arg, const uint8_t *key, uint32_t klen,
                              const struct sn_ival *v)
{
    struct sn_handler_list *l = arg;
    sn_handler_entry(&l->ents[l->n++], l->req_v, key, klen, v);
    return 0;
}

static void sn_handler_list(struct sn_job *j)
{
    const struct msg *q = &j->req;
    if (q->limit == 0) {
        sn_server_reply_error(j, MSG_ST_BAD_REQUEST, "limit must be 1 to max_list");
        return;
    }
    struct sn_handler_list l = {cn_calloc((size_t)q->limit + 1, sizeof(*l.ents)), 0, q->v};
    struct msg rep;
    char err[CN_ERR_LEN];
    int more = 0;
    int tombs = MSG_HAS(q, MSG_F_FLAGS) && (q->flags & MSG_LIST_TOMBSTONES);
    int rc = sn_store_list_ex(sn_server_store(j->srv), q->prefix.ptr, q->prefix.len,
                              MSG_HAS(q, MSG_F_AFTER) ? q->after.ptr : NULL,
                              MSG_HAS(q, MSG_F_AFTER) ? q->after.len : 0, q->limit, tombs,
                              sn_handler_list_cb, &l, &more, err);
    if (rc != CN_OK) {
        sn_server_reply_error(j, sn_handler_status(rc), err);
    } else {
        msg_init_reply(&rep, q, MSG_ST_OK);
        rep.ents = l.ents;
        rep.n_ents = l.n;
        rep.more = (uint32_t)more;
        MSG_SET(&rep, MSG_F_ENTS);
        MSG_SET(&rep, MSG_F_MORE);
        sn_server_reply(j, &rep, NULL, NULL, 0);
    }
    for (uint32_t i = 0; i < l.n; i++)
        cn_free((void *)(uintptr_t)l.ents[i].key.ptr);
    cn_free(l.ents);
}

/* ---- STATS, SCRUB, COMPACT ---- */

#define SN_HANDLER_MAX_STATS 80

struct sn_handler_stats {
    struct msg_stat s[SN_HANDLER_MAX_STATS];
    uint32_t n;
};

static void sn_handler_stat(struct sn_handler_stats *st, const char *name, uint64_t v)
{
    CN_ASSERT(st->n < SN_HANDLER_MAX_STATS);
    st->s[st->n].name = (struct msg_bytes){(const uint8_t *)name, (uint32_t)strlen(name)};
    st->s[st->n++].value = v;
}

static void sn_handler_reply_stats(struct sn_job *j, struct msg *rep, struct sn_handler_stats *st)
{
    rep->stats = st->s;
    rep->n_stats = st->n;
    MSG_SET(rep, MSG_F_STATS);
    sn_server_reply(j, rep, NULL, NULL, 0);
}

static void sn_handler_stats(struct sn_job *j)
{
    struct sn_store_stats s;
    struct sn_server_stats f;
    struct sn_handler_stats st = {.n = 0};
    struct msg rep;
    sn_store_stats(sn_server_store(j->srv), &s);
    sn_server_stats(j->srv, &f);
    sn_handler_stat(&st, "records", s.records);
    sn_handler_stat(&st, "tombstones", s.tombstones);
    sn_handler_stat(&st, "bytes_live", s.bytes_live);
    sn_handler_stat(&st, "bytes_dead", s.bytes_dead);
    sn_handler_stat(&st, "bytes_total", s.bytes_total);
    sn_handler_stat(&st, "containers", s.containers);
    sn_handler_stat(&st, "active_container", s.active_container);
    sn_handler_stat(&st, "queue_depth", s.queue_depth);
    sn_handler_stat(&st, "inflight", f.inflight);
    sn_handler_stat(&st, "busy", f.busy);
    sn_handler_stat(&st, "bad_requests", f.bad_requests);
    sn_handler_stat(&st, "inline_reads", f.inline_reads);
    sn_handler_stat(&st, "inline_pauses", f.inline_pauses);
    sn_handler_stat(&st, "inline_writes", f.inline_writes);
    static const char *const op_names[MSG_OP_MAX_] = {
        NULL, "ops_ping", "ops_stats", "ops_put", "ops_get", "ops_head",
        "ops_delete", "ops_list", "ops_scrub", "ops_compact", "ops_lock", "ops_unlock",
        "ops_digest", "ops_hint_add", "ops_hint_take", "ops_purge"};
    for (int i = 1; i < MSG_OP_MAX_; i++)
        sn_handler_stat(&st, op_names[i], f.ops[i]);
    sn_handler_stat(&st, "puts_stored", s.puts);
    sn_handler_stat(&st, "deletes_stored", s.deletes);
    sn_handler_stat(&st, "stale_writes", s.stale_writes);
    sn_handler_stat(&st, "group_commits", s.batches);
    sn_handler_stat(&st, "syncs", s.syncs);
    sn_handler_stat(&st, "reads", s.reads);
    sn_handler_stat(&st, "corrupt_reads", s.corrupt_reads);
    sn_handler_stat(&st, "corrupt_found", s.corrupt_reads + s.scrub_corrupt);
    sn_handler_stat(&st, "scrubs", s.scrubs);
    sn_handler_stat(&st, "scrub_corrupt", s.scrub_corrupt);
    sn_handler_stat(&st, "compactions", s.compactions);
    sn_handler_stat(&st, "relocations", s.relocations);
    sn_handler_stat(&st, "tombstones_purged", s.tombstones_purged);
    sn_handler_stat(&st, "copies_purged", s.copies_purged);
    sn_handler_stat(&st, "containers_reclaimed", s.containers_reclaimed);
    sn_handler_stat(&st, "bytes_reclaimed", s.bytes_reclaimed);
    sn_handler_stat(&st, "auto_compactions", s.auto_compactions);
    sn_handler_stat(&st, "compaction_throttled_us", s.compact_throttle_us);
    sn_handler_stat(&st, "corrupt_marked", s.corrupt_marked);
    sn_handler_stat(&st, "corrupt_repaired", s.corrupt_repaired);
    sn_handler_stat(&st, "recovered_records", s.recovered_records);
    sn_handler_stat(&st, "torn_tails", s.torn_tails);
    sn_handler_stat(&st, "mem_used", cn_alloc_used());
    sn_handler_stat(&st, "leases", sn_lease_count(sn_server_leases(j->srv)));
    struct sn_hints *hints = sn_server_opts(j->srv)->hints;
    if (hints != NULL) {
        struct sn_hint_stats hs;
        sn_hints_stats(hints, &hs);
        sn_handler_stat(&st, "hints", hs.held);
        sn_handler_stat(&st, "hint_bytes", hs.bytes);
        sn_handler_stat(&st, "hints_added", hs.added);
        sn_handler_stat(&st, "hints_updated", hs.updated);
        sn_handler_stat(&st, "hints_refused", hs.refused);
        sn_handler_stat(&st, "hints_removed", hs.removed);
    }
    msg_init_reply(&rep, &j->req, MSG_ST_OK);
    sn_handler_node(j, &rep);
    sn_handler_reply_stats(j, &rep, &st);
}

struct sn_handler_scrub {
    struct sn_job *job;
    struct msg_entry *ents;
    uint32_t n, cap;
};

static void sn_handler_scrub_cb(void *arg, const uint8_t *key, uint32_t klen,
                                const struct sn_ival *v, const char *why)
{
    struct sn_handler_scrub *sc = arg;
    char ks[200];
    sn_store_key_str(key, klen, ks, sizeof(ks));
    cn_error("scrub: corrupt record '%s' (container %08x offset %llu): %s", ks, v->cid,
             (unsigned long long)v->off, why);
    if (sc->n == sc->cap)
        return;   /* counted in the stats; the list is capped at max_list */
    sn_handler_entry(&sc->ents[sc->n++], sc->job->req.v, key, klen, v);
}

static void sn_handler_scrub(struct sn_job *j)
{
    const struct sn_server_opts *o = sn_server_opts(j->srv);
    struct sn_handler_scrub sc = {j, cn_calloc(o->limits.max_list + 1, sizeof(*sc.ents)), 0,
                                  o->limits.max_list};
    struct sn_scrub_result res;
    struct sn_handler_stats st = {.n = 0};
    struct msg rep;
    char err[CN_ERR_LEN];
    int rc = sn_scrub_run(sn_server_store(j->srv), o->scrub_threads, sn_handler_scrub_cb, &sc,
                          &res, err);
    cn_info("scrub: %llu records, %llu bytes in %llu ms, %llu corrupt",
            (unsigned long long)res.records, (unsigned long long)res.bytes,
            (unsigned long long)(res.elapsed_us / 1000), (unsigned long long)res.corrupt);
    if (rc != CN_OK) {
        sn_server_reply_error(j, sn_handler_status(rc), err);
    } else {
        msg_init_reply(&rep, &j->req, MSG_ST_OK);
        sn_handler_stat(&st, "containers", res.containers);
        sn_handler_stat(&st, "records", res.records);
        sn_handler_stat(&st, "bytes", res.bytes);
        sn_handler_stat(&st, "corrupt", res.corrupt);
        sn_handler_stat(&st, "corrupt_dead", res.corrupt_dead);
        sn_handler_stat(&st, "headers_corrupt", res.headers_corrupt);
        sn_handler_stat(&st, "elapsed_us", res.elapsed_us);
        sn_handler_stat(&st, "threads", o->scrub_threads);
        rep.ents = sc.ents;
        rep.n_ents = sc.n;
        MSG_SET(&rep, MSG_F_ENTS);
        sn_handler_reply_stats(j, &rep, &st);
    }
    for (uint32_t i = 0; i < sc.n; i++)
        cn_free((void *)(uintptr_t)sc.ents[i].key.ptr);
    cn_free(sc.ents);
}

static void sn_handler_compact(struct sn_job *j)
{
    struct sn_compact_result res;
    struct sn_handler_stats st = {.n = 0};
    struct msg rep;
    char err[CN_ERR_LEN];
    int rc = j->auto_compact ? sn_compact_run_auto(sn_server_store(j->srv), &res, err)
                             : sn_compact_run(sn_server_store(j->srv), 0, &res, err);
    cn_info("compaction%s: %u containers scanned, %u reclaimed, %llu records moved, "
            "%llu tombstones purged, %llu bytes freed, %llu ms throttled%s",
            j->auto_compact ? " (automatic)" : "", res.containers_scanned,
            res.containers_reclaimed, (unsigned long long)res.records_moved,
            (unsigned long long)res.tombstones_purged, (unsigned long long)res.bytes_reclaimed,
            (unsigned long long)(res.throttle_us / 1000), res.aborted ? ", stopped" : "");
    if (rc != CN_OK)
        cn_warn("compaction: %s", err);
    msg_init_reply(&rep, &j->req, rc == CN_OK ? MSG_ST_OK : MSG_ST_IO_ERROR);
    if (rc != CN_OK) {
        rep.err = (struct msg_bytes){(const uint8_t *)err, (uint32_t)strlen(err)};
        MSG_SET(&rep, MSG_F_ERR);
    }
    sn_handler_stat(&st, "containers_scanned", res.containers_scanned);
    sn_handler_stat(&st, "containers_reclaimed", res.containers_reclaimed);
    sn_handler_stat(&st, "containers_failed", res.containers_failed);
    sn_handler_stat(&st, "records_moved", res.records_moved);
    sn_handler_stat(&st, "bytes_moved", res.bytes_moved);
    sn_handler_stat(&st, "bytes_reclaimed", res.bytes_reclaimed);
    sn_handler_stat(&st, "tombstones_purged", res.tombstones_purged);
    sn_handler_reply_stats(j, &rep, &st);
}

/* ---- HINT_ADD and HINT_TAKE: hints kept for peers (hint.h) ---- */

static void sn_handler_hint_add(struct sn_job *j)
{
    const struct msg *q = &j->req;
    struct sn_hints *h = sn_server_opts(j->srv)->hints;
    char err[CN_ERR_LEN] = "";
    int applied = 0;
    if (h == NULL) {
        sn_server_reply_error(j, MSG_ST_INTERNAL, "this node keeps no hints");
        return;
    }
    int rc = sn_hints_add(h, q->node.ptr, q->node.len, q->key.ptr, q->key.len, q->ts, q->ver,
                          &applied, err);
    if (rc != CN_OK) {
        /* full: BUSY tells the gateway to try another replica */
        sn_server_reply_error(j, rc == CN_TOOBIG ? MSG_ST_BUSY : sn_handler_status(rc), err);
        return;
    }
    struct msg rep;
    msg_init_reply(&rep, q, MSG_ST_OK);
    rep.applied = (uint32_t)applied;
    MSG_SET(&rep, MSG_F_APPLIED);
    sn_server_reply(j, &rep, NULL, NULL, 0);
}

struct sn_handler_hints {
    struct msg_entry *ents;
    uint32_t n;
};

static void sn_handler_hint_cb(void *arg, const uint8_t *key, uint32_t klen, uint64_t ts,
                               uint64_t ver)
{
    struct sn_handler_hints *l = arg;
    struct msg_entry *e = &l->ents[l->n++];
    memset(e, 0, sizeof(*e));
    e->key = (struct msg_bytes){cn_memdup(key, klen), klen};
    e->ts = ts;
    e->ver = ver;
}

/* Drops the replayed hints the request names; CN_OK or an error with err. */
static int sn_handler_hint_drop(struct sn_hints *h, const struct msg *q, char err[CN_ERR_LEN])
{
    if (q->n_ents > 0 && !MSG_HAS(q, MSG_F_NODE)) {
        snprintf(err, CN_ERR_LEN, "HINT_TAKE with ents needs node");
        return CN_INVAL;
    }
    for (uint32_t i = 0; i < q->n_ents; i++) {
        int removed;
        const struct msg_entry *e = &q->ents[i];
        int rc = sn_hints_remove(h, q->node.ptr, q->node.len, e->key.ptr, e->key.len, e->ts,
                                 e->ver, &removed, err);
        if (rc != CN_OK)
            return rc;
    }
    return CN_OK;
}

static void sn_handler_hint_take(struct sn_job *j)
{
    const struct msg *q = &j->req;
    struct sn_hints *h = sn_server_opts(j->srv)->hints;
    char err[CN_ERR_LEN] = "";
    if (h == NULL) {
        sn_server_reply_error(j, MSG_ST_INTERNAL, "this node keeps no hints");
        return;
    }
    int rc = sn_handler_hint_drop(h, q, err);
    uint32_t limit = MSG_HAS(q, MSG_F_LIMIT) ? q->limit : 100;
    limit = CN_MIN(limit, sn_server_opts(j->srv)->limits.max_list);
    struct sn_handler_hints l = {NULL, 0};
    int more = 0;
    if (rc == CN_OK && MSG_HAS(q, MSG_F_NODE)) {
        l.ents = cn_calloc((size_t)limit + 1, sizeof(*l.ents));
        rc = sn_hints_list(h, q->node.ptr, q->node.len,
                           MSG_HAS(q, MSG_F_AFTER) ? q->after.ptr : NULL,
                           MSG_HAS(q, MSG_F_AFTER) ? q->after.len : 0, limit, sn_handler_hint_cb,
                           &l, &more, err);
    }
    if (rc != CN_OK) {
        sn_server_reply_error(j, sn_handler_status(rc), err);
    } else {
        /* sized to the targets held now (one more may come meanwhile: the
         * copy is capped at what was allocated) */
        uint32_t cap = sn_hints_target_count(h) + 1;
        struct sn_hint_target *t = cn_calloc(cap, sizeof(*t));
        struct msg_stat *counts = cn_calloc(cap, sizeof(*counts));
        uint32_t n = sn_hints_targets(h, t, cap);
        for (uint32_t i = 0; i < n; i++)
            counts[i] = (struct msg_stat){{t[i].id, t[i].id_len}, t[i].count};
        struct msg rep;
        msg_init_reply(&rep, q, MSG_ST_OK);
        rep.stats = counts;
        rep.n_stats = n;
        MSG_SET(&rep, MSG_F_STATS);
        if (MSG_HAS(q, MSG_F_NODE)) {
            rep.ents = l.ents;
            rep.n_ents = l.n;
            rep.more = (uint32_t)more;
            MSG_SET(&rep, MSG_F_ENTS);
            MSG_SET(&rep, MSG_F_MORE);
        }
        sn_server_reply(j, &rep, NULL, NULL, 0);
        cn_free(counts);
        cn_free(t);
    }
    for (uint32_t i = 0; i < l.n; i++)
        cn_free((void *)(uintptr_t)l.ents[i].key.ptr);
    cn_free(l.ents);
}

void sn_handler_run(struct sn_job *j)
{
    switch (j->req.op) {
    case MSG_OP_PING: sn_handler_ping(j); break;
    case MSG_OP_STATS: sn_handler_stats(j); break;
    case MSG_OP_PUT:
    case MSG_OP_DELETE: sn_handler_write(j); break;
    case MSG_OP_GET:
    case MSG_OP_HEAD: sn_handler_read(j); break;
    case MSG_OP_LIST: sn_handler_list(j); break;
    case MSG_OP_SCRUB: sn_handler_scrub(j); break;
    case MSG_OP_COMPACT: sn_handler_compact(j); break;
    case MSG_OP_LOCK: sn_handler_lock(j); break;
    case MSG_OP_UNLOCK: sn_handler_unlock(j); break;
    case MSG_OP_DIGEST: sn_digest_handle(j); break;
    case MSG_OP_HINT_ADD: sn_handler_hint_add(j); break;
    case MSG_OP_HINT_TAKE: sn_handler_hint_take(j); break;
    case MSG_OP_PURGE: sn_handler_purge(j); break;
    default: sn_server_reply_error(j, MSG_ST_BAD_REQUEST, "unknown op"); break;
    }
}
