/* The storage engine (see store.h): opening and recovery, the container
 * table, verified reads of whole records or slices, listing and accounting.
 * It does not log: what recovery repairs is kept as notes (sn_store_notes)
 * for the daemon to log.
 * Writes go through writer.c; compaction and scrub live in compact.c and
 * scrub.c. */
#include "store_priv.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cn/alloc.h"
#include "cn/crc.h"
#include "cn/hex.h"
#include "cn/version.h"

void sn_store_opts_default(struct sn_store_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->sync_mode = SN_SYNC_WRITETHROUGH;
    o->sync_interval_ms = 1000;
    o->max_container_len = 1ull << 30;
    o->dead_ratio_pct = 50;
    o->tombstone_gc_after_ms = 10ull * 24 * 3600 * 1000;
    o->index_cache = 8u << 20;
    o->max_batch = 512;
    o->max_batch_bytes = 256ull << 20;
    o->read_mmap = 1;
    o->compact_min_dead_bytes = 1u << 20;
    o->compact_max_rate = 32u << 20;
}

void sn_store_key_str(const uint8_t *key, uint32_t klen, char *out, size_t outlen)
{
    size_t o = 0;
    CN_ASSERT(outlen >= 8);
    for (uint32_t i = 0; i < klen; i++) {
        if (o + 4 + 4 >= outlen) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        uint8_t ch = key[i];
        if (ch > 0x20 && ch < 0x7f && ch != '\\') {
            out[o++] = (char)ch;
        } else {
            out[o++] = '\\';
            out[o++] = 'x';
            cn_hex_byte(ch, out + o);
            o += 2;
        }
    }
    out[o] = '\0';
}

/* ---- the container table ---- */

static size_t sn_store_container_pos_locked(struct sn_store *s, uint32_t cid)
{
    size_t lo = 0, hi = s->n_cons;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->cons[mid]->id < cid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct sn_container *sn_store_container_find_locked(struct sn_store *s, uint32_t cid)
{
    size_t i = sn_store_container_pos_locked(s, cid);
    return i < s->n_cons && s->cons[i]->id == cid ? s->cons[i] : NULL;
}

struct sn_container *sn_store_container_get(struct sn_store *s, uint32_t cid)
{
    pthread_mutex_lock(&s->lock);
    struct sn_container *c = sn_store_container_find_locked(s, cid);
    if (c != NULL)
        sn_container_ref(c);
    pthread_mutex_unlock(&s->lock);
    return c;
}

void sn_store_container_add_locked(struct sn_store *s, struct sn_container *c)
{
    size_t i = sn_store_container_pos_locked(s, c->id);
    CN_ASSERT(i == s->n_cons || s->cons[i]->id != c->id);
    sn_container_set_map_len(c, s->o.read_mmap ? s->o.max_container_len : 0);
    if (s->n_cons == s->cap_cons) {
        s->cap_cons = s->cap_cons ? s->cap_cons * 2 : 16;
        s->cons = cn_realloc(s->cons, s->cap_cons * sizeof(*s->cons));
    }
    memmove(s->cons + i + 1, s->cons + i, (s->n_cons - i) * sizeof(*s->cons));
    s->cons[i] = c;
    s->n_cons++;
}

void sn_store_container_remove_locked(struct sn_store *s, uint32_t cid)
{
    size_t i = sn_store_container_pos_locked(s, cid);
    CN_ASSERT(i < s->n_cons && s->cons[i]->id == cid);
    struct sn_container *c = s->cons[i];
    memmove(s->cons + i, s->cons + i + 1, (s->n_cons - i - 1) * sizeof(*s->cons));
    s->n_cons--;
    sn_container_unref(c);
}

/* ---- records ---- */

void sn_store_ival_from(struct sn_ival *v, const struct sn_record_info *ri, uint32_t cid,
                        uint64_t off)
{
    v->flags = ri->flags;
    v->cid = cid;
    v->off = off;
    v->hdr_len = ri->hdr_len;
    v->data_len = ri->data_len;
    v->ver = ri->ver;
    v->ts = ri->ts;
    v->etag_len = ri->etag_len;
    memcpy(v->etag, ri->etag, ri->etag_len);
    v->has_osize = ri->has_osize;
    v->osize = ri->osize;
    v->has_owner = ri->has_owner;
}

int sn_store_verify_data(struct sn_container *c, uint64_t off, const struct sn_record_info *ri,
                         struct sn_buf *b, char err[CN_ERR_LEN])
{
    const uint64_t piece = 16ull * SN_RECORD_BLOCK;
    sn_buf_reserve(b, piece);
    for (uint64_t pos = 0; pos < ri->data_len; pos += piece) {
        uint64_t n = CN_MIN(piece, ri->data_len - pos);
        uint32_t bad = 0;
        int rc = sn_container_pread(c, b->p, n, off + ri->hdr_len + pos);
        if (rc != CN_OK) {
            snprintf(err, CN_ERR_LEN, "read data at %llu: %s",
                     (unsigned long long)(off + ri->hdr_len + pos), cn_rc_str(rc));
            return rc;
        }
        rc = sn_record_verify(ri, (uint32_t)(pos >> SN_RECORD_BLOCK_LOG2), b->p, n, &bad);
        if (rc != CN_OK) {
            snprintf(err, CN_ERR_LEN, "block %u checksum mismatch", bad);
            return CN_CORRUPT;
        }
    }
    return CN_OK;
}

int sn_wreq_init(struct sn_wreq *w, enum sn_wop op, const uint8_t *key, uint32_t klen,
                 const uint8_t *meta, uint32_t meta_len, const uint8_t *etag,
                 uint32_t etag_len, uint64_t ver, uint64_t ts, const uint8_t *data,
                 uint64_t data_len, char err[CN_ERR_LEN])
{
    return sn_wreq_init_osize(w, op, key, klen, meta, meta_len, etag, etag_len, NULL, 0, ver,
                              ts, data, data_len, err);
}

int sn_wreq_init_osize(struct sn_wreq *w, enum sn_wop op, const uint8_t *key, uint32_t klen,
                       const uint8_t *meta, uint32_t meta_len, const uint8_t *etag,
                       uint32_t etag_len, const uint64_t *osize, int owner, uint64_t ver,
                       uint64_t ts,
                       const uint8_t *data, uint64_t data_len, char err[CN_ERR_LEN])
{
    memset(w, 0, sizeof(*w));
    CN_ASSERT(op == SN_WOP_PUT || op == SN_WOP_DELETE || op == SN_WOP_FORGET);
    if (klen == 0 || klen > SN_RECORD_MAX_KEY || meta_len > SN_RECORD_MAX_META ||
        etag_len > SN_RECORD_MAX_ETAG || data_len > SN_RECORD_MAX_DATA) {
        snprintf(err, CN_ERR_LEN, "key, meta, etag or data length out of range");
        return klen == 0 ? CN_INVAL : CN_TOOBIG;
    }
    uint32_t flags = op == SN_WOP_DELETE ? SN_RECORD_FLAG_TOMBSTONE : 0;
    if (op != SN_WOP_PUT) {
        osize = NULL;   /* only a live record stands for an object */
        owner = 0;
    }
    if (op == SN_WOP_DELETE)
        data_len = 0;
    uint64_t hl = sn_record_hdr_len(klen, meta_len, etag_len, data_len) +
                  (osize != NULL ? SN_RECORD_OSIZE_LEN : 0);
    uint8_t *hdr = cn_malloc((size_t)hl);
    sn_record_encode_osize(hdr, key, klen, meta, meta_len, etag, etag_len, osize,
                           flags | (owner ? SN_RECORD_FLAG_OWNER : 0), ver, ts, data, data_len);
    w->op = op;
    w->hdr = hdr;
    w->data = data;
    int rc = sn_record_parse(hdr, (size_t)hl, &w->ri, err);
    CN_ASSERT(rc == CN_OK);
    return CN_OK;
}

void sn_wreq_fini(struct sn_wreq *w)
{
    if (w->op == SN_WOP_PUT || w->op == SN_WOP_DELETE || w->op == SN_WOP_FORGET)
        cn_free((void *)(uintptr_t)w->hdr);
    w->hdr = NULL;
}

/* ---- reads ---- */

void sn_read_fini(struct sn_read *r)
{
    cn_free(r->buf);
    cn_free(r->meta);
    sn_container_unref(r->pin);
    r->buf = r->meta = NULL;
    r->pin = NULL;
}

static void sn_store_read_fill(struct sn_read *r, const struct sn_ival *v)
{
    r->size = v->data_len;
    r->ver = v->ver;
    r->ts = v->ts;
    r->flags = v->flags;
    r->etag_len = v->etag_len;
    memcpy(r->etag, v->etag, v->etag_len);
    r->has_osize = v->has_osize;
    r->osize = v->osize;
    r->has_owner = v->has_owner;
}

/* Reads and checks the header that v points at: it must verify and be the
 * record the index describes. */
static int sn_store_read_header(struct sn_container *c, const struct sn_ival *v,
                                const uint8_t *key, uint32_t klen, int nowait, struct sn_buf *b,
                                struct sn_record_info *ri, char why[CN_ERR_LEN])
{
    sn_buf_reserve(b, v->hdr_len);
    int rc = nowait ? sn_container_pread_nowait(c, b->p, v->hdr_len, v->off)
                    : sn_container_pread(c, b->p, v->hdr_len, v->off);
    if (rc == CN_WOULDBLOCK)
        return rc;
    if (rc == CN_IO) {
        snprintf(why, CN_ERR_LEN, "read error: %s", strerror(errno));
        return CN_IO;
    }
    if (rc == CN_OK)
        rc = sn_record_parse(b->p, v->hdr_len, ri, why);
    if (rc != CN_OK) {
        if (rc == CN_AGAIN)
            snprintf(why, CN_ERR_LEN, "record header truncated");
        return CN_CORRUPT;
    }
    if (ri->key_len != klen || memcmp(ri->key, key, klen) != 0 || ri->ver != v->ver ||
        ri->ts != v->ts || ri->data_len != v->data_len ||
        ri->flags != (v->flags & ~SN_IVAL_FLAG_CORRUPT)) {
        snprintf(why, CN_ERR_LEN, "record header does not match the index");
        return CN_CORRUPT;
    }
    return CN_OK;
}

/* Reads [off, off+len) of the record's data: whole blocks around the slice,
 * each verified, from the container's mapping (r->pin holds it) or, when
 * that is not possible, into r->buf. */
static int sn_store_read_data(struct sn_container *c, const struct sn_ival *v,
                              const struct sn_record_info *ri, uint64_t off, uint64_t len,
                              int nowait, struct sn_read *r, char why[CN_ERR_LEN])
{
    uint32_t first = (uint32_t)(off >> SN_RECORD_BLOCK_LOG2), bad = 0;
    uint64_t start = (uint64_t)first << SN_RECORD_BLOCK_LOG2;
    uint64_t end = (off + len + SN_RECORD_BLOCK - 1) & ~(uint64_t)(SN_RECORD_BLOCK - 1);
    end = CN_MIN(end, ri->data_len);
    if (len == 0) {   /* an empty slice (off == size, or an empty record) */
        r->buf = cn_malloc(1);
        r->data = r->buf;
        r->len = 0;
        r->crc = 0;
        return CN_OK;
    }
    /* not waiting: only blocks already in the page cache, through the mapping */
    if (nowait && !sn_container_resident(c, v->off + v->hdr_len + start, end - start))
        return CN_WOULDBLOCK;
    const uint8_t *blocks = sn_container_mapped(c, v->off + v->hdr_len + start, end - start);
    if (blocks == NULL && nowait)
        return CN_WOULDBLOCK;
    if (blocks != NULL) {
        sn_container_ref(c);
        r->pin = c;
    } else {
        r->buf = cn_malloc((size_t)(end - start) + 1);
        int rc = sn_container_pread(c, r->buf, (size_t)(end - start),
                                    v->off + v->hdr_len + start);
        if (rc != CN_OK) {
            snprintf(why, CN_ERR_LEN, "%s", rc == CN_IO ? strerror(errno) : "data truncated");
            return rc;
        }
        blocks = r->buf;
    }
    if (sn_record_verify_slice(ri, first, blocks, end - start, off - start, len, &r->crc,
                               &bad) != CN_OK) {
        snprintf(why, CN_ERR_LEN, "block %u checksum mismatch", bad);
        return CN_CORRUPT;
    }
    r->data = blocks + (off - start);
    r->len = len;
    return CN_OK;
}

/* One attempt at a read; CN_AGAIN when the container went away under it
 * (compaction moved the record): the caller looks the key up again. With
 * nowait, CN_WOULDBLOCK when it would wait for the disk or would read more
 * than max_data bytes of data. */
static int sn_store_read_once(struct sn_store *s, const uint8_t *key, uint32_t klen,
                              int flags, uint64_t off, uint64_t len, int nowait,
                              uint64_t max_data, struct sn_read *r, char why[CN_ERR_LEN])
{
    struct sn_ival v;
    struct sn_record_info ri;
    struct sn_buf hb = {0};
    int rc = sn_index_get(s->ix, key, klen, &v, why);
    if (rc != CN_OK)
        return rc;
    sn_store_read_fill(r, &v);
    if (v.flags & SN_RECORD_FLAG_TOMBSTONE)
        return CN_NOTFOUND;
    /* a HEAD does not read the data: it says so for it (a GET verifies
     * the blocks it reads, so a slice away from the damage still reads) */
    if ((v.flags & SN_IVAL_FLAG_CORRUPT) && !(flags & SN_READ_DATA)) {
        snprintf(why, CN_ERR_LEN, "marked corrupt, waiting for a good copy from a replica");
        return CN_CORRUPT;
    }
    struct sn_container *c = sn_store_container_get(s, v.cid);
    if (c == NULL)
        return CN_AGAIN;
    rc = sn_store_read_header(c, &v, key, klen, nowait, &hb, &ri, why);
    if (rc == CN_OK && ri.meta_len > 0) {
        r->meta = cn_memdup(ri.meta, ri.meta_len);
        r->meta_len = ri.meta_len;
    }
    if (rc == CN_OK && (flags & SN_READ_DATA)) {
        if (!(flags & SN_READ_SLICE)) {
            off = 0;
            len = v.data_len;
        }
        if (off > v.data_len) {
            snprintf(why, CN_ERR_LEN, "offset %llu is past the end (%llu bytes)",
                     (unsigned long long)off, (unsigned long long)v.data_len);
            rc = CN_INVAL;
        } else {
            len = CN_MIN(len, v.data_len - off);
            rc = nowait && len > max_data ? CN_WOULDBLOCK
                                          : sn_store_read_data(c, &v, &ri, off, len, nowait, r, why);
        }
    }
    sn_buf_fini(&hb);
    sn_container_unref(c);
    return rc;
}

/* sn_store_read_once() until the record stops moving under it (a
 * compaction or an overwrite between the index lookup and the container
 * read: CN_AGAIN), at most 8 times; r holds the last attempt's result. */
static int sn_store_read_retry(struct sn_store *s, const uint8_t *key, uint32_t klen, int flags,
                               uint64_t off, uint64_t len, int nowait, uint64_t max_data,
                               struct sn_read *r, char why[CN_ERR_LEN])
{
    int rc = CN_AGAIN;
    memset(r, 0, sizeof(*r));
    for (int attempt = 0; attempt < 8 && rc == CN_AGAIN; attempt++) {
        sn_read_fini(r);
        memset(r, 0, sizeof(*r));
        rc = sn_store_read_once(s, key, klen, flags, off, len, nowait, max_data, r, why);
    }
    return rc;
}

int sn_store_read(struct sn_store *s, const uint8_t *key, uint32_t klen, int flags,
                  uint64_t off, uint64_t len, struct sn_read *r, char err[CN_ERR_LEN])
{
    char why[CN_ERR_LEN] = "";
    atomic_fetch_add(&s->reads, 1);
    int rc = sn_store_read_retry(s, key, klen, flags, off, len, 0, 0, r, why);
    if (rc == CN_AGAIN) {
        rc = CN_IO;
        snprintf(why, sizeof(why), "record kept moving");
    }
    if (rc == CN_CORRUPT || rc == CN_IO) {
        char ks[160];
        sn_store_key_str(key, klen, ks, sizeof(ks));
        snprintf(err, CN_ERR_LEN, "record '%s': %s", ks, why);
        if (rc == CN_CORRUPT)
            atomic_fetch_add(&s->corrupt_reads, 1);
        /* found now (not an earlier mark): mark it so that the replicas'
         * good copy can replace it */
        if (rc == CN_CORRUPT && !(r->flags & SN_IVAL_FLAG_CORRUPT) && r->ts != 0)
            sn_store_mark_corrupt(s, key, klen, r->ver, r->ts);
    } else if (rc != CN_OK && rc != CN_NOTFOUND) {
        snprintf(err, CN_ERR_LEN, "%s", why);
    }
    return rc;
}

int sn_store_read_nowait(struct sn_store *s, const uint8_t *key, uint32_t klen, int flags,
                         uint64_t off, uint64_t len, uint64_t max_data, struct sn_read *r,
                         char err[CN_ERR_LEN])
{
    char why[CN_ERR_LEN] = "";
    int rc = sn_store_read_retry(s, key, klen, flags, off, len, 1, max_data, r, why);
    /* damage, errors and records that keep moving are sn_store_read()'s
     * (it logs, counts and marks); so is everything that would wait */
    if (rc != CN_OK && rc != CN_NOTFOUND && rc != CN_INVAL) {
        sn_read_fini(r);
        memset(r, 0, sizeof(*r));
        return CN_WOULDBLOCK;
    }
    if (rc == CN_INVAL)
        snprintf(err, CN_ERR_LEN, "%s", why);
    atomic_fetch_add(&s->reads, 1);
    return rc;
}

/* ---- listing ---- */

static int sn_store_bytes_cmp(const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen)
{
    int c = memcmp(a, b, CN_MIN(alen, blen));
    return c != 0 ? c : (alen > blen) - (alen < blen);
}

int sn_store_list(struct sn_store *s, const uint8_t *prefix, uint32_t plen,
                  const uint8_t *after, uint32_t alen, uint32_t limit, sn_list_cb cb,
                  void *arg, int *more, char err[CN_ERR_LEN])
{
    return sn_store_list_ex(s, prefix, plen, after, alen, limit, 0, cb, arg, more, err);
}

int sn_store_list_ex(struct sn_store *s, const uint8_t *prefix, uint32_t plen,
                     const uint8_t *after, uint32_t alen, uint32_t limit, int with_tombstones,
                     sn_list_cb cb, void *arg, int *more, char err[CN_ERR_LEN])
{
    struct sn_index_iter *it = sn_index_iter_new(s->ix);
    int from_after = alen > 0 && sn_store_bytes_cmp(after, alen, prefix, plen) >= 0;
    if (from_after)
        sn_index_iter_seek(it, after, alen);
    else
        sn_index_iter_seek(it, prefix, plen);
    uint32_t n = 0;
    int rc = CN_OK;
    *more = 0;
    for (;; sn_index_iter_next(it)) {
        const uint8_t *k;
        uint32_t klen;
        struct sn_ival v;
        int grc = sn_index_iter_get(it, &k, &klen, &v);
        if (grc == CN_DONE)
            break;
        if (grc != CN_OK) {
            snprintf(err, CN_ERR_LEN, "undecodable index value");
            rc = grc;
            break;
        }
        if (klen < plen || memcmp(k, prefix, plen) != 0)
            break;
        if (from_after && sn_store_bytes_cmp(k, klen, after, alen) <= 0)
            continue;
        if ((v.flags & SN_RECORD_FLAG_TOMBSTONE) && !with_tombstones)
            continue;
        if (n == limit) {
            *more = 1;
            break;
        }
        n++;
        if (cb(arg, k, klen, &v) != 0)
            break;
    }
    sn_index_iter_free(it);
    return rc;
}

/* ---- accounting ---- */

void sn_store_stats(struct sn_store *s, struct sn_store_stats *st)
{
    memset(st, 0, sizeof(*st));
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n_cons; i++) {
        const struct sn_container *c = s->cons[i];
        uint64_t used = c->indexed_upto - SN_CONTAINER_HDR;
        st->records += c->live_records - c->live_tombstones;
        st->tombstones += c->live_tombstones;
        st->bytes_live += c->live_bytes;
        st->bytes_total += used;
        st->bytes_dead += used > c->live_bytes ? used - c->live_bytes : 0;
    }
    st->containers = s->n_cons;
    st->active_container = s->active ? s->active->id : 0;
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_lock(&s->wlock);
    st->queue_depth = s->q_len;
    pthread_mutex_unlock(&s->wlock);
    st->puts = atomic_load(&s->puts);
    st->deletes = atomic_load(&s->deletes);
    st->stale_writes = atomic_load(&s->stale_writes);
    st->relocations = atomic_load(&s->relocations);
    st->tombstones_purged = atomic_load(&s->tombstones_purged);
    st->copies_purged = atomic_load(&s->copies_purged);
    st->batches = atomic_load(&s->batches);
    st->syncs = atomic_load(&s->syncs);
    st->reads = atomic_load(&s->reads);
    st->corrupt_reads = atomic_load(&s->corrupt_reads);
    st->scrubs = atomic_load(&s->scrubs);
    st->scrub_corrupt = atomic_load(&s->scrub_corrupt);
    st->compactions = atomic_load(&s->compactions);
    st->containers_reclaimed = atomic_load(&s->containers_reclaimed);
    st->bytes_reclaimed = atomic_load(&s->bytes_reclaimed);
    st->auto_compactions = atomic_load(&s->auto_compactions);
    st->corrupt_marked = atomic_load(&s->corrupt_marked);
    st->corrupt_repaired = atomic_load(&s->corrupt_repaired);
    st->compact_throttle_us = atomic_load(&s->compact_throttle_us);
    st->recovered_records = s->recovered_records;
    st->torn_tails = s->torn_tails;
}

/* ---- open, recovery, close ---- */

/* Keeps one line of what recovery did for sn_store_notes(). */
static void sn_store_note(struct sn_store *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sn_store_note(struct sn_store *s, const char *fmt, ...)
{
    char line[CN_ERR_LEN];
    va_list ap;
    if (s->n_notes == SN_STORE_MAX_NOTES)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    s->notes[s->n_notes++] = cn_strdup(line);
}

size_t sn_store_notes(const struct sn_store *s, const char *const **notes)
{
    *notes = (const char *const *)s->notes;
    return s->n_notes;
}

static int sn_store_mkdir(const char *path, char err[CN_ERR_LEN])
{
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        snprintf(err, CN_ERR_LEN, "mkdir %s: %s", path, strerror(errno));
        return CN_IO;
    }
    return CN_OK;
}

static char *sn_store_join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = cn_malloc(n);
    snprintf(p, n, "%s/%s", a, b);
    return p;
}

static int sn_store_cid_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Loads c's accounting from the index, if it has any. Sets *legacy when
 * the index holds the old 24-byte form, which lacks the tombstone counts. */
static void sn_store_load_acct(struct sn_store *s, struct sn_container *c, int *legacy)
{
    struct sn_index_cacct a;
    if (sn_index_get_container(s->ix, c->id, &a) != CN_OK || a.indexed_upto < SN_CONTAINER_HDR)
        return;
    c->indexed_upto = a.indexed_upto;
    c->live_bytes = a.live_bytes;
    c->live_records = a.live_records;
    c->live_tombstones = a.live_tombstones;
    c->tombstone_bytes = a.tombstone_bytes;
    if (!a.tombstones_known)
        *legacy = 1;
}

/* Opens every container file (in id order) and loads its accounting. */
static int sn_store_load_containers(struct sn_store *s, int *legacy, char err[CN_ERR_LEN])
{
    DIR *d = opendir(s->dir_containers);
    if (d == NULL) {
        snprintf(err, CN_ERR_LEN, "opendir %s: %s", s->dir_containers, strerror(errno));
        return CN_IO;
    }
    uint32_t *ids = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint32_t id;
        if (sn_container_parse_name(e->d_name, &id) != CN_OK)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            ids = cn_realloc(ids, cap * sizeof(*ids));
        }
        ids[n++] = id;
    }
    closedir(d);
    if (n > 0)
        qsort(ids, n, sizeof(*ids), sn_store_cid_cmp);
    int rc = CN_OK;
    for (size_t i = 0; i < n && rc == CN_OK; i++) {
        struct sn_container *c;
        if ((rc = sn_container_open(s->dir_containers, ids[i], &c, err)) != CN_OK)
            break;
        sn_store_load_acct(s, c, legacy);
        sn_store_container_add_locked(s, c);
        s->next_cid = ids[i] + 1;
    }
    cn_free(ids);
    return rc;
}

/* An index written by an older node has no tombstone counts: count the
 * tombstones the index points at, per container, with one pass over the
 * index (once; recovery then persists them in the new form). */
static int sn_store_count_tombstones(struct sn_store *s, char err[CN_ERR_LEN])
{
    struct sn_index_iter *it = sn_index_iter_new(s->ix);
    int rc = CN_OK;
    for (size_t i = 0; i < s->n_cons; i++) {
        s->cons[i]->live_tombstones = s->cons[i]->tombstone_bytes = 0;
        s->cons[i]->meta_dirty = 1;
    }
    for (sn_index_iter_seek(it, NULL, 0);; sn_index_iter_next(it)) {
        const uint8_t *k;
        uint32_t klen;
        struct sn_ival v;
        rc = sn_index_iter_get(it, &k, &klen, &v);
        if (rc != CN_OK)
            break;
        struct sn_container *c = sn_store_container_find_locked(s, v.cid);
        if (c != NULL && (v.flags & SN_RECORD_FLAG_TOMBSTONE)) {
            c->live_tombstones++;
            c->tombstone_bytes += v.hdr_len + v.data_len;
        }
    }
    sn_index_iter_free(it);
    if (rc == CN_DONE)
        return CN_OK;
    snprintf(err, CN_ERR_LEN, "counting tombstones: undecodable index value");
    return rc;
}

/* Indexes one record found past indexed_upto, if it is newer than what the
 * index holds. */
static int sn_store_recover_record(struct sn_store *s, struct sn_apply *a,
                                   struct sn_container *c, uint64_t off,
                                   const struct sn_record_info *ri, char err[CN_ERR_LEN])
{
    struct sn_ival cur, nv;
    int rc = sn_writer_apply_lookup(s, a, ri->key, ri->key_len, &cur, err);
    if (rc != CN_OK && rc != CN_NOTFOUND)
        return rc;
    int found = rc == CN_OK;
    if (found && !cn_version_newer(ri->ts, ri->ver, cur.ts, cur.ver))
        return CN_OK;
    /* the overlay keeps the key pointer until commit: give it its own copy */
    sn_store_ival_from(&nv, ri, c->id, off);
    sn_writer_apply_set(s, a, cn_memdup(ri->key, ri->key_len), ri->key_len, &nv,
                        found ? &cur : NULL);
    s->recovered_records++;
    return CN_OK;
}

static int sn_store_recover_commit(struct sn_store *s, struct sn_apply *a,
                                   char err[CN_ERR_LEN])
{
    /* the LevelDB batch holds its own copies of the keys */
    for (size_t i = 0; i < a->n; i++)
        cn_free((void *)(uintptr_t)a->ents[i].key);
    a->n = 0;
    return sn_writer_apply_commit(s, a, 1, err);
}

/* Scans c past indexed_upto: indexes every complete, verified record and
 * truncates the file at the first torn or failing one. */
static int sn_store_recover_container(struct sn_store *s, struct sn_container *c,
                                      char err[CN_ERR_LEN])
{
    struct sn_apply a;
    struct sn_buf hb = {0}, db = {0};
    struct sn_record_info ri;
    uint64_t off = c->indexed_upto;
    int rc = CN_OK;
    char why[CN_ERR_LEN];
    sn_writer_apply_init(&a);
    while (rc == CN_OK) {
        int hrc = sn_container_read_header(c, off, c->len, &hb, &ri, why);
        if (hrc == CN_OK)
            hrc = sn_store_verify_data(c, off, &ri, &db, why);
        if (hrc == CN_DONE)
            break;
        if (hrc == CN_CORRUPT) {
            sn_store_note(s, "container %08x: %s: dropping %llu bytes at %llu", c->id, why,
                          (unsigned long long)(c->len - off), (unsigned long long)off);
            s->torn_tails++;
            rc = sn_container_truncate(c, off, err);
            break;
        }
        if (hrc != CN_OK) {
            snprintf(err, CN_ERR_LEN, "container %08x: %s", c->id, why);
            rc = hrc;
            break;
        }
        rc = sn_store_recover_record(s, &a, c, off, &ri, err);
        off += sn_record_total_len(&ri);
        if (rc == CN_OK && a.n >= 256)
            rc = sn_store_recover_commit(s, &a, err);
    }
    if (rc == CN_OK) {
        c->indexed_upto = off;
        c->meta_dirty = 1;
        rc = sn_store_recover_commit(s, &a, err);
    }
    sn_writer_apply_fini(&a);
    sn_buf_fini(&hb);
    sn_buf_fini(&db);
    return rc;
}

static int sn_store_recover(struct sn_store *s, char err[CN_ERR_LEN])
{
    int legacy = 0;
    int rc = sn_store_load_containers(s, &legacy, err);
    if (rc == CN_OK && legacy)
        rc = sn_store_count_tombstones(s, err);
    for (size_t i = 0; i < s->n_cons && rc == CN_OK; i++) {
        struct sn_container *c = s->cons[i];
        if (c->indexed_upto > c->len) {
            sn_store_note(s, "container %08x is shorter (%llu) than indexed (%llu)", c->id,
                          (unsigned long long)c->len, (unsigned long long)c->indexed_upto);
            c->indexed_upto = c->len;
        }
        rc = sn_store_recover_container(s, c, err);
    }
    if (rc != CN_OK)
        return rc;
    struct sn_container *last = s->n_cons ? s->cons[s->n_cons - 1] : NULL;
    if (last != NULL && last->len < s->o.max_container_len) {
        s->active = last;
        return CN_OK;
    }
    struct sn_container *c;
    if ((rc = sn_container_create(s->dir_containers, s->next_cid, &c, err)) != CN_OK)
        return rc;
    s->next_cid++;
    c->meta_dirty = 1;
    sn_store_container_add_locked(s, c);
    s->active = c;
    return CN_OK;
}

int sn_store_open(const struct sn_store_opts *o, struct sn_store **out, char err[CN_ERR_LEN])
{
    struct sn_store *s = cn_calloc(1, sizeof(*s));
    int rc;
    *out = NULL;
    s->o = *o;
    if (s->o.max_batch == 0)
        s->o.max_batch = 1;
    s->dir_data = cn_strdup(o->data_dir);
    s->dir_containers = sn_store_join(o->data_dir, "containers");
    s->dir_index = sn_store_join(o->data_dir, "index");
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->wlock, NULL);
    pthread_cond_init(&s->wcond, NULL);
    pthread_mutex_init(&s->admin, NULL);
    s->next_cid = 1;
    if ((rc = sn_store_mkdir(s->dir_data, err)) != CN_OK ||
        (rc = sn_store_mkdir(s->dir_containers, err)) != CN_OK ||
        (rc = sn_index_open(s->dir_index, o->index_cache, &s->ix, err)) != CN_OK ||
        (rc = sn_store_recover(s, err)) != CN_OK ||
        (rc = sn_writer_start(s, err)) != CN_OK) {
        sn_store_close(s, NULL);
        return rc;
    }
    *out = s;
    return CN_OK;
}

/* Keeps the first error of sn_store_close (r, with e) in *rc and err. */
static void sn_store_close_err(int *rc, int r, const char *e, char *err)
{
    if (r == CN_OK || *rc != CN_OK)
        return;
    *rc = r;
    if (err != NULL)
        snprintf(err, CN_ERR_LEN, "%s", e);
}

int sn_store_close(struct sn_store *s, char *err)
{
    if (s == NULL)
        return CN_OK;
    sn_writer_stop(s);
    char e[CN_ERR_LEN];
    int rc = CN_OK;
    for (size_t i = 0; i < s->n_cons; i++)
        if (s->cons[i]->unsynced)
            sn_store_close_err(&rc, sn_container_sync(s->cons[i], e), e, err);
    if (s->ix != NULL) {
        /* a synced empty batch makes LevelDB's log durable */
        struct sn_apply a;
        sn_writer_apply_init(&a);
        sn_store_close_err(&rc, sn_writer_apply_commit(s, &a, 1, e), e, err);
        sn_writer_apply_fini(&a);
    }
    for (size_t i = 0; i < s->n_cons; i++)
        sn_container_unref(s->cons[i]);
    for (size_t i = 0; i < s->n_notes; i++)
        cn_free(s->notes[i]);
    cn_free(s->cons);
    sn_index_close(s->ix);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->wlock);
    pthread_cond_destroy(&s->wcond);
    pthread_mutex_destroy(&s->admin);
    cn_free(s->dir_data);
    cn_free(s->dir_containers);
    cn_free(s->dir_index);
    cn_free(s);
    return rc;
}

int sn_store_mark_corrupt(struct sn_store *s, const uint8_t *key, uint32_t klen, uint64_t ver,
                          uint64_t ts)
{
    struct sn_wreq w;
    memset(&w, 0, sizeof(w));
    w.op = SN_WOP_MARK;
    w.ri.key = key;
    w.ri.key_len = klen;
    w.ri.ver = ver;
    w.ri.ts = ts;
    if (sn_store_submit_wait(s, &w) != CN_OK || !w.applied)
        return 0;
    atomic_fetch_add(&s->corrupt_marked, 1);
    return 1;
}

struct sn_index *sn_store_index(struct sn_store *s)
{
    return s->ix;
}
