/* Hint counters (gateway/cluster/handoff.c): node ids both ways, the holders'
 * counts summed per node as holders report and add, the added / replayed /
 * dropped counters; node states (gateway/cluster/node_health.c). */
#include <stdio.h>
#include <string.h>

#include "handoff.h"
#include "node_health.h"

#include "cn/alloc.h"
#include "cn/cluster.h"
#include "cn/rc.h"
#include "cn/test.h"

CN_TEST_GLOBALS;

static struct cn_cluster *test_gw_handoff_cluster(void)
{
    static const char text[] = "node a tcp://127.0.0.1:1\nnode bb tcp://127.0.0.1:2\n"
                               "node c tcp://127.0.0.1:3\n";
    struct cn_cluster *c = NULL;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(cn_cluster_parse(text, sizeof(text) - 1, &c, err), CN_OK);
    return c;
}

static void test_gw_handoff_ids(void)
{
    struct cn_cluster *c = test_gw_handoff_cluster();
    struct gw_handoff *h = gw_handoff_new(c);
    CN_CHECK_EQ_INT(gw_handoff_nodes(h), 3);
    CN_CHECK(strcmp(gw_handoff_node_id(h, 1), "bb") == 0);
    CN_CHECK_EQ_INT(gw_handoff_node_find(h, "bb", 2), 1);
    CN_CHECK_EQ_INT(gw_handoff_node_find(h, "b", 1), -1);     /* a prefix is not an id */
    CN_CHECK_EQ_INT(gw_handoff_node_find(h, "bbb", 3), -1);
    CN_CHECK_EQ_INT(gw_handoff_node_find(h, "tcp://127.0.0.1:1", 17), -1); /* ids only */
    gw_handoff_free(h);
    cn_cluster_free(c);
}

static void test_gw_handoff_held(void)
{
    struct cn_cluster *c = test_gw_handoff_cluster();
    struct gw_handoff *h = gw_handoff_new(c);
    struct gw_handoff_stats st;
    /* node 2 missed writes: holders 0 and 1 keep hints for it */
    gw_handoff_added(h, 0, 2);
    gw_handoff_added(h, 0, 2);
    gw_handoff_added(h, 1, 2);
    CN_CHECK_EQ_INT(gw_handoff_pending(h, 2), 3);
    CN_CHECK_EQ_INT(gw_handoff_pending(h, 0), 0);
    CN_CHECK_EQ_INT(gw_handoff_validate(h), CN_OK);
    /* a holder's report replaces what was counted for it (another gateway
     * added hints too, or some were replayed) */
    gw_handoff_set_held(h, 0, 2, 10);
    CN_CHECK_EQ_INT(gw_handoff_pending(h, 2), 11);
    gw_handoff_set_held(h, 1, 2, 0);
    CN_CHECK_EQ_INT(gw_handoff_pending(h, 2), 10);
    gw_handoff_set_held(h, 0, 2, 4);   /* lower: replayed meanwhile */
    CN_CHECK_EQ_INT(gw_handoff_pending(h, 2), 4);
    CN_CHECK_EQ_INT(gw_handoff_validate(h), CN_OK);
    gw_handoff_replayed(h, 2, 6);
    gw_handoff_dropped(h, 2);
    gw_handoff_stats(h, 2, &st);
    CN_CHECK_EQ_INT(st.pending, 4);
    CN_CHECK_EQ_INT(st.added, 3);
    CN_CHECK_EQ_INT(st.replayed, 6);
    CN_CHECK_EQ_INT(st.dropped, 1);
    gw_handoff_set_held(h, 0, 2, 0);
    CN_CHECK_EQ_INT(gw_handoff_pending(h, 2), 0);
    CN_CHECK_EQ_INT(gw_handoff_validate(h), CN_OK);
    gw_handoff_free(h);
    cn_cluster_free(c);
}

static void test_gw_node_health(void)
{
    struct gw_node_health *h = gw_node_health_new(3);
    CN_CHECK(gw_node_health_is_up(h, 0) && gw_node_health_is_up(h, 2));
    CN_CHECK_EQ_INT(gw_node_health_mark_down(h, 1), 1);
    CN_CHECK_EQ_INT(gw_node_health_mark_down(h, 1), 0);
    CN_CHECK(!gw_node_health_is_up(h, 1));
    CN_CHECK_EQ_INT(gw_node_health_claim_probe(h, 1), 1);
    CN_CHECK_EQ_INT(gw_node_health_claim_probe(h, 1), 0);
    struct gw_node_health_stats st;
    gw_node_health_stats(h, 1, &st);
    CN_CHECK(!st.up && st.marked_down == 1 && st.down_since_us > 0);
    CN_CHECK_EQ_INT(gw_node_health_mark_up(h, 1), 1);
    CN_CHECK_EQ_INT(gw_node_health_mark_up(h, 1), 0);
    gw_node_health_release_probe(h, 1);
    CN_CHECK_EQ_INT(gw_node_health_claim_probe(h, 1), 1);
    gw_node_health_stats(h, 1, &st);
    CN_CHECK(st.up && st.marked_up == 1 && st.down_since_us == 0);
    gw_node_health_free(h);
}

static const struct cn_test_case cases[] = {
    {"ids", test_gw_handoff_ids},
    {"held", test_gw_handoff_held},
    {"node_health", test_gw_node_health},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
