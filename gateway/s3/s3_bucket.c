/* Bucket operations over the "b/<bucket>" records (keys.h). A bucket
 * record's owner field is its owner id (so ListBuckets can filter on LIST
 * entries alone; before protocol version 3 it was the record's etag, still
 * read: bucket_meta.h) and its meta the bucket_meta.h map: owner, region, incarnation and
 * named configurations. */
#include "s3_bucket.h"

#include <stdio.h>
#include <string.h>

#include "bucket_meta.h"
#include "bucket_owner.h"
#include "keys.h"
#include "s3_body.h"
#include "s3_bucket_cfg.h"
#include "s3_error.h"
#include "s3_reply.h"
#include "s3_subres.h"
#include "s3_ops.h"
#include "store.h"
#include "versioning.h"
#include "xml.h"

#include "cn/alloc.h"
#include "cn/hlc.h"
#include "cn/log.h"

/* ---- existence ------------------------------------------------------- */

/* The versioning state (versioning.h) the bucket record m holds; OFF when
 * its meta does not decode (the request then goes on as before
 * versioning). */
static int gw_s3_bucket_versioning_of(const struct msg *m)
{
    struct gw_bucket_meta bm;
    if (gw_bucket_meta_decode_record(&bm, m) != CN_OK)
        return GW_VERSIONING_OFF;
    const struct gw_bucket_meta_config *c = gw_bucket_meta_config(&bm, GW_VERSIONING_CFG);
    return c != NULL ? (int)gw_versioning_state_of(c->value, c->value_len) : GW_VERSIONING_OFF;
}

static void gw_s3_bucket_on_require(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    gw_req_cb next = r->then;
    r->then = NULL;
    if (res->rc == CN_NOTFOUND)
        gw_req_error(r, GW_S3_NO_SUCH_BUCKET, NULL);
    else if (res->rc != CN_OK)
        gw_s3_reply_store_error(r, res->rc, res->err);
    else if (!gw_bucket_owner_allows(r, &res->reply->m))
        gw_req_error(r, GW_S3_ACCESS_DENIED, NULL);   /* re-created, or its config changed */
    else {
        r->versioning = gw_s3_bucket_versioning_of(&res->reply->m);
        next(r);
    }
}

void gw_s3_bucket_require(struct gw_req *r, gw_req_cb next)
{
    char key[GW_KEYS_MAX];
    size_t n = gw_keys_bucket(key, r->bucket, r->bucket_len);
    r->then = next;
    gw_req_hold(r);
    gw_store_head(r->s3->store, key, n, gw_s3_bucket_on_require, r);
}

/* ---- named configurations (bucket_meta.h) --------------------------- */

static void gw_s3_bucket_cfg_free(struct gw_hstate *hs);
const struct gw_hstate_type gw_s3_bucket_cfg_hstate = {"gw_s3_bucket_cfg",
                                                        gw_s3_bucket_cfg_free};

static void gw_s3_bucket_cfg_free(struct gw_hstate *hs)
{
    struct gw_s3_bucket_cfg *c = GW_HSTATE(hs, gw_s3_bucket_cfg);
    cn_free(c->value);
    cn_free(c->new_value);
    cn_free(c);
}

/* The checks both reads of a configuration make on the record res read:
 * it exists, decodes, belongs to r's credential. Fills *m (borrowing from
 * res) and returns 1, or answers r and returns 0. */
static int gw_s3_bucket_cfg_record(struct gw_req *r, struct gw_store_result *res,
                                   struct gw_bucket_meta *m)
{
    if (res->rc == CN_NOTFOUND) {
        gw_req_error(r, GW_S3_NO_SUCH_BUCKET, NULL);
        return 0;
    }
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return 0;
    }
    const struct msg *msg = &res->reply->m;
    if (!gw_bucket_owner_allows(r, msg)) {
        gw_req_error(r, GW_S3_ACCESS_DENIED, NULL);
        return 0;
    }
    if (gw_bucket_meta_decode_record(m, msg) != CN_OK) {
        CN_LOGR(CN_LOG_WARN, r->id, "bucket '%s': record meta unreadable", r->bucket);
        gw_req_error(r, GW_S3_INTERNAL_ERROR, NULL);
        return 0;
    }
    return 1;
}

static void gw_s3_bucket_on_cfg_read(struct gw_store_result *res, void *arg);

static void gw_s3_bucket_cfg_read_as(struct gw_req *r, const char *name,
                                     const struct gw_s3_cfg_kind *kind, gw_req_cb next)
{
    struct gw_s3_bucket_cfg *c = cn_calloc(1, sizeof(*c));
    c->name = name;
    c->kind = kind;
    c->next = next;
    gw_req_state_set(r, &c->hs, &gw_s3_bucket_cfg_hstate);
    char key[GW_KEYS_MAX];
    size_t n = gw_keys_bucket(key, r->bucket, r->bucket_len);
    gw_req_hold(r);
    gw_store_head(r->s3->store, key, n, gw_s3_bucket_on_cfg_read, r);
}

static void gw_s3_bucket_on_cfg_read(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    struct gw_s3_bucket_cfg *c = GW_REQ_STATE(r, gw_s3_bucket_cfg);
    struct gw_bucket_meta m;
    if (!gw_s3_bucket_cfg_record(r, res, &m))
        return;
    c->inc = m.inc;
    const struct gw_bucket_meta_config *v = gw_bucket_meta_config(&m, c->name);
    if (v != NULL) {
        c->value = cn_memdup(v->value, v->value_len > 0 ? v->value_len : 1);
        c->value_len = v->value_len;
    }
    c->next(r);
}

void gw_s3_bucket_cfg_read(struct gw_req *r, const char *name, gw_req_cb next)
{
    gw_s3_bucket_cfg_read_as(r, name, NULL, next);
}

void gw_s3_bucket_cfg_read_kind(struct gw_req *r, const struct gw_s3_cfg_kind *kind,
                                gw_req_cb next)
{
    gw_s3_bucket_cfg_read_as(r, kind->name, kind, next);
}

static void gw_s3_bucket_on_cfg_written(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    struct gw_s3_bucket_cfg *c = GW_REQ_STATE(r, gw_s3_bucket_cfg);
    c->next(r);
}

static void gw_s3_bucket_on_cfg_reread(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    struct gw_s3_bucket_cfg *c = GW_REQ_STATE(r, gw_s3_bucket_cfg);
    struct gw_bucket_meta m;
    if (!gw_s3_bucket_cfg_record(r, res, &m))
        return;
    if (!gw_bucket_incarnation_eq(&m.inc, &c->inc)) {
        CN_LOGR(CN_LOG_INFO, r->id, "bucket '%s' was re-created meanwhile: %s not written",
                r->bucket, c->name);
        gw_req_error(r, GW_S3_NO_SUCH_BUCKET, NULL);
        return;
    }
    if (m.region_len == 0) {   /* a legacy record with an empty meta */
        m.region = r->s3->opts.region;
        m.region_len = strlen(m.region);
    }
    char *meta;
    size_t meta_len;
    if (gw_bucket_meta_set_config(&m, c->name, c->new_value, c->new_len) != CN_OK ||
        gw_bucket_meta_encode(&m, &meta, &meta_len) != CN_OK) {
        gw_req_error(r, GW_S3_ENTITY_TOO_LARGE, "The bucket's configurations are too large.");
        return;
    }
    const struct msg *msg = &res->reply->m;
    char key[GW_KEYS_MAX];
    struct gw_store_record rec = {
        .key = key,
        .key_len = gw_keys_bucket(key, r->bucket, r->bucket_len),
        .ver = r->id,
        .ts = cn_hlc_after(cn_hlc_default(), msg->ts),   /* newer than what it was made from */
    };
    /* the owner id, unchanged (ListBuckets reads it), in whichever form it
     * was read: the owner field, or the etag of the form before */
    gw_store_record_from_reply(&rec, msg);
    rec.meta = meta;
    rec.meta_len = meta_len;
    gw_req_hold(r);
    gw_store_put(r->s3->store, &rec, NULL, gw_s3_bucket_on_cfg_written, r);
    cn_free(meta);
}

void gw_s3_bucket_cfg_write(struct gw_req *r, char *value, size_t len, gw_req_cb next)
{
    struct gw_s3_bucket_cfg *c = GW_REQ_STATE(r, gw_s3_bucket_cfg);
    c->new_value = value;
    c->new_len = len;
    c->next = next;
    char key[GW_KEYS_MAX];
    size_t n = gw_keys_bucket(key, r->bucket, r->bucket_len);
    gw_req_hold(r);
    gw_store_head(r->s3->store, key, n, gw_s3_bucket_on_cfg_reread, r);
}

/* ---- HeadBucket ------------------------------------------------------ */

static void gw_s3_bucket_head_found(struct gw_req *r)
{
    gw_req_reply_start(r, 200);
    gw_req_reply_header(r, "x-amz-bucket-region", r->s3->opts.region,
                        strlen(r->s3->opts.region));
    gw_req_reply_send_headers(r, 0);
    gw_req_reply_end(r);
}

void gw_s3_bucket_head(struct gw_req *r)
{
    gw_s3_bucket_require(r, gw_s3_bucket_head_found);
}

/* ---- GetBucketLocation ----------------------------------------------- */

static void gw_s3_bucket_location_found(struct gw_req *r)
{
    struct evbuffer *doc = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    const char *region = r->s3->opts.region;
    /* us-east-1 is the empty constraint, as S3 answers */
    gw_xml_open_ns(&w, "LocationConstraint", GW_XML_S3_NS);
    if (strcmp(region, "us-east-1") != 0)
        evbuffer_add(doc, region, strlen(region));
    gw_xml_close(&w);
    gw_xml_writer_finish(&w);
    gw_req_reply_xml(r, 200, doc);
    evbuffer_free(doc);
}

void gw_s3_bucket_location(struct gw_req *r)
{
    gw_s3_bucket_require(r, gw_s3_bucket_location_found);
}

/* ---- bucket configurations that are never set ----------------------- */

/* The documents of the configurations that have a non-error "not set"
 * answer: what S3 answers for a new bucket (for ownership controls and the
 * public access block: AWS's defaults since April 2023, which are also
 * what the gateway enforces: bucket owner enforced, nothing public). */
static void gw_s3_bucket_doc_logging(struct gw_xml_writer *w)
{
    gw_xml_open_ns(w, "BucketLoggingStatus", GW_XML_S3_NS);
    gw_xml_close(w);
}

static void gw_s3_bucket_doc_accelerate(struct gw_xml_writer *w)
{
    gw_xml_open_ns(w, "AccelerateConfiguration", GW_XML_S3_NS);
    gw_xml_close(w);
}

static void gw_s3_bucket_doc_notification(struct gw_xml_writer *w)
{
    gw_xml_open_ns(w, "NotificationConfiguration", GW_XML_S3_NS);
    gw_xml_close(w);
}

static void gw_s3_bucket_doc_request_payment(struct gw_xml_writer *w)
{
    gw_xml_open_ns(w, "RequestPaymentConfiguration", GW_XML_S3_NS);
    gw_xml_elem_str(w, "Payer", "BucketOwner");
    gw_xml_close(w);
}

/* The sub-resources of gw_s3_bucket_config_get() and what each answers: an
 * error (err), or 200 with doc. Setting any of them is NotImplemented. */
static const struct {
    const char *sub;
    enum gw_s3_err err;
    void (*doc)(struct gw_xml_writer *w);
} gw_s3_bucket_configs[] = {
    {"encryption", GW_S3_SERVER_SIDE_ENCRYPTION_CONFIGURATION_NOT_FOUND, NULL},
    {"website", GW_S3_NO_SUCH_WEBSITE_CONFIGURATION, NULL},
    {"replication", GW_S3_REPLICATION_CONFIGURATION_NOT_FOUND, NULL},
    {"object-lock", GW_S3_OBJECT_LOCK_CONFIGURATION_NOT_FOUND, NULL},
    {"logging", GW_S3_OK, gw_s3_bucket_doc_logging},
    {"accelerate", GW_S3_OK, gw_s3_bucket_doc_accelerate},
    {"notification", GW_S3_OK, gw_s3_bucket_doc_notification},
    {"requestPayment", GW_S3_OK, gw_s3_bucket_doc_request_payment},
};

/* The row of the configuration r's operation reads (its row in
 * gw_s3_ops_table names the sub-resource). */
static size_t gw_s3_bucket_config_row(const struct gw_req *r)
{
    for (size_t i = 0; i < CN_ARRAY_LEN(gw_s3_bucket_configs); i++)
        if (strcmp(gw_s3_bucket_configs[i].sub, r->op->param) == 0)
            return i;
    CN_ASSERT(!"a bucket configuration row without an answer");
    return 0;
}

static void gw_s3_bucket_config_found(struct gw_req *r)
{
    size_t row = gw_s3_bucket_config_row(r);
    if (gw_s3_bucket_configs[row].err != GW_S3_OK) {
        gw_req_error(r, gw_s3_bucket_configs[row].err, NULL);
        return;
    }
    struct evbuffer *doc = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    gw_s3_bucket_configs[row].doc(&w);
    gw_xml_writer_finish(&w);
    gw_req_reply_xml(r, 200, doc);
    evbuffer_free(doc);
}

void gw_s3_bucket_config_get(struct gw_req *r)
{
    gw_s3_bucket_require(r, gw_s3_bucket_config_found);
}

/* ---- CreateBucket ---------------------------------------------------- */

/* CreateBucket's 200: the bucket's Location. */
static void gw_s3_bucket_reply_created(struct gw_req *r)
{
    gw_req_reply_start(r, 200);
    gw_req_reply_headerf(r, "Location", "/%s", r->bucket);
    gw_req_reply_send_headers(r, 0);
    gw_req_reply_end(r);
}

static void gw_s3_bucket_on_created(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    gw_s3_bucket_reply_created(r);
}

static void gw_s3_bucket_on_create_head(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    if (res->rc == CN_OK) {
        const struct msg *m = &res->reply->m;
        const char *owner = r->auth.cred->owner_id;
        size_t olen;
        const char *rec_owner = gw_bucket_meta_record_owner(m, &olen);
        int mine = olen == strlen(owner) && memcmp(rec_owner, owner, olen) == 0;
        /* S3 answers its owner's re-create 200 in us-east-1 (legacy) and
         * BucketAlreadyOwnedByYou in every other region; the bucket is
         * left as it is */
        if (mine && strcmp(r->s3->opts.region, "us-east-1") == 0) {
            gw_s3_bucket_reply_created(r);
            return;
        }
        gw_req_error(r, mine ? GW_S3_BUCKET_ALREADY_OWNED_BY_YOU : GW_S3_BUCKET_ALREADY_EXISTS,
                     NULL);
        return;
    }
    if (res->rc != CN_NOTFOUND) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    char key[GW_KEYS_MAX];
    const char *region = r->s3->opts.region, *owner = r->auth.cred->owner_id;
    struct gw_bucket_meta bm = {
        .region = region,
        .region_len = strlen(region),
        .owner = owner,
        .owner_len = strlen(owner),
        .inc = gw_bucket_incarnation_new(),
    };
    char pab[5];
    enum gw_s3_err aerr = gw_s3_acl_create_configs(r, &bm, pab);
    if (aerr != GW_S3_OK) {
        gw_req_error(r, aerr, "Invalid x-amz-object-ownership header");
        return;
    }
    char *meta;
    size_t meta_len;
    if (gw_bucket_meta_encode(&bm, &meta, &meta_len) != CN_OK) {
        gw_req_error(r, GW_S3_INTERNAL_ERROR, NULL);   /* an owner or region past the limits */
        return;
    }
    struct gw_store_record rec = {
        .key = key,
        .key_len = gw_keys_bucket(key, r->bucket, r->bucket_len),
        .owner = owner,   /* LIST entries carry it: ListBuckets filters on it */
        .owner_len = strlen(owner),
        .meta = meta,
        .meta_len = meta_len,
        .ver = r->id,
        .ts = bm.inc.created_us,
    };
    gw_req_hold(r);
    gw_store_put(r->s3->store, &rec, NULL, gw_s3_bucket_on_created, r);
    cn_free(meta);   /* gw_store_put() encoded rec before returning */
}

/* The body (an optional CreateBucketConfiguration) has been read. */
static void gw_s3_bucket_create_body(struct gw_req *r, enum gw_s3_err err, struct evbuffer *data)
{
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    char location[GW_XML_LOCATION_MAX + 1];
    size_t len = evbuffer_get_length(data);
    const char *body = len > 0 ? (const char *)evbuffer_pullup(data, -1) : "";
    if (gw_xml_parse_create_bucket(body, len, location, &err) != CN_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    const char *region = r->s3->opts.region;
    if (location[0] != '\0' && strcmp(location, region) != 0) {
        gw_req_error(r, GW_S3_ILLEGAL_LOCATION_CONSTRAINT, NULL);
        return;
    }
    char key[GW_KEYS_MAX];
    size_t n = gw_keys_bucket(key, r->bucket, r->bucket_len);
    gw_req_hold(r);
    gw_store_head(r->s3->store, key, n, gw_s3_bucket_on_create_head, r);
}

void gw_s3_bucket_create(struct gw_req *r)
{
    gw_s3_body_read(r, GW_XML_CREATE_BUCKET_MAX_BYTES, GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED,
                    gw_s3_bucket_create_body);
}

/* ---- DeleteBucket ---------------------------------------------------- */

static void gw_s3_bucket_on_deleted(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    gw_bucket_owner_cache_drop(r->s3->owners, r->bucket, r->bucket_len);
    gw_req_reply_empty(r, 204);
}

/* The bucket's versions and delete markers (versioning.h), listed once it
 * holds no object: as in S3 a bucket is empty only without them too, so a
 * name used again never shows the old bucket's versions. */
static void gw_s3_bucket_on_delete_list(struct gw_store_list_result *res, void *arg);

/* A listing of one entry at most came back for DeleteBucket: returns 1 when
 * it found nothing, else answers r (BucketNotEmpty, a store error) and
 * returns 0. */
static int gw_s3_bucket_delete_listed_none(struct gw_req *r, struct gw_store_list_result *res)
{
    if (!gw_req_release(r))
        return 0;
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return 0;
    }
    if (res->n_ents > 0) {
        gw_req_error(r, GW_S3_BUCKET_NOT_EMPTY, NULL);
        return 0;
    }
    return 1;
}

static void gw_s3_bucket_on_delete_objects(struct gw_store_list_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_s3_bucket_delete_listed_none(r, res))
        return;
    char prefix[GW_VERSIONING_KEY_MAX];
    size_t n = gw_versioning_bucket_prefix(prefix, r->bucket, r->bucket_len);
    gw_req_hold(r);
    gw_store_list(r->s3->store, prefix, n, NULL, 0, 1, gw_s3_bucket_on_delete_list, r);
}

static void gw_s3_bucket_on_delete_list(struct gw_store_list_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_s3_bucket_delete_listed_none(r, res))
        return;
    char key[GW_KEYS_MAX];
    size_t n = gw_keys_bucket(key, r->bucket, r->bucket_len);
    gw_req_hold(r);
    gw_store_delete(r->s3->store, key, n, r->id, cn_hlc_now(cn_hlc_default()),
                    gw_s3_bucket_on_deleted, r);
}

static void gw_s3_bucket_delete_found(struct gw_req *r)
{
    char prefix[GW_KEYS_MAX];
    size_t n = gw_keys_object_prefix(prefix, r->bucket, r->bucket_len);
    gw_req_hold(r);
    gw_store_list(r->s3->store, prefix, n, NULL, 0, 1, gw_s3_bucket_on_delete_objects, r);
}

void gw_s3_bucket_delete(struct gw_req *r)
{
    gw_s3_bucket_require(r, gw_s3_bucket_delete_found);
}

/* ---- ListBuckets ----------------------------------------------------- */

struct gw_s3_bucket_lister {
    struct gw_hstate hs;
    struct evbuffer *doc;
    struct gw_xml_writer w;
    char after[GW_KEYS_MAX];
    size_t after_len;
};

static void gw_s3_bucket_lister_free(struct gw_hstate *hs);
static const struct gw_hstate_type gw_s3_bucket_lister_hstate = {"gw_s3_bucket_lister",
                                                                  gw_s3_bucket_lister_free};

static void gw_s3_bucket_lister_free(struct gw_hstate *hs)
{
    struct gw_s3_bucket_lister *l = GW_HSTATE(hs, gw_s3_bucket_lister);
    evbuffer_free(l->doc);
    cn_free(l);
}

static void gw_s3_bucket_list_page(struct gw_req *r);

static void gw_s3_bucket_on_list(struct gw_store_list_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    struct gw_s3_bucket_lister *l = GW_REQ_STATE(r, gw_s3_bucket_lister);
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    const char *owner = r->auth.cred->owner_id;
    for (uint32_t i = 0; i < res->n_ents; i++) {
        const struct gw_store_entry *e = &res->ents[i];
        /* its owner field, or the etag of a record of the form before */
        if (strcmp(e->has_owner ? e->owner : e->etag, owner) != 0 || e->key_len <= 2)
            continue;
        gw_xml_open(&l->w, "Bucket");
        gw_xml_elem(&l->w, "Name", e->key + 2, e->key_len - 2);
        gw_xml_elem_time_ms(&l->w, "CreationDate", (int64_t)(e->ts / 1000));
        gw_xml_close(&l->w);
    }
    if (res->more && res->n_ents > 0) {
        const struct gw_store_entry *last = &res->ents[res->n_ents - 1];
        memcpy(l->after, last->key, last->key_len);
        l->after_len = last->key_len;
        gw_s3_bucket_list_page(r);
        return;
    }
    gw_xml_close(&l->w); /* Buckets */
    gw_xml_open(&l->w, "Owner");
    gw_xml_elem_str(&l->w, "ID", owner);
    gw_xml_elem_str(&l->w, "DisplayName", r->auth.cred->display_name);
    gw_xml_close(&l->w);
    gw_xml_close(&l->w); /* ListAllMyBucketsResult */
    if (gw_xml_writer_finish(&l->w) != CN_OK) {
        gw_req_error(r, GW_S3_INTERNAL_ERROR, NULL);
        return;
    }
    gw_req_reply_xml(r, 200, l->doc);
}

static void gw_s3_bucket_list_page(struct gw_req *r)
{
    struct gw_s3_bucket_lister *l = GW_REQ_STATE(r, gw_s3_bucket_lister);
    gw_req_hold(r);
    gw_store_list(r->s3->store, "b/", 2, l->after, l->after_len, 1000,
                  gw_s3_bucket_on_list, r);
}

void gw_s3_bucket_list_all(struct gw_req *r)
{
    struct gw_s3_bucket_lister *l = cn_calloc(1, sizeof(*l));
    l->doc = evbuffer_new();
    gw_req_state_set(r, &l->hs, &gw_s3_bucket_lister_hstate);
    gw_xml_writer_init(&l->w, l->doc);
    gw_xml_open_ns(&l->w, "ListAllMyBucketsResult", GW_XML_S3_NS);
    gw_xml_open(&l->w, "Buckets");
    gw_s3_bucket_list_page(r);
}
