/* Object and bucket sub-resources answered from what the gateway keeps.
 *
 * ACLs, the way S3 serves them with Object Ownership "bucket owner enforced"
 * (the default for new AWS buckets since 2023): ACLs are disabled. A bucket
 * belongs to the account that created it and only that account may use it
 * (bucket_owner.c), which is exactly what an ACL granting the owner
 * FULL_CONTROL and nobody else says; so reading an ACL answers that, and
 * setting one is accepted only when it says that too.
 *
 *   GET ?acl (bucket or object)  the owner's FULL_CONTROL grant
 *   PUT ?acl                     200 for the canned "private" or
 *                                "bucket-owner-full-control" (or none) and
 *                                no body; anything else (other canned ACLs,
 *                                x-amz-grant-* headers, an XML ACL) is 400
 *                                AccessControlListNotSupported
 *   PUT object, copy, multipart  the same check on their x-amz-acl and
 *                                x-amz-grant-* headers
 *   CreateBucket                 400 InvalidBucketAclWithObjectOwnership
 *
 * An XML ACL that grants only the owner FULL_CONTROL is refused although
 * S3 takes it: we do not parse ACL documents (said in docs/s3-compat.md). */
#include "s3_subres.h"

#include <string.h>
#include <strings.h>

#include "keys.h"
#include "s3_bucket.h"
#include "s3_reply.h"
#include "store.h"
#include "xml.h"

static const char gw_s3_acl_xsi[] = "http://www.w3.org/2001/XMLSchema-instance";

/* Is the canned ACL (x-amz-acl) one that grants the owner alone FULL_CONTROL? */
static int gw_s3_acl_canned_is_owner_only(const char *v, size_t len)
{
    static const char *const ok[] = {"private", "bucket-owner-full-control"};
    for (size_t i = 0; i < CN_ARRAY_LEN(ok); i++)
        if (len == strlen(ok[i]) && strncasecmp(v, ok[i], len) == 0)
            return 1;
    return 0;
}

int gw_s3_acl_headers_ok(const struct gw_req *r)
{
    size_t len = 0;
    const char *v = gw_req_header(r, "x-amz-acl", &len);
    if (v != NULL && !gw_s3_acl_canned_is_owner_only(v, len))
        return 0;
    static const char *const grants[] = {
        "x-amz-grant-full-control", "x-amz-grant-read", "x-amz-grant-read-acp",
        "x-amz-grant-write", "x-amz-grant-write-acp",
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(grants); i++)
        if (gw_req_header(r, grants[i], NULL) != NULL)
            return 0;
    return 1;
}

/* <AccessControlPolicy> with the requester (the bucket's owner: anyone else
 * was refused before this) holding FULL_CONTROL. */
static void gw_s3_acl_reply_policy(struct gw_req *r)
{
    const char *id = r->auth.cred->owner_id, *name = r->auth.cred->display_name;
    struct evbuffer *doc = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    gw_xml_open_ns(&w, "AccessControlPolicy", GW_XML_S3_NS);
    gw_xml_open(&w, "Owner");
    gw_xml_elem_str(&w, "ID", id);
    gw_xml_elem_str(&w, "DisplayName", name);
    gw_xml_close(&w);
    gw_xml_open(&w, "AccessControlList");
    gw_xml_open(&w, "Grant");
    const char *const grantee[] = {"xmlns:xsi", gw_s3_acl_xsi, "xsi:type", "CanonicalUser", NULL};
    gw_xml_open_attrs(&w, "Grantee", grantee);
    gw_xml_elem_str(&w, "ID", id);
    gw_xml_elem_str(&w, "DisplayName", name);
    gw_xml_close(&w); /* Grantee */
    gw_xml_elem_str(&w, "Permission", "FULL_CONTROL");
    gw_xml_close(&w); /* Grant */
    gw_xml_close(&w); /* AccessControlList */
    gw_xml_close(&w); /* AccessControlPolicy */
    if (gw_xml_writer_finish(&w) != CN_OK) {
        evbuffer_free(doc);
        gw_req_error(r, GW_S3_INTERNAL_ERROR, NULL);
        return;
    }
    gw_req_reply_xml(r, 200, doc);
    evbuffer_free(doc);
}

/* PUT ?acl that restates the owner-only ACL: nothing to store. */
static void gw_s3_acl_reply_put(struct gw_req *r)
{
    gw_req_reply_empty(r, 200);
}

static void gw_s3_subres_no_such_key(struct gw_req *r)
{
    gw_req_error(r, GW_S3_NO_SUCH_KEY, NULL);
}

/* The object's HEAD came back: it exists (then r->then answers), or it
 * does not (then NoSuchBucket or NoSuchKey, whichever is true). */
static void gw_s3_subres_on_object(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    gw_req_cb answer = r->then;
    r->then = NULL;
    if (res->rc == CN_NOTFOUND) {
        gw_s3_bucket_require(r, gw_s3_subres_no_such_key);
        return;
    }
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    answer(r);
}

/* Calls answer(r) once r's object is known to exist (see above). */
static void gw_s3_subres_object(struct gw_req *r, gw_req_cb answer)
{
    char skey[GW_KEYS_MAX];
    size_t skey_len = gw_keys_object(skey, r->bucket, r->bucket_len, r->key, r->key_len);
    r->then = answer;
    gw_req_hold(r);
    gw_store_head(r->s3->store, skey, skey_len, gw_s3_subres_on_object, r);
}

/* Answers once the bucket (no key) or the object exists. */
static void gw_s3_subres_require(struct gw_req *r, gw_req_cb answer)
{
    if (r->key == NULL)
        gw_s3_bucket_require(r, answer);
    else
        gw_s3_subres_object(r, answer);
}

void gw_s3_subres_acl_get(struct gw_req *r)
{
    gw_s3_subres_require(r, gw_s3_acl_reply_policy);
}

void gw_s3_subres_acl_put(struct gw_req *r)
{
    const struct gw_http_parser *h = r->http;
    if (!gw_s3_acl_headers_ok(r) || h->content_length > 0 || h->chunked) {
        gw_req_error(r, GW_S3_ACCESS_CONTROL_LIST_NOT_SUPPORTED, NULL);
        return;
    }
    gw_s3_subres_require(r, gw_s3_acl_reply_put);
}
