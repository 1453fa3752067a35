/* Policy, policy status, ownership controls and public access block
 * handlers (s3_policy.h). Every write drops this worker's cached access
 * config of the bucket, so its next request decides on the new one. */
#include "s3_policy.h"

#include <string.h>

#include "access.h"
#include "acl.h"
#include "bucket_owner.h"
#include "policy.h"
#include "s3_body.h"
#include "s3_bucket.h"
#include "xml.h"

#include "cn/alloc.h"
#include "cn/log.h"

/* A configuration was written (or removed): forget the cached one. */
static void gw_s3_policy_written(struct gw_req *r, int status)
{
    gw_bucket_owner_cache_drop(r->s3->owners, r->bucket, r->bucket_len);
    gw_req_reply_empty(r, status);
}

static void gw_s3_policy_done_200(struct gw_req *r)
{
    gw_s3_policy_written(r, 200);
}

static void gw_s3_policy_done_204(struct gw_req *r)
{
    gw_s3_policy_written(r, 204);
}

/* DELETE of a configuration: 204 whether or not one was set. */
static void gw_s3_policy_remove_found(struct gw_req *r)
{
    const struct gw_s3_bucket_cfg *cfg = r->h;
    if (cfg->value == NULL)
        gw_req_reply_empty(r, 204);
    else
        gw_s3_bucket_cfg_write(r, NULL, 0, gw_s3_policy_done_204);
}

/* Answers an XML document built by write(w, arg). */
static void gw_s3_policy_reply_doc(struct gw_req *r,
                                   void (*write)(struct gw_xml_writer *w, const void *arg),
                                   const void *arg)
{
    struct evbuffer *doc = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    write(&w, arg);
    if (gw_xml_writer_finish(&w) != CN_OK)
        gw_req_error(r, GW_S3_INTERNAL_ERROR, NULL);
    else
        gw_req_reply_xml(r, 200, doc);
    evbuffer_free(doc);
}

/* ---- ?policy ------------------------------------------------------------ */

static void gw_s3_policy_get_found(struct gw_req *r)
{
    const struct gw_s3_bucket_cfg *cfg = r->h;
    if (cfg->value == NULL) {
        gw_req_error(r, GW_S3_NO_SUCH_BUCKET_POLICY, NULL);
        return;
    }
    gw_req_reply_start(r, 200);
    gw_req_reply_header(r, "Content-Type", "application/json", 16);
    gw_req_reply_send_headers(r, cfg->value_len);
    evbuffer_add(gw_req_reply_body(r), cfg->value, cfg->value_len);
    gw_req_reply_end(r);
}

void gw_s3_policy_get(struct gw_req *r)
{
    gw_s3_bucket_cfg_read(r, GW_ACCESS_CFG_POLICY, gw_s3_policy_get_found);
}

static void gw_s3_policy_put_body(struct gw_req *r, enum gw_s3_err err, struct evbuffer *data)
{
    if (err != GW_S3_OK) {
        gw_req_error(r, err == GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED ? GW_S3_MALFORMED_POLICY : err,
                     err == GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED
                         ? "Policies must be at most 20480 bytes"
                         : NULL);
        return;
    }
    size_t len = evbuffer_get_length(data);
    const char *body = len > 0 ? (const char *)evbuffer_pullup(data, -1) : "";
    char why[GW_POLICY_WHY_MAX];
    struct gw_policy *p = gw_policy_parse(body, len, r->bucket, why);
    if (p == NULL) {
        gw_req_error(r, GW_S3_MALFORMED_POLICY, why);
        return;
    }
    int pub = gw_policy_is_public(p);
    gw_policy_free(p);
    if (pub && r->access_cfg != NULL && (r->access_cfg->pab & GW_PAB_BLOCK_PUBLIC_POLICY)) {
        CN_LOGR(CN_LOG_INFO, r->id, "bucket '%s': public policy refused (BlockPublicPolicy)",
                r->bucket);
        gw_req_error(r, GW_S3_ACCESS_DENIED, NULL);
        return;
    }
    gw_s3_bucket_cfg_write(r, cn_memdup(body, len), len, gw_s3_policy_done_204);
}

static void gw_s3_policy_put_found(struct gw_req *r)
{
    gw_s3_body_read(r, GW_POLICY_MAX_BYTES, GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED,
                    gw_s3_policy_put_body);
}

void gw_s3_policy_put(struct gw_req *r)
{
    gw_s3_bucket_cfg_read(r, GW_ACCESS_CFG_POLICY, gw_s3_policy_put_found);
}

void gw_s3_policy_delete(struct gw_req *r)
{
    gw_s3_bucket_cfg_read(r, GW_ACCESS_CFG_POLICY, gw_s3_policy_remove_found);
}

static void gw_s3_policy_status_write(struct gw_xml_writer *w, const void *arg)
{
    gw_xml_open_ns(w, "PolicyStatus", GW_XML_S3_NS);
    gw_xml_elem_bool(w, "IsPublic", *(const int *)arg);
    gw_xml_close(w);
}

static void gw_s3_policy_status_found(struct gw_req *r)
{
    const struct gw_s3_bucket_cfg *cfg = r->h;
    if (cfg->value == NULL) {
        gw_req_error(r, GW_S3_NO_SUCH_BUCKET_POLICY, NULL);
        return;
    }
    char why[GW_POLICY_WHY_MAX];
    struct gw_policy *p = gw_policy_parse(cfg->value, cfg->value_len, r->bucket, why);
    int pub = p != NULL && gw_policy_is_public(p);
    gw_policy_free(p);
    gw_s3_policy_reply_doc(r, gw_s3_policy_status_write, &pub);
}

void gw_s3_policy_status_get(struct gw_req *r)
{
    gw_s3_bucket_cfg_read(r, GW_ACCESS_CFG_POLICY, gw_s3_policy_status_found);
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

static void gw_s3_policy_ownership_get_found(struct gw_req *r)
{
    const struct gw_s3_bucket_cfg *cfg = r->h;
    int o = cfg->value != NULL ? gw_access_ownership_parse(cfg->value, cfg->value_len) : -1;
    if (o < 0) {
        gw_req_error(r, GW_S3_OWNERSHIP_CONTROLS_NOT_FOUND, NULL);
        return;
    }
    gw_s3_policy_reply_doc(r, gw_s3_policy_ownership_write, &o);
}

void gw_s3_policy_ownership_get(struct gw_req *r)
{
    gw_s3_bucket_cfg_read(r, GW_ACCESS_CFG_OWNERSHIP, gw_s3_policy_ownership_get_found);
}

static void gw_s3_policy_ownership_body(struct gw_req *r, enum gw_s3_err err,
                                        struct evbuffer *data)
{
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    size_t len = evbuffer_get_length(data);
    const char *body = len > 0 ? (const char *)evbuffer_pullup(data, -1) : "";
    int o = -1;
    err = gw_acl_parse_ownership_xml(body, len, &o);
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    const char *name = gw_access_ownership_name(o);
    gw_s3_bucket_cfg_write(r, cn_memdup(name, strlen(name)), strlen(name),
                           gw_s3_policy_done_200);
}

static void gw_s3_policy_ownership_put_found(struct gw_req *r)
{
    gw_s3_body_read(r, 16 * 1024, GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED,
                    gw_s3_policy_ownership_body);
}

void gw_s3_policy_ownership_put(struct gw_req *r)
{
    gw_s3_bucket_cfg_read(r, GW_ACCESS_CFG_OWNERSHIP, gw_s3_policy_ownership_put_found);
}

void gw_s3_policy_ownership_delete(struct gw_req *r)
{
    gw_s3_bucket_cfg_read(r, GW_ACCESS_CFG_OWNERSHIP, gw_s3_policy_remove_found);
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

static void gw_s3_policy_pab_get_found(struct gw_req *r)
{
    const struct gw_s3_bucket_cfg *cfg = r->h;
    unsigned pab;
    if (cfg->value == NULL || gw_access_pab_decode(cfg->value, cfg->value_len, &pab) != CN_OK) {
        gw_req_error(r, GW_S3_NO_SUCH_PUBLIC_ACCESS_BLOCK_CONFIGURATION, NULL);
        return;
    }
    gw_s3_policy_reply_doc(r, gw_s3_policy_pab_write, &pab);
}

void gw_s3_policy_pab_get(struct gw_req *r)
{
    gw_s3_bucket_cfg_read(r, GW_ACCESS_CFG_PAB, gw_s3_policy_pab_get_found);
}

static void gw_s3_policy_pab_body(struct gw_req *r, enum gw_s3_err err, struct evbuffer *data)
{
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    size_t len = evbuffer_get_length(data);
    const char *body = len > 0 ? (const char *)evbuffer_pullup(data, -1) : "";
    unsigned pab;
    err = gw_acl_parse_pab_xml(body, len, &pab);
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    char text[5];
    gw_access_pab_encode(pab, text);
    gw_s3_bucket_cfg_write(r, cn_memdup(text, 4), 4, gw_s3_policy_done_200);
}

static void gw_s3_policy_pab_put_found(struct gw_req *r)
{
    gw_s3_body_read(r, 16 * 1024, GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED, gw_s3_policy_pab_body);
}

void gw_s3_policy_pab_put(struct gw_req *r)
{
    gw_s3_bucket_cfg_read(r, GW_ACCESS_CFG_PAB, gw_s3_policy_pab_put_found);
}

void gw_s3_policy_pab_delete(struct gw_req *r)
{
    gw_s3_bucket_cfg_read(r, GW_ACCESS_CFG_PAB, gw_s3_policy_remove_found);
}
