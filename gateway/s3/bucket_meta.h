/* The `meta` of a bucket record ("b/<bucket>", keys.h): who owns the bucket,
 * its region, which incarnation of the name it is, and its named
 * configurations (cors today; acl, policy, ownership controls, versioning,
 * lifecycle, tags later), as one msgpack map (docs/gateway.md). Encoding and
 * decoding only: s3_bucket.c reads and writes the record. */
#ifndef GW_BUCKET_META_H
#define GW_BUCKET_META_H

#include <stddef.h>
#include <stdint.h>

#include "cn/rc.h"

#define GW_BUCKET_META_VERSION 1
#define GW_BUCKET_META_REGION_MAX 63
#define GW_BUCKET_META_OWNER_MAX 64
#define GW_BUCKET_META_NAME_MAX 32     /* a configuration's name */
#define GW_BUCKET_META_MAX_CONFIGS 16
/* The most bytes an encoded meta may take: under the nodes' default
 * max_meta_len (64 KiB), with room for the key and the rest of the frame. */
#define GW_BUCKET_META_MAX_LEN (60u * 1024)

/* Which bucket a name stood for: the creation time and 64 random bits,
 * chosen by CreateBucket. A bucket deleted and created again under the same
 * name is another incarnation, so a configuration change read from the old
 * one is not written over the new one. {0, 0}: a record written before
 * incarnations existed. */
struct gw_bucket_incarnation {
    uint64_t created_us;
    uint64_t rnd;
};

/* One named configuration: its bytes are the owning module's encoding
 * (cors.h for "cors"); this module carries them without looking inside, so
 * a gateway keeps configurations it does not know when it rewrites the
 * record. */
struct gw_bucket_meta_config {
    const char *name;
    size_t name_len;
    const void *value;
    size_t value_len;
};

/* A decoded meta. Every pointer is borrowed: into the bytes it was decoded
 * from, or whatever the caller set. */
struct gw_bucket_meta {
    const char *region;           /* "" in a legacy record with an empty meta */
    size_t region_len;
    const char *owner;
    size_t owner_len;
    struct gw_bucket_incarnation inc;
    int legacy;                   /* decoded from the plain-region form */
    size_t n_configs;
    struct gw_bucket_meta_config configs[GW_BUCKET_META_MAX_CONFIGS];
};

/* A new incarnation: now (us) and 64 bits from the OS's generator. */
struct gw_bucket_incarnation gw_bucket_incarnation_new(void);
int gw_bucket_incarnation_eq(const struct gw_bucket_incarnation *a,
                             const struct gw_bucket_incarnation *b);

/* Decodes a bucket record's meta[meta_len] together with its owner id (the
 * record's `owner` field, which LIST entries carry for ListBuckets; before
 * protocol version 3 the record kept it as its etag, passed here as
 * `etag`). Two forms are read:
 *   - legacy: the meta is the region string alone (records written before
 *     this module): region = meta, owner = etag, incarnation {0, 0}, no
 *     configurations, legacy = 1;
 *   - a msgpack map {"v": 1, "region": str, "owner": str, "inc": [uint,
 *     uint], "cfg": {name: bin, ...}}, every key present once, nothing else,
 *     owner equal to the etag.
 * Returns CN_OK, or CN_INVAL when the bytes are neither (then m is zeroed).
 * m borrows from meta and etag. */
int gw_bucket_meta_decode(struct gw_bucket_meta *m, const void *meta, size_t meta_len,
                          const char *etag, size_t etag_len);

struct msg;

/* The owner id a bucket record (a HEAD or GET reply) names: its `owner`
 * field (protocol version 3) or, in the form written before (and what a
 * node of version < 3 answers), its etag. Borrowed from rec; *len set. */
const char *gw_bucket_meta_record_owner(const struct msg *rec, size_t *len);

/* gw_bucket_meta_decode() of a bucket record (a HEAD or GET reply): its
 * meta with the owner gw_bucket_meta_record_owner() reads. */
int gw_bucket_meta_decode_record(struct gw_bucket_meta *m, const struct msg *rec);

/* Encodes m in the map form (whatever form it was decoded from); *out is
 * cn_malloc'd (the caller frees), *len its size. Returns CN_OK, or
 * CN_TOOBIG when it would take more than GW_BUCKET_META_MAX_LEN bytes (then
 * *out is NULL). */
int gw_bucket_meta_encode(const struct gw_bucket_meta *m, char **out, size_t *len);

/* The configuration named name (NUL-terminated), or NULL. */
const struct gw_bucket_meta_config *gw_bucket_meta_config(const struct gw_bucket_meta *m,
                                                          const char *name);

/* Sets (value non-NULL; borrowed) or removes (value NULL) the configuration
 * named name (a literal or storage that outlives m). Returns CN_OK, or
 * CN_TOOBIG when GW_BUCKET_META_MAX_CONFIGS are already set (m unchanged). */
int gw_bucket_meta_set_config(struct gw_bucket_meta *m, const char *name, const void *value,
                              size_t value_len);

#endif
