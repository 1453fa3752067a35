/* SigV2 verification against the worked examples of AWS's "Signing and
 * Authenticating REST Requests" (Amazon S3 API reference, Signature Version
 * 2: Object GET, Object PUT, List, Fetch ACL, Delete, Upload, List All My
 * Buckets, Unicode Keys, Query String Request Authentication), all with the
 * documented pair AKIAIOSFODNN7EXAMPLE / wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY,
 * plus the refusals S3 gives. Each example checks our StringToSign against
 * the documented one and the whole verification against the documented
 * signature at the documented time. */
#include <string.h>

#include <event2/buffer.h>

#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/test.h"
#include "credentials.h"
#include "sigv2.h"

CN_TEST_GLOBALS;

#define DOC_AK "AKIAIOSFODNN7EXAMPLE"
#define DOC_SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

static struct gw_credentials *creds;

static struct gw_credentials *doc_creds(void)
{
    static const char text[] = DOC_AK " " DOC_SECRET " owner-1 Example\n"
                                      "AKIAOTHER other-secret owner-2 Other\n";
    struct gw_credentials *c = NULL;
    char err[CN_ERR_LEN];
    CN_ASSERT(gw_credentials_load_buf(text, sizeof(text) - 1, "doc", &c, err) == CN_OK);
    return c;
}

/* A request from NUL-terminated pieces; headers "name", "value" ... NULL. */
struct req {
    struct gw_sigv4_request r;
    struct gw_sigv4_header h[32];
    const char *vb;          /* the virtual-host bucket, or NULL */
};

static void req_init(struct req *q, const char *method, const char *path, const char *query,
                     const char *vb, const char *const *hdrs, time_t now)
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
    q->r.now = now;
    q->vb = vb;
}

static int verify(const struct req *q, struct gw_sigv4_result *res)
{
    struct gw_sigv2_config cfg = {.creds = creds};
    struct gw_sigv2 *v = gw_sigv2_new(&cfg);
    int rc = gw_sigv2_verify(v, &q->r, q->vb, q->vb != NULL ? strlen(q->vb) : 0, res);
    gw_sigv2_free(v);
    return rc;
}

/* Our StringToSign of q (header auth unless date is given). */
static char *sts_of(const struct req *q, const char *date)
{
    struct evbuffer *b = evbuffer_new();
    int rc = gw_sigv2_string_to_sign(&q->r, q->vb, q->vb != NULL ? strlen(q->vb) : 0, date,
                                     date != NULL ? strlen(date) : 0, b);
    CN_CHECK_EQ_INT(rc, CN_OK);
    size_t n = evbuffer_get_length(b);
    char *s = cn_malloc(n + 1);
    evbuffer_remove(b, s, n);
    s[n] = '\0';
    evbuffer_free(b);
    return s;
}

/* Checks the StringToSign, the documented signature over it, and a full
 * verification of the request signed with it. */
static void check_example(struct req *q, const char *want_sts, const char *want_sig)
{
    char *s = sts_of(q, NULL);
    CN_CHECK_EQ_STR(s, want_sts);
    char sig[GW_SIGV2_SIG_B64 + 1];
    gw_sigv2_sign(DOC_SECRET, strlen(DOC_SECRET), s, strlen(s), sig);
    CN_CHECK_EQ_STR(sig, want_sig);
    cn_free(s);
    char auth[128];
    snprintf(auth, sizeof(auth), "AWS " DOC_AK ":%s", want_sig);
    q->h[q->r.n_headers] = (struct gw_sigv4_header){"Authorization", 13, auth, strlen(auth)};
    q->r.n_headers++;
    CN_CHECK(gw_sigv2_detect(&q->r));
    struct gw_sigv4_result res;
    int rc = verify(q, &res);
    if (rc != CN_OK)
        fprintf(stderr, "  refused: %s %s\n", gw_s3_error_code(res.err), res.message);
    CN_CHECK_EQ_INT(rc, CN_OK);
    CN_CHECK(res.cred != NULL && strcmp(res.cred->owner_id, "owner-1") == 0);
    CN_CHECK_EQ_INT(res.payload, GW_SIGV4_PAYLOAD_UNSIGNED);
    CN_CHECK_EQ_STR(res.signature, want_sig);
    q->r.n_headers--;
}

static void test_doc_object_get(void)
{
    struct req q;
    req_init(&q, "GET", "/photos/puppy.jpg", NULL, "johnsmith",
             (const char *const[]){"Host", "johnsmith.s3.amazonaws.com", "Date",
                                   "Tue, 27 Mar 2007 19:36:42 +0000", NULL},
             1175024202);
    check_example(&q, "GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/johnsmith/photos/puppy.jpg",
                  "bWq2s1WEIj+Ydj0vQ697zp+IXMU=");
}

static void test_doc_object_put(void)
{
    struct req q;
    req_init(&q, "PUT", "/photos/puppy.jpg", NULL, "johnsmith",
             (const char *const[]){"Content-Type", "image/jpeg", "Content-Length", "94328",
                                   "Host", "johnsmith.s3.amazonaws.com", "Date",
                                   "Tue, 27 Mar 2007 21:15:45 +0000", NULL},
             1175030145);
    check_example(&q, "PUT\n\nimage/jpeg\nTue, 27 Mar 2007 21:15:45 +0000\n"
                      "/johnsmith/photos/puppy.jpg",
                  "MyyxeRY7whkBe+bq8fHCL/2kKUg=");
}

/* List: prefix, max-keys and marker are not sub-resources. */
static void test_doc_list(void)
{
    struct req q;
    req_init(&q, "GET", "/", "prefix=photos&max-keys=50&marker=puppy", "johnsmith",
             (const char *const[]){"User-Agent", "Mozilla/5.0", "Host",
                                   "johnsmith.s3.amazonaws.com", "Date",
                                   "Tue, 27 Mar 2007 19:42:41 +0000", NULL},
             1175024561);
    check_example(&q, "GET\n\n\nTue, 27 Mar 2007 19:42:41 +0000\n/johnsmith/",
                  "htDYFYduRNen8P9ZfE/s9SuKy0U=");
}

static void test_doc_fetch_acl(void)
{
    struct req q;
    req_init(&q, "GET", "/", "acl", "johnsmith",
             (const char *const[]){"Host", "johnsmith.s3.amazonaws.com", "Date",
                                   "Tue, 27 Mar 2007 19:44:46 +0000", NULL},
             1175024686);
    check_example(&q, "GET\n\n\nTue, 27 Mar 2007 19:44:46 +0000\n/johnsmith/?acl",
                  "c2WLPFtWHVgbEmeEG93a4cG37dM=");
}

/* Delete, path style, with x-amz-date: the Date line is empty. The page
 * prints the string to sign with one newline too few and a signature
 * (k3nL7gH3...) that matches neither form; the signature here is HMAC-SHA1
 * of the string its rules give, as every independent implementation notes. */
static void test_doc_delete(void)
{
    struct req q;
    req_init(&q, "DELETE", "/johnsmith/photos/puppy.jpg", NULL, NULL,
             (const char *const[]){"User-Agent", "dotnet", "Host", "s3.amazonaws.com", "Date",
                                   "Tue, 27 Mar 2007 21:20:27 +0000", "x-amz-date",
                                   "Tue, 27 Mar 2007 21:20:26 +0000", NULL},
             1175030426);
    check_example(&q, "DELETE\n\n\n\nx-amz-date:Tue, 27 Mar 2007 21:20:26 +0000\n"
                      "/johnsmith/photos/puppy.jpg",
                  "R4dJ53KECjStyBO5iTBJZ4XVOaI=");
}

/* Upload: a CNAME-style virtual host, repeated and mixed-case x-amz-meta-*
 * names, Content-MD5. */
static void test_doc_upload(void)
{
    struct req q;
    req_init(&q, "PUT", "/db-backup.dat.gz", NULL, "static.johnsmith.net",
             (const char *const[]){"User-Agent", "curl/7.15.5", "Host",
                                   "static.johnsmith.net:8080", "Date",
                                   "Tue, 27 Mar 2007 21:06:08 +0000", "x-amz-acl", "public-read",
                                   "content-type", "application/x-download", "Content-MD5",
                                   "4gJE4saaMU4BqNR0kLY+lw==", "X-Amz-Meta-ReviewedBy",
                                   "joe@johnsmith.net", "X-Amz-Meta-ReviewedBy",
                                   "jane@johnsmith.net", "X-Amz-Meta-FileChecksum", "0x02661779",
                                   "X-Amz-Meta-ChecksumAlgorithm", "crc32",
                                   "Content-Disposition", "attachment; filename=database.dat",
                                   "Content-Encoding", "gzip", "Content-Length", "5913339",
                                   NULL},
             1175029568);
    check_example(&q, "PUT\n4gJE4saaMU4BqNR0kLY+lw==\napplication/x-download\n"
                      "Tue, 27 Mar 2007 21:06:08 +0000\n"
                      "x-amz-acl:public-read\n"
                      "x-amz-meta-checksumalgorithm:crc32\n"
                      "x-amz-meta-filechecksum:0x02661779\n"
                      "x-amz-meta-reviewedby:joe@johnsmith.net,jane@johnsmith.net\n"
                      "/static.johnsmith.net/db-backup.dat.gz",
                  "ilyl83RwaSoYIEdixDQcA4OnAnc=");
}

static void test_doc_list_buckets(void)
{
    struct req q;
    req_init(&q, "GET", "/", NULL, NULL,
             (const char *const[]){"Host", "s3.amazonaws.com", "Date",
                                   "Wed, 28 Mar 2007 01:29:59 +0000", NULL},
             1175045399);
    check_example(&q, "GET\n\n\nWed, 28 Mar 2007 01:29:59 +0000\n/",
                  "qGdzdERIC03wnaRNKh6OqZehG9s=");
}

/* Unicode keys: the path is signed as sent, escapes and their case kept. */
static void test_doc_unicode_keys(void)
{
    struct req q;
    req_init(&q, "GET", "/dictionary/fran%C3%A7ais/pr%c3%a9f%c3%a8re", NULL, NULL,
             (const char *const[]){"Host", "s3.amazonaws.com", "Date",
                                   "Wed, 28 Mar 2007 01:49:49 +0000", NULL},
             1175046589);
    check_example(&q, "GET\n\n\nWed, 28 Mar 2007 01:49:49 +0000\n"
                      "/dictionary/fran%C3%A7ais/pr%c3%a9f%c3%a8re",
                  "DNEZGsoieTZ92F3bUfSPQcbGmlM=");
}

/* Query string request authentication: Expires takes the Date's place. */
static void test_doc_presigned(void)
{
    static const char query[] = "AWSAccessKeyId=" DOC_AK "&Expires=1175139620&"
                                "Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D";
    struct req q;
    req_init(&q, "GET", "/photos/puppy.jpg", query, "johnsmith",
             (const char *const[]){"Host", "johnsmith.s3.amazonaws.com", NULL}, 1175139000);
    char *s = sts_of(&q, "1175139620");
    CN_CHECK_EQ_STR(s, "GET\n\n\n1175139620\n/johnsmith/photos/puppy.jpg");
    cn_free(s);
    CN_CHECK(gw_sigv2_detect(&q.r));
    struct gw_sigv4_result res;
    CN_CHECK_EQ_INT(verify(&q, &res), CN_OK);
    CN_CHECK(res.presigned == 1 && res.cred != NULL);
    /* one second past Expires: "Request has expired", even before the key */
    q.r.now = 1175139621;
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_EXPIRED_PRESIGNED);
    CN_CHECK(res.cred == NULL);
    /* another path under the same signature */
    q.r.now = 1175139000;
    q.r.path = "/photos/kitten.jpg";
    q.r.path_len = strlen(q.r.path);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_SIGNATURE_DOES_NOT_MATCH);
    /* a sub-resource added to the query */
    req_init(&q, "GET", "/photos/puppy.jpg",
             "AWSAccessKeyId=" DOC_AK "&Expires=1175139620&acl&"
             "Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D", "johnsmith",
             (const char *const[]){NULL}, 1175139000);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_SIGNATURE_DOES_NOT_MATCH);
    /* a later Expires under the old signature */
    req_init(&q, "GET", "/photos/puppy.jpg",
             "AWSAccessKeyId=" DOC_AK "&Expires=1175139999&"
             "Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D", "johnsmith",
             (const char *const[]){NULL}, 1175139000);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_SIGNATURE_DOES_NOT_MATCH);
    /* '+' left unencoded in Signature is still '+' */
    req_init(&q, "GET", "/photos/puppy.jpg",
             "AWSAccessKeyId=" DOC_AK "&Expires=1175139620&"
             "Signature=NpgCjnDzrM+WFzoENXmpNDUsSn8=", "johnsmith",
             (const char *const[]){NULL}, 1175139000);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_OK);
}

static void test_refusals(void)
{
    struct gw_sigv4_result res;
    struct req q;
    const char *date = "Tue, 27 Mar 2007 19:36:42 +0000";
    const char *good = "AWS " DOC_AK ":bWq2s1WEIj+Ydj0vQ697zp+IXMU=";
    /* the doc's GET, signed right: the base case the refusals vary */
    req_init(&q, "GET", "/photos/puppy.jpg", NULL, "johnsmith",
             (const char *const[]){"Date", date, "Authorization", good, NULL}, 1175024202);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_OK);
    /* 15 minutes off is fine, 16 is RequestTimeTooSkewed */
    q.r.now = 1175024202 + 900;
    CN_CHECK_EQ_INT(verify(&q, &res), CN_OK);
    q.r.now = 1175024202 - 960;
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_REQUEST_TIME_TOO_SKEWED);
    /* the same signature by another key (its secret differs) */
    req_init(&q, "GET", "/photos/puppy.jpg", NULL, "johnsmith",
             (const char *const[]){"Date", date, "Authorization",
                                   "AWS AKIAOTHER:bWq2s1WEIj+Ydj0vQ697zp+IXMU=", NULL},
             1175024202);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_SIGNATURE_DOES_NOT_MATCH);
    CN_CHECK(strncmp(res.string_to_sign, "GET\n", 4) == 0);
    /* an unknown key */
    req_init(&q, "GET", "/photos/puppy.jpg", NULL, "johnsmith",
             (const char *const[]){"Date", date, "Authorization",
                                   "AWS AKIANOBODY:bWq2s1WEIj+Ydj0vQ697zp+IXMU=", NULL},
             1175024202);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_INVALID_ACCESS_KEY_ID);
    /* path style for the same object: "/johnsmith" comes from the path */
    req_init(&q, "GET", "/johnsmith/photos/puppy.jpg", NULL, NULL,
             (const char *const[]){"Date", date, "Authorization", good, NULL}, 1175024202);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_OK);
    /* another bucket, key, method or Content-Type */
    req_init(&q, "GET", "/photos/puppy.jpg", NULL, "johnsmitx",
             (const char *const[]){"Date", date, "Authorization", good, NULL}, 1175024202);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_SIGNATURE_DOES_NOT_MATCH);
    req_init(&q, "HEAD", "/photos/puppy.jpg", NULL, "johnsmith",
             (const char *const[]){"Date", date, "Authorization", good, NULL}, 1175024202);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_SIGNATURE_DOES_NOT_MATCH);
    req_init(&q, "GET", "/photos/puppy.jpg", NULL, "johnsmith",
             (const char *const[]){"Date", date, "Content-Type", "text/html", "Authorization",
                                   good, NULL},
             1175024202);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_SIGNATURE_DOES_NOT_MATCH);
    /* an x-amz-* header added after signing */
    req_init(&q, "GET", "/photos/puppy.jpg", NULL, "johnsmith",
             (const char *const[]){"Date", date, "x-amz-meta-a", "b", "Authorization", good,
                                   NULL},
             1175024202);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_SIGNATURE_DOES_NOT_MATCH);
    /* no date at all, or one that does not parse */
    req_init(&q, "GET", "/photos/puppy.jpg", NULL, "johnsmith",
             (const char *const[]){"Authorization", good, NULL}, 1175024202);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_ACCESS_DENIED);
    req_init(&q, "GET", "/photos/puppy.jpg", NULL, "johnsmith",
             (const char *const[]){"Date", "yesterday", "Authorization", good, NULL},
             1175024202);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_ACCESS_DENIED);
    /* both forms at once */
    req_init(&q, "GET", "/photos/puppy.jpg",
             "AWSAccessKeyId=" DOC_AK "&Expires=1175139620&Signature=x", "johnsmith",
             (const char *const[]){"Date", date, "Authorization", good, NULL}, 1175024202);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_INVALID_ARGUMENT);
    /* a query missing a part, or with a bad Expires */
    req_init(&q, "GET", "/o", "AWSAccessKeyId=" DOC_AK "&Signature=x", NULL,
             (const char *const[]){NULL}, 1175024202);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_ACCESS_DENIED);
    req_init(&q, "GET", "/o", "AWSAccessKeyId=" DOC_AK "&Signature=x&Expires=soon", NULL,
             (const char *const[]){NULL}, 1175024202);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_ACCESS_DENIED);
    req_init(&q, "GET", "/o", "AWSAccessKeyId=" DOC_AK "&Signature=x&Expires=9&Expires=9",
             NULL, (const char *const[]){NULL}, 1);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_INVALID_ARGUMENT);
    /* an unknown key in the query: after the expiry check */
    req_init(&q, "GET", "/o", "AWSAccessKeyId=AKIANOBODY&Signature=x&Expires=99", NULL,
             (const char *const[]){NULL}, 1);
    CN_CHECK_EQ_INT(verify(&q, &res), CN_INVAL);
    CN_CHECK_EQ_INT(res.err, GW_S3_INVALID_ACCESS_KEY_ID);
}

static void test_parse_authorization(void)
{
    struct gw_sigv2_auth a;
    struct gw_sigv4_result res;
    static const char *const bad[] = {
        "AWS ", "AWS nokey", "AWS :sig", "AWS ak:", "AWS a k:sig", "AWS ak:s g",
        "AWS ak:0123456789012345678901234567890123456789012345678901234567890123456789",
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(bad); i++) {
        CN_CHECK_EQ_INT(gw_sigv2_parse_authorization(bad[i], strlen(bad[i]), &a, &res),
                        CN_INVAL);
        CN_CHECK_EQ_INT(res.err, GW_S3_INVALID_ARGUMENT);
    }
    CN_CHECK_EQ_INT(gw_sigv2_parse_authorization("AWS4-HMAC-SHA256 x", 18, &a, &res),
                    CN_NOTFOUND);
    CN_CHECK_EQ_INT(gw_sigv2_parse_authorization("Bearer x", 8, &a, &res), CN_NOTFOUND);
    static const char ok[] = "AWS  AKIA:c2lnbmF0dXJl ";
    CN_CHECK_EQ_INT(gw_sigv2_parse_authorization(ok, strlen(ok), &a, &res), CN_OK);
    CN_CHECK(a.access_key_len == 4 && memcmp(a.access_key, "AKIA", 4) == 0);
    CN_CHECK_EQ_STR(a.signature, "c2lnbmF0dXJl");
}

/* Which requests the router hands to SigV2. */
static void test_detect(void)
{
    struct req q;
    req_init(&q, "GET", "/", NULL, NULL, (const char *const[]){"Authorization", "AWS a:b", NULL},
             0);
    CN_CHECK(gw_sigv2_detect(&q.r));
    req_init(&q, "GET", "/", NULL, NULL,
             (const char *const[]){"Authorization", "AWS4-HMAC-SHA256 Credential=x", NULL}, 0);
    CN_CHECK(!gw_sigv2_detect(&q.r));
    req_init(&q, "GET", "/", "a=1&AWSAccessKeyId=x", NULL, (const char *const[]){NULL}, 0);
    CN_CHECK(gw_sigv2_detect(&q.r));
    req_init(&q, "GET", "/", "%53ignature=x", NULL, (const char *const[]){NULL}, 0);
    CN_CHECK(gw_sigv2_detect(&q.r));
    req_init(&q, "GET", "/", "X-Amz-Algorithm=AWS4-HMAC-SHA256&Signature=x", NULL,
             (const char *const[]){NULL}, 0);
    CN_CHECK(!gw_sigv2_detect(&q.r));
    req_init(&q, "GET", "/", "list-type=2", NULL, (const char *const[]){NULL}, 0);
    CN_CHECK(!gw_sigv2_detect(&q.r));
    req_init(&q, "GET", "/", NULL, NULL, (const char *const[]){NULL}, 0);
    CN_CHECK(!gw_sigv2_detect(&q.r));
}

/* Sub-resources: the documented list and the SDKs' later ones, sorted by
 * name, values decoded; other parameters and the auth ones left out;
 * x-amz-* values trimmed and unfolded; x-amz-date empties the Date line. */
static void test_canonical_forms(void)
{
    struct req q;
    req_init(&q, "GET", "/b/k", "versionId=3%2B4&uploads&x=1&acl=&partNumber=2&"
             "response-content-type=text%2Fplain&tagging&Signature=s&AWSAccessKeyId=a&"
             "Expires=1&versions&uploadId=u",
             NULL,
             (const char *const[]){"X-AMZ-Meta-B", "  two   words  ", "x-amz-meta-a", "1",
                                   "Content-MD5", " md5 ", "x-amz-meta-fold",
                                   "first\r\n  second", "Date", "ignored", "x-amz-meta-a",
                                   "0", "x-amz-date", "Wed, 28 Mar 2007 01:29:59 GMT", NULL},
             0);
    char *s = sts_of(&q, NULL);
    CN_CHECK_EQ_STR(s, "GET\nmd5\n\n\n"
                       "x-amz-date:Wed, 28 Mar 2007 01:29:59 GMT\n"
                       "x-amz-meta-a:1,0\n"
                       "x-amz-meta-b:two   words\n"
                       "x-amz-meta-fold:first second\n"
                       "/b/k?acl=&partNumber=2&response-content-type=text/plain&tagging&"
                       "uploadId=u&uploads&versionId=3+4&versions");
    cn_free(s);
    CN_CHECK(gw_sigv2_is_subresource("acl", 3));
    CN_CHECK(gw_sigv2_is_subresource("website", 7));
    CN_CHECK(gw_sigv2_is_subresource("response-expires", 16));
    CN_CHECK(!gw_sigv2_is_subresource("ac", 2));
    CN_CHECK(!gw_sigv2_is_subresource("prefix", 6));
    CN_CHECK(!gw_sigv2_is_subresource("ACL", 3));
    /* a path-style bucket is "/bucket/" with or without its slash */
    req_init(&q, "GET", "/b", "acl", NULL, (const char *const[]){"Date", "d", NULL}, 0);
    s = sts_of(&q, NULL);
    CN_CHECK_EQ_STR(s, "GET\n\n\nd\n/b/?acl");
    cn_free(s);
    req_init(&q, "GET", "/b/", NULL, NULL, (const char *const[]){"Date", "d", NULL}, 0);
    s = sts_of(&q, NULL);
    CN_CHECK_EQ_STR(s, "GET\n\n\nd\n/b/");
    cn_free(s);
    /* a bad escape in a sub-resource value */
    req_init(&q, "GET", "/", "acl=%zz", NULL, (const char *const[]){NULL}, 0);
    struct evbuffer *b = evbuffer_new();
    CN_CHECK_EQ_INT(gw_sigv2_string_to_sign(&q.r, NULL, 0, NULL, 0, b), CN_INVAL);
    evbuffer_free(b);
}

static const struct cn_test_case cases[] = {
    {"doc_object_get", test_doc_object_get},
    {"doc_object_put", test_doc_object_put},
    {"doc_list", test_doc_list},
    {"doc_fetch_acl", test_doc_fetch_acl},
    {"doc_delete", test_doc_delete},
    {"doc_upload", test_doc_upload},
    {"doc_list_buckets", test_doc_list_buckets},
    {"doc_unicode_keys", test_doc_unicode_keys},
    {"doc_presigned", test_doc_presigned},
    {"refusals", test_refusals},
    {"parse_authorization", test_parse_authorization},
    {"detect", test_detect},
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
