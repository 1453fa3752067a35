/* The S3 error table and the <Error> document. Codes, statuses and default
 * messages follow the Amazon S3 API reference ("Error responses"). */
#include "s3_error.h"

#include <string.h>

#include <event2/buffer.h>

#include "cn/rc.h"
#include "xml.h"

/* Indexed by enum gw_s3_err; a designated initializer per row keeps the
 * enum and the table from drifting apart (a missing row is caught by
 * gw_s3_error_info() returning InternalError and by the unit test). */
static const struct gw_s3_error_info gw_s3_error_table[GW_S3_ERR_COUNT] = {
    [GW_S3_ACCESS_CONTROL_LIST_NOT_SUPPORTED] = {"AccessControlListNotSupported", 400,
        "The bucket does not allow ACLs"},
    [GW_S3_ACCESS_DENIED] = {"AccessDenied", 403, "Access Denied"},
    [GW_S3_EXPIRED_PRESIGNED] = {"AccessDenied", 403, "Request has expired"},
    [GW_S3_ACCESS_FORBIDDEN] = {"AccessForbidden", 403,
        "CORSResponse: This CORS request is not allowed. This is usually because the "
        "evalution of Origin, request method / Access-Control-Request-Method or "
        "Access-Control-Request-Headers are not whitelisted by the resource's CORS spec."},
    [GW_S3_AUTHORIZATION_HEADER_MALFORMED] = {"AuthorizationHeaderMalformed", 400,
        "The authorization header is malformed."},
    [GW_S3_AUTHORIZATION_QUERY_PARAMETERS_ERROR] = {"AuthorizationQueryParametersError", 400,
        "Error parsing the X-Amz-Credential parameter."},
    [GW_S3_BAD_DIGEST] = {"BadDigest", 400,
        "The Content-MD5 you specified did not match what we received."},
    [GW_S3_BAD_REQUEST] = {"BadRequest", 400, "An error occurred when parsing the HTTP request."},
    [GW_S3_BUCKET_ALREADY_EXISTS] = {"BucketAlreadyExists", 409,
        "The requested bucket name is not available. The bucket namespace is shared by all "
        "users of the system. Please select a different name and try again."},
    [GW_S3_BUCKET_ALREADY_OWNED_BY_YOU] = {"BucketAlreadyOwnedByYou", 409,
        "Your previous request to create the named bucket succeeded and you already own it."},
    [GW_S3_BUCKET_NOT_EMPTY] = {"BucketNotEmpty", 409,
        "The bucket you tried to delete is not empty"},
    [GW_S3_CONDITIONAL_REQUEST_CONFLICT] = {"ConditionalRequestConflict", 409,
        "A conflicting operation occurred. If using PutObject you can retry the request. If "
        "using multipart upload you should initiate another CreateMultipartUpload request and "
        "re-upload each part."},
    [GW_S3_ENTITY_TOO_LARGE] = {"EntityTooLarge", 400,
        "Your proposed upload exceeds the maximum allowed size"},
    [GW_S3_ENTITY_TOO_SMALL] = {"EntityTooSmall", 400,
        "Your proposed upload is smaller than the minimum allowed size"},
    [GW_S3_EXPIRED_TOKEN] = {"ExpiredToken", 400, "The provided token has expired."},
    [GW_S3_ILLEGAL_LOCATION_CONSTRAINT] = {"IllegalLocationConstraintException", 400,
        "The location constraint is incompatible for the region specific endpoint this "
        "request was sent to."},
    [GW_S3_INCOMPLETE_BODY] = {"IncompleteBody", 400,
        "You did not provide the number of bytes specified by the Content-Length HTTP header."},
    [GW_S3_INTERNAL_ERROR] = {"InternalError", 500,
        "We encountered an internal error. Please try again."},
    [GW_S3_INVALID_ACCESS_KEY_ID] = {"InvalidAccessKeyId", 403,
        "The AWS Access Key Id you provided does not exist in our records."},
    [GW_S3_INVALID_ARGUMENT] = {"InvalidArgument", 400, "Invalid Argument"},
    [GW_S3_INVALID_BUCKET_ACL_WITH_OBJECT_OWNERSHIP] = {"InvalidBucketAclWithObjectOwnership", 400,
        "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting"},
    [GW_S3_INVALID_BUCKET_NAME] = {"InvalidBucketName", 400, "The specified bucket is not valid."},
    [GW_S3_INVALID_BUCKET_STATE] = {"InvalidBucketState", 409,
        "The request is not valid with the current state of the bucket."},
    [GW_S3_INVALID_CHUNK_SIZE] = {"InvalidChunkSizeError", 403,
        "Only the last chunk is allowed to have a size less than 8192 bytes"},
    [GW_S3_INVALID_DIGEST] = {"InvalidDigest", 400, "The Content-MD5 you specified is not valid."},
    [GW_S3_INVALID_LOCATION_CONSTRAINT] = {"InvalidLocationConstraint", 400,
        "The specified location constraint is not valid."},
    [GW_S3_INVALID_OBJECT_STATE] = {"InvalidObjectState", 403,
        "The operation is not valid for the current state of the object."},
    [GW_S3_INVALID_PART] = {"InvalidPart", 400,
        "One or more of the specified parts could not be found. The part may not have been "
        "uploaded, or the specified entity tag may not match the part's entity tag."},
    [GW_S3_INVALID_PART_NUMBER] = {"InvalidPartNumber", 416,
        "The requested partnumber is not satisfiable"},
    [GW_S3_INVALID_PART_ORDER] = {"InvalidPartOrder", 400,
        "The list of parts was not in ascending order. Parts must be ordered by part number."},
    [GW_S3_INVALID_POLICY_DOCUMENT] = {"InvalidPolicyDocument", 400,
        "The content of the form does not meet the conditions specified in the policy "
        "document."},
    [GW_S3_INVALID_RANGE] = {"InvalidRange", 416, "The requested range is not satisfiable"},
    [GW_S3_INVALID_REQUEST] = {"InvalidRequest", 400, "Invalid Request"},
    [GW_S3_INVALID_STORAGE_CLASS] = {"InvalidStorageClass", 400,
        "The storage class you specified is not valid"},
    [GW_S3_INVALID_TAG] = {"InvalidTag", 400, "The tag provided was not a valid tag."},
    [GW_S3_INVALID_URI] = {"InvalidURI", 400, "Couldn't parse the specified URI."},
    /* S3 documents no code of its own for an over-long request target; the
     * status says what went wrong and InvalidURI is a code clients know */
    [GW_S3_URI_TOO_LONG] = {"InvalidURI", 414, "The request URI is too long."},
    [GW_S3_KEY_TOO_LONG] = {"KeyTooLongError", 400, "Your key is too long"},
    [GW_S3_MALFORMED_ACL_ERROR] = {"MalformedACLError", 400,
        "The XML you provided was not well-formed or did not validate against our published schema"},
    [GW_S3_MALFORMED_POLICY] = {"MalformedPolicy", 400, "Policies must be valid JSON"},
    [GW_S3_MALFORMED_POST_REQUEST] = {"MalformedPOSTRequest", 400,
        "The body of your POST request is not well-formed multipart/form-data."},
    [GW_S3_MALFORMED_XML] = {"MalformedXML", 400,
        "The XML you provided was not well-formed or did not validate against our published "
        "schema"},
    [GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED] = {"MaxMessageLengthExceeded", 400,
        "Your request was too big."},
    [GW_S3_MAX_POST_PRE_DATA_LENGTH_EXCEEDED] = {"MaxPostPreDataLengthExceeded", 400,
        "Your POST request fields preceding the upload file were too large."},
    [GW_S3_METADATA_TOO_LARGE] = {"MetadataTooLarge", 400,
        "Your metadata headers exceed the maximum allowed metadata size."},
    [GW_S3_METHOD_NOT_ALLOWED] = {"MethodNotAllowed", 405,
        "The specified method is not allowed against this resource."},
    [GW_S3_MISSING_CONTENT_LENGTH] = {"MissingContentLength", 411,
        "You must provide the Content-Length HTTP header."},
    [GW_S3_MISSING_REQUEST_BODY] = {"MissingRequestBodyError", 400, "Request Body is empty"},
    [GW_S3_MISSING_SECURITY_HEADER] = {"MissingSecurityHeader", 400,
        "Your request was missing a required header"},
    [GW_S3_NO_SUCH_BUCKET] = {"NoSuchBucket", 404, "The specified bucket does not exist"},
    [GW_S3_NO_SUCH_BUCKET_POLICY] = {"NoSuchBucketPolicy", 404,
        "The bucket policy does not exist"},
    [GW_S3_NO_SUCH_CORS_CONFIGURATION] = {"NoSuchCORSConfiguration", 404,
        "The CORS configuration does not exist"},
    [GW_S3_NO_SUCH_KEY] = {"NoSuchKey", 404, "The specified key does not exist."},
    [GW_S3_NO_SUCH_PUBLIC_ACCESS_BLOCK_CONFIGURATION] = {
        "NoSuchPublicAccessBlockConfiguration", 404,
        "The public access block configuration was not found"},
    [GW_S3_NO_SUCH_LIFECYCLE_CONFIGURATION] = {"NoSuchLifecycleConfiguration", 404,
        "The lifecycle configuration does not exist"},
    [GW_S3_NO_SUCH_TAG_SET] = {"NoSuchTagSet", 404, "The TagSet does not exist"},
    [GW_S3_NO_SUCH_UPLOAD] = {"NoSuchUpload", 404,
        "The specified upload does not exist. The upload ID may be invalid, or the upload "
        "may have been aborted or completed."},
    [GW_S3_NO_SUCH_VERSION] = {"NoSuchVersion", 404,
        "The specified version does not exist."},
    [GW_S3_NO_SUCH_WEBSITE_CONFIGURATION] = {"NoSuchWebsiteConfiguration", 404,
        "The specified bucket does not have a website configuration"},
    [GW_S3_NOT_IMPLEMENTED] = {"NotImplemented", 501,
        "A header you provided implies functionality that is not implemented"},
    [GW_S3_NOT_MODIFIED] = {"NotModified", 304, "Not Modified"},
    [GW_S3_OBJECT_LOCK_CONFIGURATION_NOT_FOUND] = {"ObjectLockConfigurationNotFoundError", 404,
        "Object Lock configuration does not exist for this bucket"},
    [GW_S3_PRECONDITION_FAILED] = {"PreconditionFailed", 412,
        "At least one of the pre-conditions you specified did not hold"},
    [GW_S3_REPLICATION_CONFIGURATION_NOT_FOUND] = {"ReplicationConfigurationNotFoundError",
        404, "The replication configuration was not found"},
    [GW_S3_REQUEST_HEADER_SECTION_TOO_LARGE] = {"RequestHeaderSectionTooLarge", 400,
        "Your request header section exceeds the maximum allowed size."},
    [GW_S3_REQUEST_TIMEOUT] = {"RequestTimeout", 400,
        "Your socket connection to the server was not read from or written to within the "
        "timeout period. Idle connections will be closed."},
    [GW_S3_REQUEST_TIME_TOO_SKEWED] = {"RequestTimeTooSkewed", 403,
        "The difference between the request time and the current time is too large."},
    [GW_S3_SERVER_SIDE_ENCRYPTION_CONFIGURATION_NOT_FOUND] = {
        "ServerSideEncryptionConfigurationNotFoundError", 404,
        "The server side encryption configuration was not found"},
    [GW_S3_SERVICE_UNAVAILABLE] = {"ServiceUnavailable", 503, "Please reduce your request rate."},
    [GW_S3_SIGNATURE_DOES_NOT_MATCH] = {"SignatureDoesNotMatch", 403,
        "The request signature we calculated does not match the signature you provided. "
        "Check your key and signing method."},
    [GW_S3_OWNERSHIP_CONTROLS_NOT_FOUND] = {"OwnershipControlsNotFoundError", 404,
        "The bucket ownership controls were not found"},
    [GW_S3_UNRESOLVABLE_GRANT_BY_EMAIL_ADDRESS] = {"UnresolvableGrantByEmailAddress", 400,
        "The e-mail address you provided does not match any account on record."},
    [GW_S3_SLOW_DOWN] = {"SlowDown", 503, "Please reduce your request rate."},
    [GW_S3_X_AMZ_CONTENT_SHA256_MISMATCH] = {"XAmzContentSHA256Mismatch", 400,
        "The provided 'x-amz-content-sha256' header does not match what was computed."},
};

const struct gw_s3_error_info *gw_s3_error_info(enum gw_s3_err e)
{
    if ((int)e <= 0 || e >= GW_S3_ERR_COUNT || gw_s3_error_table[e].code == NULL)
        return &gw_s3_error_table[GW_S3_INTERNAL_ERROR];
    return &gw_s3_error_table[e];
}

const char *gw_s3_error_code(enum gw_s3_err e)
{
    return gw_s3_error_info(e)->code;
}

int gw_s3_error_status(enum gw_s3_err e)
{
    return gw_s3_error_info(e)->http_status;
}

const char *gw_s3_error_message(enum gw_s3_err e)
{
    return gw_s3_error_info(e)->message;
}

int gw_s3_error_has_body(enum gw_s3_err e)
{
    return gw_s3_error_info(e)->http_status != 304;
}

enum gw_s3_err gw_s3_error_from_code(const char *code, size_t len)
{
    /* first row wins, so AccessDenied maps to GW_S3_ACCESS_DENIED */
    for (int e = 1; e < GW_S3_ERR_COUNT; e++) {
        const char *c = gw_s3_error_table[e].code;
        if (c != NULL && strlen(c) == len && memcmp(c, code, len) == 0)
            return (enum gw_s3_err)e;
    }
    return GW_S3_OK;
}

enum gw_s3_err gw_s3_error_from_store(int rc)
{
    switch (rc) {
    case CN_OK: return GW_S3_OK;
    case CN_TIMEOUT:
    case CN_IO: return GW_S3_SERVICE_UNAVAILABLE;
    case CN_CONFLICT: return GW_S3_CONDITIONAL_REQUEST_CONFLICT;
    default: return GW_S3_INTERNAL_ERROR;
    }
}

/* One <name>escaped text</name>; text may be NULL (then nothing). */
static int gw_s3_error_elem(struct evbuffer *out, const char *name, const char *text,
                            size_t len)
{
    if (text == NULL)
        return CN_OK;
    if (evbuffer_add_printf(out, "<%s>", name) < 0)
        return CN_ERR;
    if (gw_xml_escape(out, text, len) != CN_OK)
        return CN_ERR;
    return evbuffer_add_printf(out, "</%s>", name) < 0 ? CN_ERR : CN_OK;
}

int gw_s3_error_render(const struct gw_s3_error_doc *doc, struct evbuffer *out)
{
    const struct gw_s3_error_info *info = gw_s3_error_info(doc->err);
    if (!gw_s3_error_has_body(doc->err))
        return CN_OK;
    const char *msg = doc->message != NULL ? doc->message : info->message;
    int rc = evbuffer_add_printf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error>") < 0
                 ? CN_ERR : CN_OK;
    if (rc == CN_OK)
        rc = gw_s3_error_elem(out, "Code", info->code, strlen(info->code));
    if (rc == CN_OK)
        rc = gw_s3_error_elem(out, "Message", msg, strlen(msg));
    for (size_t i = 0; rc == CN_OK && i < doc->n_extra; i++) {
        const struct gw_s3_error_extra *x = &doc->extra[i];
        rc = gw_s3_error_elem(out, x->name, x->value != NULL ? x->value : "",
                              x->value != NULL ? x->value_len : 0);
    }
    if (rc == CN_OK)
        rc = gw_s3_error_elem(out, "Resource", doc->resource, doc->resource_len);
    if (rc == CN_OK && doc->request_id != NULL)
        rc = gw_s3_error_elem(out, "RequestId", doc->request_id, strlen(doc->request_id));
    if (rc == CN_OK && doc->host_id != NULL)
        rc = gw_s3_error_elem(out, "HostId", doc->host_id, strlen(doc->host_id));
    if (rc == CN_OK && evbuffer_add(out, "</Error>", 8) != 0)
        rc = CN_ERR;
    return rc;
}

int gw_s3_error_render_buf(const struct gw_s3_error_doc *doc, char *buf, size_t cap,
                           size_t *len)
{
    struct evbuffer *eb = evbuffer_new();
    if (eb == NULL)
        return CN_ERR;
    int rc = gw_s3_error_render(doc, eb);
    size_t n = evbuffer_get_length(eb);
    if (rc == CN_OK && n > cap)
        rc = CN_TOOBIG;
    if (rc == CN_OK) {
        evbuffer_copyout(eb, buf, n);
        if (n < cap)
            buf[n] = '\0';
        *len = n;
    }
    evbuffer_free(eb);
    return rc;
}
