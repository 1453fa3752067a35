/* The table of S3 operations and its matcher (see s3_ops.h). The rows are
 * in the order the router tries them; that order is the precedence S3 gives
 * sub-resources over the plain bucket and object operations, so a new row
 * goes where its request would otherwise be taken by a broader one. */
#include "s3_ops.h"

#include <string.h>

#include "http_parser.h"
#include "multipart.h"
#include "s3_bucket.h"
#include "s3_bucket_tagging.h"
#include "s3_cors.h"
#include "s3_lifecycle.h"
#include "s3_list.h"
#include "s3_multidelete.h"
#include "s3_object.h"
#include "s3_policy.h"
#include "s3_post.h"
#include "s3_subres.h"
#include "s3_tagging.h"
#include "s3_versions.h"

#include "cn/rc.h"

/* Rows whose handler answers NotImplemented. */
static void gw_s3_ops_reply_not_implemented(struct gw_req *r)
{
    gw_req_error(r, GW_S3_NOT_IMPLEMENTED, NULL);
}

/* Rows that are no operation of their target. */
static void gw_s3_ops_reply_method_not_allowed(struct gw_req *r)
{
    gw_req_error(r, GW_S3_METHOD_NOT_ALLOWED, NULL);
}

/* Every sub-resource a NotImplemented row names: with any other method or
 * target than those rows give, the request is NotImplemented all the same. */
static const char *const gw_s3_ops_unsupported_subs[] = {
    "website",
    "logging", "notification", "replication", "encryption",
    "object-lock", "retention", "legal-hold", "accelerate", "requestPayment", "restore",
    "select", "torrent", "attributes", "analytics", "metrics", "inventory",
    "intelligent-tiering", NULL,
};

#define GW_S3_OPS_B GW_S3_OP_BUCKET
#define GW_S3_OPS_O GW_S3_OP_OBJECT

/* A GET of a bucket configuration that is never set: s3_bucket.c answers
 * what S3 answers for a bucket without one. */
#define GW_S3_OPS_CONFIG(id_, name_, sub_, doc_)                                                   \
    [id_] = {.id = id_, .name = name_, .method = "GET", .targets = GW_S3_OPS_B, .param = sub_,     \
             .handler = gw_s3_bucket_config_get, .kind = GW_S3_OP_SERVED, .doc = doc_}

/* An operation on a sub-resource that is answered NotImplemented. */
#define GW_S3_OPS_NI(id_, name_, method_, targets_, sub_, doc_)                                    \
    [id_] = {.id = id_, .name = name_, .method = method_, .targets = targets_, .param = sub_,      \
             .handler = gw_s3_ops_reply_not_implemented, .kind = GW_S3_OP_UNSUPPORTED,             \
             .doc = doc_}

/* A served operation selected by method, target and at most a parameter. */
#define GW_S3_OPS_OP(id_, name_, method_, targets_, param_, handler_, checks_, doc_)               \
    [id_] = {.id = id_, .name = name_, .method = method_, .targets = targets_, .param = param_,    \
             .handler = handler_, .kind = GW_S3_OP_SERVED, .checks = checks_, .doc = doc_}

#define GW_S3_OPS_WRITE (GW_S3_OP_CHECK_ACL | GW_S3_OP_CHECK_VERSION)

const struct gw_s3_op gw_s3_ops_table[GW_S3_OP_COUNT] = {
    /* the GET rows of the never-set configurations are GW_S3_OPS_CONFIG: s3_bucket.c answers */
    GW_S3_OPS_OP(GW_S3_OP_GET_BUCKET_VERSIONING, "GetBucketVersioning", "GET", GW_S3_OPS_B,
                 "versioning", gw_s3_versions_config_get, 0,
                 "Status Enabled or Suspended; empty VersioningConfiguration when never set"),
    GW_S3_OPS_OP(GW_S3_OP_GET_BUCKET_POLICY, "GetBucketPolicy", "GET", GW_S3_OPS_B, "policy",
                 gw_s3_policy_get, 0, "the stored JSON; 404 NoSuchBucketPolicy when none"),
    GW_S3_OPS_OP(GW_S3_OP_GET_BUCKET_LIFECYCLE_CONFIGURATION, "GetBucketLifecycleConfiguration",
                 "GET", GW_S3_OPS_B, "lifecycle", gw_s3_lifecycle_get, 0,
                 "404 NoSuchLifecycleConfiguration when none is set"),
    GW_S3_OPS_OP(GW_S3_OP_GET_BUCKET_TAGGING, "GetBucketTagging", "GET", GW_S3_OPS_B, "tagging",
                 gw_s3_bucket_tagging_get, 0, "404 NoSuchTagSet when none is set"),
    GW_S3_OPS_CONFIG(GW_S3_OP_GET_BUCKET_ENCRYPTION, "GetBucketEncryption", "encryption",
                     "404 ServerSideEncryptionConfigurationNotFoundError"),
    GW_S3_OPS_CONFIG(GW_S3_OP_GET_BUCKET_WEBSITE, "GetBucketWebsite", "website",
                     "404 NoSuchWebsiteConfiguration"),
    GW_S3_OPS_CONFIG(GW_S3_OP_GET_BUCKET_REPLICATION, "GetBucketReplication", "replication",
                     "404 ReplicationConfigurationNotFoundError"),
    GW_S3_OPS_CONFIG(GW_S3_OP_GET_OBJECT_LOCK_CONFIGURATION, "GetObjectLockConfiguration",
                     "object-lock", "404 ObjectLockConfigurationNotFoundError"),
    GW_S3_OPS_CONFIG(GW_S3_OP_GET_BUCKET_LOGGING, "GetBucketLogging", "logging",
                     "an empty BucketLoggingStatus"),
    GW_S3_OPS_CONFIG(GW_S3_OP_GET_BUCKET_ACCELERATE_CONFIGURATION,
                     "GetBucketAccelerateConfiguration", "accelerate",
                     "an empty AccelerateConfiguration"),
    GW_S3_OPS_CONFIG(GW_S3_OP_GET_BUCKET_NOTIFICATION_CONFIGURATION,
                     "GetBucketNotificationConfiguration", "notification",
                     "an empty NotificationConfiguration"),
    GW_S3_OPS_CONFIG(GW_S3_OP_GET_BUCKET_REQUEST_PAYMENT, "GetBucketRequestPayment",
                     "requestPayment", "Payer BucketOwner"),
    GW_S3_OPS_OP(GW_S3_OP_GET_BUCKET_OWNERSHIP_CONTROLS, "GetBucketOwnershipControls", "GET",
                 GW_S3_OPS_B, "ownershipControls", gw_s3_policy_ownership_get, 0,
                 "404 OwnershipControlsNotFoundError when none is set"),
    GW_S3_OPS_OP(GW_S3_OP_GET_PUBLIC_ACCESS_BLOCK, "GetPublicAccessBlock", "GET", GW_S3_OPS_B,
                 "publicAccessBlock", gw_s3_policy_pab_get, 0,
                 "404 NoSuchPublicAccessBlockConfiguration when none is set"),
    GW_S3_OPS_OP(GW_S3_OP_GET_BUCKET_POLICY_STATUS, "GetBucketPolicyStatus", "GET", GW_S3_OPS_B,
                 "policyStatus", gw_s3_policy_status_get, 0,
                 "IsPublic: the policy allows anyone (\"*\") without an aws:SourceIp limit"),

    GW_S3_OPS_OP(GW_S3_OP_GET_BUCKET_CORS, "GetBucketCors", "GET", GW_S3_OPS_B, "cors",
                 gw_s3_cors_get, 0, "404 NoSuchCORSConfiguration when none is set"),
    GW_S3_OPS_OP(GW_S3_OP_PUT_BUCKET_CORS, "PutBucketCors", "PUT", GW_S3_OPS_B, "cors",
                 gw_s3_cors_put, 0, "up to 100 rules"),
    GW_S3_OPS_OP(GW_S3_OP_DELETE_BUCKET_CORS, "DeleteBucketCors", "DELETE", GW_S3_OPS_B, "cors",
                 gw_s3_cors_delete, 0, "204"),
    GW_S3_OPS_OP(GW_S3_OP_CORS_PREFLIGHT, "CorsPreflight", "OPTIONS",
                 GW_S3_OPS_B | GW_S3_OPS_O, NULL, gw_s3_cors_preflight, GW_S3_OP_NO_AUTH,
                 "the browser's preflight (OPTIONS object), unauthenticated: 200 with "
                 "Access-Control-* from the first rule that allows it, else 403 AccessForbidden"),

    GW_S3_OPS_OP(GW_S3_OP_GET_OBJECT_TAGGING, "GetObjectTagging", "GET", GW_S3_OPS_O, "tagging",
                 gw_s3_tagging_get, GW_S3_OP_CHECK_VERSION, "the stored TagSet (empty: none)"),
    GW_S3_OPS_OP(GW_S3_OP_PUT_OBJECT_TAGGING, "PutObjectTagging", "PUT", GW_S3_OPS_O, "tagging",
                 gw_s3_tagging_put, GW_S3_OP_CHECK_VERSION,
                 "up to 10 tags; the object's record is rewritten, its data untouched"),
    GW_S3_OPS_OP(GW_S3_OP_DELETE_OBJECT_TAGGING, "DeleteObjectTagging", "DELETE", GW_S3_OPS_O,
                 "tagging", gw_s3_tagging_delete, GW_S3_OP_CHECK_VERSION, "204"),
    GW_S3_OPS_OP(GW_S3_OP_GET_BUCKET_ACL, "GetBucketAcl", "GET",
                 GW_S3_OP_SERVICE | GW_S3_OPS_B, "acl", gw_s3_subres_acl_get, 0,
                 "the stored ACL (the owner's FULL_CONTROL when none); "
                 "NoSuchBucket when no bucket is named"),
    GW_S3_OPS_OP(GW_S3_OP_GET_OBJECT_ACL, "GetObjectAcl", "GET", GW_S3_OPS_O, "acl",
                 gw_s3_subres_acl_get, GW_S3_OP_CHECK_VERSION, "the stored ACL (the bucket owner's FULL_CONTROL when none); versionId: that version's"),
    GW_S3_OPS_OP(GW_S3_OP_PUT_BUCKET_ACL, "PutBucketAcl", "PUT",
                 GW_S3_OP_SERVICE | GW_S3_OPS_B, "acl", gw_s3_subres_acl_put, 0,
                 "x-amz-acl, x-amz-grant-* or an AccessControlPolicy body; "
                 "AccessControlListNotSupported under BucketOwnerEnforced"),
    GW_S3_OPS_OP(GW_S3_OP_PUT_OBJECT_ACL, "PutObjectAcl", "PUT", GW_S3_OPS_O, "acl",
                 gw_s3_subres_acl_put, GW_S3_OP_CHECK_VERSION, "as PutBucketAcl"),
    [GW_S3_OP_ACL_METHOD_NOT_ALLOWED] = {.id = GW_S3_OP_ACL_METHOD_NOT_ALLOWED,
                                         .name = "AclMethodNotAllowed", .targets = GW_S3_OP_ANY,
                                         .param = "acl",
                                         .handler = gw_s3_ops_reply_method_not_allowed,
                                         .kind = GW_S3_OP_REFUSED,
                                         .doc = "?acl with a method other than GET or PUT"},

    GW_S3_OPS_OP(GW_S3_OP_PUT_BUCKET_POLICY, "PutBucketPolicy", "PUT", GW_S3_OPS_B, "policy",
                 gw_s3_policy_put, 0,
                 "JSON up to 20 KiB, checked when stored (400 MalformedPolicy); see below"),
    GW_S3_OPS_OP(GW_S3_OP_DELETE_BUCKET_POLICY, "DeleteBucketPolicy", "DELETE", GW_S3_OPS_B,
                 "policy", gw_s3_policy_delete, 0, "204"),
    GW_S3_OPS_OP(GW_S3_OP_PUT_BUCKET_LIFECYCLE_CONFIGURATION, "PutBucketLifecycleConfiguration",
                 "PUT", GW_S3_OPS_B, "lifecycle", gw_s3_lifecycle_put, 0,
                 "up to 1000 rules: Expiration (ExpiredObjectDeleteMarker too), "
                 "AbortIncompleteMultipartUpload, NoncurrentVersionExpiration "
                 "(NewerNoncurrentVersions too); also PutBucketLifecycle's form; "
                 "Content-MD5 or x-amz-checksum-* required"),
    GW_S3_OPS_OP(GW_S3_OP_DELETE_BUCKET_LIFECYCLE, "DeleteBucketLifecycle", "DELETE",
                 GW_S3_OPS_B, "lifecycle", gw_s3_lifecycle_delete, 0, "204"),
    GW_S3_OPS_OP(GW_S3_OP_PUT_BUCKET_VERSIONING, "PutBucketVersioning", "PUT", GW_S3_OPS_B,
                 "versioning", gw_s3_versions_config_put, 0,
                 "Enabled or Suspended; MfaDelete Enabled is NotImplemented"),
    GW_S3_OPS_OP(GW_S3_OP_PUT_BUCKET_TAGGING, "PutBucketTagging", "PUT", GW_S3_OPS_B, "tagging",
                 gw_s3_bucket_tagging_put, 0,
                 "up to 50 tags; Content-MD5 or x-amz-checksum-* required; 204"),
    GW_S3_OPS_OP(GW_S3_OP_DELETE_BUCKET_TAGGING, "DeleteBucketTagging", "DELETE", GW_S3_OPS_B,
                 "tagging", gw_s3_bucket_tagging_delete, 0, "204"),
    GW_S3_OPS_NI(GW_S3_OP_PUT_BUCKET_WEBSITE, "PutBucketWebsite", "PUT", GW_S3_OPS_B, "website",
                 ""),
    GW_S3_OPS_NI(GW_S3_OP_DELETE_BUCKET_WEBSITE, "DeleteBucketWebsite", "DELETE", GW_S3_OPS_B,
                 "website", ""),
    GW_S3_OPS_NI(GW_S3_OP_PUT_BUCKET_LOGGING, "PutBucketLogging", "PUT", GW_S3_OPS_B, "logging",
                 ""),
    GW_S3_OPS_NI(GW_S3_OP_PUT_BUCKET_NOTIFICATION_CONFIGURATION,
                 "PutBucketNotificationConfiguration", "PUT", GW_S3_OPS_B, "notification", ""),
    GW_S3_OPS_NI(GW_S3_OP_PUT_BUCKET_REPLICATION, "PutBucketReplication", "PUT", GW_S3_OPS_B,
                 "replication", ""),
    GW_S3_OPS_NI(GW_S3_OP_DELETE_BUCKET_REPLICATION, "DeleteBucketReplication", "DELETE",
                 GW_S3_OPS_B, "replication", ""),
    GW_S3_OPS_NI(GW_S3_OP_PUT_BUCKET_ENCRYPTION, "PutBucketEncryption", "PUT", GW_S3_OPS_B,
                 "encryption", "nothing is stored encrypted"),
    GW_S3_OPS_NI(GW_S3_OP_DELETE_BUCKET_ENCRYPTION, "DeleteBucketEncryption", "DELETE",
                 GW_S3_OPS_B, "encryption", ""),
    GW_S3_OPS_NI(GW_S3_OP_PUT_OBJECT_LOCK_CONFIGURATION, "PutObjectLockConfiguration", "PUT",
                 GW_S3_OPS_B, "object-lock", ""),
    GW_S3_OPS_NI(GW_S3_OP_GET_OBJECT_RETENTION, "GetObjectRetention", "GET", GW_S3_OPS_O,
                 "retention", ""),
    GW_S3_OPS_NI(GW_S3_OP_PUT_OBJECT_RETENTION, "PutObjectRetention", "PUT", GW_S3_OPS_O,
                 "retention", ""),
    GW_S3_OPS_NI(GW_S3_OP_GET_OBJECT_LEGAL_HOLD, "GetObjectLegalHold", "GET", GW_S3_OPS_O,
                 "legal-hold", ""),
    GW_S3_OPS_NI(GW_S3_OP_PUT_OBJECT_LEGAL_HOLD, "PutObjectLegalHold", "PUT", GW_S3_OPS_O,
                 "legal-hold", ""),
    GW_S3_OPS_NI(GW_S3_OP_PUT_BUCKET_ACCELERATE_CONFIGURATION,
                 "PutBucketAccelerateConfiguration", "PUT", GW_S3_OPS_B, "accelerate", ""),
    GW_S3_OPS_NI(GW_S3_OP_PUT_BUCKET_REQUEST_PAYMENT, "PutBucketRequestPayment", "PUT",
                 GW_S3_OPS_B, "requestPayment", ""),
    GW_S3_OPS_NI(GW_S3_OP_RESTORE_OBJECT, "RestoreObject", "POST", GW_S3_OPS_O, "restore",
                 "there is no archive tier"),
    GW_S3_OPS_NI(GW_S3_OP_SELECT_OBJECT_CONTENT, "SelectObjectContent", "POST", GW_S3_OPS_O,
                 "select", ""),
    GW_S3_OPS_NI(GW_S3_OP_GET_OBJECT_TORRENT, "GetObjectTorrent", "GET", GW_S3_OPS_O, "torrent",
                 ""),
    GW_S3_OPS_NI(GW_S3_OP_GET_OBJECT_ATTRIBUTES, "GetObjectAttributes", "GET", GW_S3_OPS_O,
                 "attributes", ""),
    GW_S3_OPS_NI(GW_S3_OP_GET_BUCKET_ANALYTICS_CONFIGURATION, "GetBucketAnalyticsConfiguration",
                 "GET", GW_S3_OPS_B, "analytics", "also ListBucketAnalyticsConfigurations"),
    GW_S3_OPS_NI(GW_S3_OP_PUT_BUCKET_ANALYTICS_CONFIGURATION, "PutBucketAnalyticsConfiguration",
                 "PUT", GW_S3_OPS_B, "analytics", ""),
    GW_S3_OPS_NI(GW_S3_OP_DELETE_BUCKET_ANALYTICS_CONFIGURATION,
                 "DeleteBucketAnalyticsConfiguration", "DELETE", GW_S3_OPS_B, "analytics", ""),
    GW_S3_OPS_NI(GW_S3_OP_GET_BUCKET_METRICS_CONFIGURATION, "GetBucketMetricsConfiguration",
                 "GET", GW_S3_OPS_B, "metrics", "also ListBucketMetricsConfigurations"),
    GW_S3_OPS_NI(GW_S3_OP_PUT_BUCKET_METRICS_CONFIGURATION, "PutBucketMetricsConfiguration",
                 "PUT", GW_S3_OPS_B, "metrics", ""),
    GW_S3_OPS_NI(GW_S3_OP_DELETE_BUCKET_METRICS_CONFIGURATION, "DeleteBucketMetricsConfiguration",
                 "DELETE", GW_S3_OPS_B, "metrics", ""),
    GW_S3_OPS_NI(GW_S3_OP_GET_BUCKET_INVENTORY_CONFIGURATION, "GetBucketInventoryConfiguration",
                 "GET", GW_S3_OPS_B, "inventory", "also ListBucketInventoryConfigurations"),
    GW_S3_OPS_NI(GW_S3_OP_PUT_BUCKET_INVENTORY_CONFIGURATION, "PutBucketInventoryConfiguration",
                 "PUT", GW_S3_OPS_B, "inventory", ""),
    GW_S3_OPS_NI(GW_S3_OP_DELETE_BUCKET_INVENTORY_CONFIGURATION,
                 "DeleteBucketInventoryConfiguration", "DELETE", GW_S3_OPS_B, "inventory", ""),
    GW_S3_OPS_OP(GW_S3_OP_PUT_BUCKET_OWNERSHIP_CONTROLS, "PutBucketOwnershipControls", "PUT",
                 GW_S3_OPS_B, "ownershipControls", gw_s3_policy_ownership_put, 0,
                 "BucketOwnerEnforced, BucketOwnerPreferred or ObjectWriter"),
    GW_S3_OPS_OP(GW_S3_OP_DELETE_BUCKET_OWNERSHIP_CONTROLS, "DeleteBucketOwnershipControls",
                 "DELETE", GW_S3_OPS_B, "ownershipControls", gw_s3_policy_ownership_delete, 0,
                 "204; the bucket is then ObjectWriter"),
    GW_S3_OPS_OP(GW_S3_OP_PUT_PUBLIC_ACCESS_BLOCK, "PutPublicAccessBlock", "PUT", GW_S3_OPS_B,
                 "publicAccessBlock", gw_s3_policy_pab_put, 0, "the four flags, enforced"),
    GW_S3_OPS_OP(GW_S3_OP_DELETE_PUBLIC_ACCESS_BLOCK, "DeletePublicAccessBlock", "DELETE",
                 GW_S3_OPS_B, "publicAccessBlock", gw_s3_policy_pab_delete, 0, "204"),
    GW_S3_OPS_NI(GW_S3_OP_GET_BUCKET_INTELLIGENT_TIERING_CONFIGURATION,
                 "GetBucketIntelligentTieringConfiguration", "GET", GW_S3_OPS_B,
                 "intelligent-tiering", "also ListBucketIntelligentTieringConfigurations"),
    GW_S3_OPS_NI(GW_S3_OP_PUT_BUCKET_INTELLIGENT_TIERING_CONFIGURATION,
                 "PutBucketIntelligentTieringConfiguration", "PUT", GW_S3_OPS_B,
                 "intelligent-tiering", ""),
    GW_S3_OPS_NI(GW_S3_OP_DELETE_BUCKET_INTELLIGENT_TIERING_CONFIGURATION,
                 "DeleteBucketIntelligentTieringConfiguration", "DELETE", GW_S3_OPS_B,
                 "intelligent-tiering", ""),
    [GW_S3_OP_UNSUPPORTED_SUBRESOURCE] = {.id = GW_S3_OP_UNSUPPORTED_SUBRESOURCE,
                                          .name = "UnsupportedSubresource",
                                          .targets = GW_S3_OP_ANY,
                                          .any_param = gw_s3_ops_unsupported_subs,
                                          .handler = gw_s3_ops_reply_not_implemented,
                                          .kind = GW_S3_OP_UNSUPPORTED,
                                          .doc = "any other request naming one of these"},

    GW_S3_OPS_OP(GW_S3_OP_LIST_BUCKETS, "ListBuckets", "GET", GW_S3_OP_SERVICE, NULL,
                 gw_s3_bucket_list_all, 0, "the caller's buckets, one page"),

    GW_S3_OPS_OP(GW_S3_OP_CREATE_BUCKET, "CreateBucket", "PUT", GW_S3_OPS_B, NULL,
                 gw_s3_bucket_create, GW_S3_OP_CHECK_ACL, ""),
    GW_S3_OPS_OP(GW_S3_OP_HEAD_BUCKET, "HeadBucket", "HEAD", GW_S3_OPS_B, NULL, gw_s3_bucket_head,
                 0, ""),
    GW_S3_OPS_OP(GW_S3_OP_DELETE_BUCKET, "DeleteBucket", "DELETE", GW_S3_OPS_B, NULL,
                 gw_s3_bucket_delete, 0, ""),
    GW_S3_OPS_OP(GW_S3_OP_LIST_MULTIPART_UPLOADS, "ListMultipartUploads", "GET", GW_S3_OPS_B,
                 "uploads", gw_multipart_list_uploads, 0, ""),
    GW_S3_OPS_OP(GW_S3_OP_GET_BUCKET_LOCATION, "GetBucketLocation", "GET", GW_S3_OPS_B,
                 "location", gw_s3_bucket_location, 0, ""),
    GW_S3_OPS_OP(GW_S3_OP_LIST_OBJECT_VERSIONS, "ListObjectVersions", "GET", GW_S3_OPS_B,
                 "versions", gw_s3_versions_list, 0,
                 "prefix, delimiter, key-marker/version-id-marker, delete markers, IsLatest"),
    [GW_S3_OP_LIST_OBJECTS_V2] = {.id = GW_S3_OP_LIST_OBJECTS_V2, .name = "ListObjectsV2",
                                  .method = "GET", .targets = GW_S3_OPS_B, .param = "list-type",
                                  .param_value = "2", .handler = gw_s3_list_objects,
                                  .kind = GW_S3_OP_SERVED, .doc = ""},
    GW_S3_OPS_OP(GW_S3_OP_LIST_OBJECTS, "ListObjects", "GET", GW_S3_OPS_B, NULL,
                 gw_s3_list_objects, 0, "v1"),
    GW_S3_OPS_OP(GW_S3_OP_DELETE_OBJECTS, "DeleteObjects", "POST", GW_S3_OPS_B, "delete",
                 gw_s3_multidelete, GW_S3_OP_CHECK_ACL, "up to 1000 keys"),
    GW_S3_OPS_OP(GW_S3_OP_POST_OBJECT, "PostObject", "POST", GW_S3_OPS_B, NULL,
                 gw_s3_post_object, GW_S3_OP_NO_AUTH,
                 "browser form upload (multipart/form-data), SigV4 or SigV2 policy"),

    GW_S3_OPS_OP(GW_S3_OP_CREATE_MULTIPART_UPLOAD, "CreateMultipartUpload", "POST", GW_S3_OPS_O,
                 "uploads", gw_multipart_create, GW_S3_OPS_WRITE, ""),
    GW_S3_OPS_OP(GW_S3_OP_COMPLETE_MULTIPART_UPLOAD, "CompleteMultipartUpload", "POST",
                 GW_S3_OPS_O, "uploadId", gw_multipart_complete, GW_S3_OPS_WRITE, ""),
    [GW_S3_OP_UPLOAD_PART_COPY] = {.id = GW_S3_OP_UPLOAD_PART_COPY, .name = "UploadPartCopy",
                                   .method = "PUT", .targets = GW_S3_OPS_O, .param = "uploadId",
                                   .header = "x-amz-copy-source",
                                   .handler = gw_multipart_upload_part, .kind = GW_S3_OP_SERVED,
                                   .checks = GW_S3_OPS_WRITE, .doc = ""},
    GW_S3_OPS_OP(GW_S3_OP_UPLOAD_PART, "UploadPart", "PUT", GW_S3_OPS_O, "uploadId",
                 gw_multipart_upload_part, GW_S3_OPS_WRITE, ""),
    GW_S3_OPS_OP(GW_S3_OP_ABORT_MULTIPART_UPLOAD, "AbortMultipartUpload", "DELETE", GW_S3_OPS_O,
                 "uploadId", gw_multipart_abort, GW_S3_OP_CHECK_VERSION, ""),
    GW_S3_OPS_OP(GW_S3_OP_LIST_PARTS, "ListParts", "GET", GW_S3_OPS_O, "uploadId",
                 gw_multipart_list_parts, GW_S3_OP_CHECK_VERSION, ""),
    [GW_S3_OP_COPY_OBJECT] = {.id = GW_S3_OP_COPY_OBJECT, .name = "CopyObject", .method = "PUT",
                              .targets = GW_S3_OPS_O, .header = "x-amz-copy-source",
                              .handler = gw_s3_object_copy, .kind = GW_S3_OP_SERVED,
                              .checks = GW_S3_OPS_WRITE, .doc = ""},
    GW_S3_OPS_OP(GW_S3_OP_PUT_OBJECT, "PutObject", "PUT", GW_S3_OPS_O, NULL, gw_s3_object_put,
                 GW_S3_OPS_WRITE, ""),
    GW_S3_OPS_OP(GW_S3_OP_GET_OBJECT, "GetObject", "GET", GW_S3_OPS_O, NULL, gw_s3_object_get,
                 GW_S3_OP_CHECK_VERSION, ""),
    GW_S3_OPS_OP(GW_S3_OP_HEAD_OBJECT, "HeadObject", "HEAD", GW_S3_OPS_O, NULL, gw_s3_object_get,
                 GW_S3_OP_CHECK_VERSION, ""),
    GW_S3_OPS_OP(GW_S3_OP_DELETE_OBJECT, "DeleteObject", "DELETE", GW_S3_OPS_O, NULL,
                 gw_s3_object_delete, GW_S3_OP_CHECK_VERSION, "204, also for a missing key"),

    [GW_S3_OP_METHOD_NOT_ALLOWED] = {.id = GW_S3_OP_METHOD_NOT_ALLOWED,
                                     .name = "MethodNotAllowed", .targets = GW_S3_OP_ANY,
                                     .handler = gw_s3_ops_reply_method_not_allowed,
                                     .kind = GW_S3_OP_REFUSED, .checks = GW_S3_OPS_WRITE,
                                     .doc = "any other request"},
};

/* The action column (IAM action names, access.h): what the access decision
 * asks for each row. Rows left out (configurations the gateway does not
 * keep, NotImplemented rows) are decided as "s3:" + their name, which only
 * the owner, or a policy granting it (or "s3:*"), allows. */
static const char *const gw_s3_ops_actions[GW_S3_OP_COUNT] = {
    [GW_S3_OP_GET_BUCKET_VERSIONING] = "s3:GetBucketVersioning",
    [GW_S3_OP_GET_BUCKET_POLICY] = "s3:GetBucketPolicy",
    [GW_S3_OP_GET_BUCKET_LIFECYCLE_CONFIGURATION] = "s3:GetLifecycleConfiguration",
    [GW_S3_OP_GET_BUCKET_TAGGING] = "s3:GetBucketTagging",
    [GW_S3_OP_GET_BUCKET_OWNERSHIP_CONTROLS] = "s3:GetBucketOwnershipControls",
    [GW_S3_OP_GET_PUBLIC_ACCESS_BLOCK] = "s3:GetBucketPublicAccessBlock",
    [GW_S3_OP_GET_BUCKET_POLICY_STATUS] = "s3:GetBucketPolicyStatus",
    [GW_S3_OP_GET_BUCKET_CORS] = "s3:GetBucketCORS",
    [GW_S3_OP_PUT_BUCKET_CORS] = "s3:PutBucketCORS",
    [GW_S3_OP_DELETE_BUCKET_CORS] = "s3:PutBucketCORS",
    [GW_S3_OP_GET_OBJECT_TAGGING] = "s3:GetObjectTagging",
    [GW_S3_OP_PUT_OBJECT_TAGGING] = "s3:PutObjectTagging",
    [GW_S3_OP_DELETE_OBJECT_TAGGING] = "s3:DeleteObjectTagging",
    [GW_S3_OP_GET_BUCKET_ACL] = "s3:GetBucketAcl",
    [GW_S3_OP_GET_OBJECT_ACL] = "s3:GetObjectAcl",
    [GW_S3_OP_PUT_BUCKET_ACL] = "s3:PutBucketAcl",
    [GW_S3_OP_PUT_OBJECT_ACL] = "s3:PutObjectAcl",
    [GW_S3_OP_PUT_BUCKET_POLICY] = "s3:PutBucketPolicy",
    [GW_S3_OP_DELETE_BUCKET_POLICY] = "s3:DeleteBucketPolicy",
    [GW_S3_OP_PUT_BUCKET_OWNERSHIP_CONTROLS] = "s3:PutBucketOwnershipControls",
    [GW_S3_OP_DELETE_BUCKET_OWNERSHIP_CONTROLS] = "s3:PutBucketOwnershipControls",
    [GW_S3_OP_PUT_PUBLIC_ACCESS_BLOCK] = "s3:PutBucketPublicAccessBlock",
    [GW_S3_OP_DELETE_PUBLIC_ACCESS_BLOCK] = "s3:PutBucketPublicAccessBlock",
    [GW_S3_OP_LIST_BUCKETS] = "s3:ListAllMyBuckets",
    [GW_S3_OP_CREATE_BUCKET] = "s3:CreateBucket",
    [GW_S3_OP_HEAD_BUCKET] = "s3:ListBucket",
    [GW_S3_OP_DELETE_BUCKET] = "s3:DeleteBucket",
    [GW_S3_OP_LIST_MULTIPART_UPLOADS] = "s3:ListBucketMultipartUploads",
    [GW_S3_OP_GET_BUCKET_LOCATION] = "s3:GetBucketLocation",
    [GW_S3_OP_LIST_OBJECT_VERSIONS] = "s3:ListBucketVersions",
    [GW_S3_OP_LIST_OBJECTS_V2] = "s3:ListBucket",
    [GW_S3_OP_LIST_OBJECTS] = "s3:ListBucket",
    [GW_S3_OP_DELETE_OBJECTS] = "s3:DeleteObject",
    [GW_S3_OP_CREATE_MULTIPART_UPLOAD] = "s3:PutObject",
    [GW_S3_OP_COMPLETE_MULTIPART_UPLOAD] = "s3:PutObject",
    [GW_S3_OP_UPLOAD_PART_COPY] = "s3:PutObject",
    [GW_S3_OP_UPLOAD_PART] = "s3:PutObject",
    [GW_S3_OP_ABORT_MULTIPART_UPLOAD] = "s3:AbortMultipartUpload",
    [GW_S3_OP_LIST_PARTS] = "s3:ListMultipartUploadParts",
    [GW_S3_OP_COPY_OBJECT] = "s3:PutObject",
    [GW_S3_OP_PUT_OBJECT] = "s3:PutObject",
    [GW_S3_OP_GET_OBJECT] = "s3:GetObject",
    [GW_S3_OP_HEAD_OBJECT] = "s3:GetObject",
    [GW_S3_OP_DELETE_OBJECT] = "s3:DeleteObject",
    [GW_S3_OP_POST_OBJECT] = "s3:PutObject",
    [GW_S3_OP_PUT_BUCKET_LIFECYCLE_CONFIGURATION] = "s3:PutLifecycleConfiguration",
    [GW_S3_OP_DELETE_BUCKET_LIFECYCLE] = "s3:PutLifecycleConfiguration",
    [GW_S3_OP_PUT_BUCKET_TAGGING] = "s3:PutBucketTagging",
    [GW_S3_OP_DELETE_BUCKET_TAGGING] = "s3:PutBucketTagging",
};

/* "s3:" + name for the rows without an entry above, written once at load
 * time (before any worker thread reads them). */
static char gw_s3_ops_action_names[GW_S3_OP_COUNT][72];

__attribute__((constructor)) static void gw_s3_ops_action_names_init(void)
{
    for (size_t i = 0; i < GW_S3_OP_COUNT; i++)
        snprintf(gw_s3_ops_action_names[i], sizeof(gw_s3_ops_action_names[0]), "s3:%s",
                 gw_s3_ops_table[i].name);
}

const char *gw_s3_op_action(const struct gw_s3_op *op)
{
    if (op == NULL)
        return "s3:Unknown";
    if (gw_s3_ops_actions[op->id] != NULL)
        return gw_s3_ops_actions[op->id];
    return gw_s3_ops_action_names[op->id];
}

/* Does in name one of the parameters of the NULL-terminated list? */
static int gw_s3_ops_has_any_param(const struct gw_s3_ops_input *in, const char *const *list)
{
    for (; *list != NULL; list++)
        if (in->param(in->ctx, *list) != NULL)
            return 1;
    return 0;
}

/* Does row op take the request in, whose target is the bit target? */
static int gw_s3_ops_row_matches(const struct gw_s3_op *op, const struct gw_s3_ops_input *in,
                                 unsigned target)
{
    if ((op->targets & target) == 0)
        return 0;
    if (op->method != NULL && !gw_http_token_eq(in->method, in->method_len, op->method))
        return 0;
    if (op->param != NULL) {
        const char *v = in->param(in->ctx, op->param);
        if (v == NULL || (op->param_value != NULL && strcmp(v, op->param_value) != 0))
            return 0;
    }
    if (op->any_param != NULL && !gw_s3_ops_has_any_param(in, op->any_param))
        return 0;
    if (op->header != NULL && !in->header(in->ctx, op->header))
        return 0;
    return 1;
}

const struct gw_s3_op *gw_s3_ops_match(const struct gw_s3_ops_input *in)
{
    unsigned target = in->has_key      ? GW_S3_OP_OBJECT
                      : in->has_bucket ? GW_S3_OP_BUCKET
                                       : GW_S3_OP_SERVICE;
    for (size_t i = 0; i < GW_S3_OP_COUNT; i++)
        if (gw_s3_ops_row_matches(&gw_s3_ops_table[i], in, target))
            return &gw_s3_ops_table[i];
    return &gw_s3_ops_table[GW_S3_OP_METHOD_NOT_ALLOWED];
}

/* ---- the markdown table ----------------------------------------------- */

/* The target column: "any", or the targets joined by "or". */
static void gw_s3_ops_write_targets(FILE *out, unsigned targets)
{
    static const char *const names[] = {"service", "bucket", "object"};
    if (targets == GW_S3_OP_ANY) {
        fputs("any", out);
        return;
    }
    const char *sep = "";
    for (unsigned i = 0; i < CN_ARRAY_LEN(names); i++)
        if (targets & (1u << i)) {
            fprintf(out, "%s%s", sep, names[i]);
            sep = " or ";
        }
}

/* The selector column: the query parameter (=value), the list of the
 * catch-all, the header; empty for a row of method and target alone. */
static void gw_s3_ops_write_selector(FILE *out, const struct gw_s3_op *op)
{
    const char *sep = "";
    if (op->param != NULL) {
        fprintf(out, "`?%s%s%s`", op->param, op->param_value != NULL ? "=" : "",
                op->param_value != NULL ? op->param_value : "");
        sep = " + ";
    }
    if (op->any_param != NULL) {
        fputs("one of", out);
        for (const char *const *p = op->any_param; *p != NULL; p++)
            fprintf(out, " `?%s`", *p);
        sep = " + ";
    }
    if (op->header != NULL)
        fprintf(out, "%sheader `%s`", sep, op->header);
}

void gw_s3_ops_write_markdown(FILE *out)
{
    static const char *const supported[] = {
        [GW_S3_OP_SERVED] = "yes",
        [GW_S3_OP_UNSUPPORTED] = "NotImplemented",
        [GW_S3_OP_REFUSED] = "MethodNotAllowed",
    };
    fputs("| operation | method | target | selector | supported | notes |\n"
          "|---|---|---|---|---|---|\n",
          out);
    for (size_t i = 0; i < GW_S3_OP_COUNT; i++) {
        const struct gw_s3_op *op = &gw_s3_ops_table[i];
        fprintf(out, "| %s | %s | ", op->name, op->method != NULL ? op->method : "any");
        gw_s3_ops_write_targets(out, op->targets);
        fputs(" | ", out);
        gw_s3_ops_write_selector(out, op);
        fprintf(out, " | %s | %s |\n", supported[op->kind], op->doc);
    }
}
