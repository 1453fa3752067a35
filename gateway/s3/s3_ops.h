/* The table of S3 operations (as redis's command table is of commands): one
 * row per operation the gateway answers, with its method, target, the query
 * parameter or header that selects it, its handler and a line of docs. The
 * router runs the first row that matches a request; `cairn-gateway
 * --list-operations` (and so docs/s3-compat.md) and the access log read it. */
#ifndef GW_S3_OPS_H
#define GW_S3_OPS_H

#include <stddef.h>
#include <stdio.h>

#include "request.h"

/* One id per row, in the table's order, which is the order of precedence:
 * the first row that matches a request is its operation. */
enum gw_s3_op_id {
    /* GET of a bucket configuration the gateway never has (s3_bucket.c) */
    GW_S3_OP_GET_BUCKET_VERSIONING,
    GW_S3_OP_GET_BUCKET_POLICY,
    GW_S3_OP_GET_BUCKET_LIFECYCLE_CONFIGURATION,
    GW_S3_OP_GET_BUCKET_TAGGING,
    GW_S3_OP_GET_BUCKET_ENCRYPTION,
    GW_S3_OP_GET_BUCKET_WEBSITE,
    GW_S3_OP_GET_BUCKET_REPLICATION,
    GW_S3_OP_GET_OBJECT_LOCK_CONFIGURATION,
    GW_S3_OP_GET_BUCKET_LOGGING,
    GW_S3_OP_GET_BUCKET_ACCELERATE_CONFIGURATION,
    GW_S3_OP_GET_BUCKET_NOTIFICATION_CONFIGURATION,
    GW_S3_OP_GET_BUCKET_REQUEST_PAYMENT,
    GW_S3_OP_GET_BUCKET_OWNERSHIP_CONTROLS,
    GW_S3_OP_GET_PUBLIC_ACCESS_BLOCK,
    GW_S3_OP_GET_BUCKET_POLICY_STATUS,
    /* CORS (s3_cors.c) */
    GW_S3_OP_GET_BUCKET_CORS,
    GW_S3_OP_PUT_BUCKET_CORS,
    GW_S3_OP_DELETE_BUCKET_CORS,
    GW_S3_OP_CORS_PREFLIGHT,
    /* object tags (s3_tagging.c) and ACLs (s3_subres.c) */
    GW_S3_OP_GET_OBJECT_TAGGING,
    GW_S3_OP_PUT_OBJECT_TAGGING,
    GW_S3_OP_DELETE_OBJECT_TAGGING,
    GW_S3_OP_GET_BUCKET_ACL,
    GW_S3_OP_GET_OBJECT_ACL,
    GW_S3_OP_PUT_BUCKET_ACL,
    GW_S3_OP_PUT_OBJECT_ACL,
    GW_S3_OP_ACL_METHOD_NOT_ALLOWED,
    /* sub-resources answered NotImplemented */
    GW_S3_OP_PUT_BUCKET_POLICY,
    GW_S3_OP_DELETE_BUCKET_POLICY,
    GW_S3_OP_PUT_BUCKET_LIFECYCLE_CONFIGURATION,
    GW_S3_OP_DELETE_BUCKET_LIFECYCLE,
    GW_S3_OP_PUT_BUCKET_VERSIONING,
    GW_S3_OP_PUT_BUCKET_TAGGING,
    GW_S3_OP_DELETE_BUCKET_TAGGING,
    GW_S3_OP_PUT_BUCKET_WEBSITE,
    GW_S3_OP_DELETE_BUCKET_WEBSITE,
    GW_S3_OP_PUT_BUCKET_LOGGING,
    GW_S3_OP_PUT_BUCKET_NOTIFICATION_CONFIGURATION,
    GW_S3_OP_PUT_BUCKET_REPLICATION,
    GW_S3_OP_DELETE_BUCKET_REPLICATION,
    GW_S3_OP_PUT_BUCKET_ENCRYPTION,
    GW_S3_OP_DELETE_BUCKET_ENCRYPTION,
    GW_S3_OP_PUT_OBJECT_LOCK_CONFIGURATION,
    GW_S3_OP_GET_OBJECT_RETENTION,
    GW_S3_OP_PUT_OBJECT_RETENTION,
    GW_S3_OP_GET_OBJECT_LEGAL_HOLD,
    GW_S3_OP_PUT_OBJECT_LEGAL_HOLD,
    GW_S3_OP_PUT_BUCKET_ACCELERATE_CONFIGURATION,
    GW_S3_OP_PUT_BUCKET_REQUEST_PAYMENT,
    GW_S3_OP_RESTORE_OBJECT,
    GW_S3_OP_SELECT_OBJECT_CONTENT,
    GW_S3_OP_GET_OBJECT_TORRENT,
    GW_S3_OP_GET_OBJECT_ATTRIBUTES,
    GW_S3_OP_GET_BUCKET_ANALYTICS_CONFIGURATION,
    GW_S3_OP_PUT_BUCKET_ANALYTICS_CONFIGURATION,
    GW_S3_OP_DELETE_BUCKET_ANALYTICS_CONFIGURATION,
    GW_S3_OP_GET_BUCKET_METRICS_CONFIGURATION,
    GW_S3_OP_PUT_BUCKET_METRICS_CONFIGURATION,
    GW_S3_OP_DELETE_BUCKET_METRICS_CONFIGURATION,
    GW_S3_OP_GET_BUCKET_INVENTORY_CONFIGURATION,
    GW_S3_OP_PUT_BUCKET_INVENTORY_CONFIGURATION,
    GW_S3_OP_DELETE_BUCKET_INVENTORY_CONFIGURATION,
    GW_S3_OP_PUT_BUCKET_OWNERSHIP_CONTROLS,
    GW_S3_OP_DELETE_BUCKET_OWNERSHIP_CONTROLS,
    GW_S3_OP_PUT_PUBLIC_ACCESS_BLOCK,
    GW_S3_OP_DELETE_PUBLIC_ACCESS_BLOCK,
    GW_S3_OP_GET_BUCKET_INTELLIGENT_TIERING_CONFIGURATION,
    GW_S3_OP_PUT_BUCKET_INTELLIGENT_TIERING_CONFIGURATION,
    GW_S3_OP_DELETE_BUCKET_INTELLIGENT_TIERING_CONFIGURATION,
    GW_S3_OP_UNSUPPORTED_SUBRESOURCE,
    /* the service */
    GW_S3_OP_LIST_BUCKETS,
    /* buckets */
    GW_S3_OP_CREATE_BUCKET,
    GW_S3_OP_HEAD_BUCKET,
    GW_S3_OP_DELETE_BUCKET,
    GW_S3_OP_LIST_MULTIPART_UPLOADS,
    GW_S3_OP_GET_BUCKET_LOCATION,
    GW_S3_OP_LIST_OBJECT_VERSIONS,
    GW_S3_OP_LIST_OBJECTS_V2,
    GW_S3_OP_LIST_OBJECTS,
    GW_S3_OP_DELETE_OBJECTS,
    GW_S3_OP_POST_OBJECT,
    /* objects */
    GW_S3_OP_CREATE_MULTIPART_UPLOAD,
    GW_S3_OP_COMPLETE_MULTIPART_UPLOAD,
    GW_S3_OP_UPLOAD_PART_COPY,
    GW_S3_OP_UPLOAD_PART,
    GW_S3_OP_ABORT_MULTIPART_UPLOAD,
    GW_S3_OP_LIST_PARTS,
    GW_S3_OP_COPY_OBJECT,
    GW_S3_OP_PUT_OBJECT,
    GW_S3_OP_GET_OBJECT,
    GW_S3_OP_HEAD_OBJECT,
    GW_S3_OP_DELETE_OBJECT,
    /* whatever no row above took */
    GW_S3_OP_METHOD_NOT_ALLOWED,
    GW_S3_OP_COUNT
};

/* What a request addresses; a row names the set it applies to. */
#define GW_S3_OP_SERVICE 1u /* no bucket */
#define GW_S3_OP_BUCKET 2u  /* a bucket, no key */
#define GW_S3_OP_OBJECT 4u  /* a key in a bucket */
#define GW_S3_OP_ANY (GW_S3_OP_SERVICE | GW_S3_OP_BUCKET | GW_S3_OP_OBJECT)

/* Checks the router makes, after the bucket-owner check, before the handler
 * of a row that names them. */
#define GW_S3_OP_CHECK_ACL 1u     /* a PUT or POST whose x-amz-acl or x-amz-grant-*
                                     ask for more than the owner's FULL_CONTROL is
                                     refused (s3_subres.c) */
#define GW_S3_OP_CHECK_VERSION 2u /* on a key, a versionId other than "null" is
                                     InvalidArgument: buckets are never versioned */
#define GW_S3_OP_NO_AUTH 4u       /* runs without SigV4 or the owner check: the
                                     CORS preflight, which browsers send without
                                     credentials, and POST object, whose form
                                     carries them (s3_post.c checks both) */

enum gw_s3_op_kind {
    GW_S3_OP_SERVED,      /* an S3 operation the gateway serves */
    GW_S3_OP_UNSUPPORTED, /* an S3 operation answered NotImplemented */
    GW_S3_OP_REFUSED,     /* not an S3 operation: the answer (MethodNotAllowed) to
                             requests no operation above takes */
};

struct gw_s3_op {
    enum gw_s3_op_id id;
    const char *name;                 /* AWS API name (GetObject, UploadPartCopy, ...) */
    const char *method;               /* NULL: any method */
    unsigned targets;                 /* GW_S3_OP_SERVICE | _BUCKET | _OBJECT */
    const char *param;                /* query parameter that must be present, or NULL */
    const char *param_value;          /* ... with this value; NULL: any */
    const char *const *any_param;     /* or one of these (NULL-terminated), or NULL */
    const char *header;               /* request header that must be present, or NULL */
    gw_req_cb handler;                /* must end in gw_req_reply_end() or gw_req_error() */
    enum gw_s3_op_kind kind;
    unsigned checks;                  /* GW_S3_OP_CHECK_* */
    const char *doc;                  /* one line for --list-operations */
};

/* Indexed by enum gw_s3_op_id. */
extern const struct gw_s3_op gw_s3_ops_table[GW_S3_OP_COUNT];

/* A request as the matcher sees it, so that it needs no connection: the
 * router adapts a struct gw_req, unit tests a table of cases. */
struct gw_s3_ops_input {
    const char *method;
    size_t method_len;
    int has_bucket;
    int has_key;
    /* the decoded value of query parameter name ("" when it had no '='),
     * or NULL when absent */
    const char *(*param)(const void *ctx, const char *name);
    /* 1 when the request has header name (case-insensitive) */
    int (*header)(const void *ctx, const char *name);
    const void *ctx;
};

/* The first row of the table that matches in (never NULL: the last row
 * takes every request). Methods compare case-insensitively. */
const struct gw_s3_op *gw_s3_ops_match(const struct gw_s3_ops_input *in);

/* The IAM action the access decision asks for op ("s3:GetObject"; the
 * action column of s3_ops.c). Never NULL. */
const char *gw_s3_op_action(const struct gw_s3_op *op);

/* Writes the table as markdown rows (header row first) to out: operation,
 * method, target, selector, supported, notes. */
void gw_s3_ops_write_markdown(FILE *out);

#endif
