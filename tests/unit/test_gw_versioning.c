/* Versioning's pure parts (versioning.c): the stored state, the
 * PutBucketVersioning body, version ids (strict checks of outside input)
 * and version keys (their order lists one key's versions newest first). */
#include <string.h>

#include "cn/rc.h"
#include "cn/test.h"
#include "versioning.h"

CN_TEST_GLOBALS;

static void test_state(void)
{
    CN_CHECK_EQ_INT(gw_versioning_state_of(NULL, 0), GW_VERSIONING_OFF);
    CN_CHECK_EQ_INT(gw_versioning_state_of("Enabled", 7), GW_VERSIONING_ENABLED);
    CN_CHECK_EQ_INT(gw_versioning_state_of("Suspended", 9), GW_VERSIONING_SUSPENDED);
    CN_CHECK_EQ_INT(gw_versioning_state_of("enabled", 7), GW_VERSIONING_OFF);
    CN_CHECK_EQ_INT(gw_versioning_state_of("Enabled", 6), GW_VERSIONING_OFF);
    CN_CHECK_EQ_STR(gw_versioning_state_str(GW_VERSIONING_ENABLED), "Enabled");
    CN_CHECK_EQ_STR(gw_versioning_state_str(GW_VERSIONING_SUSPENDED), "Suspended");
    CN_CHECK(gw_versioning_state_str(GW_VERSIONING_OFF) == NULL);
}

static enum gw_s3_err test_parse(const char *body, enum gw_versioning_state *st)
{
    return gw_versioning_parse_xml(body, strlen(body), st);
}

static void test_xml(void)
{
    enum gw_versioning_state st;
    CN_CHECK_EQ_INT(test_parse("<VersioningConfiguration xmlns=\"http://s3.amazonaws.com/doc/"
                               "2006-03-01/\"><Status>Enabled</Status>"
                               "</VersioningConfiguration>", &st), GW_S3_OK);
    CN_CHECK_EQ_INT(st, GW_VERSIONING_ENABLED);
    CN_CHECK_EQ_INT(test_parse("<VersioningConfiguration><Status>Suspended</Status><MfaDelete>"
                               "Disabled</MfaDelete></VersioningConfiguration>", &st), GW_S3_OK);
    CN_CHECK_EQ_INT(st, GW_VERSIONING_SUSPENDED);
    CN_CHECK_EQ_INT(test_parse("<VersioningConfiguration/>", &st), GW_S3_OK);
    CN_CHECK_EQ_INT(st, GW_VERSIONING_OFF);
    CN_CHECK_EQ_INT(test_parse("<VersioningConfiguration><Status>Enabled</Status><MfaDelete>"
                               "Enabled</MfaDelete></VersioningConfiguration>", &st),
                    GW_S3_NOT_IMPLEMENTED);
    CN_CHECK_EQ_INT(test_parse("<VersioningConfiguration><Status>On</Status>"
                               "</VersioningConfiguration>", &st), GW_S3_MALFORMED_XML);
    CN_CHECK_EQ_INT(test_parse("<VersioningConfiguration><Status>Enabled</Status><Status>"
                               "Enabled</Status></VersioningConfiguration>", &st),
                    GW_S3_MALFORMED_XML);
    CN_CHECK_EQ_INT(test_parse("<Versioning><Status>Enabled</Status></Versioning>", &st),
                    GW_S3_MALFORMED_XML);
    CN_CHECK_EQ_INT(test_parse("<VersioningConfiguration><Status>Enabled</Status>", &st),
                    GW_S3_MALFORMED_XML);
    CN_CHECK_EQ_INT(test_parse("", &st), GW_S3_MALFORMED_XML);
    CN_CHECK_EQ_INT(test_parse("<VersioningConfiguration><Other>x</Other>"
                               "</VersioningConfiguration>", &st), GW_S3_MALFORMED_XML);
}

static void test_ids(void)
{
    char a[GW_VERSIONING_ID_MAX], b[GW_VERSIONING_ID_MAX];
    gw_versioning_id_new(1000, a);
    gw_versioning_id_new(1000, b);
    CN_CHECK_EQ_INT((int)strlen(a), GW_VERSIONING_ID_LEN);
    CN_CHECK(strcmp(a, b) != 0);              /* random bits */
    CN_CHECK(memcmp(a, b, 16) == 0);          /* same ts */
    CN_CHECK_EQ_INT(gw_versioning_id_check(a, strlen(a)), 2);
    CN_CHECK(gw_versioning_id_ts(a) == 1000);
    gw_versioning_id_new(2000, b);
    CN_CHECK(strcmp(b, a) < 0);               /* newer sorts first */
    CN_CHECK_EQ_INT(gw_versioning_id_check("null", 4), 1);
    CN_CHECK_EQ_INT(gw_versioning_id_check("NULL", 4), 0);
    CN_CHECK_EQ_INT(gw_versioning_id_check("nul", 3), 0);
    CN_CHECK_EQ_INT(gw_versioning_id_check(a, 31), 0);
    CN_CHECK_EQ_INT(gw_versioning_id_check("", 0), 0);
    CN_CHECK_EQ_INT(gw_versioning_id_check(NULL, 0), 0);
    char bad[GW_VERSIONING_ID_MAX];
    memcpy(bad, a, sizeof(bad));
    bad[5] = 'A';
    CN_CHECK_EQ_INT(gw_versioning_id_check(bad, 32), 0);
    bad[5] = '\0';
    CN_CHECK_EQ_INT(gw_versioning_id_check(bad, 32), 0);
    bad[5] = 'g';
    CN_CHECK_EQ_INT(gw_versioning_id_check(bad, 32), 0);
}

static void test_keys(void)
{
    char id[GW_VERSIONING_ID_MAX], back[GW_VERSIONING_ID_MAX];
    char k1[GW_VERSIONING_KEY_MAX], k2[GW_VERSIONING_KEY_MAX], k3[GW_VERSIONING_KEY_MAX];
    gw_versioning_id_new(5000, id);
    size_t n1 = gw_versioning_key(k1, "bkt", 3, "a", 1, id, 5000);
    size_t n2 = gw_versioning_key(k2, "bkt", 3, "a", 1, "null", 6000);
    size_t n3 = gw_versioning_key(k3, "bkt", 3, "a/b", 3, id, 5000);
    CN_CHECK_EQ_INT((int)n1, 6 + 1 + 1 + 32);
    CN_CHECK(memcmp(k1, "v/bkt/a\0", 8) == 0);
    CN_CHECK_EQ_INT((int)n2, 6 + 1 + 1 + 20);
    CN_CHECK(memcmp(k2 + 24, "null", 4) == 0);
    /* the newer null version sorts before the older id; "a/b" after both */
    CN_CHECK(memcmp(k2, k1, n2 < n1 ? n2 : n1) < 0);
    CN_CHECK(memcmp(k1, k3, n1 < n3 ? n1 : n3) < 0);
    const char *key;
    size_t key_len;
    uint64_t ts;
    CN_CHECK_EQ_INT(gw_versioning_key_split(k1, n1, 6, &key, &key_len, back, &ts), 0);
    CN_CHECK(key_len == 1 && key[0] == 'a' && ts == 5000);
    CN_CHECK_EQ_STR(back, id);
    CN_CHECK_EQ_INT(gw_versioning_key_split(k2, n2, 6, &key, &key_len, back, &ts), 0);
    CN_CHECK_EQ_STR(back, "null");
    CN_CHECK(ts == 6000);
    CN_CHECK_EQ_INT(gw_versioning_key_split(k3, n3, 6, &key, &key_len, back, &ts), 0);
    CN_CHECK(key_len == 3 && memcmp(key, "a/b", 3) == 0);
    /* not a version key: no NUL, a short or odd suffix */
    CN_CHECK_EQ_INT(gw_versioning_key_split("v/bkt/a", 7, 6, &key, &key_len, back, &ts), -1);
    CN_CHECK_EQ_INT(gw_versioning_key_split(k1, n1 - 1, 6, &key, &key_len, back, &ts), -1);
    CN_CHECK_EQ_INT(gw_versioning_key_split(k1, 3, 6, &key, &key_len, back, &ts), -1);
    size_t np = gw_versioning_key_prefix(k3, "bkt", 3, "a", 1);
    CN_CHECK(np == 8 && memcmp(k3, k1, np) == 0);
}

static const struct cn_test_case cases[] = {
    {"state", test_state},
    {"xml", test_xml},
    {"ids", test_ids},
    {"keys", test_keys},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
