/* Unit tests of the access line formats (gateway/s3/access_log.c): the
 * text fields, JSON escaping of quotes, backslashes, control bytes,
 * Unicode and bytes that are not UTF-8, the time, and lines whose fields
 * are at their longest (cut, still well-formed, the fixed fields intact). */
#include "access_log.h"

#include <stdio.h>
#include <string.h>

#include "cn/test.h"

CN_TEST_GLOBALS;

static struct gw_access_log_entry base(void)
{
    return (struct gw_access_log_entry){
        .time_us = 1764765601123456ull, /* 2025-12-03T12:40:01.123Z */
        .client = "127.0.0.1:51234",
        .account = "AKIACAIRNDEV00000000",
        .account_len = 20,
        .op = "PutObject",
        .bucket = "photos",
        .bucket_len = 6,
        .key = "a b/c%d",
        .key_len = 7,
        .method = "PUT",
        .method_len = 3,
        .target = "/photos/a%20b/c%25d",
        .target_len = 19,
        .status = 200,
        .bytes_in = 1024,
        .bytes_out = 0,
        .ttfb_us = 812,
        .total_us = 1204,
        .request_id = "0123456789ABCDEF",
    };
}

static void test_access_log_time(void)
{
    char t[25];
    gw_access_log_time(1764765601123456ull, t);
    CN_CHECK_EQ_STR(t, "2025-12-03T12:40:01.123Z");
    gw_access_log_time(0, t);
    CN_CHECK_EQ_STR(t, "1970-01-01T00:00:00.000Z");
}

static void test_access_log_text(void)
{
    char line[4096];
    struct gw_access_log_entry e = base();
    size_t n = gw_access_log_format(&e, GW_ACCESS_LOG_TEXT, line, sizeof(line));
    CN_CHECK_EQ_INT(n, strlen(line));
    CN_CHECK_EQ_STR(line, "2025-12-03T12:40:01.123Z 127.0.0.1:51234 AKIACAIRNDEV00000000 "
                          "PutObject photos a%20b/c%25d \"PUT /photos/a%20b/c%25d\" 200 - "
                          "1024 0 0.812 1.204 0123456789ABCDEF ok\n");
    /* anonymous, refused before routing, no response head, cut short */
    e = (struct gw_access_log_entry){.time_us = 0, .client = "10.0.0.1:1", .total_us = 5000,
                                     .request_id = "00000000000000AA", .aborted = 1,
                                     .error = "AccessDenied", .status = 0};
    gw_access_log_format(&e, GW_ACCESS_LOG_TEXT, line, sizeof(line));
    CN_CHECK_EQ_STR(line, "1970-01-01T00:00:00.000Z 10.0.0.1:1 - - - - \"-\" - AccessDenied "
                          "0 0 - 5.000 00000000000000AA aborted\n");
    /* bytes that would split a text line never appear raw */
    e = base();
    e.key = "k\n\"\x01 \xc3\xa9";
    e.key_len = 7;
    e.target = "/x\"y z\\";
    e.target_len = 7;
    gw_access_log_format(&e, GW_ACCESS_LOG_TEXT, line, sizeof(line));
    CN_CHECK(strstr(line, " k%0A%22%01%20%C3%A9 ") != NULL);
    CN_CHECK(strstr(line, "\"PUT /x\\x22y\\x20z\\x5C\"") != NULL);
    CN_CHECK(strchr(line, '\n') == line + strlen(line) - 1);
}

static void test_access_log_json(void)
{
    char line[4096];
    struct gw_access_log_entry e = base();
    gw_access_log_format(&e, GW_ACCESS_LOG_JSON, line, sizeof(line));
    CN_CHECK_EQ_STR(line, "{\"time\":\"2025-12-03T12:40:01.123Z\",\"client\":\"127.0.0.1:51234\","
                          "\"account\":\"AKIACAIRNDEV00000000\",\"operation\":\"PutObject\","
                          "\"bucket\":\"photos\",\"key\":\"a b/c%d\",\"method\":\"PUT\","
                          "\"target\":\"/photos/a%20b/c%25d\",\"status\":200,\"error\":\"-\","
                          "\"bytes_in\":1024,\"bytes_out\":0,\"ttfb_ms\":0.812,"
                          "\"total_ms\":1.204,\"request_id\":\"0123456789ABCDEF\","
                          "\"aborted\":false}\n");
    e.account = NULL;
    e.account_len = 0;
    e.ttfb_us = 0;
    e.error = "NoSuchKey";
    gw_access_log_format(&e, GW_ACCESS_LOG_JSON, line, sizeof(line));
    CN_CHECK(strstr(line, "\"account\":\"-\"") != NULL);
    CN_CHECK(strstr(line, "\"ttfb_ms\":null") != NULL);
    CN_CHECK(strstr(line, "\"error\":\"NoSuchKey\"") != NULL);
}

struct esc_case {
    const char *in;
    size_t len;
    const char *out; /* the "key" value as written, quotes included */
};

static void test_access_log_json_escapes(void)
{
    static const struct esc_case cases[] = {
        {"q\"b\\s/", 6, "\"q\\\"b\\\\s/\""},
        {"\n\r\t\b\f", 5, "\"\\n\\r\\t\\u0008\\u000c\""},
        {"\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\""},
        {"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9, "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\""},
        {"\xe2\x80\xa8\xe2\x80\xa9", 6, "\"\\u2028\\u2029\""},
        /* not UTF-8: a stray continuation, an overlong '/', a surrogate,
         * a cut sequence, above U+10FFFF, 0xff */
        {"\x80", 1, "\"\\ufffd\""},
        {"\xc0\xaf", 2, "\"\\ufffd\\ufffd\""},
        {"\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\""},
        {"a\xe2\x82", 3, "\"a\\ufffd\\ufffd\""},
        {"\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\""},
        {"\xff" "b", 2, "\"\\ufffdb\""},
        {"\0x", 2, "\"\\u0000x\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char line[4096], want[256];
        struct gw_access_log_entry e = base();
        e.key = cases[i].in;
        e.key_len = cases[i].len;
        gw_access_log_format(&e, GW_ACCESS_LOG_JSON, line, sizeof(line));
        snprintf(want, sizeof(want), "\"key\":%s,\"method\"", cases[i].out);
        if (strstr(line, want) == NULL)
            fprintf(stderr, "  case %zu: %s\n  want %s\n", i, line, want);
        CN_CHECK(strstr(line, want) != NULL);
    }
}

/* Fields at their longest, every byte escaped: the line fits its buffer,
 * the long fields are cut, the fixed ones are whole. */
static void test_access_log_longest(void)
{
    static char key[1024], target[2048], line[GW_ACCESS_LOG_LINE_MAX];
    memset(key, 0x01, sizeof(key));
    memset(target, '"', sizeof(target));
    for (int fmt = 0; fmt < 2; fmt++) {
        struct gw_access_log_entry e = base();
        e.key = key;
        e.key_len = sizeof(key);
        e.target = target;
        e.target_len = sizeof(target);
        size_t n = gw_access_log_format(&e, (enum gw_access_log_format)fmt, line, sizeof(line));
        CN_CHECK(n < sizeof(line));
        CN_CHECK(line[n - 1] == '\n' && line[n] == '\0');
        CN_CHECK(strstr(line, "0123456789ABCDEF") != NULL);
        CN_CHECK(memchr(line, '\n', n - 1) == NULL);
        /* a small buffer cuts the key and target but keeps the rest */
        char small[1024];
        n = gw_access_log_format(&e, (enum gw_access_log_format)fmt, small, sizeof(small));
        CN_CHECK(n < sizeof(small) && small[n - 1] == '\n');
        CN_CHECK(strstr(small, "0123456789ABCDEF") != NULL);
        if (fmt == GW_ACCESS_LOG_JSON) {
            CN_CHECK(strstr(small, ",\"aborted\":false}\n") != NULL);
            /* a cut never leaves half an escape: every backslash starts one */
            for (const char *p = small; (p = strchr(p, '\\')) != NULL; p += 2)
                CN_CHECK(p[1] == 'u' || p[1] == '"' || p[1] == '\\');
        } else {
            CN_CHECK(strstr(small, " ok\n") != NULL);
        }
    }
}

int main(int argc, char **argv)
{
    static const struct cn_test_case cases[] = {
        {"time", test_access_log_time},
        {"text", test_access_log_text},
        {"json", test_access_log_json},
        {"json_escapes", test_access_log_json_escapes},
        {"longest", test_access_log_longest},
        {NULL, NULL},
    };
    return cn_test_main(cases, argc, argv);
}
