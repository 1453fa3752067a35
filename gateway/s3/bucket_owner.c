/* Bucket ownership checks and the per-worker owner cache (bucket_owner.h). */
#include "bucket_owner.h"

#include <stdio.h>
#include <string.h>

#include "keys.h"
#include "s3_error.h"
#include "store.h"

#include "cn/alloc.h"
#include "cn/log.h"
#include "cn/time.h"

struct gw_bucket_owner_slot {
    uint64_t at_ms;   /* when it was learnt (monotonic); 0: empty */
    uint64_t at_wall_us; /* the same instant on the wall clock (record ts scale) */
    uint8_t blen;
    char bucket[GW_BUCKET_NAME_MAX + 1];
    char owner[GW_OWNER_ID_MAX + 1];
};

struct gw_bucket_owner_cache {
    uint64_t ttl_ms;
    struct gw_bucket_owner_slot slots[GW_BUCKET_OWNER_SLOTS];
};

struct gw_bucket_owner_cache *gw_bucket_owner_cache_new(uint64_t ttl_ms)
{
    struct gw_bucket_owner_cache *c = cn_calloc(1, sizeof(*c));
    c->ttl_ms = ttl_ms;
    return c;
}

void gw_bucket_owner_cache_free(struct gw_bucket_owner_cache *c)
{
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
                              uint64_t now_ms, const char **owner, uint64_t *learnt_wall_us)
{
    if (c->ttl_ms == 0 || blen > GW_BUCKET_NAME_MAX)
        return 0;
    struct gw_bucket_owner_slot *s = gw_bucket_owner_slot(c, bucket, blen);
    if (s->at_ms == 0 || s->blen != blen || memcmp(s->bucket, bucket, blen) != 0 ||
        now_ms - s->at_ms >= c->ttl_ms)
        return 0;
    *owner = s->owner;
    *learnt_wall_us = s->at_wall_us;
    return 1;
}

void gw_bucket_owner_cache_put(struct gw_bucket_owner_cache *c, const char *bucket, size_t blen,
                               const char *owner, size_t olen, uint64_t now_ms)
{
    if (c->ttl_ms == 0 || blen > GW_BUCKET_NAME_MAX || olen > GW_OWNER_ID_MAX)
        return;
    struct gw_bucket_owner_slot *s = gw_bucket_owner_slot(c, bucket, blen);
    s->at_ms = now_ms > 0 ? now_ms : 1;
    s->at_wall_us = cn_time_now_us();
    s->blen = (uint8_t)blen;
    memcpy(s->bucket, bucket, blen);
    s->bucket[blen] = '\0';
    memcpy(s->owner, owner, olen);
    s->owner[olen] = '\0';
}

void gw_bucket_owner_cache_drop(struct gw_bucket_owner_cache *c, const char *bucket, size_t blen)
{
    if (blen > GW_BUCKET_NAME_MAX)
        return;
    struct gw_bucket_owner_slot *s = gw_bucket_owner_slot(c, bucket, blen);
    if (s->blen == blen && memcmp(s->bucket, bucket, blen) == 0)
        s->at_ms = 0;
}

/* ---- the check ---- */

struct gw_bucket_owner_ask {
    struct gw_req *r;
    gw_req_cb next;
    size_t blen;
    char bucket[GW_BUCKET_NAME_MAX + 1];
};

/* 1 when owner[olen] is r's credential's owner. */
static int gw_bucket_owner_is_mine(const struct gw_req *r, const char *owner, size_t olen)
{
    const char *mine = r->auth.cred->owner_id;
    return olen == strlen(mine) && memcmp(owner, mine, olen) == 0;
}

int gw_bucket_owner_allows(struct gw_req *r, const char *bucket, size_t blen, const char *owner,
                           size_t olen)
{
    gw_bucket_owner_cache_put(r->s3->owners, bucket, blen, owner, olen,
                              cn_time_mono_us() / 1000);
    if (gw_bucket_owner_is_mine(r, owner, olen))
        return 1;
    CN_LOGR(CN_LOG_INFO, r->id, "access denied: bucket '%.*s' belongs to another account",
            (int)blen, bucket);
    return 0;
}

int gw_bucket_owner_allows_upload(struct gw_req *r, const char *owner, size_t olen)
{
    if (olen == 0 || gw_bucket_owner_is_mine(r, owner, olen))
        return 1;
    CN_LOGR(CN_LOG_INFO, r->id, "access denied: upload belongs to another account");
    return 0;
}

static void gw_bucket_owner_on_head(struct gw_store_result *res, void *arg)
{
    struct gw_bucket_owner_ask *a = arg;
    struct gw_req *r = a->r;
    gw_req_cb next = a->next;
    if (!gw_req_release(r)) {
        cn_free(a);
        return;
    }
    r->owner_known_until_us = UINT64_MAX;   /* decided on what was just read */
    if (res->rc == CN_NOTFOUND) {
        cn_free(a);
        next(r);   /* the handler answers NoSuchBucket */
        return;
    }
    if (res->rc != CN_OK) {
        cn_free(a);
        gw_req_error(r, GW_S3_SERVICE_UNAVAILABLE, res->err);
        return;
    }
    const struct msg_bytes *etag = &res->reply->m.etag;
    int ok = gw_bucket_owner_allows(r, a->bucket, a->blen, (const char *)etag->ptr, etag->len);
    cn_free(a);
    if (ok)
        next(r);
    else
        gw_req_error(r, GW_S3_ACCESS_DENIED, NULL);
}

/* The quorum HEAD of bucket's record whose answer decides (on_head). */
static void gw_bucket_owner_ask(struct gw_req *r, const char *bucket, size_t blen,
                                gw_req_cb next)
{
    struct gw_bucket_owner_ask *a = cn_calloc(1, sizeof(*a));
    a->r = r;
    a->next = next;
    a->blen = blen;
    memcpy(a->bucket, bucket, blen);
    char key[GW_KEYS_MAX];
    size_t n = gw_keys_bucket(key, bucket, blen);
    gw_req_hold(r);
    gw_store_head(r->s3->store, key, n, gw_bucket_owner_on_head, a);
}

int gw_bucket_owner_recheck(struct gw_req *r, const char *bucket, size_t blen,
                            uint64_t record_ts_us, gw_req_cb next)
{
    if (record_ts_us <= r->owner_known_until_us)
        return 0;
    CN_LOGR(CN_LOG_DEBUG, r->id, "record newer than the cached owner of '%.*s': looking again",
            (int)blen, bucket);
    gw_bucket_owner_ask(r, bucket, blen, next);
    return 1;
}

void gw_bucket_owner_check(struct gw_req *r, const char *bucket, size_t blen, gw_req_cb next)
{
    const char *owner;
    if (blen == 0 || blen > GW_BUCKET_NAME_MAX) {
        r->owner_known_until_us = UINT64_MAX;
        next(r);   /* no bucket, or a name that cannot exist: the handler answers */
        return;
    }
    /* a cached owner may let the request on; a refusal is never taken from
     * the cache (the bucket may have been deleted and re-created by the
     * caller since): it is looked up again */
    uint64_t learnt_us;
    if (gw_bucket_owner_cache_get(r->s3->owners, bucket, blen, cn_time_mono_us() / 1000,
                                  &owner, &learnt_us) &&
        gw_bucket_owner_is_mine(r, owner, strlen(owner))) {
        r->owner_known_until_us = learnt_us;
        next(r);
        return;
    }
    gw_bucket_owner_ask(r, bucket, blen, next);
}
