/* Bucket tags: PutBucketTagging, GetBucketTagging, DeleteBucketTagging. The
 * tags (at most 50, S3's rules, tagset.h) live under "tagging" in the bucket
 * record's meta (bucket_meta.h) in tagset.c's query form; a change goes
 * through s3_bucket.c's read-check-write of that record. */
#ifndef GW_S3_BUCKET_TAGGING_H
#define GW_S3_BUCKET_TAGGING_H

#include "request.h"

/* Handlers of the rows of s3_ops.c; each ends in a reply or an error.
 * PUT: the body's TagSet replaces the bucket's tags, 204 (an empty TagSet
 * removes them, as S3); Content-MD5 or an x-amz-checksum-* is required.
 * GET: the stored TagSet, or 404 NoSuchTagSet. DELETE: 204. */
void gw_s3_bucket_tagging_put(struct gw_req *r);
void gw_s3_bucket_tagging_get(struct gw_req *r);
void gw_s3_bucket_tagging_delete(struct gw_req *r);


#endif
