/* Hint queues (gateway/cluster/handoff.c): FIFO order, one hint per key and node,
 * the bound, and taking hints back; node states (gateway/cluster/node_health.c). */
#include <stdio.h>
#include <string.h>

#include "handoff.h"
#include "node_health.h"

#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/test.h"

CN_TEST_GLOBALS;

static void test_gw_handoff_fifo_dedupe(void)
{
    struct gw_handoff *h = gw_handoff_new(3, 100);
    CN_CHECK_EQ_INT(gw_handoff_add(h, 1, "a", 1), 1);
    CN_CHECK_EQ_INT(gw_handoff_add(h, 1, "b", 1), 1);
    CN_CHECK_EQ_INT(gw_handoff_add(h, 1, "a", 1), 0);  /* already pending */
    CN_CHECK_EQ_INT(gw_handoff_add(h, 2, "a", 1), 1);  /* other node */
    CN_CHECK_EQ_INT(gw_handoff_add(h, 1, "ab", 2), 1);
    CN_CHECK_EQ_INT(gw_handoff_validate(h), CN_OK);
    CN_CHECK_EQ_INT(gw_handoff_pending(h, 1), 3);
    CN_CHECK_EQ_INT(gw_handoff_pending(h, 0), 0);
    struct gw_handoff_hint out[4];
    CN_CHECK_EQ_INT(gw_handoff_take(h, 1, out, 2), 2);
    CN_CHECK(out[0].key_len == 1 && out[0].key[0] == 'a');
    CN_CHECK(out[1].key_len == 1 && out[1].key[0] == 'b');
    cn_free(out[0].key);
    cn_free(out[1].key);
    CN_CHECK_EQ_INT(gw_handoff_validate(h), CN_OK);
    /* taken: the same key can be hinted again */
    CN_CHECK_EQ_INT(gw_handoff_add(h, 1, "a", 1), 1);
    CN_CHECK_EQ_INT(gw_handoff_take(h, 1, out, 4), 2);
    CN_CHECK(out[0].key_len == 2 && memcmp(out[0].key, "ab", 2) == 0);
    CN_CHECK(out[1].key_len == 1 && out[1].key[0] == 'a');
    cn_free(out[0].key);
    cn_free(out[1].key);
    CN_CHECK_EQ_INT(gw_handoff_take(h, 1, out, 4), 0);
    gw_handoff_replayed(h, 1, 4);
    struct gw_handoff_stats st;
    gw_handoff_stats(h, 1, &st);
    CN_CHECK_EQ_INT(st.pending, 0);
    CN_CHECK_EQ_INT(st.added, 4);
    CN_CHECK_EQ_INT(st.replayed, 4);
    CN_CHECK_EQ_INT(gw_handoff_validate(h), CN_OK);
    gw_handoff_free(h); /* node 2's hint is freed here */
}

static void test_gw_handoff_bound(void)
{
    struct gw_handoff *h = gw_handoff_new(1, 1000);
    char key[32];
    for (int i = 0; i < 1500; i++) {
        int n = snprintf(key, sizeof(key), "k%d", i);
        CN_CHECK_EQ_INT(gw_handoff_add(h, 0, key, (size_t)n), i < 1000 ? 1 : -1);
    }
    struct gw_handoff_stats st;
    gw_handoff_stats(h, 0, &st);
    CN_CHECK_EQ_INT(st.pending, 1000);
    CN_CHECK_EQ_INT(st.dropped, 500);
    CN_CHECK_EQ_INT(gw_handoff_validate(h), CN_OK);
    struct gw_handoff_hint out[64];
    uint32_t total = 0, got;
    while ((got = gw_handoff_take(h, 0, out, 64)) > 0) {
        for (uint32_t i = 0; i < got; i++) {
            int n = snprintf(key, sizeof(key), "k%u", total + i);
            CN_CHECK(out[i].key_len == (size_t)n && memcmp(out[i].key, key, (size_t)n) == 0);
            cn_free(out[i].key);
        }
        total += got;
    }
    CN_CHECK_EQ_INT(total, 1000);
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
    {"fifo_dedupe", test_gw_handoff_fifo_dedupe},
    {"bound", test_gw_handoff_bound},
    {"node_health", test_gw_node_health},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
