/* The per-worker cache of bucket access configs (bucket_owner.c): entries
 * expire after the TTL, a TTL of 0 caches nothing, a put replaces and a drop
 * forgets, the cache holds a reference of its own (a request's config
 * outlives a refresh), and policy texts past GW_BUCKET_OWNER_POLICY_BUDGET
 * are not cached. */
#include <string.h>

#include "access.h"
#include "bucket_owner.h"
#include "cn/alloc.h"
#include "cn/test.h"

CN_TEST_GLOBALS;

static struct gw_access_config *test_cfg(const char *owner, size_t policy_bytes)
{
    struct gw_access_config *c = cn_calloc(1, sizeof(*c));
    c->refs = 1;
    strcpy(c->owner, owner);
    c->policy_bytes = policy_bytes;
    return c;
}

static void test_ttl_and_refs(void)
{
    struct gw_bucket_owner_cache *oc = gw_bucket_owner_cache_new(1000);
    struct gw_access_config *a = test_cfg("a", 0), *got = NULL;
    uint64_t learnt;
    gw_bucket_owner_cache_put(oc, "b", 1, a, 5000);
    CN_CHECK_EQ_INT(a->refs, 2);
    CN_CHECK(gw_bucket_owner_cache_get(oc, "b", 1, 5999, &got, &learnt) && got == a);
    CN_CHECK(!gw_bucket_owner_cache_get(oc, "b", 1, 6000, &got, &learnt));   /* expired */
    CN_CHECK(!gw_bucket_owner_cache_get(oc, "c", 1, 5001, &got, &learnt));
    struct gw_access_config *b = test_cfg("b", 0);
    gw_bucket_owner_cache_put(oc, "b", 1, b, 7000);   /* a refresh drops the old one */
    CN_CHECK_EQ_INT(a->refs, 1);
    CN_CHECK(gw_bucket_owner_cache_get(oc, "b", 1, 7001, &got, &learnt) && got == b);
    gw_bucket_owner_cache_drop(oc, "b", 1);
    CN_CHECK_EQ_INT(b->refs, 1);
    CN_CHECK(!gw_bucket_owner_cache_get(oc, "b", 1, 7001, &got, &learnt));
    gw_access_config_unref(a);
    gw_access_config_unref(b);
    gw_bucket_owner_cache_free(oc);
    oc = gw_bucket_owner_cache_new(0);   /* TTL 0: nothing is cached */
    a = test_cfg("a", 0);
    gw_bucket_owner_cache_put(oc, "b", 1, a, 1);
    CN_CHECK_EQ_INT(a->refs, 1);
    CN_CHECK(!gw_bucket_owner_cache_get(oc, "b", 1, 1, &got, &learnt));
    gw_access_config_unref(a);
    gw_bucket_owner_cache_free(oc);
}

static void test_policy_budget(void)
{
    struct gw_bucket_owner_cache *oc = gw_bucket_owner_cache_new(1000);
    struct gw_access_config *got;
    uint64_t learnt;
    char name[16];
    size_t each = 20 * 1024, kept = 0;
    for (int i = 0; i < 200; i++) {
        int n = snprintf(name, sizeof(name), "bucket-%d", i);
        struct gw_access_config *c = test_cfg("o", each);
        gw_bucket_owner_cache_put(oc, name, (size_t)n, c, 10);
        gw_access_config_unref(c);
    }
    for (int i = 0; i < 200; i++) {
        int n = snprintf(name, sizeof(name), "bucket-%d", i);
        kept += gw_bucket_owner_cache_get(oc, name, (size_t)n, 11, &got, &learnt);
    }
    /* at most the budget's worth of policy text stays cached; the rest is not */
    CN_CHECK(kept * each <= GW_BUCKET_OWNER_POLICY_BUDGET);
    CN_CHECK(kept > 0 && kept < 200);
    /* a config without a policy is always cached */
    struct gw_access_config *c = test_cfg("o", 0);
    gw_bucket_owner_cache_put(oc, "plain", 5, c, 10);
    CN_CHECK(gw_bucket_owner_cache_get(oc, "plain", 5, 11, &got, &learnt) && got == c);
    gw_access_config_unref(c);
    gw_bucket_owner_cache_free(oc);   /* frees the cached configs (ASan checks) */
}

static const struct cn_test_case cases[] = {
    {"ttl_and_refs", test_ttl_and_refs},
    {"policy_budget", test_policy_budget},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
