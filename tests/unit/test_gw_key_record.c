/* Cluster key records: generation, the codec, AES-256-GCM sealing (wrong
 * key, changed bytes, a record moved to another key or account), the
 * master key file, and merging cluster keys into the credentials table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <msgpack.h>

#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/test.h"
#include "credentials.h"
#include "key_record.h"

CN_TEST_GLOBALS;

static const unsigned char mk1[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                      17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30,
                                      31, 32};

static void test_make(struct gw_key_record *k, const char *akid, const char *secret)
{
    memset(k, 0, sizeof(*k));
    snprintf(k->akid, sizeof(k->akid), "%s", akid);
    k->akid_len = strlen(akid);
    snprintf(k->secret, sizeof(k->secret), "%s", secret);
    k->secret_len = strlen(secret);
    snprintf(k->owner, sizeof(k->owner), "alice");
    snprintf(k->name, sizeof(k->name), "alice's laptop");
    k->created_us = 1764000000000000ull;
}

static void test_generate(void)
{
    char a[GW_KEY_AKID_LEN + 1], s[GW_KEY_SECRET_LEN + 1], a2[GW_KEY_AKID_LEN + 1],
        s2[GW_KEY_SECRET_LEN + 1];
    CN_CHECK_EQ_INT(gw_key_generate(a, s), CN_OK);
    CN_CHECK_EQ_INT(gw_key_generate(a2, s2), CN_OK);
    CN_CHECK_EQ_INT(strlen(a), 20);
    CN_CHECK_EQ_INT(strlen(s), 40);
    CN_CHECK(memcmp(a, "AKIA", 4) == 0);
    for (int i = 4; i < 20; i++)
        CN_CHECK((a[i] >= 'A' && a[i] <= 'Z') || (a[i] >= '0' && a[i] <= '9'));
    CN_CHECK(strcmp(a, a2) != 0 && strcmp(s, s2) != 0);
    CN_CHECK(gw_key_akid_ok(a, 20) && gw_key_secret_ok(s, 40));
}

static void test_round_trip(void)
{
    struct gw_key_record k, d;
    char err[CN_ERR_LEN], *buf = NULL, *buf2 = NULL;
    size_t len = 0, len2 = 0;
    test_make(&k, "AKIATESTTESTTEST0001", "abcdefghijABCDEFGHIJ0123456789+/abcdefgh");
    CN_CHECK_EQ_INT(gw_key_record_seal(&k, mk1, &buf, &len, err), CN_OK);
    CN_CHECK(len > 0 && len < GW_KEY_RECORD_MAX);
    /* the secret is not in the clear */
    CN_CHECK(memmem(buf, len, k.secret, k.secret_len) == NULL);
    CN_CHECK_EQ_INT(gw_key_record_decode(&d, buf, len, k.akid, k.akid_len, err), CN_OK);
    CN_CHECK_EQ_STR(d.owner, "alice");
    CN_CHECK_EQ_STR(d.name, "alice's laptop");
    CN_CHECK(d.created_us == k.created_us);
    CN_CHECK_EQ_INT(d.secret_len, 0);
    CN_CHECK_EQ_INT(gw_key_record_open(&d, mk1, err), CN_OK);
    CN_CHECK_EQ_STR(d.secret, k.secret);
    /* a fresh nonce every time: two seals differ */
    CN_CHECK_EQ_INT(gw_key_record_seal(&k, mk1, &buf2, &len2, err), CN_OK);
    CN_CHECK(len2 == len && memcmp(buf, buf2, len) != 0);
    /* another master key does not open it */
    unsigned char mk2[32];
    memcpy(mk2, mk1, 32);
    mk2[31] ^= 1;
    CN_CHECK_EQ_INT(gw_key_record_decode(&d, buf, len, k.akid, k.akid_len, err), CN_OK);
    CN_CHECK_EQ_INT(gw_key_record_open(&d, mk2, err), CN_CORRUPT);
    CN_CHECK_EQ_INT(d.secret_len, 0);
    /* the record under another key's name is refused */
    CN_CHECK_EQ_INT(gw_key_record_decode(&d, buf, len, "AKIAOTHER", 9, err), CN_CORRUPT);
    /* every single flipped bit is refused: either at decode or at open */
    for (size_t i = 0; i < len; i++) {
        for (int b = 0; b < 8; b++) {
            buf[i] ^= (char)(1 << b);
            int rc = gw_key_record_decode(&d, buf, len, k.akid, k.akid_len, err);
            if (rc == CN_OK)
                rc = gw_key_record_open(&d, mk1, err);
            /* a flip inside a field name makes it an unknown field: the
             * record then lacks that field and is refused too */
            if (rc == CN_OK && strcmp(d.secret, k.secret) == 0 && strcmp(d.owner, "alice") == 0)
                rc = CN_OK;
            CN_CHECK(rc != CN_OK || (strcmp(d.secret, k.secret) == 0 &&
                                     strcmp(d.owner, "alice") == 0));
            buf[i] ^= (char)(1 << b);
        }
    }
    cn_free(buf);
    cn_free(buf2);
}

/* A sealed secret moved under another owner does not open: the AAD. */
static void test_owner_bound(void)
{
    struct gw_key_record k, d;
    char err[CN_ERR_LEN], *buf = NULL;
    size_t len = 0;
    test_make(&k, "AKIATESTTESTTEST0002", "secretsecretsecretsecretsecretsecret0000");
    CN_CHECK_EQ_INT(gw_key_record_seal(&k, mk1, &buf, &len, err), CN_OK);
    char *p = memmem(buf, len, "alice", 5);   /* the owner field's value ("name" has alice's) */
    CN_CHECK(p != NULL);
    if (p != NULL) {
        memcpy(p, "mally", 5);
        CN_CHECK_EQ_INT(gw_key_record_decode(&d, buf, len, k.akid, k.akid_len, err), CN_OK);
        CN_CHECK_EQ_STR(d.owner, "mally");
        CN_CHECK_EQ_INT(gw_key_record_open(&d, mk1, err), CN_CORRUPT);
    }
    cn_free(buf);
}

static void test_decode_refuses(void)
{
    struct gw_key_record d;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(gw_key_record_decode(&d, "", 0, "AK1", 3, err), CN_CORRUPT);
    CN_CHECK_EQ_INT(gw_key_record_decode(&d, "\x90", 1, "AK1", 3, err), CN_CORRUPT);
    /* a map declaring 2^32-1 entries in 5 bytes: the bounded pre-walk stops it */
    CN_CHECK_EQ_INT(gw_key_record_decode(&d, "\xdf\xff\xff\xff\xff", 5, "AK1", 3, err),
                    CN_CORRUPT);
    char big[GW_KEY_RECORD_MAX + 1];
    memset(big, 0xc0, sizeof(big));
    CN_CHECK_EQ_INT(gw_key_record_decode(&d, big, sizeof(big), "AK1", 3, err), CN_CORRUPT);
    /* a map missing the sealed secret */
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 2);
    msgpack_pack_str_with_body(&pk, "v", 1);
    msgpack_pack_uint32(&pk, 1);
    msgpack_pack_str_with_body(&pk, "akid", 4);
    msgpack_pack_str_with_body(&pk, "AK1", 3);
    CN_CHECK_EQ_INT(gw_key_record_decode(&d, sb.data, sb.size, "AK1", 3, err), CN_CORRUPT);
    msgpack_sbuffer_destroy(&sb);
    /* a field that breaks its rule is refused at seal */
    struct gw_key_record k;
    char *buf = NULL;
    size_t len = 0;
    test_make(&k, "AKIATESTTESTTEST0003", "s");
    snprintf(k.owner, sizeof(k.owner), "has space");
    CN_CHECK_EQ_INT(gw_key_record_seal(&k, mk1, &buf, &len, err), CN_INVAL);
    CN_CHECK(buf == NULL);
}

static void test_master_file(void)
{
    char path[] = "/tmp/cairn-mk-XXXXXX";
    int fd = mkstemp(path);
    CN_CHECK(fd >= 0);
    if (fd < 0)
        return;
    close(fd);
    unsigned char k[32];
    char err[CN_ERR_LEN];
    FILE *f = fopen(path, "w");
    fputs("0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20\n", f);
    fclose(f);
    CN_CHECK_EQ_INT(gw_key_master_load(path, k, err), CN_OK);
    CN_CHECK(memcmp(k, mk1, 32) == 0);
    f = fopen(path, "w");
    fputs("  AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=\n", f);   /* base64 of mk1 */
    fclose(f);
    memset(k, 0, sizeof(k));
    CN_CHECK_EQ_INT(gw_key_master_load(path, k, err), CN_OK);
    CN_CHECK(memcmp(k, mk1, 32) == 0);
    f = fopen(path, "w");
    fputs("0102030405060708090a0b0c0d0e0f10111213141516171819", f);   /* too short */
    fclose(f);
    CN_CHECK_EQ_INT(gw_key_master_load(path, k, err), CN_INVAL);
    CN_CHECK(strstr(err, "0102") == NULL);   /* never the bytes in the message */
    unlink(path);
    CN_CHECK_EQ_INT(gw_key_master_load(path, k, err), CN_IO);
}

static void test_merge(void)
{
    static const char file[] = "AKIAFILE secretF owner-f File Key admin=true\n"
                               "AKIASAME secretS owner-s Same\n";
    struct gw_credentials *c = NULL;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(gw_credentials_load_buf(file, sizeof(file) - 1, "t", &c, err), CN_OK);
    if (c == NULL)
        return;
    struct gw_cred extra[2] = {
        {.access_key = "AKIASAME", .access_key_len = 8, .secret_key = "other",
         .secret_key_len = 5, .owner_id = "mallory", .display_name = "m"},
        {.access_key = "AKIACLUSTER", .access_key_len = 11, .secret_key = "cs",
         .secret_key_len = 2, .owner_id = "alice", .display_name = "a", .admin = 1},
    };
    size_t shadowed = 0;
    struct gw_credentials *m = gw_credentials_merge(c, extra, 2, &shadowed);
    CN_CHECK_EQ_INT(gw_credentials_count(m), 3);
    CN_CHECK_EQ_INT(shadowed, 1);
    const struct gw_cred *e = gw_credentials_find(m, "AKIASAME", 8);
    CN_CHECK(e != NULL && strcmp(e->owner_id, "owner-s") == 0);   /* the file wins */
    e = gw_credentials_find(m, "AKIACLUSTER", 11);
    CN_CHECK(e != NULL && strcmp(e->secret_key, "cs") == 0 && e->admin == 0);
    e = gw_credentials_find(m, "AKIAFILE", 8);
    CN_CHECK(e != NULL && e->admin == 1);
    /* references: the table outlives the first free */
    struct gw_credentials *h = gw_credentials_hold(m);
    gw_credentials_free(m);
    CN_CHECK(gw_credentials_find(h, "AKIACLUSTER", 11) != NULL);
    gw_credentials_free(h);
    gw_credentials_free(c);
}

/* Merging copies a cluster key's limits into the table (the table owns its
 * copy: the source may go away). */
static void test_merge_limits(void)
{
    struct gw_key_limits *l = cn_calloc(1, sizeof(*l));
    CN_CHECK_EQ_INT(gw_key_limits_set(l, "abc", 3, GW_KEY_RIGHT_READ), CN_OK);
    struct gw_cred extra[1] = {
        {.access_key = "AKIAL", .access_key_len = 5, .secret_key = "s", .secret_key_len = 1,
         .owner_id = "o", .display_name = "d", .limits = l},
    };
    size_t shadowed = 0;
    struct gw_credentials *m = gw_credentials_merge(NULL, extra, 1, &shadowed);
    cn_free(l);
    const struct gw_cred *e = gw_credentials_find(m, "AKIAL", 5);
    CN_CHECK(e != NULL && e->limits != NULL && e->limits->n == 1 &&
             gw_key_limits_find(e->limits, "abc", 3) != NULL);
    gw_credentials_free(m);
}

/* A record sealed by another implementation (Python's cryptography AESGCM
 * and msgpack, as tests/fuzz/seeds/fuzz_gw_key_record/valid was made):
 * the format and the AAD are what docs/gateway.md says, not only what this
 * code writes. Master key 07 00 .. 00, nonce 01 x 12. */
static void test_known_answer(void)
{
    static const char hex[] =
        "88a17601a4616b6964b4414b494146555a5a46555a5a46555a5a30303031a56f776e6572a5616c696365"
        "a46e616d65a9416c696365206b6579aa637265617465645f7573cf0006445941624000a56e6f6e6365c4"
        "0c010101010101010101010101a3746167c4107141e47b287562130cbac6d40ca69b31a67365616c6564"
        "c42844b1cdea075a6bef6587d0ced0388b8f7361b16ddfd8370510cef2956dedce77b92934ac23ce464c";
    unsigned char rec[sizeof(hex) / 2], mk[32] = {7};
    for (size_t i = 0; i < sizeof(rec); i++)
        sscanf(hex + 2 * i, "%2hhx", &rec[i]);
    struct gw_key_record d;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(gw_key_record_decode(&d, rec, sizeof(rec), "AKIAFUZZFUZZFUZZ0001", 20, err),
                    CN_OK);
    CN_CHECK_EQ_INT(gw_key_record_open(&d, mk, err), CN_OK);
    CN_CHECK_EQ_STR(d.secret, "abcdefghijABCDEFGHIJ0123456789+/abcdefgh");
    CN_CHECK_EQ_STR(d.owner, "alice");
    CN_CHECK_EQ_STR(d.name, "Alice key");
}

/* A restricted key: the list round-trips in bucket order with its rights
 * and flag, and is bound to the secret (a changed right or name does not
 * open). */
static void test_limits_round_trip(void)
{
    struct gw_key_record k, d;
    char err[CN_ERR_LEN], *buf = NULL;
    size_t len = 0;
    test_make(&k, "AKIATESTTESTTEST0009", "abcdefghijABCDEFGHIJ0123456789+/abcdefgh");
    k.restricted = 1;
    k.limits.create_bucket = 1;
    CN_CHECK_EQ_INT(gw_key_limits_set(&k.limits, "zeta-bucket", 11, GW_KEY_RIGHT_READ), CN_OK);
    CN_CHECK_EQ_INT(gw_key_limits_set(&k.limits, "alpha", 5, GW_KEY_RIGHT_READ |
                                      GW_KEY_RIGHT_WRITE), CN_OK);
    CN_CHECK_EQ_INT(gw_key_limits_set(&k.limits, "mid.b", 5, GW_KEY_RIGHT_OWNER), CN_OK);
    CN_CHECK_EQ_INT(gw_key_limits_set(&k.limits, "Alpha", 5, GW_KEY_RIGHT_READ), CN_INVAL);
    CN_CHECK_EQ_INT(gw_key_limits_set(&k.limits, "alpha", 5, 8), CN_INVAL);
    CN_CHECK_EQ_INT(gw_key_record_seal(&k, mk1, &buf, &len, err), CN_OK);
    CN_CHECK_EQ_INT(gw_key_record_decode(&d, buf, len, k.akid, k.akid_len, err), CN_OK);
    CN_CHECK_EQ_INT(d.restricted, 1);
    CN_CHECK_EQ_INT(d.limits.create_bucket, 1);
    CN_CHECK_EQ_INT((int)d.limits.n, 3);
    CN_CHECK_EQ_STR(d.limits.v[0].bucket, "alpha");
    CN_CHECK_EQ_STR(d.limits.v[1].bucket, "mid.b");
    CN_CHECK_EQ_STR(d.limits.v[2].bucket, "zeta-bucket");
    CN_CHECK_EQ_INT(d.limits.v[0].rights, GW_KEY_RIGHT_READ | GW_KEY_RIGHT_WRITE);
    CN_CHECK_EQ_INT(d.limits.v[1].rights, GW_KEY_RIGHT_OWNER);
    CN_CHECK(gw_key_limits_find(&d.limits, "mid.b", 5) == &d.limits.v[1]);
    CN_CHECK(gw_key_limits_find(&d.limits, "mid.", 4) == NULL);
    CN_CHECK(gw_key_limits_find(&d.limits, "MID.B", 5) == NULL);
    CN_CHECK_EQ_INT(gw_key_record_open(&d, mk1, err), CN_OK);
    CN_CHECK_EQ_STR(d.secret, k.secret);
    /* a node widens the key: alpha's rights 3 -> 7 (the uint right after its name) */
    char *p = memmem(buf, len, "alpha\x03", 6);
    CN_CHECK(p != NULL);
    if (p != NULL) {
        p[5] = 7;
        CN_CHECK_EQ_INT(gw_key_record_decode(&d, buf, len, k.akid, k.akid_len, err), CN_OK);
        CN_CHECK_EQ_INT(d.limits.v[0].rights, 7);
        CN_CHECK_EQ_INT(gw_key_record_open(&d, mk1, err), CN_CORRUPT);
        p[5] = 3;
    }
    /* or moves the list to another bucket name */
    p = memmem(buf, len, "zeta-bucket", 11);
    CN_CHECK(p != NULL);
    if (p != NULL) {
        p[0] = 'y';
        CN_CHECK_EQ_INT(gw_key_record_decode(&d, buf, len, k.akid, k.akid_len, err), CN_OK);
        CN_CHECK_EQ_INT(gw_key_record_open(&d, mk1, err), CN_CORRUPT);
    }
    cn_free(buf);
    /* an unrestricted key stays a version 1 record (older gateways read it) */
    test_make(&k, "AKIATESTTESTTEST0010", "s");
    CN_CHECK_EQ_INT(gw_key_record_seal(&k, mk1, &buf, &len, err), CN_OK);
    CN_CHECK(memmem(buf, len, "allow", 5) == NULL);
    CN_CHECK_EQ_INT(gw_key_record_decode(&d, buf, len, k.akid, k.akid_len, err), CN_OK);
    CN_CHECK_EQ_INT(d.restricted, 0);
    cn_free(buf);
    /* the list's bound */
    struct gw_key_limits l;
    memset(&l, 0, sizeof(l));
    for (int i = 0; i < GW_KEY_ALLOW_MAX; i++) {
        char b[8];
        snprintf(b, sizeof(b), "b%03d", i);
        CN_CHECK_EQ_INT(gw_key_limits_set(&l, b, 4, GW_KEY_RIGHTS_ALL), CN_OK);
    }
    CN_CHECK_EQ_INT(gw_key_limits_set(&l, "c000", 4, GW_KEY_RIGHT_READ), CN_TOOBIG);
    CN_CHECK_EQ_INT(gw_key_limits_set(&l, "b005", 4, GW_KEY_RIGHT_READ), CN_OK);   /* a change */
    CN_CHECK_EQ_INT((int)l.n, GW_KEY_ALLOW_MAX);
    /* the fullest record still fits the decoder's bound */
    test_make(&k, "AKIATESTTESTTEST0011", "abcdefghijABCDEFGHIJ0123456789+/abcdefgh");
    k.restricted = 1;
    memset(&k.limits, 0, sizeof(k.limits));
    for (int i = 0; i < GW_KEY_ALLOW_MAX; i++) {
        char b[GW_KEY_BUCKET_MAX + 1];
        memset(b, 'x', GW_KEY_BUCKET_MAX);
        snprintf(b, 4, "%03d", i);
        b[3] = 'x';
        CN_CHECK_EQ_INT(gw_key_limits_set(&k.limits, b, GW_KEY_BUCKET_MAX, GW_KEY_RIGHTS_ALL),
                        CN_OK);
    }
    CN_CHECK_EQ_INT(gw_key_record_seal(&k, mk1, &buf, &len, err), CN_OK);
    CN_CHECK(len <= GW_KEY_RECORD_MAX);
    CN_CHECK_EQ_INT(gw_key_record_decode(&d, buf, len, k.akid, k.akid_len, err), CN_OK);
    CN_CHECK_EQ_INT(gw_key_record_open(&d, mk1, err), CN_OK);
    CN_CHECK_EQ_INT((int)d.limits.n, GW_KEY_ALLOW_MAX);
    cn_free(buf);
}

/* A full record's map with the limit fields as given (allow: a packer
 * callback, or NULL for none). The secret is junk: only decode is tried. */
static size_t test_pack_limits(char *out, size_t cap, unsigned v, int with_create,
                               void (*allow)(msgpack_packer *))
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 8 + (with_create != 0) + (allow != NULL));
    static const unsigned char z[16] = {0};
    msgpack_pack_str_with_body(&pk, "v", 1);
    msgpack_pack_uint32(&pk, v);
    msgpack_pack_str_with_body(&pk, "akid", 4);
    msgpack_pack_str_with_body(&pk, "AK1", 3);
    msgpack_pack_str_with_body(&pk, "owner", 5);
    msgpack_pack_str_with_body(&pk, "o", 1);
    msgpack_pack_str_with_body(&pk, "name", 4);
    msgpack_pack_str_with_body(&pk, "n", 1);
    msgpack_pack_str_with_body(&pk, "created_us", 10);
    msgpack_pack_uint64(&pk, 1);
    msgpack_pack_str_with_body(&pk, "nonce", 5);
    msgpack_pack_bin_with_body(&pk, z, 12);
    msgpack_pack_str_with_body(&pk, "tag", 3);
    msgpack_pack_bin_with_body(&pk, z, 16);
    msgpack_pack_str_with_body(&pk, "sealed", 6);
    msgpack_pack_bin_with_body(&pk, z, 4);
    if (with_create) {
        msgpack_pack_str_with_body(&pk, "create_bucket", 13);
        if (with_create > 1)
            msgpack_pack_uint32(&pk, 1);   /* not a bool */
        else
            msgpack_pack_false(&pk);
    }
    if (allow != NULL) {
        msgpack_pack_str_with_body(&pk, "allow", 5);
        allow(&pk);
    }
    size_t n = sb.size < cap ? sb.size : 0;
    memcpy(out, sb.data, n);
    msgpack_sbuffer_destroy(&sb);
    return n;
}

static void test_pack_one(msgpack_packer *pk, const char *b, unsigned rights)
{
    msgpack_pack_array(pk, 2);
    msgpack_pack_str_with_body(pk, b, strlen(b));
    msgpack_pack_uint32(pk, rights);
}

static void test_allow_good(msgpack_packer *pk)
{
    msgpack_pack_array(pk, 2);
    test_pack_one(pk, "aaa", 1);
    test_pack_one(pk, "bbb", 7);
}

static void test_allow_unsorted(msgpack_packer *pk)
{
    msgpack_pack_array(pk, 2);
    test_pack_one(pk, "bbb", 1);
    test_pack_one(pk, "aaa", 1);
}

static void test_allow_dup(msgpack_packer *pk)
{
    msgpack_pack_array(pk, 2);
    test_pack_one(pk, "aaa", 1);
    test_pack_one(pk, "aaa", 2);
}

static void test_allow_zero(msgpack_packer *pk)
{
    msgpack_pack_array(pk, 1);
    test_pack_one(pk, "aaa", 0);
}

static void test_allow_eight(msgpack_packer *pk)
{
    msgpack_pack_array(pk, 1);
    test_pack_one(pk, "aaa", 8);
}

static void test_allow_upper(msgpack_packer *pk)
{
    msgpack_pack_array(pk, 1);
    test_pack_one(pk, "AAA", 1);
}

static void test_allow_slash(msgpack_packer *pk)
{
    msgpack_pack_array(pk, 1);
    test_pack_one(pk, "aa/", 1);
}

static void test_allow_not_pair(msgpack_packer *pk)
{
    msgpack_pack_array(pk, 1);
    msgpack_pack_str_with_body(pk, "aaa", 3);
}

static void test_allow_too_many(msgpack_packer *pk)
{
    msgpack_pack_array(pk, GW_KEY_ALLOW_MAX + 1);
    for (int i = 0; i <= GW_KEY_ALLOW_MAX; i++) {
        char b[8];
        snprintf(b, sizeof(b), "b%03d", i);
        test_pack_one(pk, b, 1);
    }
}

static void test_limits_decode_refuses(void)
{
    char buf[GW_KEY_RECORD_MAX];
    char err[CN_ERR_LEN];
    struct gw_key_record d;
    size_t n = test_pack_limits(buf, sizeof(buf), 2, 1, test_allow_good);
    CN_CHECK_EQ_INT(gw_key_record_decode(&d, buf, n, "AK1", 3, err), CN_OK);
    CN_CHECK_EQ_INT(d.restricted, 1);
    CN_CHECK_EQ_INT((int)d.limits.n, 2);
    /* a version 1 record carrying a list, a version 2 record without one */
    n = test_pack_limits(buf, sizeof(buf), 1, 1, test_allow_good);
    CN_CHECK_EQ_INT(gw_key_record_decode(&d, buf, n, "AK1", 3, err), CN_CORRUPT);
    n = test_pack_limits(buf, sizeof(buf), 2, 1, NULL);
    CN_CHECK_EQ_INT(gw_key_record_decode(&d, buf, n, "AK1", 3, err), CN_CORRUPT);
    n = test_pack_limits(buf, sizeof(buf), 2, 0, test_allow_good);
    CN_CHECK_EQ_INT(gw_key_record_decode(&d, buf, n, "AK1", 3, err), CN_CORRUPT);
    n = test_pack_limits(buf, sizeof(buf), 2, 2, test_allow_good);
    CN_CHECK_EQ_INT(gw_key_record_decode(&d, buf, n, "AK1", 3, err), CN_CORRUPT);
    n = test_pack_limits(buf, sizeof(buf), 3, 1, test_allow_good);
    CN_CHECK_EQ_INT(gw_key_record_decode(&d, buf, n, "AK1", 3, err), CN_CORRUPT);
    void (*bad[])(msgpack_packer *) = {test_allow_unsorted, test_allow_dup, test_allow_zero,
                                       test_allow_eight, test_allow_upper, test_allow_slash,
                                       test_allow_not_pair, test_allow_too_many};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        n = test_pack_limits(buf, sizeof(buf), 2, 1, bad[i]);
        CN_CHECK(n > 0);
        CN_CHECK_EQ_INT(gw_key_record_decode(&d, buf, n, "AK1", 3, err), CN_CORRUPT);
    }
}

/* A restricted key sealed by Python's cryptography and msgpack
 * (tests/fuzz/seeds/fuzz_gw_key_record/restricted): version 2, the AAD
 * "cairn-key-v2" | akid | owner | create flag | count | (len, bucket,
 * rights)... as docs/security.md says. Master key 07 00 .. 00. */
static void test_known_answer_v2(void)
{
    static const char hex[] =
        "8aa17602a4616b6964b4414b494146555a5a46555a5a46555a5a30303032a56f776e6572d94039393939"
        "393939393939393939393939393939393939393939393939393939393939393939393939393939393939"
        "393939393939393939393939393939393939a46e616d65ae72657374726963746564206b6579aa637265"
        "617465645f7573cf0006445941624000a56e6f6e6365c40c010101010101010101010101a3746167c410"
        "8dc1dc10ab0fbff39fcc8d9b89fa7939a67365616c6564c42844b1cdea075a6bef6587d0ced0388b8f73"
        "61b16ddfd8370510cef2956dedce77b92934ac23ce464cad6372656174655f6275636b6574c3a5616c6c"
        "6f779392a5616c7068610392a6626574612e620192ab7a6574612d6275636b657407";
    unsigned char rec[sizeof(hex) / 2], mk[32] = {7};
    for (size_t i = 0; i < sizeof(rec); i++)
        sscanf(hex + 2 * i, "%2hhx", &rec[i]);
    struct gw_key_record d;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(gw_key_record_decode(&d, rec, sizeof(rec), "AKIAFUZZFUZZFUZZ0002", 20, err),
                    CN_OK);
    CN_CHECK_EQ_INT(gw_key_record_open(&d, mk, err), CN_OK);
    CN_CHECK_EQ_STR(d.secret, "abcdefghijABCDEFGHIJ0123456789+/abcdefgh");
    CN_CHECK_EQ_INT(d.restricted, 1);
    CN_CHECK_EQ_INT(d.limits.create_bucket, 1);
    CN_CHECK_EQ_INT((int)d.limits.n, 3);
    CN_CHECK_EQ_STR(d.limits.v[1].bucket, "beta.b");
    CN_CHECK_EQ_INT(d.limits.v[2].rights, 7);
}

static const struct cn_test_case cases[] = {
    {"known_answer", test_known_answer},
    {"known_answer_v2", test_known_answer_v2},
    {"generate", test_generate},
    {"round_trip", test_round_trip},
    {"owner_bound", test_owner_bound},
    {"decode_refuses", test_decode_refuses},
    {"master_file", test_master_file},
    {"merge", test_merge},
    {"limits_round_trip", test_limits_round_trip},
    {"limits_decode_refuses", test_limits_decode_refuses},
    {"merge_limits", test_merge_limits},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
