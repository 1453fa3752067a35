/* Bucket tags (s3_bucket_tagging.h): the body parsed by xml.c into a
 * 50-tag set, stored in the query form tagset.c writes for object tags. */
#include "s3_bucket_tagging.h"

#include "s3_bucket_cfg.h"
#include "tagset.h"
#include "xml.h"

#include "cn/alloc.h"
#include "cn/log.h"

static enum gw_s3_err gw_s3_bucket_tagging_encode(struct gw_req *r, const char *body, size_t len,
                                                  char **value, size_t *value_len,
                                                  char why[GW_S3_CFG_WHY_MAX])
{
    (void)r;
    struct gw_tagset *set = gw_tagset_new(GW_TAGSET_BUCKET_MAX);
    const char *msg = NULL;
    enum gw_s3_err err;
    if (gw_xml_parse_tagging(body, len, set, &err, &msg) != CN_OK) {
        gw_tagset_free(set);
        snprintf(why, GW_S3_CFG_WHY_MAX, "%s", msg != NULL ? msg : "");
        return err;
    }
    if (set->n > 0) {   /* none: the tags are removed */
        *value = cn_malloc(GW_TAGSET_ENCODED_MAX_OF(GW_TAGSET_BUCKET_MAX));
        *value_len =
            gw_tagset_encode(set, *value, GW_TAGSET_ENCODED_MAX_OF(GW_TAGSET_BUCKET_MAX));
    }
    gw_tagset_free(set);
    return GW_S3_OK;
}

static enum gw_s3_err gw_s3_bucket_tagging_render(struct gw_req *r, const char *value,
                                                  size_t len, struct evbuffer *doc)
{
    if (len == 0)
        return GW_S3_NO_SUCH_TAG_SET;
    struct gw_tagset *set = gw_tagset_new(GW_TAGSET_BUCKET_MAX);
    const char *why;
    if (gw_tagset_parse_query(set, value, len, &why) != GW_S3_OK) {
        gw_tagset_free(set);
        CN_LOGR(CN_LOG_WARN, r->id, "bucket '%s': stored tags unreadable", r->bucket);
        return GW_S3_INTERNAL_ERROR;
    }
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    gw_tagset_write_xml(set, &w);
    gw_tagset_free(set);
    return gw_xml_writer_finish(&w) == CN_OK ? GW_S3_OK : GW_S3_INTERNAL_ERROR;
}

static const struct gw_s3_cfg_kind gw_s3_bucket_tagging_kind = {
    .name = "tagging",
    .flags = GW_S3_CFG_MD5,
    .max_bytes = GW_XML_TAGGING_MAX_BYTES,
    .put_status = 204,
    .missing = GW_S3_NO_SUCH_TAG_SET,
    .encode = gw_s3_bucket_tagging_encode,
    .render = gw_s3_bucket_tagging_render,
};

void gw_s3_bucket_tagging_put(struct gw_req *r)
{
    gw_s3_cfg_put(r, &gw_s3_bucket_tagging_kind);
}

void gw_s3_bucket_tagging_get(struct gw_req *r)
{
    gw_s3_cfg_get(r, &gw_s3_bucket_tagging_kind);
}

void gw_s3_bucket_tagging_delete(struct gw_req *r)
{
    gw_s3_cfg_delete(r, &gw_s3_bucket_tagging_kind);
}
