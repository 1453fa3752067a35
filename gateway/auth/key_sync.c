/* The gateway's follower of the keys kept in the cluster (key_sync.h). One
 * round: LIST pages of "s/keys/" into `next`, then one GET at a time for the
 * entries whose (ts, ver) the cache lacks, then publish when the set moved.
 * The timer, one round at a time and the close protocol are the system
 * record follower's (cluster/sysrec.h), shared with the cluster map's.
 * Memory: the cache and the round's list, at most max_keys entries each
 * (docs/operations.md gives the per-key bytes). */
#include "key_sync.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "store.h"
#include "sysrec.h"

#include "cn/alloc.h"
#include "cn/log.h"
#include "cn/metrics.h"
#include "cn/time.h"

#define GW_KEY_SYNC_PAGE 1000
#define GW_KEY_SYNC_READS 16   /* record reads in flight per round */

struct gw_key_sync_ent {
    char akid[GW_KEY_AKID_MAX + 1];
    size_t akid_len;
    uint64_t ts, ver;
    int good;                       /* the record parsed and its secret opened */
    int gone;                       /* deleted between the listing and the read */
    char owner[GW_KEY_OWNER_MAX + 1];
    char name[GW_KEY_NAME_MAX + 1];
    char secret[GW_KEY_SECRET_MAX + 1];
    size_t secret_len;
    struct gw_key_limits *limits;   /* a restricted key's (owned; moved with the entry) */
};

struct gw_key_sync;

/* One record read in flight: which entry of `next` it fills. */
struct gw_key_sync_read {
    struct gw_key_sync *ks;
    uint32_t idx;
    int busy;
};

struct gw_key_sync {
    struct event_base *base;
    struct gw_store *store;
    struct gw_sysrec *w;            /* the timer and the requests in flight */
    uint32_t max_keys;
    unsigned char mk[GW_KEY_MASTER_LEN];
    struct gw_credentials *file;
    gw_key_sync_publish_cb publish;
    void *arg;
    struct gw_key_sync_ent *cache;  /* the set published last, sorted by akid */
    uint32_t n_cache;
    uint32_t n_good;
    struct gw_key_sync_ent *next;   /* this round's listing */
    uint32_t n_next, cap_next;
    uint32_t fetch_i;               /* next entry of `next` to look at */
    uint32_t reads;                 /* record reads in flight */
    struct gw_key_sync_read read_v[GW_KEY_SYNC_READS];
    int in_fetch, fetch_again;
    int changed;
    int capped_logged;
    struct cn_metrics *reg;
    uint32_t m_in_use, m_left_out, m_list_failures, m_last_round;
};

static void gw_key_sync_round_start(void *arg);

static void gw_key_sync_wipe(struct gw_key_sync_ent *v, uint32_t n)
{
    if (v == NULL)
        return;
    for (uint32_t i = 0; i < n; i++)
        cn_free(v[i].limits);
    OPENSSL_cleanse(v, (size_t)n * sizeof(*v));
}

/* Copies the cache's entry old into e, moving its limits (each AKID is
 * listed once, so the cache entry is not read again this round). */
static void gw_key_sync_take(struct gw_key_sync_ent *e, const struct gw_key_sync_ent *old)
{
    *e = *old;
    ((struct gw_key_sync_ent *)old)->limits = NULL;
}

static int gw_key_sync_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    int r = memcmp(a, b, an < bn ? an : bn);
    return r != 0 ? r : (an > bn) - (an < bn);
}

/* The cache's entry of akid, or NULL. */
static const struct gw_key_sync_ent *gw_key_sync_cached(const struct gw_key_sync *ks,
                                                        const char *akid, size_t n)
{
    size_t lo = 0, hi = ks->n_cache;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = gw_key_sync_cmp(akid, n, ks->cache[mid].akid, ks->cache[mid].akid_len);
        if (r == 0)
            return &ks->cache[mid];
        if (r < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/* The round is over: the listing becomes the cache and, when the set
 * moved, the merged table is published. */
static void gw_key_sync_round_end(struct gw_key_sync *ks)
{
    if (ks->n_next != ks->n_cache)
        ks->changed = 1;
    gw_key_sync_wipe(ks->cache, ks->n_cache);
    cn_free(ks->cache);
    ks->cache = ks->next;
    ks->n_cache = ks->n_next;
    ks->next = NULL;
    ks->n_next = ks->cap_next = 0;
    if (ks->changed) {
        struct gw_cred *v = cn_calloc(ks->n_cache > 0 ? ks->n_cache : 1, sizeof(*v));
        uint32_t n = 0, bad = 0;
        for (uint32_t i = 0; i < ks->n_cache; i++) {
            const struct gw_key_sync_ent *e = &ks->cache[i];
            if (!e->good) {
                bad += !e->gone;
                continue;
            }
            v[n++] = (struct gw_cred){
                .access_key = e->akid, .access_key_len = e->akid_len,
                .secret_key = e->secret, .secret_key_len = e->secret_len,
                .owner_id = e->owner, .display_name = e->name, .limits = e->limits,
            };
        }
        size_t shadowed = 0;
        struct gw_credentials *t = gw_credentials_merge(ks->file, v, n, &shadowed);
        cn_free(v);
        ks->n_good = n;
        if (ks->reg != NULL) {
            cn_metrics_set(ks->reg, ks->m_in_use, n);
            cn_metrics_set(ks->reg, ks->m_left_out, bad);
        }
        if (bad > 0 && n == 0)
            CN_LOG(CN_LOG_ERROR, "keys: none of the %u keys in the cluster opens: is "
                   "s3.master_key_file the cluster's master key? Only the credentials "
                   "file's keys are accepted", bad);
        CN_LOG(CN_LOG_INFO, "keys: %u keys from the cluster in use (%u left out as bad, "
               "%zu shadowed by the credentials file)", n, bad, shadowed);
        ks->publish(t, ks->arg);
    }
    ks->changed = 0;
    if (ks->reg != NULL)
        cn_metrics_set(ks->reg, ks->m_last_round, (int64_t)(cn_time_now_us() / 1000000));
    gw_sysrec_round_end(ks->w);
}

static void gw_key_sync_fetch_next(struct gw_key_sync *ks);

/* A record read: parsed and opened into its entry of `next`. */
static void gw_key_sync_on_record(struct gw_store_result *res, void *arg)
{
    struct gw_key_sync_read *rd = arg;
    struct gw_key_sync *ks = rd->ks;
    rd->busy = 0;
    ks->reads--;
    if (gw_sysrec_op_done(ks->w))
        return;
    struct gw_key_sync_ent *e = &ks->next[rd->idx];
    ks->changed = 1;
    e->good = 0;
    if (res->rc == CN_NOTFOUND) {
        e->gone = 1;   /* deleted since the listing: left out; the next round drops it */
    } else if (res->rc != CN_OK) {
        /* cannot read it now: keep what the cache had, try again next round */
        const struct gw_key_sync_ent *old = gw_key_sync_cached(ks, e->akid, e->akid_len);
        CN_LOG(CN_LOG_WARN, "keys: cannot read %s%s: %s", GW_KEY_PREFIX, e->akid, res->err);
        if (old != NULL && old->good) {
            gw_key_sync_take(e, old);
            e->ts = 0;   /* a version no listing has: read again next round */
            e->ver = 0;
        }
    } else {
        const struct msg *m = &res->reply->m;
        struct gw_key_record k;
        char err[CN_ERR_LEN];
        if (gw_key_record_decode(&k, m->payload.ptr, m->payload.len, e->akid, e->akid_len,
                                 err) != CN_OK ||
            gw_key_record_open(&k, ks->mk, err) != CN_OK) {
            CN_LOG(CN_LOG_WARN, "keys: %s%s left out: %s", GW_KEY_PREFIX, e->akid, err);
        } else {
            e->good = 1;
            memcpy(e->owner, k.owner, sizeof(e->owner));
            memcpy(e->name, k.name, sizeof(e->name));
            memcpy(e->secret, k.secret, k.secret_len + 1);
            e->secret_len = k.secret_len;
            e->limits = k.restricted ? cn_memdup(&k.limits, sizeof(k.limits)) : NULL;
        }
        gw_key_record_wipe(&k);
    }
    gw_key_sync_fetch_next(ks);
}

/* Walks `next` from fetch_i: entries the cache holds at the same version
 * are copied, the others are read, up to GW_KEY_SYNC_READS at a time; the
 * round ends when the walk is through and no read is out. A read answered
 * from inside gw_store_get() only asks for another pass (in_fetch), so the
 * round ends once. */
static void gw_key_sync_fetch_next(struct gw_key_sync *ks)
{
    if (ks->in_fetch) {
        ks->fetch_again = 1;
        return;
    }
    ks->in_fetch = 1;
    do {
        ks->fetch_again = 0;
        for (; ks->fetch_i < ks->n_next && ks->reads < GW_KEY_SYNC_READS; ks->fetch_i++) {
            struct gw_key_sync_ent *e = &ks->next[ks->fetch_i];
            const struct gw_key_sync_ent *old = gw_key_sync_cached(ks, e->akid, e->akid_len);
            if (old != NULL && old->ts == e->ts && old->ver == e->ver) {
                gw_key_sync_take(e, old);
                continue;
            }
            struct gw_key_sync_read *rd = NULL;
            for (uint32_t i = 0; rd == NULL && i < GW_KEY_SYNC_READS; i++)
                if (!ks->read_v[i].busy)
                    rd = &ks->read_v[i];
            CN_ASSERT(rd != NULL);
            *rd = (struct gw_key_sync_read){.ks = ks, .idx = ks->fetch_i, .busy = 1};
            char key[GW_KEY_PREFIX_LEN + GW_KEY_AKID_MAX];
            memcpy(key, GW_KEY_PREFIX, GW_KEY_PREFIX_LEN);
            memcpy(key + GW_KEY_PREFIX_LEN, e->akid, e->akid_len);
            gw_sysrec_op_start(ks->w);
            ks->reads++;
            gw_store_get(ks->store, key, GW_KEY_PREFIX_LEN + e->akid_len, 1, 0, 0,
                         gw_key_sync_on_record, rd);
        }
    } while (ks->fetch_again && !gw_sysrec_closed(ks->w));
    ks->in_fetch = 0;
    if (!gw_sysrec_closed(ks->w) && ks->fetch_i == ks->n_next && ks->reads == 0)
        gw_key_sync_round_end(ks);
}

static void gw_key_sync_list(struct gw_key_sync *ks, const char *after, size_t after_len);

/* A page of the listing: its keys appended to `next` (up to max_keys). */
static void gw_key_sync_on_list(struct gw_store_list_result *res, void *arg)
{
    struct gw_key_sync *ks = arg;
    if (gw_sysrec_op_done(ks->w))
        return;
    if (res->rc != CN_OK) {
        CN_LOG(CN_LOG_WARN, "keys: cannot list %s (%s): the last set stays in use",
               GW_KEY_PREFIX, res->err);
        if (ks->reg != NULL)
            cn_metrics_add(ks->reg, ks->m_list_failures, 1);
        gw_key_sync_wipe(ks->next, ks->n_next);
        cn_free(ks->next);
        ks->next = NULL;
        ks->n_next = ks->cap_next = 0;
        gw_sysrec_round_end(ks->w);
        return;
    }
    int capped = 0;
    for (uint32_t i = 0; i < res->n_ents; i++) {
        const struct gw_store_entry *se = &res->ents[i];
        size_t n = se->key_len - GW_KEY_PREFIX_LEN;
        if (se->key_len <= GW_KEY_PREFIX_LEN || n > GW_KEY_AKID_MAX ||
            memcmp(se->key, GW_KEY_PREFIX, GW_KEY_PREFIX_LEN) != 0)
            continue;
        if (ks->n_next == ks->max_keys) {
            capped = 1;
            break;
        }
        if (ks->n_next == ks->cap_next) {
            ks->cap_next = ks->cap_next ? 2 * ks->cap_next : 64;
            ks->next = cn_realloc(ks->next, (size_t)ks->cap_next * sizeof(*ks->next));
        }
        struct gw_key_sync_ent *e = &ks->next[ks->n_next++];
        memset(e, 0, sizeof(*e));
        memcpy(e->akid, se->key + GW_KEY_PREFIX_LEN, n);
        e->akid_len = n;
        e->ts = se->ts;
        e->ver = se->ver;
    }
    if (capped && !ks->capped_logged) {
        ks->capped_logged = 1;
        CN_LOG(CN_LOG_ERROR, "keys: more than s3.keys_max (%u) keys in the cluster: the rest "
               "(in key order) are not accepted", ks->max_keys);
    }
    if (!capped && res->more && res->n_ents > 0) {
        const struct gw_store_entry *last = &res->ents[res->n_ents - 1];
        gw_key_sync_list(ks, last->key, last->key_len);
        return;
    }
    ks->fetch_i = 0;
    gw_key_sync_fetch_next(ks);
}

static void gw_key_sync_list(struct gw_key_sync *ks, const char *after, size_t after_len)
{
    gw_sysrec_op_start(ks->w);
    gw_store_list(ks->store, GW_KEY_PREFIX, GW_KEY_PREFIX_LEN, after, after_len,
                  GW_KEY_SYNC_PAGE, gw_key_sync_on_list, ks);
}

/* The follower's round (sysrec.h): lists, then reads, then publishes. */
static void gw_key_sync_round_start(void *arg)
{
    struct gw_key_sync *ks = arg;
    ks->n_next = 0;
    ks->changed = 0;
    gw_key_sync_list(ks, NULL, 0);
}

struct gw_key_sync *gw_key_sync_new(struct event_base *base, struct gw_store *store,
                                    const struct gw_key_sync_opts *o,
                                    gw_key_sync_publish_cb publish, void *arg)
{
    struct gw_key_sync *ks = cn_calloc(1, sizeof(*ks));
    ks->base = base;
    ks->store = store;
    ks->max_keys = o->max_keys;
    memcpy(ks->mk, o->master_key, sizeof(ks->mk));
    ks->file = gw_credentials_hold(o->file);
    ks->publish = publish;
    ks->arg = arg;
    ks->reg = o->reg;
    if (ks->reg != NULL) {
        ks->m_in_use = cn_metrics_gauge(ks->reg, "cairn_gateway_keys_in_use",
                                        "Keys from the cluster this gateway accepts now", 0, NULL);
        ks->m_left_out = cn_metrics_gauge(ks->reg, "cairn_gateway_keys_left_out",
                                          "Key records that do not parse or open under this "
                                          "gateway's master key", 0, NULL);
        ks->m_list_failures = cn_metrics_counter(ks->reg,
                                                 "cairn_gateway_keys_refresh_failures_total",
                                                 "Key refreshes whose listing failed (the last "
                                                 "set stayed in use)", 0, NULL);
        ks->m_last_round = cn_metrics_gauge(ks->reg, "cairn_gateway_keys_last_refresh_seconds",
                                            "Unix time the last complete key refresh ended", 0,
                                            NULL);
    }
    ks->w = gw_sysrec_new(base, 0, o->interval_ms, gw_key_sync_round_start, ks);
    return ks;
}

void gw_key_sync_close(struct gw_key_sync *ks)
{
    if (ks == NULL)
        return;
    gw_sysrec_close(ks->w);
}

void gw_key_sync_free(struct gw_key_sync *ks)
{
    if (ks == NULL)
        return;
    if (!gw_sysrec_free(ks->w, "keys"))   /* a callback still to come would find it freed */
        return;
    gw_key_sync_wipe(ks->cache, ks->n_cache);
    gw_key_sync_wipe(ks->next, ks->n_next);
    cn_free(ks->cache);
    cn_free(ks->next);
    OPENSSL_cleanse(ks->mk, sizeof(ks->mk));
    gw_credentials_free(ks->file);
    cn_free(ks);
}

uint32_t gw_key_sync_count(const struct gw_key_sync *ks)
{
    return ks != NULL ? ks->n_good : 0;
}
