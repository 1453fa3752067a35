/* Bucket tags (s3_bucket_tagging.h): the body parsed by xml.c into a
 * 50-tag set, stored in the query form tagset.c writes for object tags. */
#include "s3_bucket_tagging.h"

#include <string.h>

#include "s3_body.h"
#include "s3_bucket.h"
#include "s3_error.h"
#include "tagset.h"
#include "xml.h"

#include "cn/alloc.h"
#include "cn/log.h"

static const char gw_s3_bucket_tagging_cfg[] = "tagging";

static void gw_s3_bucket_tagging_done(struct gw_req *r)
{
    gw_req_reply_empty(r, 204);
}

static void gw_s3_bucket_tagging_put_body(struct gw_req *r, enum gw_s3_err err,
                                          struct evbuffer *data)
{
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    size_t len = evbuffer_get_length(data);
    const char *body = len > 0 ? (const char *)evbuffer_pullup(data, -1) : "";
    struct gw_tagset *set = gw_tagset_new(GW_TAGSET_BUCKET_MAX);
    const char *why = NULL;
    if (gw_xml_parse_tagging(body, len, set, &err, &why) != CN_OK) {
        gw_tagset_free(set);
        gw_req_error(r, err, why);
        return;
    }
    char *enc = NULL;
    size_t enc_len = 0;
    if (set->n > 0) {
        enc = cn_malloc(GW_TAGSET_ENCODED_MAX_OF(GW_TAGSET_BUCKET_MAX));
        enc_len = gw_tagset_encode(set, enc, GW_TAGSET_ENCODED_MAX_OF(GW_TAGSET_BUCKET_MAX));
    }
    gw_tagset_free(set);
    gw_s3_bucket_cfg_write(r, enc, enc_len, gw_s3_bucket_tagging_done);
}

/* The bucket is the caller's: read the TagSet. */
static void gw_s3_bucket_tagging_put_owned(struct gw_req *r)
{
    gw_s3_body_read_integrity(r, GW_XML_TAGGING_MAX_BYTES, GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED,
                              gw_s3_bucket_tagging_put_body);
}

void gw_s3_bucket_tagging_put(struct gw_req *r)
{
    gw_s3_bucket_cfg_read(r, gw_s3_bucket_tagging_cfg, gw_s3_bucket_tagging_put_owned);
}

static void gw_s3_bucket_tagging_get_found(struct gw_req *r)
{
    const struct gw_s3_bucket_cfg *cfg = r->h;
    if (cfg->value == NULL || cfg->value_len == 0) {
        gw_req_error(r, GW_S3_NO_SUCH_TAG_SET, NULL);
        return;
    }
    struct gw_tagset *set = gw_tagset_new(GW_TAGSET_BUCKET_MAX);
    const char *why;
    if (gw_tagset_parse_query(set, cfg->value, cfg->value_len, &why) != GW_S3_OK) {
        gw_tagset_free(set);
        CN_LOGR(CN_LOG_WARN, r->id, "bucket '%s': stored tags unreadable", r->bucket);
        gw_req_error(r, GW_S3_INTERNAL_ERROR, NULL);
        return;
    }
    struct evbuffer *doc = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    gw_tagset_write_xml(set, &w);
    gw_tagset_free(set);
    if (gw_xml_writer_finish(&w) != CN_OK)
        gw_req_error(r, GW_S3_INTERNAL_ERROR, NULL);
    else
        gw_req_reply_xml(r, 200, doc);
    evbuffer_free(doc);
}

void gw_s3_bucket_tagging_get(struct gw_req *r)
{
    gw_s3_bucket_cfg_read(r, gw_s3_bucket_tagging_cfg, gw_s3_bucket_tagging_get_found);
}

static void gw_s3_bucket_tagging_delete_found(struct gw_req *r)
{
    const struct gw_s3_bucket_cfg *cfg = r->h;
    if (cfg->value == NULL)
        gw_req_reply_empty(r, 204);   /* nothing to remove: S3 answers 204 all the same */
    else
        gw_s3_bucket_cfg_write(r, NULL, 0, gw_s3_bucket_tagging_done);
}

void gw_s3_bucket_tagging_delete(struct gw_req *r)
{
    gw_s3_bucket_cfg_read(r, gw_s3_bucket_tagging_cfg, gw_s3_bucket_tagging_delete_found);
}
