/* ACL requests: GetBucketAcl / GetObjectAcl / PutBucketAcl / PutObjectAcl,
 * and the ACL headers of writes (x-amz-acl, x-amz-grant-*), over the model
 * of acl.h; the decisions they feed are access.c's. */
#ifndef GW_S3_ACL_H
#define GW_S3_ACL_H

#include "bucket_meta.h"
#include "request.h"

/* The handlers of the rows of s3_ops.c that name ?acl, called after the
 * router's access decision. GET answers the stored ACL (the owner's
 * FULL_CONTROL alone when none is stored); PUT stores the one given by
 * x-amz-acl, x-amz-grant-* or an AccessControlPolicy body. */
void gw_s3_subres_acl_get(struct gw_req *r);
void gw_s3_subres_acl_put(struct gw_req *r);

/* The router's check of the ACL headers of a write (GW_S3_OP_CHECK_ACL):
 * for PutObject, CopyObject, CreateMultipartUpload and CreateBucket (and
 * PostObject's `acl` form field, called by s3_post.c once the form is read),
 * builds the ACL they ask for and keeps it in r->acl_text when there is one to
 * store (the object or upload record's ":acl", the bucket's "acl"). Returns
 * GW_S3_OK, or the error to answer: InvalidRequest (x-amz-acl together with
 * x-amz-grant-*), InvalidArgument (an unknown canned ACL, a bad grant, a
 * grant to an id that is no account's),
 * AccessControlListNotSupported / InvalidBucketAclWithObjectOwnership (ACLs
 * disabled by BucketOwnerEnforced), AccessDenied (BlockPublicAcls). */
enum gw_s3_err gw_s3_acl_request(struct gw_req *r, const char **why);

/* 1 when r's write would store an ACL or depends on the bucket's Object
 * Ownership: it has x-amz-acl or x-amz-grant-* headers, or its writer is not
 * the bucket's owner. */
int gw_s3_acl_wanted(const struct gw_req *r);

/* CreateBucket: adds the new bucket's access configurations to bm (the
 * ACL kept by gw_s3_acl_request(), its Object Ownership from
 * x-amz-object-ownership or s3.default_object_ownership, and all four
 * public access block flags under BucketOwnerEnforced by default). The
 * values point into r and into pab[5] (the caller's), which must outlive
 * bm's encoding. Returns GW_S3_OK or InvalidArgument (an unknown
 * x-amz-object-ownership). */
enum gw_s3_err gw_s3_acl_create_configs(struct gw_req *r, struct gw_bucket_meta *bm,
                                        char pab[5]);

#endif
