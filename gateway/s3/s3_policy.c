/* Policy, policy status, ownership controls and public access block
 * handlers (s3_policy.h): kinds of s3_bucket_cfg.h's configurations, each
 * an access input, so every write drops this worker's cached access config
 * of the bucket and its next request decides on the new one. */
#include "s3_policy.h"

#include <string.h>

#include "access.h"
#include "acl.h"
#include "policy.h"
#include "s3_bucket.h"
#include "s3_bucket_cfg.h"
#include "xml.h"

#include "cn/alloc.h"
#include "cn/log.h"

/* Appends the XML document write(w, arg) builds to doc. */
static enum gw_s3_err gw_s3_policy_doc(struct evbuffer *doc,
                                       void (*write)(struct gw_xml_writer *w, const void *arg),
                                       const void *arg)
{
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    write(&w, arg);
    return gw_xml_writer_finish(&w) == CN_OK ? GW_S3_OK : GW_S3_INTERNAL_ERROR;
}

/* ---- ?policy ------------------------------------------------------------ */

static enum gw_s3_err gw_s3_policy_encode(struct gw_req *r, const char *body, size_t len,
                                          char **value, size_t *value_len,
                                          char why[GW_S3_CFG_WHY_MAX])
{
    char msg[GW_POLICY_WHY_MAX];
    struct gw_policy *p = gw_policy_parse(body, len, r->bucket, msg);
    if (p == NULL) {
        snprintf(why, GW_S3_CFG_WHY_MAX, "%s", msg);
        return GW_S3_MALFORMED_POLICY;
    }
    int pub = gw_policy_is_public(p);
    gw_policy_free(p);
    if (pub && r->access_cfg != NULL && (r->access_cfg->pab & GW_PAB_BLOCK_PUBLIC_POLICY)) {
        CN_LOGR(CN_LOG_INFO, r->id, "bucket '%s': public policy refused (BlockPublicPolicy)",
                r->bucket);
        return GW_S3_ACCESS_DENIED;
    }
    *value = cn_memdup(body, len > 0 ? len : 1);
    *value_len = len;
    return GW_S3_OK;
}

static enum gw_s3_err gw_s3_policy_render(struct gw_req *r, const char *value, size_t len,
                                          struct evbuffer *doc)
{
    (void)r;
    evbuffer_add(doc, value, len);   /* the JSON as it was put */
    return GW_S3_OK;
}

static const struct gw_s3_cfg_kind gw_s3_policy_kind = {
    .name = GW_ACCESS_CFG_POLICY,
    .flags = GW_S3_CFG_ACCESS | GW_S3_CFG_JSON,
    .max_bytes = GW_POLICY_MAX_BYTES,
    .too_big = GW_S3_MALFORMED_POLICY,
    .too_big_why = "Policies must be at most 20480 bytes",
    .put_status = 204,
    .missing = GW_S3_NO_SUCH_BUCKET_POLICY,
    .encode = gw_s3_policy_encode,
    .render = gw_s3_policy_render,
};

void gw_s3_policy_get(struct gw_req *r)
{
    gw_s3_cfg_get(r, &gw_s3_policy_kind);
}

void gw_s3_policy_put(struct gw_req *r)
{
    gw_s3_cfg_put(r, &gw_s3_policy_kind);
}

void gw_s3_policy_delete(struct gw_req *r)
{
    gw_s3_cfg_delete(r, &gw_s3_policy_kind);
}

static void gw_s3_policy_status_write(struct gw_xml_writer *w, const void *arg)
{
    gw_xml_open_ns(w, "PolicyStatus", GW_XML_S3_NS);
    gw_xml_elem_bool(w, "IsPublic", *(const int *)arg);
    gw_xml_close(w);
}

/* PolicyStatus: a view of the stored policy, read as GetBucketPolicy reads it. */
static enum gw_s3_err gw_s3_policy_status_render(struct gw_req *r, const char *value,
                                                 size_t len, struct evbuffer *doc)
{
    char why[GW_POLICY_WHY_MAX];
    struct gw_policy *p = gw_policy_parse(value, len, r->bucket, why);
    int pub = p != NULL && gw_policy_is_public(p);
    gw_policy_free(p);
    return gw_s3_policy_doc(doc, gw_s3_policy_status_write, &pub);
}

static const struct gw_s3_cfg_kind gw_s3_policy_status_kind = {
    .name = GW_ACCESS_CFG_POLICY,
    .missing = GW_S3_NO_SUCH_BUCKET_POLICY,
    .render = gw_s3_policy_status_render,
};

void gw_s3_policy_status_get(struct gw_req *r)
{
    gw_s3_cfg_get(r, &gw_s3_policy_status_kind);
}

/* ---- ?ownershipControls --------------------------------------------------- */

static void gw_s3_policy_ownership_write(struct gw_xml_writer *w, const void *arg)
{
    gw_xml_open_ns(w, "OwnershipControls", GW_XML_S3_NS);
    gw_xml_open(w, "Rule");
    gw_xml_elem_str(w, "ObjectOwnership", gw_access_ownership_name(*(const int *)arg));
    gw_xml_close(w);
    gw_xml_close(w);
}

static enum gw_s3_err gw_s3_policy_ownership_render(struct gw_req *r, const char *value,
                                                    size_t len, struct evbuffer *doc)
{
    (void)r;
    int o = gw_access_ownership_parse(value, len);
    if (o < 0)
        return GW_S3_OWNERSHIP_CONTROLS_NOT_FOUND;
    return gw_s3_policy_doc(doc, gw_s3_policy_ownership_write, &o);
}

static enum gw_s3_err gw_s3_policy_ownership_encode(struct gw_req *r, const char *body,
                                                    size_t len, char **value,
                                                    size_t *value_len,
                                                    char why[GW_S3_CFG_WHY_MAX])
{
    (void)r;
    (void)why;
    int o = -1;
    enum gw_s3_err err = gw_acl_parse_ownership_xml(body, len, &o);
    if (err != GW_S3_OK)
        return err;
    const char *name = gw_access_ownership_name(o);
    *value_len = strlen(name);
    *value = cn_memdup(name, *value_len);
    return GW_S3_OK;
}

static const struct gw_s3_cfg_kind gw_s3_policy_ownership_kind = {
    .name = GW_ACCESS_CFG_OWNERSHIP,
    .flags = GW_S3_CFG_ACCESS,
    .max_bytes = 16 * 1024,
    .put_status = 200,
    .missing = GW_S3_OWNERSHIP_CONTROLS_NOT_FOUND,
    .encode = gw_s3_policy_ownership_encode,
    .render = gw_s3_policy_ownership_render,
};

void gw_s3_policy_ownership_get(struct gw_req *r)
{
    gw_s3_cfg_get(r, &gw_s3_policy_ownership_kind);
}

void gw_s3_policy_ownership_put(struct gw_req *r)
{
    gw_s3_cfg_put(r, &gw_s3_policy_ownership_kind);
}

void gw_s3_policy_ownership_delete(struct gw_req *r)
{
    gw_s3_cfg_delete(r, &gw_s3_policy_ownership_kind);
}

/* ---- ?publicAccessBlock ----------------------------------------------------- */

static void gw_s3_policy_pab_write(struct gw_xml_writer *w, const void *arg)
{
    unsigned pab = *(const unsigned *)arg;
    gw_xml_open_ns(w, "PublicAccessBlockConfiguration", GW_XML_S3_NS);
    gw_xml_elem_bool(w, "BlockPublicAcls", (pab & GW_PAB_BLOCK_PUBLIC_ACLS) != 0);
    gw_xml_elem_bool(w, "IgnorePublicAcls", (pab & GW_PAB_IGNORE_PUBLIC_ACLS) != 0);
    gw_xml_elem_bool(w, "BlockPublicPolicy", (pab & GW_PAB_BLOCK_PUBLIC_POLICY) != 0);
    gw_xml_elem_bool(w, "RestrictPublicBuckets", (pab & GW_PAB_RESTRICT_PUBLIC_BUCKETS) != 0);
    gw_xml_close(w);
}

static enum gw_s3_err gw_s3_policy_pab_render(struct gw_req *r, const char *value, size_t len,
                                              struct evbuffer *doc)
{
    (void)r;
    unsigned pab;
    if (gw_access_pab_decode(value, len, &pab) != CN_OK)
        return GW_S3_NO_SUCH_PUBLIC_ACCESS_BLOCK_CONFIGURATION;
    return gw_s3_policy_doc(doc, gw_s3_policy_pab_write, &pab);
}

static enum gw_s3_err gw_s3_policy_pab_encode(struct gw_req *r, const char *body, size_t len,
                                              char **value, size_t *value_len,
                                              char why[GW_S3_CFG_WHY_MAX])
{
    (void)r;
    (void)why;
    unsigned pab;
    enum gw_s3_err err = gw_acl_parse_pab_xml(body, len, &pab);
    if (err != GW_S3_OK)
        return err;
    char text[5];
    gw_access_pab_encode(pab, text);
    *value = cn_memdup(text, 4);
    *value_len = 4;
    return GW_S3_OK;
}

static const struct gw_s3_cfg_kind gw_s3_policy_pab_kind = {
    .name = GW_ACCESS_CFG_PAB,
    .flags = GW_S3_CFG_ACCESS,
    .max_bytes = 16 * 1024,
    .put_status = 200,
    .missing = GW_S3_NO_SUCH_PUBLIC_ACCESS_BLOCK_CONFIGURATION,
    .encode = gw_s3_policy_pab_encode,
    .render = gw_s3_policy_pab_render,
};

void gw_s3_policy_pab_get(struct gw_req *r)
{
    gw_s3_cfg_get(r, &gw_s3_policy_pab_kind);
}

void gw_s3_policy_pab_put(struct gw_req *r)
{
    gw_s3_cfg_put(r, &gw_s3_policy_pab_kind);
}

void gw_s3_policy_pab_delete(struct gw_req *r)
{
    gw_s3_cfg_delete(r, &gw_s3_policy_pab_kind);
}
