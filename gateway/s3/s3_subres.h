/* GetBucketAcl / GetObjectAcl / PutBucketAcl / PutObjectAcl and the ACL
 * headers of writes, with ACLs disabled as under S3's "bucket owner
 * enforced" Object Ownership (see s3_subres.c). */
#ifndef GW_S3_ACL_H
#define GW_S3_ACL_H

#include "request.h"

/* The handlers of the rows of s3_ops.c that name ?acl, called
 * after authentication and the bucket-owner check.
 * GetBucketAcl / GetObjectAcl: the owner's FULL_CONTROL grant, once the
 * bucket (no key) or object is known to exist. */
void gw_s3_subres_acl_get(struct gw_req *r);
/* PutBucketAcl / PutObjectAcl: 200 when the headers restate the owner-only
 * ACL and there is no body, else AccessControlListNotSupported. */
void gw_s3_subres_acl_put(struct gw_req *r);

/* 1 when r's x-amz-acl (absent, "private" or "bucket-owner-full-control")
 * and x-amz-grant-* headers (none) ask for no more than the owner's
 * FULL_CONTROL; 0 when they ask for an ACL cairn cannot keep. */
int gw_s3_acl_headers_ok(const struct gw_req *r);

#endif
