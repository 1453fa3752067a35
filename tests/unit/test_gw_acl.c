/* ACLs (acl.c) and the pure access decision (access.c's gw_access_eval):
 * canned ACLs, grant headers, AccessControlPolicy documents, the stored
 * form's round trip, the permissions a grant gives, and the order of the
 * decision (explicit Deny, owner, policy Allow, ACL grant, else deny) with
 * object ownership and the public access block, and a restricted key's
 * list narrowing (never widening) its account's rights. */
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "acl.h"
#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/test.h"
#include "key_record.h"

CN_TEST_GLOBALS;

static struct gw_acl *test_acl(void)
{
    return cn_calloc(1, sizeof(struct gw_acl));
}

static void test_canned(void)
{
    struct gw_acl *a = test_acl();
    struct gw_acl_who owner = {"o"}, other = {"x"}, anon = {NULL}, bo = {"bo"};
    CN_CHECK_EQ_INT(gw_acl_canned(a, "private", 7, "o", "o"), CN_OK);
    CN_CHECK_EQ_INT((int)a->n, 1);
    CN_CHECK_EQ_INT(gw_acl_perms(a, &owner, 0), 31);
    CN_CHECK_EQ_INT(gw_acl_perms(a, &other, 0), 0);
    CN_CHECK(!gw_acl_is_public(a));
    CN_CHECK_EQ_INT(gw_acl_canned(a, "public-read", 11, "o", "o"), CN_OK);
    CN_CHECK_EQ_INT(gw_acl_perms(a, &anon, 0), GW_ACL_READ);
    CN_CHECK_EQ_INT(gw_acl_perms(a, &other, 0), GW_ACL_READ);
    CN_CHECK_EQ_INT(gw_acl_perms(a, &anon, 1), 0);   /* IgnorePublicAcls */
    CN_CHECK(gw_acl_is_public(a));
    CN_CHECK_EQ_INT(gw_acl_canned(a, "public-read-write", 17, "o", "o"), CN_OK);
    CN_CHECK_EQ_INT(gw_acl_perms(a, &anon, 0), GW_ACL_READ | GW_ACL_WRITE);
    CN_CHECK_EQ_INT(gw_acl_canned(a, "authenticated-read", 18, "o", "o"), CN_OK);
    CN_CHECK_EQ_INT(gw_acl_perms(a, &anon, 0), 0);
    CN_CHECK_EQ_INT(gw_acl_perms(a, &other, 0), GW_ACL_READ);
    CN_CHECK_EQ_INT(gw_acl_canned(a, "bucket-owner-read", 17, "o", "bo"), CN_OK);
    CN_CHECK_EQ_INT(gw_acl_perms(a, &bo, 0), GW_ACL_READ);
    CN_CHECK_EQ_INT(gw_acl_canned(a, "bucket-owner-full-control", 25, "o", "bo"), CN_OK);
    CN_CHECK_EQ_INT(gw_acl_perms(a, &bo, 0), 31);
    CN_CHECK_EQ_STR(a->owner, "o");
    CN_CHECK_EQ_INT(gw_acl_canned(a, "Public-Read", 11, "o", "o"), CN_INVAL);
    CN_CHECK_EQ_INT(gw_acl_canned(a, "public-read-", 12, "o", "o"), CN_INVAL);
    cn_free(a);
}

static void test_grant_headers(void)
{
    struct gw_acl *a = test_acl();
    struct gw_acl_who x = {"x"}, y = {"y"}, anon = {NULL};
    CN_CHECK_EQ_INT(gw_acl_add_grant_header(a, GW_ACL_READ, "id=\"x\", id=y", 12), GW_S3_OK);
    static const char all[] = "uri=\"http://acs.amazonaws.com/groups/global/AllUsers\"";
    CN_CHECK_EQ_INT(gw_acl_add_grant_header(a, GW_ACL_WRITE, all, sizeof(all) - 1), GW_S3_OK);
    CN_CHECK_EQ_INT((int)a->n, 3);
    CN_CHECK_EQ_INT(gw_acl_perms(a, &x, 0), GW_ACL_READ | GW_ACL_WRITE);
    CN_CHECK_EQ_INT(gw_acl_perms(a, &y, 0), GW_ACL_READ | GW_ACL_WRITE);
    CN_CHECK_EQ_INT(gw_acl_perms(a, &anon, 0), GW_ACL_WRITE);
    CN_CHECK_EQ_INT(gw_acl_add_grant_header(a, GW_ACL_READ, "emailAddress=\"a@b\"", 18),
                    GW_S3_UNRESOLVABLE_GRANT_BY_EMAIL_ADDRESS);
    CN_CHECK_EQ_INT(gw_acl_add_grant_header(a, GW_ACL_READ, "uri=\"http://evil/\"", 18),
                    GW_S3_INVALID_ARGUMENT);
    CN_CHECK_EQ_INT(gw_acl_add_grant_header(a, GW_ACL_READ, "id=", 3), GW_S3_INVALID_ARGUMENT);
    CN_CHECK_EQ_INT(gw_acl_add_grant_header(a, GW_ACL_READ, "id=\"a b\"", 8),
                    GW_S3_INVALID_ARGUMENT);
    CN_CHECK_EQ_INT(gw_acl_add_grant_header(a, GW_ACL_READ, "x", 1), GW_S3_INVALID_ARGUMENT);
    CN_CHECK_EQ_INT(gw_acl_add_grant_header(a, GW_ACL_READ, "", 0), GW_S3_INVALID_ARGUMENT);
    /* never more than the limit */
    a->n = 0;
    enum gw_s3_err err = GW_S3_OK;
    for (int i = 0; i <= GW_ACL_MAX_GRANTS && err == GW_S3_OK; i++)
        err = gw_acl_add_grant_header(a, GW_ACL_READ, "id=z", 4);
    CN_CHECK_EQ_INT(err, GW_S3_INVALID_ARGUMENT);
    CN_CHECK_EQ_INT((int)a->n, GW_ACL_MAX_GRANTS);
    cn_free(a);
}

static void test_xml_and_text(void)
{
    static const char doc[] =
        "<AccessControlPolicy xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        "<Owner><ID>o</ID><DisplayName>O</DisplayName></Owner><AccessControlList>"
        "<Grant><Grantee xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
        "xsi:type=\"CanonicalUser\"><ID> x </ID></Grantee><Permission>WRITE_ACP</Permission>"
        "</Grant><Grant><Grantee xsi:type=\"Group\" xmlns:xsi=\"http://www.w3.org/2001/"
        "XMLSchema-instance\"><URI>http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
        "</URI></Grantee><Permission>READ</Permission></Grant></AccessControlList>"
        "</AccessControlPolicy>";
    struct gw_acl *a = test_acl(), *b = test_acl();
    CN_CHECK_EQ_INT(gw_acl_parse_xml(a, doc, sizeof(doc) - 1), GW_S3_OK);
    CN_CHECK_EQ_STR(a->owner, "o");
    CN_CHECK_EQ_INT((int)a->n, 2);
    struct gw_acl_who x = {"x"}, anon = {NULL};
    CN_CHECK_EQ_INT(gw_acl_perms(a, &x, 0), GW_ACL_WRITE_ACP | GW_ACL_READ);
    CN_CHECK_EQ_INT(gw_acl_perms(a, &anon, 0), 0);
    char *text;
    size_t len;
    gw_acl_encode(a, &text, &len);
    CN_CHECK_EQ_INT(gw_acl_decode(b, text, len), CN_OK);
    CN_CHECK_EQ_INT((int)b->n, 2);
    CN_CHECK_EQ_STR(b->owner, "o");
    CN_CHECK(memcmp(a->g, b->g, 2 * sizeof(a->g[0])) == 0);
    struct gw_acl *c = gw_acl_dup(b);
    CN_CHECK_EQ_INT(gw_acl_perms(c, &x, 0), GW_ACL_WRITE_ACP | GW_ACL_READ);
    cn_free(c);
    cn_free(text);
    /* a stored form that is not ours is refused whole */
    CN_CHECK_EQ_INT(gw_acl_decode(b, "acl1\no\nREAD all -", 17), CN_INVAL);
    CN_CHECK_EQ_INT(gw_acl_decode(b, "acl1\no\nREAD all -\nBOGUS id x\n", 29), CN_INVAL);
    CN_CHECK_EQ_INT(gw_acl_decode(b, "acl2\n", 5), CN_INVAL);
    CN_CHECK_EQ_INT((int)b->n, 0);
    static const char *const bad[] = {
        "<AccessControlPolicy><AccessControlList><Grant><Permission>READ</Permission></Grant>"
        "</AccessControlList></AccessControlPolicy>",
        "<AccessControlPolicy><AccessControlList><Grant><Grantee><ID>x</ID></Grantee>"
        "<Permission>ALL</Permission></Grant></AccessControlList></AccessControlPolicy>",
        "<Policy/>",
        "<AccessControlPolicy>",
        "<!DOCTYPE a [<!ENTITY e \"x\">]><AccessControlPolicy/>",
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(bad); i++)
        CN_CHECK_EQ_INT(gw_acl_parse_xml(a, bad[i], strlen(bad[i])), GW_S3_MALFORMED_ACL_ERROR);
    static const char mail[] =
        "<AccessControlPolicy><AccessControlList><Grant><Grantee><EmailAddress>a@b"
        "</EmailAddress></Grantee><Permission>READ</Permission></Grant></AccessControlList>"
        "</AccessControlPolicy>";
    CN_CHECK_EQ_INT(gw_acl_parse_xml(a, mail, sizeof(mail) - 1),
                    GW_S3_UNRESOLVABLE_GRANT_BY_EMAIL_ADDRESS);
    int o = -1;
    static const char own[] = "<OwnershipControls><Rule><ObjectOwnership>BucketOwnerPreferred"
                              "</ObjectOwnership></Rule></OwnershipControls>";
    CN_CHECK_EQ_INT(gw_acl_parse_ownership_xml(own, sizeof(own) - 1, &o), GW_S3_OK);
    CN_CHECK_EQ_INT(o, GW_OWNERSHIP_BUCKET_OWNER_PREFERRED);
    CN_CHECK_EQ_INT(gw_acl_parse_ownership_xml("<OwnershipControls/>", 20, &o),
                    GW_S3_MALFORMED_XML);
    unsigned f;
    static const char pab[] = "<PublicAccessBlockConfiguration><IgnorePublicAcls>TRUE"
                              "</IgnorePublicAcls><BlockPublicPolicy>false</BlockPublicPolicy>"
                              "</PublicAccessBlockConfiguration>";
    CN_CHECK_EQ_INT(gw_acl_parse_pab_xml(pab, sizeof(pab) - 1, &f), GW_S3_OK);
    CN_CHECK_EQ_INT((int)f, GW_PAB_IGNORE_PUBLIC_ACLS);
    static const char pab_bad[] = "<PublicAccessBlockConfiguration><BlockPublicAcls>yes"
                                  "</BlockPublicAcls></PublicAccessBlockConfiguration>";
    CN_CHECK_EQ_INT(gw_acl_parse_pab_xml(pab_bad, sizeof(pab_bad) - 1, &f), GW_S3_MALFORMED_XML);
    cn_free(a);
    cn_free(b);
}

/* A config owned by "o" with acl (may be NULL) and policy text (may be NULL). */
static struct gw_access_config *test_config(const struct gw_acl *acl, const char *policy)
{
    struct gw_access_config *c = cn_calloc(1, sizeof(*c));
    c->refs = 1;
    strcpy(c->owner, "o");
    if (acl != NULL)
        c->acl = gw_acl_dup(acl);
    if (policy != NULL) {
        char why[GW_POLICY_WHY_MAX];
        c->policy = gw_policy_parse(policy, strlen(policy), "b", why);
        CN_CHECK(c->policy != NULL);
        c->policy_public = c->policy != NULL && gw_policy_is_public(c->policy);
    }
    return c;
}

static enum gw_access_result test_decide(const struct gw_access_config *c, const char *who,
                                         const char *action, const char *key,
                                         const struct gw_acl *object_acl, int known)
{
    struct gw_access_query q = {
        .principal = who, .action = action, .bucket = "b", .bucket_len = 1, .key = key,
        .key_len = key != NULL ? strlen(key) : 0, .object_known = known,
        .object_acl = object_acl,
    };
    return gw_access_eval(c, &q);
}

static void test_decision(void)
{
    struct gw_acl *pub = test_acl();
    gw_acl_canned(pub, "public-read", 11, "o", "o");
    struct gw_access_config *c = test_config(pub, NULL);
    /* the owner may do anything; others only what a grant gives */
    CN_CHECK_EQ_INT(test_decide(c, "o", "s3:PutBucketPolicy", NULL, NULL, 0), GW_ACCESS_ALLOW);
    CN_CHECK_EQ_INT(test_decide(c, NULL, "s3:ListBucket", NULL, NULL, 0), GW_ACCESS_ALLOW);
    CN_CHECK_EQ_INT(test_decide(c, NULL, "s3:PutObject", "k", NULL, 0), GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_decide(c, NULL, "s3:GetBucketAcl", NULL, NULL, 0), GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_decide(c, NULL, "s3:DeleteBucket", NULL, NULL, 0), GW_ACCESS_DENY);
    /* an object read waits for the object's ACL; none stored is private */
    CN_CHECK_EQ_INT(test_decide(c, NULL, "s3:GetObject", "k", NULL, 0), GW_ACCESS_NEED_OBJECT);
    CN_CHECK_EQ_INT(test_decide(c, NULL, "s3:GetObject", "k", NULL, 1), GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_decide(c, NULL, "s3:GetObject", "k", pub, 1), GW_ACCESS_ALLOW);
    CN_CHECK_EQ_INT(test_decide(c, NULL, "s3:GetObjectAcl", "k", pub, 1), GW_ACCESS_DENY);
    /* IgnorePublicAcls, and ACLs disabled */
    c->pab = GW_PAB_IGNORE_PUBLIC_ACLS;
    CN_CHECK_EQ_INT(test_decide(c, NULL, "s3:ListBucket", NULL, NULL, 0), GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_decide(c, NULL, "s3:GetObject", "k", pub, 1), GW_ACCESS_DENY);
    c->pab = 0;
    c->ownership = GW_OWNERSHIP_BUCKET_OWNER_ENFORCED;
    CN_CHECK_EQ_INT(test_decide(c, NULL, "s3:ListBucket", NULL, NULL, 0), GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_decide(c, NULL, "s3:GetObject", "k", NULL, 0), GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_decide(c, "o", "s3:GetObject", "k", NULL, 0), GW_ACCESS_ALLOW);
    gw_access_config_unref(c);
    /* an explicit Deny wins over grants and the owner, not over the
     * owner's own policy actions; a public Allow obeys RestrictPublicBuckets */
    struct gw_acl *grant = test_acl();
    gw_acl_canned(grant, "public-read", 11, "o", "o");
    c = test_config(grant, "{\"Statement\": [{\"Effect\": \"Deny\", \"Principal\": \"*\", "
                           "\"Action\": \"s3:*\", \"Resource\": [\"arn:aws:s3:::b\", "
                           "\"arn:aws:s3:::b/s/*\"]}, {\"Effect\": \"Allow\", \"Principal\": "
                           "\"*\", \"Action\": \"s3:PutObject\", \"Resource\": "
                           "\"arn:aws:s3:::b/up/*\"}]}");
    CN_CHECK_EQ_INT(test_decide(c, NULL, "s3:ListBucket", NULL, NULL, 0), GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_decide(c, "o", "s3:ListBucket", NULL, NULL, 0), GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_decide(c, "o", "s3:DeleteBucketPolicy", NULL, NULL, 0),
                    GW_ACCESS_ALLOW);
    CN_CHECK_EQ_INT(test_decide(c, "o", "s3:GetObject", "s/k", NULL, 0), GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_decide(c, NULL, "s3:GetObject", "s/k", grant, 1), GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_decide(c, NULL, "s3:PutObject", "up/k", NULL, 0), GW_ACCESS_ALLOW);
    CN_CHECK_EQ_INT(test_decide(c, NULL, "s3:PutObject", "down/k", NULL, 0), GW_ACCESS_DENY);
    c->pab = GW_PAB_RESTRICT_PUBLIC_BUCKETS;
    CN_CHECK_EQ_INT(test_decide(c, NULL, "s3:PutObject", "up/k", NULL, 0), GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_decide(c, "o", "s3:PutObject", "up/k", NULL, 0), GW_ACCESS_ALLOW);
    gw_access_config_unref(c);
    /* the stored forms of the small configurations */
    char t[5];
    unsigned f;
    gw_access_pab_encode(GW_PAB_BLOCK_PUBLIC_ACLS | GW_PAB_RESTRICT_PUBLIC_BUCKETS, t);
    CN_CHECK_EQ_STR(t, "1001");
    CN_CHECK_EQ_INT(gw_access_pab_decode(t, 4, &f), CN_OK);
    CN_CHECK_EQ_INT((int)f, 9);
    CN_CHECK_EQ_INT(gw_access_pab_decode("10x1", 4, &f), CN_INVAL);
    CN_CHECK_EQ_INT(gw_access_ownership_parse("ObjectWriter", 12), GW_OWNERSHIP_OBJECT_WRITER);
    CN_CHECK_EQ_INT(gw_access_ownership_parse("objectwriter", 12), -1);
    cn_free(pub);
    cn_free(grant);
}

/* q on bucket[blen] by principal who holding limits l. */
static enum gw_access_result test_limited(const struct gw_access_config *c, const char *who,
                                          const struct gw_key_limits *l, const char *action,
                                          const char *bucket, size_t blen, const char *key,
                                          int known)
{
    struct gw_access_query q = {
        .principal = who, .action = action, .bucket = bucket, .bucket_len = blen, .key = key,
        .key_len = key != NULL ? strlen(key) : 0, .object_known = known, .limits = l,
    };
    return gw_access_eval(c, &q);
}

static void test_key_limits(void)
{
    struct gw_key_limits *l = cn_calloc(1, sizeof(*l));
    CN_CHECK_EQ_INT(gw_key_limits_set(l, "bb", 2, GW_KEY_RIGHT_READ), CN_INVAL);   /* too short */
    CN_CHECK_EQ_INT(gw_key_limits_set(l, "b", 1, GW_KEY_RIGHT_READ), CN_INVAL);
    CN_CHECK_EQ_INT(gw_key_limits_set(l, "a1b", 3, GW_KEY_RIGHT_READ), CN_OK);
    CN_CHECK_EQ_INT(gw_key_limits_set(l, "zzz", 3, GW_KEY_RIGHTS_ALL), CN_OK);
    struct gw_access_config *c = test_config(NULL, NULL);   /* owned by "o" */
    /* the owner's key, read-only on a1b: reads pass, writes and config do not */
    CN_CHECK_EQ_INT(test_limited(c, "o", l, "s3:GetObject", "a1b", 3, "k", 0), GW_ACCESS_ALLOW);
    CN_CHECK_EQ_INT(test_limited(c, "o", l, "s3:ListBucket", "a1b", 3, NULL, 0), GW_ACCESS_ALLOW);
    CN_CHECK_EQ_INT(test_limited(c, "o", l, "s3:PutObject", "a1b", 3, "k", 0), GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_limited(c, "o", l, "s3:DeleteObject", "a1b", 3, "k", 0), GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_limited(c, "o", l, "s3:PutBucketPolicy", "a1b", 3, NULL, 0),
                    GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_limited(c, "o", l, "s3:DeleteBucket", "a1b", 3, NULL, 0),
                    GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_limited(c, "o", l, "s3:Unknown", "a1b", 3, NULL, 0), GW_ACCESS_DENY);
    /* another name, or the same in another case / with a trailing byte / a prefix of it */
    CN_CHECK_EQ_INT(test_limited(c, "o", l, "s3:GetObject", "a2b", 3, "k", 0), GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_limited(c, "o", l, "s3:GetObject", "A1B", 3, "k", 0), GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_limited(c, "o", l, "s3:GetObject", "a1b/", 4, "k", 0), GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_limited(c, "o", l, "s3:GetObject", "a1", 2, "k", 0), GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_limited(c, "o", l, "s3:GetObject", "a1b%2f", 6, "k", 0),
                    GW_ACCESS_DENY);
    /* full rights on zzz: the owner's rights come back, all of them */
    CN_CHECK_EQ_INT(test_limited(c, "o", l, "s3:PutBucketPolicy", "zzz", 3, NULL, 0),
                    GW_ACCESS_ALLOW);
    /* never wider than the account: another account's key listed with
     * every right gets nothing on o's private bucket */
    CN_CHECK_EQ_INT(test_limited(c, "x", l, "s3:GetObject", "zzz", 3, "k", 1), GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_limited(c, "x", l, "s3:PutObject", "zzz", 3, "k", 0), GW_ACCESS_DENY);
    gw_access_config_unref(c);
    /* a public-read-write bucket: the grant gives x WRITE, the key's list only READ */
    struct gw_acl *prw = test_acl();
    gw_acl_canned(prw, "public-read-write", 17, "o", "o");
    c = test_config(prw, NULL);
    CN_CHECK_EQ_INT(test_limited(c, "x", NULL, "s3:PutObject", "a1b", 3, "k", 0),
                    GW_ACCESS_ALLOW);
    CN_CHECK_EQ_INT(test_limited(c, "x", l, "s3:PutObject", "a1b", 3, "k", 0), GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_limited(c, "x", l, "s3:ListBucket", "a1b", 3, NULL, 0),
                    GW_ACCESS_ALLOW);
    /* an object read still waits for the object's ACL on a listed bucket,
     * and is refused at once elsewhere */
    CN_CHECK_EQ_INT(test_limited(c, "x", l, "s3:GetObject", "a1b", 3, "k", 0),
                    GW_ACCESS_NEED_OBJECT);
    CN_CHECK_EQ_INT(test_limited(c, "x", l, "s3:GetObject", "b2b", 3, "k", 0), GW_ACCESS_DENY);
    gw_access_config_unref(c);
    /* CreateBucket: any signed principal; a restricted key only with the flag */
    CN_CHECK_EQ_INT(test_limited(&gw_access_no_bucket, "o", NULL, "s3:CreateBucket", "new", 3,
                                 NULL, 0), GW_ACCESS_ALLOW);
    CN_CHECK_EQ_INT(test_limited(&gw_access_no_bucket, NULL, NULL, "s3:CreateBucket", "new", 3,
                                 NULL, 0), GW_ACCESS_DENY);
    CN_CHECK_EQ_INT(test_limited(&gw_access_no_bucket, "o", l, "s3:CreateBucket", "a1b", 3, NULL,
                                 0), GW_ACCESS_DENY);
    l->create_bucket = 1;
    CN_CHECK_EQ_INT(test_limited(&gw_access_no_bucket, "o", l, "s3:CreateBucket", "new", 3, NULL,
                                 0), GW_ACCESS_ALLOW);
    /* an empty list: nothing on any bucket */
    CN_CHECK_EQ_INT(gw_key_limits_set(l, "a1b", 3, 0), CN_OK);
    CN_CHECK_EQ_INT(gw_key_limits_set(l, "zzz", 3, 0), CN_OK);
    CN_CHECK_EQ_INT((int)l->n, 0);
    c = test_config(NULL, NULL);
    CN_CHECK_EQ_INT(test_limited(c, "o", l, "s3:GetObject", "zzz", 3, "k", 0), GW_ACCESS_DENY);
    gw_access_config_unref(c);
    /* the action table */
    CN_CHECK_EQ_INT((int)gw_access_key_right("s3:GetObjectVersion"), GW_KEY_RIGHT_READ);
    CN_CHECK_EQ_INT((int)gw_access_key_right("s3:AbortMultipartUpload"), GW_KEY_RIGHT_WRITE);
    CN_CHECK_EQ_INT((int)gw_access_key_right("s3:GetObjectAcl"), GW_KEY_RIGHT_OWNER);
    CN_CHECK_EQ_INT((int)gw_access_key_right("s3:PutBucketAcl"), GW_KEY_RIGHT_OWNER);
    cn_free(prw);
    cn_free(l);
}

/* The operator's status: an admin key alone, whatever a bucket's config,
 * policy or a key restriction says. */
static void test_status_action(void)
{
    struct gw_acl *pub = test_acl();
    gw_acl_canned(pub, "public-read-write", 17, "o", "o");
    struct gw_access_config *c = test_config(pub, "{\"Statement\": [{\"Effect\": \"Allow\", "
                                                  "\"Principal\": \"*\", \"Action\": \"s3:*\", "
                                                  "\"Resource\": [\"arn:aws:s3:::b\", "
                                                  "\"arn:aws:s3:::b/*\"]}]}");
    struct gw_access_query q = {.principal = "o", .action = GW_ACCESS_ACTION_STATUS, .bucket = "",
                                .bucket_len = 0};
    CN_CHECK_EQ_INT(gw_access_eval(&gw_access_no_bucket, &q), GW_ACCESS_DENY);   /* not admin */
    CN_CHECK_EQ_INT(gw_access_eval(c, &q), GW_ACCESS_DENY);   /* owner + allow-all policy */
    q.admin = 1;
    CN_CHECK_EQ_INT(gw_access_eval(&gw_access_no_bucket, &q), GW_ACCESS_ALLOW);
    q.principal = NULL;   /* anonymous can never be admin */
    CN_CHECK_EQ_INT(gw_access_eval(&gw_access_no_bucket, &q), GW_ACCESS_DENY);
    q.principal = "p";
    q.action = "cairn:Unknown";   /* any operator action: admin only, same rule */
    CN_CHECK_EQ_INT(gw_access_eval(&gw_access_no_bucket, &q), GW_ACCESS_ALLOW);
    q.admin = 0;
    CN_CHECK_EQ_INT(gw_access_eval(c, &q), GW_ACCESS_DENY);
    gw_access_config_unref(c);
    cn_free(pub);
}

static const struct cn_test_case cases[] = {
    {"status_action", test_status_action},
    {"canned", test_canned},
    {"grant_headers", test_grant_headers},
    {"xml_and_text", test_xml_and_text},
    {"decision", test_decision},
    {"key_limits", test_key_limits},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
