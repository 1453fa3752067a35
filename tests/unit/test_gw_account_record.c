/* Account records (account_record.c): ids, the name rule, the codec's round
 * trip and what its decoder refuses (another account's record, a broken
 * field, an unknown state, unbounded msgpack). */
#include <stdio.h>
#include <string.h>

#include <msgpack.h>

#include "account_record.h"
#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/test.h"

CN_TEST_GLOBALS;

static void test_make(struct gw_account_record *a)
{
    memset(a, 0, sizeof(*a));
    CN_CHECK_EQ_INT(gw_account_id_new(a->id), CN_OK);
    snprintf(a->name, sizeof(a->name), "team-a");
    snprintf(a->state, sizeof(a->state), "active");
    a->created_us = 1764000000000000ull;
}

static void test_ids_and_names(void)
{
    char a[GW_ACCOUNT_ID_LEN + 1], b[GW_ACCOUNT_ID_LEN + 1];
    CN_CHECK_EQ_INT(gw_account_id_new(a), CN_OK);
    CN_CHECK_EQ_INT(gw_account_id_new(b), CN_OK);
    CN_CHECK(strcmp(a, b) != 0);
    CN_CHECK(gw_account_id_ok(a, strlen(a)));
    CN_CHECK(!gw_account_id_ok(a, 63));
    a[5] = 'A';   /* upper case is not canonical */
    CN_CHECK(!gw_account_id_ok(a, 64));
    CN_CHECK(gw_account_name_ok("team.a_1-x", 10));
    CN_CHECK(!gw_account_name_ok("team a", 6));
    CN_CHECK(!gw_account_name_ok("", 0));
    CN_CHECK(!gw_account_name_ok("a/b", 3));
}

static void test_round_trip(void)
{
    struct gw_account_record a, d;
    char err[CN_ERR_LEN], *buf = NULL;
    size_t len = 0;
    test_make(&a);
    CN_CHECK_EQ_INT(gw_account_record_encode(&a, &buf, &len, err), CN_OK);
    CN_CHECK(len > 0 && len <= GW_ACCOUNT_RECORD_MAX);
    CN_CHECK_EQ_INT(gw_account_record_decode(&d, buf, len, a.id, strlen(a.id), err), CN_OK);
    CN_CHECK_EQ_STR(d.id, a.id);
    CN_CHECK_EQ_STR(d.name, "team-a");
    CN_CHECK_EQ_STR(d.state, "active");
    CN_CHECK(d.created_us == a.created_us);
    /* the record names another account than its storage key */
    char other[GW_ACCOUNT_ID_LEN + 1];
    CN_CHECK_EQ_INT(gw_account_id_new(other), CN_OK);
    CN_CHECK_EQ_INT(gw_account_record_decode(&d, buf, len, other, strlen(other), err),
                    CN_CORRUPT);
    /* a changed state */
    char *p = memmem(buf, len, "active", 6);
    CN_CHECK(p != NULL);
    if (p != NULL) {
        memcpy(p, "banned", 6);
        CN_CHECK_EQ_INT(gw_account_record_decode(&d, buf, len, a.id, strlen(a.id), err),
                        CN_CORRUPT);
    }
    cn_free(buf);
    /* encode refuses what decode would */
    test_make(&a);
    snprintf(a.name, sizeof(a.name), "has space");
    CN_CHECK_EQ_INT(gw_account_record_encode(&a, &buf, &len, err), CN_INVAL);
    CN_CHECK(buf == NULL);
}

static void test_decode_refuses(void)
{
    struct gw_account_record d;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(gw_account_record_decode(&d, "", 0, "x", 1, err), CN_CORRUPT);
    CN_CHECK_EQ_INT(gw_account_record_decode(&d, "\xdf\xff\xff\xff\xff", 5, "x", 1, err),
                    CN_CORRUPT);
    char big[GW_ACCOUNT_RECORD_MAX + 1];
    memset(big, 0xc0, sizeof(big));
    CN_CHECK_EQ_INT(gw_account_record_decode(&d, big, sizeof(big), "x", 1, err), CN_CORRUPT);
    /* a map without its state */
    char id[GW_ACCOUNT_ID_LEN + 1];
    CN_CHECK_EQ_INT(gw_account_id_new(id), CN_OK);
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 4);
    msgpack_pack_str_with_body(&pk, "v", 1);
    msgpack_pack_uint32(&pk, 1);
    msgpack_pack_str_with_body(&pk, "id", 2);
    msgpack_pack_str_with_body(&pk, id, GW_ACCOUNT_ID_LEN);
    msgpack_pack_str_with_body(&pk, "name", 4);
    msgpack_pack_str_with_body(&pk, "n", 1);
    msgpack_pack_str_with_body(&pk, "created_us", 10);
    msgpack_pack_uint64(&pk, 1);
    CN_CHECK_EQ_INT(gw_account_record_decode(&d, sb.data, sb.size, id, GW_ACCOUNT_ID_LEN, err),
                    CN_CORRUPT);
    msgpack_sbuffer_destroy(&sb);
}

static const struct cn_test_case cases[] = {
    {"ids_and_names", test_ids_and_names},
    {"round_trip", test_round_trip},
    {"decode_refuses", test_decode_refuses},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
