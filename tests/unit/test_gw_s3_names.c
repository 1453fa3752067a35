/* Bucket/key rules, URI coding and dates. */
#include <string.h>

#include "cn/rc.h"
#include "cn/test.h"
#include "http_date.h"
#include "s3_names.h"

CN_TEST_GLOBALS;

static int bucket_ok(const char *s)
{
    return gw_s3_names_bucket_check(s, strlen(s)) == CN_OK;
}

static void test_bucket_names(void)
{
    const char *good[] = {"abc", "my-bucket", "my.bucket.2", "a1b", "0ab",
                          "docexamplebucket1", "xn-ok", "bucket-s3alia",
                          "123456789012345678901234567890123456789012345678901234567890123"};
    const char *bad[] = {"ab", "", "ABC", "my_bucket", "-abc", "abc-", ".abc", "abc.",
                         "a..b", "a.-b", "a-.b", "192.168.5.4", "1.2.3.4", "xn--abc",
                         "abc-s3alias", "abc--ol-s3", "sthree-x", "amzn-s3-demo-x",
                         "abc.mrap", "abc--x-s3", "a b",
                         "1234567890123456789012345678901234567890123456789012345678901234"};
    for (size_t i = 0; i < CN_ARRAY_LEN(good); i++) {
        if (!bucket_ok(good[i]))
            fprintf(stderr, "  should accept %s\n", good[i]);
        CN_CHECK(bucket_ok(good[i]));
    }
    for (size_t i = 0; i < CN_ARRAY_LEN(bad); i++) {
        if (bucket_ok(bad[i]))
            fprintf(stderr, "  should refuse %s\n", bad[i]);
        CN_CHECK(!bucket_ok(bad[i]));
    }
    CN_CHECK(bucket_ok("1.2.3.4a")); /* not an IP address */
    CN_CHECK(gw_s3_names_bucket_check("abcd", 3) == CN_OK); /* length is the truth */
}

static void test_keys(void)
{
    enum gw_s3_err e;
    char key[1100];
    memset(key, 'k', sizeof(key));
    CN_CHECK_EQ_INT(gw_s3_names_key_check(key, 1024, &e), CN_OK);
    CN_CHECK_EQ_INT(e, GW_S3_OK);
    CN_CHECK_EQ_INT(gw_s3_names_key_check(key, 1025, &e), CN_INVAL);
    CN_CHECK_EQ_INT(e, GW_S3_KEY_TOO_LONG);
    CN_CHECK_EQ_INT(gw_s3_names_key_check(key, 0, &e), CN_INVAL);
    CN_CHECK_EQ_INT(e, GW_S3_INVALID_ARGUMENT);
    CN_CHECK_EQ_INT(gw_s3_names_key_check("a\0b", 3, &e), CN_INVAL);
    CN_CHECK_EQ_INT(gw_s3_names_key_check("\xc3\xa9t\xc3\xa9/\xf0\x9f\x98\x80", 10, &e), CN_OK);
    const char *bad_utf8[] = {"\xc3", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80",
                              "\xf4\x90\x80\x80", "\xff", "\x80", "a\xe2\x82"};
    for (size_t i = 0; i < CN_ARRAY_LEN(bad_utf8); i++)
        CN_CHECK(!gw_s3_names_utf8_valid(bad_utf8[i], strlen(bad_utf8[i])));
    CN_CHECK(gw_s3_names_utf8_valid("\xf4\x8f\xbf\xbf", 4)); /* U+10FFFF */
    CN_CHECK(gw_s3_names_utf8_valid("\xef\xbf\xbd", 3));
}

static void test_storage_class(void)
{
    CN_CHECK(gw_s3_names_storage_class_ok("STANDARD", 8));
    CN_CHECK(gw_s3_names_storage_class_ok("REDUCED_REDUNDANCY", 18));
    CN_CHECK(gw_s3_names_storage_class_ok("GLACIER_IR", 10));
    CN_CHECK(!gw_s3_names_storage_class_ok("GLACIER", 6)); /* a prefix is not a name */
    CN_CHECK(!gw_s3_names_storage_class_ok("standard", 8));
    CN_CHECK(!gw_s3_names_storage_class_ok("FOO", 3));
    CN_CHECK(!gw_s3_names_storage_class_ok("", 0));
}

static void test_uri(void)
{
    char out[64];
    size_t n = 0;
    CN_CHECK_EQ_INT(gw_s3_names_uri_decode("a%20b%2Fc+d%7e", 14, out, &n, 0), CN_OK);
    CN_CHECK(n == 8 && memcmp(out, "a b/c+d~", 8) == 0);
    CN_CHECK_EQ_INT(gw_s3_names_uri_decode("a+b", 3, out, &n, 1), CN_OK);
    CN_CHECK(n == 3 && memcmp(out, "a b", 3) == 0);
    CN_CHECK_EQ_INT(gw_s3_names_uri_decode("%00", 3, out, &n, 0), CN_OK);
    CN_CHECK(n == 1 && out[0] == '\0');
    CN_CHECK_EQ_INT(gw_s3_names_uri_decode("%2", 2, out, &n, 0), CN_INVAL);
    CN_CHECK_EQ_INT(gw_s3_names_uri_decode("%zz", 3, out, &n, 0), CN_INVAL);
    CN_CHECK_EQ_INT(gw_s3_names_uri_decode("abc%", 4, out, &n, 0), CN_INVAL);
    char in_place[] = "x%41y";
    CN_CHECK_EQ_INT(gw_s3_names_uri_decode(in_place, 5, in_place, &n, 0), CN_OK);
    CN_CHECK(n == 3 && memcmp(in_place, "xAy", 3) == 0);

    const char raw[] = "photos/\xc3\xa9t\xc3\xa9 2013/a+b (1)~x_y-z.jpg";
    n = gw_s3_names_uri_encode(raw, strlen(raw), out, sizeof(out), 1);
    CN_CHECK(n == strlen("photos/%C3%A9t%C3%A9%202013/a%2Bb%20%281%29~x_y-z.jpg"));
    CN_CHECK(memcmp(out, "photos/%C3%A9t%C3%A9%202013/a%2Bb%20%281%29~x_y-z.jpg", n) == 0);
    n = gw_s3_names_uri_encode("a/b", 3, out, sizeof(out), 0);
    CN_CHECK(n == 5 && memcmp(out, "a%2Fb", 5) == 0);
    /* a too-small buffer reports the full length and writes only whole items */
    memset(out, '#', sizeof(out));
    n = gw_s3_names_uri_encode("a b", 3, out, 2, 0);
    CN_CHECK_EQ_INT(n, 5);
    CN_CHECK(out[0] == 'a' && out[1] == '#');
}

static void test_http_dates(void)
{
    char d[GW_HTTP_DATE_LEN];
    gw_http_date_format(784111777, d);
    CN_CHECK_EQ_STR(d, "Sun, 06 Nov 1994 08:49:37 GMT");
    time_t t = 0;
    CN_CHECK_EQ_INT(gw_s3_names_http_date_parse(d, strlen(d), &t), CN_OK);
    CN_CHECK_EQ_INT(t, 784111777);
    const char *rfc850 = "Sunday, 06-Nov-94 08:49:37 GMT";
    CN_CHECK_EQ_INT(gw_s3_names_http_date_parse(rfc850, strlen(rfc850), &t), CN_OK);
    CN_CHECK_EQ_INT(t, 784111777);
    const char *asc = "Sun Nov  6 08:49:37 1994";
    CN_CHECK_EQ_INT(gw_s3_names_http_date_parse(asc, strlen(asc), &t), CN_OK);
    CN_CHECK_EQ_INT(t, 784111777);
    const char *bad[] = {"Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 6 Nov 1994 08:49:37 GMT",
                         "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
                         "Sun, 06 Nov 1994 24:49:37 GMT", "Xyz, 06 Nov 1994 08:49:37 GMT",
                         "Sun, 06 Nov 1994 08:49:37 GMT ", "", "Sun Nov 6 08:49:37 1994",
                         "Sun, 29 Feb 2023 00:00:00 GMT"};
    for (size_t i = 0; i < CN_ARRAY_LEN(bad); i++)
        CN_CHECK_EQ_INT(gw_s3_names_http_date_parse(bad[i], strlen(bad[i]), &t), CN_INVAL);
    const char *leap = "Thu, 29 Feb 2024 12:00:00 GMT";
    CN_CHECK_EQ_INT(gw_s3_names_http_date_parse(leap, strlen(leap), &t), CN_OK);
    CN_CHECK_EQ_INT(t, 1709208000);
    gw_http_date_format(1709208000, d);
    CN_CHECK_EQ_STR(d, leap);
    /* the length is the truth: a prefix does not parse */
    CN_CHECK_EQ_INT(gw_s3_names_http_date_parse(leap, 20, &t), CN_INVAL);
}

static void test_iso_and_amz_dates(void)
{
    char d[GW_S3_NAMES_ISO8601_LEN];
    gw_s3_names_iso8601_format(1796228266123LL, d);
    CN_CHECK_EQ_STR(d, "2026-12-02T16:17:46.123Z");
    int64_t ms = 0;
    CN_CHECK_EQ_INT(gw_s3_names_iso8601_parse(d, strlen(d), &ms), CN_OK);
    CN_CHECK_EQ_INT(ms, 1796228266123LL);
    CN_CHECK_EQ_INT(gw_s3_names_iso8601_parse("2026-12-02T16:17:46Z", 20, &ms), CN_OK);
    CN_CHECK_EQ_INT(ms, 1796228266000LL);
    CN_CHECK_EQ_INT(gw_s3_names_iso8601_parse("2026-12-02 16:17:46Z", 20, &ms), CN_INVAL);
    gw_s3_names_iso8601_format(-5, d);
    CN_CHECK_EQ_STR(d, "1970-01-01T00:00:00.000Z");
    time_t t = 0;
    CN_CHECK_EQ_INT(gw_s3_names_amz_date_parse("20130524T000000Z", 16, &t), CN_OK);
    CN_CHECK_EQ_INT(t, 1369353600);
    CN_CHECK_EQ_INT(gw_s3_names_amz_date_parse("20130524T000000", 15, &t), CN_INVAL);
    CN_CHECK_EQ_INT(gw_s3_names_amz_date_parse("20131324T000000Z", 16, &t), CN_INVAL);
    CN_CHECK_EQ_INT(gw_s3_names_amz_date_parse("2013052AT000000Z", 16, &t), CN_INVAL);
}

static const struct cn_test_case cases[] = {
    {"bucket_names", test_bucket_names},
    {"keys", test_keys},
    {"storage_class", test_storage_class},
    {"uri", test_uri},
    {"http_dates", test_http_dates},
    {"iso_and_amz_dates", test_iso_and_amz_dates},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
