/* The Range header against S3's behaviour. */
#include <string.h>

#include "cn/rc.h"
#include "cn/test.h"
#include "s3_range.h"

CN_TEST_GLOBALS;

struct range_case {
    const char *value;
    uint64_t size;
    enum gw_s3_range_kind kind;
    uint64_t first, last;
};

static void test_cases(void)
{
    static const struct range_case v[] = {
        {"bytes=0-9", 100, GW_S3_RANGE_PARTIAL, 0, 9},
        {"bytes=10-", 100, GW_S3_RANGE_PARTIAL, 10, 99},
        {"bytes=-10", 100, GW_S3_RANGE_PARTIAL, 90, 99},
        {"bytes=-1000", 100, GW_S3_RANGE_PARTIAL, 0, 99},
        {"bytes=90-1000", 100, GW_S3_RANGE_PARTIAL, 90, 99},
        {"bytes=99-99", 100, GW_S3_RANGE_PARTIAL, 99, 99},
        {"Bytes=0-0", 1, GW_S3_RANGE_PARTIAL, 0, 0},
        {"bytes= 5-6 ", 100, GW_S3_RANGE_PARTIAL, 5, 6},
        {"bytes=100-", 100, GW_S3_RANGE_UNSATISFIABLE, 0, 0},
        {"bytes=100-200", 100, GW_S3_RANGE_UNSATISFIABLE, 0, 0},
        {"bytes=-0", 100, GW_S3_RANGE_UNSATISFIABLE, 0, 0},
        {"bytes=0-", 0, GW_S3_RANGE_UNSATISFIABLE, 0, 0},
        {"bytes=-5", 0, GW_S3_RANGE_UNSATISFIABLE, 0, 0},
        {"bytes=0-1,3-4", 100, GW_S3_RANGE_NONE, 0, 0},   /* multi-range: whole object */
        {"bytes=9-5", 100, GW_S3_RANGE_NONE, 0, 0},       /* invalid: ignored */
        {"bytes=", 100, GW_S3_RANGE_NONE, 0, 0},
        {"bytes=-", 100, GW_S3_RANGE_NONE, 0, 0},
        {"bytes=a-b", 100, GW_S3_RANGE_NONE, 0, 0},
        {"items=0-9", 100, GW_S3_RANGE_NONE, 0, 0},
        {"bytes=0-9x", 100, GW_S3_RANGE_NONE, 0, 0},
        {"bytes=999999999999999999-", 100, GW_S3_RANGE_UNSATISFIABLE, 0, 0},
        /* positions of any length: they saturate at 2^64-1, so a huge first
         * byte is past the end (416) and a huge last byte clamps (206) */
        {"bytes=1234567890123456789-", 100, GW_S3_RANGE_UNSATISFIABLE, 0, 0},
        {"bytes=18446744073709551615-", 100, GW_S3_RANGE_UNSATISFIABLE, 0, 0},
        {"bytes=18446744073709551616-", 100, GW_S3_RANGE_UNSATISFIABLE, 0, 0},
        {"bytes=99999999999999999999999999999999999999-", 100, GW_S3_RANGE_UNSATISFIABLE, 0, 0},
        {"bytes=18446744073709551615-18446744073709551615", 100, GW_S3_RANGE_UNSATISFIABLE, 0,
         0},
        {"bytes=5-18446744073709551615", 100, GW_S3_RANGE_PARTIAL, 5, 99},
        {"bytes=5-99999999999999999999999999999999999999", 100, GW_S3_RANGE_PARTIAL, 5, 99},
        {"bytes=0-18446744073709551614", 18446744073709551615ull, GW_S3_RANGE_PARTIAL, 0,
         18446744073709551614ull},
        {"bytes=-99999999999999999999999999999999999999", 100, GW_S3_RANGE_PARTIAL, 0, 99},
        {"bytes=-18446744073709551615", 100, GW_S3_RANGE_PARTIAL, 0, 99},
        {"bytes=99999999999999999999-5", 100, GW_S3_RANGE_NONE, 0, 0}, /* last < first */
        {"bytes=00000000000000000000000000000000000005-6", 100, GW_S3_RANGE_PARTIAL, 5, 6},
        {"", 100, GW_S3_RANGE_NONE, 0, 0},
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(v); i++) {
        struct gw_s3_range r = {77, 77};
        enum gw_s3_range_kind k = gw_s3_range_parse(v[i].value, strlen(v[i].value), v[i].size, &r);
        if (k != v[i].kind)
            fprintf(stderr, "  case %s size %llu\n", v[i].value, (unsigned long long)v[i].size);
        CN_CHECK_EQ_INT(k, v[i].kind);
        if (k == GW_S3_RANGE_PARTIAL) {
            CN_CHECK_EQ_INT(r.first, v[i].first);
            CN_CHECK_EQ_INT(r.last, v[i].last);
        }
    }
    struct gw_s3_range r;
    CN_CHECK_EQ_INT(gw_s3_range_parse(NULL, 0, 10, &r), GW_S3_RANGE_NONE);
    /* length is the truth */
    CN_CHECK_EQ_INT(gw_s3_range_parse("bytes=0-9,", 9, 100, &r), GW_S3_RANGE_PARTIAL);
}

static void test_content_range(void)
{
    char buf[GW_S3_RANGE_CONTENT_RANGE_MAX];
    struct gw_s3_range r = {0, 99};
    CN_CHECK_EQ_INT(gw_s3_range_content_range(&r, 1000, buf, sizeof(buf)), 15);
    CN_CHECK_EQ_STR(buf, "bytes 0-99/1000");
    gw_s3_range_content_range(NULL, 1000, buf, sizeof(buf));
    CN_CHECK_EQ_STR(buf, "bytes */1000");
    struct gw_s3_range big = {UINT64_MAX - 1, UINT64_MAX - 1};
    CN_CHECK(gw_s3_range_content_range(&big, UINT64_MAX, buf, sizeof(buf)) < sizeof(buf));
    CN_CHECK_EQ_INT(gw_s3_range_content_range(&r, 1000, buf, 10), 0);
}

static const struct cn_test_case cases[] = {
    {"cases", test_cases},
    {"content_range", test_content_range},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
