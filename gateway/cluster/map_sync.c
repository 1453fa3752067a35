/* The gateway's follower of the cluster map (map_sync.h). One round: a GET
 * of "s/cluster" to each node of the map in use, all at once; each answer
 * that parses competes by (ts, ver); when the last answer is in, the winner
 * is adopted if its version is above the one in use. Never two rounds at
 * once: the timer is armed again only when a round ends. */
#include "map_sync.h"

#include <stdlib.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/cluster.h"
#include "cn/crc.h"
#include "cn/log.h"
#include "cn/metrics.h"
#include "msg/msg.h"

/* The last record version warned about, per node slot. */
struct gw_map_sync_warned {
    uint64_t ts, ver;
};

struct gw_map_sync {
    struct event_base *base;
    struct gw_cluster *cluster;
    struct gw_storage_client *client;
    struct event *timer;
    int64_t interval_ms;
    gw_map_sync_publish_cb publish;
    void *arg;
    uint32_t outstanding;           /* GETs of this round not answered yet */
    struct cn_cluster *best;        /* the newest good map of this round */
    uint64_t best_ts, best_ver;
    struct gw_map_sync_warned warned[GW_STORAGE_CLIENT_MAX_NODES];
    int closed;
    struct cn_metrics *reg;
    uint32_t m_version, m_rejected;
};

static void gw_map_sync_schedule(struct gw_map_sync *ms, int64_t ms_delay)
{
    if (ms->closed)
        return;
    struct timeval tv = {.tv_sec = ms_delay / 1000, .tv_usec = (ms_delay % 1000) * 1000};
    evtimer_add(ms->timer, &tv);
}

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
    gw_map_sync_schedule(ms, ms->interval_ms);
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
    if (ms->closed)
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

static void gw_map_sync_on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_map_sync *ms = arg;
    if (ms->closed)
        return;
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
    ms->interval_ms = interval_ms;
    ms->publish = publish;
    ms->arg = arg;
    ms->timer = evtimer_new(base, gw_map_sync_on_timer, ms);
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
    gw_map_sync_schedule(ms, 0);
    return ms;
}

void gw_map_sync_close(struct gw_map_sync *ms)
{
    if (ms == NULL)
        return;
    ms->closed = 1;
    evtimer_del(ms->timer);
}

void gw_map_sync_free(struct gw_map_sync *ms)
{
    if (ms == NULL)
        return;
    if (ms->outstanding != 0) {   /* a callback still to come would find it freed */
        CN_LOG(CN_LOG_WARN, "cluster map: %u node requests never answered: sync not freed",
               ms->outstanding);
        return;
    }
    event_free(ms->timer);
    cn_cluster_free(ms->best);
    cn_free(ms);
}
