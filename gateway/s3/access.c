/* The access decision (access.h): the bucket's access config, the pure
 * evaluation, and gw_access_decide(), through which every S3 operation's
 * permission goes. */
#include "access.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "credentials.h"
#include "key_record.h"
#include "objmeta.h"
#include "request.h"
#include "s3_ops.h"
#include "s3_versions.h"

#include "cn/alloc.h"
#include "cn/log.h"
#include "cn/rc.h"

const struct gw_cred gw_access_anonymous = {
    .access_key = "",
    .secret_key = "",
    .owner_id = "65a011a29cdf8ec533ec3d1ccaae921c",
    .display_name = "anonymous",
};

/* ---- the config ----------------------------------------------------------- */

static const char *const gw_access_ownership_names[] = {
    [GW_OWNERSHIP_OBJECT_WRITER] = "ObjectWriter",
    [GW_OWNERSHIP_BUCKET_OWNER_PREFERRED] = "BucketOwnerPreferred",
    [GW_OWNERSHIP_BUCKET_OWNER_ENFORCED] = "BucketOwnerEnforced",
};

const char *gw_access_ownership_name(int ownership)
{
    if (ownership < 0 || (size_t)ownership >= CN_ARRAY_LEN(gw_access_ownership_names))
        return "ObjectWriter";
    return gw_access_ownership_names[ownership];
}

int gw_access_ownership_parse(const char *s, size_t n)
{
    for (size_t i = 0; i < CN_ARRAY_LEN(gw_access_ownership_names); i++)
        if (n == strlen(gw_access_ownership_names[i]) &&
            memcmp(s, gw_access_ownership_names[i], n) == 0)
            return (int)i;
    return -1;
}

void gw_access_pab_encode(unsigned pab, char out[5])
{
    for (unsigned i = 0; i < 4; i++)
        out[i] = (pab & (1u << i)) ? '1' : '0';
    out[4] = '\0';
}

int gw_access_pab_decode(const char *s, size_t n, unsigned *pab)
{
    *pab = 0;
    if (n != 4)
        return CN_INVAL;
    for (unsigned i = 0; i < 4; i++) {
        if (s[i] != '0' && s[i] != '1')
            return CN_INVAL;
        if (s[i] == '1')
            *pab |= 1u << i;
    }
    return CN_OK;
}

struct gw_access_config *gw_access_config_from_meta(const struct gw_bucket_meta *m,
                                                    const char *bucket)
{
    struct gw_access_config *c = cn_calloc(1, sizeof(*c));
    c->refs = 1;
    memcpy(c->owner, m->owner, CN_MIN(m->owner_len, (size_t)GW_ACL_ID_MAX));
    const struct gw_bucket_meta_config *v;
    if ((v = gw_bucket_meta_config(m, GW_ACCESS_CFG_OWNERSHIP)) != NULL) {
        int o = gw_access_ownership_parse(v->value, v->value_len);
        c->ownership = o >= 0 ? o : GW_OWNERSHIP_BUCKET_OWNER_ENFORCED;
        c->ownership_set = 1;
    }
    if ((v = gw_bucket_meta_config(m, GW_ACCESS_CFG_PAB)) != NULL) {
        if (gw_access_pab_decode(v->value, v->value_len, &c->pab) != CN_OK)
            c->pab = GW_PAB_ALL;
        c->pab_set = 1;
    }
    if ((v = gw_bucket_meta_config(m, GW_ACCESS_CFG_ACL)) != NULL) {
        struct gw_acl *acl = cn_malloc(sizeof(*acl));
        if (gw_acl_decode(acl, v->value, v->value_len) == CN_OK)
            c->acl = gw_acl_dup(acl);
        cn_free(acl);   /* unreadable: no grants, the owner alone */
    }
    if ((v = gw_bucket_meta_config(m, GW_ACCESS_CFG_POLICY)) != NULL) {
        char why[GW_POLICY_WHY_MAX];
        c->policy = gw_policy_parse(v->value, v->value_len, bucket, why);
        if (c->policy == NULL) {   /* unreadable: nothing public, nobody else */
            c->pab = GW_PAB_ALL;
            c->pab_set = 1;
            c->ownership = GW_OWNERSHIP_BUCKET_OWNER_ENFORCED;
        } else {
            c->policy_public = gw_policy_is_public(c->policy);
            c->policy_bytes = v->value_len;
        }
    }
    return c;
}

void gw_access_config_ref(struct gw_access_config *c)
{
    c->refs++;
}

void gw_access_config_unref(struct gw_access_config *c)
{
    if (c == NULL || --c->refs > 0)
        return;
    cn_free(c->acl);
    gw_policy_free(c->policy);
    cn_free(c);
}

/* ---- the pure decision ------------------------------------------------------ */

struct gw_access_perm_row {
    const char *action;
    unsigned perm;
    int on_object;
};

/* What an ACL grant gives, as S3's ACL permission table maps it. */
static const struct gw_access_perm_row gw_access_perm_rows[] = {
    {"s3:ListBucket", GW_ACL_READ, 0},
    {"s3:ListBucketVersions", GW_ACL_READ, 0},
    {"s3:ListBucketMultipartUploads", GW_ACL_READ, 0},
    {"s3:PutObject", GW_ACL_WRITE, 0},
    {"s3:DeleteObject", GW_ACL_WRITE, 0},
    {"s3:AbortMultipartUpload", GW_ACL_WRITE, 0},
    {"s3:ListMultipartUploadParts", GW_ACL_WRITE, 0},
    {"s3:GetBucketAcl", GW_ACL_READ_ACP, 0},
    {"s3:PutBucketAcl", GW_ACL_WRITE_ACP, 0},
    {"s3:GetObject", GW_ACL_READ, 1},
    {"s3:GetObjectVersion", GW_ACL_READ, 1},
    {"s3:DeleteObjectVersion", GW_ACL_WRITE, 0},
    {"s3:GetObjectAcl", GW_ACL_READ_ACP, 1},
    {"s3:PutObjectAcl", GW_ACL_WRITE_ACP, 1},
    {"s3:GetObjectVersionAcl", GW_ACL_READ_ACP, 1},
    {"s3:PutObjectVersionAcl", GW_ACL_WRITE_ACP, 1},
};

unsigned gw_access_action_perm(const char *action, int *on_object)
{
    *on_object = 0;
    for (size_t i = 0; i < CN_ARRAY_LEN(gw_access_perm_rows); i++)
        if (strcmp(action, gw_access_perm_rows[i].action) == 0) {
            *on_object = gw_access_perm_rows[i].on_object;
            return gw_access_perm_rows[i].perm;
        }
    return 0;
}

const struct gw_access_config gw_access_no_bucket = {.refs = 1};

struct gw_access_right_row {
    const char *action;
    unsigned right;
};

/* What a restricted key's rights cover (Garage's read / write / owner). */
static const struct gw_access_right_row gw_access_right_rows[] = {
    {"s3:GetObject", GW_KEY_RIGHT_READ},
    {"s3:GetObjectVersion", GW_KEY_RIGHT_READ},
    {"s3:GetObjectTagging", GW_KEY_RIGHT_READ},
    {"s3:GetObjectVersionTagging", GW_KEY_RIGHT_READ},
    {"s3:ListBucket", GW_KEY_RIGHT_READ},
    {"s3:ListBucketVersions", GW_KEY_RIGHT_READ},
    {"s3:ListBucketMultipartUploads", GW_KEY_RIGHT_READ},
    {"s3:GetBucketLocation", GW_KEY_RIGHT_READ},
    {"s3:GetBucketVersioning", GW_KEY_RIGHT_READ},
    {"s3:PutObject", GW_KEY_RIGHT_WRITE},
    {"s3:DeleteObject", GW_KEY_RIGHT_WRITE},
    {"s3:DeleteObjectVersion", GW_KEY_RIGHT_WRITE},
    {"s3:AbortMultipartUpload", GW_KEY_RIGHT_WRITE},
    {"s3:ListMultipartUploadParts", GW_KEY_RIGHT_WRITE},
    {"s3:PutObjectTagging", GW_KEY_RIGHT_WRITE},
    {"s3:PutObjectVersionTagging", GW_KEY_RIGHT_WRITE},
    {"s3:DeleteObjectTagging", GW_KEY_RIGHT_WRITE},
    {"s3:DeleteObjectVersionTagging", GW_KEY_RIGHT_WRITE},
};

unsigned gw_access_key_right(const char *action)
{
    for (size_t i = 0; i < CN_ARRAY_LEN(gw_access_right_rows); i++)
        if (strcmp(action, gw_access_right_rows[i].action) == 0)
            return gw_access_right_rows[i].right;
    return GW_KEY_RIGHT_OWNER;
}

/* Whether a restricted key's list lets q through (the account's rights
 * are decided after it). */
static int gw_access_key_allows(const struct gw_key_limits *l, const struct gw_access_query *q)
{
    if (strcmp(q->action, "s3:CreateBucket") == 0)
        return l->create_bucket;
    const struct gw_key_allow *a = gw_key_limits_find(l, q->bucket, q->bucket_len);
    return a != NULL && (a->rights & gw_access_key_right(q->action)) != 0;
}

/* The policy actions an owner keeps whatever its policy says. */
static int gw_access_is_policy_admin(const char *action)
{
    return strcmp(action, "s3:GetBucketPolicy") == 0 ||
           strcmp(action, "s3:PutBucketPolicy") == 0 ||
           strcmp(action, "s3:DeleteBucketPolicy") == 0;
}

enum gw_access_result gw_access_eval(const struct gw_access_config *c,
                                     const struct gw_access_query *q)
{
    if (strncmp(q->action, "cairn:", 6) == 0)   /* operator actions: admin keys only */
        return q->admin && q->principal != NULL ? GW_ACCESS_ALLOW : GW_ACCESS_DENY;
    if (q->limits != NULL && !gw_access_key_allows(q->limits, q))
        return GW_ACCESS_DENY;   /* the key's list narrows whatever follows */
    if (strcmp(q->action, "s3:CreateBucket") == 0)
        return q->principal != NULL ? GW_ACCESS_ALLOW : GW_ACCESS_DENY;
    int owner = q->principal != NULL && strcmp(q->principal, c->owner) == 0;
    enum gw_policy_effect eff = GW_POLICY_NONE;
    if (c->policy != NULL) {
        struct gw_policy_request pq = {
            .principal = q->principal,
            .action = q->action,
            .bucket = q->bucket,
            .bucket_len = q->bucket_len,
            .key = q->key,
            .key_len = q->key_len,
            .source_family = q->source_family,
            .prefix = q->prefix,
            .prefix_len = q->prefix_len,
            .secure = q->secure,
        };
        memcpy(pq.source, q->source, sizeof(pq.source));
        eff = gw_policy_eval(c->policy, &pq);
        if (eff == GW_POLICY_DENY && !(owner && gw_access_is_policy_admin(q->action)))
            return GW_ACCESS_DENY;
    }
    if (owner)
        return GW_ACCESS_ALLOW;
    if (eff == GW_POLICY_ALLOW &&
        !((c->pab & GW_PAB_RESTRICT_PUBLIC_BUCKETS) && c->policy_public))
        return GW_ACCESS_ALLOW;
    if (c->ownership == GW_OWNERSHIP_BUCKET_OWNER_ENFORCED)
        return GW_ACCESS_DENY;   /* ACLs are disabled */
    int on_object;
    unsigned perm = gw_access_action_perm(q->action, &on_object);
    if (perm == 0)
        return GW_ACCESS_DENY;
    struct gw_acl_who who = {q->principal};
    int ignore_public = (c->pab & GW_PAB_IGNORE_PUBLIC_ACLS) != 0;
    if (!on_object)
        return c->acl != NULL && (gw_acl_perms(c->acl, &who, ignore_public) & perm)
                   ? GW_ACCESS_ALLOW
                   : GW_ACCESS_DENY;
    if (!q->object_known)
        return GW_ACCESS_NEED_OBJECT;
    return q->object_acl != NULL && (gw_acl_perms(q->object_acl, &who, ignore_public) & perm)
               ? GW_ACCESS_ALLOW
               : GW_ACCESS_DENY;
}

/* ---- the request's decision --------------------------------------------- */

const char *gw_access_principal(const struct gw_req *r)
{
    return r->anonymous || r->auth.cred == NULL ? NULL : r->auth.cred->owner_id;
}

/* The client's address for aws:SourceIp. */
static void gw_access_source(const struct gw_req *r, struct gw_access_query *q)
{
    struct sockaddr_storage ss;
    if (gw_http_req_peer(&r->hr, &ss) != CN_OK)
        return;
    if (ss.ss_family == AF_INET) {
        q->source_family = AF_INET;
        memcpy(q->source, &((struct sockaddr_in *)&ss)->sin_addr, 4);
    } else if (ss.ss_family == AF_INET6) {
        const struct in6_addr *a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a)) {
            q->source_family = AF_INET;
            memcpy(q->source, a->s6_addr + 12, 4);
        } else {
            q->source_family = AF_INET6;
            memcpy(q->source, a->s6_addr, 16);
        }
    }
}

enum gw_access_result gw_access_decide(struct gw_req *r, const struct gw_access_config *c,
                                       const char *action, const char *bucket, size_t blen,
                                       const char *key, size_t klen, int object_acl_known,
                                       const struct gw_acl *object_acl)
{
    struct gw_access_query q = {
        .principal = gw_access_principal(r),
        .action = action,
        .bucket = bucket,
        .bucket_len = blen,
        .key = key,
        .key_len = klen,
        .object_known = object_acl_known,
        .object_acl = object_acl,
        .limits = r->anonymous || r->auth.cred == NULL ? NULL : r->auth.cred->limits,
        .admin = !r->anonymous && r->auth.err == GW_S3_OK && r->auth.cred != NULL &&
                 r->auth.cred->admin,
    };
    if (c->policy != NULL) {
        gw_access_source(r, &q);
        q.secure = gw_http_req_is_tls(&r->hr);
    }
    const struct gw_req_param *prefix = gw_req_param(r, "prefix");
    if (key == NULL && prefix != NULL) {
        q.prefix = prefix->value;
        q.prefix_len = prefix->value_len;
    } else if (key == NULL && strcmp(action, "s3:ListBucket") == 0) {
        q.prefix = "";   /* a listing without prefix lists under "" */
    }
    enum gw_access_result res = gw_access_eval(c, &q);
    if (res == GW_ACCESS_DENY)
        CN_LOGR(CN_LOG_INFO, r->id, "access denied: %s on '%.*s%s%.*s' for %s", action,
                (int)blen, bucket, key != NULL ? "/" : "", key != NULL ? (int)CN_MIN(klen, 256) : 0,
                key != NULL ? key : "", q.principal != NULL ? q.principal : "anonymous");
    return res;
}

/* The object ACL stored in meta[len] (":acl"), or NULL (cn_free() it). */
static struct gw_acl *gw_access_meta_acl(const void *meta, size_t len)
{
    struct gw_objmeta om;
    struct gw_acl *acl = NULL;
    if (gw_objmeta_decode(&om, meta, len) == CN_OK) {
        const struct gw_objmeta_header *h = gw_objmeta_find(&om, GW_OBJMETA_ACL);
        if (h != NULL) {
            acl = cn_malloc(sizeof(*acl));
            if (gw_acl_decode(acl, h->value, h->value_len) != CN_OK) {
                cn_free(acl);
                acl = NULL;
            }
        }
    }
    return acl;
}

int gw_access_source_allows(struct gw_req *r, const void *meta, size_t len)
{
    if (!r->access_need_source)
        return 1;
    if (r->access_src_cfg == NULL || !r->has_copy_src)
        return 0;
    struct gw_acl *acl = gw_access_meta_acl(meta, len);
    enum gw_access_result res =
        gw_access_decide(r, r->access_src_cfg, gw_s3_versions_source_action(r),
                         r->copy_src.bucket, r->copy_src.bucket_len, r->copy_src.key,
                         r->copy_src.key_len, 1, acl);
    cn_free(acl);
    return res == GW_ACCESS_ALLOW;
}

enum gw_s3_err gw_access_source_missing(struct gw_req *r)
{
    if (r->access_src_cfg == NULL || !r->has_copy_src)
        return GW_S3_NO_SUCH_KEY;   /* decided on no config: no source bucket read */
    return gw_access_decide(r, r->access_src_cfg, "s3:ListBucket", r->copy_src.bucket,
                            r->copy_src.bucket_len, NULL, 0, 0, NULL) == GW_ACCESS_ALLOW
               ? GW_S3_NO_SUCH_KEY
               : GW_S3_ACCESS_DENIED;
}

int gw_access_object_allows(struct gw_req *r, const void *meta, size_t len)
{
    if (!r->access_need_object)
        return 1;
    if (r->access_cfg == NULL)
        return 0;
    struct gw_acl *acl = gw_access_meta_acl(meta, len);
    enum gw_access_result res =
        gw_access_decide(r, r->access_cfg, gw_s3_versions_action(r), r->bucket, r->bucket_len,
                         r->key, r->key_len, 1, acl);
    cn_free(acl);
    return res == GW_ACCESS_ALLOW;
}
