/* Object tag sets (tagset.c) and the Tagging body parser (xml.c) against
 * S3's rules: limits, characters, duplicates, error codes, and the stored
 * form's round trip. */
#include <string.h>

#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/test.h"
#include "tagset.h"
#include "xml.h"

CN_TEST_GLOBALS;

static struct gw_tagset *test_set(void)
{
    return gw_tagset_new(GW_TAGSET_MAX);
}

static void test_add_rules(void)
{
    struct gw_tagset *s = test_set();
    const char *why = NULL;
    char k[600], v[600];
    memset(k, 'k', sizeof(k));
    memset(v, 'v', sizeof(v));
    CN_CHECK_EQ_INT(gw_tagset_add(s, k, 128, v, 256, &why), GW_S3_OK);
    CN_CHECK_EQ_INT(gw_tagset_add(s, k, 129, v, 1, &why), GW_S3_INVALID_TAG);
    CN_CHECK_EQ_STR(why, "The TagKey you have provided is too long, max 128");
    CN_CHECK_EQ_INT(gw_tagset_add(s, "a", 1, v, 257, &why), GW_S3_INVALID_TAG);
    CN_CHECK_EQ_INT(gw_tagset_add(s, "", 0, "v", 1, &why), GW_S3_INVALID_TAG);
    CN_CHECK_EQ_INT(gw_tagset_add(s, "a#", 2, "v", 1, &why), GW_S3_INVALID_TAG);
    CN_CHECK_EQ_INT(gw_tagset_add(s, "a", 1, "v,w", 3, &why), GW_S3_INVALID_TAG);
    CN_CHECK_EQ_INT(gw_tagset_add(s, "aws:x", 5, "v", 1, &why), GW_S3_INVALID_TAG);
    CN_CHECK_EQ_INT(gw_tagset_add(s, "a\xff", 2, "v", 1, &why), GW_S3_INVALID_TAG);
    CN_CHECK_EQ_INT(gw_tagset_add(s, "a\xc2\x85", 3, "v", 1, &why), GW_S3_INVALID_TAG); /* C1 */
    CN_CHECK_EQ_INT(gw_tagset_add(s, "Az09 +-=._:/@", 13, "", 0, &why), GW_S3_OK);
    CN_CHECK_EQ_INT(gw_tagset_add(s, "Az09 +-=._:/@", 13, "x", 1, &why), GW_S3_INVALID_TAG);
    CN_CHECK_EQ_STR(why, "Cannot provide multiple Tags with the same key");
    CN_CHECK_EQ_INT((int)s->n, 2);
    /* 128 two-byte characters are 128 units; a non-BMP character is two */
    char e[4 * 129];
    for (int i = 0; i < 128; i++)
        memcpy(e + 2 * i, "\xc3\xa9", 2);
    CN_CHECK_EQ_INT(gw_tagset_add(s, e, 256, "v", 1, &why), GW_S3_OK);
    for (int i = 0; i < 65; i++)
        memcpy(e + 4 * i, "\xf0\x9f\x98\x80", 4);
    CN_CHECK_EQ_INT(gw_tagset_add(s, e, 4 * 65, "v", 1, &why), GW_S3_INVALID_TAG);
    for (int i = 3; i < GW_TAGSET_MAX; i++) {
        char key[8];
        int n = snprintf(key, sizeof(key), "k%d", i);
        CN_CHECK_EQ_INT(gw_tagset_add(s, key, (size_t)n, "", 0, &why), GW_S3_OK);
    }
    CN_CHECK_EQ_INT(gw_tagset_add(s, "eleven", 6, "", 0, &why), GW_S3_BAD_REQUEST);
    CN_CHECK_EQ_STR(why, "Object tags cannot be greater than 10");
    cn_free(s);
}

static void test_query(void)
{
    static const struct {
        const char *in;
        enum gw_s3_err err;
        size_t n;
    } v[] = {
        {"", GW_S3_OK, 0},
        {"a=1", GW_S3_OK, 1},
        {"a=1&b=two%20words&c=", GW_S3_OK, 3},
        {"a", GW_S3_OK, 1},
        {"a=b+c", GW_S3_OK, 1},
        {"a=1&a=2", GW_S3_INVALID_ARGUMENT, 1},
        {"a=%zz", GW_S3_INVALID_ARGUMENT, 0},
        {"a=1&&b=2", GW_S3_INVALID_ARGUMENT, 1},
        {"a=1&", GW_S3_INVALID_ARGUMENT, 1},
        {"&a=1", GW_S3_INVALID_ARGUMENT, 0},
        {"=v", GW_S3_INVALID_TAG, 0},
        {"k%23=v", GW_S3_INVALID_TAG, 0},
        {"k0&k1&k2&k3&k4&k5&k6&k7&k8&k9&k10", GW_S3_BAD_REQUEST, 10},
    };
    struct gw_tagset *s = test_set();
    for (size_t i = 0; i < CN_ARRAY_LEN(v); i++) {
        const char *why = NULL;
        enum gw_s3_err err = gw_tagset_parse_query(s, v[i].in, strlen(v[i].in), &why);
        CN_CHECK_EQ_INT(err, v[i].err);
        CN_CHECK_EQ_INT((int)s->n, (int)v[i].n);
        CN_CHECK(err == GW_S3_OK || why != NULL);
    }
    const char *why;
    CN_CHECK_EQ_INT(gw_tagset_parse_query(s, "a=b+c&d=e%2Bf", 13, &why), GW_S3_OK);
    CN_CHECK(s->tags[0].value_len == 3 && memcmp(s->tags[0].value, "b c", 3) == 0);
    CN_CHECK(s->tags[1].value_len == 3 && memcmp(s->tags[1].value, "e+f", 3) == 0);
    cn_free(s);
}

static void test_encode_round_trip(void)
{
    struct gw_tagset *s = test_set(), *back = test_set();
    const char *why;
    CN_CHECK_EQ_INT(gw_tagset_add(s, "a b", 3, "x+y=z&w", 7, &why), GW_S3_INVALID_TAG);
    CN_CHECK_EQ_INT(gw_tagset_add(s, "a b", 3, "x+y=z/w", 7, &why), GW_S3_OK);
    CN_CHECK_EQ_INT(gw_tagset_add(s, "\xc3\xa9", 2, "", 0, &why), GW_S3_OK);
    char enc[GW_TAGSET_ENCODED_MAX];
    size_t n = gw_tagset_encode(s, enc, sizeof(enc));
    CN_CHECK(n == strlen("a%20b=x%2By%3Dz%2Fw&%C3%A9=") &&
             memcmp(enc, "a%20b=x%2By%3Dz%2Fw&%C3%A9=", n) == 0);
    CN_CHECK_EQ_INT((int)gw_tagset_count_encoded(enc, n), 2);
    CN_CHECK_EQ_INT((int)gw_tagset_count_encoded(enc, 0), 0);
    CN_CHECK_EQ_INT(gw_tagset_parse_query(back, enc, n, &why), GW_S3_OK);
    CN_CHECK(back->n == 2 && back->tags[0].value_len == 7 &&
             memcmp(back->tags[0].value, "x+y=z/w", 7) == 0);
    CN_CHECK_EQ_INT((int)gw_tagset_encode(s, enc, 5), 0); /* too short */
    cn_free(s);
    cn_free(back);
}

static void test_xml(void)
{
    static const struct {
        const char *body;
        enum gw_s3_err err;
        size_t n;
    } v[] = {
        {"<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag></TagSet></Tagging>",
         GW_S3_OK, 1},
        {"<Tagging xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><TagSet/></Tagging>",
         GW_S3_OK, 0},
        {"<Tagging><TagSet><Tag><Key>a</Key><Value/></Tag><Tag><Key>b</Key><Value>x</Value>"
         "</Tag></TagSet><Other/></Tagging>", GW_S3_OK, 2},
        {"<Tagging></Tagging>", GW_S3_MALFORMED_XML, 0},
        {"<Tagging><TagSet/><TagSet/></Tagging>", GW_S3_MALFORMED_XML, 0},
        {"<Other><TagSet/></Other>", GW_S3_MALFORMED_XML, 0},
        {"<Tagging><TagSet><Tag><Key>a</Key></Tag></TagSet></Tagging>", GW_S3_MALFORMED_XML, 0},
        {"<Tagging><TagSet><Tag><Value>a</Value></Tag></TagSet></Tagging>", GW_S3_MALFORMED_XML,
         0},
        {"<Tagging><TagSet><Tag><Key>a</Key><Key>b</Key><Value/></Tag></TagSet></Tagging>",
         GW_S3_MALFORMED_XML, 0},
        {"<Tagging><TagSet>", GW_S3_MALFORMED_XML, 0},
        {"", GW_S3_MALFORMED_XML, 0},
        {"<Tagging><TagSet><Tag><Key>a!</Key><Value/></Tag></TagSet></Tagging>",
         GW_S3_INVALID_TAG, 0},
        {"<Tagging><TagSet><Tag><Key>a</Key><Value/></Tag><Tag><Key>a</Key><Value/></Tag>"
         "</TagSet></Tagging>", GW_S3_INVALID_TAG, 0},
    };
    struct gw_tagset *s = test_set();
    for (size_t i = 0; i < CN_ARRAY_LEN(v); i++) {
        enum gw_s3_err err = GW_S3_OK;
        const char *why;
        int rc = gw_xml_parse_tagging(v[i].body, strlen(v[i].body), s, &err, &why);
        CN_CHECK_EQ_INT(err, v[i].err);
        CN_CHECK_EQ_INT(rc == CN_OK, err == GW_S3_OK);
        CN_CHECK_EQ_INT((int)s->n, (int)v[i].n);
        CN_CHECK((err == GW_S3_INVALID_TAG) == (why != NULL));
    }
    /* a key far over the limit is InvalidTag, not a buffer overrun */
    char big[4096];
    char key[3000];
    memset(key, 'k', sizeof(key));
    int n = snprintf(big, sizeof(big), "<Tagging><TagSet><Tag><Key>%.*s</Key><Value/></Tag>"
                     "</TagSet></Tagging>", (int)sizeof(key), key);
    enum gw_s3_err err;
    const char *why;
    CN_CHECK_EQ_INT(gw_xml_parse_tagging(big, (size_t)n, s, &err, &why), CN_INVAL);
    CN_CHECK_EQ_INT(err, GW_S3_INVALID_TAG);
    cn_free(s);
}

/* A bucket's set takes 50 tags from the XML body, an object's 10. */
static void test_bucket_limit(void)
{
    char body[8192];
    size_t n = (size_t)snprintf(body, sizeof(body), "<Tagging><TagSet>");
    for (int i = 0; i < 51; i++)
        n += (size_t)snprintf(body + n, sizeof(body) - n,
                              "<Tag><Key>k%d</Key><Value>v</Value></Tag>", i);
    n += (size_t)snprintf(body + n, sizeof(body) - n, "</TagSet></Tagging>");
    struct gw_tagset *b = gw_tagset_new(GW_TAGSET_BUCKET_MAX);
    struct gw_tagset *o = test_set();
    enum gw_s3_err err;
    const char *why;
    CN_CHECK_EQ_INT(gw_xml_parse_tagging(body, n, b, &err, &why), CN_INVAL);
    CN_CHECK_EQ_INT(err, GW_S3_BAD_REQUEST);
    CN_CHECK_EQ_STR(why, "Bucket tag count cannot be greater than 50");
    CN_CHECK_EQ_INT(gw_xml_parse_tagging(body, n, o, &err, &why), CN_INVAL);
    CN_CHECK_EQ_STR(why, "Object tags cannot be greater than 10");
    /* the same body without its 51st tag fits a bucket, round trip included */
    char *cut = strstr(body, "<Tag><Key>k50<");
    CN_CHECK(cut != NULL);
    size_t m = (size_t)(cut - body);
    memcpy(body + m, "</TagSet></Tagging>", 20);
    CN_CHECK_EQ_INT(gw_xml_parse_tagging(body, m + 19, b, &err, &why), CN_OK);
    CN_CHECK_EQ_INT((int)b->n, 50);
    char *enc = cn_malloc(GW_TAGSET_ENCODED_MAX_OF(GW_TAGSET_BUCKET_MAX));
    size_t el = gw_tagset_encode(b, enc, GW_TAGSET_ENCODED_MAX_OF(GW_TAGSET_BUCKET_MAX));
    struct gw_tagset *back = gw_tagset_new(GW_TAGSET_BUCKET_MAX);
    CN_CHECK_EQ_INT(gw_tagset_parse_query(back, enc, el, &why), GW_S3_OK);
    CN_CHECK_EQ_INT((int)back->n, 50);
    CN_CHECK(back->tags[49].key_len == 3 && memcmp(back->tags[49].key, "k49", 3) == 0);
    /* an object's set refuses the 11th tag of the stored form */
    CN_CHECK_EQ_INT(gw_tagset_parse_query(o, enc, el, &why), GW_S3_BAD_REQUEST);
    cn_free(enc);
    gw_tagset_free(back);
    gw_tagset_free(b);
    gw_tagset_free(o);
}

static const struct cn_test_case cases[] = {
    {"bucket_limit", test_bucket_limit},
    {"add_rules", test_add_rules},
    {"query", test_query},
    {"encode_round_trip", test_encode_round_trip},
    {"xml", test_xml},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
