/* GetBucketAcl / GetObjectAcl / PutBucketAcl / PutObjectAcl and the ACL
 * headers of writes, with ACLs disabled as under S3's "bucket owner
 * enforced" Object Ownership; GetObjectTagging / DeleteObjectTagging of
 * objects that cannot have tags (see s3_subres.c). */
#ifndef GW_S3_ACL_H
#define GW_S3_ACL_H

#include "request.h"

/* Serves r when it names ?acl, or GET/DELETE ?tagging of an object
 * (returns 1); else returns 0. Call after authentication and the
 * bucket-owner check. */
int gw_s3_subres_route(struct gw_req *r);

/* 1 when r's x-amz-acl (absent, "private" or "bucket-owner-full-control")
 * and x-amz-grant-* headers (none) ask for no more than the owner's
 * FULL_CONTROL; 0 when they ask for an ACL cairn cannot keep. */
int gw_s3_acl_headers_ok(const struct gw_req *r);

#endif
