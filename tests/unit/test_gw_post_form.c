/* POST object's form parser and policy checks: a form fed whole, byte by
 * byte and at every split point gives the same fields and file (the
 * boundary found across buffer edges, CR/LF and "--" inside the file kept),
 * S3's limits (20 KiB of fields, content-length-range), malformed bodies;
 * the policy's conditions as AWS's "Creating a POST policy" describes. */
#include <stdio.h>
#include <string.h>

#include "checksum.h"
#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/test.h"
#include "post_form.h"
#include "post_policy.h"

CN_TEST_GLOBALS;

#define BOUNDARY "----WebKitFormBoundary7MA4YWxkTrZu0gW"

struct sink {
    char buf[65536];
    size_t n;
};

static int sink_add(void *arg, const char *data, size_t len)
{
    struct sink *s = arg;
    if (s->n + len > sizeof(s->buf))
        return CN_TOOBIG;
    memcpy(s->buf + s->n, data, len);
    s->n += len;
    return CN_OK;
}

/* Feeds body in pieces of step bytes (0: whole), the first split at
 * first; returns the last status and fills the sink. */
static int feed(struct gw_post_form *f, const char *body, size_t len, size_t first, size_t step,
                struct sink *s, enum gw_s3_err *err)
{
    size_t off = 0;
    int rc = CN_AGAIN;
    while (off < len) {
        size_t n = step == 0 ? len - off : CN_MIN(step, len - off);
        if (off == 0 && first > 0)
            n = CN_MIN(first, len);
        size_t used = 0;
        rc = gw_post_form_feed(f, body + off, n, &used, sink_add, s, err);
        CN_CHECK(used <= n);
        if (rc != CN_OK && rc != CN_AGAIN && rc != CN_DONE)
            return rc;
        off += used;
        if (rc == CN_DONE)
            return rc;
    }
    return rc;
}

static const char body1[] =
    "preamble to ignore\r\n"
    "--" BOUNDARY "\r\n"
    "Content-Disposition: form-data; name=\"key\"\r\n\r\n"
    "uploads/${filename}\r\n"
    "--" BOUNDARY "\r\n"
    "Content-Disposition: form-data; name=\"Content-Type\"\r\n\r\n"
    "text/plain\r\n"
    "--" BOUNDARY "\r\n"
    "content-disposition: form-data; name=\"x-amz-meta-note\"\r\n\r\n"
    "two\r\nlines\r\n"
    "--" BOUNDARY "  \r\n"
    "Content-Disposition: form-data; name=\"file\"; filename=\"C:\\\\x\\\\a \\\"b\\\".txt\"\r\n"
    "Content-Type: application/octet-stream\r\n\r\n"
    "file\r\n----WebKitFormBoundary7MA4YWxkTrZu0gX is not the end\r\n-- nor this\r\r\n--\r\n"
    "\r\n--" BOUNDARY "\r\n"
    "Content-Disposition: form-data; name=\"after\"\r\n\r\nignored\r\n"
    "--" BOUNDARY "--\r\nepilogue";

static const char file1[] =
    "file\r\n----WebKitFormBoundary7MA4YWxkTrZu0gX is not the end\r\n-- nor this\r\r\n--\r\n";

static void check_body1(struct gw_post_form *f, const struct sink *s)
{
    CN_CHECK_EQ_INT(s->n, sizeof(file1) - 1);
    CN_CHECK(s->n == sizeof(file1) - 1 && memcmp(s->buf, file1, s->n) == 0);
    CN_CHECK_EQ_INT(gw_post_form_field_count(f), 3);
    const struct gw_post_form_field *k = gw_post_form_field(f, "KEY");
    CN_CHECK(k != NULL && strcmp(k->value, "uploads/${filename}") == 0);
    const struct gw_post_form_field *m = gw_post_form_field(f, "x-amz-meta-note");
    CN_CHECK(m != NULL && m->value_len == 10 && memcmp(m->value, "two\r\nlines", 10) == 0);
    CN_CHECK(gw_post_form_field(f, "after") == NULL);
    size_t n;
    const char *fn = gw_post_form_filename(f, &n);
    CN_CHECK_EQ_STR(fn, "C:\\x\\a \"b\".txt");
    CN_CHECK_EQ_STR(gw_post_form_file_type(f, &n), "application/octet-stream");
    enum gw_s3_err err = GW_S3_OK;
    CN_CHECK_EQ_INT(gw_post_form_finish(f, &err), CN_OK);
}

static void test_every_split(void)
{
    size_t len = sizeof(body1) - 1;
    for (size_t step = 0; step <= 7; step++) {
        struct gw_post_form *f = gw_post_form_new(BOUNDARY, strlen(BOUNDARY));
        struct sink *s = cn_calloc(1, sizeof(*s));
        enum gw_s3_err err = GW_S3_OK;
        CN_CHECK_EQ_INT(feed(f, body1, len, 0, step, s, &err), CN_DONE);
        check_body1(f, s);
        CN_CHECK_EQ_INT(gw_post_form_file_bytes(f), sizeof(file1) - 1);
        cn_free(s);
        gw_post_form_free(f);
    }
    for (size_t cut = 1; cut < len; cut++) {
        struct gw_post_form *f = gw_post_form_new(BOUNDARY, strlen(BOUNDARY));
        struct sink *s = cn_calloc(1, sizeof(*s));
        enum gw_s3_err err = GW_S3_OK;
        int rc = feed(f, body1, len, cut, 0, s, &err);
        CN_CHECK_EQ_INT(rc, CN_DONE);
        if (rc == CN_DONE)
            check_body1(f, s);
        cn_free(s);
        gw_post_form_free(f);
    }
}

static void test_boundary_header(void)
{
    char b[GW_POST_FORM_BOUNDARY_MAX + 1];
    size_t n;
    static const char ok1[] = "multipart/form-data; boundary=abc";
    static const char ok2[] = "Multipart/Form-Data;charset=utf-8; boundary=\"a b:c\"";
    CN_CHECK_EQ_INT(gw_post_form_boundary(ok1, strlen(ok1), b, &n), CN_OK);
    CN_CHECK_EQ_STR(b, "abc");
    CN_CHECK_EQ_INT(gw_post_form_boundary(ok2, strlen(ok2), b, &n), CN_OK);
    CN_CHECK_EQ_STR(b, "a b:c");
    static const char *const notform[] = {"text/plain", "multipart/mixed; boundary=x",
                                          "multipart/form-dataX; boundary=x"};
    for (size_t i = 0; i < CN_ARRAY_LEN(notform); i++)
        CN_CHECK_EQ_INT(gw_post_form_boundary(notform[i], strlen(notform[i]), b, &n),
                        CN_NOTFOUND);
    static const char *const bad[] = {
        "multipart/form-data", "multipart/form-data; boundary=", "multipart/form-data; "
        "boundary=\"unterminated", "multipart/form-data; boundary=a\x01",
        "multipart/form-data; boundary="
        "01234567890123456789012345678901234567890123456789012345678901234567890"};
    for (size_t i = 0; i < CN_ARRAY_LEN(bad); i++)
        CN_CHECK_EQ_INT(gw_post_form_boundary(bad[i], strlen(bad[i]), b, &n), CN_INVAL);
}

/* Runs one whole body; returns the status and *err. */
static int run(const char *body, size_t len, uint64_t min, uint64_t max, enum gw_s3_err *err,
               size_t *file_bytes)
{
    struct gw_post_form *f = gw_post_form_new("b", 1);
    gw_post_form_set_range(f, min, max);
    struct sink *s = cn_calloc(1, sizeof(*s));
    *err = GW_S3_OK;
    int rc = feed(f, body, len, 0, 3, s, err);
    if (rc == CN_OK || rc == CN_AGAIN || rc == CN_DONE) {
        if (gw_post_form_finish(f, err) != CN_OK)
            rc = CN_INVAL;
    }
    *file_bytes = s->n;
    cn_free(s);
    gw_post_form_free(f);
    return rc;
}

static void test_limits_and_refusals(void)
{
    enum gw_s3_err err;
    size_t fb;
    static const char file10[] = "--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n"
                                 "0123456789\r\n--b--\r\n";
    CN_CHECK_EQ_INT(run(file10, strlen(file10), 10, 10, &err, &fb), CN_DONE);
    CN_CHECK_EQ_INT(fb, 10);
    CN_CHECK_EQ_INT(run(file10, strlen(file10), 0, 9, &err, &fb), CN_TOOBIG);
    CN_CHECK_EQ_INT(err, GW_S3_ENTITY_TOO_LARGE);
    CN_CHECK_EQ_INT(run(file10, strlen(file10), 11, 100, &err, &fb), CN_INVAL);
    CN_CHECK_EQ_INT(err, GW_S3_ENTITY_TOO_SMALL);
    /* no file part */
    static const char nofile[] = "--b\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\n"
                                 "k\r\n--b--\r\n";
    CN_CHECK_EQ_INT(run(nofile, strlen(nofile), 0, 100, &err, &fb), CN_INVAL);
    CN_CHECK_EQ_INT(err, GW_S3_INVALID_ARGUMENT);
    /* the body ends inside the file */
    static const char cut[] = "--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nabc";
    CN_CHECK_EQ_INT(run(cut, strlen(cut), 0, 100, &err, &fb), CN_INVAL);
    CN_CHECK_EQ_INT(err, GW_S3_INCOMPLETE_BODY);
    /* malformed: no name, not form-data, a header line without CRLF */
    static const char *const bad[] = {
        "--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--",
        "--b\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nx\r\n--b--",
        "--b\r\nContent-Disposition: form-data; name=\"a\"\n\r\nx\r\n--b--",
        "--b\r\nno colon here\r\n\r\nx\r\n--b--",
        "--bX\r\n",
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(bad); i++) {
        int rc = run(bad[i], strlen(bad[i]), 0, 100, &err, &fb);
        CN_CHECK(rc == CN_INVAL);
        CN_CHECK(err == GW_S3_MALFORMED_POST_REQUEST || err == GW_S3_INVALID_ARGUMENT);
    }
    /* fields before the file over 20 KiB */
    size_t big = GW_POST_FORM_PRE_DATA_MAX + 100;
    char *body = cn_malloc(big + 200);
    int n = snprintf(body, 200, "--b\r\nContent-Disposition: form-data; name=\"x-ignore-a\"\r\n\r\n");
    memset(body + n, 'a', big);
    size_t len = (size_t)n + big;
    memcpy(body + len, "\r\n--b--\r\n", 9);
    CN_CHECK_EQ_INT(run(body, len + 9, 0, 100, &err, &fb), CN_TOOBIG);
    CN_CHECK_EQ_INT(err, GW_S3_MAX_POST_PRE_DATA_LENGTH_EXCEEDED);
    cn_free(body);
}

/* ---- policies ---------------------------------------------------------- */

static struct gw_post_form *form_of(const char *body)
{
    struct gw_post_form *f = gw_post_form_new("b", 1);
    size_t used;
    enum gw_s3_err err;
    CN_ASSERT(gw_post_form_feed(f, body, strlen(body), &used, sink_add, NULL, &err) == CN_OK);
    return f;
}

static enum gw_s3_err policy(const char *json, struct gw_post_form *f, uint64_t *min,
                             uint64_t *max, char why[CN_ERR_LEN])
{
    char b64[4096];
    gw_checksum_base64_encode(json, strlen(json), b64);
    struct gw_post_policy_input in = {.bucket = "bk", .bucket_len = 2, .form = f,
                                      .now = 1700000000};
    return gw_post_policy_check(b64, strlen(b64), &in, min, max, why);
}

static void test_policy(void)
{
    struct gw_post_form *f = form_of(
        "--b\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nuser/a/photo.jpg\r\n"
        "--b\r\nContent-Disposition: form-data; name=\"Content-Type\"\r\n\r\nimage/jpeg\r\n"
        "--b\r\nContent-Disposition: form-data; name=\"policy\"\r\n\r\nP\r\n"
        "--b\r\nContent-Disposition: form-data; name=\"x-ignore-me\"\r\n\r\nQ\r\n"
        "--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n");
    uint64_t min, max;
    char why[CN_ERR_LEN];
#define EXP "\"expiration\": \"2030-01-01T00:00:00.000Z\""
    CN_CHECK_EQ_INT(policy("{" EXP ", \"conditions\": [{\"bucket\": \"bk\"}, "
                           "[\"starts-with\", \"$key\", \"user/a/\"], "
                           "[\"eq\", \"$Content-Type\", \"image/jpeg\"], "
                           "[\"content-length-range\", 1, 1048576]]}", f, &min, &max, why),
                    GW_S3_OK);
    CN_CHECK(min == 1 && max == 1048576);
    /* starts-with "" allows anything; a string range as some SDKs send */
    CN_CHECK_EQ_INT(policy("{" EXP ", \"conditions\": [{\"bucket\": \"bk\"}, "
                           "[\"starts-with\", \"$key\", \"\"], [\"starts-with\", "
                           "\"$content-type\", \"image/\"], [\"content-length-range\", \"0\", "
                           "\"10\"]]}", f, &min, &max, why),
                    GW_S3_OK);
    CN_CHECK(min == 0 && max == 10);
    /* expired */
    CN_CHECK_EQ_INT(policy("{\"expiration\": \"2020-01-01T00:00:00Z\", \"conditions\": []}", f,
                           &min, &max, why), GW_S3_ACCESS_DENIED);
    CN_CHECK_EQ_STR(why, "Invalid according to Policy: Policy expired.");
    /* a condition not met: the key outside starts-with, another bucket */
    CN_CHECK_EQ_INT(policy("{" EXP ", \"conditions\": [{\"bucket\": \"bk\"}, "
                           "[\"starts-with\", \"$key\", \"user/b/\"], "
                           "{\"content-type\": \"image/jpeg\"}]}", f, &min, &max, why),
                    GW_S3_ACCESS_DENIED);
    CN_CHECK(strstr(why, "Policy Condition failed: [\"starts-with\", \"$key\", \"user/b/\"]") !=
                 NULL ||
             strstr(why, "Policy Condition failed: [\"starts-with\",\"$key\",\"user/b/\"]") !=
                 NULL);
    CN_CHECK_EQ_INT(policy("{" EXP ", \"conditions\": [{\"bucket\": \"other\"}, [\"starts-with\","
                           " \"$key\", \"\"], {\"content-type\": \"image/jpeg\"}]}", f, &min, &max,
                           why), GW_S3_ACCESS_DENIED);
    /* a field no condition names */
    CN_CHECK_EQ_INT(policy("{" EXP ", \"conditions\": [{\"bucket\": \"bk\"}, "
                           "[\"starts-with\", \"$key\", \"\"]]}", f, &min, &max, why),
                    GW_S3_ACCESS_DENIED);
    CN_CHECK_EQ_STR(why, "Invalid according to Policy: Extra input fields: Content-Type");
    /* malformed documents */
    static const char *const bad[] = {
        "not json", "[]", "{\"conditions\": []}", "{" EXP "}",
        "{\"expiration\": \"tomorrow\", \"conditions\": []}",
        "{" EXP ", \"conditions\": [[\"eq\", \"key\", \"x\"]]}",
        "{" EXP ", \"conditions\": [[\"content-length-range\", 5, 1]]}",
        "{" EXP ", \"conditions\": [[\"content-length-range\", -1, 1]]}",
        "{" EXP ", \"conditions\": [[\"in\", \"$key\", \"x\"]]}",
        "{" EXP ", \"conditions\": [{\"a\": \"1\", \"b\": \"2\"}]}",
        "{" EXP ", \"conditions\": [7]}",
        "{" EXP ", " EXP ", \"conditions\": []}",
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(bad); i++) {
        enum gw_s3_err e = policy(bad[i], f, &min, &max, why);
        if (e != GW_S3_INVALID_POLICY_DOCUMENT)
            fprintf(stderr, "  policy %zu: %d %s\n", i, (int)e, why);
        CN_CHECK_EQ_INT(e, GW_S3_INVALID_POLICY_DOCUMENT);
    }
    struct gw_post_policy_input in = {.bucket = "bk", .bucket_len = 2, .form = f, .now = 0};
    CN_CHECK_EQ_INT(gw_post_policy_check("%%%%", 4, &in, &min, &max, why),
                    GW_S3_INVALID_POLICY_DOCUMENT);
    gw_post_form_free(f);
}

static const struct cn_test_case cases[] = {
    {"every_split", test_every_split},
    {"boundary_header", test_boundary_header},
    {"limits_and_refusals", test_limits_and_refusals},
    {"policy", test_policy},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
