/* The lifecycle configuration operations (s3_lifecycle.h), as a kind of
 * s3_bucket_cfg.h's bucket configurations. */
#include "s3_lifecycle.h"

#include "lifecycle.h"
#include "s3_bucket_cfg.h"
#include "xml.h"

#include "cn/alloc.h"

/* The stored form is the canonical document GET answers. */
static enum gw_s3_err gw_s3_lifecycle_encode(struct gw_req *r, const char *body, size_t len,
                                             char **value, size_t *value_len,
                                             char why[GW_S3_CFG_WHY_MAX])
{
    (void)r;
    struct gw_lc lc;
    char msg[GW_XML_WHY_MAX] = "";
    enum gw_s3_err err;
    if (gw_lc_parse(body, len, &lc, &err, msg) != CN_OK) {
        snprintf(why, GW_S3_CFG_WHY_MAX, "%s", msg);
        return err;
    }
    struct evbuffer *doc = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    gw_lc_write_xml(&lc, &w);
    gw_lc_fini(&lc);
    if (gw_xml_writer_finish(&w) != CN_OK) {
        evbuffer_free(doc);
        return GW_S3_INTERNAL_ERROR;
    }
    size_t n = evbuffer_get_length(doc);
    *value = cn_malloc(n > 0 ? n : 1);
    *value_len = n;
    evbuffer_remove(doc, *value, n);
    evbuffer_free(doc);
    return GW_S3_OK;
}

static enum gw_s3_err gw_s3_lifecycle_render(struct gw_req *r, const char *value, size_t len,
                                             struct evbuffer *doc)
{
    (void)r;
    evbuffer_add(doc, value, len);   /* stored as GET answers it */
    return GW_S3_OK;
}

static const struct gw_s3_cfg_kind gw_s3_lifecycle_kind = {
    .name = "lifecycle",
    .flags = GW_S3_CFG_MD5,
    .max_bytes = GW_LC_MAX_BYTES,
    .put_status = 200,
    .missing = GW_S3_NO_SUCH_LIFECYCLE_CONFIGURATION,
    .encode = gw_s3_lifecycle_encode,
    .render = gw_s3_lifecycle_render,
};

void gw_s3_lifecycle_put(struct gw_req *r)
{
    gw_s3_cfg_put(r, &gw_s3_lifecycle_kind);
}

void gw_s3_lifecycle_get(struct gw_req *r)
{
    gw_s3_cfg_get(r, &gw_s3_lifecycle_kind);
}

void gw_s3_lifecycle_delete(struct gw_req *r)
{
    gw_s3_cfg_delete(r, &gw_s3_lifecycle_kind);
}
