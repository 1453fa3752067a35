/* Lifecycle rules (lifecycle.c): the parser's answers to what S3 refuses,
 * the stored form's round trip, which objects a rule takes, and the due
 * dates (S3's "creation + Days, rounded up to the next midnight UTC", in
 * units of the day length). */
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>

#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/test.h"
#include "lifecycle.h"
#include "lifecycle_run.h"

CN_TEST_GLOBALS;

#define NS "<LifecycleConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
#define END "</LifecycleConfiguration>"
#define DAY_US (86400ull * 1000000)

/* Parses doc; returns the error (GW_S3_OK when it parsed) and frees. */
static enum gw_s3_err parse_err(const char *doc, char why[GW_XML_WHY_MAX])
{
    struct gw_lc lc;
    enum gw_s3_err err = GW_S3_OK;
    int rc = gw_lc_parse(doc, strlen(doc), &lc, &err, why);
    CN_CHECK((rc == CN_OK) == (err == GW_S3_OK));
    gw_lc_fini(&lc);
    return err;
}

static void test_errors(void)
{
    static const struct {
        const char *doc;
        enum gw_s3_err err;
        const char *why;   /* NULL: not checked */
    } cases[] = {
        {NS "<Rule><ID>a</ID><Filter><Prefix>p/</Prefix></Filter><Status>Enabled</Status>"
            "<Expiration><Days>1</Days></Expiration></Rule>" END, GW_S3_OK, NULL},
        {NS END, GW_S3_MALFORMED_XML, NULL},
        {"<Other/>", GW_S3_MALFORMED_XML, NULL},
        {NS "<Rule><Filter/><Status>On</Status><Expiration><Days>1</Days></Expiration></Rule>" END,
         GW_S3_MALFORMED_XML, NULL},
        {NS "<Rule><Filter/><Expiration><Days>1</Days></Expiration></Rule>" END,
         GW_S3_MALFORMED_XML, NULL},
        {NS "<Rule><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>" END,
         GW_S3_MALFORMED_XML, NULL},   /* neither Filter nor Prefix */
        {NS "<Rule><Prefix>a</Prefix><Filter/><Status>Enabled</Status><Expiration><Days>1</Days>"
            "</Expiration></Rule>" END, GW_S3_MALFORMED_XML, NULL},
        {NS "<Rule><Filter><Prefix>a</Prefix><Tag><Key>k</Key><Value>v</Value></Tag></Filter>"
            "<Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>" END,
         GW_S3_MALFORMED_XML, NULL},   /* two conditions outside And */
        {NS "<Rule><Filter/><Status>Enabled</Status><Expiration><Days>1</Days><Date>"
            "2027-01-01T00:00:00Z</Date></Expiration></Rule>" END, GW_S3_MALFORMED_XML, NULL},
        {NS "<Rule><Filter/><Status>Enabled</Status><Expiration><Days>x</Days></Expiration>"
            "</Rule>" END, GW_S3_MALFORMED_XML, NULL},
        {NS "<Rule><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>"
            "<Bogus/></Rule>" END, GW_S3_MALFORMED_XML, NULL},
        {NS "<Rule><Filter/><Status>Enabled</Status><Status>Enabled</Status><Expiration><Days>1"
            "</Days></Expiration></Rule>" END, GW_S3_MALFORMED_XML, NULL},
        {NS "<Rule><Filter/><Status>Enabled</Status><Expiration><Days>0</Days></Expiration>"
            "</Rule>" END, GW_S3_INVALID_ARGUMENT,
         "'Days' for Expiration action must be a positive integer"},
        {NS "<Rule><Filter/><Status>Enabled</Status><Expiration><Date>2027-01-01T10:00:00Z"
            "</Date></Expiration></Rule>" END, GW_S3_INVALID_ARGUMENT,
         "'Date' must be at midnight GMT"},
        {NS "<Rule><Filter/><Status>Enabled</Status></Rule>" END, GW_S3_INVALID_REQUEST,
         "At least one action needs to be specified in a rule"},
        {NS "<Rule><Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Status>Enabled"
            "</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>1"
            "</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>" END,
         GW_S3_INVALID_REQUEST, "AbortIncompleteMultipartUpload cannot be specified with Tags."},
        {NS "<Rule><Filter/><Status>Enabled</Status><AbortIncompleteMultipartUpload>"
            "<DaysAfterInitiation>-1</DaysAfterInitiation></AbortIncompleteMultipartUpload>"
            "</Rule>" END, GW_S3_INVALID_ARGUMENT, NULL},
        {NS "<Rule><Filter><And><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan>"
            "<ObjectSizeLessThan>10</ObjectSizeLessThan></And></Filter><Status>Enabled</Status>"
            "<Expiration><Days>1</Days></Expiration></Rule>" END, GW_S3_INVALID_REQUEST, NULL},
        {NS "<Rule><ID>same</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days>"
            "</Expiration></Rule><Rule><ID>same</ID><Filter/><Status>Enabled</Status>"
            "<Expiration><Days>2</Days></Expiration></Rule>" END, GW_S3_INVALID_ARGUMENT,
         "Rule ID must be unique. Found same ID for more than one rule"},
        {NS "<Rule><Filter/><Status>Enabled</Status><Transition><Days>1</Days><StorageClass>"
            "GLACIER</StorageClass></Transition></Rule>" END, GW_S3_NOT_IMPLEMENTED, NULL},
        {NS "<Rule><Filter><Tag><Key>aws:x</Key><Value>v</Value></Tag></Filter><Status>Enabled"
            "</Status><Expiration><Days>1</Days></Expiration></Rule>" END, GW_S3_INVALID_TAG,
         NULL},
        {NS "<Rule><Filter><And><Tag><Key>k</Key><Value>v</Value></Tag><Tag><Key>k</Key><Value>w"
            "</Value></Tag></And></Filter><Status>Enabled</Status><Expiration><Days>1</Days>"
            "</Expiration></Rule>" END, GW_S3_INVALID_TAG, NULL},
        {NS "<Rule><Filter/><Status>Enabled</Status><NoncurrentVersionExpiration>"
            "<NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration>"
            "</Rule>" END, GW_S3_MALFORMED_XML, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char why[GW_XML_WHY_MAX];
        enum gw_s3_err e = parse_err(cases[i].doc, why);
        if (e != cases[i].err)
            fprintf(stderr, "  case %zu: got %d want %d (%s)\n", i, (int)e, (int)cases[i].err,
                    why);
        CN_CHECK_EQ_INT(e, cases[i].err);
        if (cases[i].why != NULL)
            CN_CHECK_EQ_STR(why, cases[i].why);
    }
    /* an ID of 256 characters */
    char doc[2048];
    char id[257];
    memset(id, 'i', 256);
    id[256] = '\0';
    snprintf(doc, sizeof(doc), NS "<Rule><ID>%s</ID><Filter/><Status>Enabled</Status>"
             "<Expiration><Days>1</Days></Expiration></Rule>" END, id);
    char why[GW_XML_WHY_MAX];
    CN_CHECK_EQ_INT(parse_err(doc, why), GW_S3_INVALID_ARGUMENT);
    CN_CHECK_EQ_STR(why, "ID length should not exceed allowed limit of 255");
    id[255] = '\0';
    snprintf(doc, sizeof(doc), NS "<Rule><ID>%s</ID><Filter/><Status>Enabled</Status>"
             "<Expiration><Days>1</Days></Expiration></Rule>" END, id);
    CN_CHECK_EQ_INT(parse_err(doc, why), GW_S3_OK);
}

/* 1001 rules are refused, 1000 taken. */
static void test_rule_limit(void)
{
    static const char rule[] = "<Rule><Filter/><Status>Enabled</Status><Expiration><Days>1"
                               "</Days></Expiration></Rule>";
    size_t cap = sizeof(NS) + sizeof(END) + 1001 * sizeof(rule);
    char *doc = cn_malloc(cap);
    for (int n = 1000; n <= 1001; n++) {
        size_t len = (size_t)snprintf(doc, cap, NS);
        for (int i = 0; i < n; i++)
            len += (size_t)snprintf(doc + len, cap - len, "%s", rule);
        len += (size_t)snprintf(doc + len, cap - len, END);
        char why[GW_XML_WHY_MAX];
        CN_CHECK_EQ_INT(parse_err(doc, why), n == 1000 ? GW_S3_OK : GW_S3_MALFORMED_XML);
    }
    cn_free(doc);
}

/* The written form parses back to the same rules, and writes the same. */
static void test_round_trip(void)
{
    static const char doc[] =
        NS "<Rule><ID>logs</ID><Filter><And><Prefix>logs/</Prefix><Tag><Key>a</Key><Value>b c"
        "</Value></Tag><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan></And></Filter><Status>"
        "Enabled</Status><Expiration><Days>3</Days></Expiration></Rule>"
        "<Rule><Prefix>tmp/</Prefix><Status>Disabled</Status><Expiration><Date>2027-01-01"
        "</Date></Expiration><AbortIncompleteMultipartUpload><DaysAfterInitiation>2"
        "</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>"
        "<Rule><Filter></Filter><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>"
        "true</ExpiredObjectDeleteMarker></Expiration><NoncurrentVersionExpiration>"
        "<NoncurrentDays>5</NoncurrentDays></NoncurrentVersionExpiration></Rule>" END;
    struct gw_lc lc, back;
    enum gw_s3_err err;
    char why[GW_XML_WHY_MAX];
    CN_CHECK_EQ_INT(gw_lc_parse(doc, strlen(doc), &lc, &err, why), CN_OK);
    CN_CHECK_EQ_INT((int)lc.n_rules, 3);
    const struct gw_lc_rule *r = &lc.rules[0];
    CN_CHECK(r->enabled && r->filter_and && !r->legacy_prefix && r->n_tags == 1);
    CN_CHECK(r->exp_days == 3 && r->size_gt == 10 && r->size_lt == GW_LC_NONE);
    CN_CHECK(lc.rules[1].legacy_prefix && !lc.rules[1].enabled);
    CN_CHECK(lc.rules[1].exp_date_s == 1798761600 && lc.rules[1].abort_days == 2);
    CN_CHECK(lc.rules[2].id_len == 32 && lc.rules[2].exp_marker == 1 &&
             lc.rules[2].nc_days == 5 && lc.rules[2].prefix == NULL);
    struct evbuffer *a = evbuffer_new(), *b = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, a);
    gw_lc_write_xml(&lc, &w);
    CN_CHECK_EQ_INT(gw_xml_writer_finish(&w), CN_OK);
    size_t n = evbuffer_get_length(a);
    const char *text = (const char *)evbuffer_pullup(a, -1);
    CN_CHECK(memmem(text, n, "<Date>2027-01-01T00:00:00.000Z</Date>", 37) != NULL);
    CN_CHECK_EQ_INT(gw_lc_parse(text, n, &back, &err, why), CN_OK);
    gw_xml_writer_init(&w, b);
    gw_lc_write_xml(&back, &w);
    CN_CHECK_EQ_INT(gw_xml_writer_finish(&w), CN_OK);
    CN_CHECK(evbuffer_get_length(b) == n && memcmp(evbuffer_pullup(b, -1), text, n) == 0);
    gw_lc_fini(&back);
    gw_lc_fini(&lc);
    evbuffer_free(a);
    evbuffer_free(b);
}

static void test_matches(void)
{
    static const char doc[] =
        NS "<Rule><Filter><And><Prefix>logs/</Prefix><Tag><Key>a</Key><Value>b</Value></Tag>"
        "<ObjectSizeGreaterThan>10</ObjectSizeGreaterThan><ObjectSizeLessThan>100"
        "</ObjectSizeLessThan></And></Filter><Status>Enabled</Status><Expiration><Days>1</Days>"
        "</Expiration></Rule>" END;
    struct gw_lc lc;
    enum gw_s3_err err;
    char why[GW_XML_WHY_MAX];
    CN_CHECK_EQ_INT(gw_lc_parse(doc, strlen(doc), &lc, &err, why), CN_OK);
    const struct gw_lc_rule *r = &lc.rules[0];
    struct gw_tagset *t = gw_tagset_new(GW_TAGSET_MAX);
    const char *w;
    CN_CHECK_EQ_INT(gw_tagset_parse_query(t, "x=1&a=b", 7, &w), GW_S3_OK);
    CN_CHECK(gw_lc_rule_matches(r, "logs/1", 6, 50, t));
    CN_CHECK(!gw_lc_rule_matches(r, "logs/1", 6, 50, NULL));       /* no tags */
    CN_CHECK(!gw_lc_rule_matches(r, "data/1", 6, 50, t));          /* prefix */
    CN_CHECK(!gw_lc_rule_matches(r, "logs/1", 6, 10, t));          /* not > 10 */
    CN_CHECK(!gw_lc_rule_matches(r, "logs/1", 6, 100, t));         /* not < 100 */
    CN_CHECK(gw_lc_rule_prefix_matches(r, "logs/", 5));
    CN_CHECK(!gw_lc_rule_prefix_matches(r, "log", 3));
    CN_CHECK_EQ_INT(gw_tagset_parse_query(t, "a=bb", 4, &w), GW_S3_OK);
    CN_CHECK(!gw_lc_rule_matches(r, "logs/1", 6, 50, t));          /* another value */
    gw_tagset_free(t);
    gw_lc_fini(&lc);
}

/* S3's example: created 2014-01-15 10:30 UTC with Days 3 expires at
 * 2014-01-19 00:00 UTC; with a 2 s day the same rounding in 2 s units. */
static void test_due(void)
{
    struct gw_lc_rule r;
    memset(&r, 0, sizeof(r));
    r.exp_days = 3;
    r.exp_date_s = r.abort_days = GW_LC_NONE;
    uint64_t created = (1389744000ull + 10 * 3600 + 30 * 60) * 1000000;   /* 2014-01-15 10:30 */
    CN_CHECK(gw_lc_rule_expire_at(&r, created, DAY_US) == 1390089600ull * 1000000);
    uint64_t two = 2000000;
    CN_CHECK(gw_lc_rule_expire_at(&r, 1000500000, two) == 1000000000 + 4 * two);
    CN_CHECK(gw_lc_next_boundary(1000000000, two) == 1000000000 + two);   /* strictly after */
    CN_CHECK(gw_lc_rule_abort_at(&r, created, DAY_US) == UINT64_MAX);
    r.abort_days = 1;
    CN_CHECK(gw_lc_rule_abort_at(&r, created, DAY_US) == 1389916800ull * 1000000);
    r.exp_days = GW_LC_NONE;
    r.exp_date_s = 1798761600;
    CN_CHECK(gw_lc_rule_expire_at(&r, created, DAY_US) == 1798761600ull * 1000000);
    r.exp_date_s = GW_LC_NONE;
    CN_CHECK(gw_lc_rule_expire_at(&r, created, DAY_US) == UINT64_MAX);
    r.exp_days = INT32_MAX;   /* far past the clock's range with a huge day: never */
    CN_CHECK(gw_lc_rule_expire_at(&r, created, UINT64_MAX / 4) == UINT64_MAX);
}

/* NoncurrentVersionExpiration counts from the successor's write and
 * rounds as Days does; NewerNoncurrentVersions keeps the n newest
 * noncurrent versions whatever their age; a lone delete marker goes at
 * once with ExpiredObjectDeleteMarker, else when Days / Date would expire
 * an object as old as it. */
static void test_noncurrent_due(void)
{
    struct gw_lc_rule r;
    memset(&r, 0, sizeof(r));
    r.exp_days = r.exp_date_s = r.abort_days = r.nc_newer = GW_LC_NONE;
    r.exp_marker = GW_LC_NONE;
    r.nc_days = GW_LC_NONE;
    uint64_t since = (1389744000ull + 10 * 3600 + 30 * 60) * 1000000;   /* 2014-01-15 10:30 */
    CN_CHECK(gw_lc_rule_noncurrent_at(&r, since, 1, DAY_US) == UINT64_MAX);
    r.nc_days = 3;
    CN_CHECK(gw_lc_rule_noncurrent_at(&r, since, 1, DAY_US) == 1390089600ull * 1000000);
    CN_CHECK(gw_lc_rule_noncurrent_at(&r, since, 7, DAY_US) == 1390089600ull * 1000000);
    r.nc_newer = 2;
    CN_CHECK(gw_lc_rule_noncurrent_at(&r, since, 1, DAY_US) == UINT64_MAX);
    CN_CHECK(gw_lc_rule_noncurrent_at(&r, since, 2, DAY_US) == UINT64_MAX);
    CN_CHECK(gw_lc_rule_noncurrent_at(&r, since, 3, DAY_US) == 1390089600ull * 1000000);
    CN_CHECK(gw_lc_rule_noncurrent_at(&r, 1000500000, 3, 2000000) == 1000000000 + 4 * 2000000);
    r.nc_days = INT32_MAX;
    CN_CHECK(gw_lc_rule_noncurrent_at(&r, since, 3, UINT64_MAX / 4) == UINT64_MAX);
    /* lone delete markers */
    CN_CHECK(gw_lc_rule_marker_at(&r, since, DAY_US) == UINT64_MAX);
    r.exp_marker = 0;
    CN_CHECK(gw_lc_rule_marker_at(&r, since, DAY_US) == UINT64_MAX);
    r.exp_marker = 1;
    CN_CHECK(gw_lc_rule_marker_at(&r, since, DAY_US) == since);
    r.exp_marker = GW_LC_NONE;
    r.exp_days = 3;
    CN_CHECK(gw_lc_rule_marker_at(&r, since, DAY_US) == 1390089600ull * 1000000);
    r.exp_days = GW_LC_NONE;
    r.exp_date_s = 1798761600;
    CN_CHECK(gw_lc_rule_marker_at(&r, since, DAY_US) == 1798761600ull * 1000000);
}

/* The lease record's reader: types checked, unknown keys skipped. */
static void test_record(void)
{
    static const unsigned char ok[] = {0x82, 0xa5, 's', 'c', 'a', 'n', 's', 0x04,
                                       0xa3, 'n', 'e', 'w', 0xc0};
    static const unsigned char bad_type[] = {0x81, 0xa5, 's', 'c', 'a', 'n', 's', 0xa1, 'x'};
    static const unsigned char not_map[] = {0x93, 1, 2, 3};
    static const unsigned char trailing[] = {0x80, 0x00};
    CN_CHECK_EQ_INT(gw_lc_run_record_parses(ok, sizeof(ok)), 1);
    CN_CHECK_EQ_INT(gw_lc_run_record_parses(bad_type, sizeof(bad_type)), 0);
    CN_CHECK_EQ_INT(gw_lc_run_record_parses(not_map, sizeof(not_map)), 0);
    CN_CHECK_EQ_INT(gw_lc_run_record_parses(trailing, sizeof(trailing)), 0);
    CN_CHECK_EQ_INT(gw_lc_run_record_parses("", 0), 0);
}

static const struct cn_test_case cases[] = {
    {"record", test_record},
    {"errors", test_errors},
    {"rule_limit", test_rule_limit},
    {"round_trip", test_round_trip},
    {"matches", test_matches},
    {"due", test_due},
    {"noncurrent_due", test_noncurrent_due},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
