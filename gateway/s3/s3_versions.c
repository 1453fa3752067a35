/* Versioning's requests (s3_versions.h). Layout: the latest version of a
 * key is its "o/" record, as without versioning; in a bucket that has a
 * versioning configuration every version (objects, delete markers) is also
 * a record under its version key (versioning.h), whose data and etag are
 * the object's (a large object's parent: its chunk map, so its chunks
 * belong to both records). The object meta of a versioned record carries
 * its id as the gateway's own entry ":vid" (objmeta.h); a record without it
 * is a null version that was written before versioning and is kept only as
 * "o/" until a versioned write or delete copies it under its version key.
 * Delete markers are version records with an empty etag; the "o/" record
 * of a key whose latest is a delete marker is a tombstone. */
#include "s3_versions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_date.h"
#include "keys.h"
#include "lo_map.h"
#include "lo_reclaim.h"
#include "msg/msg.h"
#include "objmeta.h"
#include "s3_body.h"
#include "s3_bucket.h"
#include "s3_error.h"
#include "s3_list.h"
#include "s3_names.h"
#include "s3_ops.h"
#include "s3_reply.h"
#include "versioning.h"
#include "xml.h"

#include "cn/alloc.h"
#include "cn/hlc.h"
#include "cn/log.h"

#define GW_S3_VERSIONS_META GW_VERSIONING_META
#define GW_S3_VERSIONS_SCAN_PAGE 256

/* The versioning steps of one request (r->vs). */
struct gw_s3_versions {
    const char *key;                        /* the object's S3 key (r->key, or a
                                               DeleteObjects entry's) */
    size_t key_len;
    char okey[GW_KEYS_MAX];                 /* the object's "o/" key */
    size_t okey_len;
    char vprefix[GW_VERSIONING_KEY_MAX];    /* "v/" bucket "/" key NUL */
    size_t vprefix_len;
    char vkey[GW_VERSIONING_KEY_MAX];       /* the version record at hand */
    size_t vkey_len;
    char id[GW_VERSIONING_ID_MAX];          /* the version written, read or removed */
    /* a versioned write: the caller's record and continuation */
    gw_store_cb cb;
    void *arg;
    char *etag;
    size_t etag_len;
    int has_osize;                          /* a large object's size (lo_map.h) */
    uint64_t osize;
    char *meta;                             /* with ":vid" */
    size_t meta_len;
    uint64_t ver, ts;
    struct gw_blob *blob;
    int is_marker;                          /* a delete marker: no data, "o/" deleted */
    gw_s3_versions_put_fn put;              /* writes "o/" first (gw_s3_versions_put_with) */
    /* the null-version scan: of the versions under scan_prefix (vprefix,
     * or a copy source's), whose bucket part is scan_base_len bytes */
    char scan_prefix[GW_VERSIONING_KEY_MAX];
    size_t scan_prefix_len, scan_base_len;
    char after[GW_VERSIONING_KEY_MAX];
    size_t after_len;
    void (*scan_done)(struct gw_req *r, int rc, const char *err);
    int found;
    uint64_t found_ts;
    int found_large;                        /* its etag field is a large parent's */
    gw_req_cb after_read;                   /* gw_s3_versions_read_replaced()'s */
    /* the removal of one version */
    int target_is_latest_record;            /* the target was the "o/" record itself */
    int removed_marker;
    uint64_t o_ts;
    struct gw_lo_map map;
    int have_map;
    int want_null;                          /* GET ?versionId=null read from "o/" */
    gw_s3_versions_read_cb read;
    gw_s3_versions_done_cb done;            /* a DeleteObjects entry's; NULL: answer r */
};

void gw_s3_versions_free(struct gw_s3_versions *vs)
{
    if (vs == NULL)
        return;
    cn_free(vs->etag);
    cn_free(vs->meta);
    gw_blob_unref(vs->blob);
    if (vs->have_map)
        gw_lo_map_fini(&vs->map);
    cn_free(vs);
}

/* A fresh state for key (borrowed: it outlives the operation), replacing
 * r's. */
static struct gw_s3_versions *gw_s3_versions_state_for(struct gw_req *r, const char *key,
                                                       size_t key_len)
{
    gw_s3_versions_free(r->vs);
    struct gw_s3_versions *vs = cn_calloc(1, sizeof(*vs));
    vs->key = key;
    vs->key_len = key_len;
    vs->okey_len = gw_keys_object(vs->okey, r->bucket, r->bucket_len, key, key_len);
    vs->vprefix_len = gw_versioning_key_prefix(vs->vprefix, r->bucket, r->bucket_len, key,
                                               key_len);
    r->vs = vs;
    return vs;
}

/* r's state, for r->key (made on first use). */
static struct gw_s3_versions *gw_s3_versions_state(struct gw_req *r)
{
    if (r->vs == NULL)
        return gw_s3_versions_state_for(r, r->key, r->key_len);
    return r->vs;
}

/* The ":vid" of a record's meta into id (NUL-terminated); 0 when it has
 * none (a null version written before versioning). */
static int gw_s3_versions_meta_id(const struct msg *m, char id[GW_VERSIONING_ID_MAX])
{
    struct gw_objmeta om;
    id[0] = '\0';
    if (gw_objmeta_decode(&om, m->meta.ptr, m->meta.len) != CN_OK)
        return 0;
    const struct gw_objmeta_header *h = gw_objmeta_find(&om, GW_S3_VERSIONS_META);
    if (h == NULL || gw_versioning_id_check(h->value, h->value_len) == 0)
        return 0;
    memcpy(id, h->value, h->value_len);
    id[h->value_len] = '\0';
    return 1;
}

/* ---- Put/GetBucketVersioning ----------------------------------------- */

static void gw_s3_versions_config_done(struct gw_req *r)
{
    gw_req_reply_empty(r, 200);
}

static void gw_s3_versions_config_put_body(struct gw_req *r, enum gw_s3_err err,
                                           struct evbuffer *data)
{
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    size_t len = evbuffer_get_length(data);
    const char *body = len > 0 ? (const char *)evbuffer_pullup(data, -1) : "";
    enum gw_versioning_state st;
    err = gw_versioning_parse_xml(body, len, &st);
    if (err != GW_S3_OK) {
        gw_req_error(r, err, err == GW_S3_NOT_IMPLEMENTED ? "MFA Delete is not supported."
                                                          : NULL);
        return;
    }
    if (st == GW_VERSIONING_OFF) {   /* no Status: nothing changes, as S3 */
        gw_req_reply_empty(r, 200);
        return;
    }
    /* once set, a bucket's versioning is never removed, only suspended */
    const char *s = gw_versioning_state_str(st);
    gw_s3_bucket_cfg_write(r, cn_memdup(s, strlen(s)), strlen(s), gw_s3_versions_config_done);
}

static void gw_s3_versions_config_put_owned(struct gw_req *r)
{
    if (gw_req_header(r, "x-amz-mfa", NULL) != NULL) {
        gw_req_error(r, GW_S3_NOT_IMPLEMENTED, "MFA Delete is not supported.");
        return;
    }
    gw_s3_body_read(r, GW_VERSIONING_XML_MAX_BYTES, GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED,
                    gw_s3_versions_config_put_body);
}

void gw_s3_versions_config_put(struct gw_req *r)
{
    gw_s3_bucket_cfg_read(r, GW_VERSIONING_CFG, gw_s3_versions_config_put_owned);
}

static void gw_s3_versions_config_get_found(struct gw_req *r)
{
    const struct gw_s3_bucket_cfg *c = GW_REQ_STATE(r, gw_s3_bucket_cfg);
    enum gw_versioning_state st = gw_versioning_state_of(c->value, c->value_len);
    struct evbuffer *doc = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    gw_xml_open_ns(&w, "VersioningConfiguration", GW_XML_S3_NS);
    if (st != GW_VERSIONING_OFF)
        gw_xml_elem_str(&w, "Status", gw_versioning_state_str(st));
    gw_xml_close(&w);
    gw_xml_writer_finish(&w);
    gw_req_reply_xml(r, 200, doc);
    evbuffer_free(doc);
}

void gw_s3_versions_config_get(struct gw_req *r)
{
    gw_s3_bucket_cfg_read(r, GW_VERSIONING_CFG, gw_s3_versions_config_get_found);
}

/* ---- the null version's record --------------------------------------- */

static void gw_s3_versions_scan_page(struct gw_req *r);

/* A page of the key's versions: the first null one ends the scan. */
static void gw_s3_versions_on_scan(struct gw_store_list_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_versions *vs = r->vs;
    /* no hold of its own: every caller holds r across the whole scan */
    if (res->rc != CN_OK) {
        vs->scan_done(r, res->rc, res->err);
        return;
    }
    for (uint32_t i = 0; i < res->n_ents; i++) {
        const struct gw_store_entry *e = &res->ents[i];
        const char *key;
        size_t key_len;
        char id[GW_VERSIONING_ID_MAX];
        uint64_t ts;
        if (gw_versioning_key_split(e->key, e->key_len, vs->scan_base_len, &key, &key_len, id,
                                    &ts) != 0 || strcmp(id, "null") != 0)
            continue;
        size_t tl;
        uint64_t size;
        vs->found = 1;
        vs->found_ts = ts;
        vs->found_large = gw_lo_map_record_size(e->etag, strlen(e->etag), e->has_osize,
                                                e->osize, &tl, &size);
        vs->scan_done(r, CN_OK, "");
        return;
    }
    if (!res->more || res->n_ents == 0) {
        vs->scan_done(r, CN_OK, "");
        return;
    }
    const struct gw_store_entry *last = &res->ents[res->n_ents - 1];
    vs->after_len = CN_MIN(last->key_len, sizeof(vs->after));
    memcpy(vs->after, last->key, vs->after_len);
    gw_s3_versions_scan_page(r);
}

static void gw_s3_versions_scan_page(struct gw_req *r)
{
    struct gw_s3_versions *vs = r->vs;
    gw_store_list(r->s3->store, vs->scan_prefix, vs->scan_prefix_len,
                  vs->after_len ? vs->after : NULL, vs->after_len, GW_S3_VERSIONS_SCAN_PAGE,
                  gw_s3_versions_on_scan, r);
}

/* Looks for the key's null version among its version records (a page at a
 * time: they are few but for keys with many versions): vs->found and
 * vs->found_ts, then done(r, rc, err). */
static void gw_s3_versions_find_null(struct gw_req *r,
                                     void (*done)(struct gw_req *r, int rc, const char *err))
{
    struct gw_s3_versions *vs = gw_s3_versions_state(r);
    memcpy(vs->scan_prefix, vs->vprefix, vs->vprefix_len);
    vs->scan_prefix_len = vs->vprefix_len;
    vs->scan_base_len = vs->vprefix_len - vs->key_len - 1;
    vs->found = 0;
    vs->after_len = 0;
    vs->scan_done = done;
    gw_s3_versions_scan_page(r);
}

/* ---- the versioned write --------------------------------------------- */

static int gw_s3_versions_name(struct gw_req *r);

/* Hands a failure of a step to the caller's callback. */
static void gw_s3_versions_fail(struct gw_req *r, int rc, const char *err)
{
    struct gw_s3_versions *vs = r->vs;
    struct gw_store_result res = {.rc = rc};
    snprintf(res.err, sizeof(res.err), "%s", err != NULL ? err : "");
    vs->cb(&res, vs->arg);
}

static void gw_s3_versions_on_latest(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_versions *vs = r->vs;
    if (res->rc == CN_OK && vs->have_map)   /* the replaced null version's chunks */
        gw_lo_reclaim_segs(r->s3->reclaim, vs->okey, vs->okey_len, vs->map.segs,
                           vs->map.n_segs, r->s3->lo.reclaim_delay_ms, r->id);
    if (res->rc == CN_OK && !vs->is_marker)   /* a delete's ending says its own */
        memcpy(r->version_id, vs->id, sizeof(vs->id));
    vs->cb(res, vs->arg);
}

static void gw_s3_versions_on_version(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_versions *vs = r->vs;
    if (res->rc != CN_OK) {
        vs->cb(res, vs->arg);
        return;
    }
    if (vs->is_marker) {
        gw_store_delete(r->s3->store, vs->okey, vs->okey_len, vs->ver, vs->ts,
                        gw_s3_versions_on_latest, r);
        return;
    }
    struct gw_store_record rec = {
        .key = vs->okey, .key_len = vs->okey_len,
        .etag = vs->etag, .etag_len = vs->etag_len,
        .has_osize = vs->has_osize, .osize = vs->osize,
        .meta = vs->meta, .meta_len = vs->meta_len,
        .ver = vs->ver, .ts = vs->ts,
    };
    gw_store_put(r->s3->store, &rec, vs->blob, gw_s3_versions_on_latest, r);
}

/* After "o/" was written through vs->put: the version record, then the
 * caller's callback with success whatever became of it. */
static void gw_s3_versions_on_version_after(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_versions *vs = r->vs;
    if (res->rc != CN_OK)
        CN_LOGR(CN_LOG_WARN, r->id, "version record of a conditional write not written (%s): "
                "the object is the latest, its version id not readable", res->err);
    struct gw_store_result ok = {.rc = CN_OK};
    memcpy(r->version_id, vs->id, sizeof(vs->id));
    vs->cb(&ok, vs->arg);
}

static void gw_s3_versions_on_latest_first(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_versions *vs = r->vs;
    if (res->rc != CN_OK) {
        vs->cb(res, vs->arg);
        return;
    }
    if (vs->have_map)   /* the replaced null version's chunks */
        gw_lo_reclaim_segs(r->s3->reclaim, vs->okey, vs->okey_len, vs->map.segs,
                           vs->map.n_segs, r->s3->lo.reclaim_delay_ms, r->id);
    struct gw_store_record rec = {
        .key = vs->vkey, .key_len = vs->vkey_len,
        .etag = vs->etag, .etag_len = vs->etag_len,
        .has_osize = vs->has_osize, .osize = vs->osize,
        .meta = vs->meta, .meta_len = vs->meta_len,
        .ver = vs->ver, .ts = vs->ts,
    };
    gw_store_put(r->s3->store, &rec, vs->blob, gw_s3_versions_on_version_after, r);
}

/* The new version's own record, then the "o/" record (or, with vs->put,
 * the other way round). */
static void gw_s3_versions_write_version(struct gw_req *r)
{
    struct gw_s3_versions *vs = r->vs;
    if (vs->put != NULL && !vs->is_marker) {
        vs->vkey_len = gw_versioning_key(vs->vkey, r->bucket, r->bucket_len, vs->key,
                                         vs->key_len, vs->id, vs->ts);
        struct gw_store_record rec = {
            .key = vs->okey, .key_len = vs->okey_len,
            .etag = vs->etag, .etag_len = vs->etag_len,
        .has_osize = vs->has_osize, .osize = vs->osize,
            .meta = vs->meta, .meta_len = vs->meta_len,
            .ver = vs->ver, .ts = vs->ts,
        };
        vs->put(r, &rec, vs->blob, gw_s3_versions_on_latest_first);
        return;
    }
    vs->vkey_len = gw_versioning_key(vs->vkey, r->bucket, r->bucket_len, vs->key, vs->key_len,
                                     vs->id, vs->ts);
    struct gw_store_record rec = {
        .key = vs->vkey, .key_len = vs->vkey_len,
        .etag = vs->etag, .etag_len = vs->etag_len,
        .has_osize = vs->has_osize, .osize = vs->osize,
        .meta = vs->meta, .meta_len = vs->meta_len,
        .ver = vs->ver, .ts = vs->ts,
    };
    gw_store_put(r->s3->store, &rec, vs->is_marker ? NULL : vs->blob, gw_s3_versions_on_version,
                 r);
}

static void gw_s3_versions_on_null_dropped(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (res->rc != CN_OK && res->rc != CN_NOTFOUND) {
        gw_s3_versions_fail(r, res->rc, res->err);
        return;
    }
    gw_s3_versions_write_version(r);
}

/* The record a Suspended write replaces, read whole when it is a large
 * parent: its chunk map is kept (vs->map) and reclaimed once the new "o/"
 * record is written (gw_s3_versions_on_latest). A failed read only costs
 * that reclaim (the chunks stay as orphans). */
static void gw_s3_versions_on_replaced(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_versions *vs = r->vs;
    size_t tl;
    uint64_t size;
    if (res->rc == CN_OK && !vs->have_map &&
        gw_lo_map_reply_size(&res->reply->m, &tl, &size)) {
        if (gw_lo_map_decode(&vs->map, res->reply->m.payload.ptr,
                             res->reply->m.payload.len) == CN_OK)
            vs->have_map = 1;
        else
            gw_lo_map_fini(&vs->map);
    }
    gw_req_cb next = vs->after_read;
    vs->after_read = NULL;
    next(r);
}

static void gw_s3_versions_read_replaced(struct gw_req *r, const char *key, size_t key_len,
                                         gw_req_cb next)
{
    struct gw_s3_versions *vs = r->vs;
    vs->after_read = next;
    gw_store_get(r->s3->store, key, key_len, 1, 0, 0, gw_s3_versions_on_replaced, r);
}

/* Deletes the old null version's record (vs->vkey). */
static void gw_s3_versions_drop_null(struct gw_req *r)
{
    struct gw_s3_versions *vs = r->vs;
    gw_store_delete(r->s3->store, vs->vkey, vs->vkey_len, vs->ver,
                    cn_hlc_after(cn_hlc_default(), vs->found_ts),
                    gw_s3_versions_on_null_dropped, r);
}

/* Suspended: the new null version replaces the old one's record; a large
 * one's chunks are reclaimed once the new version is the latest. */
static void gw_s3_versions_on_old_null(struct gw_req *r, int rc, const char *err)
{
    struct gw_s3_versions *vs = r->vs;
    if (rc != CN_OK) {
        gw_s3_versions_fail(r, rc, err);
        return;
    }
    if (!vs->found) {
        gw_s3_versions_write_version(r);
        return;
    }
    vs->vkey_len = gw_versioning_key(vs->vkey, r->bucket, r->bucket_len, vs->key, vs->key_len,
                                     "null", vs->found_ts);
    if (vs->found_large)
        gw_s3_versions_read_replaced(r, vs->vkey, vs->vkey_len, gw_s3_versions_drop_null);
    else
        gw_s3_versions_drop_null(r);
}

/* The latest is settled as a version: on to the new one. */
static void gw_s3_versions_prepared(struct gw_req *r)
{
    if (r->versioning == GW_VERSIONING_SUSPENDED)
        gw_s3_versions_find_null(r, gw_s3_versions_on_old_null);
    else
        gw_s3_versions_write_version(r);
}

static void gw_s3_versions_on_kept(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (res->rc != CN_OK) {
        gw_s3_versions_fail(r, res->rc, res->err);
        return;
    }
    gw_s3_versions_prepared(r);
}

/* The never-versioned latest, read whole: kept as the null version under
 * its version key, with its own time and ver. */
static void gw_s3_versions_on_old_whole(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_versions *vs = r->vs;
    if (res->rc == CN_NOTFOUND) {
        gw_s3_versions_prepared(r);
        return;
    }
    if (res->rc != CN_OK) {
        gw_s3_versions_fail(r, res->rc, res->err);
        return;
    }
    const struct msg *m = &res->reply->m;
    char *meta = NULL;
    size_t meta_len = 0;
    if (gw_objmeta_replace(m->meta.ptr, m->meta.len, GW_S3_VERSIONS_META, "null", 4, &meta,
                           &meta_len) != CN_OK) {
        gw_s3_versions_fail(r, CN_ERR, "the null version's meta is full");
        return;
    }
    char key[GW_VERSIONING_KEY_MAX];
    size_t n = gw_versioning_key(key, r->bucket, r->bucket_len, vs->key, vs->key_len, "null",
                                 m->ts);
    struct evbuffer *data = evbuffer_new();
    gw_storage_reply_move_payload(res->reply, data);
    struct gw_blob *blob = gw_blob_from_evbuffer(data);
    struct gw_store_record rec = {.key = key, .key_len = n, .ver = m->ver, .ts = m->ts};
    gw_store_record_from_reply(&rec, m);
    rec.meta = meta;
    rec.meta_len = meta_len;
    gw_store_put(r->s3->store, &rec, blob, gw_s3_versions_on_kept, r);
    gw_blob_unref(blob);
    cn_free(meta);
}

/* The current latest: a record without ":vid" was never kept as a version. */
static void gw_s3_versions_on_old_head(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_versions *vs = r->vs;
    char id[GW_VERSIONING_ID_MAX];
    if (vs->is_marker && res->reply != NULL) /* newer than what it hides */
        vs->ts = cn_hlc_after(cn_hlc_default(), CN_MAX(vs->ts, res->reply->m.ts));
    if (res->rc != CN_OK && res->rc != CN_NOTFOUND) {
        gw_s3_versions_fail(r, res->rc, res->err);
        return;
    }
    if (gw_s3_versions_name(r) != 0)
        return;
    if (res->rc == CN_OK && !gw_s3_versions_meta_id(&res->reply->m, id) &&
        r->versioning == GW_VERSIONING_ENABLED) {
        gw_store_get(r->s3->store, vs->okey, vs->okey_len, 1, 0, 0, gw_s3_versions_on_old_whole,
                     r);
        return;
    }
    size_t tl;
    uint64_t size;
    if (res->rc == CN_OK && !gw_s3_versions_meta_id(&res->reply->m, id) &&
        gw_lo_map_reply_size(&res->reply->m, &tl, &size)) {
        /* Suspended over a large object from before versioning: it is the
         * null version being replaced, kept nowhere else */
        gw_s3_versions_read_replaced(r, vs->okey, vs->okey_len, gw_s3_versions_prepared);
        return;
    }
    if (res->rc != CN_OK && res->rc != CN_NOTFOUND) {
        gw_s3_versions_fail(r, res->rc, res->err);
        return;
    }
    gw_s3_versions_prepared(r);
}

/* Names the new version (its time decided) and puts its id in its meta.
 * Returns 0, or -1 when the meta has no room (answered through vs->cb). */
static int gw_s3_versions_name(struct gw_req *r)
{
    struct gw_s3_versions *vs = r->vs;
    if (r->versioning == GW_VERSIONING_ENABLED)
        gw_versioning_id_new(vs->ts, vs->id);
    else
        memcpy(vs->id, "null", 5);
    char *meta = NULL;
    size_t meta_len = 0;
    if (gw_objmeta_replace(vs->meta, vs->meta_len, GW_S3_VERSIONS_META, vs->id, strlen(vs->id),
                           &meta, &meta_len) != CN_OK) {
        gw_s3_versions_fail(r, CN_ERR, "the object's meta is full");
        return -1;
    }
    cn_free(vs->meta);
    vs->meta = meta;
    vs->meta_len = meta_len;
    return 0;
}

/* Starts a versioned write (or delete marker) of vs's fields. */
static void gw_s3_versions_begin(struct gw_req *r)
{
    struct gw_s3_versions *vs = r->vs;
    gw_store_head(r->s3->store, vs->okey, vs->okey_len, gw_s3_versions_on_old_head, r);
}

/* The versioned write of rec; put: see gw_s3_versions_put_with(). */
static void gw_s3_versions_put_start(struct gw_req *r, const struct gw_store_record *rec,
                                     struct gw_blob *data, gw_store_cb cb, void *arg,
                                     gw_s3_versions_put_fn put)
{
    struct gw_s3_versions *vs = gw_s3_versions_state(r);
    vs->put = put;
    CN_ASSERT(rec->key_len == vs->okey_len && memcmp(rec->key, vs->okey, vs->okey_len) == 0);
    vs->cb = cb;
    vs->arg = arg;
    vs->etag = cn_memdup(rec->etag_len > 0 ? rec->etag : "", rec->etag_len > 0 ? rec->etag_len : 1);
    vs->etag_len = rec->etag_len;
    vs->has_osize = rec->has_osize;
    vs->osize = rec->osize;
    vs->meta = cn_memdup(rec->meta_len > 0 ? rec->meta : "", rec->meta_len > 0 ? rec->meta_len : 1);
    vs->meta_len = rec->meta_len;
    vs->ver = rec->ver;
    vs->ts = rec->ts;
    if (data != NULL)
        gw_blob_ref(data);
    vs->blob = data;
    gw_s3_versions_begin(r);
}

void gw_s3_versions_put(struct gw_req *r, const struct gw_store_record *rec,
                        struct gw_blob *data, gw_store_cb cb, void *arg)
{
    if (r->versioning == GW_VERSIONING_OFF || r->key == NULL) {
        gw_store_put(r->s3->store, rec, data, cb, arg);
        return;
    }
    gw_s3_versions_put_start(r, rec, data, cb, arg, NULL);
}

void gw_s3_versions_put_with(struct gw_req *r, const struct gw_store_record *rec,
                             struct gw_blob *data, gw_store_cb cb, gw_s3_versions_put_fn put)
{
    if (r->versioning == GW_VERSIONING_OFF || r->key == NULL) {
        put(r, rec, data, cb);
        return;
    }
    gw_s3_versions_put_start(r, rec, data, cb, r, put);
}

int gw_s3_versions_keeps_chunks(const struct gw_req *r)
{
    return r->versioning != GW_VERSIONING_OFF;
}

/* ---- DeleteObject ---------------------------------------------------- */

/* The end of a delete (r's hold already dropped): DeleteObject's answer,
 * 204 with the version's id and x-amz-delete-marker when it was (or wrote)
 * one, or the store's error; for a DeleteObjects entry, its callback. */
static void gw_s3_versions_delete_finish(struct gw_req *r, int rc, const char *err)
{
    struct gw_s3_versions *vs = r->vs;
    int marker = vs->is_marker || vs->removed_marker;
    if (vs->done != NULL) {
        vs->done(r, rc, err, vs->id, marker);
        return;
    }
    if (rc != CN_OK) {
        gw_s3_reply_store_error(r, rc, err);
        return;
    }
    memcpy(r->version_id, vs->id, sizeof(vs->id));
    r->delete_marker = marker;
    gw_req_reply_empty(r, 204);
}

/* The delete marker is written (or failed). */
static void gw_s3_versions_on_marker(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    gw_s3_versions_delete_finish(r, res->rc, res->err);
}

/* DELETE without a versionId in a versioned bucket: a delete marker. */
static void gw_s3_versions_delete_marker(struct gw_req *r)
{
    struct gw_s3_versions *vs = r->vs;
    vs->cb = gw_s3_versions_on_marker;
    vs->arg = r;
    vs->is_marker = 1;
    vs->etag = cn_memdup("", 1);
    vs->etag_len = 0;
    vs->ver = r->id;
    vs->ts = cn_hlc_now(cn_hlc_default());
    gw_req_hold(r);
    gw_s3_versions_begin(r);
}

/* The version is gone and the latest settled: its chunks go after the
 * reclaim delay (readers that began before still finish), then 204. */
static void gw_s3_versions_removed(struct gw_req *r)
{
    struct gw_s3_versions *vs = r->vs;
    if (vs->have_map)
        gw_lo_reclaim_segs(r->s3->reclaim, vs->okey, vs->okey_len, vs->map.segs,
                           vs->map.n_segs, r->s3->lo.reclaim_delay_ms, r->id);
    if (!gw_req_release(r))
        return;
    gw_s3_versions_delete_finish(r, CN_OK, "");
}

static void gw_s3_versions_remove_fail(struct gw_req *r, int rc, const char *err)
{
    if (!gw_req_release(r))
        return;
    gw_s3_versions_delete_finish(r, rc, err);
}

static void gw_s3_versions_on_promoted(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (res->rc != CN_OK && res->rc != CN_NOTFOUND) {
        /* the version is removed; "o/" still shows it until the next write */
        CN_LOGR(CN_LOG_WARN, r->id, "latest of a removed version not updated: %s", res->err);
    }
    gw_s3_versions_removed(r);
}

/* The previous version read whole: it becomes the "o/" record. */
static void gw_s3_versions_on_prev(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_versions *vs = r->vs;
    if (res->rc != CN_OK) {
        gw_s3_versions_on_promoted(res, r);
        return;
    }
    const struct msg *m = &res->reply->m;
    struct evbuffer *data = evbuffer_new();
    gw_storage_reply_move_payload(res->reply, data);
    struct gw_blob *blob = gw_blob_from_evbuffer(data);
    struct gw_store_record rec = {
        .key = vs->okey, .key_len = vs->okey_len,
        .ver = m->ver, .ts = cn_hlc_after(cn_hlc_default(), vs->o_ts),
    };
    gw_store_record_from_reply(&rec, m);
    gw_store_put(r->s3->store, &rec, blob, gw_s3_versions_on_promoted, r);
    gw_blob_unref(blob);
}

/* The newest remaining version: an object becomes the latest ("o/"), a
 * delete marker or nothing leaves "o/" deleted. */
static void gw_s3_versions_on_newest(struct gw_store_list_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_versions *vs = r->vs;
    if (res->rc != CN_OK) {
        CN_LOGR(CN_LOG_WARN, r->id, "cannot list the remaining versions: %s", res->err);
        gw_s3_versions_removed(r);
        return;
    }
    if (res->n_ents > 0 && res->ents[0].etag[0] != '\0') {
        gw_store_get(r->s3->store, res->ents[0].key, res->ents[0].key_len, 1, 0, 0,
                     gw_s3_versions_on_prev, r);
        return;
    }
    if (vs->target_is_latest_record) {   /* "o/" was the target: already deleted */
        gw_s3_versions_removed(r);
        return;
    }
    gw_store_delete(r->s3->store, vs->okey, vs->okey_len, r->id,
                    cn_hlc_after(cn_hlc_default(), vs->o_ts), gw_s3_versions_on_promoted, r);
}

static void gw_s3_versions_promote(struct gw_req *r)
{
    struct gw_s3_versions *vs = r->vs;
    gw_store_list(r->s3->store, vs->vprefix, vs->vprefix_len, NULL, 0, 1,
                  gw_s3_versions_on_newest, r);
}

/* "o/" after a version record was removed: if it held that version (or is
 * deleted: the removed one may have been the delete marker on top), the
 * newest remaining version takes its place. */
static void gw_s3_versions_on_latest_head(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_versions *vs = r->vs;
    char id[GW_VERSIONING_ID_MAX];
    if (res->rc == CN_OK) {
        vs->o_ts = res->reply->m.ts;
        if (gw_s3_versions_meta_id(&res->reply->m, id) && strcmp(id, vs->id) == 0) {
            gw_s3_versions_promote(r);
            return;
        }
        gw_s3_versions_removed(r);
        return;
    }
    if (res->rc == CN_NOTFOUND) {
        if (res->reply != NULL)
            vs->o_ts = CN_MAX(vs->o_ts, res->reply->m.ts);
        gw_s3_versions_promote(r);
        return;
    }
    CN_LOGR(CN_LOG_WARN, r->id, "cannot read the latest after a version removal: %s", res->err);
    gw_s3_versions_removed(r);
}

static void gw_s3_versions_on_target_deleted(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_versions *vs = r->vs;
    if (res->rc != CN_OK) {
        if (vs->have_map) {   /* the chunks stay: the version may still be there */
            gw_lo_map_fini(&vs->map);
            vs->have_map = 0;
        }
        gw_s3_versions_remove_fail(r, res->rc, res->err);
        return;
    }
    if (vs->target_is_latest_record) {
        gw_s3_versions_promote(r);
        return;
    }
    gw_store_head(r->s3->store, vs->okey, vs->okey_len, gw_s3_versions_on_latest_head, r);
}

/* The version's record read whole (its chunk map, if large): deleted. */
static void gw_s3_versions_on_target(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_versions *vs = r->vs;
    if (res->rc == CN_NOTFOUND) {   /* no such version: nothing to do, as S3 */
        gw_s3_versions_removed(r);
        return;
    }
    if (res->rc != CN_OK) {
        gw_s3_versions_remove_fail(r, res->rc, res->err);
        return;
    }
    const struct msg *m = &res->reply->m;
    char id[GW_VERSIONING_ID_MAX];
    int has_id = gw_s3_versions_meta_id(m, id);
    if (vs->target_is_latest_record && has_id && strcmp(id, "null") != 0) {
        gw_s3_versions_removed(r);   /* "o/" is another version: no null one */
        return;
    }
    vs->removed_marker = m->etag.len == 0;
    size_t tl;
    uint64_t size;
    if (gw_lo_map_reply_size(m, &tl, &size)) {
        if (gw_lo_map_decode(&vs->map, m->payload.ptr, m->payload.len) == CN_OK)
            vs->have_map = 1;
        else
            gw_lo_map_fini(&vs->map);
    }
    vs->o_ts = m->ts;
    const char *key = vs->target_is_latest_record ? vs->okey : vs->vkey;
    size_t n = vs->target_is_latest_record ? vs->okey_len : vs->vkey_len;
    vs->o_ts = cn_hlc_after(cn_hlc_default(), m->ts);
    gw_store_delete(r->s3->store, key, n, r->id, vs->o_ts, gw_s3_versions_on_target_deleted, r);
}

static void gw_s3_versions_read_target(struct gw_req *r)
{
    struct gw_s3_versions *vs = r->vs;
    const char *key = vs->target_is_latest_record ? vs->okey : vs->vkey;
    size_t n = vs->target_is_latest_record ? vs->okey_len : vs->vkey_len;
    gw_store_get(r->s3->store, key, n, 1, 0, 0, gw_s3_versions_on_target, r);
}

static void gw_s3_versions_delete_on_null(struct gw_req *r, int rc, const char *err)
{
    struct gw_s3_versions *vs = r->vs;
    if (rc != CN_OK) {
        gw_s3_versions_remove_fail(r, rc, err);
        return;
    }
    if (vs->found)
        vs->vkey_len = gw_versioning_key(vs->vkey, r->bucket, r->bucket_len, vs->key,
                                         vs->key_len, "null", vs->found_ts);
    else
        vs->target_is_latest_record = 1;   /* a null version only "o/" holds */
    gw_s3_versions_read_target(r);
}

/* Deletes r->vs's key: a delete marker (id NULL: the bucket has a
 * versioning state), or the version id[len] (checked: 4 or 32 bytes). */
static void gw_s3_versions_delete_start(struct gw_req *r, const char *id, size_t len)
{
    struct gw_s3_versions *vs = r->vs;
    if (id == NULL) {
        gw_s3_versions_delete_marker(r);
        return;
    }
    memcpy(vs->id, id, len);
    vs->id[len] = '\0';
    gw_req_hold(r);
    if (strcmp(vs->id, "null") == 0) {
        gw_s3_versions_find_null(r, gw_s3_versions_delete_on_null);
        return;
    }
    vs->vkey_len = gw_versioning_key(vs->vkey, r->bucket, r->bucket_len, vs->key, vs->key_len,
                                     vs->id, 0);
    gw_s3_versions_read_target(r);
}

void gw_s3_versions_delete(struct gw_req *r)
{
    const struct gw_req_param *p = gw_req_param(r, "versionId");
    gw_s3_versions_state_for(r, r->key, r->key_len);
    /* the router checked the id */
    gw_s3_versions_delete_start(r, p != NULL ? p->value : NULL, p != NULL ? p->value_len : 0);
}

void gw_s3_versions_delete_key(struct gw_req *r, const char *key, size_t key_len,
                               const char *id, size_t id_len, gw_s3_versions_done_cb done)
{
    struct gw_s3_versions *vs = gw_s3_versions_state_for(r, key, key_len);
    vs->done = done;
    gw_s3_versions_delete_start(r, id, id_len);
}

/* ---- GetObject / HeadObject ------------------------------------------ */

static void gw_s3_versions_get_on_null(struct gw_req *r, int rc, const char *err)
{
    struct gw_s3_versions *vs = r->vs;
    if (!gw_req_release(r))
        return;
    if (rc != CN_OK) {
        gw_s3_reply_store_error(r, rc, err);
        return;
    }
    if (vs->found) {
        vs->vkey_len = gw_versioning_key(vs->vkey, r->bucket, r->bucket_len, vs->key,
                                         vs->key_len, "null", vs->found_ts);
        vs->read(r, vs->vkey, vs->vkey_len);
        return;
    }
    vs->want_null = 1;
    vs->read(r, vs->okey, vs->okey_len);
}

void gw_s3_versions_get(struct gw_req *r, gw_s3_versions_read_cb read)
{
    const struct gw_req_param *p = gw_req_param(r, "versionId");
    CN_ASSERT(p != NULL);   /* checked by the router */
    gw_s3_versions_get_id(r, p->value, read);
}

void gw_s3_versions_get_id(struct gw_req *r, const char *id, gw_s3_versions_read_cb read)
{
    struct gw_s3_versions *vs = gw_s3_versions_state(r);
    CN_ASSERT(gw_versioning_id_check(id, strlen(id)) != 0);
    vs->read = read;
    vs->want_null = 0;
    snprintf(vs->id, sizeof(vs->id), "%s", id);
    if (strcmp(vs->id, "null") == 0) {
        gw_req_hold(r);
        gw_s3_versions_find_null(r, gw_s3_versions_get_on_null);
        return;
    }
    vs->vkey_len = gw_versioning_key(vs->vkey, r->bucket, r->bucket_len, vs->key, vs->key_len,
                                     vs->id, 0);
    read(r, vs->vkey, vs->vkey_len);
}

int gw_s3_versions_on_record(struct gw_req *r, const struct msg *m)
{
    char id[GW_VERSIONING_ID_MAX];
    int has_id = gw_s3_versions_meta_id(m, id);
    if (has_id)
        memcpy(r->version_id, id, sizeof(id));
    if (gw_req_param(r, "versionId") == NULL)
        return 0;
    struct gw_s3_versions *vs = gw_s3_versions_state(r);
    if (vs->want_null && has_id && strcmp(id, "null") != 0) {
        r->version_id[0] = '\0';
        gw_req_error(r, GW_S3_NO_SUCH_VERSION, NULL);
        return 1;
    }
    if (!has_id)
        memcpy(r->version_id, "null", 5);
    if (m->etag.len == 0) {   /* a delete marker: 405, as S3 */
        r->delete_marker = 1;
        char date[GW_HTTP_DATE_LEN];
        gw_http_date_format((time_t)(m->ts / 1000000), date);
        gw_req_error_header(r, GW_S3_METHOD_NOT_ALLOWED,
                            "The specified method is not allowed against this resource.",
                            "Last-Modified", date, strlen(date));
        return 1;
    }
    return 0;
}

static void gw_s3_versions_on_top(struct gw_store_list_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_versions *vs = r->vs;
    if (!gw_req_release(r))
        return;
    if (res->rc == CN_OK && res->n_ents > 0 && res->ents[0].etag[0] == '\0') {
        const char *key;
        size_t key_len;
        uint64_t ts;
        char id[GW_VERSIONING_ID_MAX];
        if (gw_versioning_key_split(res->ents[0].key, res->ents[0].key_len,
                                    vs->vprefix_len - vs->key_len - 1, &key, &key_len, id,
                                    &ts) == 0) {
            r->delete_marker = 1;
            memcpy(r->version_id, id, sizeof(id));
        }
    }
    gw_req_error(r, GW_S3_NO_SUCH_KEY, NULL);
}

int gw_s3_versions_not_found(struct gw_req *r)
{
    const struct gw_req_param *p = gw_req_param(r, "versionId");
    if (p != NULL && r->versioning == GW_VERSIONING_OFF && strcmp(p->value, "null") == 0)
        return 0;   /* never versioned: "null" is the object itself, NoSuchKey as before */
    if (p != NULL) {
        r->version_id[0] = '\0';
        gw_req_error(r, GW_S3_NO_SUCH_VERSION, NULL);
        return 1;
    }
    if (r->versioning == GW_VERSIONING_OFF)
        return 0;
    struct gw_s3_versions *vs = gw_s3_versions_state(r);
    gw_req_hold(r);
    gw_store_list(r->s3->store, vs->vprefix, vs->vprefix_len, NULL, 0, 1, gw_s3_versions_on_top,
                  r);
    return 1;
}

/* ---- ListObjectVersions ---------------------------------------------- */

/* Two sorted streams are merged by key: the version records ("v/") and the
 * latest records ("o/"). A key with version records has every version
 * there (its "o/" record is one of them or a tombstone), so its "o/" entry
 * is not listed itself; a key with none is an object written before
 * versioning: its "o/" record is its null version, and the latest.
 *
 * IsLatest follows "o/", the record a plain GET reads: the "o/" entry of a
 * key comes before its version records in the merge, and its ts is the
 * version time of the version it holds (later after a tag or ACL change or
 * a promotion, never earlier). The latest is the newest version whose
 * version time is not after that ts; a newer one is a version record whose
 * "o/" write never happened (a gateway stopped between the two) or lost to
 * a newer "o/": it is listed as noncurrent. A key without "o/" (a
 * tombstone) has its newest delete marker as the latest, and no latest if
 * it has none (an interrupted first write of the key: GET says NoSuchKey).
 * The version found must have the etag of "o/" (a copy of it): else "o/"
 * holds a version that has no record (a conditional write writes "o/"
 * first; a version removal stopped before its promotion) and none is.
 * docs/gateway.md "Versioning", "Which version is current". */
struct gw_s3_versions_ent {
    char *key;                   /* the storage key */
    uint32_t key_len;
    char etag[129];
    uint64_t size, ts;
    int has_osize;               /* the record's osize (lo_map.h) */
    uint64_t osize;
};

struct gw_s3_versions_stream {
    char prefix[GW_VERSIONING_KEY_MAX];    /* "v/" or "o/" bucket "/" prefix */
    size_t prefix_len, base_len;           /* base: "v/" bucket "/" */
    char after[GW_VERSIONING_KEY_MAX + 1];
    size_t after_len;
    struct gw_s3_versions_ent *ents;       /* the page at hand (≤ 1000, copied) */
    uint32_t n, idx;
    int more;
};

/* One entry of the answer: a version, a delete marker or a common prefix.
 * Memory: at most max-keys (≤ s3.max_keys, 1000) items of ≤ 1.2 KiB, plus
 * one page of each stream (≤ 1000 entries of ≤ 1.2 KiB): ≤ ~3.6 MiB. */
struct gw_s3_versions_item {
    char *key;
    size_t key_len;
    char id[GW_VERSIONING_ID_MAX];
    char etag[129];
    uint64_t ts, size;
    int latest, marker, is_prefix;
};

struct gw_s3_versions_list {
    struct gw_hstate hs;                   /* r->state (request.h) */
    struct gw_s3_versions_stream v, o;
    const struct gw_req_param *prefix, *delim, *key_marker, *vid_marker;
    uint32_t max_keys, n;
    int url, truncated, skip_to_null;
    int bad_marker;                        /* a version-id-marker that is no id */
    int o_marker;                          /* "o/" starts at the marker key: not listed */
    int resume;                            /* the page starts inside a key... */
    uint64_t resume_ts;                    /* ... after the version of this time */
    char o_key[1025];                      /* the last "o/" entry that had versions */
    size_t o_key_len;
    uint64_t o_ts;                         /* its ts */
    char o_etag[129];                      /* its etag field */
    int have_o;
    int cur_has_o, cur_found;              /* last_key: has "o/"; its latest was listed */
    char last_key[1025];                   /* the key of the last version seen */
    size_t last_key_len;
    int have_last;
    struct gw_s3_versions_item *items;
};

static void gw_s3_versions_stream_clear(struct gw_s3_versions_stream *s)
{
    for (uint32_t i = 0; i < s->n; i++)
        cn_free(s->ents[i].key);
    cn_free(s->ents);
    s->ents = NULL;
    s->n = s->idx = 0;
}

static void gw_s3_versions_list_free(struct gw_hstate *hs);
static const struct gw_hstate_type gw_s3_versions_list_hstate = {"gw_s3_versions_list",
                                                                  gw_s3_versions_list_free};

static void gw_s3_versions_list_free(struct gw_hstate *hs)
{
    struct gw_s3_versions_list *l = GW_HSTATE(hs, gw_s3_versions_list);
    for (uint32_t i = 0; i < l->n; i++)
        cn_free(l->items[i].key);
    cn_free(l->items);
    gw_s3_versions_stream_clear(&l->v);
    gw_s3_versions_stream_clear(&l->o);
    cn_free(l);
}

static void gw_s3_versions_list_text(struct gw_s3_versions_list *l, struct gw_xml_writer *w,
                                     const char *name, const char *s, size_t len)
{
    gw_s3_list_text_elem(w, l->url, name, s, len);
}

static void gw_s3_versions_list_param(struct gw_s3_versions_list *l, struct gw_xml_writer *w,
                                      const char *name, const struct gw_req_param *p,
                                      int always)
{
    gw_s3_list_param_echo(w, l->url, name, p, always);
}

static void gw_s3_versions_list_entry(struct gw_req *r, struct gw_s3_versions_list *l,
                                      struct gw_xml_writer *w,
                                      const struct gw_s3_versions_item *it)
{
    gw_xml_open(w, it->marker ? "DeleteMarker" : "Version");
    gw_s3_versions_list_text(l, w, "Key", it->key, it->key_len);
    gw_xml_elem_str(w, "VersionId", it->id);
    gw_xml_elem_bool(w, "IsLatest", it->latest);
    gw_xml_elem_time_ms(w, "LastModified", (int64_t)(it->ts / 1000));
    if (!it->marker) {
        char q[140];
        snprintf(q, sizeof(q), "\"%s\"", it->etag);
        gw_xml_elem_str(w, "ETag", q);
        gw_xml_elem_u64(w, "Size", it->size);
        gw_xml_elem_str(w, "StorageClass", "STANDARD");
    }
    gw_xml_open(w, "Owner");
    gw_xml_elem_str(w, "ID", r->auth.cred->owner_id);
    gw_xml_elem_str(w, "DisplayName", r->auth.cred->display_name);
    gw_xml_close(w);
    gw_xml_close(w);
}

static void gw_s3_versions_list_reply(struct gw_req *r)
{
    struct gw_s3_versions_list *l = GW_REQ_STATE(r, gw_s3_versions_list);
    struct evbuffer *doc = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    gw_xml_open_ns(&w, "ListVersionsResult", GW_XML_S3_NS);
    gw_xml_elem(&w, "Name", r->bucket, r->bucket_len);
    gw_s3_versions_list_param(l, &w, "Prefix", l->prefix, 1);
    gw_s3_versions_list_param(l, &w, "KeyMarker", l->key_marker, 1);
    gw_s3_versions_list_param(l, &w, "VersionIdMarker", l->vid_marker, 1);
    gw_xml_elem_u64(&w, "MaxKeys", l->max_keys);
    gw_s3_versions_list_param(l, &w, "Delimiter", l->delim, 0);
    if (l->url)
        gw_xml_elem_str(&w, "EncodingType", "url");
    gw_xml_elem_bool(&w, "IsTruncated", l->truncated);
    if (l->truncated && l->n > 0) {
        const struct gw_s3_versions_item *last = &l->items[l->n - 1];
        gw_s3_versions_list_text(l, &w, "NextKeyMarker", last->key, last->key_len);
        if (!last->is_prefix)
            gw_xml_elem_str(&w, "NextVersionIdMarker", last->id);
    }
    for (uint32_t i = 0; i < l->n; i++)
        if (!l->items[i].is_prefix)
            gw_s3_versions_list_entry(r, l, &w, &l->items[i]);
    for (uint32_t i = 0; i < l->n; i++) {
        if (!l->items[i].is_prefix)
            continue;
        gw_xml_open(&w, "CommonPrefixes");
        gw_s3_versions_list_text(l, &w, "Prefix", l->items[i].key, l->items[i].key_len);
        gw_xml_close(&w);
    }
    gw_xml_close(&w);
    if (gw_xml_writer_finish(&w) != CN_OK || (w.replaced && !l->url))
        gw_req_error(r, w.replaced ? GW_S3_INVALID_ARGUMENT : GW_S3_INTERNAL_ERROR,
                     w.replaced ? "A key cannot be listed in XML 1.0; use encoding-type=url."
                                : NULL);
    else
        gw_req_reply_xml(r, 200, doc);
    evbuffer_free(doc);
}

/* The first occurrence of needle[nlen] (nlen > 0) in hay[hlen], or NULL. */
static const char *gw_s3_versions_find(const char *hay, size_t hlen, const char *needle,
                                       size_t nlen)
{
    for (size_t i = 0; i + nlen <= hlen; i++)
        if (memcmp(hay + i, needle, nlen) == 0)
            return hay + i;
    return NULL;
}

/* Restarts a stream just past every key that begins with key[len] (a
 * common prefix): after = base + key + 0xFF. */
static void gw_s3_versions_stream_skip(struct gw_s3_versions_stream *s, const char *key,
                                       size_t len)
{
    gw_s3_versions_stream_clear(s);
    memcpy(s->after, s->prefix, s->base_len);
    memcpy(s->after + s->base_len, key, len);
    s->after_len = s->base_len + len;
    s->after[s->after_len++] = (char)0xff;
    s->more = 1;
}

/* Adds one version (or its common prefix) of key: id, ts, etag field, osize
 * and record size as stored. Returns 1 to go on, 0 when the answer is full
 * (truncated), 2 when a common prefix was added (both streams then restart
 * past it). */
static int gw_s3_versions_list_add(struct gw_s3_versions_list *l, const char *key,
                                   size_t key_len, const char *id, uint64_t ts,
                                   const char *etag, int has_osize, uint64_t osize,
                                   uint64_t rec_size, int latest)
{
    size_t plen = l->v.prefix_len - l->v.base_len;
    size_t cut = 0;
    if (l->delim != NULL && l->delim->value_len > 0 && key_len > plen) {
        const char *d = gw_s3_versions_find(key + plen, key_len - plen, l->delim->value,
                                            l->delim->value_len);
        if (d != NULL)
            cut = (size_t)(d - key) + l->delim->value_len;
    }
    if (l->n == l->max_keys) {
        l->truncated = 1;
        return 0;
    }
    struct gw_s3_versions_item *it = &l->items[l->n++];
    it->key_len = cut > 0 ? cut : key_len;
    it->key = cn_memdup(key, it->key_len);
    if (cut > 0) {
        it->is_prefix = 1;
        /* it->key: key may point into a stream page the skip frees */
        gw_s3_versions_stream_skip(&l->v, it->key, cut);
        gw_s3_versions_stream_skip(&l->o, it->key, cut);
        return 2;
    }
    snprintf(it->id, sizeof(it->id), "%s", id);
    it->ts = ts;
    it->latest = latest;
    it->marker = etag[0] == '\0';
    size_t tl;
    uint64_t size;
    if (gw_lo_map_record_size(etag, strlen(etag), has_osize, osize, &tl, &size)) {
        it->size = size;
        snprintf(it->etag, sizeof(it->etag), "%.*s", (int)tl, etag);
    } else {
        it->size = rec_size;
        snprintf(it->etag, sizeof(it->etag), "%s", etag);
    }
    return 1;
}

/* Is the version (key, version time ts, marker: a delete marker) the
 * latest of its key? Versions come newest first, after their key's "o/"
 * entry if it has one (the rule: the comment above the structures). */
static int gw_s3_versions_is_latest(struct gw_s3_versions_list *l, const char *key,
                                    size_t key_len, uint64_t ts, const char *etag)
{
    int marker = etag[0] == '\0';
    if (!(l->have_last && l->last_key_len == key_len &&
          memcmp(l->last_key, key, key_len) == 0)) {   /* the key's first */
        memcpy(l->last_key, key, key_len);
        l->last_key_len = key_len;
        l->have_last = 1;
        l->cur_has_o = l->have_o && l->o_key_len == key_len &&
                       memcmp(l->o_key, key, key_len) == 0;
        l->cur_found = 0;
        int resume = l->resume && l->key_marker->value_len == key_len &&
                     memcmp(l->key_marker->value, key, key_len) == 0;
        l->resume = 0;     /* only the marker key's versions follow its marker */
        if (resume) {
            /* the latest was on an earlier page if the marker's version
             * (older than every one listed there) could be; a key without
             * "o/" is taken as settled there (its delete marker: its
             * newest, unless a write was interrupted on top of it) */
            l->cur_found = !l->cur_has_o || l->resume_ts <= l->o_ts;
        }
    }
    if (l->cur_found)
        return 0;
    if (l->cur_has_o ? ts <= l->o_ts : marker) {
        l->cur_found = 1;   /* settled: the latest, or (another etag) none is */
        return !l->cur_has_o || strcmp(etag, l->o_etag) == 0;
    }
    return 0;
}

static void gw_s3_versions_list_drive(struct gw_req *r);

static void gw_s3_versions_on_stream(struct gw_store_list_result *res, void *arg,
                                     struct gw_s3_versions_stream *s)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    gw_s3_versions_stream_clear(s);
    s->ents = cn_calloc(res->n_ents > 0 ? res->n_ents : 1, sizeof(*s->ents));
    for (uint32_t i = 0; i < res->n_ents; i++) {
        const struct gw_store_entry *e = &res->ents[i];
        struct gw_s3_versions_ent *d = &s->ents[i];
        d->key = cn_memdup(e->key, e->key_len);
        d->key_len = e->key_len;
        memcpy(d->etag, e->etag, sizeof(d->etag));
        d->has_osize = e->has_osize;
        d->osize = e->osize;
        d->size = e->size;
        d->ts = e->ts;
    }
    s->n = res->n_ents;
    s->more = res->more && res->n_ents > 0;
    if (s->n > 0) {
        const struct gw_s3_versions_ent *last = &s->ents[s->n - 1];
        s->after_len = CN_MIN((size_t)last->key_len, sizeof(s->after));
        memcpy(s->after, last->key, s->after_len);
    }
    gw_s3_versions_list_drive(r);
}

static void gw_s3_versions_on_v(struct gw_store_list_result *res, void *arg)
{
    struct gw_req *r = arg;
    gw_s3_versions_on_stream(res, arg, &GW_REQ_STATE(r, gw_s3_versions_list)->v);
}

static void gw_s3_versions_on_o(struct gw_store_list_result *res, void *arg)
{
    struct gw_req *r = arg;
    gw_s3_versions_on_stream(res, arg, &GW_REQ_STATE(r, gw_s3_versions_list)->o);
}

static void gw_s3_versions_stream_fetch(struct gw_req *r, struct gw_s3_versions_stream *s,
                                        gw_store_list_cb cb)
{
    struct gw_s3_versions_list *l = GW_REQ_STATE(r, gw_s3_versions_list);
    gw_req_hold(r);
    gw_store_list(r->s3->store, s->prefix, s->prefix_len, s->after_len ? s->after : NULL,
                  s->after_len, CN_MIN(l->max_keys - l->n + 1, 1000u), cb, r);
}

/* Emits entries from the two streams in key order until the answer is
 * full or both ended; fetches a stream's next page when its buffer runs
 * out (and comes back from the callback). */
static void gw_s3_versions_list_drive(struct gw_req *r)
{
    struct gw_s3_versions_list *l = GW_REQ_STATE(r, gw_s3_versions_list);
    for (;;) {
        if (l->v.idx == l->v.n && l->v.more) {
            gw_s3_versions_stream_fetch(r, &l->v, gw_s3_versions_on_v);
            return;
        }
        if (l->o.idx == l->o.n && l->o.more) {
            gw_s3_versions_stream_fetch(r, &l->o, gw_s3_versions_on_o);
            return;
        }
        const struct gw_s3_versions_ent *ve = l->v.idx < l->v.n ? &l->v.ents[l->v.idx] : NULL;
        const struct gw_s3_versions_ent *oe = l->o.idx < l->o.n ? &l->o.ents[l->o.idx] : NULL;
        if (ve == NULL && oe == NULL) {
            gw_s3_versions_list_reply(r);
            return;
        }
        const char *vk = NULL;
        size_t vk_len = 0;
        char id[GW_VERSIONING_ID_MAX];
        uint64_t ts = 0;
        if (ve != NULL && gw_versioning_key_split(ve->key, ve->key_len, l->v.base_len, &vk,
                                                  &vk_len, id, &ts) != 0) {
            l->v.idx++;   /* not a version key: never written by a gateway */
            continue;
        }
        int cmp = 1;    /* > 0: the "o/" entry comes first */
        if (ve != NULL && oe != NULL) {
            const char *ok = oe->key + l->o.base_len;
            size_t ok_len = oe->key_len - l->o.base_len;
            int c = memcmp(ok, vk, CN_MIN(ok_len, vk_len));
            cmp = c != 0 ? -c : (ok_len == vk_len ? 0 : (ok_len < vk_len ? 1 : -1));
        } else if (oe == NULL) {
            cmp = -1;
        }
        int go;
        if (cmp == 0) {          /* the key's versions are all under "v/"; "o/" says
                                  * which one is the latest */
            l->o_key_len = CN_MIN((size_t)(oe->key_len - l->o.base_len), sizeof(l->o_key));
            memcpy(l->o_key, oe->key + l->o.base_len, l->o_key_len);
            l->o_ts = oe->ts;
            memcpy(l->o_etag, oe->etag, sizeof(l->o_etag));
            l->have_o = 1;
            l->o.idx++;
            continue;
        }
        if (cmp < 0) {           /* a version record */
            l->v.idx++;
            int latest = gw_s3_versions_is_latest(l, vk, vk_len, ts, ve->etag);
            if (l->skip_to_null) {   /* version-id-marker null: resume after it */
                const struct gw_req_param *km = l->key_marker;
                if (vk_len == km->value_len && memcmp(vk, km->value, vk_len) == 0) {
                    l->skip_to_null = strcmp(id, "null") != 0;
                    continue;
                }
                l->skip_to_null = 0;
            }
            go = gw_s3_versions_list_add(l, vk, vk_len, id, ts, ve->etag, ve->has_osize,
                                         ve->osize, ve->size, latest);
        } else if (l->o_marker && oe->key_len - l->o.base_len == l->key_marker->value_len &&
                   memcmp(oe->key + l->o.base_len, l->key_marker->value,
                          l->key_marker->value_len) == 0) {
            l->o.idx++;          /* the marker key's "o/": listed on an earlier page */
            continue;
        } else {                 /* an object from before versioning: its null version */
            l->o.idx++;
            const char *ok = oe->key + l->o.base_len;
            size_t ok_len = oe->key_len - l->o.base_len;
            memcpy(l->last_key, ok, ok_len);
            l->last_key_len = ok_len;
            l->have_last = 1;
            l->cur_found = 1;
            go = gw_s3_versions_list_add(l, ok, ok_len, "null", oe->ts, oe->etag, oe->has_osize,
                                         oe->osize, oe->size, 1);
        }
        if (go == 0) {
            gw_s3_versions_list_reply(r);
            return;
        }
    }
}

static void gw_s3_versions_list_bucket_ok(struct gw_req *r)
{
    if (r->versioning == GW_VERSIONING_OFF) {   /* never versioned: ListObjects' answer */
        gw_req_state_drop(r);
        gw_s3_list_objects(r);
        return;
    }
    struct gw_s3_versions_list *l = GW_REQ_STATE(r, gw_s3_versions_list);
    if (l->bad_marker) {
        gw_req_error(r, GW_S3_INVALID_ARGUMENT, "Invalid version id specified");
        return;
    }
    if (l->max_keys == 0) {
        gw_s3_versions_list_reply(r);
        return;
    }
    gw_s3_versions_list_drive(r);
}

/* A stream over "v/" or "o/" (ns) of r's bucket and the listing's prefix. */
static void gw_s3_versions_stream_init(struct gw_req *r, struct gw_s3_versions_list *l,
                                       struct gw_s3_versions_stream *s, char ns)
{
    s->base_len = ns == 'v' ? gw_versioning_bucket_prefix(s->prefix, r->bucket, r->bucket_len)
                            : gw_keys_object_prefix(s->prefix, r->bucket, r->bucket_len);
    s->prefix_len = s->base_len;
    if (l->prefix != NULL) {
        memcpy(s->prefix + s->base_len, l->prefix->value, l->prefix->value_len);
        s->prefix_len += l->prefix->value_len;
    }
    s->more = 1;
}

/* The starting points of both streams after key-marker (and
 * version-id-marker). */
static void gw_s3_versions_list_markers(struct gw_s3_versions_list *l,
                                        const struct gw_s3_list_params *p, int has_vm)
{
    const struct gw_req_param *km = l->key_marker;
    int is_cp = gw_s3_list_params_marker_is_prefix(p);
    struct gw_s3_versions_stream *v = &l->v, *o = &l->o;
    memcpy(v->after, v->prefix, v->base_len);
    memcpy(v->after + v->base_len, km->value, km->value_len);
    v->after_len = v->base_len + km->value_len;
    memcpy(o->after, o->prefix, o->base_len);
    memcpy(o->after + o->base_len, km->value, km->value_len);
    o->after_len = o->base_len + km->value_len;   /* the marker's own "o/" entry is done */
    if (is_cp) {
        v->after[v->after_len++] = (char)0xff;
        o->after[o->after_len++] = (char)0xff;
        return;
    }
    v->after[v->after_len++] = '\0';
    if (!has_vm) {   /* past every version of the marker's key */
        v->after[v->after_len++] = (char)0xff;
        return;
    }
    /* the marker key's "o/" is read again (it says which of the key's
     * versions is the latest), not listed: "o/" starts just before the
     * marker key, the last byte one less and 0xFF after it (no key holds
     * 0xFF, not UTF-8, nor NUL, so nothing lies between); a marker that
     * ends in NUL is no key: its "o/" is not looked for */
    if (km->value_len > 0 && km->value[km->value_len - 1] != '\0') {
        o->after[o->after_len - 1] = (char)((unsigned char)o->after[o->after_len - 1] - 1);
        o->after[o->after_len++] = (char)0xff;
        l->o_marker = 1;
    }
    if (strcmp(l->vid_marker->value, "null") == 0) {
        l->skip_to_null = 1;   /* its key is not known: read from the key's first */
    } else {
        memcpy(v->after + v->after_len, l->vid_marker->value, GW_VERSIONING_ID_LEN);
        v->after_len += GW_VERSIONING_ID_LEN;
        l->resume = 1;
        l->resume_ts = gw_versioning_id_ts(l->vid_marker->value);
    }
}

/* Reads the query; GW_S3_OK or the error to answer. */
static enum gw_s3_err gw_s3_versions_list_parse(struct gw_req *r, struct gw_s3_versions_list *l)
{
    struct gw_s3_list_params p;
    enum gw_s3_err err = gw_s3_list_params_parse(r, "key-marker", 1024, &p);
    if (err != GW_S3_OK)
        return err;
    l->url = p.url;
    l->prefix = p.prefix;
    l->delim = p.delim;
    l->key_marker = p.marker;
    l->max_keys = p.max_keys;
    l->vid_marker = gw_req_param(r, "version-id-marker");
    int has_km = l->key_marker != NULL && l->key_marker->value_len > 0;
    int has_vm = l->vid_marker != NULL && l->vid_marker->value_len > 0;
    if (has_vm && !has_km)
        return GW_S3_INVALID_ARGUMENT;   /* S3: no version-id marker without a key marker */
    /* a marker that is no id: refused once the bucket is known to be
     * versioned (a never versioned one lists as ListObjects always did) */
    l->bad_marker = has_vm && gw_versioning_id_check(l->vid_marker->value,
                                                     l->vid_marker->value_len) == 0;
    gw_s3_versions_stream_init(r, l, &l->v, 'v');
    gw_s3_versions_stream_init(r, l, &l->o, 'o');
    if (has_km && !l->bad_marker)
        gw_s3_versions_list_markers(l, &p, has_vm);
    l->items = cn_calloc(l->max_keys + 1, sizeof(*l->items));
    return GW_S3_OK;
}

void gw_s3_versions_list(struct gw_req *r)
{
    struct gw_s3_versions_list *l = cn_calloc(1, sizeof(*l));
    gw_req_state_set(r, &l->hs, &gw_s3_versions_list_hstate);
    enum gw_s3_err err = gw_s3_versions_list_parse(r, l);
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    gw_s3_bucket_require(r, gw_s3_versions_list_bucket_ok);
}

/* ---- CopyObject's source version ------------------------------------- */

static void gw_s3_versions_src_on_null(struct gw_req *r, int rc, const char *err)
{
    struct gw_s3_versions *vs = r->vs;
    if (!gw_req_release(r))
        return;
    if (rc != CN_OK) {
        gw_s3_reply_store_error(r, rc, err);
        return;
    }
    const struct gw_copy_source *cs = &r->copy_src;
    char key[GW_VERSIONING_KEY_MAX];
    size_t n;
    if (vs->found) {
        n = gw_versioning_key(key, cs->bucket, cs->bucket_len, cs->key, cs->key_len, "null",
                              vs->found_ts);
    } else {
        vs->want_null = 1;
        n = gw_keys_object(key, cs->bucket, cs->bucket_len, cs->key, cs->key_len);
    }
    vs->read(r, key, n);
}

void gw_s3_versions_copy_source(struct gw_req *r, gw_s3_versions_read_cb read)
{
    const struct gw_copy_source *cs = &r->copy_src;
    CN_ASSERT(r->has_copy_src && cs->version_id != NULL);
    struct gw_s3_versions *vs = gw_s3_versions_state(r);
    vs->read = read;
    vs->want_null = 0;
    char key[GW_VERSIONING_KEY_MAX];
    if (strcmp(cs->version_id, "null") != 0) {
        size_t n = gw_versioning_key(key, cs->bucket, cs->bucket_len, cs->key, cs->key_len,
                                     cs->version_id, 0);
        read(r, key, n);
        return;
    }
    vs->scan_prefix_len = gw_versioning_key_prefix(vs->scan_prefix, cs->bucket, cs->bucket_len,
                                                   cs->key, cs->key_len);
    vs->scan_base_len = vs->scan_prefix_len - cs->key_len - 1;
    vs->found = 0;
    vs->after_len = 0;
    vs->scan_done = gw_s3_versions_src_on_null;
    gw_req_hold(r);
    gw_s3_versions_scan_page(r);
}

int gw_s3_versions_on_copy_record(struct gw_req *r, const struct msg *m)
{
    char id[GW_VERSIONING_ID_MAX];
    int has_id = gw_s3_versions_meta_id(m, id);
    const struct gw_copy_source *cs = &r->copy_src;
    if (cs->version_id == NULL) {
        if (has_id)
            memcpy(r->copy_source_version_id, id, sizeof(id));
        return 0;
    }
    struct gw_s3_versions *vs = gw_s3_versions_state(r);
    if (vs->want_null && has_id && strcmp(id, "null") != 0) {
        gw_req_error(r, GW_S3_NO_SUCH_VERSION, NULL);
        return 1;
    }
    if (m->etag.len == 0) {
        gw_req_error(r, GW_S3_INVALID_REQUEST, "The source of a copy request may not "
                     "specifically refer to a delete marker by version id.");
        return 1;
    }
    memcpy(r->copy_source_version_id, has_id ? id : "null", has_id ? sizeof(id) : 5);
    return 0;
}

/* ---- the IAM actions of version requests ----------------------------- */

const char *gw_s3_versions_action(const struct gw_req *r)
{
    const char *action = gw_s3_op_action(r->op);
    if (r->key == NULL || gw_req_param(r, "versionId") == NULL)
        return action;
    if (strcmp(action, "s3:GetObject") == 0)
        return "s3:GetObjectVersion";
    if (strcmp(action, "s3:DeleteObject") == 0)
        return "s3:DeleteObjectVersion";
    if (strcmp(action, "s3:GetObjectTagging") == 0)
        return "s3:GetObjectVersionTagging";
    if (strcmp(action, "s3:PutObjectTagging") == 0)
        return "s3:PutObjectVersionTagging";
    if (strcmp(action, "s3:DeleteObjectTagging") == 0)
        return "s3:DeleteObjectVersionTagging";
    if (strcmp(action, "s3:GetObjectAcl") == 0)
        return "s3:GetObjectVersionAcl";
    if (strcmp(action, "s3:PutObjectAcl") == 0)
        return "s3:PutObjectVersionAcl";
    return action;
}

const char *gw_s3_versions_source_action(const struct gw_req *r)
{
    return r->has_copy_src && r->copy_src.version_id != NULL ? "s3:GetObjectVersion"
                                                             : "s3:GetObject";
}
