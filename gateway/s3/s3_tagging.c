/* Object tagging handlers (see s3_tagging.h).
 *
 * A tagging write (PUT or DELETE ?tagging) reads the object's current record
 * whole (a small object's bytes, or a large object's chunk map) and writes it
 * back with the same etag field and data and the meta's GW_OBJMETA_TAGS entry
 * replaced. The rewrite's version is (ts + 1 of the record it read, this
 * request's id): newer than that record, so it replaces it, but older than
 * any overwrite or delete that came after the read (those take the wall
 * clock, which is past the read record's ts), so a concurrent PutObject or
 * DeleteObject is never undone by a tagging write based on what it
 * replaced. As S3, the tagging write leaves Last-Modified alone (the +1 us
 * does not show at a second's precision). Chunk keys carry their writer's
 * version (lo_map.h), so the rewritten parent still names the same chunks;
 * nothing is reclaimed. */
#include "s3_tagging.h"

#include <string.h>

#include "bucket_owner.h"
#include "keys.h"
#include "objmeta.h"
#include "s3_body.h"
#include "s3_bucket.h"
#include "s3_reply.h"
#include "s3_versions.h"
#include "store.h"
#include "tagset.h"
#include "versioning.h"
#include "xml.h"

#include "cn/alloc.h"
#include "cn/log.h"

/* One tagging request's state (r->state). */
struct gw_s3_tagging {
    struct gw_hstate hs;
    struct gw_tagset *set;      /* GET: the stored tags; PUT: the body's */
    int remove;                 /* DELETE: the tags go */
    char *enc;                  /* PUT: the new tags encoded; NULL: none */
    size_t enc_len;
    char skey[GW_KEYS_MAX];
    size_t skey_len;
    char rkey[GW_VERSIONING_KEY_MAX]; /* the record rewritten: skey or a version's */
    size_t rkey_len;
    int twin;                   /* versioned: now rewriting the other copy of the version */
    char vid[GW_VERSIONING_ID_MAX]; /* the version rewritten first ("": none) */
    char *etag;                 /* the rewritten record's etag field, */
    char *meta;                 /* meta */
    size_t meta_len;
    struct gw_blob *blob;       /* and data, as read */
};

static void gw_s3_tagging_free(struct gw_hstate *hs);
static const struct gw_hstate_type gw_s3_tagging_hstate = {"gw_s3_tagging", gw_s3_tagging_free};

static void gw_s3_tagging_free(struct gw_hstate *hs)
{
    struct gw_s3_tagging *t = GW_HSTATE(hs, gw_s3_tagging);
    gw_tagset_free(t->set);
    cn_free(t->enc);
    cn_free(t->etag);
    cn_free(t->meta);
    gw_blob_unref(t->blob);
    cn_free(t);
}

static struct gw_s3_tagging *gw_s3_tagging_state(struct gw_req *r)
{
    struct gw_s3_tagging *t = cn_calloc(1, sizeof(*t));
    t->set = gw_tagset_new(GW_TAGSET_MAX);
    t->skey_len = gw_keys_object(t->skey, r->bucket, r->bucket_len, r->key, r->key_len);
    gw_req_state_set(r, &t->hs, &gw_s3_tagging_hstate);
    return t;
}

static void gw_s3_tagging_no_such_key(struct gw_req *r)
{
    enum gw_s3_err err = gw_bucket_owner_missing_key(r);   /* 403 to who may not list */
    if (err == GW_S3_NO_SUCH_KEY && gw_s3_versions_not_found(r))
        return; /* NoSuchVersion, or NoSuchKey under a delete marker */
    gw_req_error(r, err, NULL);
}

/* The common answer of a record read that found nothing or failed: 1 when
 * it answered (NoSuchBucket or NoSuchKey, or the store's error). */
static int gw_s3_tagging_read_failed(struct gw_req *r, const struct gw_store_result *res)
{
    if (res->rc == CN_NOTFOUND) {
        gw_s3_bucket_require(r, gw_s3_tagging_no_such_key);
        return 1;
    }
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return 1;
    }
    return 0;
}

/* Decodes the tags stored in meta into set (empty when none). CN_OK, or
 * CN_CORRUPT when the stored entry does not parse. */
static int gw_s3_tagging_stored(const void *meta, size_t len, struct gw_tagset *set)
{
    struct gw_objmeta om;
    set->n = 0;
    if (gw_objmeta_decode(&om, meta, len) != CN_OK)
        return CN_OK; /* GET answers such an object without its headers too */
    const struct gw_objmeta_header *h = gw_objmeta_find(&om, GW_OBJMETA_TAGS);
    const char *why;
    if (h != NULL && gw_tagset_parse_query(set, h->value, h->value_len, &why) != GW_S3_OK)
        return CN_CORRUPT;
    return CN_OK;
}

/* ---- GetObjectTagging ------------------------------------------------- */

static void gw_s3_tagging_get_read(struct gw_req *r);

static void gw_s3_tagging_on_head(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    struct gw_s3_tagging *t = GW_REQ_STATE(r, gw_s3_tagging);
    if (gw_s3_tagging_read_failed(r, res))
        return;
    const struct msg *m = &res->reply->m;
    if (gw_bucket_owner_recheck(r, r->bucket, r->bucket_len, m->ts, gw_s3_tagging_get_read))
        return; /* the object is newer than the cached owner: asked again */
    if (gw_s3_versions_on_record(r, m))
        return; /* a delete marker, or not the null version asked for */
    if (gw_s3_tagging_stored(m->meta.ptr, m->meta.len, t->set) != CN_OK) {
        CN_LOGR(CN_LOG_ERROR, r->id, "stored tags of %.*s do not parse", (int)t->skey_len - 2,
                t->skey + 2);
        gw_req_error(r, GW_S3_INTERNAL_ERROR, "The object's stored tags are damaged.");
        return;
    }
    struct evbuffer *doc = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    gw_tagset_write_xml(t->set, &w);
    if (gw_xml_writer_finish(&w) != CN_OK)
        gw_req_error(r, GW_S3_INTERNAL_ERROR, NULL);
    else
        gw_req_reply_xml(r, 200, doc);
    evbuffer_free(doc);
}

/* Reads the record at key: the object's, or a version's (s3_versions.h). */
static void gw_s3_tagging_get_from(struct gw_req *r, const char *key, size_t key_len)
{
    gw_req_hold(r);
    gw_store_head(r->s3->store, key, key_len, gw_s3_tagging_on_head, r);
}

static void gw_s3_tagging_get_read(struct gw_req *r)
{
    struct gw_s3_tagging *t = GW_REQ_STATE(r, gw_s3_tagging);
    if (gw_req_param(r, "versionId") != NULL) {
        gw_s3_versions_get(r, gw_s3_tagging_get_from);
        return;
    }
    gw_s3_tagging_get_from(r, t->skey, t->skey_len);
}

void gw_s3_tagging_get(struct gw_req *r)
{
    gw_s3_tagging_state(r);
    gw_s3_tagging_get_read(r);
}

/* ---- the record rewrite of PUT and DELETE ----------------------------- */

static void gw_s3_tagging_rewrite_from(struct gw_req *r, const char *key, size_t key_len);

static void gw_s3_tagging_done(struct gw_req *r)
{
    struct gw_s3_tagging *t = GW_REQ_STATE(r, gw_s3_tagging);
    gw_req_reply_empty(r, t->remove ? 204 : 200);
}

/* The other copy of the version just rewritten (s3_versions.h): the
 * version record when "o/" was rewritten, "o/" when it holds the version
 * whose record was; NULL key or the same key: none. */
static void gw_s3_tagging_twin_from(struct gw_req *r, const char *key, size_t key_len)
{
    struct gw_s3_tagging *t = GW_REQ_STATE(r, gw_s3_tagging);
    if (key_len == t->rkey_len && memcmp(key, t->rkey, key_len) == 0) {
        gw_s3_tagging_done(r);   /* a null version kept only as "o/" */
        return;
    }
    t->twin = 1;
    cn_free(t->etag);
    cn_free(t->meta);
    gw_blob_unref(t->blob);
    t->etag = t->meta = NULL;
    t->blob = NULL;
    gw_s3_tagging_rewrite_from(r, key, key_len);
}

/* After the first record: in a bucket with a versioning state the
 * version's other copy gets the same tags, so a GET by id and of the
 * latest agree. */
static void gw_s3_tagging_next(struct gw_req *r)
{
    struct gw_s3_tagging *t = GW_REQ_STATE(r, gw_s3_tagging);
    if (t->twin || t->vid[0] == '\0' || r->versioning == GW_VERSIONING_OFF) {
        gw_s3_tagging_done(r);
        return;
    }
    if (t->rkey_len == t->skey_len && memcmp(t->rkey, t->skey, t->skey_len) == 0)
        gw_s3_versions_get_id(r, t->vid, gw_s3_tagging_twin_from);
    else
        gw_s3_tagging_twin_from(r, t->skey, t->skey_len);
}

static void gw_s3_tagging_on_written(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    gw_s3_tagging_next(r);
}

/* The version id a record's meta carries into id ("" when none). */
static void gw_s3_tagging_vid(const struct msg *m, char id[GW_VERSIONING_ID_MAX])
{
    struct gw_objmeta om;
    const struct gw_objmeta_header *h;
    id[0] = '\0';
    if (gw_objmeta_decode(&om, m->meta.ptr, m->meta.len) == CN_OK &&
        (h = gw_objmeta_find(&om, GW_VERSIONING_META)) != NULL && h->value_len < GW_VERSIONING_ID_MAX &&
        gw_versioning_id_check(h->value, h->value_len) != 0) {
        memcpy(id, h->value, h->value_len);
        id[h->value_len] = '\0';
    }
}

/* The current record came back: write it again with the new tags. */
static void gw_s3_tagging_on_record(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    struct gw_s3_tagging *t = GW_REQ_STATE(r, gw_s3_tagging);
    if (t->twin) {   /* the other copy: gone or another version is fine */
        char id[GW_VERSIONING_ID_MAX];
        if (res->rc == CN_OK)
            gw_s3_tagging_vid(&res->reply->m, id);
        if (res->rc != CN_OK || strcmp(id, t->vid) != 0) {
            gw_s3_tagging_done(r);
            return;
        }
    } else {
        if (gw_s3_tagging_read_failed(r, res))
            return;
        if (gw_s3_versions_on_record(r, &res->reply->m))
            return;   /* a delete marker, or not the null version named */
        gw_s3_tagging_vid(&res->reply->m, t->vid);
    }
    const struct msg *m = &res->reply->m;
    struct gw_objmeta om;
    if (t->remove && gw_objmeta_decode(&om, m->meta.ptr, m->meta.len) == CN_OK &&
        gw_objmeta_find(&om, GW_OBJMETA_TAGS) == NULL) {
        gw_s3_tagging_next(r); /* no tags here: nothing to write */
        return;
    }
    if (gw_objmeta_replace(m->meta.ptr, m->meta.len, GW_OBJMETA_TAGS, t->enc, t->enc_len,
                           &t->meta, &t->meta_len) != CN_OK) {
        gw_req_error(r, GW_S3_METADATA_TOO_LARGE, NULL);
        return;
    }
    t->etag = cn_memdup(m->etag.ptr, m->etag.len); /* kept as read, large or small */
    struct gw_store_record rec = {
        .key = t->rkey, .key_len = t->rkey_len,
        .etag = t->etag, .etag_len = m->etag.len,
        .has_osize = MSG_HAS(m, MSG_F_OSIZE), .osize = m->osize,
        .meta = t->meta, .meta_len = t->meta_len,
        .ver = r->id, .ts = m->ts + 1,   /* see the top of this file */
    };
    struct evbuffer *data = evbuffer_new();
    gw_storage_reply_move_payload(res->reply, data); /* no copy */
    t->blob = gw_blob_from_evbuffer(data);
    gw_req_hold(r);
    gw_store_put(r->s3->store, &rec, t->blob, gw_s3_tagging_on_written, r);
}

/* Reads the object's record whole; the bucket was just checked afresh
 * (gw_s3_bucket_require), as for every write. */
static void gw_s3_tagging_rewrite_from(struct gw_req *r, const char *key, size_t key_len)
{
    struct gw_s3_tagging *t = GW_REQ_STATE(r, gw_s3_tagging);
    memcpy(t->rkey, key, key_len);
    t->rkey_len = key_len;
    gw_req_hold(r);
    gw_store_get(r->s3->store, t->rkey, t->rkey_len, 1, 0, 0, gw_s3_tagging_on_record, r);
}

/* The object's record, or the version's the request names. */
static void gw_s3_tagging_rewrite(struct gw_req *r)
{
    struct gw_s3_tagging *t = GW_REQ_STATE(r, gw_s3_tagging);
    if (gw_req_param(r, "versionId") != NULL) {
        gw_s3_versions_get(r, gw_s3_tagging_rewrite_from);
        return;
    }
    gw_s3_tagging_rewrite_from(r, t->skey, t->skey_len);
}

/* ---- PutObjectTagging -------------------------------------------------- */

static void gw_s3_tagging_put_body(struct gw_req *r, enum gw_s3_err err, struct evbuffer *data)
{
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    struct gw_s3_tagging *t = GW_REQ_STATE(r, gw_s3_tagging);
    size_t len = evbuffer_get_length(data);
    const char *body = len > 0 ? (const char *)evbuffer_pullup(data, -1) : "";
    const char *why = NULL;
    if (gw_xml_parse_tagging(body, len, t->set, &err, &why) != CN_OK) {
        gw_req_error(r, err, why);
        return;
    }
    if (t->set->n > 0) {
        t->enc = cn_malloc(GW_TAGSET_ENCODED_MAX);
        t->enc_len = gw_tagset_encode(t->set, t->enc, GW_TAGSET_ENCODED_MAX);
    }
    gw_s3_tagging_rewrite(r);
}

static void gw_s3_tagging_put_bucket_ok(struct gw_req *r)
{
    gw_s3_body_read(r, GW_XML_TAGGING_MAX_BYTES, GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED,
                    gw_s3_tagging_put_body);
}

void gw_s3_tagging_put(struct gw_req *r)
{
    gw_s3_tagging_state(r);
    gw_s3_bucket_require(r, gw_s3_tagging_put_bucket_ok);
}

/* ---- DeleteObjectTagging ----------------------------------------------- */

void gw_s3_tagging_delete(struct gw_req *r)
{
    gw_s3_tagging_state(r)->remove = 1;
    gw_s3_bucket_require(r, gw_s3_tagging_rewrite);
}

/* ---- x-amz-tagging on writes ------------------------------------------- */

enum gw_s3_err gw_s3_tagging_request_tags(const struct gw_req *r, char **enc, size_t *len,
                                          const char **why)
{
    *enc = NULL;
    *len = 0;
    size_t hl;
    const char *h = gw_req_header(r, "x-amz-tagging", &hl);
    if (h == NULL || hl == 0)
        return GW_S3_OK;
    struct gw_tagset *set = gw_tagset_new(GW_TAGSET_MAX);
    enum gw_s3_err err = gw_tagset_parse_query(set, h, hl, why);
    if (err == GW_S3_OK && set->n > 0) {
        *enc = cn_malloc(GW_TAGSET_ENCODED_MAX);
        *len = gw_tagset_encode(set, *enc, GW_TAGSET_ENCODED_MAX);
    }
    gw_tagset_free(set);
    return err;
}

/* Is the directive COPY (absent: the default) rather than REPLACE? */
static int gw_s3_tagging_directive_copy(const struct gw_req *r)
{
    size_t dl;
    const char *d = gw_req_header(r, "x-amz-tagging-directive", &dl);
    return d == NULL || !gw_http_token_eq(d, dl, "REPLACE");
}

enum gw_s3_err gw_s3_tagging_directive_check(const struct gw_req *r, const char **why)
{
    size_t dl;
    const char *d = gw_req_header(r, "x-amz-tagging-directive", &dl);
    if (d == NULL || gw_http_token_eq(d, dl, "COPY") || gw_http_token_eq(d, dl, "REPLACE"))
        return GW_S3_OK;
    *why = "Unknown tagging directive.";
    return GW_S3_INVALID_ARGUMENT;
}

enum gw_s3_err gw_s3_tagging_copy_meta(const struct gw_req *r, int meta_replaced,
                                       const void *src_meta, size_t src_len, char **meta,
                                       size_t *meta_len)
{
    int copy = gw_s3_tagging_directive_copy(r);
    if (copy != meta_replaced)
        return GW_S3_OK; /* *meta already holds the tags asked for */
    char *enc = NULL;
    size_t enc_len = 0;
    const char *value = NULL;
    struct gw_objmeta src;
    if (copy) { /* the source's tags into a meta built from the request */
        const struct gw_objmeta_header *h = NULL;
        if (gw_objmeta_decode(&src, src_meta, src_len) == CN_OK)
            h = gw_objmeta_find(&src, GW_OBJMETA_TAGS);
        if (h != NULL) {
            value = h->value;
            enc_len = h->value_len;
        }
    } else { /* the request's tags into the source's meta (checked before) */
        const char *why;
        if (gw_s3_tagging_request_tags(r, &enc, &enc_len, &why) != GW_S3_OK)
            return GW_S3_INVALID_TAG;
        value = enc;
    }
    char *out;
    size_t out_len;
    int rc = gw_objmeta_replace(*meta, *meta_len, GW_OBJMETA_TAGS, value, enc_len, &out,
                                &out_len);
    cn_free(enc);
    if (rc != CN_OK)
        return GW_S3_METADATA_TOO_LARGE;
    cn_free(*meta);
    *meta = out;
    *meta_len = out_len;
    return GW_S3_OK;
}
