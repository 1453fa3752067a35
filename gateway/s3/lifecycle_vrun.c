/* Lifecycle in a bucket with a versioning state (lifecycle_run_priv.h;
 * the layout is s3_versions.c's, docs/gateway.md "Versioning"). Three
 * actions, each one chain of store operations, one in flight, every one in
 * a delete slot of the worker's throttle:
 * - an expired current version ("o/" entry) gets a delete marker: Enabled,
 *   a new id (a latest from before versioning is first kept as its null
 *   version); Suspended, a null marker that replaces the null version
 *   (whose record and chunks go);
 * - a noncurrent version that fell due (NoncurrentVersionExpiration,
 *   counted from its successor's write) is removed with its chunks;
 * - a delete marker that is its key's only version is removed
 *   (ExpiredObjectDeleteMarker, or an Expiration Days / Date it is old
 *   enough for).
 * The walk over "v/" keeps one key's versions (newest first) as a group. */
#include "lifecycle_run_priv.h"

#include <stdio.h>
#include <string.h>

#include "lo_reclaim.h"
#include "objmeta.h"

#include "msg/msg.h"

#include "cn/alloc.h"
#include "cn/hlc.h"
#include "cn/log.h"
#include "cn/metrics.h"
#include "cn/time.h"

static void gw_lc_vrun_next(struct gw_lc_run *run);

int gw_lc_vrun_wanted(const struct gw_lc *lc)
{
    for (uint32_t i = 0; i < lc->n_rules; i++) {
        const struct gw_lc_rule *r = &lc->rules[i];
        if (r->enabled && (r->nc_days != GW_LC_NONE || r->exp_marker == 1 ||
                           r->exp_days != GW_LC_NONE || r->exp_date_s != GW_LC_NONE))
            return 1;
    }
    return 0;
}

void gw_lc_vrun_fini(struct gw_lc_run *run)
{
    if (run->v.have_map)
        gw_lo_map_fini(&run->v.map);
    run->v.have_map = 0;
}

/* ---- helpers ------------------------------------------------------------ */

/* The ":vid" of a record's meta into id; 0 when it has none (a null
 * version from before versioning). */
static int gw_lc_vrun_meta_id(const struct msg *m, char id[GW_VERSIONING_ID_MAX])
{
    struct gw_objmeta om;
    id[0] = '\0';
    if (gw_objmeta_decode(&om, m->meta.ptr, m->meta.len) != CN_OK)
        return 0;
    const struct gw_objmeta_header *h = gw_objmeta_find(&om, GW_VERSIONING_META);
    if (h == NULL || gw_versioning_id_check(h->value, h->value_len) == 0)
        return 0;
    memcpy(id, h->value, h->value_len);
    id[h->value_len] = '\0';
    return 1;
}

static int gw_lc_vrun_is_large(const struct gw_lc_item *it, uint64_t *size)
{
    size_t tl;
    return gw_lo_map_record_size(it->etag, strlen(it->etag), it->has_osize, it->osize, &tl, size);
}

/* Keeps the chunk map of a large record read whole (m) for the reclaim. */
static void gw_lc_vrun_keep_map(struct gw_lc_run *run, const struct msg *m)
{
    size_t tl;
    uint64_t size;
    gw_lc_vrun_fini(run);
    if (!gw_lo_map_reply_size(m, &tl, &size))
        return;
    if (gw_lo_map_decode(&run->v.map, m->payload.ptr, m->payload.len) == CN_OK)
        run->v.have_map = 1;
    else
        gw_lo_map_fini(&run->v.map);
}

/* The chunks of the version removed go after the reclaim delay (reads
 * that began before still finish); they are named after the "o/" key. */
static void gw_lc_vrun_reclaim(struct gw_lc_run *run)
{
    if (run->v.have_map)
        gw_lo_reclaim_segs(run->reclaim, run->v.okey, run->v.okey_len, run->v.map.segs,
                           run->v.map.n_segs, run->o.reclaim_delay_ms, run->ver);
    gw_lc_vrun_fini(run);
}

static void gw_lc_vrun_count(struct gw_lc_run *run, uint64_t *n, uint64_t *total,
                             uint32_t metric)
{
    (*n)++;
    (*total)++;
    if (run->reg != NULL)
        cn_metrics_add(run->reg, metric, 1);
}

/* v.okey from a version key k ("v/" bucket "/" key NUL suffix). */
static void gw_lc_vrun_okey_of(struct gw_lc_run *run, const char *k, size_t len)
{
    const char *nul = memchr(k, '\0', len);
    size_t n = nul != NULL ? (size_t)(nul - k) : len;
    CN_ASSERT(n <= sizeof(run->v.okey));
    memcpy(run->v.okey, k, n);
    run->v.okey[0] = 'o';
    run->v.okey_len = n;
}

/* The S3 key of the "o/" key v.okey. */
static const char *gw_lc_vrun_s3key(const struct gw_lc_run *run, size_t *len)
{
    size_t plen = 3 + run->bucket_len;
    *len = run->v.okey_len - plen;
    return run->v.okey + plen;
}

/* ---- an expired current version: a delete marker ------------------------ */

static void gw_lc_vrun_on_unmarked(struct gw_store_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (res->rc == CN_OK) {
        gw_lc_vrun_count(run, &run->st.markers_added, &run->st.total_markers_added,
                         run->m_markers_added);
        gw_lc_vrun_reclaim(run);
    } else {
        /* the marker is the newest version; "o/" still shows the object
         * until the next scan or write */
        CN_LOG(CN_LOG_WARN, "lifecycle: hiding %.*s behind its delete marker failed: %s",
               (int)run->v.okey_len, run->v.okey, res->err);
        gw_lc_vrun_fini(run);
    }
    gw_lc_run_next_object(run);
}

static void gw_lc_vrun_on_marker(struct gw_store_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (res->rc != CN_OK) {
        CN_LOG(CN_LOG_WARN, "lifecycle: a delete marker for %.*s not written: %s",
               (int)run->v.okey_len, run->v.okey, res->err);
        gw_lc_vrun_fini(run);
        gw_lc_run_next_object(run);
        return;
    }
    run->inflight++;
    gw_store_delete(run->store, run->v.okey, run->v.okey_len, run->ver, run->v.vts,
                    gw_lc_vrun_on_unmarked, run);
}

/* The marker's version record (empty etag, no data, ":vid" its id), then
 * the tombstone of "o/" at the same ts. */
static void gw_lc_vrun_write_marker(struct gw_lc_run *run)
{
    struct gw_lc_vstate *v = &run->v;
    v->vts = cn_hlc_after(cn_hlc_default(), v->o_ts);
    if (v->versioning == GW_VERSIONING_ENABLED)
        gw_versioning_id_new(v->vts, v->id);
    else
        memcpy(v->id, "null", 5);
    size_t klen;
    const char *key = gw_lc_vrun_s3key(run, &klen);
    v->vkey_len = gw_versioning_key(v->vkey, run->bucket, run->bucket_len, key, klen, v->id,
                                    v->vts);
    char *meta = NULL;
    size_t meta_len = 0;
    int rc = gw_objmeta_replace(NULL, 0, GW_VERSIONING_META, v->id, strlen(v->id), &meta,
                                &meta_len);
    CN_ASSERT(rc == CN_OK);   /* an empty meta has room */
    struct gw_store_record rec = {
        .key = v->vkey, .key_len = v->vkey_len,
        .etag = GW_VERSIONING_DM_ETAG, .etag_len = 0,
        .meta = meta, .meta_len = meta_len,
        .ver = run->ver, .ts = v->vts,
    };
    run->inflight++;
    gw_store_put(run->store, &rec, NULL, gw_lc_vrun_on_marker, run);
    cn_free(meta);
}

static void gw_lc_vrun_on_kept_null(struct gw_store_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (res->rc != CN_OK) {   /* the marker would hide the only copy: not now */
        CN_LOG(CN_LOG_WARN, "lifecycle: keeping %.*s as its null version failed: %s",
               (int)run->v.okey_len, run->v.okey, res->err);
        gw_lc_run_next_object(run);
        return;
    }
    gw_lc_vrun_write_marker(run);
}

/* Enabled over a latest from before versioning (no ":vid"), read whole:
 * kept under its null version key, unchanged but for ":vid null", as a
 * versioned write keeps it (s3_versions.c). */
static void gw_lc_vrun_on_old_whole(struct gw_store_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (res->rc != CN_OK || res->reply->m.ts != run->v.o_ts) {
        gw_lc_run_next_object(run);   /* gone or overwritten meanwhile */
        return;
    }
    const struct msg *m = &res->reply->m;
    char *meta = NULL;
    size_t meta_len = 0;
    if (gw_objmeta_replace(m->meta.ptr, m->meta.len, GW_VERSIONING_META, "null", 4, &meta,
                           &meta_len) != CN_OK) {
        CN_LOG(CN_LOG_WARN, "lifecycle: %.*s: meta full, no null version kept: not expired",
               (int)run->v.okey_len, run->v.okey);
        gw_lc_run_next_object(run);
        return;
    }
    size_t klen;
    const char *key = gw_lc_vrun_s3key(run, &klen);
    char vkey[GW_VERSIONING_KEY_MAX];
    size_t n = gw_versioning_key(vkey, run->bucket, run->bucket_len, key, klen, "null", m->ts);
    struct evbuffer *data = evbuffer_new();
    gw_storage_reply_move_payload(res->reply, data);
    struct gw_blob *blob = gw_blob_from_evbuffer(data);
    struct gw_store_record rec = {.key = vkey, .key_len = n, .ver = m->ver, .ts = m->ts};
    gw_store_record_from_reply(&rec, m);
    rec.meta = meta;
    rec.meta_len = meta_len;
    run->inflight++;
    gw_store_put(run->store, &rec, blob, gw_lc_vrun_on_kept_null, run);
    gw_blob_unref(blob);
    cn_free(meta);
}

/* ---- Suspended: the null version the marker replaces -------------------- */

static void gw_lc_vrun_on_null_dropped(struct gw_store_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (res->rc != CN_OK && res->rc != CN_NOTFOUND) {
        CN_LOG(CN_LOG_WARN, "lifecycle: the null version of %.*s not removed: %s",
               (int)run->v.okey_len, run->v.okey, res->err);
        gw_lc_vrun_fini(run);   /* its chunks stay with it */
        gw_lc_run_next_object(run);
        return;
    }
    gw_lc_vrun_write_marker(run);
}

static void gw_lc_vrun_drop_null(struct gw_lc_run *run)
{
    run->inflight++;
    gw_store_delete(run->store, run->v.vkey, run->v.vkey_len, run->ver,
                    cn_hlc_after(cn_hlc_default(), run->v.vts), gw_lc_vrun_on_null_dropped, run);
}

static void gw_lc_vrun_on_null_whole(struct gw_store_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (res->rc == CN_OK)
        gw_lc_vrun_keep_map(run, &res->reply->m);
    gw_lc_vrun_drop_null(run);
}

static void gw_lc_vrun_null_page(struct gw_lc_run *run, int from_start);

/* A page of the key's versions: the null one is removed (read whole first
 * when large, for its chunks), then the marker written. */
static void gw_lc_vrun_on_null_scan(struct gw_store_list_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (!gw_lc_run_page_fill(&run->parts, res)) {
        gw_lc_run_finish(run, res->err);
        return;
    }
    size_t base = 3 + run->bucket_len;
    for (uint32_t i = 0; i < run->parts.n; i++) {
        const struct gw_lc_item *it = &run->parts.items[i];
        const char *key;
        size_t klen;
        char id[GW_VERSIONING_ID_MAX];
        uint64_t ts, size;
        if (gw_versioning_key_split(it->key, it->key_len, base, &key, &klen, id, &ts) != 0 ||
            strcmp(id, "null") != 0)
            continue;
        memcpy(run->v.vkey, it->key, it->key_len);
        run->v.vkey_len = it->key_len;
        run->v.vts = it->ts;
        run->v.found_null = 1;
        if (gw_lc_vrun_is_large(it, &size)) {
            run->inflight++;
            gw_store_get(run->store, run->v.vkey, run->v.vkey_len, 1, 0, 0,
                         gw_lc_vrun_on_null_whole, run);
        } else {
            gw_lc_vrun_drop_null(run);
        }
        return;
    }
    if (run->parts.more)
        gw_lc_vrun_null_page(run, 0);
    else
        gw_lc_vrun_write_marker(run);
}

/* Lists the key's versions (prefix in v.vkey while the scan lasts). */
static void gw_lc_vrun_null_page(struct gw_lc_run *run, int from_start)
{
    if (from_start) {
        run->parts.n = 0;
        memcpy(run->v.vkey, run->v.okey, run->v.okey_len);
        run->v.vkey[0] = 'v';
        run->v.vkey[run->v.okey_len] = '\0';
        run->v.vkey_len = run->v.okey_len + 1;
    }
    gw_lc_run_list(run, &run->parts, run->v.vkey, run->v.vkey_len, from_start,
                   gw_lc_vrun_on_null_scan);
}

/* Suspended over a latest from before versioning, read whole: it is the
 * null version (kept nowhere else); a large one's chunks go with it. */
static void gw_lc_vrun_on_susp_whole(struct gw_store_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (res->rc != CN_OK || res->reply->m.ts != run->v.o_ts) {
        gw_lc_run_next_object(run);
        return;
    }
    gw_lc_vrun_keep_map(run, &res->reply->m);
    gw_lc_vrun_write_marker(run);
}

/* The "o/" record of the expired object: still the version listed? */
static void gw_lc_vrun_on_mark_head(struct gw_store_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (res->rc != CN_OK || res->reply->m.ts != run->cur->ts) {
        gw_lc_run_next_object(run);   /* gone or overwritten since the listing */
        return;
    }
    const struct msg *m = &res->reply->m;
    char id[GW_VERSIONING_ID_MAX];
    int has_id = gw_lc_vrun_meta_id(m, id);
    size_t tl;
    uint64_t size;
    run->v.o_ts = m->ts;
    if (has_id && run->v.versioning == GW_VERSIONING_SUSPENDED) {
        gw_lc_vrun_null_page(run, 1);
        return;
    }
    if (has_id) {
        gw_lc_vrun_write_marker(run);
        return;
    }
    if (run->v.versioning == GW_VERSIONING_ENABLED) {
        run->inflight++;
        gw_store_get(run->store, run->v.okey, run->v.okey_len, 1, 0, 0, gw_lc_vrun_on_old_whole,
                     run);
        return;
    }
    if (gw_lo_map_reply_size(m, &tl, &size)) {
        run->inflight++;
        gw_store_get(run->store, run->v.okey, run->v.okey_len, 1, 0, 0,
                     gw_lc_vrun_on_susp_whole, run);
        return;
    }
    gw_lc_vrun_write_marker(run);
}

void gw_lc_vrun_mark(struct gw_lc_run *run)
{
    struct gw_lc_vstate *v = &run->v;
    gw_lc_vrun_fini(run);
    v->found_null = 0;
    v->okey_len = CN_MIN((size_t)run->cur->key_len, sizeof(v->okey));
    memcpy(v->okey, run->cur->key, v->okey_len);
    run->inflight++;
    gw_store_head(run->store, v->okey, v->okey_len, gw_lc_vrun_on_mark_head, run);
}

/* ---- the walk over the version records ---------------------------------- */

/* Is the noncurrent version it (key[klen], noncurrent since since_us, the
 * nth noncurrent one of its key) due? 1 yes, 0 no, -1 a rule with tags
 * could take it: read them (have_tags 0). */
static int gw_lc_vrun_nc_due(const struct gw_lc_run *run, const struct gw_lc_item *it,
                             const char *key, size_t klen, uint64_t since_us, uint64_t nth,
                             const struct gw_tagset *tags, int have_tags)
{
    uint64_t size = it->size, lsize, now = cn_time_now_us();
    if (it->etag[0] == '\0')
        size = 0;   /* a delete marker */
    else if (gw_lc_vrun_is_large(it, &lsize))
        size = lsize;
    int need_tags = 0;
    for (uint32_t i = 0; i < run->lc.n_rules; i++) {
        const struct gw_lc_rule *r = &run->lc.rules[i];
        if (!r->enabled || gw_lc_rule_noncurrent_at(r, since_us, nth, run->o.day_us) > now)
            continue;
        if (r->n_tags > 0 && !have_tags && it->etag[0] != '\0') {
            need_tags |= gw_lc_rule_prefix_matches(r, key, klen);
            continue;
        }
        if (gw_lc_rule_matches(r, key, klen, size, have_tags ? tags : NULL))
            return 1;
    }
    return need_tags ? -1 : 0;
}

/* Is the lone delete marker it (key[klen]) due? */
static int gw_lc_vrun_marker_due(const struct gw_lc_run *run, const struct gw_lc_item *it,
                                 const char *key, size_t klen, uint64_t created_us)
{
    (void)it;
    uint64_t now = cn_time_now_us();
    for (uint32_t i = 0; i < run->lc.n_rules; i++) {
        const struct gw_lc_rule *r = &run->lc.rules[i];
        if (r->enabled && gw_lc_rule_marker_at(r, created_us, run->o.day_us) <= now &&
            gw_lc_rule_matches(r, key, klen, 0, NULL))
            return 1;
    }
    return 0;
}

static void gw_lc_vrun_on_versions(struct gw_store_list_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (!gw_lc_run_page_fill(&run->objects, res)) {
        gw_lc_run_finish(run, res->err);
        return;
    }
    gw_lc_vrun_next(run);
}

static void gw_lc_vrun_page(struct gw_lc_run *run, int from_start)
{
    char prefix[GW_VERSIONING_KEY_MAX];
    size_t n = gw_versioning_bucket_prefix(prefix, run->bucket, run->bucket_len);
    if (from_start)
        run->objects.n = 0;
    gw_lc_run_list(run, &run->objects, prefix, n, from_start, gw_lc_vrun_on_versions);
}

void gw_lc_vrun_versions(struct gw_lc_run *run)
{
    run->v.group_open = 0;
    gw_lc_vrun_page(run, 1);
}

/* ---- removing one version ------------------------------------------------ */

static void gw_lc_vrun_on_removed(struct gw_store_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (res->rc == CN_OK) {
        run->v.gremoved++;
        gw_lc_vrun_count(run, &run->st.nc_expired, &run->st.total_nc_expired,
                         run->m_nc_expired);
        gw_lc_vrun_reclaim(run);
    } else {
        CN_LOG(CN_LOG_WARN, "lifecycle: removing a noncurrent version of %.*s failed: %s",
               (int)run->v.okey_len, run->v.okey, res->err);
        gw_lc_vrun_fini(run);
    }
    gw_lc_vrun_next(run);
}

/* "o/" must not hold the version (a DELETE ?versionId= of the latest may
 * have made it the latest again since the listing): then it stays. */
static void gw_lc_vrun_on_nc_latest(struct gw_store_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    char id[GW_VERSIONING_ID_MAX];
    /* no "o/" (a tombstone): the key's newest delete marker is its current
     * version, even below a version record whose "o/" was never written */
    if ((res->rc != CN_OK && res->rc != CN_NOTFOUND) ||
        (res->rc == CN_NOTFOUND && run->v.nc_first_marker) ||
        (res->rc == CN_OK && gw_lc_vrun_meta_id(&res->reply->m, id) &&
         strcmp(id, run->v.id) == 0)) {
        gw_lc_vrun_fini(run);
        gw_lc_vrun_next(run);
        return;
    }
    run->inflight++;
    gw_store_delete(run->store, run->v.vkey, run->v.vkey_len, run->ver,
                    cn_hlc_after(cn_hlc_default(), run->v.vts), gw_lc_vrun_on_removed, run);
}

static void gw_lc_vrun_nc_check_latest(struct gw_lc_run *run)
{
    run->inflight++;
    gw_store_head(run->store, run->v.okey, run->v.okey_len, gw_lc_vrun_on_nc_latest, run);
}

static void gw_lc_vrun_on_nc_whole(struct gw_store_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (res->rc != CN_OK || res->reply->m.ts != run->v.vts) {
        gw_lc_vrun_next(run);
        return;
    }
    gw_lc_vrun_keep_map(run, &res->reply->m);
    gw_lc_vrun_nc_check_latest(run);
}

/* The version run->cur (v.id set): read whole when large (its chunk
 * map), checked against "o/", deleted, its chunks reclaimed. */
static void gw_lc_vrun_remove(struct gw_lc_run *run)
{
    struct gw_lc_vstate *v = &run->v;
    const struct gw_lc_item *it = run->cur;
    uint64_t size;
    gw_lc_vrun_fini(run);
    memcpy(v->vkey, it->key, it->key_len);
    v->vkey_len = it->key_len;
    v->vts = it->ts;
    gw_lc_vrun_okey_of(run, it->key, it->key_len);
    if (gw_lc_vrun_is_large(it, &size)) {
        run->inflight++;
        gw_store_get(run->store, v->vkey, v->vkey_len, 1, 0, 0, gw_lc_vrun_on_nc_whole, run);
        return;
    }
    gw_lc_vrun_nc_check_latest(run);
}

/* The noncurrent version's tags are read: due now? */
static void gw_lc_vrun_on_nc_head(struct gw_store_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (res->rc != CN_OK || res->reply->m.ts != run->cur->ts) {
        gw_lc_vrun_next(run);
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
    const char *key;
    size_t klen;
    char id[GW_VERSIONING_ID_MAX];
    uint64_t ts;
    if (gw_versioning_key_split(run->cur->key, run->cur->key_len, 3 + run->bucket_len, &key,
                                &klen, id, &ts) == 0 &&
        gw_lc_vrun_nc_due(run, run->cur, key, klen, run->v.vts, run->v.gidx - 1, run->tags,
                          1) == 1) {
        gw_lc_run_delete_slot(run, gw_lc_vrun_remove);
        return;
    }
    gw_lc_vrun_next(run);
}

/* ---- removing a lone delete marker ------------------------------------- */

static void gw_lc_vrun_on_marker_removed(struct gw_store_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (res->rc == CN_OK)
        gw_lc_vrun_count(run, &run->st.markers_removed, &run->st.total_markers_removed,
                         run->m_markers_removed);
    else
        CN_LOG(CN_LOG_WARN, "lifecycle: removing the delete marker of %.*s failed: %s",
               (int)run->v.okey_len, run->v.okey, res->err);
    gw_lc_vrun_next(run);
}

/* "o/" of a key whose only version is a delete marker must be deleted
 * (not found): else a write landed since the listing. */
static void gw_lc_vrun_on_marker_latest(struct gw_store_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    if (res->rc != CN_NOTFOUND) {
        gw_lc_vrun_next(run);
        return;
    }
    run->inflight++;
    gw_store_delete(run->store, run->v.vkey, run->v.vkey_len, run->ver,
                    cn_hlc_after(cn_hlc_default(), run->v.vts), gw_lc_vrun_on_marker_removed,
                    run);
}

static void gw_lc_vrun_remove_marker(struct gw_lc_run *run)
{
    struct gw_lc_vstate *v = &run->v;
    memcpy(v->vkey, v->gfirst.key, v->gfirst.key_len);
    v->vkey_len = v->gfirst.key_len;
    v->vts = v->gfirst.ts;
    gw_lc_vrun_okey_of(run, v->vkey, v->vkey_len);
    run->inflight++;
    gw_store_head(run->store, v->okey, v->okey_len, gw_lc_vrun_on_marker_latest, run);
}

/* ---- the walk ----------------------------------------------------------- */

/* The key's versions are all seen: a delete marker left alone is removed
 * when due, then the walk goes on. */
static void gw_lc_vrun_close_group(struct gw_lc_run *run)
{
    struct gw_lc_vstate *v = &run->v;
    const char *key;
    size_t klen;
    char id[GW_VERSIONING_ID_MAX];
    uint64_t ts;
    v->group_open = 0;
    if (v->gfirst_marker && v->gidx - v->gremoved == 1 &&
        gw_versioning_key_split(v->gfirst.key, v->gfirst.key_len, 3 + run->bucket_len, &key,
                                &klen, id, &ts) == 0 &&
        gw_lc_vrun_marker_due(run, &v->gfirst, key, klen, ts)) {
        gw_lc_run_delete_slot(run, gw_lc_vrun_remove_marker);
        return;
    }
    gw_lc_vrun_next(run);
}

static void gw_lc_vrun_open_group(struct gw_lc_run *run, const struct gw_lc_item *it,
                                  size_t prefix_len, uint64_t ts)
{
    struct gw_lc_vstate *v = &run->v;
    v->group_open = 1;
    memcpy(v->gprefix, it->key, prefix_len);
    v->gprefix_len = prefix_len;
    v->gidx = 1;
    v->gremoved = 0;
    v->gprev_ts = ts;
    v->gfirst = *it;
    v->gfirst_marker = it->etag[0] == '\0';
    v->gmarker_seen = v->gfirst_marker;
}

/* The key's newest version is its current one only if "o/" holds it: a
 * version record whose "o/" write never happened (a gateway stopped
 * between the two) is noncurrent, since its own version time (or since
 * the "o/" written over it, when later: a conditional write whose version
 * record was not written), and is removed as noncurrent versions are
 * (gw_lc_vrun_remove() checks "o/" again). A failed read leaves it. */
static void gw_lc_vrun_on_first_latest(struct gw_store_result *res, void *arg)
{
    struct gw_lc_run *run = arg;
    if (gw_lc_run_op_done(run))
        return;
    char id[GW_VERSIONING_ID_MAX];
    if ((res->rc != CN_OK && res->rc != CN_NOTFOUND) ||
        (res->rc == CN_OK && gw_lc_vrun_meta_id(&res->reply->m, id) &&
         strcmp(id, run->v.id) == 0)) {
        gw_lc_vrun_next(run);
        return;
    }
    /* noncurrent since its own time, or since "o/" was written over it
     * when that was later (a conditional write: "o/" first) */
    const char *key;
    size_t klen;
    uint64_t ts;
    if (gw_versioning_key_split(run->cur->key, run->cur->key_len, 3 + run->bucket_len, &key,
                                &klen, id, &ts) != 0 ||
        gw_lc_vrun_nc_due(run, run->cur, key, klen,
                          res->rc == CN_OK && res->reply->m.ts > ts ? res->reply->m.ts : ts, 1,
                          NULL, 0) != 1) {
        gw_lc_vrun_next(run);
        return;
    }
    CN_LOG(CN_LOG_INFO, "lifecycle: %.*s: the newest version %s is not the latest",
           (int)run->v.okey_len, run->v.okey, run->v.id);
    gw_lc_run_delete_slot(run, gw_lc_vrun_remove);
}

static void gw_lc_vrun_next(struct gw_lc_run *run)
{
    struct gw_lc_vstate *v = &run->v;
    struct gw_lc_page *p = &run->objects;
    if (p->idx == p->n) {
        if (p->more)
            gw_lc_vrun_page(run, 0);
        else if (v->group_open)
            gw_lc_vrun_close_group(run);
        else
            gw_lc_run_uploads_page(run, 1);
        return;
    }
    struct gw_lc_item *it = &p->items[p->idx];
    const char *key;
    size_t klen;
    char id[GW_VERSIONING_ID_MAX];
    uint64_t ts;
    if (gw_versioning_key_split(it->key, it->key_len, 3 + run->bucket_len, &key, &klen, id,
                                &ts) != 0) {
        p->idx++;   /* not a version key a gateway wrote */
        gw_lc_vrun_next(run);
        return;
    }
    size_t plen = (size_t)(key - it->key) + klen + 1;
    if (v->group_open && (plen != v->gprefix_len || memcmp(it->key, v->gprefix, plen) != 0)) {
        gw_lc_vrun_close_group(run);   /* comes back to this entry */
        return;
    }
    p->idx++;
    if (!v->group_open) {   /* the key's newest version: its current one... */
        gw_lc_vrun_open_group(run, it, plen, ts);
        /* ... if "o/" holds it: asked only when it would be due as a
         * noncurrent version (since its own time, the newest noncurrent) */
        if (it->etag[0] != '\0' && gw_lc_vrun_nc_due(run, it, key, klen, ts, 1, NULL, 0) == 1) {
            run->cur = it;
            memcpy(v->id, id, sizeof(v->id));
            v->nc_first_marker = 0;
            gw_lc_vrun_okey_of(run, it->key, it->key_len);
            run->inflight++;
            gw_store_head(run->store, v->okey, v->okey_len, gw_lc_vrun_on_first_latest, run);
            return;
        }
        gw_lc_vrun_next(run);
        return;
    }
    /* noncurrent since its successor (the entry before) was written */
    uint64_t since = v->gprev_ts, nth = v->gidx;
    v->gprev_ts = ts;
    v->gidx++;
    v->vts = since;
    run->cur = it;
    memcpy(v->id, id, sizeof(v->id));
    v->nc_first_marker = it->etag[0] == '\0' && !v->gmarker_seen;
    v->gmarker_seen |= it->etag[0] == '\0';
    int due = gw_lc_vrun_nc_due(run, it, key, klen, since, nth, NULL, 0);
    if (due == 1) {
        gw_lc_run_delete_slot(run, gw_lc_vrun_remove);
    } else if (due < 0) {
        run->inflight++;
        gw_store_head(run->store, it->key, it->key_len, gw_lc_vrun_on_nc_head, run);
    } else {
        gw_lc_vrun_next(run);
    }
}
