/* LevelDB behind the storage node's index API (see index.h). */
#include "index.h"

#include <leveldb/c.h>
#include <stdio.h>
#include <string.h>

#include "cn/alloc.h"

struct sn_index {
    leveldb_t *db;
    leveldb_options_t *opts;
    leveldb_cache_t *cache;
    leveldb_filterpolicy_t *bloom;
    leveldb_readoptions_t *ropts;
    leveldb_writeoptions_t *wopts, *wopts_sync;
};

struct sn_index_batch {
    leveldb_writebatch_t *wb;
    uint8_t *kbuf;
    size_t kcap;
};

struct sn_index_iter {
    struct sn_index *ix;
    leveldb_readoptions_t *ropts;
    const leveldb_snapshot_t *snap;
    leveldb_iterator_t *it;
    uint8_t *kbuf;
    size_t kcap;
};

static void sn_index_err(char err[CN_ERR_LEN], const char *what, char *lerr)
{
    snprintf(err, CN_ERR_LEN, "leveldb %s: %s", what, lerr ? lerr : "?");
    leveldb_free(lerr);
}

static void sn_index_ckey(uint32_t cid, uint8_t out[5])
{
    out[0] = 'c';
    out[1] = (uint8_t)(cid >> 24);
    out[2] = (uint8_t)(cid >> 16);
    out[3] = (uint8_t)(cid >> 8);
    out[4] = (uint8_t)cid;
}

/* 'k' + key into *buf (grown as needed); returns the length. */
static size_t sn_index_okey(uint8_t **buf, size_t *cap, const uint8_t *key, uint32_t klen)
{
    if (*cap < (size_t)klen + 1) {
        *cap = (size_t)klen + 64;
        *buf = cn_realloc(*buf, *cap);
    }
    (*buf)[0] = 'k';
    if (klen)
        memcpy(*buf + 1, key, klen);
    return (size_t)klen + 1;
}

static int sn_index_put_format(struct sn_index *ix, char err[CN_ERR_LEN])
{
    char *lerr = NULL;
    uint8_t v[4];
    sn_put32(v, SN_INDEX_FORMAT);
    leveldb_put(ix->db, ix->wopts_sync, "f", 1, (const char *)v, 4, &lerr);
    if (lerr != NULL) {
        sn_index_err(err, "put format", lerr);
        return CN_IO;
    }
    return CN_OK;
}

/* Accepts SN_INDEX_FORMAT and format 1 (container values of 24 bytes, still
 * read by sn_index_get_container), which it marks as the current format so
 * that an older node, which would misread 40-byte values, refuses the index.
 * A new index gets the current format. */
static int sn_index_check_format(struct sn_index *ix, char err[CN_ERR_LEN])
{
    char *lerr = NULL;
    size_t vlen = 0;
    char *val = leveldb_get(ix->db, ix->ropts, "f", 1, &vlen, &lerr);
    if (lerr != NULL) {
        sn_index_err(err, "get format", lerr);
        return CN_IO;
    }
    if (val == NULL)
        return sn_index_put_format(ix, err);
    uint32_t f = vlen == 4 ? sn_get32((const uint8_t *)val) : 0;
    leveldb_free(val);
    if (f == 1 || f == 2)
        return sn_index_put_format(ix, err);
    if (f != SN_INDEX_FORMAT) {
        snprintf(err, CN_ERR_LEN, "index format is not 1, 2 or %d", SN_INDEX_FORMAT);
        return CN_CORRUPT;
    }
    return CN_OK;
}

int sn_index_open(const char *path, size_t cache_bytes, struct sn_index **out,
                  char err[CN_ERR_LEN])
{
    struct sn_index *ix = cn_calloc(1, sizeof(*ix));
    char *lerr = NULL;
    ix->opts = leveldb_options_create();
    ix->cache = leveldb_cache_create_lru(cache_bytes);
    ix->bloom = leveldb_filterpolicy_create_bloom(10);
    leveldb_options_set_create_if_missing(ix->opts, 1);
    leveldb_options_set_cache(ix->opts, ix->cache);
    leveldb_options_set_filter_policy(ix->opts, ix->bloom);
    leveldb_options_set_max_open_files(ix->opts, 256);
    ix->ropts = leveldb_readoptions_create();
    ix->wopts = leveldb_writeoptions_create();
    ix->wopts_sync = leveldb_writeoptions_create();
    leveldb_writeoptions_set_sync(ix->wopts_sync, 1);
    ix->db = leveldb_open(ix->opts, path, &lerr);
    if (lerr != NULL) {
        sn_index_err(err, "open", lerr);
        sn_index_close(ix);
        return CN_IO;
    }
    int rc = sn_index_check_format(ix, err);
    if (rc != CN_OK) {
        sn_index_close(ix);
        return rc;
    }
    *out = ix;
    return CN_OK;
}

void sn_index_close(struct sn_index *ix)
{
    if (ix == NULL)
        return;
    if (ix->db)
        leveldb_close(ix->db);
    leveldb_options_destroy(ix->opts);
    leveldb_cache_destroy(ix->cache);
    leveldb_filterpolicy_destroy(ix->bloom);
    leveldb_readoptions_destroy(ix->ropts);
    leveldb_writeoptions_destroy(ix->wopts);
    leveldb_writeoptions_destroy(ix->wopts_sync);
    cn_free(ix);
}

/* Value layout (little-endian): u8 format 1, u8 flags, u8 etag_len, u8 ext,
 * u32 cid, u64 off, u32 hdr_len, u64 data_len, u64 ver, u64 ts, etag, then,
 * when ext bit 0 is set, u64 osize; ext bit 1: the etag bytes are the
 * record's owner (ext was always 0 before index format 3, so an older entry
 * reads as one without either). */
#define SN_IVAL_EXT_OSIZE 0x1u
#define SN_IVAL_EXT_OWNER 0x2u
size_t sn_index_encode_val(const struct sn_ival *v, uint8_t *out)
{
    CN_ASSERT(v->etag_len <= SN_RECORD_MAX_ETAG);
    out[0] = 1;
    out[1] = (uint8_t)v->flags;
    out[2] = (uint8_t)v->etag_len;
    out[3] = (uint8_t)((v->has_osize ? SN_IVAL_EXT_OSIZE : 0) |
                       (v->has_owner ? SN_IVAL_EXT_OWNER : 0));
    sn_put32(out + 4, v->cid);
    sn_put64(out + 8, v->off);
    sn_put32(out + 16, v->hdr_len);
    sn_put64(out + 20, v->data_len);
    sn_put64(out + 28, v->ver);
    sn_put64(out + 36, v->ts);
    memcpy(out + SN_IVAL_FIXED, v->etag, v->etag_len);
    if (!v->has_osize)
        return SN_IVAL_FIXED + v->etag_len;
    sn_put64(out + SN_IVAL_FIXED + v->etag_len, v->osize);
    return SN_IVAL_FIXED + v->etag_len + SN_RECORD_OSIZE_LEN;
}

int sn_index_decode_val(const uint8_t *p, size_t len, struct sn_ival *v)
{
    if (len < SN_IVAL_FIXED || p[0] != 1 ||
        (p[3] & ~(SN_IVAL_EXT_OSIZE | SN_IVAL_EXT_OWNER)) != 0)
        return CN_CORRUPT;
    size_t ext = (p[3] & SN_IVAL_EXT_OSIZE) ? SN_RECORD_OSIZE_LEN : 0;
    if (len != SN_IVAL_FIXED + (size_t)p[2] + ext)
        return CN_CORRUPT;
    v->flags = p[1];
    v->etag_len = p[2];
    v->cid = sn_get32(p + 4);
    v->off = sn_get64(p + 8);
    v->hdr_len = sn_get32(p + 16);
    v->data_len = sn_get64(p + 20);
    v->ver = sn_get64(p + 28);
    v->ts = sn_get64(p + 36);
    memcpy(v->etag, p + SN_IVAL_FIXED, v->etag_len);
    v->has_osize = ext != 0;
    v->has_owner = (p[3] & SN_IVAL_EXT_OWNER) != 0;
    v->osize = ext ? sn_get64(p + SN_IVAL_FIXED + v->etag_len) : 0;
    return CN_OK;
}

int sn_index_get(struct sn_index *ix, const uint8_t *key, uint32_t klen, struct sn_ival *v,
                 char err[CN_ERR_LEN])
{
    uint8_t stackbuf[512], *kb = stackbuf;
    size_t cap = sizeof(stackbuf), vlen = 0;
    uint8_t *heap = NULL;
    if ((size_t)klen + 1 > cap) {
        heap = NULL;
        cap = 0;
        sn_index_okey(&heap, &cap, key, klen);
        kb = heap;
    } else {
        sn_index_okey(&kb, &cap, key, klen);
    }
    char *lerr = NULL;
    char *val = leveldb_get(ix->db, ix->ropts, (const char *)kb, (size_t)klen + 1, &vlen, &lerr);
    cn_free(heap);
    if (lerr != NULL) {
        sn_index_err(err, "get", lerr);
        return CN_IO;
    }
    if (val == NULL)
        return CN_NOTFOUND;
    int rc = sn_index_decode_val((const uint8_t *)val, vlen, v);
    leveldb_free(val);
    if (rc != CN_OK)
        snprintf(err, CN_ERR_LEN, "index value of %u-byte key undecodable", klen);
    return rc;
}

int sn_index_get_container(struct sn_index *ix, uint32_t cid, struct sn_index_cacct *a)
{
    uint8_t k[5];
    char *lerr = NULL;
    size_t vlen = 0;
    sn_index_ckey(cid, k);
    char *val = leveldb_get(ix->db, ix->ropts, (const char *)k, sizeof(k), &vlen, &lerr);
    if (lerr != NULL) {
        leveldb_free(lerr);
        return CN_IO;
    }
    if (val == NULL)
        return CN_NOTFOUND;
    int rc = CN_CORRUPT;
    if (vlen == 24 || vlen == 40) {
        const uint8_t *p = (const uint8_t *)val;
        memset(a, 0, sizeof(*a));
        a->indexed_upto = sn_get64(p);
        a->live_bytes = sn_get64(p + 8);
        a->live_records = sn_get64(p + 16);
        if (vlen == 40) {
            a->live_tombstones = sn_get64(p + 24);
            a->tombstone_bytes = sn_get64(p + 32);
            a->tombstones_known = 1;
        }
        rc = CN_OK;
    }
    leveldb_free(val);
    return rc;
}

struct sn_index_batch *sn_index_batch_new(void)
{
    struct sn_index_batch *b = cn_calloc(1, sizeof(*b));
    b->wb = leveldb_writebatch_create();
    return b;
}

void sn_index_batch_free(struct sn_index_batch *b)
{
    if (b == NULL)
        return;
    leveldb_writebatch_destroy(b->wb);
    cn_free(b->kbuf);
    cn_free(b);
}

void sn_index_batch_clear(struct sn_index_batch *b)
{
    leveldb_writebatch_clear(b->wb);
}

void sn_index_batch_put(struct sn_index_batch *b, const uint8_t *key, uint32_t klen,
                        const struct sn_ival *v)
{
    uint8_t val[SN_IVAL_MAX];
    size_t n = sn_index_okey(&b->kbuf, &b->kcap, key, klen);
    size_t vn = sn_index_encode_val(v, val);
    leveldb_writebatch_put(b->wb, (const char *)b->kbuf, n, (const char *)val, vn);
}

void sn_index_batch_del(struct sn_index_batch *b, const uint8_t *key, uint32_t klen)
{
    size_t n = sn_index_okey(&b->kbuf, &b->kcap, key, klen);
    leveldb_writebatch_delete(b->wb, (const char *)b->kbuf, n);
}

void sn_index_batch_put_container(struct sn_index_batch *b, uint32_t cid,
                                  const struct sn_index_cacct *a)
{
    uint8_t k[5], v[40];
    sn_index_ckey(cid, k);
    sn_put64(v, a->indexed_upto);
    sn_put64(v + 8, a->live_bytes);
    sn_put64(v + 16, a->live_records);
    sn_put64(v + 24, a->live_tombstones);
    sn_put64(v + 32, a->tombstone_bytes);
    leveldb_writebatch_put(b->wb, (const char *)k, sizeof(k), (const char *)v, sizeof(v));
}

void sn_index_batch_del_container(struct sn_index_batch *b, uint32_t cid)
{
    uint8_t k[5];
    sn_index_ckey(cid, k);
    leveldb_writebatch_delete(b->wb, (const char *)k, sizeof(k));
}

int sn_index_write(struct sn_index *ix, struct sn_index_batch *b, int sync,
                   char err[CN_ERR_LEN])
{
    char *lerr = NULL;
    leveldb_write(ix->db, sync ? ix->wopts_sync : ix->wopts, b->wb, &lerr);
    if (lerr != NULL) {
        sn_index_err(err, "write", lerr);
        return CN_IO;
    }
    return CN_OK;
}

struct sn_index_iter *sn_index_iter_new(struct sn_index *ix)
{
    struct sn_index_iter *it = cn_calloc(1, sizeof(*it));
    it->ix = ix;
    it->snap = leveldb_create_snapshot(ix->db);
    it->ropts = leveldb_readoptions_create();
    leveldb_readoptions_set_snapshot(it->ropts, it->snap);
    leveldb_readoptions_set_fill_cache(it->ropts, 0);
    it->it = leveldb_create_iterator(ix->db, it->ropts);
    return it;
}

void sn_index_iter_free(struct sn_index_iter *it)
{
    if (it == NULL)
        return;
    leveldb_iter_destroy(it->it);
    leveldb_readoptions_destroy(it->ropts);
    leveldb_release_snapshot(it->ix->db, it->snap);
    cn_free(it->kbuf);
    cn_free(it);
}

void sn_index_iter_seek(struct sn_index_iter *it, const uint8_t *key, uint32_t klen)
{
    size_t n = sn_index_okey(&it->kbuf, &it->kcap, key, klen);
    leveldb_iter_seek(it->it, (const char *)it->kbuf, n);
}

int sn_index_iter_get(struct sn_index_iter *it, const uint8_t **key, uint32_t *klen,
                      struct sn_ival *v)
{
    if (!leveldb_iter_valid(it->it))
        return CN_DONE;
    size_t kn = 0, vn = 0;
    const char *k = leveldb_iter_key(it->it, &kn);
    if (kn < 1 || k[0] != 'k')
        return CN_DONE;
    const char *val = leveldb_iter_value(it->it, &vn);
    *key = (const uint8_t *)k + 1;
    *klen = (uint32_t)(kn - 1);
    return sn_index_decode_val((const uint8_t *)val, vn, v);
}

void sn_index_iter_next(struct sn_index_iter *it)
{
    leveldb_iter_next(it->it);
}

/* ---- the hint keyspace ---- */

int sn_index_raw_get(struct sn_index *ix, const uint8_t *k, size_t klen, uint8_t *val,
                     size_t cap, size_t *vlen, char err[CN_ERR_LEN])
{
    CN_ASSERT(klen >= 1 && k[0] == SN_INDEX_HINT_PREFIX);
    char *lerr = NULL;
    size_t n = 0;
    char *v = leveldb_get(ix->db, ix->ropts, (const char *)k, klen, &n, &lerr);
    if (lerr != NULL) {
        sn_index_err(err, "get", lerr);
        return CN_IO;
    }
    if (v == NULL)
        return CN_NOTFOUND;
    int rc = n <= cap ? CN_OK : CN_CORRUPT;
    if (rc == CN_OK) {
        memcpy(val, v, n);
        *vlen = n;
    } else {
        snprintf(err, CN_ERR_LEN, "hint value of %zu bytes is over %zu", n, cap);
    }
    leveldb_free(v);
    return rc;
}

void sn_index_batch_put_raw(struct sn_index_batch *b, const uint8_t *k, size_t klen,
                            const uint8_t *v, size_t vlen)
{
    CN_ASSERT(klen >= 1 && k[0] == SN_INDEX_HINT_PREFIX);
    leveldb_writebatch_put(b->wb, (const char *)k, klen, (const char *)v, vlen);
}

void sn_index_batch_del_raw(struct sn_index_batch *b, const uint8_t *k, size_t klen)
{
    CN_ASSERT(klen >= 1 && k[0] == SN_INDEX_HINT_PREFIX);
    leveldb_writebatch_delete(b->wb, (const char *)k, klen);
}

void sn_index_iter_seek_raw(struct sn_index_iter *it, const uint8_t *k, size_t klen)
{
    CN_ASSERT(klen >= 1 && k[0] == SN_INDEX_HINT_PREFIX);
    leveldb_iter_seek(it->it, (const char *)k, klen);
}

int sn_index_iter_get_raw(struct sn_index_iter *it, const uint8_t **k, size_t *klen,
                          const uint8_t **v, size_t *vlen)
{
    if (!leveldb_iter_valid(it->it))
        return CN_DONE;
    const char *key = leveldb_iter_key(it->it, klen);
    if (*klen < 1 || key[0] != SN_INDEX_HINT_PREFIX)
        return CN_DONE;
    *k = (const uint8_t *)key;
    *v = (const uint8_t *)leveldb_iter_value(it->it, vlen);
    return CN_OK;
}
