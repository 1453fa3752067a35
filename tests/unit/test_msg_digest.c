/* Unit tests of the DIGEST building blocks (msg/digest.h): the key-range
 * split (bounds ordered, every key in exactly one sub-range, the index walk
 * agreeing with a brute-force compare), the record digest and its
 * order-independent sums, the packed sums and arcs and their refusals, and
 * a DIGEST request and reply through the codec. */
#include <stdlib.h>
#include <string.h>

#include "cn/test.h"
#include "msg/digest.h"

CN_TEST_GLOBALS;

static int test_key_cmp(const uint8_t *a, uint32_t al, const uint8_t *b, uint32_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c != 0 ? c : (al < bl ? -1 : al > bl);
}

static uint32_t test_rand_key(uint8_t *k, uint32_t max)
{
    static const uint8_t alpha[] = {0, 1, '/', 'a', 'b', 'k', 0x7f, 0x80, 0xfe, 0xff};
    uint32_t n = 1 + (uint32_t)rand() % max;
    for (uint32_t i = 0; i < n; i++)
        k[i] = alpha[rand() % (int)sizeof(alpha)];
    return n;
}

/* Checks one split against brute force: bounds never decrease, stay
 * inside (after, upto] or equal an end, and each key > after (and <= upto)
 * lands in the one sub-range i with bound i < key <= bound i+1. */
static void test_split_one(const uint8_t *a, uint32_t al, const uint8_t *u, uint32_t ul,
                           int has_u, uint32_t fanout)
{
    struct msg_digest_split sp;
    uint8_t b1[64], b2[64];
    msg_digest_split_init(&sp, a, al, u, ul, has_u, fanout);
    for (uint32_t i = 1; i + 1 < fanout; i++) {
        uint32_t l1 = msg_digest_split_bound(&sp, i, b1);
        uint32_t l2 = msg_digest_split_bound(&sp, i + 1, b2);
        CN_CHECK(test_key_cmp(b1, l1, b2, l2) <= 0);
        CN_CHECK(msg_digest_split_cmp(&sp, i, b1, l1) == 0);
        if (has_u)
            CN_CHECK(test_key_cmp(b2, l2, u, ul) <= 0);
    }
    for (int t = 0; t < 200; t++) {
        uint8_t k[12];
        uint32_t kl = test_rand_key(k, sizeof(k));
        if (test_key_cmp(k, kl, a, al) <= 0 || (has_u && test_key_cmp(k, kl, u, ul) > 0))
            continue;
        uint32_t idx = msg_digest_split_index(&sp, 0, k, kl);
        CN_CHECK(idx < fanout);
        for (uint32_t i = 1; i < fanout; i++) {
            uint32_t bl = msg_digest_split_bound(&sp, i, b1);
            int c = test_key_cmp(k, kl, b1, bl);
            CN_CHECK_EQ_INT(msg_digest_split_cmp(&sp, i, k, kl) > 0, c > 0);
            CN_CHECK_EQ_INT(msg_digest_split_cmp(&sp, i, k, kl) < 0, c < 0);
            if (i <= idx)
                CN_CHECK(c > 0);   /* above every bound up to its own start */
            else
                CN_CHECK(c <= 0);  /* at or below every later one */
        }
    }
}

static void test_split(void)
{
    srand(7);
    test_split_one((const uint8_t *)"", 0, NULL, 0, 0, 64);
    test_split_one((const uint8_t *)"", 0, NULL, 0, 0, 1);
    test_split_one((const uint8_t *)"a", 1, (const uint8_t *)"b", 1, 1, 16);
    test_split_one((const uint8_t *)"ab", 2, (const uint8_t *)"abk", 3, 1, 7);
    /* after is a prefix of upto and the window is all zeros: degenerate
     * but still a partition */
    test_split_one((const uint8_t *)"k", 1, (const uint8_t *)"k\0\0\0\0\0\0\0\0\1", 10, 1, 8);
    for (int t = 0; t < 300; t++) {
        uint8_t a[10], u[10];
        uint32_t al = test_rand_key(a, sizeof(a)), ul = test_rand_key(u, sizeof(u));
        if (test_key_cmp(a, al, u, ul) >= 0)
            continue;
        test_split_one(a, al, u, ul, 1, 1 + (uint32_t)rand() % 32);
        test_split_one(a, al, NULL, 0, 0, 1 + (uint32_t)rand() % 32);
    }
    /* the bounds spread evenly over the window after the common prefix */
    struct msg_digest_split sp;
    uint8_t b[64];
    msg_digest_split_init(&sp, (const uint8_t *)"p/a", 3, (const uint8_t *)"p/b", 3, 1, 4);
    CN_CHECK_EQ_INT(sp.plen, 2);
    CN_CHECK_EQ_INT(msg_digest_split_bound(&sp, 2, b), 10);
    CN_CHECK(memcmp(b, "p/a\x80\0\0\0\0\0\0", 10) == 0);
    msg_digest_split_init(&sp, (const uint8_t *)"", 0, NULL, 0, 0, 4);
    msg_digest_split_bound(&sp, 1, b);
    CN_CHECK(b[0] == 0x3f && b[1] == 0xff);
}

static void test_record_and_sums(void)
{
    uint64_t h[2], g[2];
    const uint8_t *k = (const uint8_t *)"bucket\0key";
    msg_digest_record(k, 10, 5, 6, 0, 100, (const uint8_t *)"etag", 4, h);
    msg_digest_record(k, 10, 5, 6, 0, 100, (const uint8_t *)"etag", 4, g);
    CN_CHECK(h[0] == g[0] && h[1] == g[1]);
    /* every field counts */
    msg_digest_record(k, 9, 5, 6, 0, 100, (const uint8_t *)"etag", 4, g);
    CN_CHECK(h[0] != g[0]);
    msg_digest_record(k, 10, 4, 6, 0, 100, (const uint8_t *)"etag", 4, g);
    CN_CHECK(h[0] != g[0]);
    msg_digest_record(k, 10, 5, 7, 0, 100, (const uint8_t *)"etag", 4, g);
    CN_CHECK(h[0] != g[0]);
    msg_digest_record(k, 10, 5, 6, MSG_FLAG_TOMBSTONE, 100, (const uint8_t *)"etag", 4, g);
    CN_CHECK(h[0] != g[0]);
    msg_digest_record(k, 10, 5, 6, MSG_FLAG_CORRUPT, 100, (const uint8_t *)"etag", 4, g);
    CN_CHECK(h[0] != g[0]);
    msg_digest_record(k, 10, 5, 6, 0, 101, (const uint8_t *)"etag", 4, g);
    CN_CHECK(h[0] != g[0]);
    msg_digest_record(k, 10, 5, 6, 0, 100, (const uint8_t *)"etaG", 4, g);
    CN_CHECK(h[0] != g[0]);
    /* length prefixes: moving a byte from key to etag changes the digest */
    msg_digest_record(k, 9, 5, 6, 0, 100, (const uint8_t *)"yetag", 5, g);
    CN_CHECK(h[0] != g[0]);
    /* other flag bits do not */
    msg_digest_record(k, 10, 5, 6, 0x100, 100, (const uint8_t *)"etag", 4, g);
    CN_CHECK(h[0] == g[0] && h[1] == g[1]);

    /* sums do not depend on order; a missing or changed record shows */
    uint64_t recs[50][2];
    for (int i = 0; i < 50; i++) {
        uint8_t key[8];
        memcpy(key, "key", 3);
        key[3] = (uint8_t)i;
        msg_digest_record(key, 4, 1000 + (uint64_t)i, 1, 0, 10, NULL, 0, recs[i]);
    }
    struct msg_digest_sum fwd = {0}, rev = {0}, less = {0};
    for (int i = 0; i < 50; i++) {
        msg_digest_sum_add(&fwd, recs[i]);
        msg_digest_sum_add(&rev, recs[49 - i]);
        if (i != 17)
            msg_digest_sum_add(&less, recs[i]);
    }
    CN_CHECK(msg_digest_sum_eq(&fwd, &rev));
    CN_CHECK_EQ_INT(fwd.count, 50);
    CN_CHECK(!msg_digest_sum_eq(&fwd, &less));
    struct msg_digest_sum same_count = less;
    msg_digest_sum_add(&same_count, recs[18]);   /* a duplicate instead of 17 */
    CN_CHECK(same_count.count == fwd.count && !msg_digest_sum_eq(&fwd, &same_count));
    /* a parent's sum is its halves' sums added */
    struct msg_digest_sum lo = {0}, hi = {0};
    for (int i = 0; i < 50; i++)
        msg_digest_sum_add(i < 20 ? &lo : &hi, recs[i]);
    struct msg_digest_sum both = {lo.count + hi.count, {lo.h[0] + hi.h[0], lo.h[1] + hi.h[1]}};
    CN_CHECK(msg_digest_sum_eq(&both, &fwd));
}

static void test_pack(void)
{
    struct msg_digest_sum s[3] = {{1, {2, 3}}, {0, {0, 0}}, {UINT64_MAX, {5, UINT64_MAX}}}, o[3];
    uint8_t buf[3 * MSG_DIGEST_SUM_LEN];
    uint32_t n = 0;
    msg_digest_sums_pack(s, 3, buf);
    struct msg_bytes b = {buf, sizeof(buf)};
    CN_CHECK_EQ_INT(msg_digest_sums_unpack(&b, o, 3, &n), CN_OK);
    CN_CHECK_EQ_INT(n, 3);
    for (int i = 0; i < 3; i++)
        CN_CHECK(msg_digest_sum_eq(&s[i], &o[i]));
    CN_CHECK_EQ_INT(msg_digest_sums_unpack(&b, o, 2, &n), CN_INVAL);   /* over max */
    b.len--;
    CN_CHECK_EQ_INT(msg_digest_sums_unpack(&b, o, 3, &n), CN_INVAL);   /* ragged */

    struct msg_digest_arc a[3] = {{0, 9}, {20, 20}, {30, UINT64_MAX}}, ao[4];
    uint8_t ab[4 * MSG_DIGEST_ARC_LEN];
    msg_digest_arcs_pack(a, 3, ab);
    struct msg_bytes abb = {ab, 3 * MSG_DIGEST_ARC_LEN};
    CN_CHECK_EQ_INT(msg_digest_arcs_unpack(&abb, ao, 4, &n), CN_OK);
    CN_CHECK_EQ_INT(n, 3);
    for (uint64_t h = 0; h < 40; h++)
        CN_CHECK_EQ_INT(msg_digest_arcs_contain(ao, n, h), h <= 9 || h == 20 || h >= 30);
    CN_CHECK(msg_digest_arcs_contain(ao, n, UINT64_MAX));
    CN_CHECK(!msg_digest_arcs_contain(ao, 0, 5));
    struct msg_digest_arc bad[2][2] = {{{5, 4}, {6, 7}},     /* first > last */
                                       {{0, 9}, {9, 12}}};   /* overlapping */
    for (int i = 0; i < 2; i++) {
        msg_digest_arcs_pack(bad[i], 2, ab);
        abb.len = 2 * MSG_DIGEST_ARC_LEN;
        CN_CHECK_EQ_INT(msg_digest_arcs_unpack(&abb, ao, 4, &n), CN_INVAL);
    }
    struct msg_digest_arc unsorted[2] = {{10, 12}, {0, 1}};
    msg_digest_arcs_pack(unsorted, 2, ab);
    CN_CHECK_EQ_INT(msg_digest_arcs_unpack(&abb, ao, 4, &n), CN_INVAL);
    abb.len = 17;
    CN_CHECK_EQ_INT(msg_digest_arcs_unpack(&abb, ao, 4, &n), CN_INVAL);
}

static void test_codec(void)
{
    struct msg_limits lim;
    struct msg m, d;
    char err[CN_ERR_LEN];
    msg_limits_default(&lim);
    msg_init_request(&m, MSG_OP_DIGEST, 9);
    m.after = (struct msg_bytes){(const uint8_t *)"a", 1};
    m.upto = (struct msg_bytes){(const uint8_t *)"b", 1};
    m.fanout = 64;
    MSG_SET(&m, MSG_F_AFTER);
    MSG_SET(&m, MSG_F_UPTO);
    MSG_SET(&m, MSG_F_FANOUT);
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    CN_CHECK_EQ_INT(msg_encode(&m, 0, &sb, err), CN_OK);
    CN_CHECK_EQ_INT(msg_decode(&d, 0, sb.data, sb.size, NULL, 0, &lim, err), CN_OK);
    CN_CHECK(d.fanout == 64 && d.upto.len == 1 && d.upto.ptr[0] == 'b');
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);
    /* fanout is required; over 256 is refused by the decoder */
    msg_init_request(&m, MSG_OP_DIGEST, 9);
    msgpack_sbuffer_init(&sb);
    CN_CHECK_EQ_INT(msg_encode(&m, 0, &sb, err), CN_INVAL);
    msgpack_sbuffer_destroy(&sb);
    m.fanout = 257;
    MSG_SET(&m, MSG_F_FANOUT);
    msgpack_sbuffer_init(&sb);
    CN_CHECK_EQ_INT(msg_encode(&m, 0, &sb, err), CN_OK);
    CN_CHECK(msg_decode(&d, 0, sb.data, sb.size, NULL, 0, &lim, err) != CN_OK);
    msg_release(&d);
    msgpack_sbuffer_destroy(&sb);
    /* a reply: sums required when OK */
    struct msg req = m;
    msg_init_reply(&m, &req, MSG_ST_OK);
    msgpack_sbuffer_init(&sb);
    CN_CHECK_EQ_INT(msg_encode(&m, 1, &sb, err), CN_INVAL);
    msgpack_sbuffer_destroy(&sb);
}

int main(int argc, char **argv)
{
    static const struct cn_test_case cases[] = {
        {"split", test_split},
        {"record_and_sums", test_record_and_sums},
        {"pack", test_pack},
        {"codec", test_codec},
        {NULL, NULL},
    };
    return cn_test_main(cases, argc, argv);
}
