/* The rebalance worker (rebalance.h). One chain of callbacks per round:
 * read the record -> (claim the lease, lease.h: write it, wait settle_us, read it
 * back) -> when held and the map version in use is above the one the
 * record says was rebalanced: list a page of keys after the cursor, repair
 * each (at most inflight at once, the throttle's bytes/s between starts)
 * and, with purge on, PURGE the copies non-owners hold -> read the record
 * again (the throttle an operator set, and whether the lease is still
 * ours) -> write the cursor and counters. A round ends early when a third
 * of the lease has passed, so the lease is renewed in time however slow
 * the throttle makes it. */
#include "rebalance.h"

#include <stdio.h>
#include <string.h>

#include <msgpack.h>
#include <openssl/rand.h>

#include "cluster.h"
#include "lease.h"
#include "map_sync.h"
#include "store.h"

#include "msg/msg.h"

#include "cn/alloc.h"
#include "cn/log.h"
#include "cn/metrics.h"
#include "cn/time.h"

#define GW_RB_KEY_MAX 1100
#define GW_RB_RECORD_MAX 4096

/* What the system record holds (docs/cluster.md). */
struct gw_rb_status {
    struct gw_lease_head lease;   /* holder, lease_until (lease.h) */
    uint64_t done_version, from_version, to_version;
    uint64_t scanned, copied, bytes, purged, failed;
    uint64_t started, updated, finished;
    uint64_t throttle_bps;
    int has_throttle;
    int running;
    char cursor[GW_RB_KEY_MAX];
    uint32_t cursor_len;
};

struct gw_rb_item {
    char key[GW_RB_KEY_MAX];
    uint32_t key_len;
    int done;
    int system;         /* an "s/" record: copied to its new owners, never purged */
    uint64_t charged;   /* bytes the throttle charged before the copy (the listed size) */
};

struct gw_rebalance {
    struct event_base *base;
    struct gw_store *store;
    const struct gw_cluster *cluster;
    struct gw_rebalance_opts o;
    char holder[GW_LEASE_HOLDER_MAX];
    uint64_t ver;
    struct gw_lease *lease;    /* "s/rebalance": reads and writes st */
    struct event *timer;       /* the throttle's waits */
    void (*resume)(struct gw_rebalance *rb);
    int closed, inflight;      /* inflight: the walk's operations */
    struct gw_rb_status st;
    /* the page at hand */
    struct gw_rb_item *items;
    uint32_t n, next, busy;
    int more;
    uint64_t round_start;
    uint64_t next_ok;          /* throttle: the earliest next start */
    uint64_t walked_ver;       /* the map version this gateway last walked for (0: none) */
    uint64_t seen_ver, seen_at; /* the map version in use and when this worker first saw it */
    uint64_t retry_at;         /* a walk that ended with failures starts again from then */
    /* metrics */
    struct cn_metrics *reg;
    uint32_t m_keys, m_copied, m_bytes, m_purged, m_running, m_held;
};

static void gw_rb_pump(struct gw_rebalance *rb);

/* ---- the record: the lease's (lease.h) and the walk's ------------------ */

/* The walk's fields of the record (docs/cluster.md). Stamps updated_us. */
static uint32_t gw_rb_encode(void *arg, msgpack_packer *pk)
{
    struct gw_rebalance *rb = arg;
    struct gw_rb_status *s = &rb->st;
    s->updated = cn_time_now_us();
    gw_lease_pack_str(pk, "state", 5);
    gw_lease_pack_str(pk, s->running ? "copying" : "idle", s->running ? 7 : 4);
    gw_lease_pack_str(pk, "cursor", 6);
    msgpack_pack_bin(pk, s->cursor_len);
    msgpack_pack_bin_body(pk, s->cursor, s->cursor_len);
    gw_lease_pack_u64(pk, "done_version", s->done_version);
    gw_lease_pack_u64(pk, "from_version", s->from_version);
    gw_lease_pack_u64(pk, "to_version", s->to_version);
    gw_lease_pack_u64(pk, "scanned", s->scanned);
    gw_lease_pack_u64(pk, "copied", s->copied);
    gw_lease_pack_u64(pk, "bytes", s->bytes);
    gw_lease_pack_u64(pk, "purged", s->purged);
    gw_lease_pack_u64(pk, "failed", s->failed);
    gw_lease_pack_u64(pk, "started_us", s->started);
    gw_lease_pack_u64(pk, "updated_us", s->updated);
    gw_lease_pack_u64(pk, "finished_us", s->finished);
    if (s->has_throttle)
        gw_lease_pack_u64(pk, "throttle_bps", s->throttle_bps);
    return 13 + (uint32_t)s->has_throttle;
}

/* One of the walk's fields of the record into *status: CN_OK, or CN_INVAL
 * for a known key of the wrong type or size (unknown keys are skipped). */
static int gw_rb_decode_field(void *status, const msgpack_object *k, const msgpack_object *v)
{
    struct gw_rb_status *s = status;
    static const char *const u64s[] = {"done_version", "from_version", "to_version", "scanned",
                                       "copied", "bytes", "purged", "failed", "started_us",
                                       "updated_us", "finished_us", "throttle_bps"};
    uint64_t *slots[] = {&s->done_version, &s->from_version, &s->to_version, &s->scanned,
                         &s->copied, &s->bytes, &s->purged, &s->failed, &s->started,
                         &s->updated, &s->finished, &s->throttle_bps};
    if (gw_lease_key_is(k, "state")) {
        s->running = v->type == MSGPACK_OBJECT_STR && v->via.str.size == 7 &&
                     memcmp(v->via.str.ptr, "copying", 7) == 0;
        return CN_OK;
    }
    if (gw_lease_key_is(k, "cursor")) {
        if (v->type != MSGPACK_OBJECT_BIN || v->via.bin.size > sizeof(s->cursor))
            return CN_INVAL;
        memcpy(s->cursor, v->via.bin.ptr, v->via.bin.size);
        s->cursor_len = v->via.bin.size;
        return CN_OK;
    }
    if (gw_lease_key_is(k, "throttle_bps"))
        s->has_throttle = 1;   /* (a value of the wrong type refuses the record) */
    return gw_lease_decode_u64(k, v, u64s, slots, CN_ARRAY_LEN(u64s));
}

static void gw_rb_held(void *arg);
static void gw_rb_on_read(void *arg);
static void gw_rb_on_lost(void *arg);
static void gw_rb_merge(void *arg, const void *read);

static const struct gw_lease_ops gw_rb_lease_ops = {
    .what = "rebalance",
    .key = GW_REBALANCE_KEY,
    .record_max = GW_RB_RECORD_MAX,
    .status_size = sizeof(struct gw_rb_status),
    .encode = gw_rb_encode,
    .decode_field = gw_rb_decode_field,
    .held = gw_rb_held,
    .on_read = gw_rb_on_read,
    .on_lost = gw_rb_on_lost,
    .merge = gw_rb_merge,
};

int gw_rebalance_record_parses(const void *data, size_t len)
{
    struct gw_rb_status s;
    int ok = gw_lease_decode(&gw_rb_lease_ops, data, len, &s) == CN_OK;
    CN_ASSERT(memchr(s.lease.holder, '\0', sizeof(s.lease.holder)) != NULL);
    CN_ASSERT(s.cursor_len <= sizeof(s.cursor));
    return ok;
}

/* ---- the pure decisions ------------------------------------------------ */

uint32_t gw_rebalance_non_owners(const uint32_t *owners, uint32_t n_owners,
                                 const uint32_t *members, uint32_t n_members, uint32_t *out)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < n_members; i++) {
        int owner = 0;
        for (uint32_t j = 0; j < n_owners; j++)
            owner |= owners[j] == members[i];
        int dup = 0;
        for (uint32_t j = 0; j < n; j++)
            dup |= out[j] == members[i];
        if (!owner && !dup)
            out[n++] = members[i];
    }
    return n;
}

int gw_rebalance_may_purge(const struct gw_repair_result *res, uint32_t i)
{
    /* a tombstone counts: the owners hold the delete (the repair wrote it
     * first), so the old copies may go and cannot bring the key back */
    if (res->rc != CN_OK || i >= res->n_extra_held)
        return 0;
    /* a copy newer than what the owners hold (a write that raced the walk
     * and went to the old ring) is never removed */
    uint64_t ts = res->extra_ts[i], ver = res->extra_ver[i];
    return ts < res->newest_ts || (ts == res->newest_ts && ver <= res->newest_ver);
}

uint64_t gw_rebalance_charge(uint64_t next_ok, uint64_t now, uint64_t bytes, uint64_t bps)
{
    if (bps == 0)
        return next_ok;
    return CN_MAX(next_ok, now) + bytes * 1000000u / bps;
}

uint64_t gw_rebalance_settle(uint64_t next_ok, uint64_t charged, uint64_t copied, uint64_t bps)
{
    if (bps == 0 || copied == charged)
        return next_ok;
    if (copied > charged)   /* more new owners than one lacked it: pay the rest */
        return next_ok + (copied - charged) * 1000000u / bps;
    uint64_t back = (charged - copied) * 1000000u / bps;   /* nothing or less was copied */
    return next_ok > back ? next_ok - back : 0;
}

/* ---- plumbing ---------------------------------------------------------- */

static void gw_rb_on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    struct gw_rebalance *rb = arg;
    void (*fn)(struct gw_rebalance *) = rb->resume;
    rb->resume = NULL;
    if (!rb->closed && fn != NULL)
        fn(rb);
}

static void gw_rb_after(struct gw_rebalance *rb, uint64_t delay_us,
                        void (*fn)(struct gw_rebalance *rb))
{
    rb->resume = fn;
    struct timeval tv = {(time_t)(delay_us / 1000000), (suseconds_t)(delay_us % 1000000)};
    evtimer_add(rb->timer, &tv);
}

static int gw_rb_op_done(struct gw_rebalance *rb)
{
    rb->inflight--;
    return rb->closed;
}

static void gw_rb_set_running(struct gw_rebalance *rb, int running)
{
    rb->st.running = running;
    if (rb->reg != NULL)
        cn_metrics_set(rb->reg, rb->m_running, running && gw_lease_held(rb->lease));
}

static void gw_rb_again(struct gw_rebalance *rb)
{
    gw_lease_again(rb->lease);
}

/* ---- the walk ---------------------------------------------------------- */

static int gw_rb_is_system(const char *key, uint32_t len)
{
    return len >= 2 && memcmp(key, "s/", 2) == 0;
}

static int gw_rb_is_map(const char *key, uint32_t len)
{
    return len == strlen(GW_MAP_SYNC_KEY) && memcmp(key, GW_MAP_SYNC_KEY, len) == 0;
}

static uint64_t gw_rb_bps(const struct gw_rebalance *rb)
{
    return rb->st.has_throttle ? rb->st.throttle_bps : rb->o.default_bps;
}

/* The record written (at round end, or by a holder with nothing to walk). */
static void gw_rb_on_saved(void *arg, enum gw_lease_result r)
{
    struct gw_rebalance *rb = arg;
    if (r == GW_LEASE_LOST) {   /* taken over: its cursor wins */
        rb->walked_ver = 0;
        gw_rb_set_running(rb, 0);
    }
    /* more to do: the next round at once; else look again later */
    if (r == GW_LEASE_OK && rb->st.running)
        gw_lease_check(rb->lease);
    else
        gw_rb_again(rb);
}

/* Round end, the record read again and still ours: keep the operator's
 * throttle (then the progress is written). */
static void gw_rb_merge(void *arg, const void *read)
{
    struct gw_rebalance *rb = arg;
    const struct gw_rb_status *s = read;
    rb->st.has_throttle = s->has_throttle;
    rb->st.throttle_bps = s->throttle_bps;
}

/* Every started repair of the round answered: the cursor moves past the
 * keys done (a prefix of the page), the walk ends after the last page. */
static void gw_rb_round_end(struct gw_rebalance *rb)
{
    uint32_t k = 0;
    while (k < rb->n && rb->items[k].done)
        k++;
    if (k > 0) {
        memcpy(rb->st.cursor, rb->items[k - 1].key, rb->items[k - 1].key_len);
        rb->st.cursor_len = rb->items[k - 1].key_len;
    }
    if (k == rb->n && !rb->more) {
        CN_LOG(CN_LOG_INFO, "rebalance: map version %llu done: %llu keys scanned, %llu copies "
               "written (%llu bytes), %llu purged, %llu failed",
               (unsigned long long)rb->st.to_version, (unsigned long long)rb->st.scanned,
               (unsigned long long)rb->st.copied, (unsigned long long)rb->st.bytes,
               (unsigned long long)rb->st.purged, (unsigned long long)rb->st.failed);
        if (rb->st.failed == 0) {
            rb->st.done_version = rb->st.to_version;
            rb->st.finished = cn_time_now_us();
        }
        rb->st.cursor_len = 0;   /* a walk with failures starts over, after a pause */
        if (rb->st.failed != 0)
            rb->retry_at = cn_time_now_us() + CN_MAX(10 * rb->o.interval_us, 10000000u);
        gw_rb_set_running(rb, rb->st.failed != 0);   /* failed: shown until the next pass */
    }
    rb->n = rb->next = 0;
    gw_lease_renew(rb->lease, gw_rb_on_saved);
}

struct gw_rb_key_op {
    struct gw_rebalance *rb;
    uint32_t idx;
    uint32_t outstanding;
};

static void gw_rb_key_done(struct gw_rb_key_op *op)
{
    struct gw_rebalance *rb = op->rb;
    rb->items[op->idx].done = 1;
    rb->busy--;
    cn_free(op);
    gw_rb_pump(rb);
}

static void gw_rb_on_purged(struct gw_storage_reply *r, void *arg)
{
    struct gw_rb_key_op *op = arg;
    struct gw_rebalance *rb = op->rb;
    rb->inflight--;
    if (r->rc == CN_OK && r->m.st == MSG_ST_OK && r->m.applied) {
        rb->st.purged++;
        if (rb->reg != NULL)
            cn_metrics_add(rb->reg, rb->m_purged, 1);
    }
    if (--op->outstanding != 0)
        return;
    if (rb->closed)
        cn_free(op);
    else
        gw_rb_key_done(op);
}

/* The copies the key's non-owners hold, removed where the owners were
 * seen to hold the newest version (gw_rebalance_may_purge). */
static void gw_rb_purge(struct gw_rb_key_op *op, const struct gw_repair_result *res)
{
    struct gw_rebalance *rb = op->rb;
    const struct gw_rb_item *it = &rb->items[op->idx];
    op->outstanding = 1;
    for (uint32_t i = 0; rb->o.purge && !it->system && i < res->n_extra_held; i++) {
        if (!gw_rebalance_may_purge(res, i))
            continue;
        struct msg m;
        msg_init_request(&m, MSG_OP_PURGE, 0);
        m.key = (struct msg_bytes){(const uint8_t *)it->key, it->key_len};
        m.ts = res->extra_ts[i];
        m.ver = res->extra_ver[i];
        MSG_SET(&m, MSG_F_KEY);
        MSG_SET(&m, MSG_F_TS);
        MSG_SET(&m, MSG_F_VER);
        op->outstanding++;
        rb->inflight++;
        gw_storage_client_send(gw_store_client(rb->store), res->extra_held[i], &m, NULL,
                               gw_rb_on_purged, op);
    }
    if (--op->outstanding == 0)
        gw_rb_key_done(op);
}

static void gw_rb_on_repaired(const struct gw_repair_result *res, void *arg)
{
    struct gw_rb_key_op *op = arg;
    struct gw_rebalance *rb = op->rb;
    rb->inflight--;
    if (rb->closed) {
        cn_free(op);
        return;
    }
    rb->st.scanned++;
    rb->st.copied += res->written;
    rb->st.bytes += res->bytes;
    if (res->rc != CN_OK)
        rb->st.failed++;
    if (rb->reg != NULL) {
        cn_metrics_add(rb->reg, rb->m_keys, 1);
        cn_metrics_add(rb->reg, rb->m_copied, res->written);
        cn_metrics_add(rb->reg, rb->m_bytes, res->bytes);
    }
    /* the token bucket charged the listed size before the copy: settle
     * to what was copied */
    rb->next_ok = gw_rebalance_settle(rb->next_ok, rb->items[op->idx].charged, res->bytes,
                                      gw_rb_bps(rb));
    if (res->rc == CN_OK) {
        gw_rb_purge(op, res);
        return;
    }
    gw_rb_key_done(op);
}

static void gw_rb_start_key(struct gw_rebalance *rb, uint32_t idx)
{
    if (rb->items[idx].done)   /* the cluster map: skipped */
        return;
    struct gw_rb_item *it = &rb->items[idx];
    /* the throttle is paid before the copy is sent (one copy of the listed
     * size; gw_rebalance_settle() corrects it when the repair answers) */
    uint64_t bps = gw_rb_bps(rb);
    it->charged = bps > 0 ? it->charged : 0;
    rb->next_ok = gw_rebalance_charge(rb->next_ok, cn_time_now_us(), it->charged, bps);
    uint32_t owners[GW_STORE_MAX_REPLICAS], members[CN_CLUSTER_MAX_NODES * 2];
    uint32_t extra[CN_CLUSTER_MAX_NODES * 2];
    uint32_t n_own = gw_store_replicas(rb->store, it->key, it->key_len, owners,
                                       GW_STORE_MAX_REPLICAS);
    uint32_t n_mem = gw_store_members(rb->store, members, CN_ARRAY_LEN(members));
    uint32_t n_extra = gw_rebalance_non_owners(owners, n_own, members, n_mem, extra);
    struct gw_rb_key_op *op = cn_calloc(1, sizeof(*op));
    op->rb = rb;
    op->idx = idx;
    rb->busy++;
    rb->inflight++;
    gw_repair_key_from(rb->store, it->key, it->key_len, extra, n_extra, gw_rb_on_repaired, op);
}

/* Starts keys of the page while the in-flight bound, the throttle and the
 * round's time allow; ends the round when nothing is left running. */
static void gw_rb_pump(struct gw_rebalance *rb)
{
    if (rb->closed)
        return;
    uint64_t now = cn_time_now_us();
    int late = now - rb->round_start > rb->o.lease_us / 3;
    while (!late && rb->next < rb->n && rb->busy < rb->o.inflight) {
        if (gw_rb_bps(rb) > 0 && now < rb->next_ok) {
            if (rb->busy == 0)
                gw_rb_after(rb, rb->next_ok - now, gw_rb_pump);
            return;
        }
        gw_rb_start_key(rb, rb->next++);
    }
    if (rb->busy == 0 && (late || rb->next == rb->n))
        gw_rb_round_end(rb);
}

static void gw_rb_on_page(struct gw_store_list_result *res, void *arg)
{
    struct gw_rebalance *rb = arg;
    if (gw_rb_op_done(rb))
        return;
    if (res->rc != CN_OK) {
        CN_LOG(CN_LOG_WARN, "rebalance: listing failed (%s): again in a while", res->err);
        gw_rb_again(rb);
        return;
    }
    rb->n = rb->next = rb->busy = 0;
    for (uint32_t i = 0; i < res->n_ents && i < rb->o.page; i++) {
        const struct gw_store_entry *e = &res->ents[i];
        if (e->key_len > GW_RB_KEY_MAX)
            continue;
        struct gw_rb_item *it = &rb->items[rb->n++];
        memcpy(it->key, e->key, e->key_len);
        it->key_len = e->key_len;
        it->charged = (e->flags & MSG_FLAG_TOMBSTONE) ? 0 : e->size;
        /* the cluster map is on every node (cairn-admin writes it there,
         * not by the ring): left alone. Other system records ("s/keys/",
         * "s/accounts/", the workers' leases) live on their ring replicas:
         * copied to the new ones like any key, but never purged (readers
         * such as cairn-admin take the newest copy from every node) */
        it->done = gw_rb_is_map(it->key, it->key_len);
        it->system = gw_rb_is_system(it->key, it->key_len);
    }
    rb->more = res->more;
    rb->round_start = cn_time_now_us();
    gw_rb_pump(rb);
}

/* Held and copying: the next page after the cursor. */
static void gw_rb_walk(struct gw_rebalance *rb)
{
    rb->inflight++;
    gw_store_list_all(rb->store, "", 0, rb->st.cursor, rb->st.cursor_len, rb->o.page,
                      gw_rb_on_page, rb);
}

/* ---- the lease's callbacks ---------------------------------------------- */

/* Notes when this worker first saw map version v in use (every tick, held
 * or not, so a gateway taking the lease over does not wait again). */
static void gw_rb_note_map(struct gw_rebalance *rb, uint64_t v, uint64_t now)
{
    if (v != rb->seen_ver) {
        rb->seen_ver = v;
        rb->seen_at = now;
    }
}

static void gw_rb_on_read(void *arg)
{
    struct gw_rebalance *rb = arg;
    gw_rb_note_map(rb, gw_cluster_view_version(gw_cluster_view(rb->cluster)), cn_time_now_us());
}

static void gw_rb_on_lost(void *arg)
{
    gw_rb_set_running(arg, 0);
}

/* The lease is ours (st as read): start a walk when the map moved on,
 * continue one, or renew. */
static void gw_rb_held(void *arg)
{
    struct gw_rebalance *rb = arg;
    uint64_t now = cn_time_now_us();
    uint64_t v = gw_cluster_view_version(gw_cluster_view(rb->cluster));
    gw_rb_note_map(rb, v, now);
    if (v > rb->st.done_version &&
        (now - rb->seen_at < rb->o.map_delay_us || now < rb->retry_at)) {
        /* gateways still on the older map may write by its ring, or the last
         * walk failed on some key (a node down): wait */
        gw_rb_set_running(rb, 0);
        gw_lease_write(rb->lease, gw_rb_on_saved);
        return;
    }
    if (v > rb->st.done_version && v != rb->st.to_version) {
        /* a new walk (a map newer than the one a walk was under restarts it) */
        CN_LOG(CN_LOG_INFO, "rebalance: map version %llu -> %llu: walk starts (%s)",
               (unsigned long long)rb->st.done_version, (unsigned long long)v, rb->holder);
        rb->st.from_version = rb->st.done_version;
        rb->st.to_version = v;
        rb->st.cursor_len = 0;
        rb->st.scanned = rb->st.copied = rb->st.bytes = rb->st.purged = rb->st.failed = 0;
        rb->st.started = now;
        rb->st.finished = 0;
        gw_rb_set_running(rb, 1);
    } else {
        if (rb->walked_ver != v && v > rb->st.done_version && rb->st.cursor_len > 0)
            CN_LOG(CN_LOG_INFO, "rebalance: walk of map version %llu resumes after key '%.*s' "
                   "(%llu keys scanned) (%s)", (unsigned long long)v, (int)rb->st.cursor_len,
                   rb->st.cursor, (unsigned long long)rb->st.scanned, rb->holder);
        if (v > rb->st.done_version && rb->st.cursor_len == 0 && rb->st.failed > 0)
            rb->st.failed = 0;   /* a new pass after one that failed on some key */
        gw_rb_set_running(rb, v > rb->st.done_version);
    }
    rb->walked_ver = v;
    if (rb->st.running) {
        gw_rb_walk(rb);
        return;
    }
    gw_lease_write(rb->lease, gw_rb_on_saved);
}

/* ---- life -------------------------------------------------------------- */

static void gw_rb_metrics(struct gw_rebalance *rb)
{
    rb->m_keys = cn_metrics_counter(rb->reg, "cairn_gateway_rebalance_keys_total",
                                    "keys the rebalance worker checked against the new ring", 0,
                                    NULL);
    rb->m_copied = cn_metrics_counter(rb->reg, "cairn_gateway_rebalance_copies_total",
                                      "copies the rebalance worker wrote to new owners", 0, NULL);
    rb->m_bytes = cn_metrics_counter(rb->reg, "cairn_gateway_rebalance_bytes_total",
                                     "data bytes the rebalance worker copied", 0, NULL);
    rb->m_purged = cn_metrics_counter(rb->reg, "cairn_gateway_rebalance_purged_total",
                                      "copies removed from nodes that no longer own the key", 0,
                                      NULL);
    rb->m_running = cn_metrics_gauge(rb->reg, "cairn_gateway_rebalance_running",
                                     "1 while this gateway walks the keys after a map change", 0,
                                     NULL);
    rb->m_held = cn_metrics_gauge(rb->reg, "cairn_gateway_rebalance_lease_held",
                                  "1 while this gateway holds the rebalance lease", 0, NULL);
}

struct gw_rebalance *gw_rebalance_new(struct event_base *base, struct gw_store *store,
                                      const struct gw_cluster *cluster,
                                      const struct gw_rebalance_opts *o, struct cn_metrics *reg)
{
    struct gw_rebalance *rb = cn_calloc(1, sizeof(*rb));
    rb->base = base;
    rb->store = store;
    rb->cluster = cluster;
    rb->o = *o;
    rb->o.holder = NULL;
    rb->o.inflight = CN_MAX(rb->o.inflight, 1u);
    rb->o.page = CN_MAX(rb->o.page, 1u);
    snprintf(rb->holder, sizeof(rb->holder), "%s", o->holder);
    unsigned char b[8];
    if (RAND_bytes(b, sizeof(b)) != 1)
        memset(b, 0, sizeof(b));
    memcpy(&rb->ver, b, sizeof(rb->ver));
    rb->items = cn_calloc(rb->o.page, sizeof(*rb->items));
    rb->timer = evtimer_new(base, gw_rb_on_timer, rb);
    rb->reg = reg;
    if (reg != NULL)
        gw_rb_metrics(rb);
    struct gw_lease_opts lo = {.interval_us = o->interval_us, .lease_us = o->lease_us,
                               .settle_us = o->settle_us, .ver = rb->ver, .holder = rb->holder};
    rb->lease = gw_lease_new(base, store, &gw_rb_lease_ops, &lo, &rb->st, rb, reg, rb->m_held);
    return rb;
}

void gw_rebalance_close(struct gw_rebalance *rb)
{
    if (rb == NULL)
        return;
    rb->closed = 1;
    evtimer_del(rb->timer);
    gw_lease_close(rb->lease);
}

void gw_rebalance_free(struct gw_rebalance *rb)
{
    if (rb == NULL)
        return;
    int inflight = rb->inflight + gw_lease_inflight(rb->lease);
    if (inflight != 0) {
        CN_LOG(CN_LOG_WARN, "rebalance: %d operations never answered: worker not freed",
               inflight);
        return;
    }
    gw_lease_free(rb->lease);
    event_free(rb->timer);
    cn_free(rb->items);
    cn_free(rb);
}
