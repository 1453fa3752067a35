/* cairn-admin bucket list|info|create|delete (buckets.h). info counts the
 * bucket's objects by listing "o/" NAME "/" on every node, up to
 * ADM_BUCKETS_COUNT_MAX keys per node (past it the count says "at least"),
 * so it stays cheap on a big bucket. */
#include "buckets.h"

#include <stdio.h>
#include <string.h>

#include "account_record.h"
#include "accounts.h"
#include "bucket_meta.h"
#include "json.h"
#include "key_record.h"
#include "records.h"

#include "cn/alloc.h"
#include "cn/rc.h"
#include "msg/msg.h"

#define ADM_BUCKETS_LIST_MAX 3000000
#define ADM_BUCKETS_COUNT_MAX 10000

static int adm_buckets_name_ok(const char *b)
{
    if (gw_key_bucket_ok(b, strlen(b)))
        return 1;
    fprintf(stderr, "cairn-admin: %s is not a bucket name (3..63 of [a-z0-9.-])\n", b);
    return 0;
}

/* The account names by id, for display (NULL when none is known). */
static const char *adm_buckets_account_name(const struct gw_account_record *v, size_t n,
                                            const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].id, id) == 0)
            return v[i].name;
    return NULL;
}

/* Every account (for names); best effort. */
static void adm_buckets_accounts(const struct adm_keys_opts *o, struct adm_rec_conn *cx,
                                 struct gw_account_record **v, size_t *n)
{
    struct adm_rec_set s;
    *v = NULL;
    *n = 0;
    if (adm_rec_list(o, cx, GW_ACCOUNT_PREFIX, GW_ACCOUNT_PREFIX_LEN, 0, ADM_BUCKETS_LIST_MAX,
                     &s) == CN_OK) {
        *v = cn_calloc(s.n > 0 ? s.n : 1, sizeof(**v));
        for (size_t i = 0; i < s.n; i++) {
            struct msg_reply rep;
            char err[CN_ERR_LEN];
            if (adm_rec_get(o, cx, s.v[i].node, s.v[i].key, s.v[i].key_len, &rep, err) != CN_OK)
                continue;
            if (gw_account_record_decode(&(*v)[*n], rep.m.payload.ptr, rep.m.payload.len,
                                         s.v[i].key + GW_ACCOUNT_PREFIX_LEN,
                                         s.v[i].key_len - GW_ACCOUNT_PREFIX_LEN, err) == CN_OK)
                (*n)++;
            msg_reply_release(&rep);
        }
    }
    cn_free(s.v);
}

int adm_buckets_list(const struct adm_keys_opts *o)
{
    struct adm_rec_conn cx;
    adm_rec_conn_init(&cx, o);
    struct adm_rec_set s;
    struct gw_account_record *acc;
    size_t n_acc;
    int rc = adm_rec_list(o, &cx, "b/", 2, 0, ADM_BUCKETS_LIST_MAX, &s);
    adm_buckets_accounts(o, &cx, &acc, &n_acc);
    adm_rec_conn_fini(&cx);
    if (rc != CN_OK) {
        fprintf(stderr, "cairn-admin: no node answered the listing of buckets\n");
        cn_free(s.v);
        cn_free(acc);
        return 1;
    }
    if (o->json)
        printf("{\"command\": \"bucket list\", \"buckets\": [");
    for (size_t i = 0; i < s.n; i++) {
        const struct adm_rec_ent *x = &s.v[i];
        const char *an = adm_buckets_account_name(acc, n_acc, x->etag);
        if (o->json) {
            printf("%s\n  {\"name\": ", i > 0 ? "," : "");
            adm_json_str(x->key + 2, x->key_len - 2);
            printf(", \"owner\": ");
            adm_json_cstr(x->etag);
            printf(", \"account\": ");
            if (an != NULL)
                adm_json_cstr(an);
            else
                printf("null");
            putchar('}');
        } else {
            printf("%-63.*s %s%s%s%s\n", (int)x->key_len - 2, x->key + 2, x->etag,
                   an != NULL ? " (" : "", an != NULL ? an : "", an != NULL ? ")" : "");
        }
    }
    if (o->json)
        printf("%s]}\n", s.n > 0 ? "\n" : "");
    cn_free(s.v);
    cn_free(acc);
    return 0;
}

/* The newest listed version of "b/" bucket (x, with the tombstones kept:
 * x->flags says whether it is deleted). 1 found, 0 none, -1 no node answered. */
static int adm_buckets_find(const struct adm_keys_opts *o, struct adm_rec_conn *cx,
                            const char *bucket, struct adm_rec_ent *x)
{
    char key[ADM_REC_KEY_MAX];
    size_t n = (size_t)snprintf(key, sizeof(key), "b/%s", bucket);
    struct adm_rec_set s;
    int found = 0;
    if (adm_rec_list(o, cx, key, n, 1, 1000, &s) != CN_OK) {
        cn_free(s.v);
        return -1;
    }
    for (size_t i = 0; i < s.n && !found; i++)
        if (s.v[i].key_len == n && memcmp(s.v[i].key, key, n) == 0) {
            *x = s.v[i];
            found = 1;
        }
    cn_free(s.v);
    return found;
}

/* Objects of bucket counted over the nodes' listings (each capped). */
static size_t adm_buckets_count(const struct adm_keys_opts *o, struct adm_rec_conn *cx,
                                const char *bucket, int *capped)
{
    char prefix[ADM_REC_KEY_MAX];
    size_t n = (size_t)snprintf(prefix, sizeof(prefix), "o/%s/", bucket);
    struct adm_rec_set s;
    size_t max = (size_t)ADM_BUCKETS_COUNT_MAX * cn_cluster_nodes(o->cl);
    size_t count = 0;
    *capped = 0;
    if (adm_rec_list(o, cx, prefix, n, 0, max, &s) == CN_OK) {
        count = s.n;
        *capped = s.n >= ADM_BUCKETS_COUNT_MAX;
    }
    cn_free(s.v);
    return count;
}

int adm_buckets_info(const struct adm_keys_opts *o, const char *bucket)
{
    if (!adm_buckets_name_ok(bucket))
        return 2;
    struct adm_rec_conn cx;
    adm_rec_conn_init(&cx, o);
    struct adm_rec_ent x;
    int status = 1, found = adm_buckets_find(o, &cx, bucket, &x);
    struct msg_reply rep;
    char err[CN_ERR_LEN];
    if (found < 0) {
        fprintf(stderr, "cairn-admin: no node answered\n");
    } else if (found == 0 || (x.flags & MSG_FLAG_TOMBSTONE)) {
        fprintf(stderr, "cairn-admin: no bucket %s\n", bucket);
    } else if (adm_rec_get(o, &cx, x.node, x.key, x.key_len, &rep, err) != CN_OK) {
        fprintf(stderr, "cairn-admin: %s: %s\n", x.key, err);
    } else {
        struct gw_bucket_meta m;
        if (gw_bucket_meta_decode_record(&m, &rep.m) != CN_OK) {
            fprintf(stderr, "cairn-admin: %s: the record's meta does not decode\n", x.key);
        } else {
            struct gw_account_record *acc;
            size_t n_acc;
            adm_buckets_accounts(o, &cx, &acc, &n_acc);
            char owner[GW_BUCKET_META_OWNER_MAX + 1];
            snprintf(owner, sizeof(owner), "%.*s", (int)m.owner_len, m.owner);
            const char *an = adm_buckets_account_name(acc, n_acc, owner);
            const struct gw_bucket_meta_config *ver = gw_bucket_meta_config(&m, "versioning");
            int policy = gw_bucket_meta_config(&m, "policy") != NULL;
            int acl = gw_bucket_meta_config(&m, "acl") != NULL;
            int capped = 0;
            size_t objects = adm_buckets_count(o, &cx, bucket, &capped);
            char vs[32] = "";
            /* the stored versioning state is a short word; anything else is not shown */
            if (ver != NULL && ver->value_len < sizeof(vs))
                for (size_t i = 0; i < ver->value_len; i++) {
                    char c = ((const char *)ver->value)[i];
                    vs[i] = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ? c : '?';
                }
            if (o->json) {
                printf("{\"command\": \"bucket info\", \"name\": ");
                adm_json_cstr(bucket);
                printf(", \"owner\": ");
                adm_json_cstr(owner);
                printf(", \"account\": ");
                if (an != NULL)
                    adm_json_cstr(an);
                else
                    printf("null");
                printf(", \"region\": ");
                adm_json_str(m.region, m.region_len);
                printf(", \"created_us\": %llu, \"versioning\": ",
                       (unsigned long long)m.inc.created_us);
                if (ver != NULL)
                    adm_json_cstr(vs);
                else
                    printf("null");
                printf(", \"policy\": %s, \"acl\": %s, \"objects\": %zu, \"objects_capped\": "
                       "%s, \"configurations\": [", policy ? "true" : "false",
                       acl ? "true" : "false", objects, capped ? "true" : "false");
                for (size_t i = 0; i < m.n_configs; i++) {
                    printf("%s", i > 0 ? ", " : "");
                    adm_json_str(m.configs[i].name, m.configs[i].name_len);
                }
                printf("]}\n");
            } else {
                printf("bucket:     %s\nowner:      %s%s%s%s\nregion:     %.*s\n"
                       "versioning: %s\npolicy:     %s\nacl:        %s\nobjects:    %s%zu\n",
                       bucket, owner, an != NULL ? " (" : "", an != NULL ? an : "",
                       an != NULL ? ")" : "", (int)m.region_len, m.region,
                       ver != NULL ? vs : "never enabled", policy ? "yes" : "no",
                       acl ? "yes" : "no (the owner alone)", capped ? "at least " : "", objects);
            }
            cn_free(acc);
            status = 0;
        }
        msg_reply_release(&rep);
    }
    adm_rec_conn_fini(&cx);
    return status;
}

int adm_buckets_create(const struct adm_keys_opts *o, const char *bucket, const char *account,
                       const char *region)
{
    if (!adm_buckets_name_ok(bucket))
        return 2;
    if (account == NULL) {
        fprintf(stderr, "cairn-admin: bucket create needs --account A (its owner)\n");
        return 2;
    }
    struct adm_rec_conn cx;
    adm_rec_conn_init(&cx, o);
    struct gw_account_record a;
    struct adm_rec_ent x;
    int found = -1;
    int rc = adm_accounts_resolve(o, &cx, account, &a);
    if (rc == CN_OK)
        found = adm_buckets_find(o, &cx, bucket, &x);
    adm_rec_conn_fini(&cx);
    if (rc != CN_OK)
        return 1;
    if (found < 0) {
        fprintf(stderr, "cairn-admin: no node answered\n");
        return 1;
    }
    if (found && !(x.flags & MSG_FLAG_TOMBSTONE)) {
        fprintf(stderr, "cairn-admin: bucket %s exists (owner %s)\n", bucket, x.etag);
        return 1;
    }
    struct gw_bucket_meta bm = {
        .region = region, .region_len = strlen(region),
        .owner = a.id, .owner_len = strlen(a.id),
        .inc = gw_bucket_incarnation_new(),
    };
    char *meta = NULL;
    size_t meta_len = 0;
    if (gw_bucket_meta_encode(&bm, &meta, &meta_len) != CN_OK) {
        fprintf(stderr, "cairn-admin: bucket create: the region is too long\n");
        return 2;
    }
    char key[ADM_REC_KEY_MAX];
    size_t kn = (size_t)snprintf(key, sizeof(key), "b/%s", bucket);
    struct adm_rec_write w = {.key = key, .key_len = kn, .etag = a.id, .etag_len = strlen(a.id),
                              .meta = meta, .meta_len = meta_len,
                              .ts = adm_rec_next_ts(found ? x.ts : 0)};
    uint32_t n_rep = 0, acks = adm_rec_put(o, &w, &n_rep);
    cn_free(meta);
    int ok = acks >= n_rep / 2 + 1;
    if (!ok)
        fprintf(stderr, "cairn-admin: bucket create: %u of %u replicas stored it\n", acks,
                n_rep);
    else if (o->json)
        printf("{\"command\": \"bucket create\", \"name\": \"%s\", \"owner\": \"%s\", "
               "\"replicas_acked\": %u}\n", bucket, a.id, acks);
    else
        printf("created bucket %s, owned by %s (%s)\n", bucket, a.name, a.id);
    return ok ? 0 : 1;
}

int adm_buckets_delete(const struct adm_keys_opts *o, const char *bucket)
{
    if (!adm_buckets_name_ok(bucket))
        return 2;
    struct adm_rec_conn cx;
    adm_rec_conn_init(&cx, o);
    struct adm_rec_ent x;
    char prefix[ADM_REC_KEY_MAX];
    int found = adm_buckets_find(o, &cx, bucket, &x), objects = 0, versions = 0;
    if (found > 0 && !(x.flags & MSG_FLAG_TOMBSTONE)) {
        size_t n = (size_t)snprintf(prefix, sizeof(prefix), "o/%s/", bucket);
        objects = adm_rec_any(o, &cx, prefix, n);
        n = (size_t)snprintf(prefix, sizeof(prefix), "v/%s/", bucket);
        versions = adm_rec_any(o, &cx, prefix, n);
    }
    adm_rec_conn_fini(&cx);
    if (found < 0 || objects < 0 || versions < 0) {
        fprintf(stderr, "cairn-admin: no node answered\n");
        return 1;
    }
    if (found == 0 || (x.flags & MSG_FLAG_TOMBSTONE)) {
        fprintf(stderr, "cairn-admin: no bucket %s\n", bucket);
        return 1;
    }
    if (objects || versions) {
        fprintf(stderr, "cairn-admin: bucket %s is not empty (it holds %s): delete them "
                "first\n", bucket, objects ? "objects" : "object versions");
        return 1;
    }
    struct adm_rec_write w = {.key = x.key, .key_len = x.key_len, .del = 1,
                              .ts = adm_rec_next_ts(x.ts)};
    uint32_t n_rep = 0, acks = adm_rec_put(o, &w, &n_rep);
    int ok = acks >= n_rep / 2 + 1;
    if (!ok)
        fprintf(stderr, "cairn-admin: bucket delete: %u of %u replicas acked; run it again\n",
                acks, n_rep);
    else if (o->json)
        printf("{\"command\": \"bucket delete\", \"name\": \"%s\", \"deleted\": true, "
               "\"replicas_acked\": %u}\n", bucket, acks);
    else
        printf("deleted bucket %s\n", bucket);
    return ok ? 0 : 1;
}
