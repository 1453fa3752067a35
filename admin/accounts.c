/* cairn-admin account create|list|delete (accounts.h). create refuses a
 * name another live account has (names resolve --account); delete counts
 * the account's keys (their records' owner) and buckets (their records'
 * etag, the owner id ListBuckets filters on) before it writes the
 * tombstone. */
#include "accounts.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "key_record.h"

#include "cn/alloc.h"
#include "cn/rc.h"
#include "msg/msg.h"

#define ADM_ACCOUNTS_LIST_MAX 3000000   /* entries over all nodes */

/* Every live account, read from the node holding its newest version.
 * *out is cn_malloc'd (NULL when none). CN_OK or CN_IO (no node answered). */
static int adm_accounts_all(const struct adm_keys_opts *o, struct adm_rec_conn *cx,
                            struct gw_account_record **out, size_t *n)
{
    struct adm_rec_set s;
    *out = NULL;
    *n = 0;
    if (adm_rec_list(o, cx, GW_ACCOUNT_PREFIX, GW_ACCOUNT_PREFIX_LEN, 0, ADM_ACCOUNTS_LIST_MAX,
                     &s) != CN_OK) {
        cn_free(s.v);
        fprintf(stderr, "cairn-admin: no node answered the listing of %s\n", GW_ACCOUNT_PREFIX);
        return CN_IO;
    }
    *out = cn_calloc(s.n > 0 ? s.n : 1, sizeof(**out));
    for (size_t i = 0; i < s.n; i++) {
        const struct adm_rec_ent *x = &s.v[i];
        struct msg_reply rep;
        char err[CN_ERR_LEN];
        const char *id = x->key + GW_ACCOUNT_PREFIX_LEN;
        size_t id_len = x->key_len - GW_ACCOUNT_PREFIX_LEN;
        if (adm_rec_get(o, cx, x->node, x->key, x->key_len, &rep, err) != CN_OK) {
            fprintf(stderr, "cairn-admin: %.*s: %s\n", (int)x->key_len, x->key, err);
            continue;
        }
        if (gw_account_record_decode(&(*out)[*n], rep.m.payload.ptr, rep.m.payload.len, id,
                                     id_len, err) == CN_OK)
            (*n)++;
        else
            fprintf(stderr, "cairn-admin: %.*s left out: %s\n", (int)x->key_len, x->key, err);
        msg_reply_release(&rep);
    }
    cn_free(s.v);
    return CN_OK;
}

int adm_accounts_resolve(const struct adm_keys_opts *o, struct adm_rec_conn *cx,
                         const char *ref, struct gw_account_record *a)
{
    struct gw_account_record *v;
    size_t n;
    if (adm_accounts_all(o, cx, &v, &n) != CN_OK)
        return CN_IO;
    int rc = CN_NOTFOUND;
    for (size_t i = 0; i < n && rc != CN_OK; i++)   /* an id first: it is unique */
        if (strcmp(v[i].id, ref) == 0) {
            *a = v[i];
            rc = CN_OK;
        }
    for (size_t i = 0; i < n && rc != CN_OK; i++)
        if (strcmp(v[i].name, ref) == 0) {
            *a = v[i];
            rc = CN_OK;
        }
    cn_free(v);
    if (rc != CN_OK)
        fprintf(stderr, "cairn-admin: no account %s (`cairn-admin account list`)\n", ref);
    return rc;
}

static void adm_accounts_when(uint64_t us, char out[32])
{
    time_t t = (time_t)(us / 1000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int adm_accounts_create(const struct adm_keys_opts *o, const char *name)
{
    if (!gw_account_name_ok(name, strlen(name))) {
        fprintf(stderr, "cairn-admin: an account name is 1..64 of [A-Za-z0-9._-]\n");
        return 2;
    }
    struct adm_rec_conn cx;
    adm_rec_conn_init(&cx, o);
    struct gw_account_record *v;
    size_t n;
    int rc = adm_accounts_all(o, &cx, &v, &n);
    adm_rec_conn_fini(&cx);
    if (rc != CN_OK)
        return 1;
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0) {
            fprintf(stderr, "cairn-admin: account %s exists (id %s)\n", name, v[i].id);
            cn_free(v);
            return 1;
        }
    cn_free(v);
    struct gw_account_record a;
    memset(&a, 0, sizeof(a));
    if (gw_account_id_new(a.id) != CN_OK) {
        fprintf(stderr, "cairn-admin: account create: no randomness\n");
        return 1;
    }
    snprintf(a.name, sizeof(a.name), "%s", name);
    snprintf(a.state, sizeof(a.state), "active");
    a.created_us = (uint64_t)time(NULL) * 1000000u;
    char *data = NULL, err[CN_ERR_LEN];
    size_t len = 0;
    if (gw_account_record_encode(&a, &data, &len, err) != CN_OK) {
        fprintf(stderr, "cairn-admin: account create: %s\n", err);
        return 1;
    }
    char key[GW_ACCOUNT_PREFIX_LEN + GW_ACCOUNT_ID_LEN + 1];
    snprintf(key, sizeof(key), "%s%s", GW_ACCOUNT_PREFIX, a.id);
    struct adm_rec_write w = {.key = key, .key_len = strlen(key), .payload = data, .len = len,
                              .ts = adm_rec_next_ts(0)};
    uint32_t n_rep = 0, acks = adm_rec_put(o, &w, &n_rep);
    cn_free(data);
    if (acks < n_rep / 2 + 1) {
        fprintf(stderr, "cairn-admin: account create: %u of %u replicas stored it: not "
                "created (a later `account delete %s` removes what was stored)\n", acks, n_rep,
                a.id);
        return 1;
    }
    if (o->json) {
        printf("{\"command\": \"account create\", \"id\": \"%s\", \"name\": ", a.id);
        adm_json_cstr(a.name);
        printf(", \"replicas_acked\": %u}\n", acks);
    } else {
        printf("%s\n", a.id);
    }
    return 0;
}

int adm_accounts_list(const struct adm_keys_opts *o)
{
    struct adm_rec_conn cx;
    adm_rec_conn_init(&cx, o);
    struct gw_account_record *v;
    size_t n;
    int rc = adm_accounts_all(o, &cx, &v, &n);
    adm_rec_conn_fini(&cx);
    if (rc != CN_OK)
        return 1;
    if (o->json)
        printf("{\"command\": \"account list\", \"accounts\": [");
    for (size_t i = 0; i < n; i++) {
        char when[32];
        adm_accounts_when(v[i].created_us, when);
        if (o->json) {
            printf("%s\n  {\"id\": \"%s\", \"name\": ", i > 0 ? "," : "", v[i].id);
            adm_json_cstr(v[i].name);
            printf(", \"created_us\": %llu, \"state\": \"%s\"}",
                   (unsigned long long)v[i].created_us, v[i].state);
        } else {
            printf("%s  %-20s %s  %s\n", v[i].id, v[i].name, when, v[i].state);
        }
    }
    if (o->json)
        printf("%s]}\n", n > 0 ? "\n" : "");
    cn_free(v);
    return 0;
}

/* The keys of account id: AKIDs into *akids (cn_malloc'd, GW_KEY_AKID_MAX + 1
 * each), with the newest listed version of each. CN_OK or CN_IO. */
static int adm_accounts_keys(const struct adm_keys_opts *o, struct adm_rec_conn *cx,
                             const char *id, struct adm_rec_ent **keys, size_t *n)
{
    struct adm_rec_set s;
    *keys = NULL;
    *n = 0;
    if (adm_rec_list(o, cx, GW_KEY_PREFIX, GW_KEY_PREFIX_LEN, 0, ADM_ACCOUNTS_LIST_MAX, &s) !=
        CN_OK) {
        cn_free(s.v);
        return CN_IO;
    }
    for (size_t i = 0; i < s.n; i++) {
        struct msg_reply rep;
        struct gw_key_record k;
        char err[CN_ERR_LEN];
        const struct adm_rec_ent *x = &s.v[i];
        if (adm_rec_get(o, cx, x->node, x->key, x->key_len, &rep, err) != CN_OK)
            continue;
        if (gw_key_record_decode(&k, rep.m.payload.ptr, rep.m.payload.len,
                                 x->key + GW_KEY_PREFIX_LEN, x->key_len - GW_KEY_PREFIX_LEN,
                                 err) == CN_OK &&
            strcmp(k.owner, id) == 0)
            s.v[(*n)++] = *x;   /* compacts in place: *n <= i */
        gw_key_record_wipe(&k);
        msg_reply_release(&rep);
    }
    *keys = s.v;
    return CN_OK;
}

/* The buckets whose record names id as owner (the etag). */
static int adm_accounts_buckets(const struct adm_keys_opts *o, struct adm_rec_conn *cx,
                                const char *id, struct adm_rec_ent **b, size_t *n)
{
    struct adm_rec_set s;
    *b = NULL;
    *n = 0;
    if (adm_rec_list(o, cx, "b/", 2, 0, ADM_ACCOUNTS_LIST_MAX, &s) != CN_OK) {
        cn_free(s.v);
        return CN_IO;
    }
    for (size_t i = 0; i < s.n; i++)
        if (strcmp(s.v[i].etag, id) == 0)
            s.v[(*n)++] = s.v[i];
    *b = s.v;
    return CN_OK;
}

int adm_accounts_delete(const struct adm_keys_opts *o, const char *ref, int force)
{
    struct adm_rec_conn cx;
    adm_rec_conn_init(&cx, o);
    struct gw_account_record a;
    struct adm_rec_ent *keys = NULL, *buckets = NULL;
    size_t nk = 0, nb = 0;
    int rc = adm_accounts_resolve(o, &cx, ref, &a);
    if (rc == CN_OK && (adm_accounts_keys(o, &cx, a.id, &keys, &nk) != CN_OK ||
                        adm_accounts_buckets(o, &cx, a.id, &buckets, &nb) != CN_OK)) {
        fprintf(stderr, "cairn-admin: account delete: cannot list the keys and buckets\n");
        rc = CN_IO;
    }
    adm_rec_conn_fini(&cx);
    int status = rc == CN_OK ? 0 : 1;
    if (rc == CN_OK && (nk > 0 || nb > 0) && !force) {
        fprintf(stderr, "cairn-admin: account %s owns %zu buckets and %zu keys: delete them "
                "first (or --force: deletes its keys, leaves its buckets)\n", a.name, nb, nk);
        for (size_t i = 0; i < nb; i++)
            fprintf(stderr, "  bucket %.*s\n", (int)buckets[i].key_len - 2, buckets[i].key + 2);
        status = 1;
    }
    uint32_t keys_deleted = 0;
    for (size_t i = 0; status == 0 && i < nk; i++) {
        struct adm_rec_write w = {.key = keys[i].key, .key_len = keys[i].key_len, .del = 1,
                                  .ts = adm_rec_next_ts(keys[i].ts)};
        uint32_t n_rep = 0, acks = adm_rec_put(o, &w, &n_rep);
        if (acks < n_rep / 2 + 1) {
            fprintf(stderr, "cairn-admin: key %s: %u of %u replicas deleted it; run it again\n",
                    keys[i].key + GW_KEY_PREFIX_LEN, acks, n_rep);
            status = 1;
        } else {
            keys_deleted++;
        }
    }
    uint32_t acks = 0;
    if (status == 0) {
        char key[GW_ACCOUNT_PREFIX_LEN + GW_ACCOUNT_ID_LEN + 1];
        snprintf(key, sizeof(key), "%s%s", GW_ACCOUNT_PREFIX, a.id);
        struct adm_rec_write w = {.key = key, .key_len = strlen(key), .del = 1,
                                  .ts = adm_rec_next_ts(0)};
        uint32_t n_rep = 0;
        acks = adm_rec_put(o, &w, &n_rep);
        if (acks < n_rep / 2 + 1) {
            fprintf(stderr, "cairn-admin: account delete: %u of %u replicas acked; run it "
                    "again\n", acks, n_rep);
            status = 1;
        }
    }
    if (rc == CN_OK && o->json) {
        printf("{\"command\": \"account delete\", \"id\": \"%s\", \"deleted\": %s, "
               "\"keys_deleted\": %u, \"buckets_left\": [", a.id, status == 0 ? "true" : "false",
               keys_deleted);
        for (size_t i = 0; i < nb; i++) {
            printf("%s", i > 0 ? ", " : "");
            adm_json_str(buckets[i].key + 2, buckets[i].key_len - 2);
        }
        printf("]}\n");
    } else if (status == 0) {
        printf("deleted account %s (%s): %u keys deleted, %zu buckets left without an "
               "account\n", a.name, a.id, keys_deleted, nb);
    }
    cn_free(keys);
    cn_free(buckets);
    return status;
}
