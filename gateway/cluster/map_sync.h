/* The gateway's follower of the cluster map kept on the nodes
 * (docs/cluster.md): on one worker's loop, every interval it reads the
 * record "s/cluster" from every node of the map in use (GET to each node:
 * the record is on all of them, not only on its ring replicas, so the
 * ring's own change cannot hide it), keeps the newest (ts, then ver) of
 * those that parse and, when its map version is above the one in use,
 * makes it the cluster's view (gw_cluster_adopt) and hands the view to
 * publish(), which has every worker apply it. A record that does not parse
 * is left out with a warning (once per node and version): the last good
 * map stays. Memory: one map text per node asked during a round (at most
 * CN_CLUSTER_MAP_MAX each, usually a few hundred bytes), and every view
 * adopted (cluster.h) until the gateway stops.
 * The timer, one round at a time and the close/free protocol are
 * sysrec.h's, shared with the keys follower (auth/key_sync.h). */
#ifndef GW_MAP_SYNC_H
#define GW_MAP_SYNC_H

#include <stdint.h>

#include <event2/event.h>

#include "cluster.h"
#include "storage_client.h"

struct gw_map_sync;
struct cn_metrics;

#define GW_MAP_SYNC_KEY "s/cluster"

/* Called on the sync's loop with the view just adopted. */
typedef void (*gw_map_sync_publish_cb)(const struct gw_cluster_view *v, void *arg);

/* Starts following every interval_ms (> 0) on base through client (both
 * outlive the sync); the first round runs half a second after start (or
 * after interval_ms when shorter). reg NULL: no metrics,
 * else cairn_gateway_cluster_map_version and _map_rejected_total. */
struct gw_map_sync *gw_map_sync_new(struct event_base *base, struct gw_cluster *cluster,
                                    struct gw_storage_client *client, int64_t interval_ms,
                                    struct cn_metrics *reg, gw_map_sync_publish_cb publish,
                                    void *arg);
/* Stops the timer; replies still to come do nothing. Call before the
 * storage client is freed (which fails what is in flight). */
void gw_map_sync_close(struct gw_map_sync *ms);
/* Frees the sync after gw_map_sync_close() and the client's free. NULL ok. */
void gw_map_sync_free(struct gw_map_sync *ms);

#endif
