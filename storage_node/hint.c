/* The node's hint store (see hint.h). One mutex orders the read-then-write of
 * an add or a removal and the counts; the fsync that makes an added hint
 * durable runs after the mutex is released (a synced empty LevelDB write:
 * concurrent ones share one log sync), so I/O threads adding hints at once
 * are not serialised behind each other's fsync. */
#include "hint.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/time.h"
#include "cn/version.h"
#include "record.h"

struct sn_hints {
    struct sn_index *ix;
    struct sn_hint_opts o;
    pthread_mutex_t lock;
    struct sn_hint_target *targets;   /* those with hints held (count > 0) */
    uint32_t n_targets;
    struct sn_hint_stats st;
};

_Static_assert(SN_HINT_KEY_MAX >= 2u + SN_HINT_MAX_TARGET + SN_RECORD_MAX_KEY,
               "SN_HINT_KEY_MAX holds the longest key");

size_t sn_hint_key_encode(uint8_t *out, const uint8_t *target, uint32_t tlen,
                          const uint8_t *key, uint32_t klen)
{
    CN_ASSERT(tlen >= 1 && tlen <= SN_HINT_MAX_TARGET && klen <= SN_RECORD_MAX_KEY);
    out[0] = SN_INDEX_HINT_PREFIX;
    out[1] = (uint8_t)tlen;
    memcpy(out + 2, target, tlen);
    if (klen > 0)
        memcpy(out + 2 + tlen, key, klen);
    return 2u + tlen + klen;
}

int sn_hint_key_parse(const uint8_t *k, size_t klen, const uint8_t **target, uint32_t *tlen,
                      const uint8_t **key, uint32_t *keylen)
{
    if (klen < 4 || k[0] != SN_INDEX_HINT_PREFIX || k[1] == 0 || (size_t)k[1] + 2 >= klen ||
        klen - 2 - k[1] > SN_RECORD_MAX_KEY)
        return CN_CORRUPT;
    *target = k + 2;
    *tlen = k[1];
    *key = k + 2 + k[1];
    *keylen = (uint32_t)(klen - 2 - k[1]);
    return CN_OK;
}

int sn_hint_val_parse(const uint8_t *v, size_t vlen, uint64_t *ts, uint64_t *ver,
                      uint64_t *added_us)
{
    if (vlen != SN_HINT_VAL_LEN)
        return CN_CORRUPT;
    *ts = sn_get64(v);
    *ver = sn_get64(v + 8);
    *added_us = sn_get64(v + 16);
    return CN_OK;
}

static int sn_hint_args_ok(uint32_t tlen, uint32_t klen)
{
    return tlen >= 1 && tlen <= SN_HINT_MAX_TARGET && klen >= 1 && klen <= SN_RECORD_MAX_KEY;
}

/* The entry of target, or NULL (create: add one when there is room). */
static struct sn_hint_target *sn_hints_target_locked(struct sn_hints *h, const uint8_t *target,
                                                     uint32_t tlen, int create)
{
    for (uint32_t i = 0; i < h->n_targets; i++)
        if (h->targets[i].id_len == tlen && memcmp(h->targets[i].id, target, tlen) == 0)
            return &h->targets[i];
    if (!create || h->n_targets == SN_HINT_MAX_TARGETS)
        return NULL;
    struct sn_hint_target *t = &h->targets[h->n_targets++];
    memset(t, 0, sizeof(*t));
    memcpy(t->id, target, tlen);
    t->id_len = tlen;
    return t;
}

/* Takes n hints of bytes away from t, forgetting t when it holds none. */
static void sn_hints_account_del_locked(struct sn_hints *h, struct sn_hint_target *t,
                                        uint64_t bytes)
{
    t->count--;
    t->bytes -= bytes;
    h->st.held--;
    h->st.bytes -= bytes;
    if (t->count == 0) {
        *t = h->targets[h->n_targets - 1];
        h->n_targets--;
    }
}

/* Counts the hints held; deletes entries that do not parse. */
static int sn_hints_load(struct sn_hints *h, char err[CN_ERR_LEN])
{
    struct sn_index_iter *it = sn_index_iter_new(h->ix);
    struct sn_index_batch *bad = sn_index_batch_new();
    uint8_t first = SN_INDEX_HINT_PREFIX;
    const uint8_t *k, *v;
    size_t kl, vl;
    uint64_t n_bad = 0;
    for (sn_index_iter_seek_raw(it, &first, 1); sn_index_iter_get_raw(it, &k, &kl, &v, &vl) ==
                                                CN_OK; sn_index_iter_next(it)) {
        const uint8_t *target, *key;
        uint32_t tlen, klen;
        uint64_t ts, ver, added;
        struct sn_hint_target *t = NULL;
        if (sn_hint_key_parse(k, kl, &target, &tlen, &key, &klen) == CN_OK &&
            sn_hint_val_parse(v, vl, &ts, &ver, &added) == CN_OK)
            t = sn_hints_target_locked(h, target, tlen, 1);
        if (t == NULL) {
            sn_index_batch_del_raw(bad, k, kl);
            n_bad++;
            continue;
        }
        t->count++;
        t->bytes += kl + vl;
        h->st.held++;
        h->st.bytes += kl + vl;
    }
    sn_index_iter_free(it);
    int rc = n_bad > 0 ? sn_index_write(h->ix, bad, 1, err) : CN_OK;
    sn_index_batch_free(bad);
    h->st.dropped_corrupt = n_bad;
    return rc;
}

int sn_hints_open(struct sn_index *ix, const struct sn_hint_opts *o, struct sn_hints **out,
                  char err[CN_ERR_LEN])
{
    struct sn_hints *h = cn_calloc(1, sizeof(*h));
    h->ix = ix;
    h->o = *o;
    pthread_mutex_init(&h->lock, NULL);
    h->targets = cn_calloc(SN_HINT_MAX_TARGETS, sizeof(*h->targets));
    *out = NULL;
    int rc = sn_hints_load(h, err);
    if (rc != CN_OK) {
        sn_hints_free(h);
        return rc;
    }
    *out = h;
    return CN_OK;
}

void sn_hints_free(struct sn_hints *h)
{
    if (h == NULL)
        return;
    pthread_mutex_destroy(&h->lock);
    cn_free(h->targets);
    cn_free(h);
}

/* Makes the writes before it durable (a synced empty batch syncs LevelDB's log). */
static int sn_hints_sync(struct sn_hints *h, char err[CN_ERR_LEN])
{
    struct sn_index_batch *b = sn_index_batch_new();
    int rc = sn_index_write(h->ix, b, 1, err);
    sn_index_batch_free(b);
    return rc;
}

/* The add under the lock: decides, writes (unsynced) and counts. */
static int sn_hints_add_locked(struct sn_hints *h, const uint8_t *hk, size_t hkl,
                               const uint8_t *target, uint32_t tlen, uint64_t ts, uint64_t ver,
                               int *applied, char err[CN_ERR_LEN])
{
    uint8_t val[SN_HINT_VAL_LEN];
    size_t vl = 0;
    uint64_t cur_ts, cur_ver, added;
    int rc = sn_index_raw_get(h->ix, hk, hkl, val, sizeof(val), &vl, err);
    if (rc != CN_OK && rc != CN_NOTFOUND)
        return rc;
    int found = rc == CN_OK && sn_hint_val_parse(val, vl, &cur_ts, &cur_ver, &added) == CN_OK;
    if (found && !cn_version_newer(ts, ver, cur_ts, cur_ver))
        return CN_OK;
    uint64_t bytes = hkl + SN_HINT_VAL_LEN;
    struct sn_hint_target *t = NULL;
    if (!found) {
        if (h->st.held >= h->o.max_hints || h->st.bytes + bytes > h->o.max_bytes ||
            (t = sn_hints_target_locked(h, target, tlen, 1)) == NULL) {
            h->st.refused++;
            snprintf(err, CN_ERR_LEN, "hint store full (%llu hints, %llu bytes held)",
                     (unsigned long long)h->st.held, (unsigned long long)h->st.bytes);
            return CN_TOOBIG;
        }
        added = cn_time_now_us();
    }
    sn_put64(val, ts);
    sn_put64(val + 8, ver);
    sn_put64(val + 16, added);
    struct sn_index_batch *b = sn_index_batch_new();
    sn_index_batch_put_raw(b, hk, hkl, val, sizeof(val));
    rc = sn_index_write(h->ix, b, 0, err);
    sn_index_batch_free(b);
    if (rc != CN_OK) {
        if (t != NULL && t->count == 0)   /* made for this hint: forget it */
            *t = h->targets[--h->n_targets];
        return rc;
    }
    *applied = 1;
    if (found) {
        h->st.updated++;
        return CN_OK;
    }
    t->count++;
    t->bytes += bytes;
    h->st.held++;
    h->st.bytes += bytes;
    h->st.added++;
    return CN_OK;
}

int sn_hints_add(struct sn_hints *h, const uint8_t *target, uint32_t tlen, const uint8_t *key,
                 uint32_t klen, uint64_t ts, uint64_t ver, int *applied, char err[CN_ERR_LEN])
{
    uint8_t hk[SN_HINT_KEY_MAX];
    *applied = 0;
    if (!sn_hint_args_ok(tlen, klen)) {
        snprintf(err, CN_ERR_LEN, "hint target must be 1 to %u bytes and key 1 to %u",
                 SN_HINT_MAX_TARGET, SN_RECORD_MAX_KEY);
        return CN_INVAL;
    }
    size_t hkl = sn_hint_key_encode(hk, target, tlen, key, klen);
    pthread_mutex_lock(&h->lock);
    int rc = sn_hints_add_locked(h, hk, hkl, target, tlen, ts, ver, applied, err);
    pthread_mutex_unlock(&h->lock);
    if (rc == CN_OK && *applied && h->o.sync)
        rc = sn_hints_sync(h, err);
    return rc;
}

int sn_hints_remove(struct sn_hints *h, const uint8_t *target, uint32_t tlen,
                    const uint8_t *key, uint32_t klen, uint64_t ts, uint64_t ver, int *removed,
                    char err[CN_ERR_LEN])
{
    uint8_t hk[SN_HINT_KEY_MAX], val[SN_HINT_VAL_LEN];
    size_t vl = 0;
    uint64_t cur_ts, cur_ver, added;
    *removed = 0;
    if (!sn_hint_args_ok(tlen, klen)) {
        snprintf(err, CN_ERR_LEN, "hint target must be 1 to %u bytes and key 1 to %u",
                 SN_HINT_MAX_TARGET, SN_RECORD_MAX_KEY);
        return CN_INVAL;
    }
    size_t hkl = sn_hint_key_encode(hk, target, tlen, key, klen);
    pthread_mutex_lock(&h->lock);
    int rc = sn_index_raw_get(h->ix, hk, hkl, val, sizeof(val), &vl, err);
    if (rc == CN_OK && sn_hint_val_parse(val, vl, &cur_ts, &cur_ver, &added) == CN_OK &&
        !cn_version_newer(cur_ts, cur_ver, ts, ver)) {
        struct sn_index_batch *b = sn_index_batch_new();
        sn_index_batch_del_raw(b, hk, hkl);
        rc = sn_index_write(h->ix, b, 0, err);
        sn_index_batch_free(b);
        struct sn_hint_target *t = sn_hints_target_locked(h, target, tlen, 0);
        if (rc == CN_OK && t != NULL) {
            sn_hints_account_del_locked(h, t, hkl + vl);
            h->st.removed++;
            *removed = 1;
        }
    } else if (rc == CN_NOTFOUND || rc == CN_OK) {
        rc = CN_OK;   /* gone (another gateway replayed it) or newer: kept */
    }
    pthread_mutex_unlock(&h->lock);
    return rc;
}

int sn_hints_list(struct sn_hints *h, const uint8_t *target, uint32_t tlen,
                  const uint8_t *after, uint32_t alen, uint32_t limit, sn_hint_list_cb cb,
                  void *arg, int *more, char err[CN_ERR_LEN])
{
    uint8_t hk[SN_HINT_KEY_MAX];
    *more = 0;
    if (tlen < 1 || tlen > SN_HINT_MAX_TARGET || alen > SN_RECORD_MAX_KEY) {
        snprintf(err, CN_ERR_LEN, "hint target must be 1 to %u bytes", SN_HINT_MAX_TARGET);
        return CN_INVAL;
    }
    size_t prefix = sn_hint_key_encode(hk, target, tlen, NULL, 0);
    size_t seek = sn_hint_key_encode(hk, target, tlen, after, alen);
    struct sn_index_iter *it = sn_index_iter_new(h->ix);
    const uint8_t *k, *v;
    size_t kl, vl;
    uint32_t n = 0;
    for (sn_index_iter_seek_raw(it, hk, seek);
         sn_index_iter_get_raw(it, &k, &kl, &v, &vl) == CN_OK; sn_index_iter_next(it)) {
        const uint8_t *t, *key;
        uint32_t tl, keylen;
        uint64_t ts, ver, added;
        if (kl < prefix || memcmp(k, hk, prefix) != 0)
            break;
        if (sn_hint_key_parse(k, kl, &t, &tl, &key, &keylen) != CN_OK ||
            sn_hint_val_parse(v, vl, &ts, &ver, &added) != CN_OK)
            continue;
        if (alen > 0 && keylen == alen && memcmp(key, after, alen) == 0)
            continue;   /* strictly after */
        if (n == limit) {
            *more = 1;
            break;
        }
        n++;
        cb(arg, key, keylen, ts, ver);
    }
    sn_index_iter_free(it);
    return CN_OK;
}

uint32_t sn_hints_target_count(struct sn_hints *h)
{
    pthread_mutex_lock(&h->lock);
    uint32_t n = h->n_targets;
    pthread_mutex_unlock(&h->lock);
    return n;
}

uint32_t sn_hints_targets(struct sn_hints *h, struct sn_hint_target *out, uint32_t max)
{
    pthread_mutex_lock(&h->lock);
    uint32_t n = CN_MIN(max, h->n_targets);
    memcpy(out, h->targets, n * sizeof(*out));
    pthread_mutex_unlock(&h->lock);
    return n;
}

void sn_hints_stats(struct sn_hints *h, struct sn_hint_stats *st)
{
    pthread_mutex_lock(&h->lock);
    *st = h->st;
    pthread_mutex_unlock(&h->lock);
}

int sn_hints_validate(struct sn_hints *h)
{
    struct sn_index_iter *it = sn_index_iter_new(h->ix);
    uint8_t first = SN_INDEX_HINT_PREFIX;
    const uint8_t *k, *v;
    size_t kl, vl;
    uint64_t n = 0, bytes = 0, per_target = 0;
    pthread_mutex_lock(&h->lock);
    for (sn_index_iter_seek_raw(it, &first, 1); sn_index_iter_get_raw(it, &k, &kl, &v, &vl) ==
                                                CN_OK; sn_index_iter_next(it)) {
        n++;
        bytes += kl + vl;
    }
    for (uint32_t i = 0; i < h->n_targets; i++)
        per_target += h->targets[i].count;
    int rc = n == h->st.held && bytes == h->st.bytes && per_target == n ? CN_OK : CN_CORRUPT;
    pthread_mutex_unlock(&h->lock);
    sn_index_iter_free(it);
    return rc;
}
