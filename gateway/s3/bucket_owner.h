/* The router's half of the access decision (access.h): each S3 request on
 * a bucket is decided on the bucket's access config (owner, ACL, policy,
 * public access block, object ownership) before its handler runs. Each
 * worker keeps a small cache of bucket -> access config so an object GET
 * does not pay a bucket lookup each time: direct-mapped,
 * GW_BUCKET_OWNER_SLOTS entries, each trusted for s3.bucket_owner_ttl (the
 * bound within which a configuration change made through another gateway
 * or worker is seen; docs/security.md). Memory: the slots, plus each cached
 * config's ACL (at most GW_ACL_MAX_GRANTS grants) and parsed policy; policy
 * texts count against GW_BUCKET_OWNER_POLICY_BUDGET per worker, and a config
 * past it is used but not cached. */
#ifndef GW_BUCKET_OWNER_H
#define GW_BUCKET_OWNER_H

#include <stddef.h>
#include <stdint.h>

#include "request.h"

struct gw_access_config;
struct msg;

#define GW_BUCKET_OWNER_SLOTS 1024
#define GW_BUCKET_NAME_MAX 63
#define GW_OWNER_ID_MAX 64
#define GW_BUCKET_OWNER_POLICY_BUDGET (1024u * 1024) /* policy JSON bytes cached per worker */

struct gw_bucket_owner_cache;

/* A cache whose entries live ttl_ms (0: nothing is cached). */
struct gw_bucket_owner_cache *gw_bucket_owner_cache_new(uint64_t ttl_ms);
void gw_bucket_owner_cache_free(struct gw_bucket_owner_cache *c);

/* The access config cached for bucket at now_ms: 1, *cfg (borrowed: valid
 * until the next change of the cache; take a reference to keep it) and the
 * wall-clock time it was learnt (microseconds, the scale of record
 * timestamps), or 0 when absent or expired. */
int gw_bucket_owner_cache_get(struct gw_bucket_owner_cache *c, const char *bucket, size_t blen,
                              uint64_t now_ms, struct gw_access_config **cfg,
                              uint64_t *learnt_wall_us);
/* Records bucket's config at now_ms (takes a reference; names too long, or
 * a policy past the budget, are not cached). */
void gw_bucket_owner_cache_put(struct gw_bucket_owner_cache *c, const char *bucket, size_t blen,
                               struct gw_access_config *cfg, uint64_t now_ms);
/* Forgets bucket (it was deleted through this worker). */
void gw_bucket_owner_cache_drop(struct gw_bucket_owner_cache *c, const char *bucket, size_t blen);

/* Decides r's operation (its action, s3_ops.h, on r->bucket and r->key)
 * before its handler, then runs next(r). A bucket that does not exist
 * passes (the handler answers NoSuchBucket as it would); a refusal is
 * answered AccessDenied; a failed lookup ServiceUnavailable. Uses the
 * worker's cache when it allows, else a quorum HEAD of the bucket record (a
 * refusal is never taken from the cache). Sets r->access_cfg, and
 * r->access_need_object when only the object's ACL could still allow it
 * (the handler then calls gw_access_object_allows()).
 *
 * The cache can be stale for s3.bucket_owner_ttl after a bucket is deleted
 * and re-created by another account, so every handler that reads the bucket
 * record afresh (gw_s3_bucket_require(): every write, delete and listing)
 * decides again with gw_bucket_owner_allows() on what it read. */
void gw_bucket_owner_check(struct gw_req *r, const char *bucket, size_t blen, gw_req_cb next);

/* Decides r's operation again on r->bucket's record read now (not the
 * cache), then runs next(r) when it allows (r->access_cfg_fresh is then
 * set). For decisions that must not lag a configuration change: a
 * write that sets an ACL is checked against the bucket's current Object
 * Ownership and public access block. */
void gw_bucket_owner_refresh(struct gw_req *r, gw_req_cb next);

/* A handler's refusal made on the object's ACL (gw_access_object_allows(),
 * gw_access_source_allows(); source: the copy's) with a bucket config from
 * the cache is not final, as no refusal is taken from the cache: when the
 * config was cached, the bucket record is read again, the router's decision
 * made anew, and next(r) starts the handler over (1 is returned; the caller
 * stops). 0: the config was read afresh, the refusal stands. */
int gw_bucket_owner_retry_denied(struct gw_req *r, int source, gw_req_cb next);

/* The same for the source of a copy (r->copy_src): s3:GetObject on the
 * source key. When only the source object's ACL could allow it,
 * r->access_need_source is set and the copy handler decides with
 * gw_access_source_allows() once it read the source. */
void gw_bucket_owner_check_source(struct gw_req *r, gw_req_cb next);

/* Object reads (GET, HEAD, a copy's source) decide on the cached config. A
 * record of bucket written after that config was learnt (record_ts_us later
 * than r->owner_known_until_us) may belong to a bucket re-created by
 * another account since: then the bucket record is read again, the
 * decision made on it, and next(r) runs when it allows (1 is returned; the
 * caller stops and next starts the read over). 0: the decision stands.
 * bucket must be the one whose check set r->owner_known_until_us last (the
 * source bucket of a copy, the request's bucket otherwise). */
int gw_bucket_owner_recheck(struct gw_req *r, const char *bucket, size_t blen,
                            uint64_t record_ts_us, gw_req_cb next);

/* The access decision on r->bucket's record m just read: 1 when r's
 * operation is allowed (or only the object's ACL could allow it: then
 * r->access_need_object is set), else 0 (logged; the caller answers
 * AccessDenied). Refreshes the worker's cache and r->access_cfg with what
 * was read. */
int gw_bucket_owner_allows(struct gw_req *r, const struct msg *m);

/* The same on the copy source's bucket record (s3:GetObject on the source
 * key; 1 also when only the source's ACL could allow it, as above). */
int gw_bucket_owner_allows_source(struct gw_req *r, const struct msg *m);

/* The same decision on a multipart upload record just read, whose etag
 * names the account that initiated it: 1 when that is r's credential's
 * owner (or the record predates owner ids: etag empty), else 0 (logged).
 * Upload-id operations do not read the bucket record, so this is what keeps
 * a stale cached bucket owner from reaching an upload. */
int gw_bucket_owner_allows_upload(struct gw_req *r, const char *owner, size_t olen);

/* What to answer for a key that does not exist: NoSuchKey when r may list
 * the bucket (s3:ListBucket, which the owner may), else AccessDenied, so
 * that a missing key tells no more than S3 tells. */
enum gw_s3_err gw_bucket_owner_missing_key(struct gw_req *r);

#endif
