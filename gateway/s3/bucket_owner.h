/* Bucket ownership: only the account that owns a bucket may use it (S3
 * answers AccessDenied to any other account; cairn has no ACLs or policies
 * that could grant more). The owner is the bucket record's etag (s3_bucket.c).
 * Each worker keeps a small cache of bucket → owner so an object GET does not
 * pay a bucket lookup each time: direct-mapped, GW_BUCKET_OWNER_SLOTS entries,
 * each trusted for s3.bucket_owner_ttl. */
#ifndef GW_BUCKET_OWNER_H
#define GW_BUCKET_OWNER_H

#include <stddef.h>
#include <stdint.h>

#include "request.h"

#define GW_BUCKET_OWNER_SLOTS 1024
#define GW_BUCKET_NAME_MAX 63
#define GW_OWNER_ID_MAX 64

struct gw_bucket_owner_cache;

/* A cache whose entries live ttl_ms (0: nothing is cached). */
struct gw_bucket_owner_cache *gw_bucket_owner_cache_new(uint64_t ttl_ms);
void gw_bucket_owner_cache_free(struct gw_bucket_owner_cache *c);

/* The owner cached for bucket at now_ms: 1, *owner (NUL-terminated, valid
 * until the next change of the cache) and the wall-clock time it was learnt
 * (microseconds, the scale of record timestamps), or 0 when absent or
 * expired. */
int gw_bucket_owner_cache_get(struct gw_bucket_owner_cache *c, const char *bucket, size_t blen,
                              uint64_t now_ms, const char **owner, uint64_t *learnt_wall_us);
/* Records bucket's owner at now_ms (names or ids too long are not cached). */
void gw_bucket_owner_cache_put(struct gw_bucket_owner_cache *c, const char *bucket, size_t blen,
                               const char *owner, size_t olen, uint64_t now_ms);
/* Forgets bucket (it was deleted through this worker). */
void gw_bucket_owner_cache_drop(struct gw_bucket_owner_cache *c, const char *bucket, size_t blen);

/* Checks that r's credential owns bucket, then runs next(r). A bucket that
 * does not exist passes (the handler answers NoSuchBucket as it would); one
 * owned by another account is answered AccessDenied; a failed lookup
 * ServiceUnavailable. Uses the worker's cache when it names the caller,
 * else a quorum HEAD of the bucket record (a refusal is never cached).
 *
 * The cache can be stale for s3.bucket_owner_ttl after a bucket is deleted
 * and re-created by another account, so every handler that reads the bucket
 * record afresh (gw_s3_bucket_require(): every write, delete and listing)
 * decides again with gw_bucket_owner_allows() on what it read. */
void gw_bucket_owner_check(struct gw_req *r, const char *bucket, size_t blen, gw_req_cb next);

/* Object reads (GET, HEAD, a copy's source) decide on the cached owner. A
 * record of bucket written after that owner was learnt (record_ts_us later
 * than r->owner_known_until_us) may belong to a bucket re-created by
 * another account since: then the bucket record is read again, the
 * decision made on it, and next(r) runs when it allows (1 is returned; the
 * caller stops and next starts the read over). 0: the decision stands.
 * bucket must be the one whose check set r->owner_known_until_us last (the
 * source bucket of a copy, the request's bucket otherwise). */
int gw_bucket_owner_recheck(struct gw_req *r, const char *bucket, size_t blen,
                            uint64_t record_ts_us, gw_req_cb next);

/* The access decision on a bucket record just read: 1 when owner[olen]
 * (the record's etag) is r's credential's owner, else 0 (logged; the caller
 * answers AccessDenied). Refreshes the worker's cache with what was read. */
int gw_bucket_owner_allows(struct gw_req *r, const char *bucket, size_t blen, const char *owner,
                           size_t olen);

/* The same decision on a multipart upload record just read, whose etag
 * names the account that initiated it: 1 when that is r's credential's
 * owner (or the record predates owner ids: etag empty), else 0 (logged).
 * Upload-id operations do not read the bucket record, so this is what keeps
 * a stale cached bucket owner from reaching an upload. */
int gw_bucket_owner_allows_upload(struct gw_req *r, const char *owner, size_t olen);

#endif
