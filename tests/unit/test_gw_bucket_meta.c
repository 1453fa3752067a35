/* Bucket-record meta: round trips, the legacy region-only form, and the
 * records the strict decoder must refuse. */
#include <string.h>

#include <msgpack.h>

#include "bucket_meta.h"
#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/test.h"

CN_TEST_GLOBALS;

static const char owner[] = "0123456789abcdef";

static void test_legacy(void)
{
    struct gw_bucket_meta m;
    CN_CHECK_EQ_INT(gw_bucket_meta_decode(&m, "eu-west-1", 9, owner, strlen(owner)), CN_OK);
    CN_CHECK_EQ_INT(m.legacy, 1);
    CN_CHECK_EQ_INT(m.region_len, 9);
    CN_CHECK(memcmp(m.region, "eu-west-1", 9) == 0);
    CN_CHECK_EQ_INT(m.owner_len, strlen(owner));
    CN_CHECK_EQ_INT(m.inc.created_us, 0);
    CN_CHECK_EQ_INT(m.inc.rnd, 0);
    CN_CHECK_EQ_INT(m.n_configs, 0);
    CN_CHECK(gw_bucket_meta_config(&m, "cors") == NULL);
    /* an empty meta is a legacy record with no region */
    CN_CHECK_EQ_INT(gw_bucket_meta_decode(&m, "", 0, owner, strlen(owner)), CN_OK);
    CN_CHECK_EQ_INT(m.region_len, 0);
    /* no owner: nothing to decide access on */
    CN_CHECK_EQ_INT(gw_bucket_meta_decode(&m, "us-east-1", 9, "", 0), CN_INVAL);
    CN_CHECK_EQ_INT(gw_bucket_meta_decode(&m, "US East", 7, owner, strlen(owner)), CN_INVAL);
}

static void test_round_trip(void)
{
    struct gw_bucket_meta m = {.region = "us-east-1", .region_len = 9, .owner = owner,
                               .owner_len = strlen(owner)};
    m.inc = gw_bucket_incarnation_new();
    CN_CHECK(m.inc.created_us > 0);
    CN_CHECK_EQ_INT(gw_bucket_meta_set_config(&m, "cors", "\x01\x02", 2), CN_OK);
    CN_CHECK_EQ_INT(gw_bucket_meta_set_config(&m, "policy", "{}", 2), CN_OK);
    CN_CHECK_EQ_INT(gw_bucket_meta_set_config(&m, "cors", "\x03", 1), CN_OK);
    char *buf;
    size_t len;
    CN_CHECK_EQ_INT(gw_bucket_meta_encode(&m, &buf, &len), CN_OK);
    struct gw_bucket_meta d;
    CN_CHECK_EQ_INT(gw_bucket_meta_decode(&d, buf, len, owner, strlen(owner)), CN_OK);
    CN_CHECK_EQ_INT(d.legacy, 0);
    CN_CHECK(gw_bucket_incarnation_eq(&d.inc, &m.inc));
    CN_CHECK_EQ_INT(d.n_configs, 2);
    const struct gw_bucket_meta_config *c = gw_bucket_meta_config(&d, "cors");
    CN_CHECK(c != NULL && c->value_len == 1 && memcmp(c->value, "\x03", 1) == 0);
    CN_CHECK(gw_bucket_meta_config(&d, "policy") != NULL);
    /* the etag is the owner: a meta naming another owner is refused */
    CN_CHECK_EQ_INT(gw_bucket_meta_decode(&d, buf, len, "someone-else", 12), CN_INVAL);
    /* every truncation is refused */
    for (size_t n = 0; n < len; n++)
        if (n > 0)
            CN_CHECK_EQ_INT(gw_bucket_meta_decode(&d, buf, n, owner, strlen(owner)), CN_INVAL);
    cn_free(buf);
    /* removing */
    CN_CHECK_EQ_INT(gw_bucket_meta_set_config(&m, "cors", NULL, 0), CN_OK);
    CN_CHECK(gw_bucket_meta_config(&m, "cors") == NULL);
    CN_CHECK(gw_bucket_meta_config(&m, "policy") != NULL);
    CN_CHECK_EQ_INT(gw_bucket_meta_set_config(&m, "cors", NULL, 0), CN_OK);
    CN_CHECK_EQ_INT(m.n_configs, 1);
}

static void test_limits(void)
{
    struct gw_bucket_meta m = {.region = "r", .region_len = 1, .owner = owner,
                               .owner_len = strlen(owner)};
    static char names[GW_BUCKET_META_MAX_CONFIGS + 1][8];
    for (int i = 0; i <= GW_BUCKET_META_MAX_CONFIGS; i++) {
        snprintf(names[i], sizeof(names[i]), "c%d", i);
        CN_CHECK_EQ_INT(gw_bucket_meta_set_config(&m, names[i], "x", 1),
                        i < GW_BUCKET_META_MAX_CONFIGS ? CN_OK : CN_TOOBIG);
    }
    static char big[GW_BUCKET_META_MAX_LEN];
    struct gw_bucket_meta b = {.region = "r", .region_len = 1, .owner = owner,
                               .owner_len = strlen(owner)};
    gw_bucket_meta_set_config(&b, "cors", big, sizeof(big));
    char *buf;
    size_t len;
    CN_CHECK_EQ_INT(gw_bucket_meta_encode(&b, &buf, &len), CN_TOOBIG);
    CN_CHECK(buf == NULL);
}

/* Packs a root map of the given fields (NULL value skips one) and decodes. */
static int decode_fields(int with_v, unsigned v, const char *region, int with_inc,
                         const char *extra_key, int dup_cfg)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, (size_t)(with_v + 3 + with_inc + (extra_key != NULL)));
    if (with_v) {
        msgpack_pack_str_with_body(&pk, "v", 1);
        msgpack_pack_uint32(&pk, v);
    }
    msgpack_pack_str_with_body(&pk, "region", 6);
    msgpack_pack_str_with_body(&pk, region, strlen(region));
    msgpack_pack_str_with_body(&pk, "owner", 5);
    msgpack_pack_str_with_body(&pk, owner, strlen(owner));
    if (with_inc) {
        msgpack_pack_str_with_body(&pk, "inc", 3);
        msgpack_pack_array(&pk, 2);
        msgpack_pack_uint64(&pk, 1);
        msgpack_pack_uint64(&pk, 2);
    }
    msgpack_pack_str_with_body(&pk, "cfg", 3);
    msgpack_pack_map(&pk, dup_cfg ? 2 : 1);
    for (int i = 0; i < (dup_cfg ? 2 : 1); i++) {
        msgpack_pack_str_with_body(&pk, "cors", 4);
        msgpack_pack_bin_with_body(&pk, "x", 1);
    }
    if (extra_key != NULL) {
        msgpack_pack_str_with_body(&pk, extra_key, strlen(extra_key));
        msgpack_pack_nil(&pk);
    }
    struct gw_bucket_meta m;
    int rc = gw_bucket_meta_decode(&m, sb.data, sb.size, owner, strlen(owner));
    msgpack_sbuffer_destroy(&sb);
    return rc;
}

static void test_strict(void)
{
    CN_CHECK_EQ_INT(decode_fields(1, 1, "us-east-1", 1, NULL, 0), CN_OK);
    CN_CHECK_EQ_INT(decode_fields(1, 2, "us-east-1", 1, NULL, 0), CN_INVAL); /* version */
    CN_CHECK_EQ_INT(decode_fields(0, 1, "us-east-1", 1, NULL, 0), CN_INVAL); /* no v */
    CN_CHECK_EQ_INT(decode_fields(1, 1, "us-east-1", 0, NULL, 0), CN_INVAL); /* no inc */
    CN_CHECK_EQ_INT(decode_fields(1, 1, "", 1, NULL, 0), CN_INVAL);          /* no region */
    CN_CHECK_EQ_INT(decode_fields(1, 1, "Bad Region", 1, NULL, 0), CN_INVAL);
    CN_CHECK_EQ_INT(decode_fields(1, 1, "us-east-1", 1, "x", 0), CN_INVAL);  /* unknown key */
    CN_CHECK_EQ_INT(decode_fields(1, 1, "us-east-1", 1, "v", 0), CN_INVAL);  /* twice */
    CN_CHECK_EQ_INT(decode_fields(1, 1, "us-east-1", 1, NULL, 1), CN_INVAL); /* cors twice */
    struct gw_bucket_meta m;
    CN_CHECK_EQ_INT(gw_bucket_meta_decode(&m, "\x80", 1, owner, strlen(owner)), CN_INVAL);
    CN_CHECK_EQ_INT(gw_bucket_meta_decode(&m, "\xc0", 1, owner, strlen(owner)), CN_INVAL);
}

static const struct cn_test_case cases[] = {
    {"legacy", test_legacy},
    {"round_trip", test_round_trip},
    {"limits", test_limits},
    {"strict", test_strict},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
