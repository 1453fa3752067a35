/* The aws-chunked decoder against the Amazon S3 API reference examples
 * (66560 bytes of 'a' in 64 KiB + 1 KiB chunks, with and without a signed
 * CRC32C trailer), fed whole, one byte at a time and in random pieces; and
 * the refusals. */
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "aws_chunked.h"
#include "checksum.h"
#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/test.h"

CN_TEST_GLOBALS;

#define DOC_SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define DOC_LEN 66560

static struct gw_sigv4_result doc_auth(const char *seed)
{
    struct gw_sigv4_result a;
    memset(&a, 0, sizeof(a));
    gw_sigv4_signing_key(DOC_SECRET, strlen(DOC_SECRET), "20130524", "us-east-1", 9,
                         a.signing_key);
    strcpy(a.signature, seed);
    strcpy(a.amz_date, "20130524T000000Z");
    strcpy(a.scope, "20130524/us-east-1/s3/aws4_request");
    return a;
}

/* A body assembled into one heap buffer. */
struct body {
    char *p;
    size_t len;
};

static struct body body_of(const char *const *pieces)
{
    struct evbuffer *b = evbuffer_new();
    for (size_t i = 0; pieces[i] != NULL; i++) {
        if (strcmp(pieces[i], "@64K") == 0 || strcmp(pieces[i], "@1K") == 0) {
            size_t n = pieces[i][1] == '6' ? 65536 : 1024;
            char *a = cn_malloc(n);
            memset(a, 'a', n);
            evbuffer_add(b, a, n);
            cn_free(a);
        } else {
            evbuffer_add(b, pieces[i], strlen(pieces[i]));
        }
    }
    struct body r = {.len = evbuffer_get_length(b)};
    r.p = cn_malloc(r.len + 1);
    evbuffer_remove(b, r.p, r.len);
    evbuffer_free(b);
    return r;
}

static const char *const doc_plain[] = {
    "10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n",
    "@64K", "\r\n",
    "400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n",
    "@1K", "\r\n",
    "0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n",
    "\r\n", NULL};

static const char *const doc_trailer[] = {
    "10000;chunk-signature=b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2\r\n",
    "@64K", "\r\n",
    "400;chunk-signature=1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7\r\n",
    "@1K", "\r\n",
    "0;chunk-signature=2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992\r\n",
    "x-amz-checksum-crc32c:sOO8/Q==\r\n",
    "x-amz-trailer-signature:d81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435\r\n",
    "\r\n", NULL};

/* The sink: collects the decoded data. */
struct sink {
    struct evbuffer *out;
    long calls;
    long fail_at;       /* >0: return CN_ERR on that call */
    const char *want_b64; /* the trailer checksum expected at CN_DONE */
};

static int sink_cb(void *arg, const char *data, size_t len)
{
    struct sink *s = arg;
    if (++s->calls == s->fail_at)
        return CN_ERR;
    evbuffer_add(s->out, data, len);
    return CN_OK;
}

/* Feeds body in pieces (step 0: random 1..4096; else that size) and returns
 * the final verdict; *consumed is the total taken. */
static int run(const struct gw_aws_chunked_config *cfg, const struct body *b, size_t step,
               struct sink *s, enum gw_s3_err *err, size_t *consumed, int call_finish)
{
    struct gw_aws_chunked *d = gw_aws_chunked_new(cfg, err);
    CN_CHECK(d != NULL);
    if (d == NULL)
        return CN_ERR;
    size_t pos = 0;
    int rc = CN_AGAIN;
    while (pos < b->len && rc == CN_AGAIN) {
        size_t n = step ? step : (size_t)(rand() % 4096) + 1;
        n = CN_MIN(n, b->len - pos);
        size_t used = 0;
        rc = gw_aws_chunked_feed(d, b->p + pos, n, &used, sink_cb, s, err);
        CN_CHECK(used <= n);
        if (rc == CN_AGAIN)
            CN_CHECK_EQ_INT(used, n);
        pos += used;
    }
    if (rc == CN_AGAIN && call_finish)
        rc = gw_aws_chunked_finish(d, err);
    *consumed = pos;
    if (rc == CN_DONE) {
        enum gw_checksum_algo a;
        char b64[GW_CHECKSUM_B64_MAX];
        int got = gw_aws_chunked_trailer_checksum(d, &a, b64);
        CN_CHECK_EQ_INT(got, s->want_b64 != NULL ? CN_OK : CN_NOTFOUND);
        if (got == CN_OK && s->want_b64 != NULL)
            CN_CHECK_EQ_STR(b64, s->want_b64);
        CN_CHECK_EQ_INT(gw_aws_chunked_decoded_bytes(d), evbuffer_get_length(s->out));
    }
    gw_aws_chunked_free(d);
    return rc;
}

static int all_a(struct evbuffer *b, size_t n)
{
    if (evbuffer_get_length(b) != n)
        return 0;
    unsigned char *p = evbuffer_pullup(b, -1);
    for (size_t i = 0; i < n; i++)
        if (p[i] != 'a')
            return 0;
    return 1;
}

static void check_doc(const char *const *pieces, const char *seed, enum gw_sigv4_payload mode,
                      const char *trailer)
{
    struct body b = body_of(pieces);
    struct gw_sigv4_result auth = doc_auth(seed);
    struct gw_aws_chunked_config cfg = {
        .mode = mode, .auth = &auth, .decoded_length = DOC_LEN, .trailer_names = trailer,
        .trailer_names_len = trailer != NULL ? strlen(trailer) : 0,
    };
    size_t steps[] = {b.len, 1, 2, 3, 7, 100, 65536, 65537, 0, 0, 0, 0};
    for (size_t i = 0; i < CN_ARRAY_LEN(steps); i++) {
        struct sink s = {.out = evbuffer_new(), .want_b64 = trailer != NULL ? "sOO8/Q==" : NULL};
        enum gw_s3_err err = GW_S3_INTERNAL_ERROR;
        size_t used = 0;
        int rc = run(&cfg, &b, steps[i], &s, &err, &used, 0);
        if (rc != CN_DONE)
            fprintf(stderr, "  step %zu: rc %d %s\n", steps[i], rc, gw_s3_error_code(err));
        CN_CHECK_EQ_INT(rc, CN_DONE);
        CN_CHECK_EQ_INT(err, GW_S3_OK);
        CN_CHECK_EQ_INT(used, b.len);
        CN_CHECK(all_a(s.out, DOC_LEN));
        evbuffer_free(s.out);
    }
    cn_free(b.p);
}

static void test_doc_signed(void)
{
    struct body b = body_of(doc_plain);
    CN_CHECK_EQ_INT(b.len, 66824); /* the documented Content-Length */
    cn_free(b.p);
    check_doc(doc_plain, "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9",
              GW_SIGV4_PAYLOAD_STREAMING, NULL);
}

static void test_doc_signed_trailer(void)
{
    check_doc(doc_trailer, "106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e",
              GW_SIGV4_PAYLOAD_STREAMING_TRAILER, "x-amz-checksum-crc32c");
}

/* The variants seen in the wild: an empty line between the 0 chunk and the
 * trailers, and no closing empty line (ended by the body's length). */
static void test_trailer_variants(void)
{
    static const char *const blank_first[] = {
        "10000;chunk-signature=b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2\r\n",
        "@64K", "\r\n",
        "400;chunk-signature=1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7\r\n",
        "@1K", "\r\n",
        "0;chunk-signature=2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992\r\n",
        "\r\n", "x-amz-checksum-crc32c:sOO8/Q==\r\n",
        "x-amz-trailer-signature:d81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435\r\n",
        NULL};
    struct body b = body_of(blank_first);
    struct gw_sigv4_result auth =
        doc_auth("106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e");
    struct gw_aws_chunked_config cfg = {
        .mode = GW_SIGV4_PAYLOAD_STREAMING_TRAILER, .auth = &auth, .decoded_length = DOC_LEN,
        .trailer_names = "x-amz-checksum-crc32c", .trailer_names_len = 21,
    };
    struct sink s = {.out = evbuffer_new(), .want_b64 = "sOO8/Q=="};
    enum gw_s3_err err;
    size_t used;
    CN_CHECK_EQ_INT(run(&cfg, &b, 0, &s, &err, &used, 0), CN_AGAIN);
    evbuffer_drain(s.out, evbuffer_get_length(s.out));
    CN_CHECK_EQ_INT(run(&cfg, &b, 0, &s, &err, &used, 1), CN_DONE);
    CN_CHECK(all_a(s.out, DOC_LEN));
    /* a body cut inside the data is incomplete */
    b.len -= 1000;
    evbuffer_drain(s.out, evbuffer_get_length(s.out));
    CN_CHECK_EQ_INT(run(&cfg, &b, 0, &s, &err, &used, 1), CN_INVAL);
    CN_CHECK_EQ_INT(err, GW_S3_INCOMPLETE_BODY);
    evbuffer_free(s.out);
    cn_free(b.p);
}

/* Runs a tampered copy of the doc body: byte at `at` set to c. */
static void check_tampered(const char *const *pieces, const char *seed,
                           enum gw_sigv4_payload mode, const char *trailer, size_t at, char c,
                           int want_rc, enum gw_s3_err want_err)
{
    struct body b = body_of(pieces);
    if (at >= b.len)
        at = b.len - (at - b.len) - 1; /* from the end */
    b.p[at] = c;
    struct gw_sigv4_result auth = doc_auth(seed);
    struct gw_aws_chunked_config cfg = {
        .mode = mode, .auth = &auth, .decoded_length = DOC_LEN, .trailer_names = trailer,
        .trailer_names_len = trailer != NULL ? strlen(trailer) : 0,
    };
    struct sink s = {.out = evbuffer_new()};
    enum gw_s3_err err = GW_S3_OK;
    size_t used;
    int rc = run(&cfg, &b, 0, &s, &err, &used, 1);
    if (rc != want_rc || err != want_err)
        fprintf(stderr, "  at %zu: rc %d %s\n", at, rc, gw_s3_error_code(err));
    CN_CHECK_EQ_INT(rc, want_rc);
    CN_CHECK_EQ_INT(err, want_err);
    evbuffer_free(s.out);
    cn_free(b.p);
}

static void test_signed_refusals(void)
{
    const char *seed = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9";
    const char *tseed = "106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e";
    /* a data byte of each chunk, a signature digit */
    check_tampered(doc_plain, seed, GW_SIGV4_PAYLOAD_STREAMING, NULL, 100, 'b', CN_CORRUPT,
                   GW_S3_SIGNATURE_DOES_NOT_MATCH);
    check_tampered(doc_plain, seed, GW_SIGV4_PAYLOAD_STREAMING, NULL, 65536 + 100 + 200, 'b',
                   CN_CORRUPT, GW_S3_SIGNATURE_DOES_NOT_MATCH);
    check_tampered(doc_plain, seed, GW_SIGV4_PAYLOAD_STREAMING, NULL, 30, '0', CN_CORRUPT,
                   GW_S3_SIGNATURE_DOES_NOT_MATCH);
    /* framing: size digit, the CRLF after data */
    check_tampered(doc_plain, seed, GW_SIGV4_PAYLOAD_STREAMING, NULL, 0, 'x', CN_INVAL,
                   GW_S3_INVALID_REQUEST);
    check_tampered(doc_plain, seed, GW_SIGV4_PAYLOAD_STREAMING, NULL, 88 + 65536, 'x',
                   CN_INVAL, GW_S3_INVALID_REQUEST);
    /* trailer value and trailer signature are both covered */
    struct body b = body_of(doc_trailer);
    size_t val = (size_t)(strstr(b.p + 66000, "sOO8") - b.p);
    size_t tsig = (size_t)(strstr(b.p + 66000, "d81f82") - b.p);
    cn_free(b.p);
    check_tampered(doc_trailer, tseed, GW_SIGV4_PAYLOAD_STREAMING_TRAILER,
                   "x-amz-checksum-crc32c", val + 4, 'A', CN_CORRUPT,
                   GW_S3_SIGNATURE_DOES_NOT_MATCH);
    check_tampered(doc_trailer, tseed, GW_SIGV4_PAYLOAD_STREAMING_TRAILER,
                   "x-amz-checksum-crc32c", tsig, 'e', CN_CORRUPT,
                   GW_S3_SIGNATURE_DOES_NOT_MATCH);
    /* a trailer that was not announced */
    check_tampered(doc_trailer, tseed, GW_SIGV4_PAYLOAD_STREAMING_TRAILER,
                   "x-amz-checksum-crc32", val + 4, 'Q', CN_INVAL, GW_S3_INVALID_REQUEST);
}

/* An unsigned-trailer body of random chunks with a CRC32 trailer. */
static struct body unsigned_body(const unsigned char *data, size_t n, const char *trailer_value)
{
    struct evbuffer *b = evbuffer_new();
    size_t pos = 0;
    while (pos < n) {
        size_t c = CN_MIN((size_t)(rand() % 9000) + 1, n - pos);
        evbuffer_add_printf(b, "%zx\r\n", c);
        evbuffer_add(b, data + pos, c);
        evbuffer_add(b, "\r\n", 2);
        pos += c;
    }
    evbuffer_add_printf(b, "0\r\nx-amz-checksum-crc32:%s\r\n\r\n", trailer_value);
    struct body r = {.len = evbuffer_get_length(b)};
    r.p = cn_malloc(r.len);
    evbuffer_remove(b, r.p, r.len);
    evbuffer_free(b);
    return r;
}

static void test_unsigned_trailer(void)
{
    size_t n = 100000;
    unsigned char *data = cn_malloc(n);
    for (size_t i = 0; i < n; i++)
        data[i] = (unsigned char)rand();
    struct gw_checksum c;
    gw_checksum_init(&c, GW_CHECKSUM_BIT(GW_CHECKSUM_CRC32));
    gw_checksum_update(&c, data, n);
    gw_checksum_final(&c);
    char b64[GW_CHECKSUM_B64_MAX];
    gw_checksum_base64(&c, GW_CHECKSUM_CRC32, b64);
    gw_checksum_fini(&c);
    struct gw_aws_chunked_config cfg = {
        .mode = GW_SIGV4_PAYLOAD_STREAMING_UNSIGNED_TRAILER, .decoded_length = (int64_t)n,
        .trailer_names = "X-Amz-Checksum-Crc32", .trailer_names_len = 20,
    };
    for (int round = 0; round < 4; round++) {
        struct body b = unsigned_body(data, n, b64);
        struct sink s = {.out = evbuffer_new(), .want_b64 = b64};
        enum gw_s3_err err;
        size_t used;
        CN_CHECK_EQ_INT(run(&cfg, &b, round == 0 ? 1 : 0, &s, &err, &used, 0), CN_DONE);
        CN_CHECK(evbuffer_get_length(s.out) == n &&
                 memcmp(evbuffer_pullup(s.out, -1), data, n) == 0);
        evbuffer_free(s.out);
        cn_free(b.p);
    }
    /* wrong checksum, malformed checksum, wrong decoded length */
    struct body b = unsigned_body(data, n, "AAAAAA==");
    struct sink s = {.out = evbuffer_new()};
    enum gw_s3_err err;
    size_t used;
    CN_CHECK_EQ_INT(run(&cfg, &b, 0, &s, &err, &used, 0), CN_CORRUPT);
    CN_CHECK_EQ_INT(err, GW_S3_BAD_DIGEST);
    cn_free(b.p);
    b = unsigned_body(data, n, "AAAA");
    CN_CHECK_EQ_INT(run(&cfg, &b, 0, &s, &err, &used, 0), CN_CORRUPT);
    CN_CHECK_EQ_INT(err, GW_S3_INVALID_REQUEST);
    cn_free(b.p);
    b = unsigned_body(data, n, b64);
    cfg.decoded_length = (int64_t)n + 1;
    CN_CHECK_EQ_INT(run(&cfg, &b, 0, &s, &err, &used, 0), CN_INVAL);
    CN_CHECK_EQ_INT(err, GW_S3_INCOMPLETE_BODY);
    cfg.decoded_length = (int64_t)n - 1;
    CN_CHECK_EQ_INT(run(&cfg, &b, 0, &s, &err, &used, 0), CN_INVAL);
    CN_CHECK_EQ_INT(err, GW_S3_INCOMPLETE_BODY);
    /* the callback stops the decoding */
    cfg.decoded_length = -1;
    s.calls = 0;
    s.fail_at = 3;
    CN_CHECK_EQ_INT(run(&cfg, &b, 0, &s, &err, &used, 0), CN_ERR);
    CN_CHECK_EQ_INT(err, GW_S3_INTERNAL_ERROR);
    cn_free(b.p);
    evbuffer_free(s.out);
    cn_free(data);
}

struct framing_case {
    const char *body;
    int rc;
    enum gw_s3_err err;
};

static void test_framing(void)
{
    static const struct framing_case v[] = {
        {"3\r\nabc\r\n0\r\n\r\n", CN_DONE, GW_S3_OK},
        {"3;foo=bar\r\nabc\r\n0\r\n\r\nEXTRA", CN_DONE, GW_S3_OK},
        {"3\nabc\r\n0\r\n\r\n", CN_INVAL, GW_S3_INVALID_REQUEST},
        {"3\r\nabcd\r\n0\r\n\r\n", CN_INVAL, GW_S3_INVALID_REQUEST},
        {"g\r\nabc\r\n", CN_INVAL, GW_S3_INVALID_REQUEST},
        {"\r\n", CN_INVAL, GW_S3_INVALID_REQUEST},
        {" 3\r\nabc\r\n", CN_INVAL, GW_S3_INVALID_REQUEST},
        {"11111111111111111\r\n", CN_TOOBIG, GW_S3_INVALID_REQUEST},
        {"1000001\r\n", CN_TOOBIG, GW_S3_ENTITY_TOO_LARGE},
        {"3\r\nabc\r\n0\r\nfoo:bar\r\n\r\n", CN_INVAL, GW_S3_INVALID_REQUEST},
        {"3\r\nabc\r\n0\r\nnocolon\r\n\r\n", CN_INVAL, GW_S3_INVALID_REQUEST},
        {"2\r\nab\r\n1\r\nc\r\n0\r\n\r\n", CN_INVAL, GW_S3_INVALID_CHUNK_SIZE},
    };
    struct gw_aws_chunked_config cfg = {
        .mode = GW_SIGV4_PAYLOAD_STREAMING_UNSIGNED_TRAILER, .decoded_length = -1,
        .max_chunk_size = 1 << 20,
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(v); i++) {
        struct body b = {(char *)v[i].body, strlen(v[i].body)};
        cfg.min_chunk_size = i == CN_ARRAY_LEN(v) - 1 ? 8192 : 0;
        for (size_t step = 0; step < 2; step++) {
            struct sink s = {.out = evbuffer_new()};
            enum gw_s3_err err = GW_S3_OK;
            size_t used;
            int rc = run(&cfg, &b, step ? 1 : b.len, &s, &err, &used, 0);
            if (rc != v[i].rc || err != v[i].err)
                fprintf(stderr, "  case %zu step %zu: rc %d %s\n", i, step, rc,
                        gw_s3_error_code(err));
            CN_CHECK_EQ_INT(rc, v[i].rc);
            CN_CHECK_EQ_INT(err, v[i].err);
            if (i == 1)
                CN_CHECK_EQ_INT(used, b.len - 5); /* stops before EXTRA */
            evbuffer_free(s.out);
        }
    }
    /* a line longer than the limit */
    char *big = cn_malloc(GW_AWS_CHUNKED_LINE_MAX + 10);
    memset(big, ';', GW_AWS_CHUNKED_LINE_MAX + 10);
    big[0] = '1';
    struct body b = {big, GW_AWS_CHUNKED_LINE_MAX + 10};
    struct sink s = {.out = evbuffer_new()};
    enum gw_s3_err err;
    size_t used;
    CN_CHECK_EQ_INT(run(&cfg, &b, 0, &s, &err, &used, 0), CN_TOOBIG);
    evbuffer_free(s.out);
    cn_free(big);
}

static void test_config_refusals(void)
{
    enum gw_s3_err err;
    struct gw_aws_chunked_config cfg = {.mode = GW_SIGV4_PAYLOAD_UNSIGNED};
    CN_CHECK(gw_aws_chunked_new(&cfg, &err) == NULL);
    CN_CHECK_EQ_INT(err, GW_S3_INVALID_REQUEST);
    cfg.mode = GW_SIGV4_PAYLOAD_STREAMING; /* no auth */
    CN_CHECK(gw_aws_chunked_new(&cfg, &err) == NULL);
    cfg.mode = GW_SIGV4_PAYLOAD_STREAMING_UNSIGNED_TRAILER;
    cfg.trailer_names = "x-amz-meta-foo";
    cfg.trailer_names_len = 14;
    CN_CHECK(gw_aws_chunked_new(&cfg, &err) == NULL);
    CN_CHECK_EQ_INT(err, GW_S3_INVALID_ARGUMENT);
    cfg.trailer_names = "x-amz-checksum-crc32, x-amz-checksum-sha1";
    cfg.trailer_names_len = strlen(cfg.trailer_names);
    CN_CHECK(gw_aws_chunked_new(&cfg, &err) == NULL);
    cfg.trailer_names = " x-amz-checksum-crc64nvme ";
    cfg.trailer_names_len = strlen(cfg.trailer_names);
    struct gw_aws_chunked *d = gw_aws_chunked_new(&cfg, &err);
    CN_CHECK(d != NULL && err == GW_S3_OK);
    gw_aws_chunked_free(d);
    gw_aws_chunked_free(NULL);
}

static const struct cn_test_case cases[] = {
    {"doc_signed", test_doc_signed},
    {"doc_signed_trailer", test_doc_signed_trailer},
    {"trailer_variants", test_trailer_variants},
    {"signed_refusals", test_signed_refusals},
    {"unsigned_trailer", test_unsigned_trailer},
    {"framing", test_framing},
    {"config_refusals", test_config_refusals},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    srand(12345);
    return cn_test_main(cases, argc, argv);
}
