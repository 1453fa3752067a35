/* The chunk map of a large object and the storage keys of its chunks.
 *
 * A large object is a parent record "o/<bucket>/<key>" whose data is the
 * chunk map (msgpack, below), whose etag field is the object's ETag and
 * whose osize field (protocol version 3) is the object's size: the node's
 * `size` is the length of the record's data, the map. Records written
 * before version 3 (and any record read from, or written to, a node of
 * version < 3) carry the size in the etag field instead, "<etag> <size>";
 * gw_lo_map_record_size() reads both forms (docs/large-objects.md,
 * "The parent record's size"). The map is a list
 * of segments: a plain chunked PUT has one, a completed multipart upload
 * one per part. Segment i's chunk j is the record
 *   "c/<bucket>/<key>" NUL <ver as 16 hex> "/" <j as 8 hex>
 * (NUL never occurs in an S3 key, so the suffix is unambiguous), placed on
 * the ring by its own key. Chunk j of a segment holds bytes
 * [j*chunk_len, min((j+1)*chunk_len, size)) of the segment.
 *
 * Pure functions: no I/O, unit-tested in tests/unit/test_gw_lo_map.c. */
#ifndef GW_LO_MAP_H
#define GW_LO_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "keys.h"

#include "cn/rc.h"

/* Longest chunk (or part) key: the object key, NUL, 16 hex, '/', 8 hex. */
#define GW_LO_KEY_MAX (GW_KEYS_MAX + 32)
#define GW_LO_MAX_SEGS 10000
/* "<etag> <size>" and "<md5> <size> <ver> <chunk_len>" fit the node's
 * 128-byte etag field. */
#define GW_LO_ETAG_MAX 128

struct msg;

/* One run of chunks written by one request (a PUT or an UploadPart). */
struct gw_lo_seg {
    uint64_t ver;        /* the writer's version id: names the chunks */
    uint64_t size;       /* bytes in the segment (0 allowed: no chunks) */
    uint32_t chunk_len;  /* length of every chunk but the last */
};

struct gw_lo_map {
    uint64_t size;           /* sum of the segment sizes */
    int multipart;           /* 1: segments are parts (partNumber = index + 1) */
    uint32_t n_segs;
    struct gw_lo_seg *segs;  /* cn_malloc'd */
    uint64_t *starts;        /* offset of each segment in the object */
};

/* One slice of a read: a byte run inside one chunk. */
struct gw_lo_slice {
    uint32_t seg;
    uint32_t chunk;
    uint64_t off;        /* in the chunk */
    uint64_t len;
    uint64_t chunk_size; /* the chunk's full length (for checks) */
};

/* Number of chunks of a segment. */
uint32_t gw_lo_seg_chunks(const struct gw_lo_seg *s);
/* Length of chunk idx of s. */
uint64_t gw_lo_seg_chunk_size(const struct gw_lo_seg *s, uint32_t idx);

/* Builds a map over copies of segs (n >= 1). Returns CN_OK, or CN_INVAL when
 * n is 0 or over GW_LO_MAX_SEGS or a segment has chunk_len 0 (m untouched). */
int gw_lo_map_init(struct gw_lo_map *m, const struct gw_lo_seg *segs, uint32_t n, int multipart);
void gw_lo_map_fini(struct gw_lo_map *m);

/* Encodes m; *out is cn_malloc'd (caller frees). */
void gw_lo_map_encode(const struct gw_lo_map *m, char **out, size_t *len);
/* Encodes m as the payload of a parent record (one reference, store.h). */
struct gw_blob *gw_lo_map_blob(const struct gw_lo_map *m);
/* What a large object's parent record holds once its chunks are stored,
 * for PutObject, CopyObject and CompleteMultipartUpload alike: returns the
 * chunk map over segs as the record's data (one reference, as
 * gw_lo_map_blob) and the object's size, the record's osize, in *osize
 * (its etag field is the object's ETag, unchanged). The segments come from
 * the gateway's own writers, so gw_lo_map_init() must accept them (n >= 1,
 * no chunk_len 0): anything else is a bug and aborts. */
struct gw_blob *gw_lo_map_parent(const struct gw_lo_seg *segs, uint32_t n, int multipart,
                                 uint64_t *osize);
/* Decodes and validates bytes from a node (outside input: every type and
 * sum is checked). CN_OK, or CN_INVAL with m zeroed. */
int gw_lo_map_decode(struct gw_lo_map *m, const void *bytes, size_t len);

/* The slice that starts at object offset pos and ends at or before end
 * (exclusive), at most max_len long, never crossing a chunk boundary.
 * pos < end <= m->size. */
void gw_lo_map_slice(const struct gw_lo_map *m, uint64_t pos, uint64_t end, uint64_t max_len,
                     struct gw_lo_slice *out);

/* Chunk key of chunk idx of the segment ver of the object whose record key
 * is okey ("o/..."). out holds GW_LO_KEY_MAX bytes; returns the length. */
size_t gw_lo_map_chunk_key(char *out, const char *okey, size_t okey_len, uint64_t ver,
                           uint32_t idx);

/* What a record says about the object it stores, in either form: the one
 * reader every caller uses. A record with osize (has_osize) is a large
 * object of size osize whose ETag is the whole etag; one without whose etag
 * is "<etag> <size>" (the form before protocol version 3) is a large object
 * too (gw_lo_map_etag_split); anything else is a plain object. Returns 1
 * for a large object (*tag_len: the ETag's length within etag, *size: the
 * object's size), else 0 with *tag_len = etag_len and *size untouched. */
int gw_lo_map_record_size(const char *etag, size_t etag_len, int has_osize, uint64_t osize,
                          size_t *tag_len, uint64_t *size);
/* gw_lo_map_record_size() of a HEAD or GET reply's etag and osize. */
int gw_lo_map_reply_size(const struct msg *m, size_t *tag_len, uint64_t *size);

/* The legacy reader, called by gw_lo_map_record_size() only: splits an etag
 * field of the version-2 form: returns 1 for a large object's
 * "<etag> <size>" (with *tag_len the length of the etag part and *size the
 * object size), 0 for a plain etag (then *tag_len = len). The form is
 * written by msg_osize_fold() (proto/, msg/msg.h). */
int gw_lo_map_etag_split(const char *etag, size_t len, size_t *tag_len, uint64_t *size);

#endif
