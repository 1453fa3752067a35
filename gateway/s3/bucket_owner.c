/* Bucket ownership checks and the per-worker owner cache (bucket_owner.h). */
#include "bucket_owner.h"

#include <stdio.h>
#include <string.h>

#include "access.h"
#include "bucket_meta.h"
#include "keys.h"
#include "s3_ops.h"
#include "s3_error.h"
#include "s3_versions.h"
#include "store.h"

#include "cn/alloc.h"
#include "cn/log.h"
#include "cn/time.h"

struct gw_bucket_owner_slot {
    uint64_t at_ms;   /* when it was learnt (monotonic); 0: empty */
    uint64_t at_wall_us; /* the same instant on the wall clock (record ts scale) */
    uint8_t blen;
    char bucket[GW_BUCKET_NAME_MAX + 1];
    struct gw_access_config *cfg;   /* a reference; NULL: empty */
    size_t policy_bytes;            /* counted against the budget */
};

struct gw_bucket_owner_cache {
    uint64_t ttl_ms;
    size_t policy_bytes;            /* cached policy texts, all slots */
    struct gw_bucket_owner_slot slots[GW_BUCKET_OWNER_SLOTS];
};

struct gw_bucket_owner_cache *gw_bucket_owner_cache_new(uint64_t ttl_ms)
{
    struct gw_bucket_owner_cache *c = cn_calloc(1, sizeof(*c));
    c->ttl_ms = ttl_ms;
    return c;
}

/* Empties slot s. */
static void gw_bucket_owner_slot_clear(struct gw_bucket_owner_cache *c,
                                       struct gw_bucket_owner_slot *s)
{
    gw_access_config_unref(s->cfg);
    s->cfg = NULL;
    c->policy_bytes -= s->policy_bytes;
    s->policy_bytes = 0;
    s->at_ms = 0;
}

void gw_bucket_owner_cache_free(struct gw_bucket_owner_cache *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < GW_BUCKET_OWNER_SLOTS; i++)
        gw_bucket_owner_slot_clear(c, &c->slots[i]);
    cn_free(c);
}

/* FNV-1a of the name: the slot it may live in. */
static struct gw_bucket_owner_slot *gw_bucket_owner_slot(struct gw_bucket_owner_cache *c,
                                                         const char *bucket, size_t blen)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < blen; i++)
        h = (h ^ (uint8_t)bucket[i]) * 16777619u;
    return &c->slots[h % GW_BUCKET_OWNER_SLOTS];
}

int gw_bucket_owner_cache_get(struct gw_bucket_owner_cache *c, const char *bucket, size_t blen,
                              uint64_t now_ms, struct gw_access_config **cfg,
                              uint64_t *learnt_wall_us)
{
    if (c->ttl_ms == 0 || blen > GW_BUCKET_NAME_MAX)
        return 0;
    struct gw_bucket_owner_slot *s = gw_bucket_owner_slot(c, bucket, blen);
    if (s->at_ms == 0 || s->blen != blen || memcmp(s->bucket, bucket, blen) != 0 ||
        now_ms - s->at_ms >= c->ttl_ms)
        return 0;
    *cfg = s->cfg;
    *learnt_wall_us = s->at_wall_us;
    return 1;
}

void gw_bucket_owner_cache_put(struct gw_bucket_owner_cache *c, const char *bucket, size_t blen,
                               struct gw_access_config *cfg, uint64_t now_ms)
{
    if (c->ttl_ms == 0 || blen > GW_BUCKET_NAME_MAX)
        return;
    struct gw_bucket_owner_slot *s = gw_bucket_owner_slot(c, bucket, blen);
    gw_bucket_owner_slot_clear(c, s);
    if (c->policy_bytes + cfg->policy_bytes > GW_BUCKET_OWNER_POLICY_BUDGET)
        return;   /* used by the request that read it, not kept */
    gw_access_config_ref(cfg);
    s->cfg = cfg;
    s->policy_bytes = cfg->policy_bytes;
    c->policy_bytes += s->policy_bytes;
    s->at_ms = now_ms > 0 ? now_ms : 1;
    s->at_wall_us = cn_time_now_us();
    s->blen = (uint8_t)blen;
    memcpy(s->bucket, bucket, blen);
    s->bucket[blen] = '\0';
}

void gw_bucket_owner_cache_drop(struct gw_bucket_owner_cache *c, const char *bucket, size_t blen)
{
    if (blen > GW_BUCKET_NAME_MAX)
        return;
    struct gw_bucket_owner_slot *s = gw_bucket_owner_slot(c, bucket, blen);
    if (s->at_ms != 0 && s->blen == blen && memcmp(s->bucket, bucket, blen) == 0)
        gw_bucket_owner_slot_clear(c, s);
}

/* ---- the check ---- */

/* What one decision is about: r's own operation (the target), or the
 * source of its copy. */
struct gw_bucket_owner_what {
    int source;
    const char *action;
    const char *bucket;
    size_t blen;
    const char *key;          /* NULL: a bucket action */
    size_t klen;
};

static void gw_bucket_owner_what_of(struct gw_req *r, int source, struct gw_bucket_owner_what *w)
{
    w->source = source;
    if (source) {
        w->action = gw_s3_versions_source_action(r);
        w->bucket = r->copy_src.bucket;
        w->blen = r->copy_src.bucket_len;
        w->key = r->copy_src.key;
        w->klen = r->copy_src.key_len;
        return;
    }
    w->action = gw_s3_versions_action(r);
    w->bucket = r->bucket;
    w->blen = r->bucket_len;
    w->key = r->key;
    w->klen = r->key_len;
}

/* Decides w on cfg; 1 when r may go on (then r->access_cfg and
 * r->access_need_object are set for the target, r->access_src_cfg and
 * r->access_need_source for a copy's source), else 0. DeleteObjects
 * names its keys in the body: it goes on to decide each key there
 * (s3_multidelete.c), on r->access_cfg. */
static int gw_bucket_owner_decide(struct gw_req *r, struct gw_access_config *cfg,
                                  const struct gw_bucket_owner_what *w, int fresh)
{
    enum gw_access_result res;
    int per_key = !w->source && r->op != NULL && r->op->id == GW_S3_OP_DELETE_OBJECTS;
    res = gw_access_decide(r, cfg, w->action, w->bucket, w->blen, w->key, w->klen, 0, NULL);
    /* DeleteObjects: refused whole when nothing could allow a key (no
     * grant, no policy), else decided per key */
    if (per_key && (res == GW_ACCESS_ALLOW || cfg->policy != NULL))
        res = GW_ACCESS_NEED_OBJECT;
    if (res == GW_ACCESS_DENY)
        return 0;
    if (w->source) {
        gw_access_config_ref(cfg);
        gw_access_config_unref(r->access_src_cfg);
        r->access_src_cfg = cfg;
        r->access_need_source = res == GW_ACCESS_NEED_OBJECT;
        r->access_src_cfg_fresh = fresh;
    } else {
        gw_access_config_ref(cfg);
        gw_access_config_unref(r->access_cfg);
        r->access_cfg = cfg;
        r->access_need_object = res == GW_ACCESS_NEED_OBJECT;
        r->access_cfg_fresh = fresh;
    }
    return 1;
}

struct gw_bucket_owner_ask {
    struct gw_req *r;
    gw_req_cb next;
    int source;
};

/* Decodes the record m of w's bucket, caches it and decides. */
static int gw_bucket_owner_allows_what(struct gw_req *r, const struct msg *m,
                                       const struct gw_bucket_owner_what *w)
{
    struct gw_bucket_meta bm;
    if (gw_bucket_meta_decode_record(&bm, m) != CN_OK) {
        CN_LOGR(CN_LOG_WARN, r->id, "bucket '%.*s': record meta unreadable: access denied",
                (int)w->blen, w->bucket);
        return 0;
    }
    char name[GW_BUCKET_NAME_MAX + 1];
    size_t bl = CN_MIN(w->blen, (size_t)GW_BUCKET_NAME_MAX);
    memcpy(name, w->bucket, bl);
    name[bl] = '\0';
    struct gw_access_config *cfg = gw_access_config_from_meta(&bm, name);
    gw_bucket_owner_cache_put(r->s3->owners, w->bucket, w->blen, cfg, cn_time_mono_us() / 1000);
    int ok = gw_bucket_owner_decide(r, cfg, w, 1);
    gw_access_config_unref(cfg);
    return ok;
}

int gw_bucket_owner_allows(struct gw_req *r, const struct msg *m)
{
    struct gw_bucket_owner_what w;
    gw_bucket_owner_what_of(r, 0, &w);
    return gw_bucket_owner_allows_what(r, m, &w);
}

int gw_bucket_owner_allows_source(struct gw_req *r, const struct msg *m)
{
    struct gw_bucket_owner_what w;
    gw_bucket_owner_what_of(r, 1, &w);
    return gw_bucket_owner_allows_what(r, m, &w);
}

int gw_bucket_owner_allows_upload(struct gw_req *r, const char *owner, size_t olen)
{
    const char *mine = r->auth.cred->owner_id;
    if (olen == 0 || (olen == strlen(mine) && memcmp(owner, mine, olen) == 0))
        return 1;
    CN_LOGR(CN_LOG_INFO, r->id, "access denied: upload belongs to another account");
    return 0;
}

enum gw_s3_err gw_bucket_owner_missing_key(struct gw_req *r)
{
    if (r->access_cfg == NULL)
        return GW_S3_NO_SUCH_KEY;   /* decided on no config: the owner's own request */
    if (
        gw_access_decide(r, r->access_cfg, "s3:ListBucket", r->bucket, r->bucket_len, NULL, 0,
                         0, NULL) == GW_ACCESS_ALLOW)
        return GW_S3_NO_SUCH_KEY;
    return GW_S3_ACCESS_DENIED;
}

static void gw_bucket_owner_on_head(struct gw_store_result *res, void *arg)
{
    struct gw_bucket_owner_ask *a = arg;
    struct gw_req *r = a->r;
    gw_req_cb next = a->next;
    int source = a->source;
    cn_free(a);
    if (!gw_req_release(r))
        return;
    r->owner_known_until_us = UINT64_MAX;   /* decided on what was just read */
    if (res->rc == CN_NOTFOUND) {
        if (!source) {
            /* no config: nothing to refresh again, and an object read
             * without a bucket (an orphan of a racing DeleteBucket) is
             * refused by gw_access_object_allows() */
            gw_access_config_unref(r->access_cfg);
            r->access_cfg = NULL;
            r->access_need_object = 1;
            r->access_cfg_fresh = 1;
        }
        next(r);   /* the handler answers NoSuchBucket */
        return;
    }
    if (res->rc != CN_OK) {
        gw_req_error(r, GW_S3_SERVICE_UNAVAILABLE, res->err);
        return;
    }
    struct gw_bucket_owner_what w;
    gw_bucket_owner_what_of(r, source, &w);
    if (gw_bucket_owner_allows_what(r, &res->reply->m, &w))
        next(r);
    else
        gw_req_error(r, GW_S3_ACCESS_DENIED, NULL);
}

/* The quorum HEAD of w's bucket record whose answer decides (on_head). */
static void gw_bucket_owner_ask(struct gw_req *r, const struct gw_bucket_owner_what *w,
                                gw_req_cb next)
{
    struct gw_bucket_owner_ask *a = cn_calloc(1, sizeof(*a));
    a->r = r;
    a->next = next;
    a->source = w->source;
    char key[GW_KEYS_MAX];
    size_t n = gw_keys_bucket(key, w->bucket, w->blen);
    gw_req_hold(r);
    gw_store_head(r->s3->store, key, n, gw_bucket_owner_on_head, a);
}

int gw_bucket_owner_recheck(struct gw_req *r, const char *bucket, size_t blen,
                            uint64_t record_ts_us, gw_req_cb next)
{
    if (record_ts_us <= r->owner_known_until_us)
        return 0;
    CN_LOGR(CN_LOG_DEBUG, r->id, "record newer than the cached config of '%.*s': looking again",
            (int)blen, bucket);
    struct gw_bucket_owner_what w;
    /* the only rechecks of a request with a copy source are of that source */
    int source = r->has_copy_src;
    gw_bucket_owner_what_of(r, source, &w);
    gw_bucket_owner_ask(r, &w, next);
    return 1;
}

/* The check of w (see gw_bucket_owner_check). */
static void gw_bucket_owner_check_what(struct gw_req *r, const struct gw_bucket_owner_what *w,
                                       gw_req_cb next)
{
    struct gw_access_config *cfg;
    if (w->blen == 0 || w->blen > GW_BUCKET_NAME_MAX) {
        r->owner_known_until_us = UINT64_MAX;
        next(r);   /* no bucket, or a name that cannot exist: the handler answers */
        return;
    }
    /* a cached config may let the request on; a refusal is never taken from
     * the cache (the bucket may have been deleted and re-created by the
     * caller since, or its configuration changed): it is looked up again */
    uint64_t learnt_us;
    if (gw_bucket_owner_cache_get(r->s3->owners, w->bucket, w->blen, cn_time_mono_us() / 1000,
                                  &cfg, &learnt_us) &&
        gw_bucket_owner_decide(r, cfg, w, 0)) {
        r->owner_known_until_us = learnt_us;
        next(r);
        return;
    }
    gw_bucket_owner_ask(r, w, next);
}

void gw_bucket_owner_check(struct gw_req *r, const char *bucket, size_t blen, gw_req_cb next)
{
    struct gw_bucket_owner_what w;
    gw_bucket_owner_what_of(r, 0, &w);
    w.bucket = bucket;
    w.blen = blen;
    gw_bucket_owner_check_what(r, &w, next);
}

int gw_bucket_owner_retry_denied(struct gw_req *r, int source, gw_req_cb next)
{
    if (source ? r->access_src_cfg_fresh : r->access_cfg_fresh)
        return 0;
    struct gw_bucket_owner_what w;
    gw_bucket_owner_what_of(r, source, &w);
    CN_LOGR(CN_LOG_DEBUG, r->id, "refused on a cached config of '%.*s': looking again",
            (int)w.blen, w.bucket);
    gw_bucket_owner_ask(r, &w, next);
    return 1;
}

void gw_bucket_owner_refresh(struct gw_req *r, gw_req_cb next)
{
    struct gw_bucket_owner_what w;
    gw_bucket_owner_what_of(r, 0, &w);
    gw_bucket_owner_ask(r, &w, next);
}

void gw_bucket_owner_check_source(struct gw_req *r, gw_req_cb next)
{
    struct gw_bucket_owner_what w;
    gw_bucket_owner_what_of(r, 1, &w);
    gw_bucket_owner_check_what(r, &w, next);
}
