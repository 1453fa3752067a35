/* The gateway's follower of the cluster map (map_sync.h). One round: a GET
 * of "s/cluster" to each node of the map in use, all at once; each answer
 * that parses competes by (ts, ver); when the last answer is in, the winner
 * is adopted if its version is above the one in use. The timer, one round
 * at a time and the close protocol are the system record follower's
 * (sysrec.h), shared with the keys follower. */
#include "map_sync.h"

#include "sysrec.h"

#include <stdlib.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/cluster.h"
#include "cn/crc.h"
#include "cn/log.h"
#include "cn/metrics.h"
#include "msg/msg.h"

#define GW_MAP_SYNC_FIRST_MS 500   /* the first round, after start */

/* The last record version warned about, per node slot. */
struct gw_map_sync_warned {
    uint64_t ts, ver;
};

struct gw_map_sync {
    struct event_base *base;
    struct gw_cluster *cluster;
    struct gw_storage_client *client;
    struct gw_sysrec *w;            /* the timer and the requests in flight */
    gw_map_sync_publish_cb publish;
    void *arg;
    uint32_t outstanding;           /* GETs of this round not answered yet (+1 while sending) */
    struct cn_cluster *best;        /* the newest good map of this round */
    uint64_t best_ts, best_ver;
    struct gw_map_sync_warned warned[GW_STORAGE_CLIENT_MAX_NODES];
    struct cn_metrics *reg;
    uint32_t m_version, m_rejected;
};

/* The round is over: adopt the winner when it is newer than the map in use. */
static void gw_map_sync_round_end(struct gw_map_sync *ms)
{
    const struct gw_cluster_view *cur = gw_cluster_view(ms->cluster);
    if (ms->best != NULL && cn_cluster_version(ms->best) > gw_cluster_view_version(cur)) {
        char err[CN_ERR_LEN];
        const struct gw_cluster_view *v = gw_cluster_adopt(ms->cluster, ms->best, err);
        if (v == NULL) {
            CN_LOG(CN_LOG_ERROR, "cluster map version %llu not used: %s",
                   (unsigned long long)cn_cluster_version(ms->best), err);
        } else {
            CN_LOG(CN_LOG_INFO, "cluster map version %llu in use: %u nodes, %u leaving (was "
                   "version %llu)", (unsigned long long)gw_cluster_view_version(v),
                   cn_cluster_nodes(ms->best),
                   cn_cluster_nodes(ms->best) - cn_cluster_active_nodes(ms->best),
                   (unsigned long long)gw_cluster_view_version(cur));
            if (ms->reg != NULL)
                cn_metrics_set(ms->reg, ms->m_version, (int64_t)gw_cluster_view_version(v));
            ms->publish(v, ms->arg);
        }
    }
    cn_cluster_free(ms->best);
    ms->best = NULL;
    gw_sysrec_round_end(ms->w);
}

/* Parses a node's record; warns once per (node, record version) when it
 * does not parse. Returns the map or NULL. */
static struct cn_cluster *gw_map_sync_parse(struct gw_map_sync *ms,
                                            const struct gw_storage_reply *r)
{
    const struct msg *m = &r->m;
    char why[CN_ERR_LEN] = "";
    struct cn_cluster *map = NULL;
    if (m->payload.len > CN_CLUSTER_MAP_MAX)
        snprintf(why, sizeof(why), "larger than %u bytes", CN_CLUSTER_MAP_MAX);
    else if (cn_crc32c(0, m->payload.ptr, m->payload.len) != m->crc)
        snprintf(why, sizeof(why), "payload fails its crc");
    else if (cn_cluster_parse((const char *)m->payload.ptr, m->payload.len, &map, why) == CN_OK)
        return map;
    struct gw_map_sync_warned *w = &ms->warned[r->node];
    if (w->ts != m->ts || w->ver != m->ver) {
        w->ts = m->ts;
        w->ver = m->ver;
        CN_LOG(CN_LOG_WARN, "cluster map record on node %u left out (the last good map "
               "stays): %s", r->node, why);
        if (ms->reg != NULL)
            cn_metrics_add(ms->reg, ms->m_rejected, 1);
    }
    return NULL;
}

/* One node's answer: a good map newer (ts, ver) than the round's best
 * replaces it. Absent records, failures and timeouts count for nothing. */
static void gw_map_sync_on_reply(struct gw_storage_reply *r, void *arg)
{
    struct gw_map_sync *ms = arg;
    ms->outstanding--;
    if (gw_sysrec_op_done(ms->w))
        return;
    if (r->rc == CN_OK && r->m.st == MSG_ST_OK) {
        struct cn_cluster *map = gw_map_sync_parse(ms, r);
        if (map != NULL && (ms->best == NULL || r->m.ts > ms->best_ts ||
                            (r->m.ts == ms->best_ts && r->m.ver > ms->best_ver))) {
            cn_cluster_free(ms->best);
            ms->best = map;
            ms->best_ts = r->m.ts;
            ms->best_ver = r->m.ver;
        } else {
            cn_cluster_free(map);
        }
    }
    if (ms->outstanding == 0)
        gw_map_sync_round_end(ms);
}

/* The follower's round (sysrec.h): a GET to every node of the map in use. */
static void gw_map_sync_round(void *arg)
{
    struct gw_map_sync *ms = arg;
    const struct gw_cluster_view *v = gw_cluster_view(ms->cluster);
    const struct cn_cluster *map = gw_cluster_view_map(v);
    uint32_t connected = gw_storage_client_nodes(ms->client);
    ms->outstanding = 1;   /* a guard while sending */
    for (uint32_t i = 0; i < cn_cluster_nodes(map); i++) {
        uint32_t slot = gw_cluster_view_slot(v, i);
        if (slot >= connected)
            continue;   /* this loop's client connects it when it applies the view */
        struct msg m;
        msg_init_request(&m, MSG_OP_GET, 0);
        m.key = (struct msg_bytes){(const uint8_t *)GW_MAP_SYNC_KEY, strlen(GW_MAP_SYNC_KEY)};
        MSG_SET(&m, MSG_F_KEY);
        ms->outstanding++;
        gw_sysrec_op_start(ms->w);
        gw_storage_client_send(ms->client, slot, &m, NULL, gw_map_sync_on_reply, ms);
    }
    if (--ms->outstanding == 0)
        gw_map_sync_round_end(ms);
}

struct gw_map_sync *gw_map_sync_new(struct event_base *base, struct gw_cluster *cluster,
                                    struct gw_storage_client *client, int64_t interval_ms,
                                    struct cn_metrics *reg, gw_map_sync_publish_cb publish,
                                    void *arg)
{
    CN_ASSERT(interval_ms > 0);
    struct gw_map_sync *ms = cn_calloc(1, sizeof(*ms));
    ms->base = base;
    ms->cluster = cluster;
    ms->client = client;
    ms->publish = publish;
    ms->arg = arg;
    ms->reg = reg;
    if (reg != NULL) {
        ms->m_version = cn_metrics_gauge(reg, "cairn_gateway_cluster_map_version",
                                         "Version of the cluster map this gateway uses (0: the "
                                         "file or storage.nodes without a version)", 0, NULL);
        ms->m_rejected = cn_metrics_counter(reg, "cairn_gateway_cluster_map_rejected_total",
                                            "Cluster map records that did not parse (left out; "
                                            "the last good map stayed)", 0, NULL);
        cn_metrics_set(reg, ms->m_version,
                       (int64_t)gw_cluster_view_version(gw_cluster_view(cluster)));
    }
    /* not at once: a send while the connections are still being set up
     * fails and would mark every node down (storage_client.h) */
    ms->w = gw_sysrec_new(base, CN_MIN(interval_ms, GW_MAP_SYNC_FIRST_MS), interval_ms,
                          gw_map_sync_round, ms);
    return ms;
}

void gw_map_sync_close(struct gw_map_sync *ms)
{
    if (ms == NULL)
        return;
    gw_sysrec_close(ms->w);
}

void gw_map_sync_free(struct gw_map_sync *ms)
{
    if (ms == NULL)
        return;
    if (!gw_sysrec_free(ms->w, "cluster map"))   /* a callback still to come would find it */
        return;
    cn_cluster_free(ms->best);
    cn_free(ms);
}
