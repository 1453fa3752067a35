/* The XML writer and the three request-body parsers. */
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/test.h"
#include "xml.h"

CN_TEST_GLOBALS;

/* The evbuffer's content as a NUL-terminated heap string. */
static char *drain(struct evbuffer *b)
{
    size_t n = evbuffer_get_length(b);
    char *s = cn_malloc(n + 1);
    evbuffer_remove(b, s, n);
    s[n] = '\0';
    return s;
}

static void test_writer(void)
{
    struct evbuffer *b = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, b);
    gw_xml_open_ns(&w, "ListBucketResult", GW_XML_S3_NS);
    gw_xml_elem_str(&w, "Name", "bkt");
    gw_xml_elem(&w, "Key", "a&b<\r\n\t\x1f'\"", 10);
    gw_xml_elem_u64(&w, "Size", 18446744073709551615ull);
    gw_xml_elem_i64(&w, "Neg", -5);
    gw_xml_elem_bool(&w, "IsTruncated", 0);
    gw_xml_elem_time_ms(&w, "LastModified", 1796228266000LL);
    gw_xml_empty(&w, "Quiet");
    gw_xml_open(&w, "Owner");
    gw_xml_elem_str(&w, "ID", NULL);
    gw_xml_close(&w);
    gw_xml_close(&w);
    CN_CHECK_EQ_INT(gw_xml_writer_finish(&w), CN_OK);
    char *s = drain(b);
    CN_CHECK_EQ_STR(s,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        "<Name>bkt</Name><Key>a&amp;b&lt;&#xD;\n\t\xEF\xBF\xBD&apos;&quot;</Key>"
        "<Size>18446744073709551615</Size><Neg>-5</Neg><IsTruncated>false</IsTruncated>"
        "<LastModified>2026-12-02T16:17:46.000Z</LastModified><Quiet/>"
        "<Owner><ID></ID></Owner></ListBucketResult>");
    cn_free(s);
    /* unbalanced documents are reported */
    gw_xml_writer_init(&w, b);
    gw_xml_open(&w, "A");
    CN_CHECK_EQ_INT(gw_xml_writer_finish(&w), CN_ERR);
    gw_xml_writer_init(&w, b);
    gw_xml_close(&w);
    CN_CHECK_EQ_INT(gw_xml_writer_finish(&w), CN_ERR);
    gw_xml_writer_init(&w, b);
    for (int i = 0; i < GW_XML_MAX_DEPTH + 1; i++)
        gw_xml_open(&w, "D");
    CN_CHECK_EQ_INT(gw_xml_writer_finish(&w), CN_ERR);
    evbuffer_free(b);
}

#define S(x) x, sizeof(x) - 1

static void test_delete(void)
{
    struct gw_xml_delete d;
    enum gw_s3_err e = GW_S3_OK;
    const char ok[] =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\n"
        "  <Quiet> TRUE </Quiet>\n"
        "  <Object><Key> spaced key </Key></Object>\n"
        "  <Object><Key>a&amp;b&#x41;</Key><VersionId> v1 </VersionId></Object>\n"
        "  <Unknown><Object><Key>ignored</Key></Object></Unknown>\n"
        "</Delete>";
    CN_CHECK_EQ_INT(gw_xml_parse_delete(S(ok), &d, &e), CN_OK);
    CN_CHECK_EQ_INT(d.n_objects, 2);
    CN_CHECK(d.quiet);
    if (d.n_objects == 2) {
        CN_CHECK_EQ_STR(d.objects[0].key, " spaced key ");
        CN_CHECK(d.objects[0].version_id == NULL);
        CN_CHECK_EQ_STR(d.objects[1].key, "a&bA");
        CN_CHECK_EQ_INT(d.objects[1].key_len, 4);
        CN_CHECK_EQ_STR(d.objects[1].version_id, "v1");
    }
    gw_xml_delete_fini(&d);
    /* a namespace prefix is fine */
    CN_CHECK_EQ_INT(gw_xml_parse_delete(S("<s3:Delete xmlns:s3=\"urn:x\"><s3:Object><s3:Key>k"
                                          "</s3:Key></s3:Object></s3:Delete>"), &d, &e), CN_OK);
    CN_CHECK_EQ_INT(d.n_objects, 1);
    CN_CHECK(!d.quiet);
    gw_xml_delete_fini(&d);

    static const char *const bad[] = {
        "", "<Delete></Delete>", "<Delete><Object></Object></Delete>",
        "<Delete><Object><Key>a</Key><Key>b</Key></Object></Delete>",
        "<Delete><Object><Key>a</Key><VersionId>1</VersionId><VersionId>2</VersionId>"
        "</Object></Delete>",
        "<Delete><Quiet>yes</Quiet><Object><Key>a</Key></Object></Delete>",
        "<Delete><Quiet>true</Quiet><Quiet>true</Quiet><Object><Key>a</Key></Object></Delete>",
        "<Remove><Object><Key>a</Key></Object></Remove>",
        "<Delete><Object><Key>a</Key></Object>", "<Delete><Object><Key>a&bogus;</Key></Object>"
        "</Delete>",
        "<!DOCTYPE d [<!ENTITY x \"y\">]><Delete><Object><Key>&x;</Key></Object></Delete>",
        "<Delete><Object><Key>\xff</Key></Object></Delete>",
        "<Delete><a><b><c><d><e><f><g><h>x</h></g></f></e></d></c></b></a></Delete>",
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(bad); i++) {
        e = GW_S3_OK;
        int rc = gw_xml_parse_delete(bad[i], strlen(bad[i]), &d, &e);
        if (rc == CN_OK || e != GW_S3_MALFORMED_XML)
            fprintf(stderr, "  case %zu: rc %d err %d\n", i, rc, e);
        CN_CHECK(rc != CN_OK);
        CN_CHECK_EQ_INT(e, GW_S3_MALFORMED_XML);
        CN_CHECK(d.n_objects == 0 && d.objects == NULL);
    }
}

/* Builds a Delete body of n objects. */
static char *delete_body(size_t n, size_t *len)
{
    struct evbuffer *b = evbuffer_new();
    evbuffer_add_printf(b, "<Delete>");
    for (size_t i = 0; i < n; i++)
        evbuffer_add_printf(b, "<Object><Key>key-%zu</Key></Object>", i);
    evbuffer_add_printf(b, "</Delete>");
    *len = evbuffer_get_length(b);
    char *s = drain(b);
    evbuffer_free(b);
    return s;
}

static void test_delete_limits(void)
{
    struct gw_xml_delete d;
    enum gw_s3_err e;
    size_t len;
    char *body = delete_body(GW_XML_DELETE_MAX_OBJECTS, &len);
    CN_CHECK_EQ_INT(gw_xml_parse_delete(body, len, &d, &e), CN_OK);
    CN_CHECK_EQ_INT(d.n_objects, GW_XML_DELETE_MAX_OBJECTS);
    CN_CHECK(d.n_objects > 0 && strcmp(d.objects[d.n_objects - 1].key, "key-999") == 0);
    gw_xml_delete_fini(&d);
    cn_free(body);
    body = delete_body(GW_XML_DELETE_MAX_OBJECTS + 1, &len);
    CN_CHECK_EQ_INT(gw_xml_parse_delete(body, len, &d, &e), CN_INVAL);
    CN_CHECK_EQ_INT(e, GW_S3_MALFORMED_XML);
    cn_free(body);
    /* over the byte limit: refused before parsing */
    CN_CHECK_EQ_INT(gw_xml_parse_delete("x", GW_XML_DELETE_MAX_BYTES + 1, &d, &e), CN_TOOBIG);
    CN_CHECK_EQ_INT(e, GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED);
    /* a long key survives for the caller's KeyTooLongError */
    struct evbuffer *b = evbuffer_new();
    evbuffer_add_printf(b, "<Delete><Object><Key>");
    for (int i = 0; i < 2000; i++)
        evbuffer_add(b, "k", 1);
    evbuffer_add_printf(b, "</Key></Object></Delete>");
    len = evbuffer_get_length(b);
    body = drain(b);
    CN_CHECK_EQ_INT(gw_xml_parse_delete(body, len, &d, &e), CN_OK);
    CN_CHECK(d.n_objects == 1 && d.objects[0].key_len == 2000);
    gw_xml_delete_fini(&d);
    cn_free(body);
    evbuffer_free(b);
}

static void test_complete(void)
{
    struct gw_xml_complete c;
    enum gw_s3_err e;
    const char ok[] =
        "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        "<Part><ETag>\"a54357aff0632cce46d942af68356b38\"</ETag><PartNumber>1</PartNumber>"
        "</Part>"
        "<Part><PartNumber> 2 </PartNumber><ETag>&quot;0c78aef83f66abc1fa1e8477f296d394"
        "&quot;</ETag><ChecksumCRC32>AAAAAA==</ChecksumCRC32>"
        "<ChecksumSHA256>x</ChecksumSHA256></Part>"
        "<Part><PartNumber>10000</PartNumber><ETag>plain</ETag></Part>"
        "</CompleteMultipartUpload>";
    CN_CHECK_EQ_INT(gw_xml_parse_complete(S(ok), &c, &e), CN_OK);
    CN_CHECK_EQ_INT(c.n_parts, 3);
    if (c.n_parts == 3) {
        CN_CHECK_EQ_INT(c.parts[0].part_number, 1);
        CN_CHECK_EQ_STR(c.parts[0].etag, "a54357aff0632cce46d942af68356b38");
        CN_CHECK_EQ_INT(c.parts[0].etag_len, 32);
        CN_CHECK_EQ_STR(c.parts[1].etag, "0c78aef83f66abc1fa1e8477f296d394");
        CN_CHECK_EQ_STR(c.parts[1].checksum_crc32, "AAAAAA==");
        CN_CHECK_EQ_STR(c.parts[1].checksum_sha256, "x");
        CN_CHECK(c.parts[1].checksum_crc32c == NULL && c.parts[0].checksum_crc32 == NULL);
        CN_CHECK_EQ_INT(c.parts[2].part_number, 10000);
        CN_CHECK_EQ_STR(c.parts[2].etag, "plain");
    }
    gw_xml_complete_fini(&c);

    static const struct {
        const char *body;
        enum gw_s3_err err;
    } bad[] = {
        {"<CompleteMultipartUpload></CompleteMultipartUpload>", GW_S3_MALFORMED_XML},
        {"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber></Part>"
         "</CompleteMultipartUpload>", GW_S3_MALFORMED_XML},
        {"<CompleteMultipartUpload><Part><ETag>x</ETag></Part></CompleteMultipartUpload>",
         GW_S3_MALFORMED_XML},
        {"<CompleteMultipartUpload><Part><PartNumber>x1</PartNumber><ETag>x</ETag></Part>"
         "</CompleteMultipartUpload>", GW_S3_MALFORMED_XML},
        {"<CompleteMultipartUpload><Part><PartNumber>-1</PartNumber><ETag>x</ETag></Part>"
         "</CompleteMultipartUpload>", GW_S3_MALFORMED_XML},
        {"<CompleteMultipartUpload><Part><PartNumber>0</PartNumber><ETag>x</ETag></Part>"
         "</CompleteMultipartUpload>", GW_S3_INVALID_ARGUMENT},
        {"<CompleteMultipartUpload><Part><PartNumber>10001</PartNumber><ETag>x</ETag></Part>"
         "</CompleteMultipartUpload>", GW_S3_INVALID_ARGUMENT},
        {"<CompleteMultipartUpload><Part><PartNumber>2</PartNumber><ETag>x</ETag></Part>"
         "<Part><PartNumber>1</PartNumber><ETag>x</ETag></Part></CompleteMultipartUpload>",
         GW_S3_INVALID_PART_ORDER},
        {"<CompleteMultipartUpload><Part><PartNumber>2</PartNumber><ETag>x</ETag></Part>"
         "<Part><PartNumber>2</PartNumber><ETag>x</ETag></Part></CompleteMultipartUpload>",
         GW_S3_INVALID_PART_ORDER},
        {"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>x</ETag>"
         "<ETag>y</ETag></Part></CompleteMultipartUpload>", GW_S3_MALFORMED_XML},
        {"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>x</ETag>"
         "<ChecksumCRC32>a</ChecksumCRC32><ChecksumCRC32>b</ChecksumCRC32></Part>"
         "</CompleteMultipartUpload>", GW_S3_MALFORMED_XML},
        {"<Complete><Part><PartNumber>1</PartNumber><ETag>x</ETag></Part></Complete>",
         GW_S3_MALFORMED_XML},
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(bad); i++) {
        e = GW_S3_OK;
        int rc = gw_xml_parse_complete(bad[i].body, strlen(bad[i].body), &c, &e);
        if (rc == CN_OK || e != bad[i].err)
            fprintf(stderr, "  case %zu: rc %d err %d\n", i, rc, e);
        CN_CHECK(rc != CN_OK);
        CN_CHECK_EQ_INT(e, bad[i].err);
        CN_CHECK(c.n_parts == 0 && c.parts == NULL);
    }
}

static void test_create_bucket(void)
{
    char loc[GW_XML_LOCATION_MAX + 1];
    enum gw_s3_err e;
    CN_CHECK_EQ_INT(gw_xml_parse_create_bucket("", 0, loc, &e), CN_OK);
    CN_CHECK_EQ_STR(loc, "");
    CN_CHECK_EQ_INT(gw_xml_parse_create_bucket(S(
        "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        "<LocationConstraint> eu-west-1 </LocationConstraint></CreateBucketConfiguration>"),
        loc, &e), CN_OK);
    CN_CHECK_EQ_STR(loc, "eu-west-1");
    CN_CHECK_EQ_INT(gw_xml_parse_create_bucket(S("<CreateBucketConfiguration/>"), loc, &e),
                    CN_OK);
    CN_CHECK_EQ_STR(loc, "");
    CN_CHECK_EQ_INT(gw_xml_parse_create_bucket(S(
        "<CreateBucketConfiguration><LocationConstraint>a b</LocationConstraint>"
        "</CreateBucketConfiguration>"), loc, &e), CN_INVAL);
    CN_CHECK_EQ_INT(e, GW_S3_INVALID_LOCATION_CONSTRAINT);
    CN_CHECK_EQ_INT(gw_xml_parse_create_bucket(S("<Other/>"), loc, &e), CN_INVAL);
    CN_CHECK_EQ_INT(e, GW_S3_MALFORMED_XML);
    CN_CHECK_EQ_INT(gw_xml_parse_create_bucket(S("<CreateBucketConfiguration>"), loc, &e),
                    CN_INVAL);
    CN_CHECK_EQ_INT(e, GW_S3_MALFORMED_XML);
}

/* Text XML 1.0 cannot carry is never written as is, nor as a character
 * reference (&#x1; is not well-formed either): it becomes U+FFFD and the
 * writer says so. */
static void test_xml10_text(void)
{
    static const struct {
        const char *in;
        size_t len;
        int valid;
        const char *out;
    } v[] = {
        {"plain \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", 15, 1,
         "plain \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"},
        {"a\tb\nc\rd", 7, 1, "a\tb\nc&#xD;d"},
        {"a\x01" "b", 3, 0, "a\xEF\xBF\xBD" "b"},
        {"\x1F\x0B", 2, 0, "\xEF\xBF\xBD\xEF\xBF\xBD"},
        {"x\xEF\xBF\xBF", 4, 0, "x\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"}, /* U+FFFF */
        {"\xEF\xBF\xBE", 3, 0, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},   /* U+FFFE */
        {"\xEF\xBF\xBD", 3, 1, "\xEF\xBF\xBD"},                               /* U+FFFD */
        {"\xFF", 1, 0, "\xEF\xBF\xBD"},
        {"\xC0\xAF", 2, 0, "\xEF\xBF\xBD\xEF\xBF\xBD"},                      /* overlong */
        {"\xED\xA0\x80", 3, 0, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},   /* surrogate */
        {"\xE2\x82", 2, 0, "\xEF\xBF\xBD\xEF\xBF\xBD"},                      /* truncated */
        {"\x00", 1, 0, "\xEF\xBF\xBD"},
    };
    struct evbuffer *b = evbuffer_new();
    for (size_t i = 0; i < CN_ARRAY_LEN(v); i++) {
        CN_CHECK_EQ_INT(gw_xml_text_valid(v[i].in, v[i].len), v[i].valid);
        CN_CHECK_EQ_INT(gw_xml_escape(b, v[i].in, v[i].len), CN_OK);
        char *s = drain(b);
        if (strcmp(s, v[i].out) != 0)
            fprintf(stderr, "  case %zu\n", i);
        CN_CHECK_EQ_STR(s, v[i].out);
        cn_free(s);
        struct gw_xml_writer w;
        gw_xml_writer_init(&w, b);
        gw_xml_elem(&w, "Key", v[i].in, v[i].len);
        CN_CHECK_EQ_INT(gw_xml_writer_finish(&w), CN_OK);
        CN_CHECK_EQ_INT(w.replaced, !v[i].valid);
        evbuffer_drain(b, evbuffer_get_length(b));
    }
    evbuffer_free(b);
}

static const struct cn_test_case cases[] = {
    {"writer", test_writer},
    {"xml10_text", test_xml10_text},
    {"delete", test_delete},
    {"delete_limits", test_delete_limits},
    {"complete", test_complete},
    {"create_bucket", test_create_bucket},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
