/* Per-node metrics of the gateway (cluster_metrics.h): ids per node slot,
 * registered once for every slot a gateway can know (hidden until a map
 * names the slot); the collect callback sets the values the cluster
 * already keeps (node states, hint counters). */
#include "cluster_metrics.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "cluster.h"
#include "handoff.h"
#include "node_health.h"
#include "storage_client.h"

#include "cn/alloc.h"
#include "cn/cluster.h"
#include "cn/metrics.h"

struct gw_cluster_metrics_node {
    uint32_t up, marked_down, duration, timeouts, send_failures;
    uint32_t hints, hints_added, hints_replayed, hints_dropped;
    uint32_t repairs_read, repairs_hint;
    const char *id;   /* the label shown (the cluster's slot id or start-up node's); NULL: hidden */
};

#define GW_CLUSTER_METRICS_SERIES 11   /* series per node: the ids above */

static struct {
    struct cn_metrics *reg;   /* NULL: not counting */
    struct gw_cluster *cluster;
    uint32_t n_nodes;         /* every slot (registered) */
    _Atomic uint32_t n_named; /* slots named so far: the collect callback reads these */
    struct gw_cluster_metrics_node *nodes;
    uint32_t read_repairs, slice_retries, reads_widened;
} gw_cluster_metrics;

/* Storage request latencies: 50 us to 10 s (in us). */
static const uint64_t gw_cluster_metrics_bounds[] = {
    50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000,
    1000000, 2500000, 10000000};

static void gw_cluster_metrics_collect(struct cn_metrics *reg, void *arg)
{
    (void)arg;
    struct gw_node_health *h = gw_cluster_health(gw_cluster_metrics.cluster);
    struct gw_handoff *ho = gw_cluster_handoff(gw_cluster_metrics.cluster);
    uint32_t named = atomic_load(&gw_cluster_metrics.n_named);
    for (uint32_t i = 0; i < named; i++) {
        const struct gw_cluster_metrics_node *n = &gw_cluster_metrics.nodes[i];
        struct gw_node_health_stats st;
        gw_node_health_stats(h, i, &st);
        cn_metrics_set(reg, n->up, st.up ? 1 : 0);
        cn_metrics_set(reg, n->marked_down, (int64_t)st.marked_down);
        struct gw_handoff_stats hs = {0};
        if (ho != NULL)
            gw_handoff_stats(ho, i, &hs);
        cn_metrics_set(reg, n->hints, (int64_t)hs.pending);
        cn_metrics_set(reg, n->hints_added, (int64_t)hs.added);
        cn_metrics_set(reg, n->hints_replayed, (int64_t)hs.replayed);
        cn_metrics_set(reg, n->hints_dropped, (int64_t)hs.dropped);
    }
}

/* The series of one node slot, in their order in the struct. */
static void gw_cluster_metrics_ids(const struct gw_cluster_metrics_node *x,
                                   uint32_t out[GW_CLUSTER_METRICS_SERIES])
{
    const uint32_t ids[GW_CLUSTER_METRICS_SERIES] = {
        x->up, x->marked_down, x->duration, x->timeouts, x->send_failures, x->hints,
        x->hints_added, x->hints_replayed, x->hints_dropped, x->repairs_read, x->repairs_hint};
    memcpy(out, ids, sizeof(ids));
}

/* The extra label of each series ({"reason"|"cause", value} or none). */
static const char *const gw_cluster_metrics_extra[GW_CLUSTER_METRICS_SERIES][2] = {
    {NULL, NULL}, {NULL, NULL}, {NULL, NULL}, {"reason", "timeout"}, {"reason", "send"},
    {NULL, NULL}, {NULL, NULL}, {NULL, NULL}, {NULL, NULL}, {"cause", "read"},
    {"cause", "hint"}};

/* Shows (id != NULL, with node = id) or hides slot i's series. */
static void gw_cluster_metrics_label(uint32_t i, const char *id)
{
    struct gw_cluster_metrics_node *x = &gw_cluster_metrics.nodes[i];
    uint32_t ids[GW_CLUSTER_METRICS_SERIES];
    gw_cluster_metrics_ids(x, ids);
    for (uint32_t k = 0; k < GW_CLUSTER_METRICS_SERIES; k++) {
        const char *l[] = {"node", id, gw_cluster_metrics_extra[k][0],
                           gw_cluster_metrics_extra[k][1], NULL};
        if (id != NULL)
            cn_metrics_show(gw_cluster_metrics.reg, ids[k], l);
        else
            cn_metrics_hide(gw_cluster_metrics.reg, ids[k]);
    }
    x->id = id;
}

void gw_cluster_metrics_name_slots(const char *const *ids, uint32_t n)
{
    if (gw_cluster_metrics.reg == NULL)
        return;
    n = CN_MIN(n, gw_cluster_metrics.n_nodes);
    for (uint32_t i = atomic_load(&gw_cluster_metrics.n_named); i < n; i++) {
        /* a node replaced under its id (a new address: a new slot) takes
         * over the id's series: the old slot's are hidden, so no two
         * series share their labels */
        for (uint32_t j = 0; j < i; j++)
            if (gw_cluster_metrics.nodes[j].id != NULL &&
                strcmp(gw_cluster_metrics.nodes[j].id, ids[i]) == 0)
                gw_cluster_metrics_label(j, NULL);
        gw_cluster_metrics_label(i, ids[i]);
        atomic_store(&gw_cluster_metrics.n_named, i + 1);
    }
}

void gw_cluster_metrics_register(struct cn_metrics *reg, struct gw_cluster *c)
{
    const struct cn_cluster *cl = gw_cluster_nodes(c);
    uint32_t n = GW_STORAGE_CLIENT_MAX_NODES, boot = cn_cluster_nodes(cl);
    gw_cluster_metrics.nodes = cn_calloc(n, sizeof(*gw_cluster_metrics.nodes));
    gw_cluster_metrics.n_nodes = n;
    gw_cluster_metrics.cluster = c;
    uint32_t nb = (uint32_t)(sizeof(gw_cluster_metrics_bounds) /
                             sizeof(gw_cluster_metrics_bounds[0]));
    for (uint32_t i = 0; i < n; i++) {
        struct gw_cluster_metrics_node *x = &gw_cluster_metrics.nodes[i];
        char spare[24];
        snprintf(spare, sizeof(spare), "\x01slot%u", i);   /* hidden until named */
        const char *id = i < boot ? cn_cluster_node(cl, i)->id : spare;
        x->id = i < boot ? id : NULL;
        const char *l[] = {"node", id, NULL};
        const char *lt[] = {"node", id, "reason", "timeout", NULL};
        const char *ls[] = {"node", id, "reason", "send", NULL};
        const char *lr[] = {"node", id, "cause", "read", NULL};
        const char *lh[] = {"node", id, "cause", "hint", NULL};
        x->up = cn_metrics_gauge(reg, "cairn_gateway_node_up",
                                 "1 while the gateway holds the storage node up, 0 while down "
                                 "(no reply within storage.request_timeout, until a probe "
                                 "is answered)", 0, l);
        x->marked_down = cn_metrics_counter(reg, "cairn_gateway_node_marked_down_total",
                                            "Times the gateway marked the node down", 0, l);
        x->duration = cn_metrics_histogram(
            reg, "cairn_gateway_node_request_duration_seconds",
            "Time from sending a request to a storage node to its reply (replies only)", -6,
            l, gw_cluster_metrics_bounds, nb);
        static const char fail_help[] = "Requests to a storage node that got no reply: no "
                                        "answer in time (timeout) or not sent (send)";
        x->timeouts = cn_metrics_counter(reg, "cairn_gateway_node_request_failures_total",
                                         fail_help, 0, lt);
        x->send_failures = cn_metrics_counter(reg, "cairn_gateway_node_request_failures_total",
                                              fail_help, 0, ls);
        x->hints = cn_metrics_gauge(reg, "cairn_gateway_node_hints",
                                    "Hints for the node kept on the other storage nodes, as "
                                    "they last said (hinted handoff)", 0, l);
        x->hints_added = cn_metrics_counter(reg, "cairn_gateway_node_hints_added_total",
                                            "Hints for the node this gateway had a replica keep (HINT_ADD)", 0, l);
        x->hints_replayed = cn_metrics_counter(reg, "cairn_gateway_node_hints_replayed_total",
                                               "Hints for the node this gateway replayed (key repaired on it, hint dropped)", 0, l);
        x->hints_dropped = cn_metrics_counter(reg, "cairn_gateway_node_hints_dropped_total",
                                              "Writes the node missed that no replica "
                                              "would keep a hint of (full or failing)", 0, l);
        static const char rep_help[] = "Records or tombstones a repair wrote to the node (a "
                                       "stale replica), by cause: read repair or hint replay";
        x->repairs_read = cn_metrics_counter(reg, "cairn_gateway_node_repair_writes_total",
                                             rep_help, 0, lr);
        x->repairs_hint = cn_metrics_counter(reg, "cairn_gateway_node_repair_writes_total",
                                             rep_help, 0, lh);
    }
    gw_cluster_metrics.reg = reg;
    for (uint32_t i = boot; i < n; i++)
        gw_cluster_metrics_label(i, NULL);
    atomic_store(&gw_cluster_metrics.n_named, boot);
    gw_cluster_metrics.read_repairs = cn_metrics_counter(
        reg, "cairn_gateway_read_repairs_total",
        "Key repairs started because a read saw a stale or silent replica", 0, NULL);
    gw_cluster_metrics.slice_retries = cn_metrics_counter(
        reg, "cairn_gateway_lo_slice_retries_total",
        "Slice reads of large-object GETs that failed on one replica (error, timeout, bad "
        "checksum, missing chunk) and were asked of the next", 0, NULL);
    gw_cluster_metrics.reads_widened = cn_metrics_counter(
        reg, "cairn_gateway_reads_widened_total",
        "Quorum reads whose R answers were late (four times the average read time, 2 ms at least) "
        "and that asked the replicas not asked yet", 0, NULL);
    cn_metrics_on_collect(reg, gw_cluster_metrics_collect, NULL);
}

void gw_cluster_metrics_node_reply(uint32_t node, uint64_t us)
{
    if (gw_cluster_metrics.reg != NULL && node < gw_cluster_metrics.n_nodes)
        cn_metrics_observe(gw_cluster_metrics.reg, gw_cluster_metrics.nodes[node].duration, us);
}

void gw_cluster_metrics_node_failed(uint32_t node, int timeout)
{
    if (gw_cluster_metrics.reg == NULL || node >= gw_cluster_metrics.n_nodes)
        return;
    const struct gw_cluster_metrics_node *n = &gw_cluster_metrics.nodes[node];
    cn_metrics_add(gw_cluster_metrics.reg, timeout ? n->timeouts : n->send_failures, 1);
}

void gw_cluster_metrics_repair_write(uint32_t node, int hint)
{
    if (gw_cluster_metrics.reg == NULL || node >= gw_cluster_metrics.n_nodes)
        return;
    const struct gw_cluster_metrics_node *n = &gw_cluster_metrics.nodes[node];
    cn_metrics_add(gw_cluster_metrics.reg, hint ? n->repairs_hint : n->repairs_read, 1);
}

void gw_cluster_metrics_read_repair(void)
{
    if (gw_cluster_metrics.reg != NULL)
        cn_metrics_add(gw_cluster_metrics.reg, gw_cluster_metrics.read_repairs, 1);
}

void gw_cluster_metrics_slice_retry(void)
{
    if (gw_cluster_metrics.reg != NULL)
        cn_metrics_add(gw_cluster_metrics.reg, gw_cluster_metrics.slice_retries, 1);
}

void gw_cluster_metrics_read_widened(void)
{
    if (gw_cluster_metrics.reg != NULL)
        cn_metrics_add(gw_cluster_metrics.reg, gw_cluster_metrics.reads_widened, 1);
}
