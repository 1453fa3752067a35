/* The S3 error table and the <Error> document. */
#include <string.h>

#include <event2/buffer.h>

#include "cn/rc.h"
#include "cn/test.h"
#include "s3_error.h"

CN_TEST_GLOBALS;

/* Every row is filled, has a plausible status and a code made of letters. */
static void test_table_complete(void)
{
    for (int e = 1; e < GW_S3_ERR_COUNT; e++) {
        const struct gw_s3_error_info *i = gw_s3_error_info((enum gw_s3_err)e);
        CN_CHECK(i->code != NULL && i->message != NULL);
        CN_CHECK(i->http_status >= 300 && i->http_status < 600);
        if (e != GW_S3_INTERNAL_ERROR)
            CN_CHECK(i != gw_s3_error_info(GW_S3_INTERNAL_ERROR));
        for (const char *c = i->code; *c; c++)
            CN_CHECK((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
                     (*c >= '0' && *c <= '9'));
    }
}

static void test_known_rows(void)
{
    static const struct {
        enum gw_s3_err e;
        const char *code;
        int status;
    } rows[] = {
        {GW_S3_ACCESS_DENIED, "AccessDenied", 403},
        {GW_S3_EXPIRED_PRESIGNED, "AccessDenied", 403},
        {GW_S3_BAD_DIGEST, "BadDigest", 400},
        {GW_S3_BUCKET_ALREADY_EXISTS, "BucketAlreadyExists", 409},
        {GW_S3_BUCKET_ALREADY_OWNED_BY_YOU, "BucketAlreadyOwnedByYou", 409},
        {GW_S3_BUCKET_NOT_EMPTY, "BucketNotEmpty", 409},
        {GW_S3_ENTITY_TOO_LARGE, "EntityTooLarge", 400},
        {GW_S3_ENTITY_TOO_SMALL, "EntityTooSmall", 400},
        {GW_S3_INCOMPLETE_BODY, "IncompleteBody", 400},
        {GW_S3_INTERNAL_ERROR, "InternalError", 500},
        {GW_S3_INVALID_ACCESS_KEY_ID, "InvalidAccessKeyId", 403},
        {GW_S3_INVALID_ARGUMENT, "InvalidArgument", 400},
        {GW_S3_INVALID_BUCKET_NAME, "InvalidBucketName", 400},
        {GW_S3_INVALID_CHUNK_SIZE, "InvalidChunkSizeError", 403},
        {GW_S3_INVALID_DIGEST, "InvalidDigest", 400},
        {GW_S3_INVALID_PART, "InvalidPart", 400},
        {GW_S3_INVALID_PART_ORDER, "InvalidPartOrder", 400},
        {GW_S3_INVALID_RANGE, "InvalidRange", 416},
        {GW_S3_INVALID_REQUEST, "InvalidRequest", 400},
        {GW_S3_KEY_TOO_LONG, "KeyTooLongError", 400},
        {GW_S3_MALFORMED_XML, "MalformedXML", 400},
        {GW_S3_METHOD_NOT_ALLOWED, "MethodNotAllowed", 405},
        {GW_S3_MISSING_CONTENT_LENGTH, "MissingContentLength", 411},
        {GW_S3_MISSING_SECURITY_HEADER, "MissingSecurityHeader", 400},
        {GW_S3_NO_SUCH_BUCKET, "NoSuchBucket", 404},
        {GW_S3_NO_SUCH_KEY, "NoSuchKey", 404},
        {GW_S3_NO_SUCH_UPLOAD, "NoSuchUpload", 404},
        {GW_S3_NOT_IMPLEMENTED, "NotImplemented", 501},
        {GW_S3_NOT_MODIFIED, "NotModified", 304},
        {GW_S3_PRECONDITION_FAILED, "PreconditionFailed", 412},
        {GW_S3_REQUEST_TIMEOUT, "RequestTimeout", 400},
        {GW_S3_REQUEST_TIME_TOO_SKEWED, "RequestTimeTooSkewed", 403},
        {GW_S3_SIGNATURE_DOES_NOT_MATCH, "SignatureDoesNotMatch", 403},
        {GW_S3_SLOW_DOWN, "SlowDown", 503},
        {GW_S3_SERVICE_UNAVAILABLE, "ServiceUnavailable", 503},
        {GW_S3_X_AMZ_CONTENT_SHA256_MISMATCH, "XAmzContentSHA256Mismatch", 400},
        {GW_S3_AUTHORIZATION_HEADER_MALFORMED, "AuthorizationHeaderMalformed", 400},
        {GW_S3_AUTHORIZATION_QUERY_PARAMETERS_ERROR, "AuthorizationQueryParametersError", 400},
        {GW_S3_REQUEST_HEADER_SECTION_TOO_LARGE, "RequestHeaderSectionTooLarge", 400},
        {GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED, "MaxMessageLengthExceeded", 400},
        {GW_S3_INVALID_STORAGE_CLASS, "InvalidStorageClass", 400},
        {GW_S3_INVALID_OBJECT_STATE, "InvalidObjectState", 403},
        {GW_S3_BAD_REQUEST, "BadRequest", 400},
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(rows); i++) {
        CN_CHECK_EQ_STR(gw_s3_error_code(rows[i].e), rows[i].code);
        CN_CHECK_EQ_INT(gw_s3_error_status(rows[i].e), rows[i].status);
    }
    CN_CHECK_EQ_STR(gw_s3_error_message(GW_S3_EXPIRED_PRESIGNED), "Request has expired");
    CN_CHECK(!gw_s3_error_has_body(GW_S3_NOT_MODIFIED));
    CN_CHECK(gw_s3_error_has_body(GW_S3_NO_SUCH_KEY));
}

static void test_out_of_range(void)
{
    CN_CHECK_EQ_STR(gw_s3_error_code(GW_S3_OK), "InternalError");
    CN_CHECK_EQ_STR(gw_s3_error_code(GW_S3_ERR_COUNT), "InternalError");
    CN_CHECK_EQ_STR(gw_s3_error_code((enum gw_s3_err)-5), "InternalError");
}

static void test_from_code(void)
{
    CN_CHECK_EQ_INT(gw_s3_error_from_code("NoSuchKey", 9), GW_S3_NO_SUCH_KEY);
    CN_CHECK_EQ_INT(gw_s3_error_from_code("AccessDenied", 12), GW_S3_ACCESS_DENIED);
    CN_CHECK_EQ_INT(gw_s3_error_from_code("NoSuchKeyX", 9), GW_S3_NO_SUCH_KEY);
    CN_CHECK_EQ_INT(gw_s3_error_from_code("Bogus", 5), GW_S3_OK);
    for (int e = 1; e < GW_S3_ERR_COUNT; e++) {
        const char *c = gw_s3_error_code((enum gw_s3_err)e);
        enum gw_s3_err back = gw_s3_error_from_code(c, strlen(c));
        CN_CHECK_EQ_STR(gw_s3_error_code(back), c);
    }
}

static void test_render(void)
{
    const char key[] = "a<b>&\"c'\x01";
    struct gw_s3_error_extra extra[] = {{"Key", key, sizeof(key) - 1}};
    struct gw_s3_error_doc doc = {
        .err = GW_S3_NO_SUCH_KEY, .resource = "/bkt/a<b", .resource_len = 8,
        .request_id = "4442587FB7D0A2F9", .host_id = "h1", .extra = extra, .n_extra = 1,
    };
    char buf[1024];
    size_t n = 0;
    CN_CHECK_EQ_INT(gw_s3_error_render_buf(&doc, buf, sizeof(buf), &n), CN_OK);
    CN_CHECK_EQ_STR(buf,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NoSuchKey</Code>"
        "<Message>The specified key does not exist.</Message>"
        "<Key>a&lt;b&gt;&amp;&quot;c&apos;\xEF\xBF\xBD</Key><Resource>/bkt/a&lt;b</Resource>"
        "<RequestId>4442587FB7D0A2F9</RequestId><HostId>h1</HostId></Error>");
    CN_CHECK_EQ_INT(n, strlen(buf));
    /* a custom message, no ids */
    struct gw_s3_error_doc d2 = {.err = GW_S3_INVALID_ARGUMENT, .message = "x & y"};
    CN_CHECK_EQ_INT(gw_s3_error_render_buf(&d2, buf, sizeof(buf), &n), CN_OK);
    CN_CHECK(strstr(buf, "<Message>x &amp; y</Message></Error>") != NULL);
    CN_CHECK(strstr(buf, "<Resource>") == NULL);
    /* too small a buffer */
    CN_CHECK_EQ_INT(gw_s3_error_render_buf(&doc, buf, 40, &n), CN_TOOBIG);
    /* NotModified has no body */
    struct gw_s3_error_doc d3 = {.err = GW_S3_NOT_MODIFIED};
    struct evbuffer *eb = evbuffer_new();
    CN_CHECK_EQ_INT(gw_s3_error_render(&d3, eb), CN_OK);
    CN_CHECK_EQ_INT(evbuffer_get_length(eb), 0);
    evbuffer_free(eb);
}

/* Store statuses: nothing for OK, 503 for what a retry may cure (timeouts,
 * unreachable nodes), 500 for the rest (NOTFOUND too: a handler that can
 * answer NoSuchKey does so before asking). */
static void test_from_store(void)
{
    CN_CHECK_EQ_INT(gw_s3_error_from_store(CN_OK), GW_S3_OK);
    CN_CHECK_EQ_INT(gw_s3_error_from_store(CN_TIMEOUT), GW_S3_SERVICE_UNAVAILABLE);
    CN_CHECK_EQ_INT(gw_s3_error_from_store(CN_IO), GW_S3_SERVICE_UNAVAILABLE);
    CN_CHECK_EQ_INT(gw_s3_error_status(gw_s3_error_from_store(CN_IO)), 503);
    static const int others[] = {CN_ERR, CN_AGAIN, CN_NOTFOUND, CN_CORRUPT, CN_TOOBIG,
                                 CN_INVAL, CN_DONE, -100, 1};
    for (size_t i = 0; i < CN_ARRAY_LEN(others); i++)
        CN_CHECK_EQ_INT(gw_s3_error_from_store(others[i]), GW_S3_INTERNAL_ERROR);
}

static const struct cn_test_case cases[] = {
    {"table_complete", test_table_complete},
    {"known_rows", test_known_rows},
    {"out_of_range", test_out_of_range},
    {"from_code", test_from_code},
    {"from_store", test_from_store},
    {"render", test_render},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
