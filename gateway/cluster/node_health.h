/* What the gateway believes about each storage node: up or down. Shared by
 * every worker thread of the process (atomics, no locks): a node that fails
 * to answer a request in time (or cannot be sent to) is marked down by
 * whichever thread saw it, one thread then probes it with PING until it
 * answers, and every thread's store sends reads to up nodes first and skips
 * down nodes for writes (recording hints instead, see handoff.h). */
#ifndef GW_NODE_HEALTH_H
#define GW_NODE_HEALTH_H

#include <stdint.h>

struct gw_node_health;

/* All nodes start up. n_nodes >= 1. Free with gw_node_health_free(). */
struct gw_node_health *gw_node_health_new(uint32_t n_nodes);
void gw_node_health_free(struct gw_node_health *h);

uint32_t gw_node_health_nodes(const struct gw_node_health *h);
int gw_node_health_is_up(const struct gw_node_health *h, uint32_t node);

/* The newest protocol version the node speaks, as the `vmax` of its last
 * reply to any thread said (2 for a reply without one; 0 before any
 * reply): which form of a record a request to it may use
 * (storage_client.h). */
void gw_node_health_set_vmax(struct gw_node_health *h, uint32_t node, uint32_t vmax);
uint32_t gw_node_health_vmax(const struct gw_node_health *h, uint32_t node);

/* Marks node down (up). Returns 1 when this call changed the state (the
 * caller logs the transition), 0 when it already was. */
int gw_node_health_mark_down(struct gw_node_health *h, uint32_t node);
int gw_node_health_mark_up(struct gw_node_health *h, uint32_t node);

/* Claims the right to probe a down node: returns 1 for exactly one caller
 * until gw_node_health_release_probe(). */
int gw_node_health_claim_probe(struct gw_node_health *h, uint32_t node);
void gw_node_health_release_probe(struct gw_node_health *h, uint32_t node);

/* Counters for status output. */
struct gw_node_health_stats {
    int up;
    uint64_t marked_down; /* up -> down transitions */
    uint64_t marked_up;   /* down -> up transitions */
    uint64_t down_since_us; /* monotonic time of the last down transition; 0 when up */
    uint64_t up_since_us;   /* monotonic time of the last up transition; 0: up since start */
};
void gw_node_health_stats(const struct gw_node_health *h, uint32_t node,
                          struct gw_node_health_stats *st);

#endif
