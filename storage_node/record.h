/* The on-disk record: one object version (or tombstone) as it sits in a
 * container file. A fixed 56-byte header, then key, meta, etag and one CRC32C
 * per 64 KiB block of the data, then the data. The header has its own CRC, so
 * a reader can verify any block range without reading the whole record. The
 * layout is documented byte by byte in docs/storage.md. */
#ifndef SN_RECORD_H
#define SN_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "cn/rc.h"

#define SN_RECORD_MAGIC 0x31524e43u   /* "CNR1" little-endian */
#define SN_RECORD_FIXED 56u           /* bytes of the fixed header */
#define SN_RECORD_BLOCK_LOG2 16u      /* 64 KiB blocks */
#define SN_RECORD_BLOCK (1u << SN_RECORD_BLOCK_LOG2)

/* Hard limits of the format (a node's configured limits are lower). The
 * parser rejects anything beyond them, so a damaged length never makes a
 * reader allocate or read gigabytes. */
#define SN_RECORD_MAX_KEY (64u * 1024)
#define SN_RECORD_MAX_META (16u * 1024 * 1024)
#define SN_RECORD_MAX_ETAG 255u
#define SN_RECORD_MAX_DATA (4ull * 1024 * 1024 * 1024)

#define SN_RECORD_FLAG_TOMBSTONE 0x1u
/* On disk only: the header holds the record's osize (protocol version 3, a
 * large object's logical size), 8 bytes after the etag. The parser moves it
 * to has_osize/osize and leaves it out of ri->flags. (0x2 is the index's
 * SN_IVAL_FLAG_CORRUPT, never in a record.) */
#define SN_RECORD_FLAG_OSIZE 0x4u
#define SN_RECORD_OSIZE_LEN 8u
/* On disk only: the etag bytes are the record's owner (protocol version 3),
 * not an etag. The parser moves it to has_owner. */
#define SN_RECORD_FLAG_OWNER 0x8u

/* A parsed header. The pointers point into the buffer that was parsed. */
struct sn_record_info {
    uint32_t hdr_len;
    uint32_t key_len, meta_len, etag_len;
    uint32_t flags;
    uint32_t block_log2;
    uint32_t n_blocks;
    uint64_t data_len, ver, ts;
    uint32_t has_osize;   /* the header holds osize (SN_RECORD_FLAG_OSIZE) */
    uint64_t osize;
    uint32_t has_owner;   /* the etag bytes are the owner (SN_RECORD_FLAG_OWNER) */
    const uint8_t *key, *meta, *etag, *crcs;
};

/* Bytes of the header of a record with these lengths (fixed part, key, meta,
 * etag and the block CRCs); a record with osize has SN_RECORD_OSIZE_LEN more. */
uint64_t sn_record_hdr_len(uint32_t key_len, uint32_t meta_len, uint32_t etag_len,
                           uint64_t data_len);

/* Total bytes on disk of a record described by ri (header + data). */
static inline uint64_t sn_record_total_len(const struct sn_record_info *ri)
{
    return (uint64_t)ri->hdr_len + ri->data_len;
}

/* Reads the fixed part (buf holds at least len >= SN_RECORD_FIXED bytes):
 * checks magic, block size and every length against the format limits, and
 * that hdr_len matches them. Fills the numbers of ri (not the pointers).
 * Returns CN_AGAIN when len is too short, CN_CORRUPT (err says why) when the
 * bytes are not a plausible header. */
int sn_record_parse_fixed(const uint8_t *buf, size_t len, struct sn_record_info *ri,
                          char err[CN_ERR_LEN]);

/* Parses a whole header (buf holds at least its hdr_len bytes, len tells how
 * many there are): sn_record_parse_fixed() plus the header CRC. On success
 * the pointers of ri point into buf. Returns CN_AGAIN when buf is shorter
 * than the header, CN_CORRUPT when it does not verify. */
int sn_record_parse(const uint8_t *buf, size_t len, struct sn_record_info *ri,
                    char err[CN_ERR_LEN]);

/* Writes the header of a record into out (sn_record_hdr_len() bytes, caller
 * owned): key, meta, etag are copied, the block CRCs computed over data
 * (data_len bytes; NULL when data_len is 0). */
void sn_record_encode(uint8_t *out, const uint8_t *key, uint32_t key_len,
                      const uint8_t *meta, uint32_t meta_len, const uint8_t *etag,
                      uint32_t etag_len, uint32_t flags, uint64_t ver, uint64_t ts,
                      const uint8_t *data, uint64_t data_len);
/* sn_record_encode() of a record that also holds *osize (osize NULL: none,
 * the same bytes as sn_record_encode); out holds sn_record_hdr_len() +
 * SN_RECORD_OSIZE_LEN bytes when osize is set. flags may hold
 * SN_RECORD_FLAG_OWNER (etag is then the owner). */
void sn_record_encode_osize(uint8_t *out, const uint8_t *key, uint32_t key_len,
                            const uint8_t *meta, uint32_t meta_len, const uint8_t *etag,
                            uint32_t etag_len, const uint64_t *osize, uint32_t flags,
                            uint64_t ver, uint64_t ts, const uint8_t *data, uint64_t data_len);

/* The stored CRC of block i (i < ri->n_blocks). */
uint32_t sn_record_block_crc(const struct sn_record_info *ri, uint32_t i);

/* The CRC32C of the whole data, combined from the block CRCs (no pass over
 * the bytes): what a PUT's crc field is checked against. */
uint32_t sn_record_data_crc(const struct sn_record_info *ri);

/* Verifies the blocks first_block .. covering len bytes of data that start at
 * the beginning of block first_block; len must end at a block boundary or at
 * the end of the data. Returns CN_OK, or CN_CORRUPT and the failing block in
 * *bad_block, or CN_INVAL if the range does not fit the record. */
int sn_record_verify(const struct sn_record_info *ri, uint32_t first_block,
                     const uint8_t *data, uint64_t len, uint32_t *bad_block);

/* Verifies, like sn_record_verify(), the blocks held in buf (buf_len bytes
 * from the start of block first_block) and, in the same pass, computes the
 * CRC32C of the slice [slice_off, slice_off + slice_len) of buf: block CRCs
 * already computed are combined rather than recomputed, so a slice costs
 * one checksum pass. Returns CN_OK with *slice_crc, CN_CORRUPT with
 * *bad_block, or CN_INVAL. */
int sn_record_verify_slice(const struct sn_record_info *ri, uint32_t first_block,
                           const uint8_t *buf, uint64_t buf_len, uint64_t slice_off,
                           uint64_t slice_len, uint32_t *slice_crc, uint32_t *bad_block);

/* crc32c(A || B) from crc32c(A), crc32c(B) and the length of B. */
uint32_t sn_crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);

/* Little-endian helpers shared by the storage node's on-disk formats. */
static inline uint32_t sn_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t sn_get64(const uint8_t *p)
{
    return (uint64_t)sn_get32(p) | (uint64_t)sn_get32(p + 4) << 32;
}
static inline void sn_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline void sn_put64(uint8_t *p, uint64_t v)
{
    sn_put32(p, (uint32_t)v);
    sn_put32(p + 4, (uint32_t)(v >> 32));
}

#endif
