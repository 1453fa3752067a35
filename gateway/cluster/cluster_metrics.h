/* The gateway's view of its storage nodes as metrics (docs/operations.md):
 * per node up/down and down transitions, request latency, requests that
 * failed without a reply (timeout, send), pending/added/replayed/dropped
 * hints, and repair writes by cause (read repair, hint replay); read
 * repairs started and slice retries for the whole gateway. Process-wide:
 * registered once before the workers start (server.c); recording is one
 * cn_metrics_add or _observe into the calling thread's shard, and nothing
 * at all when metrics are off (metrics.port 0) or in unit tests. Node
 * states and hint queues are read at scrape time. */
#ifndef GW_CLUSTER_METRICS_H
#define GW_CLUSTER_METRICS_H

#include <stdint.h>

struct cn_metrics;
struct gw_cluster;

/* Registers every series of every node slot in reg (label node = the
 * node's id; the slots past c's start-up nodes hidden until named:
 * 11 series, 28 metric slots of 8 bytes per node slot and recording
 * thread, 56 KiB per thread for the 256 slots), and a collect callback
 * reading c's node states and hints; c must outlive reg's scrapes. Before
 * any recording; once per process. */
void gw_cluster_metrics_register(struct cn_metrics *reg, struct gw_cluster *c);

/* The gateway's node slots ids[0..n) (cluster.c: every node any map named,
 * first seen first) now have names: the series of the slots not named
 * before are shown with label node = the slot's id (registered for every
 * slot a gateway can know, GW_STORAGE_CLIENT_MAX_NODES, hidden until then;
 * a slot that takes an id an older slot had hides the older one's). On the
 * map follower's thread, after the slots are appended; the strings stay
 * the cluster's (kept until it is freed, after the last scrape). */
void gw_cluster_metrics_name_slots(const char *const *ids, uint32_t n);

/* A reply from node came us after its request was sent. */
void gw_cluster_metrics_node_reply(uint32_t node, uint64_t us);
/* A request to node failed without a reply: timeout 1 (no answer in time)
 * or 0 (it could not be sent). */
void gw_cluster_metrics_node_failed(uint32_t node, int timeout);
/* A repair wrote to node (a stale replica): hint 1 when it replays a hint,
 * 0 when a read saw the replica stale. */
void gw_cluster_metrics_repair_write(uint32_t node, int hint);
/* A read saw a stale or silent replica and started a key repair. */
void gw_cluster_metrics_read_repair(void);
/* A slice read (large-object GET) failed on one replica and went on to the
 * next (an error, a timeout, a bad checksum or a missing chunk). */
void gw_cluster_metrics_slice_retry(void);
/* A quorum read's answers were late and it asked the other replicas too. */
void gw_cluster_metrics_read_widened(void);

#endif
