/* The access decision: the one place where the gateway decides whether a
 * principal (an account, or anonymous) may perform an S3 action on a bucket
 * or an object. Every S3 operation reaches it (the router through
 * bucket_owner.c before the handler; handlers that read the bucket record
 * or the object afresh decide again on what they read).
 *
 * It decides on the bucket's access config (owner, object ownership,
 * public access block, bucket ACL, policy: all from the bucket record's
 * meta, bucket_meta.h, and cached per worker with the owner) and, for the
 * actions an object ACL can grant, the object's ACL, as S3 does:
 *   1. an explicit Deny of the bucket policy wins (except over the owner's
 *      own Get/Put/DeleteBucketPolicy, so an owner cannot lock itself out);
 *   2. the bucket owner may do everything;
 *   3. an Allow of the policy (ignored for other accounts when
 *      RestrictPublicBuckets is on and the policy is public);
 *   4. an ACL grant (bucket ACL for bucket actions, object ACL for object
 *      reads and object ACL operations) unless ownership is
 *      BucketOwnerEnforced; AllUsers/AuthenticatedUsers grants are skipped
 *      under IgnorePublicAcls;
 *   5. else deny (403 AccessDenied).
 * A restricted key (key_record.h, `cairn-admin key allow`) is checked
 * before all of this: its account's rights are the ceiling and the key's
 * allow list narrows them, never widens: the bucket must be listed (exact
 * bytes of the parsed name) with the right the action needs (READ, WRITE or
 * OWNER: gw_access_key_right()), else deny whatever the ACLs and policy
 * say. CreateBucket, decided here too on an empty config, is allowed to any
 * signed principal, and to a restricted key only with its create_bucket
 * flag (the key then has on the new bucket what its list says: nothing when
 * the bucket is not listed). */
#ifndef GW_ACCESS_H
#define GW_ACCESS_H

#include <stddef.h>
#include <stdint.h>

#include "acl.h"
#include "bucket_meta.h"
#include "policy.h"

struct gw_req;
struct gw_cred;
struct gw_key_limits;

enum gw_access_ownership {
    GW_OWNERSHIP_OBJECT_WRITER = 0,
    GW_OWNERSHIP_BUCKET_OWNER_PREFERRED,
    GW_OWNERSHIP_BUCKET_OWNER_ENFORCED,
};

/* Public access block flags. */
#define GW_PAB_BLOCK_PUBLIC_ACLS 1u
#define GW_PAB_IGNORE_PUBLIC_ACLS 2u
#define GW_PAB_BLOCK_PUBLIC_POLICY 4u
#define GW_PAB_RESTRICT_PUBLIC_BUCKETS 8u
#define GW_PAB_ALL 15u

/* The bucket's access config, decoded from its record. Reference counted:
 * the worker's cache holds one reference, each request that decided on it
 * another, so a cache refresh never frees what a request still reads. */
struct gw_access_config {
    int refs;
    char owner[GW_ACL_ID_MAX + 1];
    int ownership;                 /* enum gw_access_ownership */
    int ownership_set;             /* an explicit OwnershipControls is stored */
    unsigned pab;                  /* GW_PAB_* */
    int pab_set;                   /* an explicit PublicAccessBlock is stored */
    struct gw_acl *acl;            /* NULL: the owner's FULL_CONTROL alone */
    struct gw_policy *policy;      /* NULL: none */
    int policy_public;
    size_t policy_bytes;           /* the policy's JSON length (cache budget) */
};

/* The names of the configurations in the bucket meta. */
#define GW_ACCESS_CFG_ACL "acl"
#define GW_ACCESS_CFG_POLICY "policy"
#define GW_ACCESS_CFG_PAB "pab"
#define GW_ACCESS_CFG_OWNERSHIP "ownership"

/* Builds the access config of bucket (NUL-terminated) from its decoded
 * meta. A stored configuration that does not parse is taken as the most
 * restrictive reading (a policy that cannot be read denies everyone but
 * the owner: it is dropped and pab_set with all flags). Never NULL; the
 * caller owns one reference. */
struct gw_access_config *gw_access_config_from_meta(const struct gw_bucket_meta *m,
                                                    const char *bucket);
void gw_access_config_ref(struct gw_access_config *c);
void gw_access_config_unref(struct gw_access_config *c);

/* "BucketOwnerEnforced"... and back (-1: unknown). */
const char *gw_access_ownership_name(int ownership);
int gw_access_ownership_parse(const char *s, size_t n);
/* The stored "pab" text: four '0'/'1' in the order of the GW_PAB_* bits. */
void gw_access_pab_encode(unsigned pab, char out[5]);
int gw_access_pab_decode(const char *s, size_t n, unsigned *pab);

/* ---- the pure decision -------------------------------------------------- */

enum gw_access_result {
    GW_ACCESS_DENY = 0,
    GW_ACCESS_ALLOW,
    GW_ACCESS_NEED_OBJECT,   /* only an object ACL could still allow it: the
                                caller decides again once it read the object */
};

struct gw_access_query {
    const char *principal;         /* account id; NULL: anonymous */
    const char *action;            /* "s3:GetObject" */
    const char *bucket;
    size_t bucket_len;
    const char *key;               /* NULL: a bucket action */
    size_t key_len;
    int source_family;             /* aws:SourceIp (policy.h) */
    unsigned char source[16];
    const char *prefix;            /* s3:prefix; NULL: absent */
    size_t prefix_len;
    int secure;                    /* aws:SecureTransport */
    int object_known;              /* object_acl is the object's (read) */
    const struct gw_acl *object_acl; /* NULL with object_known: no ACL stored */
    const struct gw_key_limits *limits; /* the key's restrictions; NULL: none */
    int admin;                     /* a verified admin key's (admin=true) request */
};

/* The gateway's own operator actions ("cairn:GetStatus": GET
 * /_cairn/status) are allowed to a signed request of an admin key alone,
 * whatever the bucket config; no ACL, policy or key restriction grants
 * them to anyone else. */
#define GW_ACCESS_ACTION_STATUS "cairn:GetStatus"

/* Decides q on c (the rule above). Pure: for unit tests. */
enum gw_access_result gw_access_eval(const struct gw_access_config *c,
                                     const struct gw_access_query *q);

/* The right (GW_KEY_RIGHT_*) a restricted key needs for action on a
 * listed bucket: READ for object reads and listings, WRITE for object
 * writes and deletes, OWNER for every other action (an action not named
 * needs OWNER: new actions fail closed). */
unsigned gw_access_key_right(const char *action);

/* The config CreateBucket is decided on (no bucket exists yet). */
extern const struct gw_access_config gw_access_no_bucket;

/* The ACL permission that grants action (GW_ACL_*; 0: none can), and
 * whether it is read from the object's ACL (*on_object) or the bucket's. */
unsigned gw_access_action_perm(const char *action, int *on_object);

/* ---- the request's decision ----------------------------------------------- */

/* The credential of anonymous requests (its owner_id is AWS's anonymous
 * canonical id, which no signed request is given). */
extern const struct gw_cred gw_access_anonymous;

/* THE access decision for r: may r's principal perform action on bucket
 * (and key[klen] when non-NULL) under c? Fills the query from r (its
 * principal, client address, the prefix parameter of a listing) and, when
 * object_acl_known, the object's ACL (object_acl NULL: none stored). Logs
 * refusals. Returns the gw_access_eval() result. */
enum gw_access_result gw_access_decide(struct gw_req *r, const struct gw_access_config *c,
                                       const char *action, const char *bucket, size_t blen,
                                       const char *key, size_t klen, int object_acl_known,
                                       const struct gw_acl *object_acl);

/* The object-ACL half of a decision the router left to the handler
 * (r->access_need_object): decides r's operation on r's key with the ACL in
 * the object's meta (":acl", objmeta.h; meta[len] as stored). 1: allowed
 * (also when nothing was left to decide), 0: the caller answers
 * AccessDenied. */
int gw_access_object_allows(struct gw_req *r, const void *meta, size_t len);

/* The same for a copy's source (r->access_need_source): s3:GetObject on
 * r->copy_src with the ACL in the source record's meta. */
int gw_access_source_allows(struct gw_req *r, const void *meta, size_t len);

/* What to answer for a copy source that does not exist: NoSuchKey when r
 * may list the source bucket (s3:ListBucket), else AccessDenied. */
enum gw_s3_err gw_access_source_missing(struct gw_req *r);

/* The principal of r for ACL owners and grants: its account id, or NULL
 * when anonymous. */
const char *gw_access_principal(const struct gw_req *r);

#endif
