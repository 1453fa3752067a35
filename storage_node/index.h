/* The index: LevelDB (leveldb/c.h) mapping each key to where its newest
 * record lies, plus the per-container accounting. Keys in LevelDB:
 *   'k' + object key            -> struct sn_ival (see sn_index_encode_val)
 *   'c' + container id (u32 BE) -> struct sn_index_cacct (40 bytes; older
 *                                  nodes wrote the first 24)
 *   'f'                         -> format version
 *   'h' + ...                   -> hints for peers (hint.c owns the layout; the
 *                                  raw calls below reach only this keyspace)
 * LevelDB keeps them sorted bytewise (LIST), has no key size limit and
 * writes a batch atomically. Thread-safe for readers; one writer. */
#ifndef SN_INDEX_H
#define SN_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "cn/rc.h"
#include "record.h"

/* 3: object entries may hold an osize (protocol version 3; records with
 * SN_RECORD_FLAG_OSIZE, which a node of format 2 would take for corrupt).
 * 2: container values of 40 bytes (tombstone counts); 1, their 24-byte
 * form. Formats 1 and 2 are still read (their entries are entries of
 * format 3 without osize) and become 3 on open, so an older node refuses
 * the index instead of misreading it. */
#define SN_INDEX_FORMAT 3

/* An index value: the location and identity of a key's newest record. */
struct sn_ival {
    uint32_t flags;      /* SN_RECORD_FLAG_* */
    uint32_t cid;        /* container id */
    uint64_t off;        /* offset of the record header in the container */
    uint32_t hdr_len;
    uint64_t data_len;
    uint64_t ver, ts;
    uint32_t etag_len;
    uint8_t etag[SN_RECORD_MAX_ETAG];
    uint32_t has_osize;  /* the record holds osize (SN_RECORD_FLAG_OSIZE) */
    uint64_t osize;
    uint32_t has_owner;  /* etag holds the record's owner (SN_RECORD_FLAG_OWNER) */
};

#define SN_IVAL_FIXED 44u
#define SN_IVAL_MAX (SN_IVAL_FIXED + SN_RECORD_MAX_ETAG + SN_RECORD_OSIZE_LEN)

struct sn_index;
struct sn_index_batch;
struct sn_index_iter;

/* Opens (creating if missing) the LevelDB at path with a block cache of
 * cache_bytes. Checks the format key. */
int sn_index_open(const char *path, size_t cache_bytes, struct sn_index **out,
                  char err[CN_ERR_LEN]);
void sn_index_close(struct sn_index *ix);

/* Encodes v into out (SN_IVAL_MAX bytes); returns the length. */
size_t sn_index_encode_val(const struct sn_ival *v, uint8_t *out);
/* Decodes a value; CN_CORRUPT when it is not one. */
int sn_index_decode_val(const uint8_t *p, size_t len, struct sn_ival *v);

/* Looks key up: CN_OK and *v, CN_NOTFOUND, or CN_IO/CN_CORRUPT with err. */
int sn_index_get(struct sn_index *ix, const uint8_t *key, uint32_t klen, struct sn_ival *v,
                 char err[CN_ERR_LEN]);

/* A container's accounting as the index keeps it: little-endian u64s in
 * this order. The first three are all an older node wrote (24 bytes). */
struct sn_index_cacct {
    uint64_t indexed_upto;     /* records before this offset are indexed */
    uint64_t live_bytes;       /* bytes of the records the index points at */
    uint64_t live_records;     /* records the index points at, tombstones included */
    uint64_t live_tombstones;  /* of those, tombstones */
    uint64_t tombstone_bytes;  /* their bytes (part of live_bytes) */
    int tombstones_known;      /* 0: read from the 24-byte form, the last two are 0 */
};

/* Reads a container's accounting: CN_OK, CN_NOTFOUND when it has none,
 * CN_CORRUPT when the value is neither 24 nor 40 bytes, CN_IO. */
int sn_index_get_container(struct sn_index *ix, uint32_t cid, struct sn_index_cacct *a);

struct sn_index_batch *sn_index_batch_new(void);
void sn_index_batch_free(struct sn_index_batch *b);
void sn_index_batch_clear(struct sn_index_batch *b);
void sn_index_batch_put(struct sn_index_batch *b, const uint8_t *key, uint32_t klen,
                        const struct sn_ival *v);
/* Removes key from the index (a purged tombstone). */
void sn_index_batch_del(struct sn_index_batch *b, const uint8_t *key, uint32_t klen);
/* Writes a container's accounting (always the 40-byte form). */
void sn_index_batch_put_container(struct sn_index_batch *b, uint32_t cid,
                                  const struct sn_index_cacct *a);
void sn_index_batch_del_container(struct sn_index_batch *b, uint32_t cid);
/* Applies the batch atomically; sync makes LevelDB fsync its log first. */
int sn_index_write(struct sn_index *ix, struct sn_index_batch *b, int sync,
                   char err[CN_ERR_LEN]);

/* Iteration over object keys in bytewise order, on a snapshot. */
struct sn_index_iter *sn_index_iter_new(struct sn_index *ix);
void sn_index_iter_free(struct sn_index_iter *it);
/* Positions at the first object key >= key (klen 0: the first object). */
void sn_index_iter_seek(struct sn_index_iter *it, const uint8_t *key, uint32_t klen);
/* The current object: CN_OK with key (valid until the next move) and v,
 * CN_DONE past the last object, CN_CORRUPT for an undecodable value. */
int sn_index_iter_get(struct sn_index_iter *it, const uint8_t **key, uint32_t *klen,
                      struct sn_ival *v);
void sn_index_iter_next(struct sn_index_iter *it);

/* ---- the hint keyspace: raw LevelDB keys that start with 'h' ---- */

#define SN_INDEX_HINT_PREFIX 'h'

/* Reads the value of raw key k (k[0] must be 'h') into val (cap bytes):
 * CN_OK with *vlen, CN_NOTFOUND, CN_CORRUPT when the value is longer than
 * cap, CN_IO with err. */
int sn_index_raw_get(struct sn_index *ix, const uint8_t *k, size_t klen, uint8_t *val,
                     size_t cap, size_t *vlen, char err[CN_ERR_LEN]);
void sn_index_batch_put_raw(struct sn_index_batch *b, const uint8_t *k, size_t klen,
                            const uint8_t *v, size_t vlen);
void sn_index_batch_del_raw(struct sn_index_batch *b, const uint8_t *k, size_t klen);
/* Positions it at the first raw key >= k (k[0] must be 'h'). */
void sn_index_iter_seek_raw(struct sn_index_iter *it, const uint8_t *k, size_t klen);
/* The current raw key and value while the key starts with 'h' (CN_OK; both
 * valid until the next move), else CN_DONE. */
int sn_index_iter_get_raw(struct sn_index_iter *it, const uint8_t **k, size_t *klen,
                          const uint8_t **v, size_t *vlen);

#endif
