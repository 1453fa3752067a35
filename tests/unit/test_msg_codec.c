/* Unit tests of the protocol codec: round trips of every shape of message,
 * and each way a hostile frame is refused. */
#include <stdlib.h>
#include <string.h>

#include "cn/test.h"
#include "msg/msg.h"

CN_TEST_GLOBALS;

static struct msg_limits lim;

static msgpack_sbuffer test_encode(const struct msg *m, int is_reply)
{
    msgpack_sbuffer sb;
    char err[CN_ERR_LEN];
    msgpack_sbuffer_init(&sb);
    int rc = msg_encode(m, is_reply, &sb, err);
    if (rc != CN_OK)
        fprintf(stderr, "  encode: %s\n", err);
    CN_CHECK_EQ_INT(rc, CN_OK);
    return sb;
}

static void test_put_roundtrip(void)
{
    struct msg m, d;
    char err[CN_ERR_LEN];
    static const uint8_t key[] = {'b', 0, 'k', 0xff};
    msg_init_request(&m, MSG_OP_PUT, 42);
    m.key = (struct msg_bytes){key, sizeof(key)};
    m.crc = 0xdeadbeef;
    m.ver = 7;
    m.ts = 1700000000000000ull;
    m.etag = (struct msg_bytes){(const uint8_t *)"abc", 3};
    MSG_SET(&m, MSG_F_KEY);
    MSG_SET(&m, MSG_F_CRC);
    MSG_SET(&m, MSG_F_VER);
    MSG_SET(&m, MSG_F_TS);
    MSG_SET(&m, MSG_F_ETAG);
    msgpack_sbuffer sb = test_encode(&m, 0);
    int rc = msg_decode(&d, 0, sb.data, sb.size, "data", 4, &lim, err);
    CN_CHECK_EQ_INT(rc, CN_OK);
    CN_CHECK_EQ_INT(d.id, 42);
    CN_CHECK_EQ_INT(d.op, MSG_OP_PUT);
    CN_CHECK_EQ_INT(d.key.len, 4);
    CN_CHECK(memcmp(d.key.ptr, key, 4) == 0);
    CN_CHECK_EQ_INT(d.crc, 0xdeadbeef);
    CN_CHECK_EQ_INT(d.ts, 1700000000000000ull);
    CN_CHECK_EQ_INT(d.payload.len, 4);
    CN_CHECK(MSG_HAS(&d, MSG_F_ETAG));
    CN_CHECK(!MSG_HAS(&d, MSG_F_META));
    msg_release(&d);
    /* the same header without its payload frame is refused */
    rc = msg_decode(&d, 0, sb.data, sb.size, NULL, 0, &lim, err);
    CN_CHECK_EQ_INT(rc, CN_INVAL);
    CN_CHECK(strstr(err, "payload") != NULL);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);
}

static void test_list_reply_roundtrip(void)
{
    struct msg req, rep, d;
    char err[CN_ERR_LEN];
    struct msg_entry ents[3];
    msg_init_request(&req, MSG_OP_LIST, 9);
    msg_init_reply(&rep, &req, MSG_ST_OK);
    for (int i = 0; i < 3; i++) {
        memset(&ents[i], 0, sizeof(ents[i]));
        ents[i].key = (struct msg_bytes){(const uint8_t *)"k0k1k2" + 2 * i, 2};
        ents[i].size = 100u * (unsigned)i;
        ents[i].ver = (uint64_t)i << 40;
    }
    rep.ents = ents;
    rep.n_ents = 3;
    rep.more = 1;
    MSG_SET(&rep, MSG_F_ENTS);
    MSG_SET(&rep, MSG_F_MORE);
    msgpack_sbuffer sb = test_encode(&rep, 1);
    CN_CHECK_EQ_INT(msg_decode(&d, 1, sb.data, sb.size, NULL, 0, &lim, err), CN_OK);
    CN_CHECK_EQ_INT(d.n_ents, 3);
    CN_CHECK_EQ_INT(d.more, 1);
    CN_CHECK_EQ_INT(d.ents[2].size, 200);
    CN_CHECK_EQ_INT(d.ents[2].ver, 2ull << 40);
    CN_CHECK(d.ents[1].key.len == 2 && memcmp(d.ents[1].key.ptr, "k1", 2) == 0);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);
}

static void test_stats_and_error_reply(void)
{
    struct msg req, rep, d;
    char err[CN_ERR_LEN];
    struct msg_stat st[2] = {{{(const uint8_t *)"records", 7}, 5}, {{(const uint8_t *)"bytes", 5}, 1ull << 35}};
    msg_init_request(&req, MSG_OP_STATS, 1);
    msg_init_reply(&rep, &req, MSG_ST_OK);
    rep.node = (struct msg_bytes){(const uint8_t *)"n1", 2};
    rep.stats = st;
    rep.n_stats = 2;
    MSG_SET(&rep, MSG_F_NODE);
    MSG_SET(&rep, MSG_F_STATS);
    msgpack_sbuffer sb = test_encode(&rep, 1);
    CN_CHECK_EQ_INT(msg_decode(&d, 1, sb.data, sb.size, NULL, 0, &lim, err), CN_OK);
    CN_CHECK_EQ_INT(d.n_stats, 2);
    CN_CHECK_EQ_INT(d.stats[1].value, 1ull << 35);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);

    /* an error reply need not carry the OK reply's required fields */
    msg_init_request(&req, MSG_OP_GET, 3);
    msg_init_reply(&rep, &req, MSG_ST_CORRUPT);
    rep.err = (struct msg_bytes){(const uint8_t *)"bad block", 9};
    MSG_SET(&rep, MSG_F_ERR);
    sb = test_encode(&rep, 1);
    CN_CHECK_EQ_INT(msg_decode(&d, 1, sb.data, sb.size, NULL, 0, &lim, err), CN_OK);
    CN_CHECK_EQ_INT(d.st, MSG_ST_CORRUPT);
    CN_CHECK_EQ_INT(d.err.len, 9);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);
}

/* Packs a map from a tiny description: pairs of key and (uint | str). */
static msgpack_sbuffer test_pack_map(int n, const char *const *keys, const uint64_t *uints,
                                     const char *const *strs)
{
    msgpack_sbuffer sb;
    msgpack_packer pk;
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, (size_t)n);
    for (int i = 0; i < n; i++) {
        msgpack_pack_str_with_body(&pk, keys[i], strlen(keys[i]));
        if (strs[i] != NULL)
            msgpack_pack_bin_with_body(&pk, strs[i], strlen(strs[i]));
        else
            msgpack_pack_uint64(&pk, uints[i]);
    }
    return sb;
}

static int test_decode_req(const msgpack_sbuffer *sb, struct msg *d, char *err)
{
    int rc = msg_decode(d, 0, sb->data, sb->size, NULL, 0, &lim, err);
    return rc;
}

static void test_rejects(void)
{
    struct msg d;
    char err[CN_ERR_LEN];
    const char *k[] = {"v", "id", "op", "key", "zzz"};
    uint64_t u[] = {1, 77, MSG_OP_HEAD, 0, 5};
    const char *s[] = {NULL, NULL, NULL, "obj", NULL};

    msgpack_sbuffer sb = test_pack_map(5, k, u, s);   /* valid; unknown zzz ignored */
    CN_CHECK_EQ_INT(test_decode_req(&sb, &d, err), CN_OK);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);

    sb = test_pack_map(3, k, u, s);                   /* HEAD without key */
    CN_CHECK_EQ_INT(test_decode_req(&sb, &d, err), CN_INVAL);
    CN_CHECK(strstr(err, "key") != NULL);
    CN_CHECK_EQ_INT(d.id, 77);                        /* still known, to reply */
    CN_CHECK_EQ_INT(d.st, MSG_ST_BAD_REQUEST);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);

    uint64_t u2[] = {1, 77, 99, 0, 0};                 /* unknown op */
    sb = test_pack_map(4, k, u2, s);
    CN_CHECK_EQ_INT(test_decode_req(&sb, &d, err), CN_INVAL);
    CN_CHECK(strstr(err, "unknown op") != NULL);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);

    uint64_t u3[] = {MSG_VERSION + 1, 77, MSG_OP_HEAD, 0, 0}; /* future version */
    sb = test_pack_map(4, k, u3, s);
    CN_CHECK_EQ_INT(test_decode_req(&sb, &d, err), CN_INVAL);
    CN_CHECK_EQ_INT(d.st, MSG_ST_BAD_VERSION);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);

    const char *s4[] = {NULL, NULL, NULL, NULL, NULL}; /* key is an integer */
    sb = test_pack_map(4, k, u, s4);
    CN_CHECK_EQ_INT(test_decode_req(&sb, &d, err), CN_INVAL);
    CN_CHECK(strstr(err, "'key'") != NULL);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);

    const char *kd[] = {"v", "id", "op", "key", "key"}; /* duplicate key */
    const char *sd[] = {NULL, NULL, NULL, "a", "b"};
    sb = test_pack_map(5, kd, u, sd);
    CN_CHECK_EQ_INT(test_decode_req(&sb, &d, err), CN_INVAL);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);

    char *longkey = malloc(lim.max_key_len + 2);       /* key over the limit */
    memset(longkey, 'x', lim.max_key_len + 1);
    longkey[lim.max_key_len + 1] = '\0';
    const char *sl[] = {NULL, NULL, NULL, longkey, NULL};
    sb = test_pack_map(4, k, u, sl);
    CN_CHECK_EQ_INT(test_decode_req(&sb, &d, err), CN_TOOBIG);
    CN_CHECK_EQ_INT(d.st, MSG_ST_TOO_LARGE);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);
    free(longkey);

    const char *kz[] = {"v", "id", "op", "prefix", "limit"}; /* LIST limit 0 */
    uint64_t uz[] = {1, 1, MSG_OP_LIST, 0, 0};
    const char *sz[] = {NULL, NULL, NULL, "p", NULL};
    sb = test_pack_map(5, kz, uz, sz);
    CN_CHECK_EQ_INT(test_decode_req(&sb, &d, err), CN_INVAL);
    CN_CHECK(strstr(err, "limit") != NULL);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);

    const char *kf[] = {"v", "id", "op", "key", "off"}; /* field of another op */
    uint64_t uf[] = {1, 1, MSG_OP_DELETE, 0, 5};
    const char *sf[] = {NULL, NULL, NULL, "a", NULL};
    sb = test_pack_map(5, kf, uf, sf);
    CN_CHECK_EQ_INT(test_decode_req(&sb, &d, err), CN_INVAL);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);
}

/* Each message goes out as the lowest version that has what it uses: a v1
 * peer keeps understanding everything but the conditional-write ops, and a
 * LOCK (or a PUT with a lease token) is never sent as v1, which a v1 node
 * would take for an unconditional write. v1 and v2 both decode. */
static void test_versions(void)
{
    struct msg m, d;
    char err[CN_ERR_LEN];
    msgpack_sbuffer sb;
    msg_init_request(&m, MSG_OP_HEAD, 5);
    m.key = (struct msg_bytes){(const uint8_t *)"k", 1};
    MSG_SET(&m, MSG_F_KEY);
    CN_CHECK_EQ_INT(msg_version_needed(&m, 0), 1);
    msgpack_sbuffer_init(&sb);
    CN_CHECK_EQ_INT(msg_encode(&m, 0, &sb, err), CN_OK);
    CN_CHECK_EQ_INT(test_decode_req(&sb, &d, err), CN_OK);
    CN_CHECK_EQ_INT(d.v, 1);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);

    msg_init_request(&m, MSG_OP_LOCK, 6);
    m.key = (struct msg_bytes){(const uint8_t *)"k", 1};
    m.tok = 99;
    m.ifver = 7;
    MSG_SET(&m, MSG_F_KEY);
    MSG_SET(&m, MSG_F_TOK);
    MSG_SET(&m, MSG_F_IFVER);
    msgpack_sbuffer_init(&sb);
    CN_CHECK_EQ_INT(msg_encode(&m, 0, &sb, err), CN_OK);
    CN_CHECK_EQ_INT(test_decode_req(&sb, &d, err), CN_OK);
    CN_CHECK_EQ_INT(d.v, 2);
    CN_CHECK(d.tok == 99 && d.ifver == 7);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);

    msg_init_request(&m, MSG_OP_PUT, 7);
    m.key = (struct msg_bytes){(const uint8_t *)"k", 1};
    MSG_SET(&m, MSG_F_KEY);
    MSG_SET(&m, MSG_F_CRC);
    MSG_SET(&m, MSG_F_VER);
    MSG_SET(&m, MSG_F_TS);
    CN_CHECK_EQ_INT(msg_version_needed(&m, 0), 1);
    m.tok = 3;
    MSG_SET(&m, MSG_F_TOK);
    CN_CHECK_EQ_INT(msg_version_needed(&m, 0), 2);

    struct msg rep;
    msg_init_reply(&rep, &m, MSG_ST_OK);
    CN_CHECK_EQ_INT(msg_version_needed(&rep, 1), 1);
    msg_init_reply(&rep, &m, MSG_ST_LOCKED);
    CN_CHECK_EQ_INT(msg_version_needed(&rep, 1), 2);

    /* v0 is refused as v3 is */
    const char *k[] = {"v", "id", "op", "key"};
    uint64_t u0[] = {0, 77, MSG_OP_HEAD, 0};
    const char *s0[] = {NULL, NULL, NULL, "obj"};
    sb = test_pack_map(4, k, u0, s0);
    CN_CHECK_EQ_INT(test_decode_req(&sb, &d, err), CN_INVAL);
    CN_CHECK_EQ_INT(d.st, MSG_ST_BAD_VERSION);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);
}

/* Version 3: `osize` round-trips in a PUT, a GET/HEAD reply and LIST
 * entries (only those that have one), makes the message version 3, and a
 * request may ask for version 3 (its reply's form) without needing it.
 * Every reply carries `vmax`; msg_osize_downgrade() folds a PUT into the
 * version-2 form, which decodes as version 1. */
static void test_osize(void)
{
    struct msg m, d;
    char err[CN_ERR_LEN];
    msg_init_request(&m, MSG_OP_PUT, 8);
    m.key = (struct msg_bytes){(const uint8_t *)"o/b/k", 5};
    m.etag = (struct msg_bytes){(const uint8_t *)"0123abcd-2", 10};
    m.osize = (1ull << 40) + 5;
    MSG_SET(&m, MSG_F_KEY);
    MSG_SET(&m, MSG_F_CRC);
    MSG_SET(&m, MSG_F_VER);
    MSG_SET(&m, MSG_F_TS);
    MSG_SET(&m, MSG_F_ETAG);
    CN_CHECK_EQ_INT(msg_version_needed(&m, 0), 1);
    MSG_SET(&m, MSG_F_OSIZE);
    CN_CHECK_EQ_INT(msg_version_needed(&m, 0), 3);
    msgpack_sbuffer sb = test_encode(&m, 0);
    CN_CHECK_EQ_INT(msg_decode(&d, 0, sb.data, sb.size, "map", 3, &lim, err), CN_OK);
    CN_CHECK_EQ_INT(d.v, 3);
    CN_CHECK(MSG_HAS(&d, MSG_F_OSIZE) && d.osize == (1ull << 40) + 5);
    CN_CHECK(d.etag.len == 10 && memcmp(d.etag.ptr, "0123abcd-2", 10) == 0);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);

    /* folded for a node of version < 3: no osize, version 1 */
    uint8_t buf[MSG_ETAG_FOLD_MAX];
    msg_osize_downgrade(&m, buf);
    CN_CHECK(!MSG_HAS(&m, MSG_F_OSIZE));
    CN_CHECK_EQ_INT(msg_version_needed(&m, 0), 1);
    sb = test_encode(&m, 0);
    CN_CHECK_EQ_INT(msg_decode(&d, 0, sb.data, sb.size, "map", 3, &lim, err), CN_OK);
    CN_CHECK_EQ_INT(d.v, 1);
    CN_CHECK(!MSG_HAS(&d, MSG_F_OSIZE));
    CN_CHECK(d.etag.len == 24 && memcmp(d.etag.ptr, "0123abcd-2 1099511627781", 24) == 0);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);

    /* a HEAD that asks for the version-3 reply form */
    struct msg q;
    msg_init_request(&q, MSG_OP_HEAD, 9);
    q.key = (struct msg_bytes){(const uint8_t *)"o/b/k", 5};
    MSG_SET(&q, MSG_F_KEY);
    q.v = 3;
    sb = test_encode(&q, 0);
    CN_CHECK_EQ_INT(test_decode_req(&sb, &d, err), CN_OK);
    CN_CHECK_EQ_INT(d.v, 3);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);
    q.v = 9;   /* never above the newest version */
    sb = test_encode(&q, 0);
    CN_CHECK_EQ_INT(test_decode_req(&sb, &d, err), CN_OK);
    CN_CHECK_EQ_INT(d.v, MSG_VERSION);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);

    /* its reply, with osize, and vmax */
    struct msg rep;
    msg_init_reply(&rep, &q, MSG_ST_OK);
    CN_CHECK_EQ_INT(msg_version_needed(&rep, 1), 1);
    rep.osize = 77;
    MSG_SET(&rep, MSG_F_OSIZE);
    CN_CHECK_EQ_INT(msg_version_needed(&rep, 1), 3);
    sb = test_encode(&rep, 1);
    CN_CHECK_EQ_INT(msg_decode(&d, 1, sb.data, sb.size, NULL, 0, &lim, err), CN_OK);
    CN_CHECK(d.v == 3 && MSG_HAS(&d, MSG_F_OSIZE) && d.osize == 77);
    CN_CHECK(MSG_HAS(&d, MSG_F_VMAX) && d.vmax == MSG_VERSION);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);

    /* LIST entries: osize only where set */
    struct msg lq, lr;
    struct msg_entry ents[2];
    msg_init_request(&lq, MSG_OP_LIST, 10);
    msg_init_reply(&lr, &lq, MSG_ST_OK);
    memset(ents, 0, sizeof(ents));
    ents[0].key = (struct msg_bytes){(const uint8_t *)"a", 1};
    ents[0].size = 50;
    ents[1].key = (struct msg_bytes){(const uint8_t *)"b", 1};
    ents[1].size = 60;
    ents[1].osize = UINT64_MAX;
    lr.ents = ents;
    lr.n_ents = 2;
    MSG_SET(&lr, MSG_F_ENTS);
    CN_CHECK_EQ_INT(msg_version_needed(&lr, 1), 1);
    sb = test_encode(&lr, 1);
    CN_CHECK_EQ_INT(msg_decode(&d, 1, sb.data, sb.size, NULL, 0, &lim, err), CN_OK);
    CN_CHECK(d.v == 1 && d.n_ents == 2 && !d.ents[0].has_osize && !d.ents[1].has_osize);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);
    ents[1].has_osize = 1;
    CN_CHECK_EQ_INT(msg_version_needed(&lr, 1), 3);
    sb = test_encode(&lr, 1);
    CN_CHECK_EQ_INT(msg_decode(&d, 1, sb.data, sb.size, NULL, 0, &lim, err), CN_OK);
    CN_CHECK(d.v == 3 && d.n_ents == 2);
    CN_CHECK(!d.ents[0].has_osize && d.ents[0].size == 50);
    CN_CHECK(d.ents[1].has_osize && d.ents[1].osize == UINT64_MAX && d.ents[1].size == 60);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);

    /* owner: a PUT of version 3; folded, the owner becomes the etag */
    msg_init_request(&m, MSG_OP_PUT, 12);
    m.key = (struct msg_bytes){(const uint8_t *)"b/x", 3};
    m.owner = (struct msg_bytes){(const uint8_t *)"acct-1", 6};
    MSG_SET(&m, MSG_F_KEY);
    MSG_SET(&m, MSG_F_CRC);
    MSG_SET(&m, MSG_F_VER);
    MSG_SET(&m, MSG_F_TS);
    MSG_SET(&m, MSG_F_OWNER);
    CN_CHECK_EQ_INT(msg_version_needed(&m, 0), 3);
    sb = test_encode(&m, 0);
    CN_CHECK_EQ_INT(msg_decode(&d, 0, sb.data, sb.size, "", 0, &lim, err), CN_OK);
    CN_CHECK(d.v == 3 && MSG_HAS(&d, MSG_F_OWNER) && d.owner.len == 6 &&
             memcmp(d.owner.ptr, "acct-1", 6) == 0 && !MSG_HAS(&d, MSG_F_ETAG));
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);
    msg_osize_downgrade(&m, buf);
    CN_CHECK(!MSG_HAS(&m, MSG_F_OWNER) && MSG_HAS(&m, MSG_F_ETAG));
    CN_CHECK(m.etag.len == 6 && memcmp(m.etag.ptr, "acct-1", 6) == 0);
    CN_CHECK_EQ_INT(msg_version_needed(&m, 0), 1);
    ents[0].owner = (struct msg_bytes){(const uint8_t *)"o", 1};
    ents[0].has_owner = 1;
    sb = test_encode(&lr, 1);
    CN_CHECK_EQ_INT(msg_decode(&d, 1, sb.data, sb.size, NULL, 0, &lim, err), CN_OK);
    CN_CHECK(d.v == 3 && d.ents[0].has_owner && d.ents[0].owner.len == 1 &&
             !d.ents[1].has_owner);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);

    /* osize is a field of PUT, GET and HEAD only */
    const char *k[] = {"v", "id", "op", "key", "ver", "ts", "osize"};
    uint64_t u[] = {3, 11, MSG_OP_DELETE, 0, 1, 1, 5};
    const char *sv[] = {NULL, NULL, NULL, "k", NULL, NULL, NULL};
    sb = test_pack_map(7, k, u, sv);
    CN_CHECK_EQ_INT(test_decode_req(&sb, &d, err), CN_INVAL);
    CN_CHECK(strstr(err, "osize") != NULL);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);
}

static void test_hostile_bytes(void)
{
    struct msg d;
    char err[CN_ERR_LEN];
    /* array32 declaring 2^32-1 elements in a 5-byte frame: refused before
     * msgpack-c could allocate for them */
    static const uint8_t huge_array[] = {0xdd, 0xff, 0xff, 0xff, 0xff};
    CN_CHECK_EQ_INT(msg_decode(&d, 0, huge_array, sizeof(huge_array), NULL, 0, &lim, err), CN_INVAL);
    msg_release(&d);
    static const uint8_t huge_map[] = {0xdf, 0x7f, 0xff, 0xff, 0xff, 0xa1, 'v', 1};
    CN_CHECK_EQ_INT(msg_decode(&d, 0, huge_map, sizeof(huge_map), NULL, 0, &lim, err), CN_INVAL);
    msg_release(&d);
    static const uint8_t bin_past_end[] = {0x81, 0xa3, 'k', 'e', 'y', 0xc6, 0x10, 0, 0, 0, 'a'};
    CN_CHECK_EQ_INT(msg_decode(&d, 0, bin_past_end, sizeof(bin_past_end), NULL, 0, &lim, err), CN_INVAL);
    msg_release(&d);
    static const uint8_t not_map[] = {0x93, 1, 2, 3};
    CN_CHECK_EQ_INT(msg_decode(&d, 0, not_map, sizeof(not_map), NULL, 0, &lim, err), CN_INVAL);
    msg_release(&d);
    static const uint8_t trailing[] = {0x80, 0x00};
    CN_CHECK_EQ_INT(msg_decode(&d, 0, trailing, sizeof(trailing), NULL, 0, &lim, err), CN_INVAL);
    msg_release(&d);
    CN_CHECK_EQ_INT(msg_decode(&d, 0, "", 0, NULL, 0, &lim, err), CN_INVAL);
    msg_release(&d);
    static const uint8_t reserved[] = {0xc1};
    CN_CHECK_EQ_INT(msg_decode(&d, 0, reserved, 1, NULL, 0, &lim, err), CN_INVAL);
    msg_release(&d);
}

static void test_unreadable_request_reply(void)
{
    struct msg req, rep, d;
    char err[CN_ERR_LEN];
    memset(&req, 0, sizeof(req));
    msg_init_reply(&rep, &req, MSG_ST_BAD_REQUEST);
    msgpack_sbuffer sb = test_encode(&rep, 1);
    CN_CHECK_EQ_INT(msg_decode(&d, 1, sb.data, sb.size, NULL, 0, &lim, err), CN_OK);
    CN_CHECK_EQ_INT(d.op, 0);
    CN_CHECK_EQ_INT(d.st, MSG_ST_BAD_REQUEST);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);
}

/* The frame bound a node gives libzmq: the larger limit plus the slack. */
static void test_max_frame(void)
{
    static const struct {
        uint64_t payload;
        uint32_t header;
        uint64_t want;
    } cases[] = {
        {64ull << 20, 4u << 20, (64ull << 20) + MSG_FRAME_SLACK},   /* defaults */
        {1ull << 30, 4u << 20, (1ull << 30) + MSG_FRAME_SLACK},     /* largest record */
        {0, 4u << 20, (4u << 20) + MSG_FRAME_SLACK},                /* header dominates */
        {1u << 20, 64u << 20, (64u << 20) + MSG_FRAME_SLACK},
    };
    struct msg_limits l;
    msg_limits_default(&l);
    CN_CHECK_EQ_INT(msg_limits_max_frame(&l), (64ull << 20) + MSG_FRAME_SLACK);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        l.max_payload_len = cases[i].payload;
        l.max_header_len = cases[i].header;
        CN_CHECK_EQ_INT(msg_limits_max_frame(&l), cases[i].want);
    }
}

int main(int argc, char **argv)
{
    static const struct cn_test_case cases[] = {
        {"put_roundtrip", test_put_roundtrip},
        {"list_reply_roundtrip", test_list_reply_roundtrip},
        {"stats_and_error_reply", test_stats_and_error_reply},
        {"rejects", test_rejects},
        {"versions", test_versions},
        {"osize", test_osize},
        {"hostile_bytes", test_hostile_bytes},
        {"unreadable_request_reply", test_unreadable_request_reply},
        {"max_frame", test_max_frame},
        {NULL, NULL},
    };
    msg_limits_default(&lim);
    return cn_test_main(cases, argc, argv);
}
