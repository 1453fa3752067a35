/* The chunk collector (collector.h). One chain of callbacks, one store
 * operation in flight (or one HEAD per replica of an object record):
 * tick -> read the lease record -> (claim it, wait settle_us, read it back)
 * -> when held and a scan is due: list "c/" after the cursor, a page at a
 * time, grouping consecutive chunks by segment (one write's chunks sort
 * together) -> for each segment whose newest chunk is older than the grace:
 * list the key's part records, list its version records (reading the large
 * ones' maps), probe the object record on its replicas (store_probe.h,
 * reading its map) ->
 * decide -> when orphaned: list the segment again and delete its chunks,
 * throttled -> the cursor moves past the segment. The lease is the
 * workers' shared one (lease.h); it is renewed, with the cursor, whenever a
 * third of its time has passed. */
#include "collector.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <msgpack.h>
#include <openssl/rand.h>

#include "keys.h"
#include "lease.h"
#include "lo_map.h"
#include "multipart.h"
#include "store.h"
#include "store_probe.h"

#include "msg/msg.h"

#include "cn/alloc.h"
#include "cn/hlc.h"
#include "cn/log.h"
#include "cn/metrics.h"
#include "cn/time.h"

#define GW_COLLECTOR_RECORD_MAX 8192
#define GW_COLLECTOR_SHOW_MAX 200

/* ---- the pure part ----------------------------------------------------- */

static int gw_collector_hex(const char *p, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = p[i];
        int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
        if (d < 0)
            return CN_INVAL;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return CN_OK;
}

int gw_collector_chunk_parse(const void *k, size_t len, struct gw_collector_chunk *out)
{
    const char *s = k;
    memset(out, 0, sizeof(*out));
    /* "c/" + at least "b/" + NUL 16 hex "/" 8 hex */
    if (len < 4 + GW_COLLECTOR_SUFFIX_LEN || s[0] != 'c' || s[1] != '/')
        return CN_INVAL;
    size_t okey_len = len - GW_COLLECTOR_SUFFIX_LEN;
    if (okey_len > GW_KEYS_MAX || s[okey_len] != '\0' || s[okey_len + 17] != '/')
        return CN_INVAL;
    const char *slash = memchr(s + 2, '/', okey_len - 2);
    if (slash == NULL || slash == s + 2 || memchr(s, '\0', okey_len) != NULL)
        return CN_INVAL;   /* no bucket, or a NUL inside the object part */
    uint64_t ver, idx;
    if (gw_collector_hex(s + okey_len + 1, 16, &ver) != CN_OK ||
        gw_collector_hex(s + okey_len + 18, 8, &idx) != CN_OK)
        return CN_INVAL;
    out->okey_len = okey_len;
    out->seg_len = okey_len + 18;
    out->ver = ver;
    out->idx = (uint32_t)idx;
    return CN_OK;
}

int gw_collector_map_names(const struct gw_lo_map *m, uint64_t ver)
{
    for (uint32_t i = 0; i < m->n_segs; i++)
        if (m->segs[i].ver == ver)
            return 1;
    return 0;
}

enum gw_collector_verdict gw_collector_decide(const struct gw_collector_facts *f)
{
    if (f->newest_chunk_ts > f->now_us || f->now_us - f->newest_chunk_ts < f->grace_us)
        return GW_COLLECTOR_KEEP_YOUNG;
    if (!f->lookups_ok)
        return GW_COLLECTOR_KEEP_UNSURE;
    if (f->referenced)
        return GW_COLLECTOR_KEEP_REFERENCED;
    if (f->parent_ts != 0 &&
        (f->parent_ts > f->now_us || f->now_us - f->parent_ts < f->grace_us))
        return GW_COLLECTOR_KEEP_PARENT_RECENT;
    return GW_COLLECTOR_DELETE;
}

const char *gw_collector_verdict_str(enum gw_collector_verdict v)
{
    switch (v) {
    case GW_COLLECTOR_DELETE: return "delete";
    case GW_COLLECTOR_KEEP_YOUNG: return "keep (young)";
    case GW_COLLECTOR_KEEP_UNSURE: return "keep (a lookup failed)";
    case GW_COLLECTOR_KEEP_REFERENCED: return "keep (referenced)";
    case GW_COLLECTOR_KEEP_PARENT_RECENT: return "keep (object changed within the grace)";
    }
    return "?";
}

/* ---- state ------------------------------------------------------------- */

/* What the system record holds: the lease, the cursor, the scans' counts. */
struct gw_collector_status {
    struct gw_lease_head lease;   /* holder, lease_until (lease.h) */
    uint64_t last_start, last_end, next_due, scans;
    uint64_t scanned, segments, deleted, bytes_freed, kept_young, kept_unsure;
    uint64_t total_scanned, total_deleted, total_bytes_freed;
    int scanning;
    char cursor[GW_LO_KEY_MAX];   /* the last chunk key of the last segment done */
    uint32_t cursor_len;          /* 0: from the start */
};

struct gw_collector_item {
    char key[GW_LO_KEY_MAX];
    uint32_t key_len;
    uint64_t size, ts;
    char etag[129];
    int has_osize;           /* the record's osize (lo_map.h) */
    uint64_t osize;
};

struct gw_collector_page {
    struct gw_collector_item *items;
    uint32_t n, idx, cap;
    int more;
};

struct gw_collector {
    struct event_base *base;
    struct gw_store *store;
    struct gw_collector_opts o;
    char holder[GW_LEASE_HOLDER_MAX];
    uint64_t ver;                 /* this gateway's writes of the record and tombstones */
    struct gw_lease *lease;       /* "s/collector": reads and writes st */
    struct event *timer;          /* the delete throttle's waits */
    void (*resume)(struct gw_collector *c);
    int closed, inflight;         /* inflight: the scan's store operations */
    struct gw_collector_status st;
    uint64_t next_delete;
    void (*after_renew)(struct gw_collector *c);
    void (*after_slot)(struct gw_collector *c);
    /* the scan */
    struct gw_collector_page chunks;   /* the "c/" listing */
    struct gw_collector_page sub;      /* parts, versions, or the segment's chunks */
    int have_seg;
    char seg[GW_LO_KEY_MAX];           /* the segment's prefix (seg_len bytes) */
    struct gw_collector_chunk segc;    /* its first chunk's split (okey_len, seg_len, ver) */
    char seg_last[GW_LO_KEY_MAX];      /* its last chunk key seen */
    uint32_t seg_last_len;
    uint64_t seg_newest_ts;
    struct gw_collector_facts facts;
    char okey[GW_KEYS_MAX];            /* "o/<bucket>/<key>" of the segment */
    uint64_t head_ts;                  /* the object record's newest version seen */
    /* metrics (reg NULL: none) */
    struct cn_metrics *reg;
    uint32_t m_scans, m_scanned, m_deleted, m_bytes, m_held;
};

static void gw_collector_next_chunk(struct gw_collector *c);
static void gw_collector_finish(struct gw_collector *c, const char *why);
static void gw_collector_seg_done(struct gw_collector *c, enum gw_collector_verdict v);

/* ---- the record: the lease's (lease.h), the cursor, the scans' counts --- */

/* The cursor as a person reads it: "<bucket>/<key> <ver>", cut at
 * GW_COLLECTOR_SHOW_MAX bytes of the key. */
static size_t gw_collector_cursor_show(const struct gw_collector_status *s, char *out, size_t cap)
{
    struct gw_collector_chunk ch;
    if (s->cursor_len == 0 || gw_collector_chunk_parse(s->cursor, s->cursor_len, &ch) != CN_OK)
        return 0;
    int n = snprintf(out, cap, "%.*s v%016" PRIx64 " #%" PRIu32,
                     (int)CN_MIN(ch.okey_len - 2, (size_t)GW_COLLECTOR_SHOW_MAX), s->cursor + 2,
                     ch.ver, ch.idx);
    return n < 0 ? 0 : CN_MIN((size_t)n, cap - 1);
}

/* The collector's fields of the record (docs/large-objects.md). */
static uint32_t gw_collector_encode(void *arg, msgpack_packer *pk)
{
    const struct gw_collector *c = arg;
    const struct gw_collector_status *s = &c->st;
    gw_lease_pack_str(pk, "state", 5);
    gw_lease_pack_str(pk, s->scanning ? "scanning" : "idle", s->scanning ? 8 : 4);
    gw_lease_pack_u64(pk, "last_start_us", s->last_start);
    gw_lease_pack_u64(pk, "last_end_us", s->last_end);
    gw_lease_pack_u64(pk, "next_due_us", s->next_due);
    gw_lease_pack_u64(pk, "scans", s->scans);
    gw_lease_pack_u64(pk, "scanned", s->scanned);
    gw_lease_pack_u64(pk, "segments", s->segments);
    gw_lease_pack_u64(pk, "deleted", s->deleted);
    gw_lease_pack_u64(pk, "bytes_freed", s->bytes_freed);
    gw_lease_pack_u64(pk, "kept_young", s->kept_young);
    gw_lease_pack_u64(pk, "kept_unsure", s->kept_unsure);
    gw_lease_pack_u64(pk, "total_scanned", s->total_scanned);
    gw_lease_pack_u64(pk, "total_deleted", s->total_deleted);
    gw_lease_pack_u64(pk, "total_bytes_freed", s->total_bytes_freed);
    gw_lease_pack_u64(pk, "grace_ms", c->o.grace_us / 1000);
    gw_lease_pack_u64(pk, "interval_ms", c->o.interval_us / 1000);
    gw_lease_pack_u64(pk, "lease_ms", c->o.lease_us / 1000);
    gw_lease_pack_u64(pk, "max_rate", c->o.max_rate);
    gw_lease_pack_str(pk, "cursor", 6);
    msgpack_pack_bin(pk, s->cursor_len);
    msgpack_pack_bin_body(pk, s->cursor, s->cursor_len);
    char show[GW_COLLECTOR_SHOW_MAX + 48];
    size_t sn = gw_collector_cursor_show(s, show, sizeof(show));
    gw_lease_pack_str(pk, "cursor_at", 9);
    gw_lease_pack_str(pk, sn > 0 ? show : "(start)", sn > 0 ? sn : 7);
    return 20;
}

/* One of the collector's keys into *status: CN_OK (also for a key it does
 * not know) or CN_INVAL when its value has the wrong type or size. */
static int gw_collector_decode_field(void *status, const msgpack_object *k,
                                     const msgpack_object *v)
{
    struct gw_collector_status *s = status;
    static const char *const u64s[] = {
        "last_start_us", "last_end_us", "next_due_us", "scans", "scanned", "segments",
        "deleted", "bytes_freed", "kept_young", "kept_unsure", "total_scanned",
        "total_deleted", "total_bytes_freed"};
    uint64_t *slots[] = {&s->last_start, &s->last_end, &s->next_due, &s->scans, &s->scanned,
                         &s->segments, &s->deleted, &s->bytes_freed, &s->kept_young,
                         &s->kept_unsure, &s->total_scanned, &s->total_deleted,
                         &s->total_bytes_freed};
    if (gw_lease_key_is(k, "state")) {
        s->scanning = v->type == MSGPACK_OBJECT_STR && v->via.str.size == 8 &&
                      memcmp(v->via.str.ptr, "scanning", 8) == 0;
        return CN_OK;
    }
    if (gw_lease_key_is(k, "cursor")) {
        struct gw_collector_chunk ch;
        if (v->type != MSGPACK_OBJECT_BIN || v->via.bin.size > sizeof(s->cursor))
            return CN_INVAL;
        if (v->via.bin.size > 0 &&
            gw_collector_chunk_parse(v->via.bin.ptr, v->via.bin.size, &ch) != CN_OK)
            return CN_INVAL;
        memcpy(s->cursor, v->via.bin.ptr, v->via.bin.size);
        s->cursor_len = v->via.bin.size;
        return CN_OK;
    }
    return gw_lease_decode_u64(k, v, u64s, slots, CN_ARRAY_LEN(u64s));
}

static void gw_collector_held(void *arg);

static const struct gw_lease_ops gw_collector_lease_ops = {
    .what = "collector",
    .key = GW_COLLECTOR_KEY,
    .record_max = GW_COLLECTOR_RECORD_MAX,
    .status_size = sizeof(struct gw_collector_status),
    .encode = gw_collector_encode,
    .decode_field = gw_collector_decode_field,
    .held = gw_collector_held,
};

int gw_collector_record_parses(const void *data, size_t len)
{
    struct gw_collector_status s;
    int ok = gw_lease_decode(&gw_collector_lease_ops, data, len, &s) == CN_OK;
    CN_ASSERT(memchr(s.lease.holder, '\0', sizeof(s.lease.holder)) != NULL);
    CN_ASSERT(s.cursor_len <= sizeof(s.cursor));
    return ok;
}

/* ---- plumbing (as lifecycle_run.c) -------------------------------------- */

static void gw_collector_on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    struct gw_collector *c = arg;
    void (*fn)(struct gw_collector *) = c->resume;
    c->resume = NULL;
    if (!c->closed && fn != NULL)
        fn(c);
}

/* Runs fn(c) delay_us from now, from the loop. */
static void gw_collector_after(struct gw_collector *c, uint64_t delay_us,
                               void (*fn)(struct gw_collector *c))
{
    c->resume = fn;
    struct timeval tv = {(time_t)(delay_us / 1000000), (suseconds_t)(delay_us % 1000000)};
    evtimer_add(c->timer, &tv);
}

/* A store callback's first call: 1 when the worker was closed meanwhile
 * (the callback must return at once). */
static int gw_collector_op_done(struct gw_collector *c)
{
    c->inflight--;
    return c->closed;
}

/* ---- the lease's callbacks ---------------------------------------------- */

static void gw_collector_on_scan_started(void *arg, enum gw_lease_result r);

/* The lease is ours: scan when one is due (or resume the one a previous
 * holder left), else renew it. A claim keeps the cursor and the counts, so
 * a scan the last holder left half done resumes where it stopped. */
static void gw_collector_held(void *arg)
{
    struct gw_collector *c = arg;
    uint64_t now = cn_time_now_us();
    if (now >= c->st.next_due || c->st.scanning) {
        if (!c->st.scanning || c->st.cursor_len == 0) {
            c->st.last_start = now;
            c->st.scanned = c->st.segments = c->st.deleted = c->st.bytes_freed = 0;
            c->st.kept_young = c->st.kept_unsure = 0;
            c->st.cursor_len = 0;
        }
        c->st.scanning = 1;
        CN_LOG(CN_LOG_INFO, "collector: scan %s (%s)",
               c->st.cursor_len > 0 ? "resumes at the cursor" : "starts", c->holder);
        gw_lease_write(c->lease, gw_collector_on_scan_started);
        return;
    }
    gw_lease_write(c->lease, NULL);
}

/* In a scan: renews the lease (writing the cursor) when a third of it has
 * passed, then fn(c); stops the scan when the record names another
 * holder. */
static void gw_collector_on_renewed(void *arg, enum gw_lease_result r)
{
    struct gw_collector *c = arg;
    switch (r) {
    case GW_LEASE_OK:
        c->after_renew(c);
        return;
    case GW_LEASE_LOST:
        CN_LOG(CN_LOG_WARN, "collector: lease taken by %s during a scan: scan stopped",
               gw_lease_read_holder(c->lease));
        c->st.scanning = 0;
        c->have_seg = 0;
        gw_lease_again(c->lease);
        return;
    case GW_LEASE_UNREAD:
        gw_collector_finish(c, "the lease record could not be read");
        return;
    case GW_LEASE_UNWRITTEN:
        gw_collector_finish(c, "the lease could not be renewed");
        return;
    }
}

static void gw_collector_gate(struct gw_collector *c, void (*fn)(struct gw_collector *c))
{
    if (!gw_lease_renew_due(c->lease)) {
        fn(c);
        return;
    }
    c->after_renew = fn;
    gw_lease_renew(c->lease, gw_collector_on_renewed);
}

static void gw_collector_slot_reached(struct gw_collector *c)
{
    gw_collector_gate(c, c->after_slot);
}

/* Throttle: fn(c) once the next chunk delete may start (max_rate). */
static void gw_collector_delete_slot(struct gw_collector *c, void (*fn)(struct gw_collector *c))
{
    uint64_t now = cn_time_now_us();
    uint64_t at = CN_MAX(now, c->next_delete);
    c->next_delete = at + 1000000u / CN_MAX(c->o.max_rate, 1u);
    if (at > now) {
        c->after_slot = fn;
        gw_collector_after(c, at - now, gw_collector_slot_reached);
        return;
    }
    gw_collector_gate(c, fn);
}

/* ---- listings ---------------------------------------------------------- */

/* Copies a listing's entries into page; 0 when the listing failed. */
static int gw_collector_page_fill(struct gw_collector_page *page,
                                  const struct gw_store_list_result *res)
{
    page->n = page->idx = 0;
    page->more = 0;
    if (res->rc != CN_OK)
        return 0;
    for (uint32_t i = 0; i < res->n_ents && page->n < page->cap; i++) {
        const struct gw_store_entry *e = &res->ents[i];
        if (e->key_len > GW_LO_KEY_MAX)
            continue;
        struct gw_collector_item *it = &page->items[page->n++];
        memcpy(it->key, e->key, e->key_len);
        it->key_len = e->key_len;
        it->size = e->size;
        it->ts = e->ts;
        memcpy(it->etag, e->etag, sizeof(it->etag));
        it->etag[sizeof(it->etag) - 1] = '\0';
        it->has_osize = e->has_osize;
        it->osize = e->osize;
    }
    page->more = res->more && res->n_ents > 0;
    return 1;
}

/* Lists a page of prefix after `after` (NULL: from the start). */
static void gw_collector_list(struct gw_collector *c, const char *prefix, size_t prefix_len,
                              const char *after, size_t after_len, gw_store_list_cb cb)
{
    c->inflight++;
    gw_store_list(c->store, prefix, prefix_len, after, after_len, GW_COLLECTOR_PAGE, cb, c);
}

/* After the page's last key, or from the start when it is empty. */
static void gw_collector_list_more(struct gw_collector *c, struct gw_collector_page *page,
                                   const char *prefix, size_t prefix_len, gw_store_list_cb cb)
{
    const struct gw_collector_item *last = page->n > 0 ? &page->items[page->n - 1] : NULL;
    gw_collector_list(c, prefix, prefix_len, last != NULL ? last->key : NULL,
                      last != NULL ? last->key_len : 0, cb);
}

/* ---- lookups of one segment's parents ----------------------------------- */

/* The prefix "<ch>/<bucket>/<key>" NUL of the segment's object into out
 * (GW_KEYS_MAX + 1 bytes); its length. */
static size_t gw_collector_key_prefix(const struct gw_collector *c, char ch, char *out)
{
    memcpy(out, c->seg, c->segc.okey_len);
    out[0] = ch;
    out[c->segc.okey_len] = '\0';
    return c->segc.okey_len + 1;
}

static void gw_collector_delete_seg(struct gw_collector *c);

/* Every lookup is in: keep the segment, or delete its chunks. */
static void gw_collector_decide_now(struct gw_collector *c)
{
    c->facts.now_us = cn_hlc_wall_us(cn_hlc_default());
    enum gw_collector_verdict v = gw_collector_decide(&c->facts);
    if (v == GW_COLLECTOR_DELETE)
        gw_collector_delete_seg(c);
    else
        gw_collector_seg_done(c, v);
}

/* A lookup failed or stopped: keep the segment (looked at again next scan). */
static void gw_collector_unsure(struct gw_collector *c, const char *why)
{
    CN_LOG(CN_LOG_DEBUG, "collector: %.*s v%016" PRIx64 ": %s", (int)(c->segc.okey_len - 2),
           c->seg + 2, c->segc.ver, why);
    c->facts.lookups_ok = 0;
    gw_collector_decide_now(c);
}

static void gw_collector_on_object_map(struct gw_store_result *res, void *arg)
{
    struct gw_collector *c = arg;
    if (gw_collector_op_done(c))
        return;
    if (res->rc != CN_OK || res->reply->m.ts < c->head_ts) {
        gw_collector_unsure(c, "the object record could not be read");
        return;
    }
    const struct msg *m = &res->reply->m;
    c->facts.parent_ts = CN_MAX(c->facts.parent_ts, m->ts);
    struct gw_lo_map map;
    if (gw_lo_map_decode(&map, m->payload.ptr, m->payload.len) == CN_OK) {
        c->facts.referenced |= gw_collector_map_names(&map, c->segc.ver);
        gw_lo_map_fini(&map);
    } else {
        size_t tl;
        uint64_t size;
        if (gw_lo_map_reply_size(m, &tl, &size)) {
            gw_collector_unsure(c, "the object's chunk map does not decode");
            return;
        }
    }
    gw_collector_decide_now(c);
}

/* The object record's replicas answered (store_probe.h): the newest
 * version among at least N - W + 1 of them is at least as new as any write
 * the cluster acknowledged, a tombstone's time included. */
static void gw_collector_on_probe(const struct gw_store_probe_result *r, void *arg)
{
    struct gw_collector *c = arg;
    if (gw_collector_op_done(c))
        return;
    if (r->answered < c->o.min_answers) {
        gw_collector_unsure(c, "too few replicas of the object record answered");
        return;
    }
    size_t tl;
    uint64_t size;
    c->head_ts = r->ts;
    c->facts.parent_ts = r->state != 0 ? r->ts : 0;
    if (r->state == 1 &&
        gw_lo_map_record_size(r->etag, r->etag_len, r->has_osize, r->osize, &tl, &size)) {
        c->inflight++;
        gw_store_get(c->store, c->okey, c->segc.okey_len, 1, 0, 0, gw_collector_on_object_map, c);
        return;
    }
    gw_collector_decide_now(c);
}

static void gw_collector_object_probe(struct gw_collector *c)
{
    c->okey[0] = 'o';
    memcpy(c->okey + 1, c->seg + 1, c->segc.okey_len - 1);
    c->inflight++;
    gw_store_probe(c->store, c->okey, c->segc.okey_len, gw_collector_on_probe, c);
}

/* Versions: each large version record's map is read in turn. */
static void gw_collector_next_version(struct gw_collector *c);

static void gw_collector_on_versions(struct gw_store_list_result *res, void *arg)
{
    struct gw_collector *c = arg;
    if (gw_collector_op_done(c))
        return;
    if (!gw_collector_page_fill(&c->sub, res)) {
        gw_collector_unsure(c, "the version records could not be listed");
        return;
    }
    gw_collector_next_version(c);
}

static void gw_collector_on_version_map(struct gw_store_result *res, void *arg)
{
    struct gw_collector *c = arg;
    if (gw_collector_op_done(c))
        return;
    if (res->rc == CN_OK) {
        struct gw_lo_map map;
        const struct msg *m = &res->reply->m;
        if (gw_lo_map_decode(&map, m->payload.ptr, m->payload.len) != CN_OK) {
            gw_collector_unsure(c, "a version's chunk map does not decode");
            return;
        }
        c->facts.referenced |= gw_collector_map_names(&map, c->segc.ver);
        gw_lo_map_fini(&map);
    } else if (res->rc != CN_NOTFOUND) {   /* removed since the listing: names nothing */
        gw_collector_unsure(c, "a version record could not be read");
        return;
    }
    gw_collector_next_version(c);
}

static void gw_collector_next_version(struct gw_collector *c)
{
    struct gw_collector_page *p = &c->sub;
    while (!c->facts.referenced && p->idx < p->n) {
        const struct gw_collector_item *it = &p->items[p->idx++];
        size_t tl;
        uint64_t size;
        if (gw_lo_map_record_size(it->etag, strlen(it->etag), it->has_osize, it->osize, &tl,
                                  &size)) {
            c->inflight++;
            gw_store_get(c->store, it->key, it->key_len, 1, 0, 0, gw_collector_on_version_map, c);
            return;
        }
    }
    if (c->facts.referenced) {
        gw_collector_decide_now(c);
        return;
    }
    char prefix[GW_KEYS_MAX + 1];
    size_t n = gw_collector_key_prefix(c, 'v', prefix);
    if (p->more)
        gw_collector_list_more(c, p, prefix, n, gw_collector_on_versions);
    else
        gw_collector_object_probe(c);   /* after the versions: see gw_collector_lookup */
}

/* Parts: a part record's etag field names its segment's version. */
static void gw_collector_on_parts(struct gw_store_list_result *res, void *arg)
{
    struct gw_collector *c = arg;
    if (gw_collector_op_done(c))
        return;
    if (!gw_collector_page_fill(&c->sub, res)) {
        gw_collector_unsure(c, "the part records could not be listed");
        return;
    }
    for (uint32_t i = 0; i < c->sub.n; i++) {
        struct gw_lo_seg seg;
        if (gw_multipart_part_seg(c->sub.items[i].etag, &seg) == CN_OK &&
            seg.ver == c->segc.ver)
            c->facts.referenced = 1;
    }
    char prefix[GW_KEYS_MAX + 1];
    if (c->facts.referenced) {
        gw_collector_decide_now(c);
        return;
    }
    if (c->sub.more) {
        size_t n = gw_collector_key_prefix(c, 'p', prefix);
        gw_collector_list_more(c, &c->sub, prefix, n, gw_collector_on_parts);
        return;
    }
    size_t n = gw_collector_key_prefix(c, 'v', prefix);
    c->sub.n = 0;
    gw_collector_list(c, prefix, n, NULL, 0, gw_collector_on_versions);
}

/* Looks up every record that could name the segment: part records first,
 * then version records, then the object record. A reference only moves
 * from a part record to the object and version records
 * (CompleteMultipartUpload writes those, then deletes the parts), so
 * reading the parts first finds it at one place or the other. Every other
 * move rewrites the object record itself (an overwrite, a delete, a
 * versioned write that turns the old null version into a version record),
 * and an object record changed within the grace keeps the segment
 * (GW_COLLECTOR_KEEP_PARENT_RECENT). docs/large-objects.md has the whole
 * argument. */
static void gw_collector_lookup(struct gw_collector *c)
{
    char prefix[GW_KEYS_MAX + 1];
    size_t n = gw_collector_key_prefix(c, 'p', prefix);
    c->sub.n = 0;
    gw_collector_list(c, prefix, n, NULL, 0, gw_collector_on_parts);
}

/* ---- deleting an orphaned segment --------------------------------------- */

static void gw_collector_next_delete(struct gw_collector *c);

static void gw_collector_on_seg_chunks(struct gw_store_list_result *res, void *arg)
{
    struct gw_collector *c = arg;
    if (gw_collector_op_done(c))
        return;
    if (!gw_collector_page_fill(&c->sub, res)) {
        CN_LOG(CN_LOG_WARN, "collector: listing the chunks to delete failed: %s", res->err);
        gw_collector_seg_done(c, GW_COLLECTOR_KEEP_UNSURE);
        return;
    }
    gw_collector_next_delete(c);
}

static void gw_collector_on_chunk_deleted(struct gw_store_result *res, void *arg)
{
    struct gw_collector *c = arg;
    if (gw_collector_op_done(c))
        return;
    const struct gw_collector_item *it = &c->sub.items[c->sub.idx - 1];
    if (res->rc == CN_OK) {
        c->st.deleted++;
        c->st.total_deleted++;
        c->st.bytes_freed += it->size;
        c->st.total_bytes_freed += it->size;
        if (c->reg != NULL) {
            cn_metrics_add(c->reg, c->m_deleted, 1);
            cn_metrics_add(c->reg, c->m_bytes, it->size);
        }
    } else {
        CN_LOG(CN_LOG_WARN, "collector: a chunk delete failed: %s", res->err);
    }
    gw_collector_next_delete(c);
}

/* The chunk at hand (the page's idx - 1): a tombstone newer than it. */
static void gw_collector_delete_chunk(struct gw_collector *c)
{
    const struct gw_collector_item *it = &c->sub.items[c->sub.idx - 1];
    c->inflight++;
    gw_store_delete(c->store, it->key, it->key_len, c->ver,
                    cn_hlc_after(cn_hlc_default(), it->ts), gw_collector_on_chunk_deleted, c);
}

static void gw_collector_next_delete(struct gw_collector *c)
{
    struct gw_collector_page *p = &c->sub;
    uint64_t now = cn_hlc_wall_us(cn_hlc_default());
    while (p->idx < p->n) {
        const struct gw_collector_item *it = &p->items[p->idx++];
        /* a chunk written since the decision (none should be: its writer
         * is long gone) is left alone */
        if (it->ts <= now && now - it->ts >= c->o.grace_us) {
            gw_collector_delete_slot(c, gw_collector_delete_chunk);
            return;
        }
    }
    if (p->more) {
        gw_collector_list_more(c, p, c->seg, c->segc.seg_len, gw_collector_on_seg_chunks);
        return;
    }
    gw_collector_seg_done(c, GW_COLLECTOR_DELETE);
}

/* ---- the chunk listing ---------------------------------------------------- */

static void gw_collector_on_chunks(struct gw_store_list_result *res, void *arg)
{
    struct gw_collector *c = arg;
    if (gw_collector_op_done(c))
        return;
    if (!gw_collector_page_fill(&c->chunks, res)) {
        gw_collector_finish(c, res->err[0] != '\0' ? res->err : "listing failed");
        return;
    }
    gw_collector_next_chunk(c);
}

/* The next page of "c/": after the page's last key, or after the cursor
 * when the scan (re)starts. */
static void gw_collector_chunks_page(struct gw_collector *c)
{
    struct gw_collector_page *p = &c->chunks;
    if (p->n > 0)
        gw_collector_list_more(c, p, "c/", 2, gw_collector_on_chunks);
    else
        gw_collector_list(c, "c/", 2, c->st.cursor_len > 0 ? c->st.cursor : NULL,
                          c->st.cursor_len, gw_collector_on_chunks);
}

/* The segment at hand is complete (the next key is another's, or the
 * listing ended): decide it. Returns 1 when that was done at once (a young
 * segment), 0 when lookups are under way (they end in seg_done). */
static int gw_collector_seg_end(struct gw_collector *c)
{
    memset(&c->facts, 0, sizeof(c->facts));
    c->facts.grace_us = c->o.grace_us;
    c->facts.newest_chunk_ts = c->seg_newest_ts;
    c->facts.now_us = cn_hlc_wall_us(cn_hlc_default());
    c->facts.lookups_ok = 1;
    if (gw_collector_decide(&c->facts) == GW_COLLECTOR_KEEP_YOUNG) {
        gw_collector_seg_done(c, GW_COLLECTOR_KEEP_YOUNG);
        return 1;
    }
    gw_collector_gate(c, gw_collector_lookup);
    return 0;
}

/* Starts a segment at chunk it (already parsed as ch). */
static void gw_collector_seg_start(struct gw_collector *c, const struct gw_collector_item *it,
                                   const struct gw_collector_chunk *ch)
{
    c->have_seg = 1;
    c->segc = *ch;
    memcpy(c->seg, it->key, ch->seg_len);
    c->seg_newest_ts = 0;
}

/* Lists the orphaned segment's chunks again (it may span pages of the
 * "c/" listing) and deletes them one by one. */
static void gw_collector_delete_seg(struct gw_collector *c)
{
    c->sub.n = 0;
    gw_collector_list(c, c->seg, c->segc.seg_len, NULL, 0, gw_collector_on_seg_chunks);
}

static void gw_collector_next_chunk(struct gw_collector *c)
{
    struct gw_collector_page *p = &c->chunks;
    for (;;) {
        if (p->idx == p->n) {
            if (p->more) {
                gw_collector_gate(c, gw_collector_chunks_page);
                return;
            }
            if (c->have_seg && !gw_collector_seg_end(c))
                return;
            gw_collector_finish(c, NULL);
            return;
        }
        const struct gw_collector_item *it = &p->items[p->idx];
        struct gw_collector_chunk ch;
        if (gw_collector_chunk_parse(it->key, it->key_len, &ch) != CN_OK) {
            p->idx++;   /* not a chunk this gateway wrote: never touched */
            continue;
        }
        if (c->have_seg && (ch.seg_len != c->segc.seg_len ||
                            memcmp(it->key, c->seg, ch.seg_len) != 0)) {
            if (!gw_collector_seg_end(c))
                return;   /* seg_done comes back here, at this same entry */
            continue;
        }
        if (!c->have_seg)
            gw_collector_seg_start(c, it, &ch);
        p->idx++;
        c->st.scanned++;
        c->st.total_scanned++;
        if (c->reg != NULL)
            cn_metrics_add(c->reg, c->m_scanned, 1);
        c->seg_newest_ts = CN_MAX(c->seg_newest_ts, it->ts);
        memcpy(c->seg_last, it->key, it->key_len);
        c->seg_last_len = it->key_len;
    }
}

/* The segment is decided (and its chunks deleted when it was orphaned):
 * the cursor moves past it. Young segments return to the loop of
 * gw_collector_next_chunk() by themselves; the others continue it here. */
static void gw_collector_seg_done(struct gw_collector *c, enum gw_collector_verdict v)
{
    c->st.segments++;
    if (v == GW_COLLECTOR_KEEP_YOUNG)
        c->st.kept_young++;
    else if (v == GW_COLLECTOR_KEEP_UNSURE)
        c->st.kept_unsure++;
    memcpy(c->st.cursor, c->seg_last, c->seg_last_len);
    c->st.cursor_len = c->seg_last_len;
    c->have_seg = 0;
    if (v == GW_COLLECTOR_KEEP_YOUNG)
        return;
    CN_LOG(v == GW_COLLECTOR_DELETE ? CN_LOG_INFO : CN_LOG_DEBUG,
           "collector: chunks of %.*s v%016" PRIx64 ": %s", (int)(c->segc.okey_len - 2),
           c->seg + 2, c->segc.ver, gw_collector_verdict_str(v));
    gw_collector_next_chunk(c);
}

/* ---- the end of a scan ------------------------------------------------- */

/* Ends the scan: why NULL, the listing ended (the cursor starts over); else
 * what stopped it (the cursor stays: the next tick resumes there). */
static void gw_collector_finish(struct gw_collector *c, const char *why)
{
    uint64_t now = cn_time_now_us();
    c->have_seg = 0;
    c->chunks.n = c->chunks.idx = 0;
    if (why != NULL) {
        CN_LOG(CN_LOG_WARN, "collector: scan stopped: %s (resumes at the cursor)", why);
        gw_lease_write(c->lease, NULL);
        return;
    }
    c->st.scanning = 0;
    c->st.cursor_len = 0;
    c->st.last_end = now;
    c->st.scans++;
    c->st.next_due = c->st.last_start + c->o.interval_us;
    if (c->reg != NULL)
        cn_metrics_add(c->reg, c->m_scans, 1);
    CN_LOG(CN_LOG_INFO, "collector: scan done in %llu ms: %llu chunks in %llu segments, %llu "
           "chunks deleted (%llu bytes), %llu segments young, %llu unsure",
           (unsigned long long)((now - c->st.last_start) / 1000),
           (unsigned long long)c->st.scanned, (unsigned long long)c->st.segments,
           (unsigned long long)c->st.deleted, (unsigned long long)c->st.bytes_freed,
           (unsigned long long)c->st.kept_young, (unsigned long long)c->st.kept_unsure);
    gw_lease_write(c->lease, NULL);
}

static void gw_collector_on_scan_started(void *arg, enum gw_lease_result r)
{
    struct gw_collector *c = arg;
    if (r != GW_LEASE_OK) {
        gw_lease_again(c->lease);
        return;
    }
    c->have_seg = 0;
    c->chunks.n = c->chunks.idx = 0;
    gw_collector_chunks_page(c);
}

/* ---- life -------------------------------------------------------------- */

static void gw_collector_metrics(struct gw_collector *c)
{
    struct cn_metrics *reg = c->reg;
    c->m_scans = cn_metrics_counter(reg, "cairn_gateway_collector_scans_total",
                                    "Chunk collector scans this gateway completed (as the lease "
                                    "holder)", 0, NULL);
    c->m_scanned = cn_metrics_counter(reg, "cairn_gateway_collector_chunks_scanned_total",
                                      "Chunk records the collector of this gateway looked at",
                                      0, NULL);
    c->m_deleted = cn_metrics_counter(reg, "cairn_gateway_collector_chunks_deleted_total",
                                      "Orphaned chunk records the collector of this gateway "
                                      "deleted", 0, NULL);
    c->m_bytes = cn_metrics_counter(reg, "cairn_gateway_collector_bytes_freed_total",
                                    "Bytes of the chunks the collector of this gateway deleted",
                                    0, NULL);
    c->m_held = cn_metrics_gauge(reg, "cairn_gateway_collector_lease_held",
                                 "1 while this gateway holds the collector lease", 0, NULL);
}

struct gw_collector *gw_collector_new(struct event_base *base, struct gw_store *store,
                                      const struct gw_collector_opts *o, struct cn_metrics *reg)
{
    struct gw_collector *c = cn_calloc(1, sizeof(*c));
    c->base = base;
    c->store = store;
    c->o = *o;
    c->o.holder = NULL;
    c->o.min_answers = CN_MAX(o->min_answers, 1u);
    snprintf(c->holder, sizeof(c->holder), "%s", o->holder);
    unsigned char b[8];
    if (RAND_bytes(b, sizeof(b)) != 1)
        memset(b, 0, sizeof(b));
    memcpy(&c->ver, b, sizeof(c->ver));
    c->timer = evtimer_new(base, gw_collector_on_timer, c);
    c->chunks.items = cn_calloc(GW_COLLECTOR_PAGE, sizeof(*c->chunks.items));
    c->chunks.cap = GW_COLLECTOR_PAGE;
    c->sub.items = cn_calloc(GW_COLLECTOR_PAGE, sizeof(*c->sub.items));
    c->sub.cap = GW_COLLECTOR_PAGE;
    c->reg = reg;
    if (reg != NULL)
        gw_collector_metrics(c);
    struct gw_lease_opts lo = {.interval_us = o->interval_us, .lease_us = o->lease_us,
                               .settle_us = o->settle_us, .ver = c->ver, .holder = c->holder};
    c->lease = gw_lease_new(base, store, &gw_collector_lease_ops, &lo, &c->st, c, reg,
                            c->m_held);
    return c;
}

void gw_collector_close(struct gw_collector *c)
{
    if (c == NULL)
        return;
    c->closed = 1;
    evtimer_del(c->timer);
    gw_lease_close(c->lease);
}

void gw_collector_free(struct gw_collector *c)
{
    if (c == NULL)
        return;
    int inflight = c->inflight + gw_lease_inflight(c->lease);
    if (inflight != 0) {   /* a callback still to come would find it freed */
        CN_LOG(CN_LOG_WARN, "collector: %d store operations never answered: worker not freed",
               inflight);
        return;
    }
    gw_lease_free(c->lease);
    event_free(c->timer);
    cn_free(c->chunks.items);
    cn_free(c->sub.items);
    cn_free(c);
}
