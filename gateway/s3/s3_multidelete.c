/* Multi-object delete: parse (xml.c), check each key, send every tombstone
 * at once, answer when the last one is settled. S3 requires Content-MD5 (or
 * an x-amz-checksum-*) on this request; s3_body.c verifies it. */
#include "s3_multidelete.h"

#include <string.h>

#include "access.h"
#include "keys.h"
#include "lo_reclaim.h"
#include "s3_body.h"
#include "s3_bucket.h"
#include "s3_error.h"
#include "s3_names.h"
#include "store.h"
#include "xml.h"

#include "cn/alloc.h"

struct gw_s3_md_item;

struct gw_s3_md {
    struct gw_req *r;
    struct gw_xml_delete d;
    struct gw_s3_md_item *items;
    size_t pending;
};

struct gw_s3_md_item {
    struct gw_s3_md *md;
    enum gw_s3_err err;
};

static void gw_s3_md_free(void *p)
{
    struct gw_s3_md *md = p;
    gw_xml_delete_fini(&md->d);
    cn_free(md->items);
    cn_free(md);
}

static void gw_s3_md_reply(struct gw_req *r)
{
    struct gw_s3_md *md = r->h;
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

static void gw_s3_md_bucket_ok(struct gw_req *r)
{
    struct gw_s3_md *md = r->h;
    md->pending = 1; /* until every send is issued */
    for (size_t i = 0; i < md->d.n_objects; i++) {
        const struct gw_xml_delete_obj *o = &md->d.objects[i];
        enum gw_s3_err err = GW_S3_OK;
        if (gw_s3_names_key_check(o->key, o->key_len, &err) != CN_OK) {
            md->items[i].err = err;
            continue;
        }
        /* buckets are never versioned: "null" is the object itself */
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
    struct gw_s3_md *md = r->h;
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
    r->h = md;
    r->h_free = gw_s3_md_free;
    gw_s3_body_read(r, GW_XML_DELETE_MAX_BYTES, GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED, gw_s3_md_body);
}
