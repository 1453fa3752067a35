/* The handlers of every named bucket configuration (s3_bucket_cfg.h). */
#include "s3_bucket_cfg.h"

#include "bucket_owner.h"
#include "s3_body.h"
#include "s3_bucket.h"

#include "cn/alloc.h"

static const struct gw_s3_cfg_kind *gw_s3_cfg_kind_of(const struct gw_req *r)
{
    const struct gw_s3_bucket_cfg *c = GW_REQ_STATE(r, gw_s3_bucket_cfg);
    return c->kind;
}

/* Written (or removed): an access input is read afresh by this worker's
 * next request; then the kind's status. */
static void gw_s3_cfg_written(struct gw_req *r, int status)
{
    if (gw_s3_cfg_kind_of(r)->flags & GW_S3_CFG_ACCESS)
        gw_bucket_owner_cache_drop(r->s3->owners, r->bucket, r->bucket_len);
    gw_req_reply_empty(r, status);
}

static void gw_s3_cfg_put_done(struct gw_req *r)
{
    gw_s3_cfg_written(r, gw_s3_cfg_kind_of(r)->put_status);
}

static void gw_s3_cfg_deleted(struct gw_req *r)
{
    gw_s3_cfg_written(r, 204);
}

static void gw_s3_cfg_put_body(struct gw_req *r, enum gw_s3_err err, struct evbuffer *data)
{
    const struct gw_s3_cfg_kind *kind = gw_s3_cfg_kind_of(r);
    if (err == GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED && kind->too_big != GW_S3_OK) {
        gw_req_error(r, kind->too_big, kind->too_big_why);
        return;
    }
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    size_t len = evbuffer_get_length(data);
    const char *body = len > 0 ? (const char *)evbuffer_pullup(data, -1) : "";
    char *value = NULL;
    size_t value_len = 0;
    char why[GW_S3_CFG_WHY_MAX] = "";
    err = kind->encode(r, body, len, &value, &value_len, why);
    if (err != GW_S3_OK) {
        cn_free(value);
        gw_req_error(r, err, why[0] != '\0' ? why : NULL);
        return;
    }
    gw_s3_bucket_cfg_write(r, value, value_len, gw_s3_cfg_put_done);
}

/* The bucket is the caller's (its incarnation noted): read the body. */
static void gw_s3_cfg_put_owned(struct gw_req *r)
{
    const struct gw_s3_cfg_kind *kind = gw_s3_cfg_kind_of(r);
    if (kind->flags & GW_S3_CFG_MD5)
        gw_s3_body_read_integrity(r, kind->max_bytes, GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED,
                                  gw_s3_cfg_put_body);
    else
        gw_s3_body_read(r, kind->max_bytes, GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED,
                        gw_s3_cfg_put_body);
}

void gw_s3_cfg_put(struct gw_req *r, const struct gw_s3_cfg_kind *kind)
{
    gw_s3_bucket_cfg_read_kind(r, kind, gw_s3_cfg_put_owned);
}

static void gw_s3_cfg_get_found(struct gw_req *r)
{
    const struct gw_s3_bucket_cfg *c = GW_REQ_STATE(r, gw_s3_bucket_cfg);
    const struct gw_s3_cfg_kind *kind = c->kind;
    if (c->value == NULL) {
        gw_req_error(r, kind->missing, NULL);
        return;
    }
    struct evbuffer *doc = evbuffer_new();
    enum gw_s3_err err = kind->render(r, c->value, c->value_len, doc);
    if (err != GW_S3_OK)
        gw_req_error(r, err, NULL);
    else if (kind->flags & GW_S3_CFG_JSON)
        gw_req_reply_doc(r, 200, "application/json", doc);
    else
        gw_req_reply_xml(r, 200, doc);
    evbuffer_free(doc);
}

void gw_s3_cfg_get(struct gw_req *r, const struct gw_s3_cfg_kind *kind)
{
    gw_s3_bucket_cfg_read_kind(r, kind, gw_s3_cfg_get_found);
}

static void gw_s3_cfg_delete_found(struct gw_req *r)
{
    const struct gw_s3_bucket_cfg *c = GW_REQ_STATE(r, gw_s3_bucket_cfg);
    if (c->value == NULL)
        gw_req_reply_empty(r, 204);   /* nothing to remove: S3 answers 204 all the same */
    else
        gw_s3_bucket_cfg_write(r, NULL, 0, gw_s3_cfg_deleted);
}

void gw_s3_cfg_delete(struct gw_req *r, const struct gw_s3_cfg_kind *kind)
{
    gw_s3_bucket_cfg_read_kind(r, kind, gw_s3_cfg_delete_found);
}
