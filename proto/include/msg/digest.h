/* Range digests for repair by difference (the DIGEST op, PROTOCOL.md): how a
 * key range (after, upto] is split into sub-ranges, how one record is
 * digested, and the packed forms of the `sums` and `arcs` fields. Node and
 * client both use these functions, so they agree on every boundary and
 * every digest. Pure functions; no allocation. */
#ifndef MSG_DIGEST_H
#define MSG_DIGEST_H

#include <stdint.h>

#include "msg/msg.h"

#define MSG_DIGEST_MAX_FANOUT 256u
#define MSG_DIGEST_SUM_LEN 24u     /* count, then the two digest lanes: u64 BE each */
#define MSG_DIGEST_ARC_LEN 16u     /* first, last hash of an arc: u64 BE each */
#define MSG_DIGEST_MAX_ARCS 4096u  /* `arcs` is at most 64 KiB */
#define MSG_DIGEST_WINDOW 8u       /* bytes after the common prefix a split divides */

/* One sub-range's summary: how many records (tombstones included) and the
 * sum (mod 2^64, per lane) of their record digests. Sums are order
 * independent, so a parent range's sum is the sum of its sub-ranges'. */
struct msg_digest_sum {
    uint64_t count;
    uint64_t h[2];
};

/* An inclusive range [first, last] of cn_ring_hash() values. */
struct msg_digest_arc {
    uint64_t first, last;
};

/* The split of (after, upto] into fanout sub-ranges: sub-range i is
 * (bound i, bound i+1], bound 0 = after, bound fanout = upto (or no upper
 * bound). Bounds 1..fanout-1 are prefix (the common prefix of after and
 * upto, plen bytes) followed by the 8-byte big-endian w[i]; they never
 * decrease, so some sub-ranges may be empty. Borrows prefix from `after`. */
struct msg_digest_split {
    const uint8_t *prefix;
    uint32_t plen;
    uint32_t fanout;
    uint64_t w[MSG_DIGEST_MAX_FANOUT + 1];
};

/* Computes the split. has_upto 0 means no upper bound. fanout must be 1 to
 * MSG_DIGEST_MAX_FANOUT (asserted). after may be empty (the range starts
 * before every key). */
void msg_digest_split_init(struct msg_digest_split *sp, const uint8_t *after, uint32_t alen,
                           const uint8_t *upto, uint32_t ulen, int has_upto, uint32_t fanout);

/* Writes bound i (1..fanout-1) into out (plen + MSG_DIGEST_WINDOW bytes);
 * returns its length. */
uint32_t msg_digest_split_bound(const struct msg_digest_split *sp, uint32_t i, uint8_t *out);

/* Compares key with bound i (1..fanout-1) bytewise: <0, 0, >0. */
int msg_digest_split_cmp(const struct msg_digest_split *sp, uint32_t i, const uint8_t *key,
                         uint32_t klen);

/* The sub-range of a key inside (after, upto], searching from `from` (keys
 * visited in order never go back). */
uint32_t msg_digest_split_index(const struct msg_digest_split *sp, uint32_t from,
                                const uint8_t *key, uint32_t klen);

/* The digest of one record: SHA-256 over its key, ts, ver, the tombstone
 * and corrupt flag bits, size and etag (each length-prefixed), cut to two
 * 64-bit lanes. A record with osize (version 3) is digested with its
 * folded etag (msg_osize_fold), so both forms of one write digest alike. */
void msg_digest_record(const uint8_t *key, uint32_t klen, uint64_t ts, uint64_t ver,
                       uint32_t flags, uint64_t size, const uint8_t *etag, uint32_t etag_len,
                       uint64_t out[2]);

/* Adds a record digest to a sum. */
void msg_digest_sum_add(struct msg_digest_sum *s, const uint64_t h[2]);

/* Whether two sums are equal. */
int msg_digest_sum_eq(const struct msg_digest_sum *a, const struct msg_digest_sum *b);

/* Packs n sums into out (n * MSG_DIGEST_SUM_LEN bytes). */
void msg_digest_sums_pack(const struct msg_digest_sum *s, uint32_t n, uint8_t *out);

/* Unpacks a `sums` field: its length must be a multiple of
 * MSG_DIGEST_SUM_LEN and hold at most max sums. CN_OK with *n, or CN_INVAL
 * (out unchanged past what was written). */
int msg_digest_sums_unpack(const struct msg_bytes *b, struct msg_digest_sum *out, uint32_t max,
                           uint32_t *n);

/* Packs n arcs into out (n * MSG_DIGEST_ARC_LEN bytes). */
void msg_digest_arcs_pack(const struct msg_digest_arc *a, uint32_t n, uint8_t *out);

/* Unpacks an `arcs` field: a multiple of MSG_DIGEST_ARC_LEN, at most max
 * arcs, each first <= last, sorted and disjoint (each first above the
 * previous last). CN_OK with *n, or CN_INVAL. */
int msg_digest_arcs_unpack(const struct msg_bytes *b, struct msg_digest_arc *out, uint32_t max,
                           uint32_t *n);

/* Whether hash h lies in one of n sorted disjoint arcs (binary search). */
int msg_digest_arcs_contain(const struct msg_digest_arc *a, uint32_t n, uint64_t h);

#endif
