/* Bucket lifecycle configuration: PutBucketLifecycleConfiguration (and the
 * older PutBucketLifecycle, which is the same request with the rule's own
 * <Prefix>), GetBucketLifecycleConfiguration, DeleteBucketLifecycle. The
 * rules are checked by lifecycle.c and stored under "lifecycle" in the
 * bucket record (bucket_meta.h) in lifecycle.c's canonical XML; the worker
 * of lifecycle_run.c applies them. */
#ifndef GW_S3_LIFECYCLE_H
#define GW_S3_LIFECYCLE_H

#include "request.h"

/* Handlers of the rows of s3_ops.c; each ends in a reply or an error.
 * PUT: 200 once stored (Content-MD5 or an x-amz-checksum-* required);
 * GET: the rules, or 404 NoSuchLifecycleConfiguration; DELETE: 204. */
void gw_s3_lifecycle_put(struct gw_req *r);
void gw_s3_lifecycle_get(struct gw_req *r);
void gw_s3_lifecycle_delete(struct gw_req *r);

#endif
