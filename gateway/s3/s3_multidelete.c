/* Multi-object delete: parse (xml.c), check each key, send every tombstone
 * at once, answer when the last one is settled. S3 requires Content-MD5 (or
 * an x-amz-checksum-*) on this request; s3_body.c verifies it. */
#include "s3_multidelete.h"

#include <stdio.h>
#include <string.h>

#include "access.h"
#include "keys.h"
#include "lo_reclaim.h"
#include "s3_body.h"
#include "s3_bucket.h"
#include "s3_error.h"
#include "s3_names.h"
#include "s3_versions.h"
#include "store.h"
#include "versioning.h"
#include "xml.h"

#include "cn/alloc.h"

struct gw_s3_md_item;

struct gw_s3_md {
    struct gw_hstate hs;          /* r->state (request.h) */
    struct gw_req *r;
    struct gw_xml_delete d;
    struct gw_s3_md_item *items;
    size_t pending;
    size_t next;                  /* a versioned bucket's entries go one by one */
};

struct gw_s3_md_item {
    struct gw_s3_md *md;
    enum gw_s3_err err;
    int marker;                   /* a delete marker was written or removed */
    char marker_id[33];           /* its version id */
};

static void gw_s3_md_free(struct gw_hstate *hs);
static const struct gw_hstate_type gw_s3_md_hstate = {"gw_s3_md", gw_s3_md_free};

static void gw_s3_md_free(struct gw_hstate *hs)
{
    struct gw_s3_md *md = GW_HSTATE(hs, gw_s3_md);
    gw_xml_delete_fini(&md->d);
    cn_free(md->items);
    cn_free(md);
}

static void gw_s3_md_reply(struct gw_req *r)
{
    struct gw_s3_md *md = GW_REQ_STATE(r, gw_s3_md);
    struct evbuffer *doc = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    gw_xml_open_ns(&w, "DeleteResult", GW_XML_S3_NS);
    for (size_t i = 0; i < md->d.n_objects; i++) {
        const struct gw_xml_delete_obj *o = &md->d.objects[i];
        enum gw_s3_err err = md->items[i].err;
        if (err == GW_S3_OK) {
            if (md->d.quiet)
                continue;
            gw_xml_open(&w, "Deleted");
            gw_xml_elem(&w, "Key", o->key, o->key_len);
            if (o->version_id != NULL)
                gw_xml_elem(&w, "VersionId", o->version_id, o->version_id_len);
            if (md->items[i].marker) {
                gw_xml_elem_bool(&w, "DeleteMarker", 1);
                gw_xml_elem_str(&w, "DeleteMarkerVersionId", md->items[i].marker_id);
            }
            gw_xml_close(&w);
            continue;
        }
        gw_xml_open(&w, "Error");
        gw_xml_elem(&w, "Key", o->key, o->key_len);
        if (o->version_id != NULL)
            gw_xml_elem(&w, "VersionId", o->version_id, o->version_id_len);
        gw_xml_elem_str(&w, "Code", gw_s3_error_code(err));
        gw_xml_elem_str(&w, "Message", gw_s3_error_message(err));
        gw_xml_close(&w);
    }
    gw_xml_close(&w);
    if (gw_xml_writer_finish(&w) != CN_OK)
        gw_req_error(r, GW_S3_INTERNAL_ERROR, NULL);
    else
        gw_req_reply_xml(r, 200, doc);
    evbuffer_free(doc);
}

static void gw_s3_md_on_delete(struct gw_store_result *res, void *arg)
{
    struct gw_s3_md_item *it = arg;
    struct gw_s3_md *md = it->md;
    struct gw_req *r = md->r;
    if (res->rc != CN_OK)
        it->err = gw_s3_error_from_store(res->rc);
    md->pending--;
    if (!gw_req_release(r))
        return;
    if (md->pending == 0)
        gw_s3_md_reply(r);
}

static void gw_s3_md_versioned_next(struct gw_req *r);

/* A versioned entry is settled: recorded, then the next. */
static void gw_s3_md_versioned_done(struct gw_req *r, int rc, const char *err,
                                    const char *version_id, int delete_marker)
{
    (void)err;
    struct gw_s3_md *md = GW_REQ_STATE(r, gw_s3_md);
    struct gw_s3_md_item *it = &md->items[md->next++];
    if (rc != CN_OK) {
        it->err = gw_s3_error_from_store(rc);
    } else if (delete_marker) {
        it->marker = 1;
        snprintf(it->marker_id, sizeof(it->marker_id), "%s", version_id);
    }
    gw_s3_md_versioned_next(r);
}

/* The entries of a bucket with a versioning state, one at a time through
 * s3_versions.c (each is DeleteObject's delete marker or version removal,
 * several records and reads; one at a time keeps a 1000-key request from
 * flooding the nodes), then the answer. */
static void gw_s3_md_versioned_next(struct gw_req *r)
{
    struct gw_s3_md *md = GW_REQ_STATE(r, gw_s3_md);
    while (md->next < md->d.n_objects) {
        const struct gw_xml_delete_obj *o = &md->d.objects[md->next];
        enum gw_s3_err err = GW_S3_OK;
        if (gw_s3_names_key_check(o->key, o->key_len, &err) != CN_OK) {
            md->items[md->next++].err = err;
            continue;
        }
        if (o->version_id != NULL &&
            gw_versioning_id_check(o->version_id, o->version_id_len) == 0) {
            md->items[md->next++].err = GW_S3_NO_SUCH_VERSION;
            continue;
        }
        gw_s3_versions_delete_key(r, o->key, o->key_len, o->version_id, o->version_id_len,
                                  gw_s3_md_versioned_done);
        return;
    }
    gw_s3_md_reply(r);
}

static void gw_s3_md_bucket_ok(struct gw_req *r)
{
    struct gw_s3_md *md = GW_REQ_STATE(r, gw_s3_md);
    if (r->versioning != 0) {
        gw_s3_md_versioned_next(r);
        return;
    }
    md->pending = 1; /* until every send is issued */
    for (size_t i = 0; i < md->d.n_objects; i++) {
        const struct gw_xml_delete_obj *o = &md->d.objects[i];
        enum gw_s3_err err = GW_S3_OK;
        if (gw_s3_names_key_check(o->key, o->key_len, &err) != CN_OK) {
            md->items[i].err = err;
            continue;
        }
        /* a never versioned bucket: "null" is the object itself */
        if (o->version_id != NULL &&
            (o->version_id_len != 4 || memcmp(o->version_id, "null", 4) != 0)) {
            md->items[i].err = GW_S3_NO_SUCH_VERSION;
            continue;
        }
        /* the router left the decision to each key (bucket_owner.c) */
        if (r->access_cfg == NULL ||
            gw_access_decide(r, r->access_cfg, "s3:DeleteObject", r->bucket, r->bucket_len,
                             o->key, o->key_len, 0, NULL) != GW_ACCESS_ALLOW) {
            md->items[i].err = GW_S3_ACCESS_DENIED;
            continue;
        }
        char skey[GW_KEYS_MAX];
        size_t n = gw_keys_object(skey, r->bucket, r->bucket_len, o->key, o->key_len);
        md->pending++;
        gw_req_hold(r);
        /* reads each record first so a large object's chunks are reclaimed */
        gw_lo_reclaim_delete_object(r->s3->reclaim, skey, n, r->id,
                                    r->s3->lo.reclaim_delay_ms, gw_s3_md_on_delete,
                                    &md->items[i]);
    }
    if (--md->pending == 0)
        gw_s3_md_reply(r);
}

static void gw_s3_md_body(struct gw_req *r, enum gw_s3_err err, struct evbuffer *data)
{
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    struct gw_s3_md *md = GW_REQ_STATE(r, gw_s3_md);
    size_t len = evbuffer_get_length(data);
    const char *body = len > 0 ? (const char *)evbuffer_pullup(data, -1) : "";
    if (gw_xml_parse_delete(body, len, &md->d, &err) != CN_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    md->items = cn_calloc(md->d.n_objects, sizeof(*md->items));
    for (size_t i = 0; i < md->d.n_objects; i++)
        md->items[i].md = md;
    gw_s3_bucket_require(r, gw_s3_md_bucket_ok);
}

void gw_s3_multidelete(struct gw_req *r)
{
    struct gw_s3_md *md = cn_calloc(1, sizeof(*md));
    md->r = r;
    gw_req_state_set(r, &md->hs, &gw_s3_md_hstate);
    gw_s3_body_read(r, GW_XML_DELETE_MAX_BYTES, GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED, gw_s3_md_body);
}
