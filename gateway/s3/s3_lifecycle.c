/* The lifecycle configuration operations (s3_lifecycle.h), over
 * s3_bucket.c's read-check-write of the bucket record. */
#include "s3_lifecycle.h"

#include <string.h>

#include "lifecycle.h"
#include "s3_body.h"
#include "s3_bucket.h"
#include "s3_bucket_tagging.h"
#include "s3_error.h"
#include "xml.h"

#include "cn/alloc.h"

static const char gw_s3_lifecycle_cfg[] = "lifecycle";

static void gw_s3_lifecycle_put_done(struct gw_req *r)
{
    gw_req_reply_empty(r, 200);
}

static void gw_s3_lifecycle_deleted(struct gw_req *r)
{
    gw_req_reply_empty(r, 204);
}

static void gw_s3_lifecycle_put_body(struct gw_req *r, enum gw_s3_err err,
                                     struct evbuffer *data)
{
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    size_t len = evbuffer_get_length(data);
    const char *body = len > 0 ? (const char *)evbuffer_pullup(data, -1) : "";
    struct gw_lc lc;
    char why[GW_XML_WHY_MAX];
    if (gw_lc_parse(body, len, &lc, &err, why) != CN_OK) {
        gw_req_error(r, err, why[0] != '\0' ? why : NULL);
        return;
    }
    /* the stored form is the canonical document GET answers */
    struct evbuffer *doc = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    gw_lc_write_xml(&lc, &w);
    gw_lc_fini(&lc);
    if (gw_xml_writer_finish(&w) != CN_OK) {
        evbuffer_free(doc);
        gw_req_error(r, GW_S3_INTERNAL_ERROR, NULL);
        return;
    }
    size_t n = evbuffer_get_length(doc);
    char *value = cn_malloc(n);
    evbuffer_remove(doc, value, n);
    evbuffer_free(doc);
    gw_s3_bucket_cfg_write(r, value, n, gw_s3_lifecycle_put_done);
}

/* The bucket is the caller's: read the rules. */
static void gw_s3_lifecycle_put_owned(struct gw_req *r)
{
    gw_s3_body_read_integrity(r, GW_LC_MAX_BYTES, GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED,
                              gw_s3_lifecycle_put_body);
}

void gw_s3_lifecycle_put(struct gw_req *r)
{
    gw_s3_bucket_cfg_read(r, gw_s3_lifecycle_cfg, gw_s3_lifecycle_put_owned);
}

static void gw_s3_lifecycle_get_found(struct gw_req *r)
{
    const struct gw_s3_bucket_cfg *cfg = r->h;
    if (cfg->value == NULL) {
        gw_req_error(r, GW_S3_NO_SUCH_LIFECYCLE_CONFIGURATION, NULL);
        return;
    }
    struct evbuffer *doc = evbuffer_new();
    evbuffer_add(doc, cfg->value, cfg->value_len);   /* stored as GET answers it */
    gw_req_reply_xml(r, 200, doc);
    evbuffer_free(doc);
}

void gw_s3_lifecycle_get(struct gw_req *r)
{
    gw_s3_bucket_cfg_read(r, gw_s3_lifecycle_cfg, gw_s3_lifecycle_get_found);
}

static void gw_s3_lifecycle_delete_found(struct gw_req *r)
{
    const struct gw_s3_bucket_cfg *cfg = r->h;
    if (cfg->value == NULL)
        gw_req_reply_empty(r, 204);   /* nothing to remove: S3 answers 204 all the same */
    else
        gw_s3_bucket_cfg_write(r, NULL, 0, gw_s3_lifecycle_deleted);
}

void gw_s3_lifecycle_delete(struct gw_req *r)
{
    gw_s3_bucket_cfg_read(r, gw_s3_lifecycle_cfg, gw_s3_lifecycle_delete_found);
}
