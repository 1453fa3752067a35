/* The table of S3 errors: the only place in the tree where S3 error codes,
 * their HTTP statuses and default messages live (STYLE.md). Handlers name an
 * error by its enum; gw_s3_error_render() writes the <Error> document that
 * every S3 client parses. */
#ifndef GW_S3_ERROR_H
#define GW_S3_ERROR_H

#include <stddef.h>

struct evbuffer;

/* GW_S3_OK (0) means "no error" so that a struct field or an out-parameter
 * can hold either. Every other value is a row of the table in s3_error.c.
 * The enum name is the S3 code in upper snake case, except the few rows whose
 * code is shared (GW_S3_EXPIRED_PRESIGNED is code AccessDenied,
 * GW_S3_URI_TOO_LONG is InvalidURI with status 414). */
enum gw_s3_err {
    GW_S3_OK = 0,
    GW_S3_ACCESS_CONTROL_LIST_NOT_SUPPORTED, /* 400 */
    GW_S3_ACCESS_DENIED,                 /* 403 AccessDenied */
    GW_S3_EXPIRED_PRESIGNED,             /* 403 AccessDenied "Request has expired" */
    GW_S3_ACCESS_FORBIDDEN,              /* 403 a refused CORS preflight */
    GW_S3_AUTHORIZATION_HEADER_MALFORMED,/* 400 */
    GW_S3_AUTHORIZATION_QUERY_PARAMETERS_ERROR, /* 400 */
    GW_S3_BAD_DIGEST,                    /* 400 */
    GW_S3_BAD_REQUEST,                   /* 400 */
    GW_S3_BUCKET_ALREADY_EXISTS,         /* 409 */
    GW_S3_BUCKET_ALREADY_OWNED_BY_YOU,   /* 409 */
    GW_S3_BUCKET_NOT_EMPTY,              /* 409 */
    GW_S3_CONDITIONAL_REQUEST_CONFLICT,  /* 409 */
    GW_S3_ENTITY_TOO_LARGE,              /* 400 */
    GW_S3_ENTITY_TOO_SMALL,              /* 400 */
    GW_S3_EXPIRED_TOKEN,                 /* 400 */
    GW_S3_ILLEGAL_LOCATION_CONSTRAINT,   /* 400 IllegalLocationConstraintException */
    GW_S3_INCOMPLETE_BODY,               /* 400 */
    GW_S3_INTERNAL_ERROR,                /* 500 */
    GW_S3_INVALID_ACCESS_KEY_ID,         /* 403 */
    GW_S3_INVALID_ARGUMENT,              /* 400 */
    GW_S3_INVALID_BUCKET_ACL_WITH_OBJECT_OWNERSHIP, /* 400 */
    GW_S3_INVALID_BUCKET_NAME,           /* 400 */
    GW_S3_INVALID_BUCKET_STATE,          /* 409 */
    GW_S3_INVALID_CHUNK_SIZE,            /* 403 InvalidChunkSizeError */
    GW_S3_INVALID_DIGEST,                /* 400 */
    GW_S3_INVALID_LOCATION_CONSTRAINT,   /* 400 */
    GW_S3_INVALID_OBJECT_STATE,          /* 403 */
    GW_S3_INVALID_PART,                  /* 400 */
    GW_S3_INVALID_PART_NUMBER,           /* 416 InvalidPartNumber */
    GW_S3_INVALID_PART_ORDER,            /* 400 */
    GW_S3_INVALID_POLICY_DOCUMENT,       /* 400 a POST object policy */
    GW_S3_INVALID_RANGE,                 /* 416 */
    GW_S3_INVALID_REQUEST,               /* 400 */
    GW_S3_INVALID_STORAGE_CLASS,         /* 400 */
    GW_S3_INVALID_TAG,                   /* 400 */
    GW_S3_INVALID_URI,                   /* 400 */
    GW_S3_URI_TOO_LONG,                  /* 414 InvalidURI: request line over the limit */
    GW_S3_KEY_TOO_LONG,                  /* 400 KeyTooLongError */
    GW_S3_MALFORMED_ACL_ERROR,           /* 400 MalformedACLError */
    GW_S3_MALFORMED_POLICY,              /* 400 */
    GW_S3_MALFORMED_POST_REQUEST,        /* 400 a POST object body */
    GW_S3_MALFORMED_XML,                 /* 400 */
    GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED,   /* 400 */
    GW_S3_MAX_POST_PRE_DATA_LENGTH_EXCEEDED, /* 400 POST object fields over 20 KiB */
    GW_S3_METADATA_TOO_LARGE,            /* 400 */
    GW_S3_METHOD_NOT_ALLOWED,            /* 405 */
    GW_S3_MISSING_CONTENT_LENGTH,        /* 411 */
    GW_S3_MISSING_REQUEST_BODY,          /* 400 MissingRequestBodyError */
    GW_S3_MISSING_SECURITY_HEADER,       /* 400 */
    GW_S3_NO_SUCH_BUCKET,                /* 404 */
    GW_S3_NO_SUCH_BUCKET_POLICY,         /* 404 */
    GW_S3_NO_SUCH_CORS_CONFIGURATION,    /* 404 */
    GW_S3_NO_SUCH_KEY,                   /* 404 */
    GW_S3_NO_SUCH_PUBLIC_ACCESS_BLOCK_CONFIGURATION, /* 404 */
    GW_S3_NO_SUCH_LIFECYCLE_CONFIGURATION, /* 404 */
    GW_S3_NO_SUCH_TAG_SET,               /* 404 */
    GW_S3_NO_SUCH_UPLOAD,                /* 404 */
    GW_S3_NO_SUCH_VERSION,               /* 404 */
    GW_S3_NO_SUCH_WEBSITE_CONFIGURATION, /* 404 */
    GW_S3_NOT_IMPLEMENTED,               /* 501 */
    GW_S3_NOT_MODIFIED,                  /* 304, sent without a body */
    GW_S3_OWNERSHIP_CONTROLS_NOT_FOUND,  /* 404 OwnershipControlsNotFoundError */
    GW_S3_OBJECT_LOCK_CONFIGURATION_NOT_FOUND, /* 404 ObjectLockConfigurationNotFoundError */
    GW_S3_PRECONDITION_FAILED,           /* 412 */
    GW_S3_REPLICATION_CONFIGURATION_NOT_FOUND, /* 404 ReplicationConfigurationNotFoundError */
    GW_S3_REQUEST_HEADER_SECTION_TOO_LARGE, /* 400 */
    GW_S3_REQUEST_TIMEOUT,               /* 400 */
    GW_S3_REQUEST_TIME_TOO_SKEWED,       /* 403 */
    GW_S3_SERVER_SIDE_ENCRYPTION_CONFIGURATION_NOT_FOUND, /* 404 */
    GW_S3_SERVICE_UNAVAILABLE,           /* 503 */
    GW_S3_SIGNATURE_DOES_NOT_MATCH,      /* 403 */
    GW_S3_SLOW_DOWN,                     /* 503 */
    GW_S3_UNRESOLVABLE_GRANT_BY_EMAIL_ADDRESS, /* 400 */
    GW_S3_X_AMZ_CONTENT_SHA256_MISMATCH, /* 400 XAmzContentSHA256Mismatch */
    GW_S3_ERR_COUNT                      /* not an error: the table size */
};

/* One row of the table. Strings are static. */
struct gw_s3_error_info {
    const char *code;     /* "NoSuchKey" */
    int http_status;      /* 404 */
    const char *message;  /* default <Message> */
};

/* The row for e. An out-of-range value (or GW_S3_OK) gives the InternalError
 * row, so the answer is always usable; never NULL. */
const struct gw_s3_error_info *gw_s3_error_info(enum gw_s3_err e);
const char *gw_s3_error_code(enum gw_s3_err e);
int gw_s3_error_status(enum gw_s3_err e);
const char *gw_s3_error_message(enum gw_s3_err e);
/* 0 for errors whose response carries no body (NotModified 304); also answer
 * HEAD requests without a body, which is the caller's business. */
int gw_s3_error_has_body(enum gw_s3_err e);
/* The S3 error to answer when the store (or a node) gave status rc: none
 * for CN_OK, ServiceUnavailable when nodes did not answer in time or could
 * not be reached (CN_TIMEOUT, CN_IO: the client may retry), InternalError
 * for anything else. The one mapping of store statuses to S3 errors. */
enum gw_s3_err gw_s3_error_from_store(int rc);

/* Reverse lookup by code text (not NUL-terminated). AccessDenied gives
 * GW_S3_ACCESS_DENIED. Returns GW_S3_OK when the code is unknown. */
enum gw_s3_err gw_s3_error_from_code(const char *code, size_t len);

/* An extra child element of <Error>, e.g. {"Key", key, key_len} or
 * {"BucketName", ...}. name is a plain element name (not escaped, so it must
 * be a literal); value is escaped and may hold any bytes. */
struct gw_s3_error_extra {
    const char *name;
    const char *value;
    size_t value_len;
};

/* What goes into one error document. NULL strings are left out except
 * message (NULL: the table's default). resource is the request path as the
 * client sent it (e.g. "/bucket/key"); request_id and host_id are the ids the
 * gateway also puts in x-amz-request-id / x-amz-id-2. */
struct gw_s3_error_doc {
    enum gw_s3_err err;
    const char *message;
    const char *resource;
    size_t resource_len;
    const char *request_id;
    const char *host_id;
    const struct gw_s3_error_extra *extra;
    size_t n_extra;
};

/* Appends `<?xml ...?>\n<Error><Code/><Message/>[extras]<Resource/>
 * <RequestId/><HostId/></Error>` to out, every text XML-escaped. The caller
 * sets Content-Type: application/xml and the status gw_s3_error_status().
 * Returns CN_OK, or CN_ERR if evbuffer could not grow (out then holds a
 * partial document: drain it). Writes nothing for an error without a body
 * (NotModified) and returns CN_OK. */
int gw_s3_error_render(const struct gw_s3_error_doc *doc, struct evbuffer *out);

/* The same into buf[cap]; on CN_OK *len is the length (also NUL-terminated
 * when room is left). CN_TOOBIG if it does not fit (buf content undefined). */
int gw_s3_error_render_buf(const struct gw_s3_error_doc *doc, char *buf, size_t cap,
                           size_t *len);

#endif
