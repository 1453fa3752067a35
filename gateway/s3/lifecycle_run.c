/* The lifecycle worker (lifecycle_run.h). One chain of callbacks, one store
 * operation in flight: the lease (lease.h: tick -> read the record ->
 * claim, settle, read back) -> when held and a scan is due: list buckets ->
 * read each bucket record's rules -> list its objects, expire the due ones
 * -> list its uploads, abort the due ones -> write the results. The delete
 * throttle's waits go through run->timer and run->resume. The lease is
 * renewed (read, checked, written) whenever a third of its time has
 * passed, also in the middle of a scan; a scan stops when the record names
 * another holder. */
#include "lifecycle_run.h"
#include "lifecycle_run_priv.h"

#include <stdio.h>
#include <string.h>

#include <msgpack.h>
#include <openssl/rand.h>

#include "bucket_meta.h"
#include "keys.h"
#include "lease.h"
#include "lifecycle.h"
#include "lo_map.h"
#include "lo_reclaim.h"
#include "multipart.h"
#include "objmeta.h"
#include "store.h"
#include "tagset.h"
#include "versioning.h"

#include "msg/msg.h"

#include "cn/alloc.h"
#include "cn/hlc.h"
#include "cn/log.h"
#include "cn/metrics.h"
#include "cn/time.h"

static void gw_lc_run_next_bucket(struct gw_lc_run *run);
static void gw_lc_run_next_upload(struct gw_lc_run *run);
static void gw_lc_run_next_part(struct gw_lc_run *run);

/* ---- the record: the lease's (lease.h) and the last scan's -------------- */

/* The scan's fields of the record (docs/operations.md). */
static uint32_t gw_lc_run_encode(void *arg, msgpack_packer *pk)
{
    const struct gw_lc_run *run = arg;
    const struct gw_lc_status *s = &run->st;
    gw_lease_pack_str(pk, "state", 5);
    gw_lease_pack_str(pk, s->scanning ? "scanning" : "idle", s->scanning ? 8 : 4);
    gw_lease_pack_u64(pk, "last_start_us", s->last_start);
    gw_lease_pack_u64(pk, "last_end_us", s->last_end);
    gw_lease_pack_u64(pk, "next_due_us", s->next_due);
    gw_lease_pack_u64(pk, "scans", s->scans);
    gw_lease_pack_u64(pk, "expired", s->expired);
    gw_lease_pack_u64(pk, "aborted", s->aborted);
    gw_lease_pack_u64(pk, "buckets", s->buckets);
    gw_lease_pack_u64(pk, "total_expired", s->total_expired);
    gw_lease_pack_u64(pk, "total_aborted", s->total_aborted);
    gw_lease_pack_u64(pk, "noncurrent_expired", s->nc_expired);
    gw_lease_pack_u64(pk, "markers_added", s->markers_added);
    gw_lease_pack_u64(pk, "markers_removed", s->markers_removed);
    gw_lease_pack_u64(pk, "total_noncurrent_expired", s->total_nc_expired);
    gw_lease_pack_u64(pk, "total_markers_added", s->total_markers_added);
    gw_lease_pack_u64(pk, "total_markers_removed", s->total_markers_removed);
    gw_lease_pack_u64(pk, "day_length_us", run->o.day_us);
    gw_lease_pack_u64(pk, "interval_us", run->o.interval_us);
    gw_lease_pack_u64(pk, "lease_us", run->o.lease_us);
    return 19;
}

/* One of the scan's keys into *status: CN_OK (also for a key it does not
 * know) or CN_INVAL when its value has the wrong type. */
static int gw_lc_run_decode_field(void *status, const msgpack_object *k, const msgpack_object *v)
{
    struct gw_lc_status *s = status;
    static const char *const u64s[] = {"last_start_us", "last_end_us", "next_due_us", "scans",
                                       "expired", "aborted", "buckets", "total_expired",
                                       "total_aborted", "noncurrent_expired", "markers_added",
                                       "markers_removed", "total_noncurrent_expired",
                                       "total_markers_added", "total_markers_removed"};
    uint64_t *slots[] = {&s->last_start, &s->last_end, &s->next_due, &s->scans, &s->expired,
                         &s->aborted, &s->buckets, &s->total_expired, &s->total_aborted,
                         &s->nc_expired, &s->markers_added, &s->markers_removed,
                         &s->total_nc_expired, &s->total_markers_added,
                         &s->total_markers_removed};
    if (gw_lease_key_is(k, "state")) {
        s->scanning = v->type == MSGPACK_OBJECT_STR && v->via.str.size == 8 &&
                      memcmp(v->via.str.ptr, "scanning", 8) == 0;
        return CN_OK;
    }
    return gw_lease_decode_u64(k, v, u64s, slots, CN_ARRAY_LEN(u64s));
}

static void gw_lc_run_held(void *arg);
static void gw_lc_run_on_claim(void *arg);

static const struct gw_lease_ops gw_lc_run_lease_ops = {
    .what = "lifecycle",
    .key = GW_LC_RUN_KEY,
    .record_max = 4096,
    .status_size = sizeof(struct gw_lc_status),
    .encode = gw_lc_run_encode,
    .decode_field = gw_lc_run_decode_field,
    .held = gw_lc_run_held,
    .on_claim = gw_lc_run_on_claim,
};

int gw_lc_run_record_parses(const void *data, size_t len)
{
    struct gw_lc_status s;
    int ok = gw_lease_decode(&gw_lc_run_lease_ops, data, len, &s) == CN_OK;
    CN_ASSERT(memchr(s.lease.holder, '\0', sizeof(s.lease.holder)) != NULL);
    return ok;
}

/* ---- plumbing ---------------------------------------------------------- */

static void gw_lc_run_on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    struct gw_lc_run *run = arg;
    void (*fn)(struct gw_lc_run *) = run->resume;
    run->resume = NULL;
    if (!run->closed && fn != NULL)
        fn(run);
}

/* Runs fn(run) delay_us from now, from the loop. */
static void gw_lc_run_after(struct gw_lc_run *run, uint64_t delay_us,
                            void (*fn)(struct gw_lc_run *run))
{
    run->resume = fn;
    struct timeval tv = {(time_t)(delay_us / 1000000), (suseconds_t)(delay_us % 1000000)};
    evtimer_add(run->timer, &tv);
}

/* A store callback's first call: 1 when the worker was closed meanwhile
 * (the callback must return at once). */
int gw_lc_run_op_done(struct gw_lc_run *run)
{
    run->inflight--;
    return run->closed;
}

/* ---- the lease's callbacks ---------------------------------------------- */

static void gw_lc_run_on_scan_started(void *arg, enum gw_lease_result r);

/* The lease is ours: scan when one is due, else renew it. */
static void gw_lc_run_held(void *arg)
{
    struct gw_lc_run *run = arg;
    uint64_t now = cn_time_now_us();
    if (now >= run->st.next_due) {
        run->st.scanning = 1;
        run->st.last_start = now;
        run->st.expired = run->st.aborted = run->st.buckets = 0;
        run->st.nc_expired = run->st.markers_added = run->st.markers_removed = 0;
        CN_LOG(CN_LOG_INFO, "lifecycle: scan starts (%s)", run->holder);
        gw_lease_write(run->lease, gw_lc_run_on_scan_started);
        return;
    }
    gw_lease_write(run->lease, NULL);
}

/* A claim of a free or expired lease: no scan runs until this holder
 * starts one. */
static void gw_lc_run_on_claim(void *arg)
{
    struct gw_lc_run *run = arg;
    run->st.scanning = 0;
}

/* In a scan: renews the lease when a third of it has passed, then fn(run);
 * stops the scan when the record names another holder. */
static void gw_lc_run_on_renewed(void *arg, enum gw_lease_result r)
{
    struct gw_lc_run *run = arg;
    switch (r) {
    case GW_LEASE_OK:
        run->after_renew(run);
        return;
    case GW_LEASE_LOST:
        CN_LOG(CN_LOG_WARN, "lifecycle: lease taken by %s during a scan: scan stopped",
               gw_lease_read_holder(run->lease));
        run->st.scanning = 0;
        gw_lc_fini(&run->lc);
        gw_lease_again(run->lease);
        return;
    case GW_LEASE_UNREAD:
        gw_lc_run_finish(run, "the lease record could not be read");
        return;
    case GW_LEASE_UNWRITTEN:
        gw_lc_run_finish(run, "the lease could not be renewed");
        return;
    }
}

static void gw_lc_run_gate(struct gw_lc_run *run, void (*fn)(struct gw_lc_run *run))
{
    if (!gw_lease_renew_due(run->lease)) {
        fn(run);
        return;
    }
    run->after_renew = fn;
    gw_lease_renew(run->lease, gw_lc_run_on_renewed);
}

static void gw_lc_run_slot_reached(struct gw_lc_run *run)
{
    gw_lc_run_gate(run, run->after_slot);
}

/* Throttle: fn(run) once the next delete may start (max_deletes_per_sec). */
void gw_lc_run_delete_slot(struct gw_lc_run *run, void (*fn)(struct gw_lc_run *run))
{
    uint64_t now = cn_time_now_us();
    uint64_t at = CN_MAX(now, run->next_delete);
    run->next_delete = at + 1000000u / CN_MAX(run->o.max_deletes_per_sec, 1u);
    if (at > now) {
        run->after_slot = fn;
        gw_lc_run_after(run, at - now, gw_lc_run_slot_reached);
        return;
    }
    gw_lc_run_gate(run, fn);
}

/* ---- listings ---------------------------------------------------------- */

/* Copies a listing's entries into page; 0 when the listing failed. */
int gw_lc_run_page_fill(struct gw_lc_page *page, const struct gw_store_list_result *res)
{
    page->n = page->idx = 0;
    page->more = 0;
    if (res->rc != CN_OK)
        return 0;
    for (uint32_t i = 0; i < res->n_ents && page->n < page->cap; i++) {
        const struct gw_store_entry *e = &res->ents[i];
        if (e->key_len > sizeof(page->items[0].key))
            continue;
        struct gw_lc_item *it = &page->items[page->n++];
        memcpy(it->key, e->key, e->key_len);
        it->key_len = e->key_len;
        it->size = e->size;
        it->ts = e->ts;
        memcpy(it->etag, e->etag, sizeof(it->etag));
        it->has_osize = e->has_osize;
        it->osize = e->osize;
    }
    page->more = res->more && res->n_ents > 0;
    return 1;
}

/* Lists a page of prefix after the page's last key (none: from the start). */
void gw_lc_run_list(struct gw_lc_run *run, struct gw_lc_page *page, const char *prefix,
                    size_t prefix_len, int from_start, gw_store_list_cb cb)
{
    const struct gw_lc_item *last = from_start || page->n == 0 ? NULL : &page->items[page->n - 1];
    run->inflight++;
    gw_store_list(run->store, prefix, prefix_len, last != NULL ? last->key : NULL,
                  last != NULL ? last->key_len : 0, page->cap, cb, run);
}

/* ---- buckets ----------------------------------------------------------- */

static void gw_lc_run_on_buckets(struct gw_store_list_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (!gw_lc_run_page_fill(&run->buckets, res)) {
        gw_lc_run_finish(run, res->err);
        return;
    }
    gw_lc_run_next_bucket(run);
}

static void gw_lc_run_on_scan_started(void *arg, enum gw_lease_result r)
{
    struct gw_lc_run *run = arg;
    if (r != GW_LEASE_OK) {
        run->st.scanning = 0;
        gw_lease_again(run->lease);
        return;
    }
    run->buckets.n = 0;
    gw_lc_run_list(run, &run->buckets, "b/", 2, 1, gw_lc_run_on_buckets);
}

/* Does some Enabled rule of the bucket expire objects / abort uploads? */
static int gw_lc_run_has(const struct gw_lc *lc, int aborts)
{
    for (uint32_t i = 0; i < lc->n_rules; i++) {
        const struct gw_lc_rule *r = &lc->rules[i];
        if (r->enabled && (aborts ? r->abort_days != GW_LC_NONE
                                  : r->exp_days != GW_LC_NONE || r->exp_date_s != GW_LC_NONE))
            return 1;
    }
    return 0;
}

static void gw_lc_run_objects_page(struct gw_lc_run *run, int from_start);
static void gw_lc_run_after_objects(struct gw_lc_run *run);

static void gw_lc_run_on_bucket(struct gw_store_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    gw_lc_fini(&run->lc);
    struct gw_bucket_meta bm;
    const struct gw_bucket_meta_config *cfg = NULL;
    enum gw_versioning_state versioning = GW_VERSIONING_OFF;
    if (res->rc == CN_OK) {
        const struct msg *m = &res->reply->m;
        if (gw_bucket_meta_decode_record(&bm, m) == CN_OK) {
            cfg = gw_bucket_meta_config(&bm, "lifecycle");
            const struct gw_bucket_meta_config *vc = gw_bucket_meta_config(&bm,
                                                                            GW_VERSIONING_CFG);
            if (vc != NULL)
                versioning = gw_versioning_state_of(vc->value, vc->value_len);
        }
    }
    if (cfg != NULL) {
        enum gw_s3_err err;
        char why[GW_XML_WHY_MAX];
        if (gw_lc_parse(cfg->value, cfg->value_len, &run->lc, &err, why) != CN_OK)
            CN_LOG(CN_LOG_WARN, "lifecycle: bucket '%.*s': stored rules unreadable",
                   (int)run->bucket_len, run->bucket);
    }
    if (run->lc.n_rules == 0) {
        gw_lc_run_next_bucket(run);
        return;
    }
    run->st.buckets++;
    /* a bucket with a versioning state: its current objects expire behind
     * delete markers, then its version records are walked
     * (lifecycle_vrun.c) */
    run->v.versioning = versioning;
    if (gw_lc_run_has(&run->lc, 0))
        gw_lc_run_objects_page(run, 1);
    else
        gw_lc_run_after_objects(run);
}

static void gw_lc_run_next_bucket(struct gw_lc_run *run)
{
    struct gw_lc_page *p = &run->buckets;
    if (p->idx == p->n) {
        if (p->more)
            gw_lc_run_list(run, p, "b/", 2, 0, gw_lc_run_on_buckets);
        else
            gw_lc_run_finish(run, NULL);
        return;
    }
    const struct gw_lc_item *it = &p->items[p->idx++];
    if (it->key_len < 3 || it->key_len - 2 >= sizeof(run->bucket)) {
        gw_lc_run_next_bucket(run);
        return;
    }
    run->bucket_len = it->key_len - 2;
    memcpy(run->bucket, it->key + 2, run->bucket_len);
    run->inflight++;
    gw_store_head(run->store, it->key, it->key_len, gw_lc_run_on_bucket, run);
}

/* ---- objects ----------------------------------------------------------- */

/* The current objects are done: the version records (a bucket with a
 * versioning state and rules for them), then the uploads. */
static void gw_lc_run_after_objects(struct gw_lc_run *run)
{
    if (run->v.versioning != GW_VERSIONING_OFF && gw_lc_vrun_wanted(&run->lc))
        gw_lc_vrun_versions(run);
    else
        gw_lc_run_uploads_page(run, 1);
}

/* The expiry of a current object that fell due: a delete, or a delete
 * marker where the bucket has a versioning state. */
static void gw_lc_run_expire(struct gw_lc_run *run);

static void gw_lc_run_expire_due(struct gw_lc_run *run)
{
    gw_lc_run_delete_slot(run, run->v.versioning != GW_VERSIONING_OFF ? gw_lc_vrun_mark
                                                                       : gw_lc_run_expire);
}

static void gw_lc_run_on_objects(struct gw_store_list_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (!gw_lc_run_page_fill(&run->objects, res)) {
        gw_lc_run_finish(run, res->err);
        return;
    }
    gw_lc_run_next_object(run);
}

static void gw_lc_run_objects_page(struct gw_lc_run *run, int from_start)
{
    char prefix[GW_KEYS_MAX];
    size_t n = gw_keys_object_prefix(prefix, run->bucket, run->bucket_len);
    if (from_start)
        run->objects.n = 0;
    gw_lc_run_list(run, &run->objects, prefix, n, from_start, gw_lc_run_on_objects);
}

/* The rule that expires the object it (key after the bucket prefix) now:
 * 1 expire, 0 keep, -1 a rule with tags could: read them (tags NULL). */
static int gw_lc_run_object_due(const struct gw_lc_run *run, const struct gw_lc_item *it,
                                const struct gw_tagset *tags, int have_tags)
{
    size_t plen = 2 + run->bucket_len + 1;
    const char *key = it->key + plen;
    size_t klen = it->key_len - plen;
    uint64_t size = it->size, now = cn_time_now_us();
    size_t tl;
    uint64_t lsize;
    if (gw_lo_map_record_size(it->etag, strlen(it->etag), it->has_osize, it->osize, &tl, &lsize))
        size = lsize;   /* a large object: the listing's size is its chunk map's */
    int need_tags = 0;
    for (uint32_t i = 0; i < run->lc.n_rules; i++) {
        const struct gw_lc_rule *r = &run->lc.rules[i];
        if (!r->enabled || gw_lc_rule_expire_at(r, it->ts, run->o.day_us) > now)
            continue;
        if (r->n_tags > 0 && !have_tags) {
            need_tags |= gw_lc_rule_prefix_matches(r, key, klen);
            continue;
        }
        if (gw_lc_rule_matches(r, key, klen, size, tags))
            return 1;
    }
    return need_tags ? -1 : 0;
}

static void gw_lc_run_on_expired(struct gw_store_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (res->rc == CN_OK) {
        run->st.expired++;
        run->st.total_expired++;
        if (run->reg != NULL)
            cn_metrics_add(run->reg, run->m_expired, 1);
    } else if (res->rc != CN_AGAIN) {
        CN_LOG(CN_LOG_WARN, "lifecycle: expiring %.*s failed: %s", (int)run->cur->key_len,
               run->cur->key, res->err);
    }
    gw_lc_run_next_object(run);
}

static void gw_lc_run_expire(struct gw_lc_run *run)
{
    run->inflight++;
    gw_lo_reclaim_delete_version(run->reclaim, run->cur->key, run->cur->key_len, run->ver,
                                 run->cur->ts, run->o.reclaim_delay_ms, gw_lc_run_on_expired,
                                 run);
}

static void gw_lc_run_on_object_head(struct gw_store_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (res->rc != CN_OK || res->reply->m.ts != run->cur->ts) {
        gw_lc_run_next_object(run);   /* gone or overwritten since the listing */
        return;
    }
    const struct msg *m = &res->reply->m;
    struct gw_objmeta om;
    const struct gw_objmeta_header *h = NULL;
    const char *why;
    run->tags->n = 0;
    if (gw_objmeta_decode(&om, m->meta.ptr, m->meta.len) == CN_OK)
        h = gw_objmeta_find(&om, GW_OBJMETA_TAGS);
    if (h != NULL && gw_tagset_parse_query(run->tags, h->value, h->value_len, &why) != GW_S3_OK)
        run->tags->n = 0;
    if (gw_lc_run_object_due(run, run->cur, run->tags, 1) == 1)
        gw_lc_run_expire_due(run);
    else
        gw_lc_run_next_object(run);
}

void gw_lc_run_next_object(struct gw_lc_run *run)
{
    struct gw_lc_page *p = &run->objects;
    if (p->idx == p->n) {
        if (p->more)
            gw_lc_run_objects_page(run, 0);
        else
            gw_lc_run_after_objects(run);
        return;
    }
    run->cur = &p->items[p->idx++];
    int due = gw_lc_run_object_due(run, run->cur, NULL, 0);
    if (due == 1) {
        gw_lc_run_expire_due(run);
    } else if (due < 0) {
        run->inflight++;
        gw_store_head(run->store, run->cur->key, run->cur->key_len, gw_lc_run_on_object_head,
                      run);
    } else {
        gw_lc_run_next_object(run);
    }
}

/* ---- uploads (the objects' page is reused: that phase is over) -------- */

static void gw_lc_run_on_uploads(struct gw_store_list_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (!gw_lc_run_page_fill(&run->objects, res)) {
        gw_lc_run_finish(run, res->err);
        return;
    }
    gw_lc_run_next_upload(run);
}

void gw_lc_run_uploads_page(struct gw_lc_run *run, int from_start)
{
    if (!gw_lc_run_has(&run->lc, 1)) {
        gw_lc_run_next_bucket(run);
        return;
    }
    char prefix[GW_KEYS_MAX];
    size_t n = gw_keys_object_prefix(prefix, run->bucket, run->bucket_len);
    prefix[0] = 'u';
    if (from_start)
        run->objects.n = 0;
    gw_lc_run_list(run, &run->objects, prefix, n, from_start, gw_lc_run_on_uploads);
}

/* The parts' prefix of the upload run->cur ("u/b/k" NUL id -> "p/b/k" NUL
 * id "/") into out (GW_LO_KEY_MAX + 1 bytes); its length. */
static size_t gw_lc_run_parts_prefix(const struct gw_lc_run *run, char *out)
{
    memcpy(out, run->cur->key, run->cur->key_len);
    out[0] = 'p';
    out[run->cur->key_len] = '/';
    return run->cur->key_len + 1;
}

static void gw_lc_run_on_parts(struct gw_store_list_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (!gw_lc_run_page_fill(&run->parts, res)) {
        gw_lc_run_finish(run, res->err);
        return;
    }
    gw_lc_run_next_part(run);
}

static void gw_lc_run_parts_page(struct gw_lc_run *run, int from_start)
{
    char prefix[GW_LO_KEY_MAX + 1];
    size_t n = gw_lc_run_parts_prefix(run, prefix);
    if (from_start)
        run->parts.n = 0;
    gw_lc_run_list(run, &run->parts, prefix, n, from_start, gw_lc_run_on_parts);
}

static void gw_lc_run_on_upload_deleted(struct gw_store_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (res->rc == CN_OK) {
        run->st.aborted++;
        run->st.total_aborted++;
        if (run->reg != NULL)
            cn_metrics_add(run->reg, run->m_aborted, 1);
    } else {
        CN_LOG(CN_LOG_WARN, "lifecycle: aborting an upload of bucket '%.*s' failed: %s",
               (int)run->bucket_len, run->bucket, res->err);
    }
    gw_lc_run_next_upload(run);
}

/* Every part is gone: the upload record goes, as AbortMultipartUpload's. */
static void gw_lc_run_delete_upload(struct gw_lc_run *run)
{
    run->inflight++;
    gw_store_delete(run->store, run->cur->key, run->cur->key_len, run->ver,
                    cn_hlc_after(cn_hlc_default(), run->cur->ts), gw_lc_run_on_upload_deleted, run);
}

static void gw_lc_run_on_part_deleted(struct gw_store_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (res->rc != CN_OK)
        CN_LOG(CN_LOG_WARN, "lifecycle: a part record delete failed: %s", res->err);
    gw_lc_run_next_part(run);
}

/* The part at hand: its chunks to the reclaimer (at once: no reader ever
 * saw them), its record a tombstone. */
static void gw_lc_run_delete_part(struct gw_lc_run *run)
{
    const struct gw_lc_item *it = &run->parts.items[run->parts.idx - 1];
    struct gw_lo_seg seg;
    if (gw_multipart_part_seg(it->etag, &seg) == CN_OK)
        gw_lo_reclaim_segs(run->reclaim, run->upload_okey, run->upload_okey_len, &seg, 1, 0,
                           run->ver);
    run->inflight++;
    gw_store_delete(run->store, it->key, it->key_len, run->ver,
                    cn_hlc_after(cn_hlc_default(), it->ts), gw_lc_run_on_part_deleted, run);
}

static void gw_lc_run_next_part(struct gw_lc_run *run)
{
    struct gw_lc_page *p = &run->parts;
    if (p->idx == p->n) {
        if (p->more)
            gw_lc_run_parts_page(run, 0);
        else
            gw_lc_run_delete_slot(run, gw_lc_run_delete_upload);
        return;
    }
    p->idx++;
    gw_lc_run_delete_slot(run, gw_lc_run_delete_part);
}

/* Is the upload it (key "u/b/k" NUL id, ts its initiation) due? */
static int gw_lc_run_upload_due(const struct gw_lc_run *run, const struct gw_lc_item *it)
{
    size_t plen = 2 + run->bucket_len + 1;
    const char *nul = memchr(it->key, '\0', it->key_len);
    if (nul == NULL || (size_t)(nul - it->key) < plen)
        return 0;
    const char *key = it->key + plen;
    size_t klen = (size_t)(nul - key);
    uint64_t now = cn_time_now_us();
    for (uint32_t i = 0; i < run->lc.n_rules; i++) {
        const struct gw_lc_rule *r = &run->lc.rules[i];
        if (r->enabled && gw_lc_rule_abort_at(r, it->ts, run->o.day_us) <= now &&
            gw_lc_rule_prefix_matches(r, key, klen))
            return 1;
    }
    return 0;
}

static void gw_lc_run_next_upload(struct gw_lc_run *run)
{
    struct gw_lc_page *p = &run->objects;
    if (p->idx == p->n) {
        if (p->more)
            gw_lc_run_uploads_page(run, 0);
        else
            gw_lc_run_next_bucket(run);
        return;
    }
    run->cur = &p->items[p->idx++];
    if (!gw_lc_run_upload_due(run, run->cur)) {
        gw_lc_run_next_upload(run);
        return;
    }
    const char *nul = memchr(run->cur->key, '\0', run->cur->key_len);
    run->upload_okey_len = (size_t)(nul - run->cur->key);
    memcpy(run->upload_okey, run->cur->key, run->upload_okey_len);
    run->upload_okey[0] = 'o';
    CN_LOG(CN_LOG_INFO, "lifecycle: aborting an upload of '%.*s' in bucket '%.*s'",
           (int)(run->upload_okey_len - 3 - run->bucket_len),
           run->upload_okey + 3 + run->bucket_len, (int)run->bucket_len, run->bucket);
    gw_lc_run_parts_page(run, 1);
}

/* ---- the end of a scan ------------------------------------------------- */

/* Ends the scan (why: NULL, or what stopped it) and writes the results. */
void gw_lc_run_finish(struct gw_lc_run *run, const char *why)
{
    uint64_t now = cn_time_now_us();
    gw_lc_fini(&run->lc);
    run->st.scanning = 0;
    run->st.last_end = now;
    run->st.scans++;
    run->st.next_due = run->st.last_start + run->o.interval_us;
    if (run->reg != NULL) {
        cn_metrics_add(run->reg, run->m_scans, 1);
        cn_metrics_set(run->reg, run->m_last_end, (int64_t)(now / 1000000));
    }
    if (why != NULL)
        CN_LOG(CN_LOG_WARN, "lifecycle: scan stopped: %s", why);
    CN_LOG(CN_LOG_INFO, "lifecycle: scan done in %llu ms: %llu buckets with rules, %llu objects "
           "expired, %llu uploads aborted, %llu noncurrent versions expired, %llu delete markers "
           "added, %llu removed", (unsigned long long)((now - run->st.last_start) / 1000),
           (unsigned long long)run->st.buckets, (unsigned long long)run->st.expired,
           (unsigned long long)run->st.aborted, (unsigned long long)run->st.nc_expired,
           (unsigned long long)run->st.markers_added,
           (unsigned long long)run->st.markers_removed);
    gw_lease_write(run->lease, NULL);
}

/* ---- life -------------------------------------------------------------- */

static void gw_lc_run_page_init(struct gw_lc_page *p, uint32_t cap)
{
    p->items = cn_calloc(cap, sizeof(*p->items));
    p->cap = cap;
}

static void gw_lc_run_metrics(struct gw_lc_run *run)
{
    struct cn_metrics *reg = run->reg;
    run->m_scans = cn_metrics_counter(reg, "cairn_gateway_lifecycle_scans_total",
                                      "Lifecycle scans this gateway ran (as the lease holder)",
                                      0, NULL);
    run->m_expired = cn_metrics_counter(reg, "cairn_gateway_lifecycle_expired_total",
                                        "Objects this gateway expired by lifecycle rules", 0,
                                        NULL);
    run->m_aborted = cn_metrics_counter(reg, "cairn_gateway_lifecycle_aborted_uploads_total",
                                        "Multipart uploads this gateway aborted by lifecycle "
                                        "rules", 0, NULL);
    run->m_nc_expired = cn_metrics_counter(reg, "cairn_gateway_lifecycle_noncurrent_expired_total",
                                           "Noncurrent object versions this gateway removed by "
                                           "lifecycle rules", 0, NULL);
    run->m_markers_added = cn_metrics_counter(reg,
                                              "cairn_gateway_lifecycle_markers_added_total",
                                              "Delete markers this gateway wrote over expired "
                                              "current versions", 0, NULL);
    run->m_markers_removed = cn_metrics_counter(reg,
                                                "cairn_gateway_lifecycle_markers_removed_total",
                                                "Lone (expired object) delete markers this "
                                                "gateway removed", 0, NULL);
    run->m_held = cn_metrics_gauge(reg, "cairn_gateway_lifecycle_lease_held",
                                   "1 while this gateway holds the lifecycle lease", 0, NULL);
    run->m_last_end = cn_metrics_gauge(reg, "cairn_gateway_lifecycle_last_scan_end_seconds",
                                       "Unix time the last scan of this gateway ended", 0, NULL);
}

struct gw_lc_run *gw_lc_run_new(struct event_base *base, struct gw_store *store,
                                struct gw_lo_reclaim *reclaim, const struct gw_lc_run_opts *o,
                                struct cn_metrics *reg)
{
    struct gw_lc_run *run = cn_calloc(1, sizeof(*run));
    run->base = base;
    run->store = store;
    run->reclaim = reclaim;
    run->o = *o;
    run->o.holder = NULL;
    snprintf(run->holder, sizeof(run->holder), "%s", o->holder);
    unsigned char b[8];
    if (RAND_bytes(b, sizeof(b)) != 1)
        memset(b, 0, sizeof(b));
    memcpy(&run->ver, b, sizeof(run->ver));
    run->timer = evtimer_new(base, gw_lc_run_on_timer, run);
    run->tags = gw_tagset_new(GW_TAGSET_MAX);
    gw_lc_run_page_init(&run->buckets, GW_LC_RUN_PAGE);
    gw_lc_run_page_init(&run->objects, GW_LC_RUN_PAGE);
    gw_lc_run_page_init(&run->parts, GW_LC_RUN_PARTS_PAGE);
    run->reg = reg;
    if (reg != NULL)
        gw_lc_run_metrics(run);
    struct gw_lease_opts lo = {.interval_us = o->interval_us, .lease_us = o->lease_us,
                               .settle_us = o->settle_us, .ver = run->ver, .holder = run->holder};
    run->lease = gw_lease_new(base, store, &gw_lc_run_lease_ops, &lo, &run->st, run, reg,
                              run->m_held);
    return run;
}

void gw_lc_run_close(struct gw_lc_run *run)
{
    if (run == NULL)
        return;
    run->closed = 1;
    evtimer_del(run->timer);
    gw_lease_close(run->lease);
}

void gw_lc_run_free(struct gw_lc_run *run)
{
    if (run == NULL)
        return;
    int inflight = run->inflight + gw_lease_inflight(run->lease);
    if (inflight != 0) {   /* a callback still to come would find it freed */
        CN_LOG(CN_LOG_WARN, "lifecycle: %d store operations never answered: worker not freed",
               inflight);
        return;
    }
    gw_lease_free(run->lease);
    event_free(run->timer);
    gw_lc_vrun_fini(run);
    gw_lc_fini(&run->lc);
    gw_tagset_free(run->tags);
    cn_free(run->buckets.items);
    cn_free(run->objects.items);
    cn_free(run->parts.items);
    cn_free(run);
}
