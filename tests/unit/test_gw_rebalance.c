/* The rebalance worker's pure decisions (gateway/cluster/rebalance.c): which
 * nodes of the map are not a key's owners (sources of the copy, candidates
 * for purge), when a copy may be purged, and which records s/rebalance
 * accepts. */
#include <string.h>

#include <msgpack.h>

#include "rebalance.h"

#include "cn/rc.h"
#include "cn/test.h"

CN_TEST_GLOBALS;

static void test_gw_rebalance_non_owners(void)
{
    uint32_t out[8];
    const uint32_t members[] = {0, 1, 2, 3};
    const uint32_t owners[] = {3, 1};
    CN_CHECK_EQ_INT(gw_rebalance_non_owners(owners, 2, members, 4, out), 2);
    CN_CHECK(out[0] == 0 && out[1] == 2);   /* in members' order */
    /* every member an owner: nothing to purge or ask */
    const uint32_t all[] = {2, 0, 1, 3};
    CN_CHECK_EQ_INT(gw_rebalance_non_owners(all, 4, members, 4, out), 0);
    /* a moved key whose owners are outside the members asked (a node that
     * joined) still names every member; duplicates once */
    const uint32_t dup[] = {1, 1, 2};
    const uint32_t far[] = {7};
    CN_CHECK_EQ_INT(gw_rebalance_non_owners(far, 1, dup, 3, out), 2);
    CN_CHECK(out[0] == 1 && out[1] == 2);
    CN_CHECK_EQ_INT(gw_rebalance_non_owners(owners, 2, members, 0, out), 0);
}

static struct gw_repair_result test_gw_rebalance_result(void)
{
    struct gw_repair_result r;
    memset(&r, 0, sizeof(r));
    r.rc = CN_OK;
    r.newest_live = 1;
    r.newest_ts = 100;
    r.newest_ver = 7;
    r.n_extra_held = 4;
    r.extra_held[0] = 0, r.extra_ts[0] = 100, r.extra_ver[0] = 7;   /* the same version */
    r.extra_held[1] = 2, r.extra_ts[1] = 90, r.extra_ver[1] = 9;    /* older ts */
    r.extra_held[2] = 4, r.extra_ts[2] = 101, r.extra_ver[2] = 1;   /* newer: a racing write */
    r.extra_held[3] = 5, r.extra_ts[3] = 100, r.extra_ver[3] = 8;   /* same ts, higher ver */
    return r;
}

static void test_gw_rebalance_may_purge(void)
{
    struct gw_repair_result r = test_gw_rebalance_result();
    CN_CHECK_EQ_INT(gw_rebalance_may_purge(&r, 0), 1);
    CN_CHECK_EQ_INT(gw_rebalance_may_purge(&r, 1), 1);
    CN_CHECK_EQ_INT(gw_rebalance_may_purge(&r, 2), 0);
    CN_CHECK_EQ_INT(gw_rebalance_may_purge(&r, 3), 0);
    CN_CHECK_EQ_INT(gw_rebalance_may_purge(&r, 4), 0);   /* out of range */
    /* an owner failed (not every new owner holds the newest): keep all */
    r.rc = CN_IO;
    for (uint32_t i = 0; i < 4; i++)
        CN_CHECK_EQ_INT(gw_rebalance_may_purge(&r, i), 0);
    /* the newest is a tombstone the owners now hold: the old copies (the
     * tombstone's own copy and older live ones) go, a newer write stays */
    r = test_gw_rebalance_result();
    r.newest_live = 0;
    CN_CHECK_EQ_INT(gw_rebalance_may_purge(&r, 0), 1);
    CN_CHECK_EQ_INT(gw_rebalance_may_purge(&r, 1), 1);
    CN_CHECK_EQ_INT(gw_rebalance_may_purge(&r, 2), 0);
    CN_CHECK_EQ_INT(gw_rebalance_may_purge(&r, 3), 0);
    /* ... but only once every owner holds the tombstone (an owner without
     * it could later take an old copy back and undo the delete) */
    r.rc = CN_IO;
    for (uint32_t i = 0; i < 4; i++)
        CN_CHECK_EQ_INT(gw_rebalance_may_purge(&r, i), 0);
}

/* The throttle's bucket: a copy is paid before it is sent, so the next
 * key waits for it; what the repair did not copy is given back. */
static void test_gw_rebalance_throttle(void)
{
    const uint64_t bps = 1000000;   /* 1 MB/s */
    /* no limit: nothing moves */
    CN_CHECK(gw_rebalance_charge(5, 1000, 1 << 20, 0) == 5);
    CN_CHECK(gw_rebalance_settle(5, 10, 20, 0) == 5);
    /* an idle bucket: 500 kB sent at t = 10 s lets the next start at 10.5 s */
    uint64_t next = gw_rebalance_charge(0, 10000000, 500000, bps);
    CN_CHECK(next == 10500000);
    /* four keys at once (rebalance.inflight 4) each wait for the one before:
     * no burst; the fourth may start 1.5 s after the first */
    next = gw_rebalance_charge(next, 10000001, 500000, bps);
    CN_CHECK(next == 11000000);
    next = gw_rebalance_charge(next, 10000002, 500000, bps);
    CN_CHECK(next == 11500000);
    /* the second key was already in place (nothing copied): its time is
     * given back; one with two new owners pays for the second copy */
    CN_CHECK(gw_rebalance_settle(next, 500000, 0, bps) == 11000000);
    CN_CHECK(gw_rebalance_settle(next, 500000, 1000000, bps) == 12000000);
    CN_CHECK(gw_rebalance_settle(100, 500000, 0, bps) == 0);   /* never below 0 */
    /* a bucket that has been idle gives no credit: starts from now */
    CN_CHECK(gw_rebalance_charge(1000, 50000000, 1000000, bps) == 51000000);
}

static void test_gw_rebalance_pack_str(msgpack_packer *pk, const char *s)
{
    msgpack_pack_str(pk, strlen(s));
    msgpack_pack_str_body(pk, s, strlen(s));
}

static void test_gw_rebalance_record(void)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 5);
    test_gw_rebalance_pack_str(&pk, "holder");
    test_gw_rebalance_pack_str(&pk, "gw:1 pid 2");
    test_gw_rebalance_pack_str(&pk, "cursor");
    msgpack_pack_bin(&pk, 3);
    msgpack_pack_bin_body(&pk, "b/x", 3);
    test_gw_rebalance_pack_str(&pk, "throttle_bps");
    msgpack_pack_uint64(&pk, 52428800);
    test_gw_rebalance_pack_str(&pk, "future_field");   /* unknown: skipped */
    msgpack_pack_true(&pk);
    test_gw_rebalance_pack_str(&pk, "done_version");
    msgpack_pack_uint64(&pk, 3);
    CN_CHECK_EQ_INT(gw_rebalance_record_parses(sb.data, sb.size), 1);
    CN_CHECK_EQ_INT(gw_rebalance_record_parses(sb.data, sb.size - 1), 0);   /* truncated */
    msgpack_sbuffer_clear(&sb);
    msgpack_pack_map(&pk, 1);   /* a known key of the wrong type */
    test_gw_rebalance_pack_str(&pk, "done_version");
    test_gw_rebalance_pack_str(&pk, "3");
    CN_CHECK_EQ_INT(gw_rebalance_record_parses(sb.data, sb.size), 0);
    msgpack_sbuffer_clear(&sb);
    msgpack_pack_map(&pk, 1);   /* a cursor over the key limit */
    test_gw_rebalance_pack_str(&pk, "cursor");
    static char big[2000];
    msgpack_pack_bin(&pk, sizeof(big));
    msgpack_pack_bin_body(&pk, big, sizeof(big));
    CN_CHECK_EQ_INT(gw_rebalance_record_parses(sb.data, sb.size), 0);
    msgpack_sbuffer_clear(&sb);
    msgpack_pack_array(&pk, 0);   /* not a map */
    CN_CHECK_EQ_INT(gw_rebalance_record_parses(sb.data, sb.size), 0);
    CN_CHECK_EQ_INT(gw_rebalance_record_parses("", 0), 0);
    msgpack_sbuffer_destroy(&sb);
}

static const struct cn_test_case cases[] = {
    {"non_owners", test_gw_rebalance_non_owners},
    {"may_purge", test_gw_rebalance_may_purge},
    {"record", test_gw_rebalance_record},
    {"throttle", test_gw_rebalance_throttle},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
