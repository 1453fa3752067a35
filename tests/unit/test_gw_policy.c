/* Bucket policies (policy.c): what gw_policy_parse() refuses as
 * MalformedPolicy, and gw_policy_eval()'s answers: explicit Deny wins,
 * principals, actions and resources with wildcards, NotAction/NotResource,
 * aws:SourceIp (CIDR, v4 and v6) and s3:prefix conditions, IsPublic. */
#include <string.h>
#include <sys/socket.h>

#include "cn/rc.h"
#include "cn/test.h"
#include "policy.h"

CN_TEST_GLOBALS;

static struct gw_policy *test_parse(const char *json)
{
    char why[GW_POLICY_WHY_MAX];
    struct gw_policy *p = gw_policy_parse(json, strlen(json), "b", why);
    if (p == NULL)
        fprintf(stderr, "  refused: %s\n  %s\n", why, json);
    return p;
}

/* A request of principal (NULL: anonymous) for action on key (NULL: the
 * bucket) from 127.0.0.1, with prefix (NULL: none). */
static enum gw_policy_effect test_eval(const struct gw_policy *p, const char *principal,
                                       const char *action, const char *key, const char *prefix)
{
    struct gw_policy_request q = {
        .principal = principal,
        .action = action,
        .bucket = "b",
        .bucket_len = 1,
        .key = key,
        .key_len = key != NULL ? strlen(key) : 0,
        .source_family = AF_INET,
        .source = {127, 0, 0, 1},
        .prefix = prefix,
        .prefix_len = prefix != NULL ? strlen(prefix) : 0,
    };
    return gw_policy_eval(p, &q);
}

static void test_wildcard(void)
{
    CN_CHECK(gw_policy_wildcard("a/*", 3, "a/x/y", 5, 0));
    CN_CHECK(gw_policy_wildcard("a/*", 3, "a/", 2, 0));
    CN_CHECK(!gw_policy_wildcard("a/*", 3, "a", 1, 0));
    CN_CHECK(!gw_policy_wildcard("a/*", 3, "A/x", 3, 0));
    CN_CHECK(gw_policy_wildcard("a/*", 3, "A/x", 3, 1));
    CN_CHECK(gw_policy_wildcard("?b*d", 4, "xbcccd", 6, 0));
    CN_CHECK(!gw_policy_wildcard("?b*d", 4, "bd", 2, 0));
    CN_CHECK(gw_policy_wildcard("*", 1, "", 0, 0));
    CN_CHECK(gw_policy_wildcard("a*b*c", 5, "a-b-b-c", 7, 0));
    CN_CHECK(!gw_policy_wildcard("a*b*c", 5, "a-b-b-", 6, 0));
}

static void test_malformed(void)
{
    static const char *const bad[] = {
        "", "{", "[]", "null", "{\"Statement\": []}",
        "{\"Version\": \"2099-01-01\", \"Statement\": {}}",
        "{\"Statement\": {\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\": \"s3:GetObject\"}}",
        "{\"Statement\": {\"Effect\": \"Allow\", \"Action\": \"s3:GetObject\", "
        "\"Resource\": \"arn:aws:s3:::b/*\"}}",
        "{\"Statement\": {\"Effect\": \"allow\", \"Principal\": \"*\", \"Action\": "
        "\"s3:GetObject\", \"Resource\": \"arn:aws:s3:::b/*\"}}",
        /* another bucket, or one whose name only starts like it */
        "{\"Statement\": {\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\": "
        "\"s3:GetObject\", \"Resource\": \"arn:aws:s3:::c/*\"}}",
        "{\"Statement\": {\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\": "
        "\"s3:GetObject\", \"Resource\": \"arn:aws:s3:::bb/*\"}}",
        "{\"Statement\": {\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\": "
        "\"s3:GetObject\", \"Resource\": \"arn:aws:s3:::*\"}}",
        "{\"Statement\": {\"Effect\": \"Allow\", \"Principal\": \"me\", \"Action\": "
        "\"s3:GetObject\", \"Resource\": \"arn:aws:s3:::b/*\"}}",
        "{\"Statement\": {\"Effect\": \"Allow\", \"Principal\": {\"Service\": \"x\"}, "
        "\"Action\": \"s3:GetObject\", \"Resource\": \"arn:aws:s3:::b/*\"}}",
        "{\"Statement\": {\"Effect\": \"Allow\", \"Principal\": {\"AWS\": "
        "\"arn:aws:iam::1:user/u\"}, \"Action\": \"s3:GetObject\", \"Resource\": "
        "\"arn:aws:s3:::b/*\"}}",
        "{\"Statement\": {\"Effect\": \"Allow\", \"NotPrincipal\": \"*\", \"Action\": "
        "\"s3:GetObject\", \"Resource\": \"arn:aws:s3:::b/*\"}}",
        "{\"Statement\": {\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\": "
        "\"iam:PassRole\", \"Resource\": \"arn:aws:s3:::b/*\"}}",
        "{\"Statement\": {\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\": [], "
        "\"Resource\": \"arn:aws:s3:::b/*\"}}",
        "{\"Statement\": {\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\": "
        "\"s3:GetObject\", \"NotAction\": \"s3:x\", \"Resource\": \"arn:aws:s3:::b/*\"}}",
        "{\"Statement\": {\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\": "
        "\"s3:GetObject\", \"Resource\": \"arn:aws:s3:::b/*\", \"Condition\": {\"Bool\": "
        "{\"aws:SecureTransport\": \"maybe\"}}}}",
        "{\"Statement\": {\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\": "
        "\"s3:GetObject\", \"Resource\": \"arn:aws:s3:::b/*\", \"Condition\": {\"Bool\": "
        "{\"aws:MultiFactorAuthPresent\": \"true\"}}}}",
        "{\"Statement\": {\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\": "
        "\"s3:GetObject\", \"Resource\": \"arn:aws:s3:::b/*\", \"Condition\": "
        "{\"DateGreaterThan\": {\"aws:CurrentTime\": \"2020-01-01T00:00:00Z\"}}}}",
        "{\"Statement\": {\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\": "
        "\"s3:GetObject\", \"Resource\": \"arn:aws:s3:::b/*\", \"Condition\": {\"IpAddress\": "
        "{\"aws:SourceIp\": \"1.2.3.4/33\"}}}}",
        "{\"Statement\": {\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\": "
        "\"s3:GetObject\", \"Resource\": \"arn:aws:s3:::b/*\", \"Condition\": {\"StringLike\": "
        "{\"s3:delimiter\": \"/\"}}}}",
        "{\"Statement\": [], \"Statement\": []}",
        "{\"Statement\": {\"Effect\": \"Allow\"}, \"Extra\": 1}",
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(bad); i++) {
        char why[GW_POLICY_WHY_MAX];
        struct gw_policy *p = gw_policy_parse(bad[i], strlen(bad[i]), "b", why);
        if (p != NULL)
            fprintf(stderr, "  taken: %s\n", bad[i]);
        CN_CHECK(p == NULL && why[0] != '\0');
        gw_policy_free(p);
    }
}

static void test_prefix_allow(void)
{
    struct gw_policy *p = test_parse(
        "{\"Version\": \"2012-10-17\", \"Statement\": [{\"Effect\": \"Allow\", "
        "\"Principal\": \"*\", \"Action\": \"s3:GetObject\", \"Resource\": "
        "\"arn:aws:s3:::b/a/*\"}]}");
    CN_CHECK(p != NULL);
    if (p == NULL)
        return;
    CN_CHECK_EQ_INT(test_eval(p, NULL, "s3:GetObject", "a/x", NULL), GW_POLICY_ALLOW);
    CN_CHECK_EQ_INT(test_eval(p, "acct", "s3:getobject", "a/x", NULL), GW_POLICY_ALLOW);
    CN_CHECK_EQ_INT(test_eval(p, NULL, "s3:GetObject", "b/x", NULL), GW_POLICY_NONE);
    CN_CHECK_EQ_INT(test_eval(p, NULL, "s3:GetObject", "A/x", NULL), GW_POLICY_NONE);
    CN_CHECK_EQ_INT(test_eval(p, NULL, "s3:GetObject", "a", NULL), GW_POLICY_NONE);
    CN_CHECK_EQ_INT(test_eval(p, NULL, "s3:PutObject", "a/x", NULL), GW_POLICY_NONE);
    CN_CHECK_EQ_INT(test_eval(p, NULL, "s3:ListBucket", NULL, "a/"), GW_POLICY_NONE);
    /* the key is one string: a/../b is under a/ and is not b */
    CN_CHECK_EQ_INT(test_eval(p, NULL, "s3:GetObject", "a/../b", NULL), GW_POLICY_ALLOW);
    CN_CHECK(gw_policy_is_public(p));
    gw_policy_free(p);
}

static void test_principals_and_deny(void)
{
    struct gw_policy *p = test_parse(
        "{\"Statement\": [{\"Effect\": \"Allow\", \"Principal\": {\"AWS\": "
        "[\"arn:aws:iam::other:root\", \"third\"]}, \"Action\": \"s3:*\", \"Resource\": "
        "[\"arn:aws:s3:::b\", \"arn:aws:s3:::b/*\"]}, {\"Effect\": \"Deny\", \"Principal\": "
        "{\"AWS\": \"other\"}, \"Action\": [\"s3:Delete*\"], \"Resource\": "
        "\"arn:aws:s3:::b/*\"}]}");
    CN_CHECK(p != NULL);
    if (p == NULL)
        return;
    CN_CHECK_EQ_INT(test_eval(p, "other", "s3:GetObject", "k", NULL), GW_POLICY_ALLOW);
    CN_CHECK_EQ_INT(test_eval(p, "third", "s3:ListBucket", NULL, NULL), GW_POLICY_ALLOW);
    CN_CHECK_EQ_INT(test_eval(p, "other", "s3:DeleteObject", "k", NULL), GW_POLICY_DENY);
    CN_CHECK_EQ_INT(test_eval(p, "third", "s3:DeleteObject", "k", NULL), GW_POLICY_ALLOW);
    CN_CHECK_EQ_INT(test_eval(p, "othe", "s3:GetObject", "k", NULL), GW_POLICY_NONE);
    CN_CHECK_EQ_INT(test_eval(p, "otherx", "s3:GetObject", "k", NULL), GW_POLICY_NONE);
    CN_CHECK_EQ_INT(test_eval(p, "root", "s3:GetObject", "k", NULL), GW_POLICY_NONE);
    CN_CHECK_EQ_INT(test_eval(p, NULL, "s3:GetObject", "k", NULL), GW_POLICY_NONE);
    CN_CHECK(!gw_policy_is_public(p));
    gw_policy_free(p);
}

static void test_not_action_resource(void)
{
    struct gw_policy *p = test_parse(
        "{\"Statement\": {\"Effect\": \"Deny\", \"Principal\": {\"AWS\": \"*\"}, "
        "\"NotAction\": \"s3:GetObject\", \"NotResource\": \"arn:aws:s3:::b/open/*\"}}");
    CN_CHECK(p != NULL);
    if (p == NULL)
        return;
    CN_CHECK_EQ_INT(test_eval(p, "x", "s3:PutObject", "k", NULL), GW_POLICY_DENY);
    CN_CHECK_EQ_INT(test_eval(p, "x", "s3:GetObject", "k", NULL), GW_POLICY_NONE);
    CN_CHECK_EQ_INT(test_eval(p, "x", "s3:PutObject", "open/k", NULL), GW_POLICY_NONE);
    CN_CHECK_EQ_INT(test_eval(p, NULL, "s3:ListBucket", NULL, NULL), GW_POLICY_DENY);
    gw_policy_free(p);
}

/* NotPrincipal: the statement applies to every caller the list does not
 * name, anonymous included; an Allow with it is public. */
static void test_not_principal(void)
{
    struct gw_policy *p = test_parse(
        "{\"Statement\": {\"Effect\": \"Deny\", \"NotPrincipal\": {\"AWS\": "
        "[\"arn:aws:iam::other:root\", \"owner\"]}, \"Action\": \"s3:GetObject\", "
        "\"Resource\": \"arn:aws:s3:::b/*\"}}");
    CN_CHECK(p != NULL);
    if (p == NULL)
        return;
    CN_CHECK_EQ_INT(test_eval(p, "other", "s3:GetObject", "k", NULL), GW_POLICY_NONE);
    CN_CHECK_EQ_INT(test_eval(p, "owner", "s3:GetObject", "k", NULL), GW_POLICY_NONE);
    CN_CHECK_EQ_INT(test_eval(p, "third", "s3:GetObject", "k", NULL), GW_POLICY_DENY);
    CN_CHECK_EQ_INT(test_eval(p, "othe", "s3:GetObject", "k", NULL), GW_POLICY_DENY);
    CN_CHECK_EQ_INT(test_eval(p, NULL, "s3:GetObject", "k", NULL), GW_POLICY_DENY);
    CN_CHECK_EQ_INT(test_eval(p, "third", "s3:PutObject", "k", NULL), GW_POLICY_NONE);
    CN_CHECK(!gw_policy_is_public(p));
    gw_policy_free(p);
    p = test_parse("{\"Statement\": {\"Effect\": \"Allow\", \"NotPrincipal\": {\"AWS\": "
                   "\"other\"}, \"Action\": \"s3:GetObject\", \"Resource\": "
                   "\"arn:aws:s3:::b/*\"}}");
    CN_CHECK(p != NULL && gw_policy_is_public(p));
    if (p != NULL) {
        CN_CHECK_EQ_INT(test_eval(p, NULL, "s3:GetObject", "k", NULL), GW_POLICY_ALLOW);
        CN_CHECK_EQ_INT(test_eval(p, "other", "s3:GetObject", "k", NULL), GW_POLICY_NONE);
    }
    gw_policy_free(p);
    /* both, or NotPrincipal "*", are refused */
    char why[GW_POLICY_WHY_MAX];
    const char *both = "{\"Statement\": {\"Effect\": \"Deny\", \"Principal\": \"*\", "
                       "\"NotPrincipal\": {\"AWS\": \"o\"}, \"Action\": \"s3:*\", "
                       "\"Resource\": \"arn:aws:s3:::b/*\"}}";
    CN_CHECK(gw_policy_parse(both, strlen(both), "b", why) == NULL);
}

static void test_conditions(void)
{
    struct gw_policy *p = test_parse(
        "{\"Statement\": [{\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\": "
        "\"s3:ListBucket\", \"Resource\": \"arn:aws:s3:::b\", \"Condition\": {\"StringLike\": "
        "{\"s3:prefix\": [\"pub/*\", \"\"]}}}, {\"Effect\": \"Allow\", \"Principal\": \"*\", "
        "\"Action\": \"s3:GetObject\", \"Resource\": \"arn:aws:s3:::b/*\", \"Condition\": "
        "{\"IpAddress\": {\"aws:SourceIp\": [\"10.0.0.0/8\", \"127.0.0.0/31\"]}}}, "
        "{\"Effect\": \"Deny\", \"Principal\": \"*\", \"Action\": \"s3:GetObject\", "
        "\"Resource\": \"arn:aws:s3:::b/priv/*\", \"Condition\": {\"NotIpAddress\": "
        "{\"aws:SourceIp\": \"10.0.0.0/8\"}}}]}");
    CN_CHECK(p != NULL);
    if (p == NULL)
        return;
    CN_CHECK_EQ_INT(test_eval(p, NULL, "s3:ListBucket", NULL, "pub/"), GW_POLICY_ALLOW);
    CN_CHECK_EQ_INT(test_eval(p, NULL, "s3:ListBucket", NULL, ""), GW_POLICY_ALLOW);
    CN_CHECK_EQ_INT(test_eval(p, NULL, "s3:ListBucket", NULL, "priv/"), GW_POLICY_NONE);
    CN_CHECK_EQ_INT(test_eval(p, NULL, "s3:ListBucket", NULL, NULL), GW_POLICY_NONE);
    CN_CHECK_EQ_INT(test_eval(p, NULL, "s3:GetObject", "x", NULL), GW_POLICY_ALLOW);
    CN_CHECK_EQ_INT(test_eval(p, NULL, "s3:GetObject", "priv/x", NULL), GW_POLICY_DENY);
    struct gw_policy_request q = {.principal = NULL, .action = "s3:GetObject", .bucket = "b",
                                  .bucket_len = 1, .key = "priv/x", .key_len = 6,
                                  .source_family = AF_INET, .source = {10, 9, 8, 7}};
    CN_CHECK_EQ_INT(gw_policy_eval(p, &q), GW_POLICY_ALLOW);
    q.source[0] = 127;
    q.source[3] = 2;   /* outside 127.0.0.0/31 */
    q.key = "x";
    q.key_len = 1;
    CN_CHECK_EQ_INT(gw_policy_eval(p, &q), GW_POLICY_NONE);
    q.source_family = AF_INET6;   /* ::1 is not in any v4 range */
    memset(q.source, 0, sizeof(q.source));
    q.source[15] = 1;
    CN_CHECK_EQ_INT(gw_policy_eval(p, &q), GW_POLICY_NONE);
    q.source_family = 0;          /* unknown: IpAddress fails, NotIpAddress holds */
    q.key = "priv/x";
    q.key_len = 6;
    CN_CHECK_EQ_INT(gw_policy_eval(p, &q), GW_POLICY_DENY);
    /* an Allow narrowed by aws:SourceIp is not public; the first one is */
    CN_CHECK(gw_policy_is_public(p));
    gw_policy_free(p);
    /* the usual "deny what does not come over TLS" */
    p = test_parse("{\"Statement\": [{\"Effect\": \"Allow\", \"Principal\": \"*\", "
                   "\"Action\": \"s3:GetObject\", \"Resource\": \"arn:aws:s3:::b/*\"}, "
                   "{\"Effect\": \"Deny\", \"Principal\": \"*\", \"Action\": \"s3:*\", "
                   "\"Resource\": \"arn:aws:s3:::b/*\", \"Condition\": {\"Bool\": "
                   "{\"aws:SecureTransport\": \"false\"}}}]}");
    CN_CHECK(p != NULL);
    if (p == NULL)
        return;
    q.key = "y";
    q.key_len = 1;
    q.secure = 0;
    CN_CHECK_EQ_INT(gw_policy_eval(p, &q), GW_POLICY_DENY);
    q.secure = 1;
    CN_CHECK_EQ_INT(gw_policy_eval(p, &q), GW_POLICY_ALLOW);
    CN_CHECK(gw_policy_is_public(p));
    gw_policy_free(p);
    p = test_parse("{\"Statement\": {\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\": "
                   "\"s3:GetObject\", \"Resource\": \"arn:aws:s3:::b/*\", \"Condition\": "
                   "{\"IpAddress\": {\"aws:SourceIp\": \"::1/128\"}}}}");
    CN_CHECK(p != NULL && !gw_policy_is_public(p));
    if (p != NULL) {
        q.source_family = AF_INET6;
        q.key = "y";
        q.key_len = 1;
        CN_CHECK_EQ_INT(gw_policy_eval(p, &q), GW_POLICY_ALLOW);
    }
    gw_policy_free(p);
}

static const struct cn_test_case cases[] = {
    {"wildcard", test_wildcard},
    {"malformed", test_malformed},
    {"prefix_allow", test_prefix_allow},
    {"principals_and_deny", test_principals_and_deny},
    {"not_action_resource", test_not_action_resource},
    {"not_principal", test_not_principal},
    {"conditions", test_conditions},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
