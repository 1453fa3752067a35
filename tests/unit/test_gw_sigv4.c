/* SigV4 verification against the examples of the Amazon S3 API reference
 * ("Signature Calculations for the Authorization Header", "Query String
 * Authentication", chunked upload with and without trailer), all with the
 * documented pair AKIAIOSFODNN7EXAMPLE / wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
 * at 20130524T000000Z, plus the refusals. */
#include <string.h>

#include <event2/buffer.h>

#include "checksum.h"
#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/test.h"
#include "credentials.h"
#include "sigv4.h"

CN_TEST_GLOBALS;

#define DOC_NOW 1369353600 /* 20130524T000000Z */
#define DOC_AK "AKIAIOSFODNN7EXAMPLE"
#define DOC_CRED DOC_AK "/20130524/us-east-1/s3/aws4_request"
#define EMPTY_SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define HOST_VH "examplebucket.s3.amazonaws.com"

static struct gw_credentials *creds;

static struct gw_credentials *doc_creds(void)
{
    static const char text[] =
        DOC_AK " wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY owner-1 Example\n"
        "AKIAOTHER other-secret owner-2 Other\n";
    struct gw_credentials *c = NULL;
    char err[CN_ERR_LEN];
    CN_ASSERT(gw_credentials_load_buf(text, sizeof(text) - 1, "doc", &c, err) == CN_OK);
    return c;
}

/* A request built from NUL-terminated pieces; headers as "name", "value"
 * pairs ending with NULL. */
struct req {
    struct gw_sigv4_request r;
    struct gw_sigv4_header h[32];
};

static void req_init(struct req *q, const char *method, const char *path, const char *query,
                     const char *const *hdrs)
{
    memset(q, 0, sizeof(*q));
    q->r.method = method;
    q->r.method_len = strlen(method);
    q->r.path = path;
    q->r.path_len = strlen(path);
    q->r.query = query;
    q->r.query_len = query != NULL ? strlen(query) : 0;
    size_t n = 0;
    for (; hdrs[2 * n] != NULL; n++) {
        q->h[n].name = hdrs[2 * n];
        q->h[n].name_len = strlen(hdrs[2 * n]);
        q->h[n].value = hdrs[2 * n + 1];
        q->h[n].value_len = strlen(hdrs[2 * n + 1]);
    }
    q->r.headers = q->h;
    q->r.n_headers = n;
    q->r.now = DOC_NOW;
}

static int verify(const struct req *q, struct gw_sigv4_result *res)
{
    struct gw_sigv4_config cfg = {.creds = creds};
    struct gw_sigv4 *v = gw_sigv4_new(&cfg);
    int rc = gw_sigv4_verify(v, &q->r, res);
    gw_sigv4_free(v);
    return rc;
}

static int verify_ok(const struct req *q, struct gw_sigv4_result *res)
{
    int rc = verify(q, res);
    if (rc != CN_OK)
        fprintf(stderr, "  refused: %s %s\n  string to sign:\n%s\n", gw_s3_error_code(res->err),
                res->message, res->string_to_sign);
    return rc;
}

/* GET Object with a Range header. */
static const char *const get_object_hdrs[] = {
    "Host", HOST_VH, "Range", "bytes=0-9", "x-amz-content-sha256", EMPTY_SHA,
    "x-amz-date", "20130524T000000Z",
    "Authorization", "AWS4-HMAC-SHA256 Credential=" DOC_CRED ",SignedHeaders=host;range;"
    "x-amz-content-sha256;x-amz-date,Signature="
    "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
    NULL};

static void test_doc_get_object(void)
{
    struct req q;
    struct gw_sigv4_result res;
    req_init(&q, "GET", "/test.txt", NULL, get_object_hdrs);
    CN_CHECK_EQ_INT(verify_ok(&q, &res), CN_OK);
    CN_CHECK_EQ_INT(res.err, GW_S3_OK);
    CN_CHECK(res.cred != NULL && strcmp(res.cred->owner_id, "owner-1") == 0);
    CN_CHECK_EQ_INT(res.payload, GW_SIGV4_PAYLOAD_SHA256);
    CN_CHECK_EQ_STR(res.payload_hash, EMPTY_SHA);
    CN_CHECK_EQ_STR(res.scope, "20130524/us-east-1/s3/aws4_request");
    CN_CHECK_EQ_STR(res.amz_date, "20130524T000000Z");
    CN_CHECK_EQ_STR(res.signature,
                    "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
    /* the canonical request hash is the last line of the string to sign */
    CN_CHECK(strstr(res.string_to_sign,
                    "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972") != NULL);
    CN_CHECK(!res.presigned);
}

/* PUT Object: a '$' in the key, a Date header signed alongside x-amz-date. */
static void test_doc_put_object(void)
{
    static const char *const hdrs[] = {
        "Date", "Fri, 24 May 2013 00:00:00 GMT", "Host", HOST_VH,
        "x-amz-date", "20130524T000000Z", "x-amz-storage-class", "REDUCED_REDUNDANCY",
        "x-amz-content-sha256", "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
        "Authorization", "AWS4-HMAC-SHA256 Credential=" DOC_CRED ",SignedHeaders=date;host;"
        "x-amz-content-sha256;x-amz-date;x-amz-storage-class,Signature="
        "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd",
        NULL};
    struct req q;
    struct gw_sigv4_result res;
    /* as most clients send it (encoded) and raw: one canonical URI */
    req_init(&q, "PUT", "/test%24file.text", NULL, hdrs);
    CN_CHECK_EQ_INT(verify_ok(&q, &res), CN_OK);
    CN_CHECK(strstr(res.string_to_sign,
                    "9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d") != NULL);
    req_init(&q, "PUT", "/test$file.text", NULL, hdrs);
    CN_CHECK_EQ_INT(verify_ok(&q, &res), CN_OK);
    CN_CHECK_EQ_STR(res.payload_hash,
                    "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
}

static void test_doc_bucket_queries(void)
{
    static const char *const lifecycle[] = {
        "Host", HOST_VH, "x-amz-date", "20130524T000000Z", "x-amz-content-sha256", EMPTY_SHA,
        "Authorization", "AWS4-HMAC-SHA256 Credential=" DOC_CRED ",SignedHeaders=host;"
        "x-amz-content-sha256;x-amz-date,Signature="
        "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543",
        NULL};
    static const char *const list[] = {
        "Host", HOST_VH, "x-amz-date", "20130524T000000Z", "x-amz-content-sha256", EMPTY_SHA,
        "Authorization", "AWS4-HMAC-SHA256 Credential=" DOC_CRED ",SignedHeaders=host;"
        "x-amz-content-sha256;x-amz-date,Signature="
        "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7",
        NULL};
    struct req q;
    struct gw_sigv4_result res;
    req_init(&q, "GET", "/", "lifecycle", lifecycle);
    CN_CHECK_EQ_INT(verify_ok(&q, &res), CN_OK);
    req_init(&q, "GET", "/", "lifecycle=", lifecycle);
    CN_CHECK_EQ_INT(verify_ok(&q, &res), CN_OK);
    /* parameters sorted by name whatever the order sent */
    req_init(&q, "GET", "/", "prefix=J&max-keys=2", list);
    CN_CHECK_EQ_INT(verify_ok(&q, &res), CN_OK);
    req_init(&q, "GET", "/", "max-keys=2&prefix=J", list);
    CN_CHECK_EQ_INT(verify_ok(&q, &res), CN_OK);
    req_init(&q, "GET", "/", "max-keys=3&prefix=J", list);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_SIGNATURE_DOES_NOT_MATCH);
}

#define PRESIGN_Q                                                                          \
    "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2F" \
    "us-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400"        \
    "&X-Amz-SignedHeaders=host&X-Amz-Signature="                                           \
    "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"

static const char *const host_only[] = {"Host", HOST_VH, NULL};

static void test_doc_presigned(void)
{
    struct req q;
    struct gw_sigv4_result res;
    req_init(&q, "GET", "/test.txt", PRESIGN_Q, host_only);
    CN_CHECK_EQ_INT(verify_ok(&q, &res), CN_OK);
    CN_CHECK(res.presigned);
    CN_CHECK_EQ_INT(res.payload, GW_SIGV4_PAYLOAD_UNSIGNED);
    /* valid until the end of its 86400 seconds, then "Request has expired" */
    q.r.now = DOC_NOW + 86400;
    CN_CHECK_EQ_INT(verify_ok(&q, &res), CN_OK);
    q.r.now = DOC_NOW + 86401;
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_EXPIRED_PRESIGNED);
    CN_CHECK_EQ_STR(gw_s3_error_code(res.err), "AccessDenied");
    CN_CHECK_EQ_STR(gw_s3_error_message(res.err), "Request has expired");
    q.r.now = DOC_NOW - 3600;
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_ACCESS_DENIED);
    CN_CHECK_EQ_STR(res.message, "Request is not valid yet");
    /* tampering with another parameter breaks the signature */
    req_init(&q, "GET", "/test.txt", PRESIGN_Q "&x-id=GetObject", host_only);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_SIGNATURE_DOES_NOT_MATCH);
    /* an unsigned x-amz-* header is refused */
    static const char *const extra[] = {"Host", HOST_VH, "x-amz-acl", "public-read", NULL};
    req_init(&q, "GET", "/test.txt", PRESIGN_Q, extra);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_ACCESS_DENIED);
}

static void test_presigned_refusals(void)
{
    static const struct {
        const char *query;
        enum gw_s3_err err;
    } v[] = {
        {"X-Amz-Algorithm=AWS4-HMAC-SHA1&X-Amz-Credential=x", 0},
        {"X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=" DOC_AK "%2F20130524%2Fus-east-1"
         "%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=604801"
         "&X-Amz-SignedHeaders=host&X-Amz-Signature=" EMPTY_SHA, 0},
        {"X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=" DOC_AK "%2F20130524%2Fus-east-1"
         "%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=0"
         "&X-Amz-SignedHeaders=host&X-Amz-Signature=" EMPTY_SHA, 0},
        {"X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=" DOC_AK "%2F20130524%2Fus-east-1"
         "%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=60", 0},
        {"X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=" DOC_AK "%2F20130524%2Fus-east-1"
         "%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=60"
         "&X-Amz-SignedHeaders=range&X-Amz-Signature=" EMPTY_SHA, 0},
        {"X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Algorithm=AWS4-HMAC-SHA256", 0},
        {"X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=" DOC_AK "%2F20130525%2Fus-east-1"
         "%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=60"
         "&X-Amz-SignedHeaders=host&X-Amz-Signature=" EMPTY_SHA, 0},
    };
    struct req q;
    struct gw_sigv4_result res;
    for (size_t i = 0; i < CN_ARRAY_LEN(v); i++) {
        req_init(&q, "GET", "/k", v[i].query, host_only);
        CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
        if (res.err != GW_S3_AUTHORIZATION_QUERY_PARAMETERS_ERROR)
            fprintf(stderr, "  case %zu: %s %s\n", i, gw_s3_error_code(res.err), res.message);
        CN_CHECK_EQ_INT(res.err, GW_S3_AUTHORIZATION_QUERY_PARAMETERS_ERROR);
    }
    /* SigV2 query auth: not supported... */
    req_init(&q, "GET", "/k", "AWSAccessKeyId=AK&Expires=2000000000&Signature=x", host_only);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_INVALID_REQUEST);
    req_init(&q, "GET", "/k", "AWSAccessKeyId=AK&X-Amz-Expires=1&Signature=x", host_only);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_INVALID_REQUEST);
    /* ...but one past its Expires (epoch seconds) is expired first, as S3
     * answers whatever else is wrong with it */
    req_init(&q, "GET", "/k", "AWSAccessKeyId=AK&Expires=1&Signature=x", host_only);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_EXPIRED_PRESIGNED);
    req_init(&q, "GET", "/k", "Signature=x&Expires=1369353599&AWSAccessKeyId=AK", host_only);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_EXPIRED_PRESIGNED);
}

/* The chunked-upload seed requests of the docs: their signatures are the
 * seeds of the aws-chunked chains (see test_gw_aws_chunked). */
static void test_doc_streaming_seeds(void)
{
    static const char *const plain[] = {
        "Host", "s3.amazonaws.com", "x-amz-date", "20130524T000000Z",
        "x-amz-storage-class", "REDUCED_REDUNDANCY",
        "x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
        "Content-Encoding", "aws-chunked", "x-amz-decoded-content-length", "66560",
        "Content-Length", "66824",
        "Authorization", "AWS4-HMAC-SHA256 Credential=" DOC_CRED ",SignedHeaders="
        "content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;"
        "x-amz-decoded-content-length;x-amz-storage-class,Signature="
        "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9",
        NULL};
    static const char *const trailer[] = {
        "Host", "s3.amazonaws.com", "x-amz-date", "20130524T000000Z",
        "x-amz-storage-class", "REDUCED_REDUNDANCY",
        "x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER",
        "Content-Encoding", "aws-chunked", "x-amz-decoded-content-length", "66560",
        "x-amz-trailer", "x-amz-checksum-crc32c",
        "Authorization", "AWS4-HMAC-SHA256 Credential=" DOC_CRED ",SignedHeaders="
        "content-encoding;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;"
        "x-amz-storage-class;x-amz-trailer,Signature="
        "106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e",
        NULL};
    struct req q;
    struct gw_sigv4_result res;
    req_init(&q, "PUT", "/examplebucket/chunkObject.txt", NULL, plain);
    CN_CHECK_EQ_INT(verify_ok(&q, &res), CN_OK);
    CN_CHECK_EQ_INT(res.payload, GW_SIGV4_PAYLOAD_STREAMING);
    CN_CHECK_EQ_STR(res.signature,
                    "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9");
    unsigned char key[32];
    gw_sigv4_signing_key("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", 40, "20130524",
                         "us-east-1", 9, key);
    CN_CHECK(memcmp(key, res.signing_key, 32) == 0);
    req_init(&q, "PUT", "/examplebucket/chunkObject.txt", NULL, trailer);
    CN_CHECK_EQ_INT(verify_ok(&q, &res), CN_OK);
    CN_CHECK_EQ_INT(res.payload, GW_SIGV4_PAYLOAD_STREAMING_TRAILER);
}

/* A copy of get_object_hdrs with header i's value replaced. */
static void with_value(const char **out, size_t i, const char *value)
{
    size_t n = 0;
    for (; get_object_hdrs[n] != NULL; n++)
        out[n] = get_object_hdrs[n];
    out[n] = NULL;
    out[i] = value;
}

static void test_header_refusals(void)
{
    struct req q;
    struct gw_sigv4_result res;
    const char *h[16];
    static const struct {
        size_t idx;
        const char *value;
        enum gw_s3_err err;
    } v[] = {
        {9, "AWS AKIAIOSFODNN7EXAMPLE:frJIUN8DYpKDtOLCwo//yllqDzg=", GW_S3_INVALID_REQUEST},
        {9, "AWS4-ECDSA-P256-SHA256 Credential=x", GW_S3_INVALID_REQUEST},
        {9, "AWS4-HMAC-SHA256 Credential=" DOC_CRED ",SignedHeaders=host", GW_S3_AUTHORIZATION_HEADER_MALFORMED},
        {9, "AWS4-HMAC-SHA256 Credential=" DOC_AK "/20130524/us-east-1/s3,SignedHeaders=host,"
            "Signature=" EMPTY_SHA, GW_S3_AUTHORIZATION_HEADER_MALFORMED},
        {9, "AWS4-HMAC-SHA256 Credential=" DOC_AK "/20130524/us-east-1/ec2/aws4_request,"
            "SignedHeaders=host,Signature=" EMPTY_SHA, GW_S3_AUTHORIZATION_HEADER_MALFORMED},
        {9, "AWS4-HMAC-SHA256 Credential=" DOC_AK "/20130524/us-east-1/s3/aws5_request,"
            "SignedHeaders=host,Signature=" EMPTY_SHA, GW_S3_AUTHORIZATION_HEADER_MALFORMED},
        {9, "AWS4-HMAC-SHA256 Credential=" DOC_AK "/2013052/us-east-1/s3/aws4_request,"
            "SignedHeaders=host,Signature=" EMPTY_SHA, GW_S3_AUTHORIZATION_HEADER_MALFORMED},
        {9, "AWS4-HMAC-SHA256 Credential=" DOC_CRED ",SignedHeaders=Host,Signature=" EMPTY_SHA,
            GW_S3_AUTHORIZATION_HEADER_MALFORMED},
        {9, "AWS4-HMAC-SHA256 Credential=" DOC_CRED ",SignedHeaders=host;;range,Signature="
            EMPTY_SHA, GW_S3_AUTHORIZATION_HEADER_MALFORMED},
        {9, "AWS4-HMAC-SHA256 Credential=" DOC_CRED ",SignedHeaders=host,Signature=ABC",
            GW_S3_AUTHORIZATION_HEADER_MALFORMED},
        {9, "AWS4-HMAC-SHA256 Credential=" DOC_CRED ",Credential=" DOC_CRED
            ",SignedHeaders=host,Signature=" EMPTY_SHA, GW_S3_AUTHORIZATION_HEADER_MALFORMED},
        {9, "AWS4-HMAC-SHA256 Credential=" DOC_CRED ",SignedHeaders=range;x-amz-date;"
            "x-amz-content-sha256,Signature=" EMPTY_SHA, GW_S3_AUTHORIZATION_HEADER_MALFORMED},
        {9, "AWS4-HMAC-SHA256 Credential=AKIANOBODY/20130524/us-east-1/s3/aws4_request,"
            "SignedHeaders=host;x-amz-content-sha256;x-amz-date;range,Signature=" EMPTY_SHA,
            GW_S3_INVALID_ACCESS_KEY_ID},
        {9, "AWS4-HMAC-SHA256 Credential=" DOC_AK "/20130523/us-east-1/s3/aws4_request,"
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=" EMPTY_SHA,
            GW_S3_AUTHORIZATION_HEADER_MALFORMED},
        {9, "AWS4-HMAC-SHA256 Credential=" DOC_CRED ",SignedHeaders=host;range;"
            "x-amz-date,Signature=" EMPTY_SHA, GW_S3_ACCESS_DENIED}, /* sha256 not signed */
        {9, "AWS4-HMAC-SHA256 Credential=" DOC_CRED ",SignedHeaders=host;range;"
            "x-amz-content-sha256;x-amz-date,Signature="
            "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb42",
            GW_S3_SIGNATURE_DOES_NOT_MATCH},
        {5, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85",
            GW_S3_INVALID_ARGUMENT},
        {5, "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD", GW_S3_NOT_IMPLEMENTED},
        {7, "20130524T000000", GW_S3_ACCESS_DENIED},
        {3, "bytes=0-10", GW_S3_SIGNATURE_DOES_NOT_MATCH},
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(v); i++) {
        with_value(h, v[i].idx, v[i].value);
        req_init(&q, "GET", "/test.txt", NULL, h);
        int rc = verify(&q, &res);
        if (rc != CN_INVAL || res.err != v[i].err)
            fprintf(stderr, "  case %zu: rc %d %s %s\n", i, rc, gw_s3_error_code(res.err),
                    res.message);
        CN_CHECK_EQ_INT(rc, CN_INVAL);
        CN_CHECK_EQ_INT(res.err, v[i].err);
    }
}

static void test_time_and_region(void)
{
    struct req q;
    struct gw_sigv4_result res;
    req_init(&q, "GET", "/test.txt", NULL, get_object_hdrs);
    q.r.now = DOC_NOW + 900;
    CN_CHECK_EQ_INT(verify_ok(&q, &res), CN_OK);
    q.r.now = DOC_NOW + 901;
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_REQUEST_TIME_TOO_SKEWED);
    q.r.now = DOC_NOW - 901;
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_REQUEST_TIME_TOO_SKEWED);
    /* a configured region must match */
    q.r.now = DOC_NOW;
    struct gw_sigv4_config cfg = {.creds = creds, .region = "eu-west-1"};
    struct gw_sigv4 *v = gw_sigv4_new(&cfg);
    CN_CHECK_EQ_INT(gw_sigv4_verify(v, &q.r, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_AUTHORIZATION_HEADER_MALFORMED);
    CN_CHECK(strstr(res.message, "'us-east-1' is wrong; expecting 'eu-west-1'") != NULL);
    gw_sigv4_free(v);
    cfg.region = "us-east-1";
    v = gw_sigv4_new(&cfg);
    CN_CHECK_EQ_INT(gw_sigv4_verify(v, &q.r, &res), CN_OK);
    /* the second verification hits the key cache and agrees */
    CN_CHECK_EQ_INT(gw_sigv4_verify(v, &q.r, &res), CN_OK);
    gw_sigv4_set_credentials(v, creds);
    CN_CHECK_EQ_INT(gw_sigv4_verify(v, &q.r, &res), CN_OK);
    gw_sigv4_free(v);
}

static void test_misc_refusals(void)
{
    struct req q;
    struct gw_sigv4_result res;
    /* anonymous */
    req_init(&q, "GET", "/test.txt", "a=b", host_only);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_NOTFOUND);
    CN_CHECK_EQ_INT(res.err, GW_S3_ACCESS_DENIED);
    /* both mechanisms */
    req_init(&q, "GET", "/test.txt", PRESIGN_Q, get_object_hdrs);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_INVALID_ARGUMENT);
    /* no x-amz-content-sha256 header */
    static const char *const no_sha[] = {
        "Host", HOST_VH, "Range", "bytes=0-9", "x-amz-date", "20130524T000000Z",
        "Authorization", "AWS4-HMAC-SHA256 Credential=" DOC_CRED ",SignedHeaders=host;range;"
        "x-amz-date,Signature=" EMPTY_SHA, NULL};
    req_init(&q, "GET", "/test.txt", NULL, no_sha);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_INVALID_REQUEST);
    /* an unsigned x-amz-meta header is refused, or allowed by config */
    static const char *const meta[] = {
        "Host", HOST_VH, "Range", "bytes=0-9", "x-amz-content-sha256", EMPTY_SHA,
        "x-amz-date", "20130524T000000Z", "X-Amz-Meta-Foo", "bar",
        "Authorization", "AWS4-HMAC-SHA256 Credential=" DOC_CRED ",SignedHeaders=host;range;"
        "x-amz-content-sha256;x-amz-date,Signature="
        "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41", NULL};
    req_init(&q, "GET", "/test.txt", NULL, meta);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_ACCESS_DENIED);
    CN_CHECK(strstr(res.message, "X-Amz-Meta-Foo") != NULL);
    struct gw_sigv4_config cfg = {.creds = creds, .allow_unsigned_amz_headers = 1};
    struct gw_sigv4 *v = gw_sigv4_new(&cfg);
    CN_CHECK_EQ_INT(gw_sigv4_verify(v, &q.r, &res), CN_OK);
    gw_sigv4_free(v);
    /* a query too long to sign */
    char *longq = cn_malloc(70001);
    memset(longq, 'q', 70000);
    longq[70000] = '\0';
    req_init(&q, "GET", "/test.txt", longq, get_object_hdrs);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_REQUEST_HEADER_SECTION_TOO_LARGE);
    memcpy(longq, "X-Amz-Algorithm=x&", 18);
    req_init(&q, "GET", "/test.txt", longq, host_only);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_AUTHORIZATION_QUERY_PARAMETERS_ERROR);
    cn_free(longq);
    /* a bad escape in the path */
    req_init(&q, "GET", "/test%zz.txt", NULL, get_object_hdrs);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_INVALID_URI);
    /* wrong secret for a known key */
    static const char *const other[] = {
        "Host", HOST_VH, "x-amz-content-sha256", EMPTY_SHA, "x-amz-date", "20130524T000000Z",
        "Authorization", "AWS4-HMAC-SHA256 Credential=AKIAOTHER/20130524/us-east-1/s3/"
        "aws4_request,SignedHeaders=host;x-amz-content-sha256;x-amz-date,Signature="
        "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41", NULL};
    req_init(&q, "GET", "/test.txt", NULL, other);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_SIGNATURE_DOES_NOT_MATCH);
    CN_CHECK(strncmp(res.string_to_sign, "AWS4-HMAC-SHA256\n20130524T000000Z\n", 34) == 0);
}

/* Canonical forms: header values trimmed and collapsed, repeated headers
 * joined, query values re-encoded. */
static void test_canonical_forms(void)
{
    static const char *const hdrs[] = {
        "Host", "h", "X-Test", "  a   b\t c  ", "x-test", "d", "x-amz-date", "20130524T000000Z",
        NULL};
    struct req q;
    req_init(&q, "GET", "/a b/%7e~/", "b=2&a=%2f&a=1&c&d=x+y", hdrs);
    struct gw_sigv4_auth auth;
    struct gw_sigv4_result res;
    const char *v = "AWS4-HMAC-SHA256 Credential=" DOC_CRED ", SignedHeaders=host;x-test, "
                    "Signature=" EMPTY_SHA;
    CN_CHECK_EQ_INT(gw_sigv4_parse_authorization(v, strlen(v), &auth, &res), CN_OK);
    CN_CHECK_EQ_INT(auth.n_signed, 2);
    CN_CHECK(auth.access_key.len == 20 && memcmp(auth.access_key.p, DOC_AK, 20) == 0);
    struct evbuffer *b = evbuffer_new();
    CN_CHECK_EQ_INT(gw_sigv4_canonical_request(&q.r, &auth, "UNSIGNED-PAYLOAD", 16, b), CN_OK);
    size_t n = evbuffer_get_length(b);
    char *s = cn_malloc(n + 1);
    evbuffer_remove(b, s, n);
    s[n] = '\0';
    CN_CHECK_EQ_STR(s, "GET\n/a%20b/~~/\na=%2F&a=1&b=2&c=&d=x%20y\nhost:h\nx-test:a b c,d\n\n"
                       "host;x-test\nUNSIGNED-PAYLOAD");
    cn_free(s);
    evbuffer_free(b);
}

static const struct cn_test_case cases[] = {
    {"doc_get_object", test_doc_get_object},
    {"doc_put_object", test_doc_put_object},
    {"doc_bucket_queries", test_doc_bucket_queries},
    {"doc_presigned", test_doc_presigned},
    {"presigned_refusals", test_presigned_refusals},
    {"doc_streaming_seeds", test_doc_streaming_seeds},
    {"header_refusals", test_header_refusals},
    {"time_and_region", test_time_and_region},
    {"misc_refusals", test_misc_refusals},
    {"canonical_forms", test_canonical_forms},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    creds = doc_creds();
    int rc = cn_test_main(cases, argc, argv);
    gw_credentials_free(creds);
    return rc;
}
