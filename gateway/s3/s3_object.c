/* Object handlers. A small PUT reads and verifies the whole body
 * (s3_body.c) before one record is written to the replicas, so a refused
 * request stores nothing. A large PUT streams the body into chunks
 * (lo_put.c) and writes the parent record, the commit point, only after
 * the body verified and every chunk is stored. GET reads the record once:
 * a small object is answered from it (its payload reaches the client
 * without a copy), a large one's record holds the chunk map and the read
 * pipeline (read_pipeline.c, wired to the store and the request by
 * lo_get.c) streams the chunks. */
#include "s3_object.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "access.h"
#include "bucket_owner.h"
#include "cond_write.h"
#include "http_date.h"
#include "keys.h"
#include "lo_copy.h"
#include "lo_get.h"
#include "lo_map.h"
#include "lo_put.h"
#include "lo_reclaim.h"
#include "objmeta.h"
#include "s3_body.h"
#include "s3_bucket.h"
#include "s3_error.h"
#include "s3_get_sink.h"
#include "s3_names.h"
#include "s3_post.h"
#include "s3_range.h"
#include "s3_reply.h"
#include "s3_tagging.h"
#include "s3_versions.h"
#include "tagset.h"
#include "store.h"
#include "versioning.h"
#include "xml.h"

#include "cn/alloc.h"
#include "cn/hlc.h"
#include "cn/log.h"

#define GW_S3_OBJECT_MAX_USER_META 2048 /* bytes of x-amz-meta-* names+values, as S3 */

/* Scratch of one object request: the storage key and lower-cased names.
 * The request's state (r->state) of every object handler but CopyObject,
 * whose state holds one for its destination (gw_s3_object_of()). */
struct gw_s3_object {
    struct gw_hstate hs;               /* unused (type NULL) inside a gw_s3_copy */
    struct gw_lo_get *get;             /* a large GET's read pipeline */
    struct gw_s3_get_sink get_sink;    /* ... writing to r's response through this */
    struct gw_lo_put *lp;              /* a large PUT's body and chunks */
    struct gw_lo_map old_map;          /* the chunks an overwrite or delete replaces */
    int have_old;
    int is_put;                        /* PutObject: If-Match / If-None-Match apply */
    struct gw_cond_write cw;           /* ... and make the write conditional */
    uint64_t old_ts;
    uint64_t ts;
    char etag[GW_LO_ETAG_MAX];         /* a large PUT's ETag (outlives a lease round) */
    char skey[GW_KEYS_MAX];
    size_t skey_len;
    char names[8192];
    size_t names_used;
    char *meta;
    size_t meta_len;
    struct gw_blob *blob;
};

/* CopyObject's state: its destination's object scratch, and the source. */
struct gw_s3_copy {
    struct gw_hstate hs;
    struct gw_s3_object o;     /* the destination */
    char src_bucket[64];
    size_t src_bucket_len;
    char src_skey[GW_KEYS_MAX];        /* the source's "o/" key: names its chunks */
    size_t src_skey_len;
    char src_rkey[GW_VERSIONING_KEY_MAX]; /* the record read: src_skey or a version's */
    size_t src_rkey_len;
    char etag[129];
    uint64_t ts;
    struct gw_lo_copy *copy;   /* a chunked source's bytes, copied */
};

static void gw_s3_object_free(struct gw_hstate *hs);
static const struct gw_hstate_type gw_s3_object_hstate = {"gw_s3_object", gw_s3_object_free};
static void gw_s3_copy_free(struct gw_hstate *hs);
static const struct gw_hstate_type gw_s3_copy_hstate = {"gw_s3_copy", gw_s3_copy_free};

/* The object scratch of r, which has one: an object handler's state, or
 * the destination's of a CopyObject (the steps they share, such as
 * gw_s3_object_read_old(), run for both). Any other state is a bug
 * (hstate.h). */
static struct gw_s3_object *gw_s3_object_of(struct gw_req *r)
{
    if (gw_hstate_is(r->state, &gw_s3_copy_hstate))
        return &GW_REQ_STATE(r, gw_s3_copy)->o;
    struct gw_s3_object *o = GW_REQ_STATE(r, gw_s3_object);
    CN_ASSERT(o != NULL);
    return o;
}

/* Releases what a large-object request holds (shared with CopyObject). */
static void gw_s3_object_fini(struct gw_s3_object *o)
{
    gw_lo_get_free(o->get);
    gw_lo_put_free(o->lp);
    gw_lo_map_fini(&o->old_map);
    gw_cond_write_fini(&o->cw);
}

static void gw_s3_object_scratch_free(struct gw_s3_object *o)
{
    gw_s3_object_fini(o);
    cn_free(o->meta);
    gw_blob_unref(o->blob);
    cn_free(o);
}

static void gw_s3_object_free(struct gw_hstate *hs)
{
    gw_s3_object_scratch_free(GW_HSTATE(hs, gw_s3_object));
}

static struct gw_s3_object *gw_s3_object_state(struct gw_req *r)
{
    if (r->state == NULL) {
        struct gw_s3_object *o = cn_calloc(1, sizeof(*o));
        o->skey_len = gw_keys_object(o->skey, r->bucket, r->bucket_len, r->key, r->key_len);
        gw_req_state_set(r, &o->hs, &gw_s3_object_hstate);
    }
    return gw_s3_object_of(r);
}

/* ---- stored headers --------------------------------------------------- */

static const char *const gw_s3_object_std_headers[] = {
    "content-type", "cache-control", "content-disposition", "content-encoding",
    "content-language", "expires", "x-amz-website-redirect-location",
};

/* Content-Encoding without the aws-chunked token (it describes the upload),
 * the client's other codings kept exactly as sent: each kept coding with
 * the separator that preceded it ("gzip, aws-chunked, br" -> "gzip, br";
 * "aws-chunked,gzip" -> "gzip"; "aws-chunked" alone -> empty: no header).
 * Returns the length written to out (at most cap - 1; a value that does not
 * fit is cut at the last coding that does). */
static size_t gw_s3_object_strip_aws_chunked(const char *v, size_t len, char *out, size_t cap)
{
    size_t n = 0, i = 0, prev_end = 0;
    while (i < len) {
        while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        size_t s = i;
        while (i < len && v[i] != ',')
            i++;
        size_t e = i;
        while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
            e--;
        int drop = e == s || (e - s == 11 && strncasecmp(v + s, "aws-chunked", 11) == 0);
        if (!drop) {
            /* the separator as sent before this coding (none for the first) */
            size_t from = n > 0 ? prev_end : s;
            if (n + (e - from) + 1 > cap)
                break;
            memcpy(out + n, v + from, e - from);
            n += e - from;
        }
        if (e > s)
            prev_end = e;
    }
    return n;
}

/* Copies a name lower-cased into the scratch; NULL when it is full. */
static const char *gw_s3_object_lower(struct gw_s3_object *o, const char *name, size_t len)
{
    if (o->names_used + len + 1 > sizeof(o->names))
        return NULL;
    char *d = o->names + o->names_used;
    for (size_t i = 0; i < len; i++)
        d[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] + 32 : name[i]);
    d[len] = '\0';
    o->names_used += len + 1;
    return d;
}

/* The chunk map of a large object stored as one segment (a PutObject or a
 * CopyObject), as its parent record's payload. */
/* Builds the meta of a new object from the request headers. */
static enum gw_s3_err gw_s3_object_build_meta(struct gw_req *r, struct gw_s3_object *o)
{
    struct gw_objmeta m = {.n = 0};
    const struct gw_http_header *hdrs = r->http->headers;
    uint32_t n_hdrs = r->http->n_headers;
    size_t user_bytes = 0;
    int have_ct = 0;
    if (r->post != NULL) /* POST object: the form's fields are the headers */
        hdrs = gw_s3_post_headers(r->post, &n_hdrs);
    for (uint32_t i = 0; i < n_hdrs; i++) {
        const struct gw_http_header *hd = &hdrs[i];
        int keep = hd->name_len > 11 && strncasecmp(hd->name, "x-amz-meta-", 11) == 0;
        if (keep)
            user_bytes += hd->name_len - 11 + hd->value_len;
        for (size_t k = 0; !keep && k < CN_ARRAY_LEN(gw_s3_object_std_headers); k++)
            keep = gw_http_token_eq(hd->name, hd->name_len, gw_s3_object_std_headers[k]);
        if (!keep)
            continue;
        const char *name = gw_s3_object_lower(o, hd->name, hd->name_len);
        const char *value = hd->value;
        size_t vlen = hd->value_len;
        if (name != NULL && strcmp(name, "content-encoding") == 0) {
            char *buf = o->names + o->names_used;
            size_t cap = sizeof(o->names) - o->names_used;
            vlen = gw_s3_object_strip_aws_chunked(hd->value, hd->value_len, buf, cap);
            o->names_used += vlen;
            value = buf;
            if (vlen == 0)
                continue;
        }
        have_ct |= name != NULL && strcmp(name, "content-type") == 0;
        if (name == NULL || gw_objmeta_add(&m, name, hd->name_len, value, vlen) != CN_OK)
            return GW_S3_METADATA_TOO_LARGE;
    }
    if (user_bytes > GW_S3_OBJECT_MAX_USER_META)
        return GW_S3_METADATA_TOO_LARGE;
    if (!have_ct)
        gw_objmeta_add(&m, "content-type", 12, "binary/octet-stream", 19);
    /* the handler checked x-amz-tagging before it read a body */
    char *tags = NULL;
    size_t tags_len;
    const char *why;
    if (gw_s3_tagging_request_tags(r, &tags, &tags_len, &why) == GW_S3_OK && tags != NULL &&
        gw_objmeta_add(&m, GW_OBJMETA_TAGS, strlen(GW_OBJMETA_TAGS), tags, tags_len) != CN_OK) {
        cn_free(tags);
        return GW_S3_METADATA_TOO_LARGE;
    }
    /* the ACL the router checked (x-amz-acl, x-amz-grant-*) */
    if (r->acl_text != NULL && gw_objmeta_add(&m, GW_OBJMETA_ACL, strlen(GW_OBJMETA_ACL),
                                              r->acl_text, r->acl_text_len) != CN_OK) {
        cn_free(tags);
        return GW_S3_METADATA_TOO_LARGE;
    }
    enum gw_checksum_algo algo;
    char b64[GW_CHECKSUM_B64_MAX];
    if (gw_s3_body_checksum(r, &algo, b64) == CN_OK) {
        const char *hn = gw_checksum_header_name(algo);
        size_t bl = strlen(b64);
        char *keepb = o->names + o->names_used;
        if (hn != NULL && o->names_used + bl + 1 <= sizeof(o->names)) {
            memcpy(keepb, b64, bl + 1);
            o->names_used += bl + 1;
            gw_objmeta_add(&m, hn, strlen(hn), keepb, bl);
        }
    }
    gw_objmeta_encode(&m, &o->meta, &o->meta_len);
    cn_free(tags);
    return GW_S3_OK;
}

enum gw_s3_err gw_s3_object_request_meta(struct gw_req *r, char **meta, size_t *len)
{
    struct gw_s3_object *o = cn_calloc(1, sizeof(*o));
    enum gw_s3_err err = gw_s3_object_build_meta(r, o);
    *meta = o->meta;
    *len = o->meta_len;
    o->meta = NULL;
    gw_s3_object_scratch_free(o);
    return err;
}

/* ---- PutObject ------------------------------------------------------- */

static void gw_s3_object_read_old(struct gw_req *r, gw_req_cb next);

/* The end of a PutObject, small or large, once its record write settled:
 * drops the request's hold, then answers with the ETag and the checksum the
 * client sent, or with the store's error. */
static void gw_s3_object_put_done(struct gw_req *r, const struct gw_store_result *res)
{
    if (!gw_req_release(r))
        return;
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    if (r->post != NULL) { /* POST object answers its own way */
        gw_s3_post_reply(r, gw_s3_body_md5_hex(r));
        return;
    }
    gw_req_reply_start(r, 200);
    gw_req_reply_headerf(r, "ETag", "\"%s\"", gw_s3_body_md5_hex(r));
    enum gw_checksum_algo algo;
    char b64[GW_CHECKSUM_B64_MAX];
    if (gw_s3_body_checksum(r, &algo, b64) == CN_OK && gw_checksum_header_name(algo) != NULL)
        gw_req_reply_header(r, gw_checksum_header_name(algo), b64, strlen(b64));
    gw_req_reply_send_headers(r, 0);
    gw_req_reply_end(r);
}

static void gw_s3_object_on_put(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_object *o = gw_s3_object_of(r);
    if (res->rc == CN_OK && o->have_old && !gw_s3_versions_keeps_chunks(r))
        /* a small object replaced a large one */
        gw_lo_reclaim_segs(r->s3->reclaim, o->skey, o->skey_len, o->old_map.segs,
                           o->old_map.n_segs, r->s3->lo.reclaim_delay_ms, r->id);
    gw_s3_object_put_done(r, res);
}

/* A conditional PutObject's write of the "o/" record, under the key's
 * lease (cond_write.h; s3_versions.h puts it first in a versioned bucket). */
static void gw_s3_object_cond_put(struct gw_req *r, const struct gw_store_record *rec,
                                  struct gw_blob *data, gw_store_cb cb)
{
    struct gw_s3_object *o = gw_s3_object_of(r);
    gw_cond_write_put(&o->cw, r, rec, data, cb);
}

/* Writes a small object's one record (the body is in o->blob), newer than
 * the record it replaces. */
static void gw_s3_object_put_small_write(struct gw_req *r)
{
    struct gw_s3_object *o = gw_s3_object_of(r);
    const char *etag = gw_s3_body_md5_hex(r);
    struct gw_store_record rec = {
        .key = o->skey,
        .key_len = o->skey_len,
        .etag = etag,
        .etag_len = strlen(etag),
        .meta = o->meta,
        .meta_len = o->meta_len,
        .ver = r->id,
        .ts = cn_hlc_after(cn_hlc_default(), o->old_ts),
    };
    gw_req_hold(r);
    if (o->cw.armed)   /* the "o/" record under the lease, then its version's */
        gw_s3_versions_put_with(r, &rec, o->blob, gw_s3_object_on_put, gw_s3_object_cond_put);
    else
        gw_s3_versions_put(r, &rec, o->blob, gw_s3_object_on_put, r);
}

static void gw_s3_object_put_body(struct gw_req *r, enum gw_s3_err err, struct evbuffer *data)
{
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    struct gw_s3_object *o = gw_s3_object_state(r);
    err = gw_s3_object_build_meta(r, o);
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    struct evbuffer *owned = evbuffer_new();
    evbuffer_add_buffer(owned, data);
    o->blob = gw_blob_from_evbuffer(owned);
    gw_s3_object_read_old(r, gw_s3_object_put_small_write);
}

static void gw_s3_object_put_bucket_ok(struct gw_req *r)
{
    gw_s3_body_read(r, (size_t)r->s3->lo.threshold, GW_S3_ENTITY_TOO_LARGE,
                    gw_s3_object_put_body);
}

/* ---- large PutObject: chunks, then the parent record ------------------ */

static void gw_s3_object_lo_on_parent(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_object *o = gw_s3_object_of(r);
    /* decided before the release, which may end the request: once a parent
     * may be on some replica its chunks must stay (a failed write that
     * reached fewer than W nodes leaves chunks behind rather than a
     * visible object without them) */
    gw_lo_put_commit(o->lp);
    if (res->rc == CN_OK && o->have_old && !gw_s3_versions_keeps_chunks(r))
        gw_lo_reclaim_segs(r->s3->reclaim, o->skey, o->skey_len, o->old_map.segs,
                           o->old_map.n_segs, r->s3->lo.reclaim_delay_ms, r->id);
    gw_s3_object_put_done(r, res);
}

/* Writes the parent record: data = the chunk map, etag field = "<md5>
 * <size>", newer than the record it replaces. */
static void gw_s3_object_lo_write_parent(struct gw_req *r)
{
    struct gw_s3_object *o = gw_s3_object_of(r);
    enum gw_s3_err err = gw_s3_object_build_meta(r, o);
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    struct gw_lo_seg seg;
    gw_lo_put_seg(o->lp, &seg);
    snprintf(o->etag, sizeof(o->etag), "%s", gw_s3_body_md5_hex(r));
    uint64_t osize;
    o->blob = gw_lo_map_parent(&seg, 1, 0, &osize);
    o->ts = cn_hlc_after(cn_hlc_default(), o->old_ts);
    struct gw_store_record rec = {
        .key = o->skey, .key_len = o->skey_len,
        .etag = o->etag, .etag_len = strlen(o->etag),
        .meta = o->meta, .meta_len = o->meta_len,
        .ver = r->id, .ts = o->ts,
        .has_osize = 1, .osize = osize,
    };
    gw_req_hold(r);
    if (o->cw.armed)
        gw_s3_versions_put_with(r, &rec, o->blob, gw_s3_object_lo_on_parent,
                                gw_s3_object_cond_put);
    else
        gw_s3_versions_put(r, &rec, o->blob, gw_s3_object_lo_on_parent, r);
}

/* Reads the chunk map of the record an overwrite or delete replaces (a
 * GET of a large parent), then runs r->then. Errors only cost the reclaim
 * of the old chunks. */
static void gw_s3_object_old_on_get(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_object *o = gw_s3_object_of(r);
    if (res->rc == CN_OK) {
        const struct msg *m = &res->reply->m;
        size_t tl;
        uint64_t size;
        o->old_ts = CN_MAX(o->old_ts, m->ts);
        if (gw_lo_map_reply_size(m, &tl, &size) &&
            gw_lo_map_decode(&o->old_map, m->payload.ptr, m->payload.len) == CN_OK)
            o->have_old = 1;
    } else if (res->rc != CN_NOTFOUND) {
        CN_LOGR(CN_LOG_WARN, r->id, "cannot read the replaced record (%s): its chunks, if "
                "any, stay", res->err);
    }
    if (!gw_req_release(r))
        return;
    r->then(r);
}

static void gw_s3_object_old_on_head(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_object *o = gw_s3_object_of(r);
    int large = 0;
    enum gw_s3_err cerr = GW_S3_OK;
    if (res->rc == CN_OK) {
        const struct msg *m = &res->reply->m;
        size_t tl;
        uint64_t size;
        o->old_ts = m->ts;
        large = gw_lo_map_reply_size(m, &tl, &size);
    }
    if (o->is_put && (res->rc == CN_OK || res->rc == CN_NOTFOUND))
        cerr = gw_cond_write_check(&o->cw, r, res->rc == CN_OK ? &res->reply->m : NULL);
    else if (o->is_put && (gw_req_header(r, "if-match", NULL) != NULL ||
                           gw_req_header(r, "if-none-match", NULL) != NULL))
        cerr = gw_s3_error_from_store(res->rc); /* a condition cannot be decided */
    if (!gw_req_release(r))
        return;
    if (cerr != GW_S3_OK) {
        gw_req_error(r, cerr, NULL);
        return;
    }
    if (!large) {
        r->then(r);
        return;
    }
    gw_req_hold(r);
    gw_store_get(r->s3->store, o->skey, o->skey_len, 1, 0, 0, gw_s3_object_old_on_get, r);
}

/* Learns which chunks (if any) the current record of o->skey references
 * and its timestamp, then runs next. */
static void gw_s3_object_read_old(struct gw_req *r, gw_req_cb next)
{
    struct gw_s3_object *o = gw_s3_object_of(r);
    r->then = next;
    gw_req_hold(r);
    gw_store_head(r->s3->store, o->skey, o->skey_len, gw_s3_object_old_on_head, r);
}

/* The body verified and its chunks are stored (or it was small). */
static void gw_s3_object_lo_on_body(void *arg, enum gw_s3_err err, const char *why)
{
    struct gw_req *r = arg;
    struct gw_s3_object *o = gw_s3_object_of(r);
    if (err != GW_S3_OK) {
        CN_LOGR(CN_LOG_INFO, r->id, "large PUT failed: %s", why != NULL ? why : "body refused");
        gw_req_error(r, err, NULL);
        return;
    }
    if (!gw_lo_put_chunked(o->lp)) {
        gw_s3_object_put_body(r, GW_S3_OK, gw_lo_put_small(o->lp));
        return;
    }
    gw_s3_object_read_old(r, gw_s3_object_lo_write_parent);
}


static void gw_s3_object_put_large_bucket_ok(struct gw_req *r)
{
    struct gw_s3_object *o = gw_s3_object_of(r);
    int64_t declared = gw_s3_body_declared_length(r);
    enum gw_lo_put_mode mode = declared >= 0 ? GW_LO_PUT_ALWAYS : GW_LO_PUT_AUTO;
    struct gw_lo_put_source src;
    gw_s3_body_lo_source(r, &src);
    o->lp = gw_lo_put_new(&r->s3->lo, &src, r->id, o->skey, o->skey_len, mode,
                          gw_s3_object_lo_on_body, r);
    gw_lo_put_begin(o->lp, r->s3->opts.put_limit);
}

/* Answers the error of a bad x-amz-tagging (or, on a copy, of a bad
 * x-amz-tagging-directive) and returns 1; 0 when they are fine. Checked
 * before a body is read or a source copied, so such a request stores
 * nothing. */
static int gw_s3_object_tagging_refused(struct gw_req *r)
{
    const char *why = NULL;
    char *enc;
    size_t len;
    enum gw_s3_err err = gw_s3_tagging_request_tags(r, &enc, &len, &why);
    cn_free(enc);
    if (err == GW_S3_OK && r->has_copy_src)
        err = gw_s3_tagging_directive_check(r, &why);
    if (err == GW_S3_OK)
        return 0;
    gw_req_error(r, err, why);
    return 1;
}

/* x-amz-storage-class must name an S3 class; every object is stored the
 * same way (answered as STANDARD in listings). GW_S3_OK or the error. */
static enum gw_s3_err gw_s3_object_storage_class(const struct gw_req *r)
{
    size_t len;
    const char *v = gw_req_header(r, "x-amz-storage-class", &len);
    return v == NULL || gw_s3_names_storage_class_ok(v, len) ? GW_S3_OK
                                                             : GW_S3_INVALID_STORAGE_CLASS;
}

void gw_s3_object_put(struct gw_req *r)
{
    const struct gw_s3_ctx *ctx = r->s3;
    if (r->http->content_length < 0 && !r->http->chunked) {
        gw_req_error(r, GW_S3_MISSING_CONTENT_LENGTH, NULL);
        return;
    }
    if (gw_s3_object_storage_class(r) != GW_S3_OK) {
        gw_req_error(r, GW_S3_INVALID_STORAGE_CLASS, NULL);
        return;
    }
    if (gw_s3_object_tagging_refused(r))
        return;
    int64_t declared = gw_s3_body_declared_length(r);
    if (declared > (int64_t)ctx->opts.put_limit) {
        gw_req_error(r, GW_S3_ENTITY_TOO_LARGE, NULL);
        return;
    }
    gw_s3_object_state(r)->is_put = 1;
    if (declared >= 0 && (uint64_t)declared < ctx->lo.threshold)
        gw_s3_bucket_require(r, gw_s3_object_put_bucket_ok);
    else
        gw_s3_bucket_require(r, gw_s3_object_put_large_bucket_ok);
}

void gw_s3_object_put_form(struct gw_req *r)
{
    gw_s3_object_state(r);
    gw_s3_bucket_require(r, gw_s3_object_put_large_bucket_ok);
}

/* ---- conditionals ---------------------------------------------------- */

/* Evaluates If-Match, If-Unmodified-Since, If-None-Match, If-Modified-Since
 * (RFC 7232 order, as S3). prefix "" for GET, "x-amz-copy-source-" for copy. */
static enum gw_s3_err gw_s3_object_conditions(const struct gw_req *r, const char *prefix,
                                              const char *etag, size_t elen, time_t mtime)
{
    char name[64];
    size_t len;
    const char *v;
    time_t t;
    snprintf(name, sizeof(name), "%sif-match", prefix);
    const char *im = gw_req_header(r, name, &len);
    if (im != NULL && !gw_cond_write_etag_in(im, len, etag, elen))
        return GW_S3_PRECONDITION_FAILED;
    snprintf(name, sizeof(name), "%sif-unmodified-since", prefix);
    if (im == NULL && (v = gw_req_header(r, name, &len)) != NULL &&
        gw_s3_names_http_date_parse(v, len, &t) == CN_OK && mtime > t)
        return GW_S3_PRECONDITION_FAILED;
    snprintf(name, sizeof(name), "%sif-none-match", prefix);
    const char *inm = gw_req_header(r, name, &len);
    int is_copy = prefix[0] != '\0';
    if (inm != NULL && gw_cond_write_etag_in(inm, len, etag, elen))
        return is_copy ? GW_S3_PRECONDITION_FAILED : GW_S3_NOT_MODIFIED;
    snprintf(name, sizeof(name), "%sif-modified-since", prefix);
    if (inm == NULL && (v = gw_req_header(r, name, &len)) != NULL &&
        gw_s3_names_http_date_parse(v, len, &t) == CN_OK && mtime <= t)
        return is_copy ? GW_S3_PRECONDITION_FAILED : GW_S3_NOT_MODIFIED;
    return GW_S3_OK;
}

/* ---- GetObject / HeadObject ------------------------------------------ */

static void gw_s3_object_not_found_bucket_ok(struct gw_req *r)
{
    /* AccessDenied rather than NoSuchKey to who may not list the bucket */
    enum gw_s3_err err = gw_bucket_owner_missing_key(r);
    if (err == GW_S3_NO_SUCH_KEY && gw_s3_versions_not_found(r))
        return;   /* answered: NoSuchVersion, or a delete marker on top */
    gw_req_error(r, err, NULL);
}

/* The spelling S3 answers a stored standard header with ("Content-Type");
 * x-amz-* and unknown names stay as stored (lower case, as S3 sends
 * x-amz-meta-*). Returns a static string or name itself. */
static const char *gw_s3_object_header_case(const char *name)
{
    static const char *const canon[] = {"Content-Type", "Cache-Control",
                                        "Content-Disposition", "Content-Encoding",
                                        "Content-Language", "Expires"};
    for (size_t i = 0; i < CN_ARRAY_LEN(canon); i++)
        if (strcasecmp(name, canon[i]) == 0)
            return canon[i];
    return name;
}

/* The object headers of a GET/HEAD answer. A partial (ranged) answer
 * leaves out the whole-object x-amz-checksum-*, as S3 does: clients that
 * validate response checksums would check them against the range. */
static void gw_s3_object_reply_headers(struct gw_req *r, const struct msg *m, size_t etag_len,
                                       const struct gw_objmeta *om, int partial)
{
    char date[GW_HTTP_DATE_LEN];
    gw_http_date_format((time_t)(m->ts / 1000000), date);
    gw_req_reply_header(r, "Last-Modified", date, strlen(date));
    gw_req_reply_headerf(r, "ETag", "\"%.*s\"", (int)etag_len, (const char *)m->etag.ptr);
    gw_req_reply_header(r, "Accept-Ranges", "bytes", 5);
    size_t cm_len;
    const char *cm = gw_req_header(r, "x-amz-checksum-mode", &cm_len);
    int want_ck = !partial && cm != NULL && gw_http_token_eq(cm, cm_len, "ENABLED");
    for (size_t i = 0; i < om->n; i++) {
        const struct gw_objmeta_header *h = &om->h[i];
        if (gw_objmeta_is_internal(h)) {
            if (h->name_len == strlen(GW_OBJMETA_TAGS) &&
                memcmp(h->name, GW_OBJMETA_TAGS, h->name_len) == 0 && h->value_len > 0)
                gw_req_reply_headerf(r, "x-amz-tagging-count", "%zu",
                                     gw_tagset_count_encoded(h->value, h->value_len));
            continue; /* the gateway's own entries are never headers */
        }
        if (h->name_len > 15 && strncmp(h->name, "x-amz-checksum-", 15) == 0 && !want_ck)
            continue;
        char name[256];
        snprintf(name, sizeof(name), "%.*s", (int)h->name_len, h->name);
        /* a response-* override replaces the stored header (presigned
         * downloads); the router checked the values (s3_overrides.h) */
        int overridden = 0;
        for (int k = 0; k < GW_S3_OVR_N; k++)
            if (r->ovr.value[k] != NULL && strcmp(name, gw_s3_overrides_meta_name(k)) == 0)
                overridden = 1;
        if (overridden)
            continue;
        gw_req_reply_header(r, gw_s3_object_header_case(name), h->value, h->value_len);
    }
    for (int k = 0; k < GW_S3_OVR_N; k++)
        if (r->ovr.value[k] != NULL)
            gw_req_reply_header(r, gw_s3_overrides_header_name(k), r->ovr.value[k],
                                r->ovr.len[k]);
}

/* 304 Not Modified: no body, but the validators a 200 would carry (RFC
 * 7232 4.1: ETag; S3 also sends Last-Modified), so caches can refresh. */
static void gw_s3_object_not_modified(struct gw_req *r, const struct msg *m, size_t etag_len)
{
    char date[GW_HTTP_DATE_LEN];
    gw_http_date_format((time_t)(m->ts / 1000000), date);
    gw_req_reply_start(r, 304);
    gw_req_reply_header(r, "Last-Modified", date, strlen(date));
    gw_req_reply_headerf(r, "ETag", "\"%.*s\"", (int)etag_len, (const char *)m->etag.ptr);
    gw_req_reply_send_headers(r, 0);
    gw_req_reply_end(r);
}

/* What a GET or HEAD answers: the whole object, a Range, or a part
 * (partNumber). */
struct gw_s3_object_span {
    uint64_t size;        /* the object's size */
    uint64_t first, len;
    int status;           /* 200 or 206 */
    int part_count;       /* x-amz-mp-parts-count, 0: none */
    struct gw_s3_range range;
};

/* Reads partNumber: the part's bytes of a multipart object (206 with
 * Content-Range and the part count, as S3), or the whole object for part 1
 * of one that is not multipart. */
static enum gw_s3_err gw_s3_object_part_span(struct gw_req *r, const struct gw_lo_map *map,
                                             struct gw_s3_object_span *sp)
{
    const struct gw_req_param *pn = gw_req_param(r, "partNumber");
    char *end = NULL;
    unsigned long n = strtoul(pn->value, &end, 10);
    if (pn->value_len == 0 || *end != '\0' || n < 1 || n > 10000)
        return GW_S3_INVALID_ARGUMENT;
    if (map == NULL || !map->multipart) {
        if (n != 1)
            return GW_S3_INVALID_PART_NUMBER;
        return GW_S3_OK; /* the whole object, 200 */
    }
    if (n > map->n_segs)
        return GW_S3_INVALID_PART_NUMBER;
    sp->part_count = (int)map->n_segs;
    sp->first = map->starts[n - 1];
    sp->len = map->segs[n - 1].size;
    sp->status = 206;
    sp->range.first = sp->first;
    sp->range.last = sp->first + sp->len - (sp->len > 0);
    return GW_S3_OK;
}

/* Decides what to send: whole object, Range or part. */
static enum gw_s3_err gw_s3_object_span(struct gw_req *r, const struct gw_lo_map *map,
                                        uint64_t size, struct gw_s3_object_span *sp)
{
    memset(sp, 0, sizeof(*sp));
    sp->size = size;
    sp->len = size;
    sp->status = 200;
    if (gw_req_param(r, "partNumber") != NULL)
        return gw_s3_object_part_span(r, map, sp);
    size_t rlen;
    const char *rh = gw_req_header(r, "range", &rlen);
    enum gw_s3_range_kind kind = gw_s3_range_parse(rh, rh != NULL ? rlen : 0, size, &sp->range);
    if (kind == GW_S3_RANGE_UNSATISFIABLE)
        return GW_S3_INVALID_RANGE;
    if (kind == GW_S3_RANGE_PARTIAL) {
        sp->status = 206;
        sp->first = sp->range.first;
        sp->len = sp->range.last - sp->range.first + 1;
    }
    return GW_S3_OK;
}

/* Answers err; a 416 (InvalidRange, InvalidPartNumber) names the object's
 * size in Content-Range: bytes STAR/size, as RFC 9110 asks and S3 does, so
 * a client can retry with a range that fits. */
static void gw_s3_object_error_416(struct gw_req *r, enum gw_s3_err err, uint64_t size)
{
    if (gw_s3_error_status(err) != 416) {
        gw_req_error(r, err, NULL);
        return;
    }
    char cr[GW_S3_RANGE_CONTENT_RANGE_MAX];
    size_t n = gw_s3_range_content_range(NULL, size, cr, sizeof(cr));
    gw_req_error_header(r, err, NULL, "Content-Range", cr, n);
}

/* Builds the status line and headers of a GET/HEAD answer (not sent). */
static void gw_s3_object_build_head(struct gw_req *r, const struct msg *m, size_t etag_len,
                                    const struct gw_objmeta *om,
                                    const struct gw_s3_object_span *sp)
{
    gw_req_reply_start(r, sp->status);
    gw_s3_object_reply_headers(r, m, etag_len, om, sp->status == 206);
    if (sp->part_count > 0)
        gw_req_reply_headerf(r, "x-amz-mp-parts-count", "%d", sp->part_count);
    if (sp->status == 206) {
        char cr[GW_S3_RANGE_CONTENT_RANGE_MAX];
        size_t n = gw_s3_range_content_range(&sp->range, sp->size, cr, sizeof(cr));
        gw_req_reply_header(r, "Content-Range", cr, n);
    }
}

/* The client's output drained during a large GET: its pipeline resumes. */
static void gw_s3_object_get_on_drain(struct gw_req *r)
{
    struct gw_s3_object *o = gw_s3_object_of(r);
    if (o->get != NULL)
        gw_lo_get_drained(o->get);
}

static void gw_s3_object_on_get(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    struct gw_s3_object *o = gw_s3_object_of(r);
    if (res->rc == CN_NOTFOUND) {
        gw_s3_bucket_require(r, gw_s3_object_not_found_bucket_ok);
        return;
    }
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    const struct msg *m = &res->reply->m;
    if (gw_bucket_owner_recheck(r, r->bucket, r->bucket_len, m->ts, gw_s3_object_get))
        return;   /* the object is newer than the cached owner: asked again */
    if (!gw_access_object_allows(r, m->meta.ptr, m->meta.len)) {
        if (!gw_bucket_owner_retry_denied(r, 0, gw_s3_object_get))
            gw_req_error(r, GW_S3_ACCESS_DENIED, NULL);   /* no grant in the object's ACL */
        return;
    }
    if (gw_s3_versions_on_record(r, m))
        return;   /* a delete marker or a version that is not the one asked for */
    struct gw_objmeta om;
    if (gw_objmeta_decode(&om, m->meta.ptr, m->meta.len) != CN_OK)
        CN_LOGR(CN_LOG_WARN, r->id, "object meta does not decode; answering without it");
    size_t etag_len;
    uint64_t size;
    int large = gw_lo_map_reply_size(m, &etag_len, &size);
    if (!large)
        size = r->hr.head_only ? m->size : m->payload.len;
    struct gw_lo_map map;
    int have_map = large && (!r->hr.head_only || gw_req_param(r, "partNumber") != NULL);
    if (have_map && (gw_lo_map_decode(&map, m->payload.ptr, m->payload.len) != CN_OK ||
                     map.size != size)) {
        gw_lo_map_fini(&map);
        CN_LOGR(CN_LOG_ERROR, r->id, "chunk map of %.*s does not decode", (int)o->skey_len - 2,
                o->skey + 2);
        gw_req_error(r, GW_S3_INTERNAL_ERROR, "The object's chunk map is damaged.");
        return;
    }
    enum gw_s3_err err = gw_s3_object_conditions(r, "", (const char *)m->etag.ptr, etag_len,
                                                 (time_t)(m->ts / 1000000));
    struct gw_s3_object_span sp;
    if (err == GW_S3_OK)
        err = gw_s3_object_span(r, have_map ? &map : NULL, size, &sp);
    if (err != GW_S3_OK) {
        if (have_map)
            gw_lo_map_fini(&map);
        if (err == GW_S3_NOT_MODIFIED)
            gw_s3_object_not_modified(r, m, etag_len);
        else
            gw_s3_object_error_416(r, err, size);
        return;
    }
    gw_s3_object_build_head(r, m, etag_len, &om, &sp);
    if (large && !r->hr.head_only) {
        /* the headers go out when the read-ahead budget lets it in */
        struct gw_read_pipeline_sink sink;
        gw_s3_get_sink_init(&o->get_sink, r, sp.len, gw_s3_object_get_on_drain, &sink);
        o->get = gw_lo_get_new(&r->s3->lo, &sink, o->skey, o->skey_len, &map, sp.first,
                               sp.len);
        gw_lo_get_start(o->get);
        return;
    }
    gw_req_reply_send_headers(r, sp.len);
    if (r->hr.head_only) {
        if (have_map)
            gw_lo_map_fini(&map);
        gw_req_reply_end(r);
        return;
    }
    struct evbuffer *tmp = evbuffer_new();
    gw_storage_reply_move_payload(res->reply, tmp); /* zero copy */
    evbuffer_drain(tmp, sp.first);
    evbuffer_remove_buffer(tmp, gw_req_reply_body(r), sp.len);
    evbuffer_free(tmp);
    gw_req_reply_end(r);
}

/* Reads the record at key (the object's, or one of its versions':
 * s3_versions.h; a large one's chunks are named after the object's key
 * either way) and answers from it. */
static void gw_s3_object_get_from(struct gw_req *r, const char *key, size_t key_len)
{
    gw_req_hold(r);
    /* HEAD with partNumber needs the chunk map, which is the record's data */
    if (r->hr.head_only && gw_req_param(r, "partNumber") == NULL)
        gw_store_head(r->s3->store, key, key_len, gw_s3_object_on_get, r);
    else
        gw_store_get(r->s3->store, key, key_len, 1, 0, 0, gw_s3_object_on_get, r);
}

void gw_s3_object_get(struct gw_req *r)
{
    struct gw_s3_object *o = gw_s3_object_state(r);
    if (gw_req_param(r, "versionId") != NULL) {
        gw_s3_versions_get(r, gw_s3_object_get_from);
        return;
    }
    gw_s3_object_get_from(r, o->skey, o->skey_len);
}

/* ---- DeleteObject ---------------------------------------------------- */

static void gw_s3_object_on_delete(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_object *o = gw_s3_object_of(r);
    if (res->rc == CN_OK && o->have_old)
        gw_lo_reclaim_segs(r->s3->reclaim, o->skey, o->skey_len, o->old_map.segs,
                           o->old_map.n_segs, r->s3->lo.reclaim_delay_ms, r->id);
    if (!gw_req_release(r))
        return;
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    gw_req_reply_empty(r, 204);
}

/* The tombstone, newer than the record it hides; a large object's chunks
 * are reclaimed after large_object.reclaim_delay. */
static void gw_s3_object_delete_write(struct gw_req *r)
{
    struct gw_s3_object *o = gw_s3_object_of(r);
    gw_req_hold(r);
    gw_store_delete(r->s3->store, o->skey, o->skey_len, r->id,
                    cn_hlc_after(cn_hlc_default(), o->old_ts), gw_s3_object_on_delete, r);
}

static void gw_s3_object_delete_bucket_ok(struct gw_req *r)
{
    if (gw_s3_versions_keeps_chunks(r) || gw_req_param(r, "versionId") != NULL) {
        gw_s3_versions_delete(r);   /* a delete marker, or one version removed */
        return;
    }
    gw_s3_object_read_old(r, gw_s3_object_delete_write);
}

void gw_s3_object_delete(struct gw_req *r)
{
    gw_s3_object_state(r);
    gw_s3_bucket_require(r, gw_s3_object_delete_bucket_ok);
}

/* ---- CopyObject ------------------------------------------------------ */

static void gw_s3_copy_on_put(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_copy *c = GW_REQ_STATE(r, gw_s3_copy);
    /* before the release, which may end the request (as for PUT) */
    if (c->copy != NULL)
        gw_lo_copy_commit(c->copy);
    if (res->rc == CN_OK && c->o.have_old && !gw_s3_versions_keeps_chunks(r))
        gw_lo_reclaim_segs(r->s3->reclaim, c->o.skey, c->o.skey_len, c->o.old_map.segs,
                           c->o.old_map.n_segs, r->s3->lo.reclaim_delay_ms, r->id);
    if (!gw_req_release(r))
        return;
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    struct evbuffer *doc = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    gw_xml_open_ns(&w, "CopyObjectResult", GW_XML_S3_NS);
    gw_xml_elem_time_ms(&w, "LastModified", (int64_t)(c->ts / 1000));
    char q[140];
    snprintf(q, sizeof(q), "\"%s\"", c->etag);
    gw_xml_elem_str(&w, "ETag", q);
    gw_xml_close(&w);
    gw_xml_writer_finish(&w);
    gw_req_reply_xml(r, 200, doc);
    evbuffer_free(doc);
}

/* What a missing source is: AccessDenied to who may not list its bucket
 * (gw_access_source_missing), else NoSuchVersion when a version was
 * named, NoSuchKey otherwise. */
static enum gw_s3_err gw_s3_copy_src_missing_err(struct gw_req *r)
{
    enum gw_s3_err err = gw_access_source_missing(r);
    if (err == GW_S3_NO_SUCH_KEY && r->copy_src.version_id != NULL)
        return GW_S3_NO_SUCH_VERSION;
    return err;
}

/* The source bucket's record was looked up after its key was not found. */
static void gw_s3_copy_on_src_bucket(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    if (res->rc == CN_NOTFOUND)
        gw_req_error(r, GW_S3_NO_SUCH_BUCKET, NULL);
    else if (res->rc != CN_OK)
        gw_s3_reply_store_error(r, res->rc, res->err);
    else if (!gw_bucket_owner_allows_source(r, &res->reply->m))
        gw_req_error(r, GW_S3_ACCESS_DENIED, NULL);
    else
        gw_req_error(r, gw_s3_copy_src_missing_err(r), NULL);
}

/* The source is missing: S3 answers NoSuchBucket when its bucket does not
 * exist, else NoSuchKey. The destination bucket is known to exist. */
static void gw_s3_copy_src_missing(struct gw_req *r, struct gw_s3_copy *c)
{
    if (c->src_bucket_len == r->bucket_len &&
        memcmp(c->src_bucket, r->bucket, r->bucket_len) == 0) {
        gw_req_error(r, gw_s3_copy_src_missing_err(r), NULL);
        return;
    }
    char key[GW_KEYS_MAX];
    size_t n = gw_keys_bucket(key, c->src_bucket, c->src_bucket_len);
    gw_req_hold(r);
    gw_store_head(r->s3->store, key, n, gw_s3_copy_on_src_bucket, r);
}

/* Writes the destination record: the source's bytes (o.blob) with etag, or
 * for a chunked source the chunk map of the copy with the etag and osize. */
static void gw_s3_copy_write(struct gw_req *r)
{
    struct gw_s3_copy *c = GW_REQ_STATE(r, gw_s3_copy);
    c->ts = cn_hlc_after(cn_hlc_default(), c->o.old_ts);
    struct gw_store_record rec = {
        .key = c->o.skey, .key_len = c->o.skey_len,
        .etag = c->etag, .etag_len = strlen(c->etag),
        .meta = c->o.meta, .meta_len = c->o.meta_len,
        .ver = r->id, .ts = c->ts,
    };
    if (c->copy != NULL) {
        struct gw_lo_seg seg;
        gw_lo_copy_seg(c->copy, &seg);
        c->o.blob = gw_lo_map_parent(&seg, 1, 0, &rec.osize);
        rec.has_osize = 1;
    }
    gw_req_hold(r);
    if (c->o.cw.armed)   /* If-Match / If-None-Match on the destination, as PutObject */
        gw_s3_versions_put_with(r, &rec, c->o.blob, gw_s3_copy_on_put, gw_s3_object_cond_put);
    else
        gw_s3_versions_put(r, &rec, c->o.blob, gw_s3_copy_on_put, r);
}

static void gw_s3_copy_on_copied(int rc, const char *err, void *arg)
{
    struct gw_req *r = arg;
    struct gw_s3_copy *c = GW_REQ_STATE(r, gw_s3_copy);
    if (rc != CN_OK) {
        gw_s3_reply_store_error(r, rc, err);
        return;
    }
    snprintf(c->etag, sizeof(c->etag), "%s", gw_lo_copy_md5(c->copy));
    gw_s3_object_read_old(r, gw_s3_copy_write);
}

/* A chunked source: its chunks are copied into new ones (lo_copy.c); the
 * copy's ETag is the MD5 of the bytes, as for any single-PUT object. */
static void gw_s3_copy_large(struct gw_req *r, const struct msg *m, uint64_t size)
{
    struct gw_s3_copy *c = GW_REQ_STATE(r, gw_s3_copy);
    struct gw_lo_map map;
    if (gw_lo_map_decode(&map, m->payload.ptr, m->payload.len) != CN_OK || map.size != size) {
        gw_lo_map_fini(&map);
        gw_req_error(r, GW_S3_INTERNAL_ERROR, "The source object's chunk map is damaged.");
        return;
    }
    if (size > r->s3->opts.put_limit) {
        gw_lo_map_fini(&map);
        gw_req_error(r, GW_S3_INVALID_REQUEST, "The specified copy source is larger than the "
                     "maximum allowable size for a copy source.");
        return;
    }
    c->copy = gw_lo_copy_start(&r->s3->lo, c->src_skey, c->src_skey_len, &map, 0, size,
                               c->o.skey, c->o.skey_len, r->id, r->id, gw_s3_copy_on_copied, r);
}

static void gw_s3_copy_bucket_ok(struct gw_req *r);

static void gw_s3_copy_on_get(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    struct gw_s3_copy *c = GW_REQ_STATE(r, gw_s3_copy);
    if (res->rc == CN_NOTFOUND) {
        gw_s3_copy_src_missing(r, c);
        return;
    }
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    const struct msg *m = &res->reply->m;
    if (gw_bucket_owner_recheck(r, c->src_bucket, c->src_bucket_len, m->ts,
                                gw_s3_copy_bucket_ok))
        return;   /* the source is newer than its bucket's cached owner */
    if (!gw_access_source_allows(r, m->meta.ptr, m->meta.len)) {
        if (!gw_bucket_owner_retry_denied(r, 1, gw_s3_copy_bucket_ok))
            gw_req_error(r, GW_S3_ACCESS_DENIED, NULL);   /* no grant in the source's ACL */
        return;
    }
    if (gw_s3_versions_on_copy_record(r, m))
        return;   /* a delete marker named by id, or no such null version */
    size_t tl;
    uint64_t lsize;
    int large = gw_lo_map_reply_size(m, &tl, &lsize);
    char *acl_meta = NULL;
    size_t acl_meta_len = 0;
    enum gw_s3_err err = gw_s3_object_conditions(r, "x-amz-copy-source-",
                                                 (const char *)m->etag.ptr, tl,
                                                 (time_t)(m->ts / 1000000));
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    size_t dl;
    const char *dir = gw_req_header(r, "x-amz-metadata-directive", &dl);
    int replace = dir != NULL && gw_http_token_eq(dir, dl, "REPLACE");
    if (dir != NULL && !replace && !gw_http_token_eq(dir, dl, "COPY")) {
        gw_req_error(r, GW_S3_INVALID_ARGUMENT, "Unknown metadata directive.");
        return;
    }
    if (!replace && r->copy_src.version_id == NULL && c->src_skey_len == c->o.skey_len &&
        memcmp(c->src_skey, c->o.skey, c->o.skey_len) == 0) {
        gw_req_error(r, GW_S3_INVALID_REQUEST,
                     "This copy request is illegal because it is trying to copy an object to "
                     "itself without changing the object's metadata, storage class, website "
                     "redirect location or encryption attributes.");
        return;
    }
    if (replace) {
        err = gw_s3_object_build_meta(r, &c->o);
        if (err != GW_S3_OK) {
            gw_req_error(r, err, NULL);
            return;
        }
    } else {
        c->o.meta = cn_memdup(m->meta.ptr, m->meta.len);
        c->o.meta_len = m->meta.len;
    }
    /* x-amz-tagging-directive: the source's tags (COPY) or the request's */
    err = gw_s3_tagging_copy_meta(r, replace, m->meta.ptr, m->meta.len, &c->o.meta,
                                  &c->o.meta_len);
    /* the copy's ACL is the request's (x-amz-acl), never the source's */
    if (err == GW_S3_OK && gw_objmeta_replace(c->o.meta, c->o.meta_len, GW_OBJMETA_ACL,
                                              r->acl_text, r->acl_text_len, &acl_meta,
                                              &acl_meta_len) != CN_OK)
        err = GW_S3_METADATA_TOO_LARGE;
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    cn_free(c->o.meta);
    c->o.meta = acl_meta;
    c->o.meta_len = acl_meta_len;
    if (large) {
        gw_s3_copy_large(r, m, lsize);
        return;
    }
    size_t el = CN_MIN(m->etag.len, sizeof(c->etag) - 1);
    memcpy(c->etag, m->etag.ptr, el);
    c->etag[el] = '\0';
    struct evbuffer *data = evbuffer_new();
    gw_storage_reply_move_payload(res->reply, data);
    c->o.blob = gw_blob_from_evbuffer(data);
    gw_s3_object_read_old(r, gw_s3_copy_write);
}

/* Reads the source record at key: the source object's, or the version
 * x-amz-copy-source names (s3_versions.h). */
static void gw_s3_copy_read_src(struct gw_req *r, const char *key, size_t key_len)
{
    struct gw_s3_copy *c = GW_REQ_STATE(r, gw_s3_copy);
    memcpy(c->src_rkey, key, key_len);
    c->src_rkey_len = key_len;
    gw_req_hold(r);
    gw_store_get(r->s3->store, c->src_rkey, c->src_rkey_len, 1, 0, 0, gw_s3_copy_on_get, r);
}

static void gw_s3_copy_bucket_ok(struct gw_req *r)
{
    struct gw_s3_copy *c = GW_REQ_STATE(r, gw_s3_copy);
    if (r->copy_src.version_id != NULL) {
        gw_s3_versions_copy_source(r, gw_s3_copy_read_src);
        return;
    }
    gw_s3_copy_read_src(r, c->src_skey, c->src_skey_len);
}

static void gw_s3_copy_free(struct gw_hstate *hs)
{
    struct gw_s3_copy *c = GW_HSTATE(hs, gw_s3_copy);
    gw_lo_copy_free(c->copy);
    gw_s3_object_fini(&c->o);
    cn_free(c->o.meta);
    gw_blob_unref(c->o.blob);
    cn_free(c);
}

void gw_s3_object_copy(struct gw_req *r)
{
    struct gw_s3_copy *c = cn_calloc(1, sizeof(*c));
    c->o.skey_len = gw_keys_object(c->o.skey, r->bucket, r->bucket_len, r->key, r->key_len);
    gw_req_state_set(r, &c->hs, &gw_s3_copy_hstate);
    c->o.is_put = 1;   /* the destination's If-Match / If-None-Match (conditional copy) */
    /* the router's one parse of x-amz-copy-source (copy_source.h) */
    const struct gw_copy_source *cs = &r->copy_src;
    CN_ASSERT(r->has_copy_src);
    memcpy(c->src_bucket, cs->bucket, cs->bucket_len + 1);
    c->src_bucket_len = cs->bucket_len;
    c->src_skey_len = gw_keys_object(c->src_skey, cs->bucket, cs->bucket_len, cs->key,
                                     cs->key_len);
    if (cs->version_id != NULL &&
        gw_versioning_id_check(cs->version_id, cs->version_id_len) == 0) {
        gw_req_error(r, GW_S3_INVALID_ARGUMENT, "Invalid version id specified");
        return;
    }
    if (gw_s3_object_storage_class(r) != GW_S3_OK) {
        gw_req_error(r, GW_S3_INVALID_STORAGE_CLASS, NULL);
        return;
    }
    if (gw_s3_object_tagging_refused(r))
        return;
    gw_s3_bucket_require(r, gw_s3_copy_bucket_ok);
}
