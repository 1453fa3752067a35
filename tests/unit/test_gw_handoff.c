/* Hint counters (gateway/cluster/handoff.c): node ids both ways (from a slot
 * table that grows as maps add nodes; a replaced id names its newest slot),
 * the holders' counts summed per node as holders report and add, the added /
 * replayed / dropped counters; node states (gateway/cluster/node_health.c). */
#include <stdio.h>
#include <string.h>

#include "handoff.h"
#include "node_health.h"

#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/test.h"

CN_TEST_GLOBALS;

#define TEST_SLOTS 256

/* A slot table like the gateway's (cluster.c): 256 rows, the first three
 * named a, bb, c. */
static const char *test_gw_handoff_ids_table[TEST_SLOTS] = {"a", "bb", "c"};

static struct gw_handoff *test_gw_handoff_new(void)
{
    struct gw_handoff *h = gw_handoff_new(test_gw_handoff_ids_table, TEST_SLOTS);
    gw_handoff_set_nodes(h, 3);
    return h;
}

static void test_gw_handoff_ids(void)
{
    struct gw_handoff *h = test_gw_handoff_new();
    CN_CHECK_EQ_INT(gw_handoff_nodes(h), 3);
    CN_CHECK(strcmp(gw_handoff_node_id(h, 1), "bb") == 0);
    CN_CHECK_EQ_INT(gw_handoff_node_find(h, "bb", 2), 1);
    CN_CHECK_EQ_INT(gw_handoff_node_find(h, "b", 1), -1);     /* a prefix is not an id */
    CN_CHECK_EQ_INT(gw_handoff_node_find(h, "bbb", 3), -1);
    CN_CHECK_EQ_INT(gw_handoff_node_find(h, "tcp://127.0.0.1:1", 17), -1); /* ids only */
    gw_handoff_free(h);
}

/* Slots a later map adds: unnamed until published, then found, counted
 * and held like the first ones (their counters exist from the start). */
static void test_gw_handoff_added_slots(void)
{
    const char *ids[TEST_SLOTS] = {"a", "bb", "c", "d", "bb"};
    struct gw_handoff *h = gw_handoff_new(ids, TEST_SLOTS);
    gw_handoff_set_nodes(h, 3);
    CN_CHECK_EQ_INT(gw_handoff_node_find(h, "d", 1), -1);   /* not published yet */
    gw_handoff_set_nodes(h, 4);                            /* a map added d */
    CN_CHECK_EQ_INT(gw_handoff_nodes(h), 4);
    CN_CHECK_EQ_INT(gw_handoff_node_find(h, "d", 1), 3);
    CN_CHECK(strcmp(gw_handoff_node_id(h, 3), "d") == 0);
    gw_handoff_added(h, 0, 3);
    gw_handoff_set_held(h, 3, 1, 5);                       /* d holds hints for bb */
    CN_CHECK_EQ_INT(gw_handoff_pending(h, 3), 1);
    CN_CHECK_EQ_INT(gw_handoff_pending(h, 1), 5);
    CN_CHECK_EQ_INT(gw_handoff_validate(h), CN_OK);
    /* bb replaced under its id at a new address: the id names the new slot */
    gw_handoff_set_nodes(h, 5);
    CN_CHECK_EQ_INT(gw_handoff_node_find(h, "bb", 2), 4);
    /* the last slot a gateway can hold */
    ids[TEST_SLOTS - 1] = "z";
    for (uint32_t i = 5; i < TEST_SLOTS - 1; i++)
        ids[i] = "filler";
    gw_handoff_set_nodes(h, TEST_SLOTS);
    CN_CHECK_EQ_INT(gw_handoff_node_find(h, "z", 1), TEST_SLOTS - 1);
    gw_handoff_added(h, 3, TEST_SLOTS - 1);
    CN_CHECK_EQ_INT(gw_handoff_pending(h, TEST_SLOTS - 1), 1);
    CN_CHECK_EQ_INT(gw_handoff_validate(h), CN_OK);
    gw_handoff_free(h);
}

static void test_gw_handoff_held(void)
{
    struct gw_handoff *h = test_gw_handoff_new();
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
    {"added_slots", test_gw_handoff_added_slots},
    {"held", test_gw_handoff_held},
    {"node_health", test_gw_node_health},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
