/* cairn-admin key create|list|delete|allow|deny (keys.h). create seals a
 * new secret under the master key and PUTs the record to the key's replicas
 * (records.h); delete writes a newer tombstone there; list merges every
 * node's LIST of "s/keys/" (newest version of each key wins, tombstones hide
 * it) and reads each live record's plain fields (never its secret); allow
 * and deny open the record, change its list and seal it again as a newer
 * version. A write counts as done when a majority of the key's replicas
 * acked it. */
#include "keys.h"

#include "accounts.h"
#include "json.h"
#include "key_record.h"
#include "records.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "cn/alloc.h"
#include "cn/hlc.h"
#include "cn/rc.h"
#include "msg/msg.h"

#define ADM_KEYS_PAGE 1000
#define ADM_KEYS_LIST_MAX 3000000   /* entries of all nodes: s3.keys_max's bound x 3 */

int adm_keys_create(const struct adm_keys_opts *o, const char *name, const char *account)
{
    char err[CN_ERR_LEN];
    if (o->master_key_file == NULL) {
        fprintf(stderr, "cairn-admin: key create needs the master key: --master-key-file F "
                "(or $CAIRN_MASTER_KEY_FILE)\n");
        return 2;
    }
    const char *owner = account != NULL ? account : name;
    if (!gw_key_owner_ok(owner, strlen(owner)) || !gw_key_name_ok(name, strlen(name))) {
        fprintf(stderr, "cairn-admin: the account is 1..64 of [A-Za-z0-9._-] and the name "
                "1..64 printable characters\n");
        return 2;
    }
    struct gw_account_record acct;
    if (account != NULL) {   /* bound to an account of the cluster: its id owns the key */
        struct adm_rec_conn rcx;
        adm_rec_conn_init(&rcx, o);
        int found = adm_accounts_resolve(o, &rcx, account, &acct);
        adm_rec_conn_fini(&rcx);
        if (found != CN_OK)
            return 1;
        owner = acct.id;
    }
    unsigned char mk[GW_KEY_MASTER_LEN];
    if (gw_key_master_load(o->master_key_file, mk, err) != CN_OK) {
        fprintf(stderr, "cairn-admin: %s\n", err);
        return 2;
    }
    struct gw_key_record k;
    memset(&k, 0, sizeof(k));
    char akid[GW_KEY_AKID_LEN + 1];
    int rc = gw_key_generate(akid, k.secret);
    memcpy(k.akid, akid, sizeof(akid));
    k.akid_len = GW_KEY_AKID_LEN;
    k.secret_len = GW_KEY_SECRET_LEN;
    snprintf(k.owner, sizeof(k.owner), "%s", owner);
    snprintf(k.name, sizeof(k.name), "%s", name);
    k.created_us = (uint64_t)time(NULL) * 1000000u;
    char *data = NULL;
    size_t len = 0;
    if (rc == CN_OK)
        rc = gw_key_record_seal(&k, mk, &data, &len, err);
    OPENSSL_cleanse(mk, sizeof(mk));
    if (rc != CN_OK) {
        fprintf(stderr, "cairn-admin: key create: %s\n", rc == CN_ERR ? err : "no randomness");
        gw_key_record_wipe(&k);
        return 1;
    }
    char key[GW_KEY_PREFIX_LEN + GW_KEY_AKID_LEN + 1];
    snprintf(key, sizeof(key), "%s%s", GW_KEY_PREFIX, akid);
    uint32_t n_rep = 0;
    struct adm_rec_write w = {.key = key, .key_len = strlen(key), .payload = data, .len = len,
                              .ts = cn_hlc_now(cn_hlc_default())};
    uint32_t acks = adm_rec_put(o, &w, &n_rep);
    cn_free(data);
    int ok = acks >= n_rep / 2 + 1;
    if (!ok) {
        fprintf(stderr, "cairn-admin: key create: %u of %u replicas stored the key: not "
                "created (a later `key delete %s` removes what was stored)\n", acks, n_rep,
                akid);
    } else if (o->json) {
        printf("{\"command\": \"key create\", \"access_key_id\": ");
        adm_json_cstr(akid);
        printf(", \"secret_access_key\": ");
        adm_json_cstr(k.secret);
        printf(", \"account\": ");
        adm_json_cstr(k.owner);
        printf(", \"name\": ");
        adm_json_cstr(k.name);
        printf(", \"replicas_acked\": %u}\n", acks);
    } else {
        printf("access key id:     %s\nsecret access key: %s\naccount:           %s\n"
               "(the secret is shown only now)\n", akid, k.secret, k.owner);
    }
    gw_key_record_wipe(&k);
    return ok ? 0 : 1;
}

/* ---- list ------------------------------------------------------------------ */

struct adm_keys_ent {
    char akid[GW_KEY_AKID_MAX + 1];
    uint64_t ts, ver;
    uint32_t flags;
    uint32_t node;              /* a node that holds this version */
};

struct adm_keys_set {
    struct adm_keys_ent *v;
    size_t n, cap;
};

/* Appends a listed entry to the set (adm_keys_merge() keeps the newest). */
static void adm_keys_fold(struct adm_keys_set *s, const struct msg_entry *e, uint32_t node)
{
    size_t n = e->key.len - GW_KEY_PREFIX_LEN;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->v = cn_realloc(s->v, s->cap * sizeof(*s->v));
    }
    struct adm_keys_ent *x = &s->v[s->n++];
    *x = (struct adm_keys_ent){.ts = e->ts, .ver = e->ver, .flags = e->flags, .node = node};
    memcpy(x->akid, (const char *)e->key.ptr + GW_KEY_PREFIX_LEN, n);
    x->akid[n] = '\0';
}

/* AKID order, the newest version of each first. */
static int adm_keys_ent_cmp(const void *a, const void *b)
{
    const struct adm_keys_ent *x = a, *y = b;
    int r = strcmp(x->akid, y->akid);
    if (r != 0)
        return r;
    if (x->ts != y->ts)
        return x->ts > y->ts ? -1 : 1;
    return x->ver > y->ver ? -1 : x->ver < y->ver;
}

/* Sorts the entries of every node and keeps the newest of each key. */
static void adm_keys_merge(struct adm_keys_set *s)
{
    if (s->n < 2)
        return;
    qsort(s->v, s->n, sizeof(*s->v), adm_keys_ent_cmp);
    size_t w = 1;
    for (size_t i = 1; i < s->n; i++)
        if (strcmp(s->v[i].akid, s->v[w - 1].akid) != 0)
            s->v[w++] = s->v[i];
    s->n = w;
}

/* Lists node's "s/keys/" into s. CN_OK or CN_IO with err. */
static int adm_keys_list_node(const struct adm_keys_opts *o, struct adm_rec_conn *cx, uint32_t node,
                              struct adm_keys_set *s, char err[CN_ERR_LEN])
{
    char after[GW_KEY_PREFIX_LEN + GW_KEY_AKID_MAX + 1];
    size_t after_len = 0;
    for (;;) {
        struct msg req;
        struct msg_reply rep;
        msg_init_request(&req, MSG_OP_LIST, 0);
        req.prefix = (struct msg_bytes){(const uint8_t *)GW_KEY_PREFIX, GW_KEY_PREFIX_LEN};
        MSG_SET(&req, MSG_F_PREFIX);
        if (after_len > 0) {
            req.after = (struct msg_bytes){(const uint8_t *)after, (uint32_t)after_len};
            MSG_SET(&req, MSG_F_AFTER);
        }
        req.limit = ADM_KEYS_PAGE;
        MSG_SET(&req, MSG_F_LIMIT);
        req.flags = MSG_LIST_TOMBSTONES;
        MSG_SET(&req, MSG_F_FLAGS);
        if (adm_rec_call(o, cx, node, &req, &rep, err) != CN_OK)
            return CN_IO;
        if (rep.m.st != MSG_ST_OK) {
            snprintf(err, CN_ERR_LEN, "LIST: %s", msg_status_str(rep.m.st));
            msg_reply_release(&rep);
            return CN_IO;
        }
        for (uint32_t i = 0; i < rep.m.n_ents && s->n < ADM_KEYS_LIST_MAX; i++) {
            const struct msg_entry *e = &rep.m.ents[i];
            if (e->key.len > GW_KEY_PREFIX_LEN &&
                e->key.len <= GW_KEY_PREFIX_LEN + GW_KEY_AKID_MAX &&
                memcmp(e->key.ptr, GW_KEY_PREFIX, GW_KEY_PREFIX_LEN) == 0)
                adm_keys_fold(s, e, node);
        }
        int more = rep.m.more && rep.m.n_ents > 0;
        if (more) {
            const struct msg_entry *e = &rep.m.ents[rep.m.n_ents - 1];
            after_len = CN_MIN((size_t)e->key.len, sizeof(after));
            memcpy(after, e->key.ptr, after_len);
        }
        msg_reply_release(&rep);
        if (!more || s->n >= ADM_KEYS_LIST_MAX)
            return CN_OK;
    }
}

/* The plain fields of a listed key's record (read from the node that had
 * the newest version). CN_OK, or an error with err. */
static int adm_keys_read(const struct adm_keys_opts *o, struct adm_rec_conn *cx,
                         const struct adm_keys_ent *x, struct gw_key_record *k,
                         char err[CN_ERR_LEN])
{
    char key[GW_KEY_PREFIX_LEN + GW_KEY_AKID_MAX + 1];
    snprintf(key, sizeof(key), "%s%s", GW_KEY_PREFIX, x->akid);
    struct msg req;
    struct msg_reply rep;
    msg_init_request(&req, MSG_OP_GET, 0);
    req.key = (struct msg_bytes){(const uint8_t *)key, (uint32_t)strlen(key)};
    MSG_SET(&req, MSG_F_KEY);
    if (adm_rec_call(o, cx, x->node, &req, &rep, err) != CN_OK)
        return CN_IO;
    int rc = CN_CORRUPT;
    if (rep.m.st != MSG_ST_OK)
        snprintf(err, CN_ERR_LEN, "GET: %s", msg_status_str(rep.m.st));
    else
        rc = gw_key_record_decode(k, rep.m.payload.ptr, rep.m.payload.len, x->akid,
                                  strlen(x->akid), err);
    msg_reply_release(&rep);
    return rc;
}

/* With a master key, whether k's secret opens under it: "yes" or "NO". */
static const char *adm_keys_opens(struct gw_key_record *k, const unsigned char *mk)
{
    char err[CN_ERR_LEN];
    int ok = gw_key_record_open(k, mk, err) == CN_OK;
    gw_key_record_wipe(k);
    return ok ? "yes" : "NO";
}

/* A restricted key's list as JSON members: "create_bucket", "allow". */
static void adm_keys_json_limits(const struct gw_key_limits *l)
{
    printf(", \"create_bucket\": %s, \"allow\": [", l->create_bucket ? "true" : "false");
    for (uint32_t i = 0; i < l->n; i++) {
        printf("%s{\"bucket\": ", i > 0 ? ", " : "");
        adm_json_cstr(l->v[i].bucket);
        printf(", \"read\": %s, \"write\": %s, \"owner\": %s}",
               l->v[i].rights & GW_KEY_RIGHT_READ ? "true" : "false",
               l->v[i].rights & GW_KEY_RIGHT_WRITE ? "true" : "false",
               l->v[i].rights & GW_KEY_RIGHT_OWNER ? "true" : "false");
    }
    putchar(']');
}

int adm_keys_list(const struct adm_keys_opts *o)
{
    unsigned char mk[GW_KEY_MASTER_LEN];
    int have_mk = 0;
    if (o->master_key_file != NULL) {   /* optional: then each key says if it opens */
        char err[CN_ERR_LEN];
        if (gw_key_master_load(o->master_key_file, mk, err) != CN_OK) {
            fprintf(stderr, "cairn-admin: %s\n", err);
            return 2;
        }
        have_mk = 1;
    }
    struct adm_keys_set s = {0};
    struct adm_rec_conn cx;
    adm_rec_conn_init(&cx, o);
    uint32_t answered = 0;
    for (uint32_t i = 0; i < cn_cluster_nodes(o->cl); i++) {
        char err[CN_ERR_LEN];
        if (adm_keys_list_node(o, &cx, i, &s, err) == CN_OK)
            answered++;
        else
            fprintf(stderr, "cairn-admin: %s: %s\n", cn_cluster_node(o->cl, i)->address, err);
    }
    adm_keys_merge(&s);
    if (o->json)
        printf("{\"command\": \"key list\", \"nodes_answered\": %u, \"keys\": [", answered);
    int first = 1;
    for (size_t i = 0; i < s.n; i++) {
        const struct adm_keys_ent *x = &s.v[i];
        if (x->flags & MSG_FLAG_TOMBSTONE)
            continue;
        struct gw_key_record k;
        char err[CN_ERR_LEN];
        int rc = adm_keys_read(o, &cx, x, &k, err);
        if (o->json) {
            printf("%s\n  {\"access_key_id\": ", first ? "" : ",");
            adm_json_cstr(x->akid);
            if (rc == CN_OK) {
                printf(", \"account\": ");
                adm_json_cstr(k.owner);
                printf(", \"name\": ");
                adm_json_cstr(k.name);
                printf(", \"created_us\": %llu, \"restricted\": %s",
                       (unsigned long long)k.created_us, k.restricted ? "true" : "false");
                if (k.restricted)
                    adm_keys_json_limits(&k.limits);
                if (have_mk)
                    printf(", \"opens\": %s",
                           adm_keys_opens(&k, mk)[0] == 'y' ? "true" : "false");
                putchar('}');
            } else {
                printf(", \"error\": ");
                adm_json_cstr(err);
                putchar('}');
            }
        } else if (rc == CN_OK) {
            time_t t = (time_t)(k.created_us / 1000000);
            struct tm tm;
            char when[32];
            gmtime_r(&t, &tm);
            strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
            printf("%-22s %-20s %s  %s%s%s%s\n", x->akid, k.owner, when, k.name,
                   k.restricted ? "  (restricted: `key allow`)" : "",
                   have_mk ? "  opens: " : "", have_mk ? adm_keys_opens(&k, mk) : "");
        } else {
            printf("%-22s (unreadable: %s)\n", x->akid, err);
        }
        first = 0;
        gw_key_record_wipe(&k);
    }
    if (o->json)
        printf("%s]}\n", first ? "" : "\n");
    adm_rec_conn_fini(&cx);
    cn_free(s.v);
    OPENSSL_cleanse(mk, sizeof(mk));
    return answered > 0 ? 0 : 1;
}

int adm_keys_delete(const struct adm_keys_opts *o, const char *akid)
{
    if (!gw_key_akid_ok(akid, strlen(akid))) {
        fprintf(stderr, "cairn-admin: %s is not an access key id\n", akid);
        return 2;
    }
    char key[GW_KEY_PREFIX_LEN + GW_KEY_AKID_MAX + 1];
    snprintf(key, sizeof(key), "%s%s", GW_KEY_PREFIX, akid);
    /* the tombstone must be newer than every version: the HLC is ahead of
     * the creation's time on this machine; a key made on a machine whose
     * clock runs ahead is covered by the newest listed version below */
    struct adm_keys_set s = {0};
    struct adm_rec_conn cx;
    adm_rec_conn_init(&cx, o);
    uint64_t newest = 0;
    int found = 0;
    for (uint32_t i = 0; i < cn_cluster_nodes(o->cl); i++) {
        char err[CN_ERR_LEN];
        s.n = 0;
        if (adm_keys_list_node(o, &cx, i, &s, err) != CN_OK)
            continue;
        for (size_t j = 0; j < s.n; j++)
            if (strcmp(s.v[j].akid, akid) == 0) {
                newest = CN_MAX(newest, s.v[j].ts);
                found |= !(s.v[j].flags & MSG_FLAG_TOMBSTONE);
            }
    }
    adm_rec_conn_fini(&cx);
    cn_free(s.v);
    if (!found) {
        fprintf(stderr, "cairn-admin: no key %s in the cluster\n", akid);
        return 1;
    }
    uint64_t ts = CN_MAX(cn_hlc_now(cn_hlc_default()), newest + 1);
    uint32_t n_rep = 0;
    struct adm_rec_write w = {.key = key, .key_len = strlen(key), .del = 1, .ts = ts};
    uint32_t acks = adm_rec_put(o, &w, &n_rep);
    int ok = acks >= n_rep / 2 + 1;
    if (o->json) {
        printf("{\"command\": \"key delete\", \"access_key_id\": ");
        adm_json_cstr(akid);
        printf(", \"deleted\": %s, \"replicas_acked\": %u}\n", ok ? "true" : "false", acks);
    } else if (ok) {
        printf("deleted %s (%u of %u replicas)\n", akid, acks, n_rep);
    } else {
        fprintf(stderr, "cairn-admin: key delete: %u of %u replicas acked; run it again\n",
                acks, n_rep);
    }
    return ok ? 0 : 1;
}

/* ---- allow / deny ------------------------------------------------------------ */

/* Prints k's restrictions (text or JSON). */
static void adm_keys_print_limits(const struct adm_keys_opts *o, const struct gw_key_record *k,
                                  uint32_t acks)
{
    const struct gw_key_limits *l = &k->limits;
    if (o->json) {
        printf("{\"command\": \"key limits\", \"access_key_id\": ");
        adm_json_cstr(k->akid);
        printf(", \"account\": ");
        adm_json_cstr(k->owner);
        printf(", \"restricted\": true, \"replicas_acked\": %u", acks);
        adm_keys_json_limits(l);
        printf("}\n");
        return;
    }
    printf("key %s (account %s) is restricted%s:\n", k->akid, k->owner,
           l->create_bucket ? ", may create buckets" : "");
    if (l->n == 0)
        printf("  (no bucket)\n");
    for (uint32_t i = 0; i < l->n; i++)
        printf("  %-63s %s%s%s\n", l->v[i].bucket,
               l->v[i].rights & GW_KEY_RIGHT_READ ? " read" : "",
               l->v[i].rights & GW_KEY_RIGHT_WRITE ? " write" : "",
               l->v[i].rights & GW_KEY_RIGHT_OWNER ? " owner" : "");
}

/* Applies ch to k's limits. CN_OK or 2 (usage, printed). */
static int adm_keys_apply(struct gw_key_record *k, const struct adm_keys_limit_change *ch)
{
    k->restricted = 1;
    if (ch->create_bucket)
        k->limits.create_bucket = ch->allow;
    if (ch->bucket == NULL)
        return CN_OK;
    size_t bl = strlen(ch->bucket);
    const struct gw_key_allow *a = gw_key_limits_find(&k->limits, ch->bucket, bl);
    unsigned now = a != NULL ? a->rights : 0;
    unsigned want = ch->allow ? now | ch->rights : (ch->rights == 0 ? 0 : now & ~ch->rights);
    int rc = gw_key_limits_set(&k->limits, ch->bucket, bl, want);
    if (rc == CN_TOOBIG)
        fprintf(stderr, "cairn-admin: a key lists at most %d buckets\n", GW_KEY_ALLOW_MAX);
    return rc == CN_OK ? CN_OK : 2;
}

int adm_keys_limit(const struct adm_keys_opts *o, const char *akid,
                   const struct adm_keys_limit_change *ch)
{
    char err[CN_ERR_LEN];
    if (!gw_key_akid_ok(akid, strlen(akid))) {
        fprintf(stderr, "cairn-admin: %s is not an access key id\n", akid);
        return 2;
    }
    if (ch->bucket != NULL && !gw_key_bucket_ok(ch->bucket, strlen(ch->bucket))) {
        fprintf(stderr, "cairn-admin: %s is not a bucket name (3..63 of [a-z0-9.-])\n",
                ch->bucket);
        return 2;
    }
    if ((ch->bucket == NULL && !ch->create_bucket) ||
        (ch->allow && ch->bucket != NULL && ch->rights == 0)) {
        fprintf(stderr, "cairn-admin: key %s needs --bucket B with --read, --write or --owner "
                "(deny: none of them takes the whole bucket away), or --create-bucket\n",
                ch->allow ? "allow" : "deny");
        return 2;
    }
    if (o->master_key_file == NULL) {
        fprintf(stderr, "cairn-admin: key %s needs the master key (the restrictions are "
                "sealed with the secret): --master-key-file F (or $CAIRN_MASTER_KEY_FILE)\n",
                ch->allow ? "allow" : "deny");
        return 2;
    }
    unsigned char mk[GW_KEY_MASTER_LEN];
    if (gw_key_master_load(o->master_key_file, mk, err) != CN_OK) {
        fprintf(stderr, "cairn-admin: %s\n", err);
        return 2;
    }
    char key[GW_KEY_PREFIX_LEN + GW_KEY_AKID_MAX + 1];
    snprintf(key, sizeof(key), "%s%s", GW_KEY_PREFIX, akid);
    size_t key_len = strlen(key);
    struct adm_rec_conn cx;
    adm_rec_conn_init(&cx, o);
    struct adm_rec_set s;
    int status = 1;
    const struct adm_rec_ent *x = NULL;
    struct gw_key_record k;
    memset(&k, 0, sizeof(k));
    char *data = NULL;
    size_t len = 0;
    if (adm_rec_list(o, &cx, key, key_len, 0, 1000, &s) == CN_OK)
        for (size_t i = 0; i < s.n; i++)
            if (s.v[i].key_len == key_len && memcmp(s.v[i].key, key, key_len) == 0)
                x = &s.v[i];
    struct msg_reply rep;
    if (x == NULL) {
        fprintf(stderr, "cairn-admin: no key %s in the cluster\n", akid);
    } else if (adm_rec_get(o, &cx, x->node, key, key_len, &rep, err) != CN_OK) {
        fprintf(stderr, "cairn-admin: %s: %s\n", key, err);
    } else {
        int rc = gw_key_record_decode(&k, rep.m.payload.ptr, rep.m.payload.len, akid,
                                      strlen(akid), err);
        msg_reply_release(&rep);
        if (rc == CN_OK)
            rc = gw_key_record_open(&k, mk, err);
        if (rc != CN_OK)
            fprintf(stderr, "cairn-admin: %s\n", err);
        else if ((status = adm_keys_apply(&k, ch)) == CN_OK &&
                 gw_key_record_seal(&k, mk, &data, &len, err) != CN_OK) {
            fprintf(stderr, "cairn-admin: %s\n", err);
            status = 1;
        }
    }
    adm_rec_conn_fini(&cx);
    OPENSSL_cleanse(mk, sizeof(mk));
    if (data != NULL) {
        struct adm_rec_write w = {.key = key, .key_len = key_len, .payload = data, .len = len,
                                  .ts = adm_rec_next_ts(x->ts)};
        uint32_t n_rep = 0, acks = adm_rec_put(o, &w, &n_rep);
        if (acks >= n_rep / 2 + 1) {
            adm_keys_print_limits(o, &k, acks);
            status = 0;
        } else {
            fprintf(stderr, "cairn-admin: key %s: %u of %u replicas stored the change; run it "
                    "again\n", akid, acks, n_rep);
            status = 1;
        }
        cn_free(data);
    }
    gw_key_record_wipe(&k);
    cn_free(s.v);
    return status;
}
