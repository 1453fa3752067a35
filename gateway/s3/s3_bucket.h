/* Bucket operations: ListBuckets, CreateBucket, HeadBucket, DeleteBucket,
 * GetBucketLocation, and the bucket-exists check object handlers run first. */
#ifndef GW_S3_BUCKET_H
#define GW_S3_BUCKET_H

#include "request.h"

void gw_s3_bucket_list_all(struct gw_req *r);
void gw_s3_bucket_create(struct gw_req *r);
void gw_s3_bucket_head(struct gw_req *r);
void gw_s3_bucket_delete(struct gw_req *r);
void gw_s3_bucket_location(struct gw_req *r);

/* GET of a bucket configuration the gateway never has (?versioning, ?policy,
 * ?cors, ?lifecycle, ?tagging, ?encryption, ...; the rows of s3_ops.c that
 * name it, whose param is the sub-resource): answers what S3 answers for a
 * bucket without one (an empty VersioningConfiguration, or
 * NoSuchBucketPolicy, NoSuchCORSConfiguration, ...) once the bucket is known
 * to exist. */
void gw_s3_bucket_config_get(struct gw_req *r);

/* Checks that r->bucket exists, then calls next(r); answers NoSuchBucket
 * (or ServiceUnavailable) itself otherwise. */
void gw_s3_bucket_require(struct gw_req *r, gw_req_cb next);

#endif
