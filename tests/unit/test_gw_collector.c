/* The chunk collector's pure part: chunk keys split back into their object
 * and write version (from the keys the writer makes), maps that name a
 * version, the "is this segment orphaned" decision over every fact it
 * weighs, and the system record's parser on odd input. */
#include <string.h>

#include <msgpack.h>

#include "cn/rc.h"
#include "cn/test.h"
#include "collector.h"
#include "lo_map.h"

CN_TEST_GLOBALS;

static void test_chunk_parse(void)
{
    static const char okey[] = "o/bucket/a/b c";
    char key[GW_LO_KEY_MAX];
    size_t n = gw_lo_map_chunk_key(key, okey, strlen(okey), 0x0123456789abcdefull, 0x2a);
    struct gw_collector_chunk ch;
    CN_CHECK_EQ_INT(gw_collector_chunk_parse(key, n, &ch), CN_OK);
    CN_CHECK_EQ_INT(ch.okey_len, strlen(okey));
    CN_CHECK(ch.ver == 0x0123456789abcdefull);
    CN_CHECK_EQ_INT(ch.idx, 0x2a);
    CN_CHECK_EQ_INT(ch.seg_len, strlen(okey) + 18);
    CN_CHECK(memcmp(key, "c/bucket/a/b c", ch.okey_len) == 0);
    CN_CHECK(key[ch.seg_len - 1] == '/');
    /* every chunk of one segment shares the prefix; another version does not */
    char key2[GW_LO_KEY_MAX], key3[GW_LO_KEY_MAX];
    size_t n2 = gw_lo_map_chunk_key(key2, okey, strlen(okey), 0x0123456789abcdefull, 7);
    size_t n3 = gw_lo_map_chunk_key(key3, okey, strlen(okey), 0x0123456789abcdeeull, 0);
    CN_CHECK(n2 == n && memcmp(key2, key, ch.seg_len) == 0);
    CN_CHECK(n3 == n && memcmp(key3, key, ch.seg_len) != 0);
    /* max values */
    n = gw_lo_map_chunk_key(key, okey, strlen(okey), UINT64_MAX, UINT32_MAX);
    CN_CHECK_EQ_INT(gw_collector_chunk_parse(key, n, &ch), CN_OK);
    CN_CHECK(ch.ver == UINT64_MAX && ch.idx == UINT32_MAX);
}

static void test_chunk_parse_refuses(void)
{
    static const char okey[] = "o/b/k";
    char key[GW_LO_KEY_MAX];
    size_t n = gw_lo_map_chunk_key(key, okey, strlen(okey), 5, 1);
    struct gw_collector_chunk ch;
    char bad[GW_LO_KEY_MAX];
    /* every strict prefix and one byte more */
    for (size_t i = 0; i < n; i++)
        CN_CHECK_EQ_INT(gw_collector_chunk_parse(key, i, &ch), CN_INVAL);
    memcpy(bad, key, n);
    bad[n] = '0';
    CN_CHECK_EQ_INT(gw_collector_chunk_parse(bad, n + 1, &ch), CN_INVAL);
    /* each byte of the suffix changed to something the writer never writes */
    for (size_t i = n - GW_COLLECTOR_SUFFIX_LEN; i < n; i++) {
        memcpy(bad, key, n);
        bad[i] = bad[i] == '/' || bad[i] == '\0' ? 'x' : 'G';
        CN_CHECK_EQ_INT(gw_collector_chunk_parse(bad, n, &ch), CN_INVAL);
        bad[i] = 'A';   /* upper-case hex is not the writer's */
        CN_CHECK_EQ_INT(gw_collector_chunk_parse(bad, n, &ch), CN_INVAL);
    }
    /* another record kind, no bucket, a NUL inside the object part */
    memcpy(bad, key, n);
    bad[0] = 'o';
    CN_CHECK_EQ_INT(gw_collector_chunk_parse(bad, n, &ch), CN_INVAL);
    static const char nob[] = "o/x";
    n = gw_lo_map_chunk_key(key, nob, 3, 5, 1);
    CN_CHECK_EQ_INT(gw_collector_chunk_parse(key, n, &ch), CN_INVAL);
    n = gw_lo_map_chunk_key(key, "o//k", 4, 5, 1);
    CN_CHECK_EQ_INT(gw_collector_chunk_parse(key, n, &ch), CN_INVAL);
    n = gw_lo_map_chunk_key(key, "o/b/k\0x", 7, 5, 1);
    CN_CHECK_EQ_INT(gw_collector_chunk_parse(key, n, &ch), CN_INVAL);
}

static void test_map_names(void)
{
    struct gw_lo_seg segs[] = {{10, 100, 50}, {20, 0, 50}, {30, 7, 50}};
    struct gw_lo_map m;
    CN_CHECK_EQ_INT(gw_lo_map_init(&m, segs, 3, 1), CN_OK);
    CN_CHECK(gw_collector_map_names(&m, 10));
    CN_CHECK(gw_collector_map_names(&m, 20));
    CN_CHECK(gw_collector_map_names(&m, 30));
    CN_CHECK(!gw_collector_map_names(&m, 11));
    CN_CHECK(!gw_collector_map_names(&m, 0));
    gw_lo_map_fini(&m);
}

#define SEC 1000000ull
#define NOW (1800000000ull * SEC)
#define GRACE (3600 * SEC)

static struct gw_collector_facts facts_orphan(void)
{
    struct gw_collector_facts f = {
        .now_us = NOW, .grace_us = GRACE, .newest_chunk_ts = NOW - 2 * GRACE,
        .lookups_ok = 1, .referenced = 0, .parent_ts = 0,
    };
    return f;
}

static void test_decide(void)
{
    struct gw_collector_facts f = facts_orphan();
    /* a write whose gateway died, never committed: no parent at all */
    CN_CHECK_EQ_INT(gw_collector_decide(&f), GW_COLLECTOR_DELETE);
    /* the grace is measured from the newest chunk, exactly at the edge */
    f.newest_chunk_ts = NOW - GRACE;
    CN_CHECK_EQ_INT(gw_collector_decide(&f), GW_COLLECTOR_DELETE);
    f.newest_chunk_ts = NOW - GRACE + 1;
    CN_CHECK_EQ_INT(gw_collector_decide(&f), GW_COLLECTOR_KEEP_YOUNG);
    /* a PUT still streaming (its newest chunk is recent) or a clock ahead */
    f.newest_chunk_ts = NOW;
    CN_CHECK_EQ_INT(gw_collector_decide(&f), GW_COLLECTOR_KEEP_YOUNG);
    f.newest_chunk_ts = NOW + 5 * SEC;
    CN_CHECK_EQ_INT(gw_collector_decide(&f), GW_COLLECTOR_KEEP_YOUNG);
    /* young wins over everything: a fresh chunk is kept even when a
     * lookup failed or nothing names it */
    f.lookups_ok = 0;
    CN_CHECK_EQ_INT(gw_collector_decide(&f), GW_COLLECTOR_KEEP_YOUNG);
    /* old, but a lookup failed: kept */
    f = facts_orphan();
    f.lookups_ok = 0;
    CN_CHECK_EQ_INT(gw_collector_decide(&f), GW_COLLECTOR_KEEP_UNSURE);
    /* a live object, a version or a part record names it */
    f = facts_orphan();
    f.referenced = 1;
    f.parent_ts = NOW - 3 * GRACE;
    CN_CHECK_EQ_INT(gw_collector_decide(&f), GW_COLLECTOR_KEEP_REFERENCED);
    /* the object was overwritten or deleted within the grace: a reader of
     * the old one may still be reading these chunks */
    f = facts_orphan();
    f.parent_ts = NOW - 10 * SEC;
    CN_CHECK_EQ_INT(gw_collector_decide(&f), GW_COLLECTOR_KEEP_PARENT_RECENT);
    f.parent_ts = NOW + 10 * SEC;
    CN_CHECK_EQ_INT(gw_collector_decide(&f), GW_COLLECTOR_KEEP_PARENT_RECENT);
    f.parent_ts = NOW - GRACE;
    CN_CHECK_EQ_INT(gw_collector_decide(&f), GW_COLLECTOR_DELETE);
    /* a grace of 0 is never configured (its bound is 1 s) but is still sane */
    f = facts_orphan();
    f.grace_us = 0;
    f.newest_chunk_ts = NOW;
    CN_CHECK_EQ_INT(gw_collector_decide(&f), GW_COLLECTOR_DELETE);
    CN_CHECK(strcmp(gw_collector_verdict_str(GW_COLLECTOR_DELETE), "delete") == 0);
}

/* Exhaustive over the booleans: DELETE exactly when old, sure, unnamed and
 * the object's last change is old. */
static void test_decide_table(void)
{
    for (int mask = 0; mask < 16; mask++) {
        struct gw_collector_facts f = facts_orphan();
        int young = mask & 1, unsure = mask & 2, named = mask & 4, recent = mask & 8;
        f.newest_chunk_ts = young ? NOW - 1 : NOW - 2 * GRACE;
        f.lookups_ok = !unsure;
        f.referenced = named != 0;
        f.parent_ts = recent ? NOW - 1 : NOW - 2 * GRACE;
        enum gw_collector_verdict v = gw_collector_decide(&f);
        CN_CHECK_EQ_INT(v == GW_COLLECTOR_DELETE, mask == 0);
    }
}

static void pack_str(msgpack_packer *pk, const char *s)
{
    msgpack_pack_str(pk, strlen(s));
    msgpack_pack_str_body(pk, s, strlen(s));
}

static void test_record(void)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    char key[GW_LO_KEY_MAX];
    size_t n = gw_lo_map_chunk_key(key, "o/b/k", 5, 9, 3);
    msgpack_pack_map(&pk, 4);
    pack_str(&pk, "holder");
    pack_str(&pk, "gw1");
    pack_str(&pk, "scans");
    msgpack_pack_uint64(&pk, 3);
    pack_str(&pk, "cursor");
    msgpack_pack_bin(&pk, n);
    msgpack_pack_bin_body(&pk, key, n);
    pack_str(&pk, "future_field");
    msgpack_pack_array(&pk, 0);
    CN_CHECK(gw_collector_record_parses(sb.data, sb.size));
    /* a cursor that is not a chunk key refuses the record */
    msgpack_sbuffer_clear(&sb);
    msgpack_pack_map(&pk, 1);
    pack_str(&pk, "cursor");
    msgpack_pack_bin(&pk, 3);
    msgpack_pack_bin_body(&pk, "c/x", 3);
    CN_CHECK(!gw_collector_record_parses(sb.data, sb.size));
    /* a count of the wrong type; not a map; empty; trailing bytes */
    msgpack_sbuffer_clear(&sb);
    msgpack_pack_map(&pk, 1);
    pack_str(&pk, "deleted");
    pack_str(&pk, "12");
    CN_CHECK(!gw_collector_record_parses(sb.data, sb.size));
    msgpack_sbuffer_clear(&sb);
    msgpack_pack_array(&pk, 0);
    CN_CHECK(!gw_collector_record_parses(sb.data, sb.size));
    CN_CHECK(!gw_collector_record_parses("", 0));
    msgpack_sbuffer_clear(&sb);
    msgpack_pack_map(&pk, 0);
    msgpack_pack_nil(&pk);
    CN_CHECK(!gw_collector_record_parses(sb.data, sb.size));
    msgpack_sbuffer_destroy(&sb);
}

static const struct cn_test_case cases[] = {
    {"chunk_parse", test_chunk_parse},
    {"chunk_parse_refuses", test_chunk_parse_refuses},
    {"map_names", test_map_names},
    {"decide", test_decide},
    {"decide_table", test_decide_table},
    {"record", test_record},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
