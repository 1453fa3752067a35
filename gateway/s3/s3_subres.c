/* ACL requests (s3_subres.h).
 *
 *   GET ?acl (bucket)   the bucket record's "acl" configuration
 *   GET ?acl (object)   the object record's ":acl" meta entry
 *                       (either absent: the owner's FULL_CONTROL alone)
 *   PUT ?acl (bucket)   sets "acl" (gw_s3_bucket_cfg_write)
 *   PUT ?acl (object)   rewrites the object's record with ":acl" replaced,
 *                       as a tagging write does (s3_tagging.c: ts + 1 of the
 *                       record read, so a later overwrite is never undone)
 *   ?versionId=         (objects) the version's record (s3_versions.h); in a
 *                       bucket with a versioning state a PUT rewrites both
 *                       copies of the version ("o/" and its version record)
 *                       as a tagging write does, so a GET by id and of the
 *                       latest agree
 *   writes              x-amz-acl / x-amz-grant-* checked by the router and
 *                       stored with the object, the upload (then applied at
 *                       Complete, which keeps the upload's meta) or the bucket
 *
 * Object ownership (access.h): under BucketOwnerEnforced ACLs are disabled:
 * only an ACL that restates the bucket owner's FULL_CONTROL is accepted, and
 * nothing is stored. Under ObjectWriter an object written by another account
 * is owned by that account (its ACL names it), under BucketOwnerPreferred
 * with bucket-owner-full-control by the bucket owner. */
#include "s3_subres.h"

#include <string.h>
#include <strings.h>

#include "access.h"
#include "acl.h"
#include "bucket_owner.h"
#include "credentials.h"
#include "keys.h"
#include "objmeta.h"
#include "s3_body.h"
#include "s3_bucket.h"
#include "post_form.h"
#include "s3_ops.h"
#include "s3_post.h"
#include "s3_reply.h"
#include "s3_versions.h"
#include "store.h"
#include "versioning.h"
#include "xml.h"

#include "cn/alloc.h"
#include "cn/log.h"

static const char *const gw_s3_acl_grant_headers[] = {
    "x-amz-grant-read", "x-amz-grant-write", "x-amz-grant-read-acp", "x-amz-grant-write-acp",
    "x-amz-grant-full-control",
};
static const unsigned gw_s3_acl_grant_perms[] = {
    GW_ACL_READ, GW_ACL_WRITE, GW_ACL_READ_ACP, GW_ACL_WRITE_ACP, GW_ACL_FULL_CONTROL,
};

/* Who writes: the account id an ACL names as the new owner. */
static const char *gw_s3_acl_writer(const struct gw_req *r)
{
    const char *p = gw_access_principal(r);
    return p != NULL ? p : gw_access_anonymous.owner_id;
}

/* An ACL header of r; for POST object the form's field instead (only
 * `acl`: S3's forms carry no grant fields). */
static const char *gw_s3_acl_header(const struct gw_req *r, const char *name, size_t *len)
{
    if (r->post == NULL)
        return gw_req_header(r, name, len);
    const struct gw_post_form_field *f =
        strcmp(name, "x-amz-acl") == 0 ? gw_post_form_field(gw_s3_post_form(r->post), "acl")
                                       : NULL;
    if (f != NULL && len != NULL)
        *len = f->value_len;
    return f != NULL ? f->value : NULL;
}

/* The ACL of r's headers into acl, owner writer. *given: some header was
 * there. *canned: x-amz-acl's value, or NULL. */
static enum gw_s3_err gw_s3_acl_from_headers(const struct gw_req *r, const char *writer,
                                             const char *bucket_owner, struct gw_acl *acl,
                                             int *given, const char **canned, size_t *clen,
                                             const char **why)
{
    *canned = gw_s3_acl_header(r, "x-amz-acl", clen);
    int grants = 0;
    for (size_t i = 0; i < CN_ARRAY_LEN(gw_s3_acl_grant_headers); i++)
        grants |= gw_s3_acl_header(r, gw_s3_acl_grant_headers[i], NULL) != NULL;
    *given = *canned != NULL || grants;
    gw_acl_canned(acl, "private", 7, writer, bucket_owner);
    if (*canned != NULL && grants) {
        *why = "Specifying both Canned ACLs and Header Grants is not allowed";
        return GW_S3_INVALID_REQUEST;
    }
    if (*canned != NULL) {
        if (gw_acl_canned(acl, *canned, *clen, writer, bucket_owner) != CN_OK)
            return GW_S3_INVALID_ARGUMENT;
        return GW_S3_OK;
    }
    if (!grants)
        return GW_S3_OK;
    acl->n = 0;   /* header grants are the whole ACL */
    for (size_t i = 0; i < CN_ARRAY_LEN(gw_s3_acl_grant_headers); i++) {
        size_t len;
        const char *v = gw_s3_acl_header(r, gw_s3_acl_grant_headers[i], &len);
        if (v == NULL)
            continue;
        enum gw_s3_err err = gw_acl_add_grant_header(acl, gw_s3_acl_grant_perms[i], v, len);
        if (err != GW_S3_OK)
            return err;
    }
    return GW_S3_OK;
}

/* Does every account acl grants to exist, as the owner id of some key the
 * gateway knows (the credentials file and the cluster's keys)? S3 refuses a
 * grant to a canonical id it does not know with 400 InvalidArgument (s3-tests
 * test_bucket_acl_grant_nonexist_user). known, the ACL's and the bucket's
 * owners, always pass (a deleted account's object keeps its own owner).
 * Cost: grants x keys string compares, at most GW_ACL_MAX_GRANTS per key. */
static int gw_s3_acl_ids_known(const struct gw_req *r, const struct gw_acl *acl,
                               const char *known)
{
    const struct gw_credentials *c = r->s3->creds;
    size_t n = c != NULL ? gw_credentials_count(c) : 0;
    for (size_t i = 0; i < acl->n; i++) {
        const char *id = acl->g[i].id;
        if (acl->g[i].grantee != GW_ACL_USER || strcmp(id, known) == 0 ||
            strcmp(id, acl->owner) == 0 || strcmp(id, gw_s3_acl_writer(r)) == 0)
            continue;
        size_t k = 0;
        while (k < n && strcmp(gw_credentials_at(c, k)->owner_id, id) != 0)
            k++;
        if (k == n)
            return 0;
    }
    return 1;
}

/* Does acl give nobody but the bucket owner anything (the only ACL that
 * BucketOwnerEnforced accepts)? */
static int gw_s3_acl_owner_only(const struct gw_acl *acl, const char *bucket_owner)
{
    for (size_t i = 0; i < acl->n; i++)
        if (acl->g[i].grantee != GW_ACL_USER || strcmp(acl->g[i].id, bucket_owner) != 0)
            return 0;
    return 1;
}

static int gw_s3_acl_is(const char *v, size_t n, const char *s)
{
    return v != NULL && n == strlen(s) && memcmp(v, s, n) == 0;
}

/* The Object Ownership a CreateBucket asks for (header or setting), or -1. */
static int gw_s3_acl_create_ownership(const struct gw_req *r)
{
    size_t n;
    const char *v = gw_req_header(r, "x-amz-object-ownership", &n);
    if (v == NULL)
        return r->s3->opts.default_object_ownership;
    return gw_access_ownership_parse(v, n);
}

int gw_s3_acl_wanted(const struct gw_req *r)
{
    if (gw_s3_acl_header(r, "x-amz-acl", NULL) != NULL)
        return 1;
    for (size_t i = 0; i < CN_ARRAY_LEN(gw_s3_acl_grant_headers); i++)
        if (gw_s3_acl_header(r, gw_s3_acl_grant_headers[i], NULL) != NULL)
            return 1;
    return r->access_cfg != NULL && strcmp(gw_s3_acl_writer(r), r->access_cfg->owner) != 0;
}

enum gw_s3_err gw_s3_acl_request(struct gw_req *r, const char **why)
{
    enum gw_s3_op_id id = r->op->id;
    int create = id == GW_S3_OP_CREATE_BUCKET;
    if (!create && id != GW_S3_OP_PUT_OBJECT && id != GW_S3_OP_COPY_OBJECT &&
        id != GW_S3_OP_CREATE_MULTIPART_UPLOAD && id != GW_S3_OP_POST_OBJECT)
        return GW_S3_OK;   /* S3 ignores ACL headers on the other writes */
    const struct gw_access_config *cfg = r->access_cfg;
    const char *writer = gw_s3_acl_writer(r);
    const char *bucket_owner = !create && cfg != NULL ? cfg->owner : writer;
    int ownership = create ? gw_s3_acl_create_ownership(r)
                           : cfg != NULL ? cfg->ownership : GW_OWNERSHIP_OBJECT_WRITER;
    unsigned pab = create ? (ownership == GW_OWNERSHIP_BUCKET_OWNER_ENFORCED &&
                                     gw_req_header(r, "x-amz-object-ownership", NULL) == NULL
                                 ? GW_PAB_ALL
                                 : 0)
                          : cfg != NULL ? cfg->pab : 0;
    if (ownership < 0) {
        *why = "Invalid x-amz-object-ownership header";
        return GW_S3_INVALID_ARGUMENT;
    }
    struct gw_acl *acl = cn_malloc(sizeof(*acl));
    int given;
    const char *canned;
    size_t clen;
    enum gw_s3_err err =
        gw_s3_acl_from_headers(r, writer, bucket_owner, acl, &given, &canned, &clen, why);
    if (err == GW_S3_OK && !gw_s3_acl_ids_known(r, acl, bucket_owner)) {
        *why = "Invalid id";
        err = GW_S3_INVALID_ARGUMENT;
    }
    if (err != GW_S3_OK)
        goto out;
    if (ownership == GW_OWNERSHIP_BUCKET_OWNER_ENFORCED) {
        /* ACLs disabled: the bucket owner owns everything, nothing stored */
        int ok = !given || gw_s3_acl_is(canned, clen, "private") ||
                 gw_s3_acl_is(canned, clen, "bucket-owner-full-control") ||
                 (canned == NULL && gw_s3_acl_owner_only(acl, bucket_owner));
        if (!ok)
            err = create ? GW_S3_INVALID_BUCKET_ACL_WITH_OBJECT_OWNERSHIP
                         : GW_S3_ACCESS_CONTROL_LIST_NOT_SUPPORTED;
        goto out;
    }
    if (!create && ownership == GW_OWNERSHIP_BUCKET_OWNER_PREFERRED &&
        gw_s3_acl_is(canned, clen, "bucket-owner-full-control"))
        gw_acl_canned(acl, "private", 7, bucket_owner, bucket_owner);
    if ((pab & GW_PAB_BLOCK_PUBLIC_ACLS) && gw_acl_is_public(acl)) {
        CN_LOGR(CN_LOG_INFO, r->id, "public ACL refused (BlockPublicAcls)");
        err = GW_S3_ACCESS_DENIED;
        goto out;
    }
    /* an object written by another account records its owner even when
     * private; the bucket owner's private object needs no entry */
    if (given || strcmp(acl->owner, bucket_owner) != 0)
        gw_acl_encode(acl, &r->acl_text, &r->acl_text_len);
out:
    cn_free(acl);
    return err;
}

enum gw_s3_err gw_s3_acl_create_configs(struct gw_req *r, struct gw_bucket_meta *bm,
                                        char pab[5])
{
    int ownership = gw_s3_acl_create_ownership(r);
    if (ownership < 0)
        return GW_S3_INVALID_ARGUMENT;
    if (r->acl_text != NULL)
        gw_bucket_meta_set_config(bm, GW_ACCESS_CFG_ACL, r->acl_text, r->acl_text_len);
    /* always stored, so GetBucketOwnershipControls answers what is in force */
    const char *name = gw_access_ownership_name(ownership);
    gw_bucket_meta_set_config(bm, GW_ACCESS_CFG_OWNERSHIP, name, strlen(name));
    if (ownership == GW_OWNERSHIP_BUCKET_OWNER_ENFORCED &&
        r->s3->opts.default_object_ownership == GW_OWNERSHIP_BUCKET_OWNER_ENFORCED &&
        gw_req_header(r, "x-amz-object-ownership", NULL) == NULL) {
        gw_access_pab_encode(GW_PAB_ALL, pab);
        gw_bucket_meta_set_config(bm, GW_ACCESS_CFG_PAB, pab, 4);
    }
    return GW_S3_OK;
}

/* ---- GET ?acl ------------------------------------------------------------ */

/* The display name of the account id names (the credentials file's), or
 * NULL for an id no account has (S3 shows none then). */
static const char *gw_s3_acl_display(const char *id, void *arg)
{
    const struct gw_req *r = arg;
    if (!r->anonymous && r->auth.cred != NULL && strcmp(id, r->auth.cred->owner_id) == 0)
        return r->auth.cred->display_name;
    const struct gw_credentials *creds = gw_sigv4_credentials(r->s3->sigv4);
    size_t n = creds != NULL ? gw_credentials_count(creds) : 0;
    for (size_t i = 0; i < n; i++) {
        const struct gw_cred *c = gw_credentials_at(creds, i);
        if (strcmp(c->owner_id, id) == 0)
            return c->display_name;
    }
    return NULL;
}

/* Answers acl as an AccessControlPolicy document. */
static void gw_s3_acl_reply(struct gw_req *r, const struct gw_acl *acl)
{
    struct evbuffer *doc = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    gw_acl_write_xml(acl, &w, gw_s3_acl_display, r);
    if (gw_xml_writer_finish(&w) != CN_OK)
        gw_req_error(r, GW_S3_INTERNAL_ERROR, NULL);
    else
        gw_req_reply_xml(r, 200, doc);
    evbuffer_free(doc);
}

/* Fills acl from the stored text (NULL: none) or the owner's default. */
static void gw_s3_acl_stored(const struct gw_req *r, const char *text, size_t len,
                             struct gw_acl *acl)
{
    const char *owner = r->access_cfg != NULL ? r->access_cfg->owner : gw_s3_acl_writer(r);
    int enforced = r->access_cfg != NULL &&
                   r->access_cfg->ownership == GW_OWNERSHIP_BUCKET_OWNER_ENFORCED;
    if (text == NULL || enforced || gw_acl_decode(acl, text, len) != CN_OK)
        gw_acl_canned(acl, "private", 7, owner, owner);
}

static void gw_s3_acl_bucket_get_found(struct gw_req *r)
{
    const struct gw_s3_bucket_cfg *cfg = GW_REQ_STATE(r, gw_s3_bucket_cfg);
    struct gw_acl *acl = cn_malloc(sizeof(*acl));
    gw_s3_acl_stored(r, cfg->value, cfg->value_len, acl);
    gw_s3_acl_reply(r, acl);
    cn_free(acl);
}

static void gw_s3_acl_missing(struct gw_req *r)
{
    enum gw_s3_err err = gw_bucket_owner_missing_key(r);   /* 403 to who may not list */
    if (err == GW_S3_NO_SUCH_KEY && gw_s3_versions_not_found(r))
        return;   /* NoSuchVersion, or NoSuchKey under a delete marker */
    gw_req_error(r, err, NULL);
}

/* The version-specific part of a record read for ?acl: 1 when r was
 * answered (a delete marker named by id: 405; not the null version asked
 * for: NoSuchVersion). S3's ACL answers carry no version id header. */
static int gw_s3_acl_version_check(struct gw_req *r, const struct msg *m)
{
    if (gw_s3_versions_on_record(r, m))
        return 1;
    r->version_id[0] = '\0';
    return 0;
}

/* The object's record (HEAD) of GET ?acl came back. */
static void gw_s3_acl_object_on_head(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    if (res->rc == CN_NOTFOUND) {
        gw_s3_bucket_require(r, gw_s3_acl_missing);
        return;
    }
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    const struct msg *m = &res->reply->m;
    if (!gw_access_object_allows(r, m->meta.ptr, m->meta.len)) {
        if (!gw_bucket_owner_retry_denied(r, 0, gw_s3_subres_acl_get))
            gw_req_error(r, GW_S3_ACCESS_DENIED, NULL);
        return;
    }
    if (gw_s3_acl_version_check(r, m))
        return;
    struct gw_objmeta om;
    const struct gw_objmeta_header *h = NULL;
    if (gw_objmeta_decode(&om, m->meta.ptr, m->meta.len) == CN_OK)
        h = gw_objmeta_find(&om, GW_OBJMETA_ACL);
    struct gw_acl *acl = cn_malloc(sizeof(*acl));
    gw_s3_acl_stored(r, h != NULL ? h->value : NULL, h != NULL ? h->value_len : 0, acl);
    gw_s3_acl_reply(r, acl);
    cn_free(acl);
}

/* Reads the record at key for GET ?acl: the object's, or a version's. */
static void gw_s3_acl_object_head_from(struct gw_req *r, const char *key, size_t key_len)
{
    gw_req_hold(r);
    gw_store_head(r->s3->store, key, key_len, gw_s3_acl_object_on_head, r);
}

void gw_s3_subres_acl_get(struct gw_req *r)
{
    if (r->key == NULL) {
        gw_s3_bucket_cfg_read(r, GW_ACCESS_CFG_ACL, gw_s3_acl_bucket_get_found);
        return;
    }
    if (gw_req_param(r, "versionId") != NULL) {
        gw_s3_versions_get(r, gw_s3_acl_object_head_from);
        return;
    }
    char skey[GW_KEYS_MAX];
    size_t n = gw_keys_object(skey, r->bucket, r->bucket_len, r->key, r->key_len);
    gw_s3_acl_object_head_from(r, skey, n);
}

/* ---- PUT ?acl ------------------------------------------------------------ */

/* One PUT ?acl's state (r->state; for a bucket only until the new ACL is
 * checked: the write then goes through gw_s3_bucket_cfg, whose value slot
 * is unused here). */
struct gw_s3_acl_put {
    struct gw_hstate hs;
    struct gw_acl acl;
    char skey[GW_KEYS_MAX];
    size_t skey_len;
    char rkey[GW_VERSIONING_KEY_MAX];  /* the record rewritten: skey or a version's */
    size_t rkey_len;
    int twin;                          /* versioned: now the other copy of the version */
    char vid[GW_VERSIONING_ID_MAX];    /* the version rewritten first ("": none) */
    char *text;
    size_t text_len;
    char *etag;
    char *meta;
    size_t meta_len;
    struct gw_blob *blob;
};

static void gw_s3_acl_put_free(struct gw_hstate *hs);
static const struct gw_hstate_type gw_s3_acl_put_hstate = {"gw_s3_acl_put", gw_s3_acl_put_free};

static void gw_s3_acl_put_free(struct gw_hstate *hs)
{
    struct gw_s3_acl_put *a = GW_HSTATE(hs, gw_s3_acl_put);
    cn_free(a->text);
    cn_free(a->etag);
    cn_free(a->meta);
    gw_blob_unref(a->blob);
    cn_free(a);
}

/* The checks of a new ACL for r's bucket; fills *err. */
static enum gw_s3_err gw_s3_acl_put_check(struct gw_req *r, struct gw_acl *acl, int given_canned,
                                          const char *canned, size_t clen)
{
    const struct gw_access_config *cfg = r->access_cfg;
    if (cfg == NULL)
        return GW_S3_ACCESS_DENIED;
    if (!gw_s3_acl_ids_known(r, acl, cfg->owner))
        return GW_S3_INVALID_ARGUMENT;
    if (cfg->ownership == GW_OWNERSHIP_BUCKET_OWNER_ENFORCED) {
        int ok = given_canned ? (gw_s3_acl_is(canned, clen, "private") ||
                                 gw_s3_acl_is(canned, clen, "bucket-owner-full-control"))
                              : gw_s3_acl_owner_only(acl, cfg->owner);
        return ok ? GW_S3_OK : GW_S3_ACCESS_CONTROL_LIST_NOT_SUPPORTED;
    }
    if ((cfg->pab & GW_PAB_BLOCK_PUBLIC_ACLS) && gw_acl_is_public(acl))
        return GW_S3_ACCESS_DENIED;
    return GW_S3_OK;
}

static void gw_s3_acl_put_done(struct gw_req *r)
{
    gw_bucket_owner_cache_drop(r->s3->owners, r->bucket, r->bucket_len);
    gw_req_reply_empty(r, 200);
}

static void gw_s3_acl_object_read_from(struct gw_req *r, const char *key, size_t key_len);

/* The other copy of the version just rewritten: the version record when
 * "o/" was rewritten, "o/" when the version's record was (the same key:
 * a null version kept only as "o/", none). */
static void gw_s3_acl_twin_from(struct gw_req *r, const char *key, size_t key_len)
{
    struct gw_s3_acl_put *a = GW_REQ_STATE(r, gw_s3_acl_put);
    if (key_len == a->rkey_len && memcmp(key, a->rkey, key_len) == 0) {
        gw_req_reply_empty(r, 200);
        return;
    }
    a->twin = 1;
    cn_free(a->etag);
    cn_free(a->meta);
    gw_blob_unref(a->blob);
    a->etag = a->meta = NULL;
    a->blob = NULL;
    gw_s3_acl_object_read_from(r, key, key_len);
}

static void gw_s3_acl_object_on_written(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    struct gw_s3_acl_put *a = GW_REQ_STATE(r, gw_s3_acl_put);
    if (a->twin || a->vid[0] == '\0' || r->versioning == GW_VERSIONING_OFF) {
        gw_req_reply_empty(r, 200);
        return;
    }
    if (a->rkey_len == a->skey_len && memcmp(a->rkey, a->skey, a->skey_len) == 0)
        gw_s3_versions_get_id(r, a->vid, gw_s3_acl_twin_from);
    else
        gw_s3_acl_twin_from(r, a->skey, a->skey_len);
}

/* The version id a record's meta carries into id ("" when none). */
static void gw_s3_acl_vid(const struct msg *m, char id[GW_VERSIONING_ID_MAX])
{
    struct gw_objmeta om;
    const struct gw_objmeta_header *h;
    id[0] = '\0';
    if (gw_objmeta_decode(&om, m->meta.ptr, m->meta.len) == CN_OK &&
        (h = gw_objmeta_find(&om, GW_VERSIONING_META)) != NULL &&
        h->value_len < GW_VERSIONING_ID_MAX && gw_versioning_id_check(h->value, h->value_len)) {
        memcpy(id, h->value, h->value_len);
        id[h->value_len] = '\0';
    }
}

/* The object's record came back whole: write it again with the new ACL,
 * owned by the object's current owner. */
static void gw_s3_acl_object_on_record(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    struct gw_s3_acl_put *a = GW_REQ_STATE(r, gw_s3_acl_put);
    if (a->twin) {   /* the other copy: gone or another version: done */
        char id[GW_VERSIONING_ID_MAX];
        if (res->rc == CN_OK)
            gw_s3_acl_vid(&res->reply->m, id);
        if (res->rc != CN_OK || strcmp(id, a->vid) != 0) {
            gw_req_reply_empty(r, 200);
            return;
        }
        a->acl.owner[0] = '\0';   /* the twin's owner is the version's */
    } else {
        if (res->rc == CN_NOTFOUND) {
            gw_s3_acl_missing(r);   /* r->versioning is known (gw_s3_bucket_require) */
            return;
        }
        if (res->rc != CN_OK) {
            gw_s3_reply_store_error(r, res->rc, res->err);
            return;
        }
        if (!gw_access_object_allows(r, res->reply->m.meta.ptr, res->reply->m.meta.len)) {
            gw_req_error(r, GW_S3_ACCESS_DENIED, NULL);
            return;
        }
        if (gw_s3_acl_version_check(r, &res->reply->m))
            return;
        gw_s3_acl_vid(&res->reply->m, a->vid);
    }
    const struct msg *m = &res->reply->m;
    struct gw_objmeta om;
    const struct gw_objmeta_header *h = NULL;
    if (gw_objmeta_decode(&om, m->meta.ptr, m->meta.len) == CN_OK)
        h = gw_objmeta_find(&om, GW_OBJMETA_ACL);
    struct gw_acl *cur = cn_malloc(sizeof(*cur));
    gw_s3_acl_stored(r, h != NULL ? h->value : NULL, h != NULL ? h->value_len : 0, cur);
    int owner_ok = a->acl.owner[0] == '\0' || strcmp(a->acl.owner, cur->owner) == 0;
    memcpy(a->acl.owner, cur->owner, sizeof(cur->owner));
    cn_free(cur);
    if (!owner_ok) {
        gw_req_error(r, GW_S3_ACCESS_DENIED, "The owner in the ACL is not the object's owner.");
        return;
    }
    cn_free(a->text);
    gw_acl_encode(&a->acl, &a->text, &a->text_len);
    if (gw_objmeta_replace(m->meta.ptr, m->meta.len, GW_OBJMETA_ACL, a->text, a->text_len,
                           &a->meta, &a->meta_len) != CN_OK) {
        gw_req_error(r, GW_S3_METADATA_TOO_LARGE, NULL);
        return;
    }
    a->etag = cn_memdup(m->etag.ptr, m->etag.len > 0 ? m->etag.len : 1);
    struct gw_store_record rec = {
        .key = a->rkey, .key_len = a->rkey_len,
        .etag = a->etag, .etag_len = m->etag.len,
        .has_osize = MSG_HAS(m, MSG_F_OSIZE), .osize = m->osize,
        .meta = a->meta, .meta_len = a->meta_len,
        .ver = r->id, .ts = m->ts + 1,   /* as a tagging write (s3_tagging.c) */
    };
    struct evbuffer *data = evbuffer_new();
    gw_storage_reply_move_payload(res->reply, data);
    a->blob = gw_blob_from_evbuffer(data);
    gw_req_hold(r);
    gw_store_put(r->s3->store, &rec, a->blob, gw_s3_acl_object_on_written, r);
}

static void gw_s3_acl_bucket_write(struct gw_req *r);

/* Reads the record at key whole for PUT ?acl: the object's, a version's,
 * or the other copy of the version rewritten. */
static void gw_s3_acl_object_read_from(struct gw_req *r, const char *key, size_t key_len)
{
    struct gw_s3_acl_put *a = GW_REQ_STATE(r, gw_s3_acl_put);
    memcpy(a->rkey, key, key_len);
    a->rkey_len = key_len;
    gw_req_hold(r);
    gw_store_get(r->s3->store, a->rkey, a->rkey_len, 1, 0, 0, gw_s3_acl_object_on_record, r);
}

/* The new ACL is in a->acl (owner as given, or empty): check and store it. */
static void gw_s3_acl_put_apply(struct gw_req *r, int canned_given, const char *canned,
                                size_t clen)
{
    struct gw_s3_acl_put *a = GW_REQ_STATE(r, gw_s3_acl_put);
    enum gw_s3_err err = gw_s3_acl_put_check(r, &a->acl, canned_given, canned, clen);
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    if (r->key != NULL) {
        if (gw_req_param(r, "versionId") != NULL)
            gw_s3_versions_get(r, gw_s3_acl_object_read_from);
        else
            gw_s3_acl_object_read_from(r, a->skey, a->skey_len);
        return;
    }
    const char *owner = r->access_cfg->owner;
    if (a->acl.owner[0] != '\0' && strcmp(a->acl.owner, owner) != 0) {
        gw_req_error(r, GW_S3_ACCESS_DENIED, "The owner in the ACL is not the bucket's owner.");
        return;
    }
    memcpy(a->acl.owner, owner, sizeof(a->acl.owner));
    char *text;
    size_t len;
    gw_acl_encode(&a->acl, &text, &len);
    /* the bucket configuration write keeps its own state in r->state */
    gw_req_state_drop(r);
    gw_s3_bucket_cfg_read(r, GW_ACCESS_CFG_ACL, gw_s3_acl_bucket_write);
    struct gw_s3_bucket_cfg *c = GW_REQ_STATE(r, gw_s3_bucket_cfg);
    c->new_value = text;   /* written once the read came back (gw_s3_acl_bucket_write) */
    c->new_len = len;
}

static void gw_s3_acl_body(struct gw_req *r, enum gw_s3_err err, struct evbuffer *data)
{
    struct gw_s3_acl_put *a = GW_REQ_STATE(r, gw_s3_acl_put);
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    size_t len = evbuffer_get_length(data);
    const char *body = len > 0 ? (const char *)evbuffer_pullup(data, -1) : "";
    err = gw_acl_parse_xml(&a->acl, body, len);
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    gw_s3_acl_put_apply(r, 0, NULL, 0);
}

/* The bucket record was read again for the write: set "acl". */
static void gw_s3_acl_bucket_write(struct gw_req *r)
{
    struct gw_s3_bucket_cfg *c = GW_REQ_STATE(r, gw_s3_bucket_cfg);
    char *v = c->new_value;
    c->new_value = NULL;
    gw_s3_bucket_cfg_write(r, v, c->new_len, gw_s3_acl_put_done);
}

/* The request's ACL: its body, or its headers. */
static void gw_s3_acl_put_start(struct gw_req *r)
{
    struct gw_s3_acl_put *a = cn_calloc(1, sizeof(*a));
    gw_req_state_set(r, &a->hs, &gw_s3_acl_put_hstate);
    if (r->key != NULL)
        a->skey_len = gw_keys_object(a->skey, r->bucket, r->bucket_len, r->key, r->key_len);
    const struct gw_http_parser *h = r->http;
    if (h->content_length > 0 || h->chunked) {
        gw_s3_body_read(r, GW_ACL_XML_MAX_BYTES, GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED,
                        gw_s3_acl_body);
        return;
    }
    const char *writer = r->access_cfg != NULL ? r->access_cfg->owner : gw_s3_acl_writer(r);
    int given;
    const char *canned, *why = NULL;
    size_t clen;
    enum gw_s3_err err =
        gw_s3_acl_from_headers(r, writer, writer, &a->acl, &given, &canned, &clen, &why);
    if (err == GW_S3_OK && !given) {
        err = GW_S3_MISSING_SECURITY_HEADER;
        why = "Your request was missing a required header: x-amz-acl";
    }
    if (err != GW_S3_OK) {
        gw_req_error(r, err, why);
        return;
    }
    a->acl.owner[0] = '\0';   /* the resource's owner, filled in when applied */
    gw_s3_acl_put_apply(r, canned != NULL, canned, clen);
}

void gw_s3_subres_acl_put(struct gw_req *r)
{
    /* decided again on the bucket's current record, which also refreshes
     * r->access_cfg: the ownership and public access block checked below
     * are the bucket's now, not a cached copy's */
    gw_s3_bucket_require(r, gw_s3_acl_put_start);
}
