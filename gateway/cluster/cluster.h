/* The gateway's process-wide view of the cluster: the node list (a cluster
 * file or storage.nodes), the ring, the resolved quorums N/W/R/D, the node
 * states every worker shares (node_health.h) and the hint counters
 * (handoff.h). Built at start; each worker attaches its storage client and
 * store to it. A newer cluster map (map_sync.h) becomes a view that every
 * worker applies to its client and store (gw_cluster_apply). N, W, R and D
 * stay as resolved at start. */
#ifndef GW_CLUSTER_H
#define GW_CLUSTER_H

#include <stdint.h>

#include "config.h"
#include "storage_client.h"
#include "store.h"

#include "cn/cluster.h"
#include "cn/ring.h"

struct gw_cluster;

/* Loads cluster.file (or storage.nodes when it is empty), builds the ring
 * and resolves the quorums: N = min(3, nodes), W = 2, R = 1, D = 2 unless
 * set (W, D = 1 when N is 1); each must be 1..N; with storage.auth = curve
 * loads the CURVE keys every worker's client uses. Returns NULL with err on
 * a bad description, setting or key file. */
struct gw_cluster *gw_cluster_new(const struct gw_config *cfg, char err[CN_ERR_LEN]);
void gw_cluster_free(struct gw_cluster *c);

/* The bootstrap description (slot i is its node i: node states, hint
 * counters and per-node metrics are indexed so). */
const struct cn_cluster *gw_cluster_nodes(const struct gw_cluster *c);
/* The ring of the map in use (ring node i = slot i). Any thread. */
const struct cn_ring *gw_cluster_ring(const struct gw_cluster *c);

/* A cluster map as the gateway uses it: the map, its ring over the slots
 * (every node any map named, first seen first) and what a store needs
 * (gw_store_view: the ring, the previous map's ring for reads that miss,
 * the nodes a listing asks). Kept until gw_cluster_free(), so a pointer to
 * one stays valid. */
struct gw_cluster_view;

/* The view in use. Any thread. */
const struct gw_cluster_view *gw_cluster_view(const struct gw_cluster *c);
/* Makes map (copied; its version above the one in use) the view in use and
 * returns it; NULL with err (nothing changed) when its ring cannot be built
 * or the gateway would hold more than 256 nodes. One thread only (the map
 * follower's). Workers switch when they gw_cluster_apply() it. */
const struct gw_cluster_view *gw_cluster_adopt(struct gw_cluster *c, const struct cn_cluster *map,
                                               char err[CN_ERR_LEN]);
uint64_t gw_cluster_view_version(const struct gw_cluster_view *v);
const struct cn_cluster *gw_cluster_view_map(const struct gw_cluster_view *v);
/* The slot (client node index) of the map's node i. */
uint32_t gw_cluster_view_slot(const struct gw_cluster_view *v, uint32_t i);
/* On a worker's thread: connects client to the view's new nodes and
 * switches store to it. CN_ERR with err when a node cannot be connected
 * (the store keeps its ring; the next map tries again). */
int gw_cluster_apply(const struct gw_cluster *c, const struct gw_cluster_view *v,
                     struct gw_storage_client *client, struct gw_store *store,
                     char err[CN_ERR_LEN]);

/* Creates one worker's storage client (with the shared node states) and
 * its store (with the quorums and hint counters). NULL with err on failure.
 * The first client made also watches idle up nodes (storage_client.h), so
 * that a stopped node is marked down without traffic. */
struct gw_storage_client *gw_cluster_client_new(struct gw_cluster *c, struct event_base *base,
                                                void *zmq_ctx, char err[CN_ERR_LEN]);
struct gw_store *gw_cluster_store_new(struct gw_cluster *c, struct gw_storage_client *client);

/* "3 storage nodes (N=3 W=2 R=1 D=2)" for the start-up log line. */
void gw_cluster_describe(const struct gw_cluster *c, char *out, size_t len);

/* The readiness view (GET /_cairn/ready): 1 when every replica set of the
 * ring (the N nodes of some ring position) has at least W and R nodes that
 * the shared node states (node_health.h) hold up; else 0 with why (a line
 * naming the short sets and the down nodes). Any thread. */
int gw_cluster_ready(const struct gw_cluster *c, char *why, size_t len);

/* The resolved quorums (GET /_cairn/status). */
void gw_cluster_quorum_values(const struct gw_cluster *c, uint32_t *n, uint32_t *w,
                              uint32_t *r, uint32_t *d);

struct gw_node_health *gw_cluster_health(const struct gw_cluster *c);
struct gw_handoff *gw_cluster_handoff(const struct gw_cluster *c);

#endif
