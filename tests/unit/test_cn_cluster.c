/* The cluster description (file parser, endpoint list) and the ring it
 * builds: weights, zones, and how few keys move when a node joins. */
#include <stdio.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/cluster.h"
#include "cn/ring.h"
#include "cn/test.h"

CN_TEST_GLOBALS;

static struct cn_cluster *test_cluster_parse(const char *text)
{
    struct cn_cluster *c = NULL;
    char err[CN_ERR_LEN] = "";
    int rc = cn_cluster_parse(text, strlen(text), &c, err);
    if (rc != CN_OK)
        fprintf(stderr, "  (parse: %s)\n", err);
    return c;
}

static void test_cn_cluster_file(void)
{
    struct cn_cluster *c = test_cluster_parse(
        "# three nodes\n"
        "node s0 tcp://10.201.0.11:7001 zone=a\n"
        "\n"
        "  node s1 tcp://10.201.0.12:7001 weight=200 zone=b # bigger disk\n"
        "node s2 tcp://10.201.0.13:7001\r\n");
    CN_CHECK(c != NULL);
    if (c == NULL)
        return;
    CN_CHECK_EQ_INT(cn_cluster_nodes(c), 3);
    CN_CHECK_EQ_STR(cn_cluster_node(c, 1)->id, "s1");
    CN_CHECK_EQ_STR(cn_cluster_node(c, 1)->address, "tcp://10.201.0.12:7001");
    CN_CHECK_EQ_INT(cn_cluster_node(c, 1)->weight, 200);
    CN_CHECK_EQ_STR(cn_cluster_node(c, 1)->zone, "b");
    CN_CHECK_EQ_STR(cn_cluster_node(c, 2)->zone, "");
    CN_CHECK_EQ_INT(cn_cluster_node(c, 2)->weight, 100);
    CN_CHECK(cn_cluster_has_zones(c));
    CN_CHECK_EQ_INT(cn_cluster_find(c, "s2"), 2);
    CN_CHECK_EQ_INT(cn_cluster_find(c, "tcp://10.201.0.11:7001"), 0);
    CN_CHECK_EQ_INT(cn_cluster_find(c, "s9"), -1);
    CN_CHECK_EQ_STR(cn_cluster_addresses(c)[2], "tcp://10.201.0.13:7001");
    cn_cluster_free(c);
}

static void test_cn_cluster_errors(void)
{
    static const char *const bad[] = {
        "",
        "# only a comment\n",
        "node s0\n",
        "nod s0 tcp://a:1\n",
        "node s0 tcp://a:1 weight=0\n",
        "node s0 tcp://a:1 weight=10001\n",
        "node s0 tcp://a:1 weight=12x\n",
        "node s0 tcp://a:1 zone=\n",
        "node s0 tcp://a:1 colour=red\n",
        "node s0 tcp://a:1\nnode s0 tcp://b:1\n",
        "node s0 tcp://a:1\nnode s1 tcp://a:1\n",
        "node s0 tcp://a:1 zone=a weight=1 x y z\n",
        "version 1\nversion 2\nnode s0 tcp://a:1\n",
        "version\nnode s0 tcp://a:1\n",
        "version -1\nnode s0 tcp://a:1\n",
        "version +1\nnode s0 tcp://a:1\n",
        "version 9223372036854775808\nnode s0 tcp://a:1\n",
        "version 99999999999999999999999\nnode s0 tcp://a:1\n",
        "version 1x\nnode s0 tcp://a:1\n",
        "version 1 2\nnode s0 tcp://a:1\n",
        "version 3\n",
        "node s0 tcp://a:1 state=gone\n",
        "node s0 tcp://a:1 state=\n",
        "node s0 tcp://a:1 state=leaving\n",
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(bad); i++) {
        struct cn_cluster *c = (struct cn_cluster *)1;
        char err[CN_ERR_LEN] = "";
        CN_CHECK_EQ_INT(cn_cluster_parse(bad[i], strlen(bad[i]), &c, err), CN_INVAL);
        CN_CHECK(c == NULL);
        CN_CHECK(err[0] != '\0');
    }
    const char nul[] = "node s0 tcp://a:1\nnode s1\0 tcp://b:1\n";
    struct cn_cluster *c = NULL;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(cn_cluster_parse(nul, sizeof(nul) - 1, &c, err), CN_INVAL);
    CN_CHECK(strstr(err, "line 2") != NULL);
    CN_CHECK_EQ_INT(cn_cluster_load("/nonexistent/cluster.conf", &c, err), CN_IO);
}

static void test_cn_cluster_endpoints(void)
{
    struct cn_cluster *c = NULL;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(cn_cluster_from_endpoints(" tcp://a:1 ,tcp://b:2,, tcp://c:3", &c, err),
                    CN_OK);
    CN_CHECK_EQ_INT(cn_cluster_nodes(c), 3);
    CN_CHECK_EQ_STR(cn_cluster_node(c, 0)->id, "tcp://a:1");
    CN_CHECK_EQ_STR(cn_cluster_node(c, 2)->address, "tcp://c:3");
    CN_CHECK(!cn_cluster_has_zones(c));
    /* the same ring as before cluster files existed: names are endpoints */
    struct cn_ring *a = cn_cluster_ring(c, 168, err);
    const char *names[] = {"tcp://a:1", "tcp://b:2", "tcp://c:3"};
    struct cn_ring *b = cn_ring_new(names, 3, 168, err);
    for (int i = 0; i < 1000; i++) {
        char key[32];
        int n = snprintf(key, sizeof(key), "o/b/%d", i);
        uint32_t x[3], y[3];
        cn_ring_lookup(a, key, (size_t)n, 3, x);
        cn_ring_lookup(b, key, (size_t)n, 3, y);
        CN_CHECK(memcmp(x, y, sizeof(x)) == 0);
    }
    cn_ring_free(a);
    cn_ring_free(b);
    cn_cluster_free(c);
    CN_CHECK_EQ_INT(cn_cluster_from_endpoints(" , ", &c, err), CN_INVAL);
    CN_CHECK_EQ_INT(cn_cluster_from_endpoints("tcp://a:1,tcp://a:1", &c, err), CN_INVAL);
}

/* Six nodes in three zones, N=3: every key gets one replica per zone. */
static void test_cn_cluster_zones(void)
{
    struct cn_cluster *c = test_cluster_parse(
        "node a1 tcp://h:1 zone=a\nnode a2 tcp://h:2 zone=a\n"
        "node b1 tcp://h:3 zone=b\nnode b2 tcp://h:4 zone=b\n"
        "node c1 tcp://h:5 zone=c\nnode c2 tcp://h:6 zone=c\n");
    char err[CN_ERR_LEN];
    struct cn_ring *r = cn_cluster_ring(c, 168, err);
    CN_CHECK_EQ_INT(cn_ring_validate(r), CN_OK);
    for (int i = 0; i < 5000; i++) {
        char key[32];
        int n = snprintf(key, sizeof(key), "key-%d", i);
        uint32_t out[6];
        CN_CHECK_EQ_INT(cn_ring_lookup(r, key, (size_t)n, 3, out), 3);
        const char *z0 = cn_cluster_node(c, out[0])->zone, *z1 = cn_cluster_node(c, out[1])->zone,
                   *z2 = cn_cluster_node(c, out[2])->zone;
        CN_CHECK(strcmp(z0, z1) != 0 && strcmp(z0, z2) != 0 && strcmp(z1, z2) != 0);
        /* more replicas than zones: zones first, then distinct nodes */
        CN_CHECK_EQ_INT(cn_ring_lookup(r, key, (size_t)n, 5, out), 5);
        for (int x = 0; x < 5; x++)
            for (int y = x + 1; y < 5; y++)
                CN_CHECK(out[x] != out[y]);
    }
    cn_ring_free(r);
    cn_cluster_free(c);
}

/* Weight 200 takes about twice the share of weight 100. */
static void test_cn_cluster_weights(void)
{
    struct cn_cluster *c = test_cluster_parse(
        "node s0 tcp://h:1\nnode s1 tcp://h:2\nnode s2 tcp://h:3 weight=200\n");
    char err[CN_ERR_LEN];
    struct cn_ring *r = cn_cluster_ring(c, 168, err);
    CN_CHECK_EQ_INT(cn_ring_validate(r), CN_OK);
    CN_CHECK_EQ_INT(cn_ring_node_points(r, 2), 336);
    CN_CHECK_EQ_INT(cn_ring_total_points(r), 672);
    int primary[3] = {0, 0, 0};
    for (int i = 0; i < 40000; i++) {
        char key[32];
        int n = snprintf(key, sizeof(key), "w-%d", i);
        uint32_t out;
        cn_ring_lookup(r, key, (size_t)n, 1, &out);
        primary[out]++;
    }
    printf("  primaries with weights 100/100/200: %d %d %d\n", primary[0], primary[1],
           primary[2]);
    CN_CHECK(primary[2] > 16000 && primary[2] < 24000);
    CN_CHECK(primary[0] > 7000 && primary[0] < 13000);
    double own = 0;
    for (uint32_t i = 0; i < 3; i++) {
        double o = cn_ring_ownership(r, i);
        own += o;
        /* the arcs predict the primaries counted above */
        CN_CHECK(o > (double)primary[i] / 40000 - 0.02 && o < (double)primary[i] / 40000 + 0.02);
    }
    CN_CHECK(own > 0.999999 && own < 1.000001);
    cn_ring_free(r);
    cn_cluster_free(c);
}

/* Adding a 4th node to 3 moves only the keys it takes: about 1/4 of the
 * primaries, and every key that moves moves to the new node. */
static void test_cn_cluster_join_moves_its_share(void)
{
    struct cn_cluster *c3 = test_cluster_parse("node s0 a\nnode s1 b\nnode s2 c\n");
    struct cn_cluster *c4 = test_cluster_parse("node s0 a\nnode s1 b\nnode s2 c\nnode s3 d\n");
    char err[CN_ERR_LEN];
    struct cn_ring *r3 = cn_cluster_ring(c3, 168, err), *r4 = cn_cluster_ring(c4, 168, err);
    int moved = 0, moved_elsewhere = 0, sets_changed = 0;
    const int keys = 20000;
    for (int i = 0; i < keys; i++) {
        char key[32];
        int n = snprintf(key, sizeof(key), "o/bucket/%d", i);
        uint32_t a[3], b[3];
        cn_ring_lookup(r3, key, (size_t)n, 3, a);
        cn_ring_lookup(r4, key, (size_t)n, 3, b);
        if (a[0] != b[0]) {
            moved++;
            moved_elsewhere += b[0] != 3;
        }
        /* a replica set changes by at most the new node taking one place */
        int lost = 0;
        for (int x = 0; x < 3; x++) {
            int kept = 0;
            for (int y = 0; y < 3; y++)
                kept |= a[x] == b[y];
            lost += !kept;
        }
        CN_CHECK(lost <= 1);
        sets_changed += lost;
    }
    double frac = (double)moved / keys;
    printf("  joining node 4 of 4: %.1f%% of primaries moved (ideal 25%%), %.1f%% of replica "
           "sets changed one member (ideal 75%%)\n", 100 * frac, 100.0 * sets_changed / keys);
    CN_CHECK(frac > 0.18 && frac < 0.32);
    CN_CHECK_EQ_INT(moved_elsewhere, 0);
    cn_ring_free(r3);
    cn_ring_free(r4);
    cn_cluster_free(c3);
    cn_cluster_free(c4);
}

/* The map: version and states parse, the writer's text parses back to the
 * same map, and the editors keep ids unique. */
static void test_cn_cluster_map_roundtrip(void)
{
    struct cn_cluster *c = test_cluster_parse(
        "version 41\n"
        "node s0 tcp://h:1 zone=a\n"
        "node s1 tcp://h:2 weight=200 state=leaving\n"
        "node s2 tcp://h:3 state=active\n");
    CN_CHECK(c != NULL);
    if (c == NULL)
        return;
    CN_CHECK_EQ_INT(cn_cluster_version(c), 41);
    CN_CHECK_EQ_INT(cn_cluster_active_nodes(c), 2);
    CN_CHECK(cn_cluster_node(c, 1)->leaving);
    CN_CHECK(!cn_cluster_node(c, 2)->leaving);
    struct cn_cluster *e = cn_cluster_map_copy(c);
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(cn_cluster_map_add(e, "s3", "tcp://h:4", 100, "b", err), CN_OK);
    CN_CHECK_EQ_INT(cn_cluster_map_add(e, "s3", "tcp://h:5", 100, "", err), CN_INVAL);
    CN_CHECK_EQ_INT(cn_cluster_map_add(e, "s4", "tcp://h:1", 100, "", err), CN_INVAL);
    CN_CHECK_EQ_INT(cn_cluster_map_add(e, "s 4", "tcp://h:6", 100, "", err), CN_INVAL);
    CN_CHECK_EQ_INT(cn_cluster_map_add(e, "s4", "tcp://h:6", 0, "", err), CN_INVAL);
    CN_CHECK_EQ_INT(cn_cluster_map_add(e, "s4", "tcp://h#6", 100, "", err), CN_INVAL);
    cn_cluster_map_remove(e, 0);
    cn_cluster_map_set_leaving(e, 0, 0);
    cn_cluster_map_set_version(e, 42);
    CN_CHECK_EQ_INT(cn_cluster_nodes(e), 3);
    CN_CHECK_EQ_STR(cn_cluster_addresses(e)[0], "tcp://h:2");
    size_t len = 0;
    char *text = cn_cluster_format(e, &len);
    CN_CHECK_EQ_INT(strlen(text), len);
    struct cn_cluster *back = NULL;
    CN_CHECK_EQ_INT(cn_cluster_parse(text, len, &back, err), CN_OK);
    if (back != NULL) {
        CN_CHECK_EQ_INT(cn_cluster_version(back), 42);
        CN_CHECK_EQ_INT(cn_cluster_nodes(back), 3);
        CN_CHECK_EQ_INT(cn_cluster_active_nodes(back), 3);
        CN_CHECK_EQ_STR(cn_cluster_node(back, 0)->id, "s1");
        CN_CHECK_EQ_INT(cn_cluster_node(back, 0)->weight, 200);
        CN_CHECK_EQ_STR(cn_cluster_node(back, 2)->zone, "b");
        CN_CHECK(cn_cluster_has_zones(back));
        size_t len2 = 0;
        char *text2 = cn_cluster_format(back, &len2);
        CN_CHECK(len2 == len && memcmp(text, text2, len) == 0);
        cn_free(text2);
    }
    /* a file without a version line is version 0 */
    struct cn_cluster *plain = test_cluster_parse("node s0 tcp://h:1\n");
    CN_CHECK(plain != NULL && cn_cluster_version(plain) == 0);
    cn_cluster_free(plain);
    cn_cluster_free(back);
    cn_free(text);
    cn_cluster_free(e);
    cn_cluster_free(c);
}

/* A leaving node keeps its index but is never a replica; every other key
 * keeps its replicas in order except where the leaving node was. */
static void test_cn_cluster_leaving_owns_nothing(void)
{
    struct cn_cluster *all = test_cluster_parse(
        "node s0 tcp://h:1\nnode s1 tcp://h:2\nnode s2 tcp://h:3\nnode s3 tcp://h:4\n");
    struct cn_cluster *lv = test_cluster_parse(
        "node s0 tcp://h:1\nnode s1 tcp://h:2 state=leaving\nnode s2 tcp://h:3\n"
        "node s3 tcp://h:4\n");
    char err[CN_ERR_LEN];
    struct cn_ring *ra = cn_cluster_ring(all, 168, err), *rl = cn_cluster_ring(lv, 168, err);
    CN_CHECK(ra != NULL && rl != NULL);
    if (ra == NULL || rl == NULL)
        goto out;
    CN_CHECK_EQ_INT(cn_ring_validate(rl), CN_OK);
    CN_CHECK_EQ_INT(cn_ring_node_points(rl, 1), 0);
    int kept = 0;
    for (int i = 0; i < 2000; i++) {
        char key[32];
        int n = snprintf(key, sizeof(key), "o/b/%d", i);
        uint32_t a[3], l[3];
        CN_CHECK_EQ_INT(cn_ring_lookup(rl, key, (size_t)n, 3, l), 3);
        cn_ring_lookup(ra, key, (size_t)n, 3, a);
        int had = 0;
        for (int k = 0; k < 3; k++) {
            CN_CHECK(l[k] != 1);
            had |= a[k] == 1;
        }
        kept += !had && memcmp(a, l, sizeof(a)) == 0;
        CN_CHECK(had || memcmp(a, l, sizeof(a)) == 0);
    }
    CN_CHECK(kept > 0);
out:
    cn_ring_free(ra);
    cn_ring_free(rl);
    cn_cluster_free(all);
    cn_cluster_free(lv);
}

static const struct cn_test_case cases[] = {
    {"file", test_cn_cluster_file},
    {"errors", test_cn_cluster_errors},
    {"endpoints", test_cn_cluster_endpoints},
    {"zones", test_cn_cluster_zones},
    {"weights", test_cn_cluster_weights},
    {"join_moves_its_share", test_cn_cluster_join_moves_its_share},
    {"map_roundtrip", test_cn_cluster_map_roundtrip},
    {"leaving_owns_nothing", test_cn_cluster_leaving_owns_nothing},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
