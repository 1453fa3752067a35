/* Unit tests of the incremental HTTP request parser and the chunked decoder
 * (gateway/http/http_parser.c, gateway/http/http_chunked.c). */
#include <string.h>

#include <event2/buffer.h>

#include "http_chunked.h"
#include "http_parser.h"

#include "cn/test.h"

CN_TEST_GLOBALS;

/* Feeds s in pieces of step bytes; returns the final status. */
static int test_feed(struct gw_http_parser *p, const char *s, size_t step, size_t *total_used)
{
    size_t len = strlen(s), off = 0;
    int rc = CN_AGAIN;
    *total_used = 0;
    while (off < len && rc == CN_AGAIN) {
        size_t n = CN_MIN(step, len - off), used;
        rc = gw_http_parser_feed(p, s + off, n, &used);
        off += used;
        *total_used += used;
    }
    return rc;
}

static void test_http_simple_every_split(void)
{
    const char *req = "PUT /bucket/key%20x?partNumber=1&uploadId=a HTTP/1.1\r\n"
                      "Host: s3.localhost:8080\r\n"
                      "Content-Length: 11\r\n"
                      "X-Amz-Meta-Foo:   bar baz  \r\n"
                      "Expect: 100-continue\r\n"
                      "\r\nhello world";
    for (size_t step = 1; step < 200; step += 7) {
        struct gw_http_parser p;
        gw_http_parser_init(&p, NULL);
        size_t used;
        CN_CHECK_EQ_INT(test_feed(&p, req, step, &used), CN_OK);
        CN_CHECK_EQ_INT(used, strlen(req) - 11);
        CN_CHECK_EQ_STR(p.method, "PUT");
        CN_CHECK_EQ_INT(p.path_len, strlen("/bucket/key%20x"));
        CN_CHECK(memcmp(p.path, "/bucket/key%20x", p.path_len) == 0);
        CN_CHECK_EQ_STR(p.query, "partNumber=1&uploadId=a");
        CN_CHECK_EQ_INT(p.version_minor, 1);
        CN_CHECK_EQ_INT(p.n_headers, 4);
        CN_CHECK_EQ_INT(p.content_length, 11);
        CN_CHECK(p.keep_alive && p.expect_continue && !p.chunked);
        const struct gw_http_header *h = gw_http_parser_header(&p, "x-amz-meta-foo");
        CN_CHECK(h != NULL && strcmp(h->value, "bar baz") == 0 && h->value_len == 7);
        gw_http_parser_fini(&p);
    }
}

static void test_http_keepalive_reset(void)
{
    struct gw_http_parser p;
    gw_http_parser_init(&p, NULL);
    size_t used;
    CN_CHECK_EQ_INT(test_feed(&p, "GET / HTTP/1.0\r\n\r\n", 100, &used), CN_OK);
    CN_CHECK_EQ_INT(p.keep_alive, 0);
    CN_CHECK_EQ_INT(p.query_len, 0);
    CN_CHECK_EQ_STR(p.query, "");
    gw_http_parser_reset(&p);
    CN_CHECK_EQ_INT(test_feed(&p, "\r\nHEAD /b HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
                              100, &used), CN_OK);
    CN_CHECK_EQ_STR(p.method, "HEAD");
    CN_CHECK_EQ_INT(p.keep_alive, 0);
    gw_http_parser_reset(&p);
    CN_CHECK_EQ_INT(test_feed(&p, "PUT /b/k HTTP/1.1\r\nHost: h\r\n"
                              "Transfer-Encoding: chunked\r\n\r\n", 100, &used), CN_OK);
    CN_CHECK(p.chunked && p.content_length == -1);
    gw_http_parser_fini(&p);
}

struct test_bad_case {
    const char *req;
    int rc;
    int status;
};

static void test_http_bad_requests(void)
{
    static const struct test_bad_case cases[] = {
        {"GET / HTTP/2.0\r\n\r\n", CN_INVAL, 505},
        {"GET / FOO\r\n\r\n", CN_INVAL, 505},
        {"G(T / HTTP/1.1\r\n\r\n", CN_INVAL, 400},
        {"GET bucket HTTP/1.1\r\n\r\n", CN_INVAL, 400},
        {"GET /a\x01 HTTP/1.1\r\n\r\n", CN_INVAL, 400},
        {"GET / HTTP/1.1\r\nHost\r\n\r\n", CN_INVAL, 400},
        {"GET / HTTP/1.1\r\n: x\r\n\r\n", CN_INVAL, 400},
        {"GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", CN_INVAL, 400},
        {"GET / HTTP/1.1\r\nA: b\0c\r\n\r\n", CN_AGAIN, 200}, /* strlen stops at NUL */
        {"GET / HTTP/1.1\r\nA: b\x7f\r\n\r\n", CN_INVAL, 400},
        {"GET / HTTP/1.1\rX", CN_INVAL, 400},
        {"PUT / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", CN_INVAL, 400},
        {"PUT / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", CN_INVAL, 400},
        {"PUT / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", CN_INVAL, 400},
        {"PUT / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", CN_INVAL, 400},
        {"PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
         CN_INVAL, 400},
        /* line ends are CRLF only: a bare LF or CR is refused (smuggling) */
        {"GET / HTTP/1.1\nHost: h\r\n\r\n", CN_INVAL, 400},
        {"GET / HTTP/1.1\r\nHost: h\nA: b\r\n\r\n", CN_INVAL, 400},
        {"GET / HTTP/1.1\r\nHost: h\r\n\n", CN_INVAL, 400},
        {"GET / HTTP/1.1\r\nHost: h\r\nA: b\rc\r\n\r\n", CN_INVAL, 400},
        {"GET / HTTP/1.1\r\nHost : h\r\n\r\n", CN_INVAL, 400},
        /* Host: exactly one in HTTP/1.1; HTTP/1.0 may leave it out */
        {"GET / HTTP/1.1\r\nA: b\r\n\r\n", CN_INVAL, 400},
        {"GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", CN_INVAL, 400},
        {"GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", CN_INVAL, 400},
        {"GET / HTTP/1.0\r\n\r\n", CN_OK, 200},
        {"GET / HTTP/1.1\r\nHost: h\r\n\r\n", CN_OK, 200},
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(cases); i++) {
        struct gw_http_parser p;
        gw_http_parser_init(&p, NULL);
        size_t used;
        int rc = test_feed(&p, cases[i].req, 3, &used);
        if (rc != cases[i].rc)
            fprintf(stderr, "  case %zu: rc %d\n", i, rc);
        CN_CHECK_EQ_INT(rc, cases[i].rc);
        CN_CHECK_EQ_INT(gw_http_fail_status(p.fail), cases[i].status);
        /* a failed parser stays failed */
        if (rc == CN_INVAL)
            CN_CHECK_EQ_INT(gw_http_parser_feed(&p, "x", 1, &used), CN_INVAL);
        gw_http_parser_fini(&p);
    }
}

/* A missing or doubled Host is its own failure (the gateway answers
 * InvalidRequest for it, BadRequest for broken syntax). */
static void test_http_host(void)
{
    static const char *const reqs[] = {
        "GET / HTTP/1.1\r\nA: b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nHOST: a\r\n\r\n",
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(reqs); i++) {
        struct gw_http_parser p;
        gw_http_parser_init(&p, NULL);
        size_t used;
        CN_CHECK_EQ_INT(test_feed(&p, reqs[i], 5, &used), CN_INVAL);
        CN_CHECK_EQ_INT(p.fail, GW_HTTP_FAIL_BAD_HOST);
        gw_http_parser_fini(&p);
    }
}

static void test_http_limits(void)
{
    struct gw_http_limits lim = {.max_request_line = 64, .max_headers = 4,
                                 .max_head_bytes = 256};
    struct gw_http_parser p;
    size_t used;
    char big[600];

    gw_http_parser_init(&p, &lim);
    memset(big, 'a', sizeof(big));
    memcpy(big, "GET /", 5);
    big[sizeof(big) - 1] = '\0';
    CN_CHECK_EQ_INT(test_feed(&p, big, 50, &used), CN_TOOBIG);
    CN_CHECK_EQ_INT(gw_http_fail_status(p.fail), 414);
    gw_http_parser_fini(&p);

    /* request line limit equal to the head limit (the shipped defaults):
     * still 414, not 431 */
    struct gw_http_limits same = {.max_request_line = 256, .max_headers = 4,
                                  .max_head_bytes = 256};
    gw_http_parser_init(&p, &same);
    CN_CHECK_EQ_INT(test_feed(&p, big, 50, &used), CN_TOOBIG);
    CN_CHECK_EQ_INT(gw_http_fail_status(p.fail), 414);
    gw_http_parser_fini(&p);

    gw_http_parser_init(&p, &lim);
    CN_CHECK_EQ_INT(test_feed(&p, "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\n\r\n",
                              10, &used), CN_TOOBIG);
    CN_CHECK_EQ_INT(gw_http_fail_status(p.fail), 431);
    gw_http_parser_fini(&p);

    gw_http_parser_init(&p, &lim);
    memset(big, 'v', sizeof(big));
    memcpy(big, "GET / HTTP/1.1\r\nA: ", 19);
    big[sizeof(big) - 1] = '\0';
    CN_CHECK_EQ_INT(test_feed(&p, big, 1000, &used), CN_TOOBIG);
    CN_CHECK_EQ_INT(gw_http_fail_status(p.fail), 431);
    gw_http_parser_fini(&p);
}

/* Decodes body through the chunked decoder, fed step bytes at a time. */
static int test_chunked_run(const char *body, size_t step, char *out, size_t *out_len,
                            size_t *left)
{
    struct gw_http_chunked c;
    gw_http_chunked_init(&c);
    struct evbuffer *src = evbuffer_new(), *dst = evbuffer_new();
    size_t len = strlen(body), off = 0;
    int rc = CN_AGAIN;
    while (rc == CN_AGAIN && off <= len) {
        size_t n = CN_MIN(step, len - off);
        evbuffer_add(src, body + off, n);
        off += n;
        rc = gw_http_chunked_decode(&c, src, dst, 5);
        while (rc == CN_AGAIN && evbuffer_get_length(src) > 0) {
            size_t before = evbuffer_get_length(src) + evbuffer_get_length(dst);
            rc = gw_http_chunked_decode(&c, src, dst, 5);
            if (evbuffer_get_length(src) + evbuffer_get_length(dst) == before &&
                rc == CN_AGAIN)
                break;
        }
        if (n == 0)
            break;
    }
    *out_len = evbuffer_get_length(dst);
    evbuffer_remove(dst, out, *out_len);
    *left = evbuffer_get_length(src) + (len - off); /* bytes after the body */
    evbuffer_free(src);
    evbuffer_free(dst);
    return rc;
}

static void test_http_chunked(void)
{
    const char *body = "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\nNEXT";
    for (size_t step = 1; step < 60; step++) {
        char out[64];
        size_t n, left;
        CN_CHECK_EQ_INT(test_chunked_run(body, step, out, &n, &left), CN_DONE);
        CN_CHECK_EQ_INT(n, 11);
        CN_CHECK(memcmp(out, "hello world", 11) == 0);
        CN_CHECK_EQ_INT(left, 4);
    }
    static const char *const bad[] = {
        "x\r\n", "5\r\nhelloXX", "\r\n", "10000000000000000\r\n", "0\r\n\r\r",
        /* CRLF only: a bare LF or CR anywhere in the framing is refused */
        "5\nhello\r\n0\r\n\r\n", "5\r\nhello\n0\r\n\r\n", "5;a\nhello\r\n",
        "5\rhello", "0\r\nX: 1\nY: 2\r\n\r\n", "0\r\n\n", "0\r\nX: 1\r\n folded\r\n\r\n",
        "ffffffffffffffffffff\r\n",
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(bad); i++) {
        char out[64];
        size_t n, left;
        CN_CHECK_EQ_INT(test_chunked_run(bad[i], 64, out, &n, &left), CN_INVAL);
    }
}

int main(int argc, char **argv)
{
    static const struct cn_test_case cases[] = {
        {"simple_every_split", test_http_simple_every_split},
        {"keepalive_reset", test_http_keepalive_reset},
        {"bad_requests", test_http_bad_requests},
        {"host", test_http_host},
        {"limits", test_http_limits},
        {"chunked", test_http_chunked},
        {NULL, NULL},
    };
    return cn_test_main(cases, argc, argv);
}
