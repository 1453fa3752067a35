/* cairn-admin rebalance status|throttle: the rebalance worker's system
 * record ("s/rebalance", written by the gateway holding the lease:
 * gateway/cluster/rebalance.h), read as its newest copy on the nodes of the
 * cluster map in use. throttle writes the rate into that record, on every
 * node of the map, with a timestamp above the newest; the worker re-reads
 * it every round (docs/cluster.md). */
#ifndef ADM_REBALANCE_H
#define ADM_REBALANCE_H

#include <stdint.h>

#include "cn/cluster.h"
#include "msg/curve.h"

#define ADM_REBALANCE_KEY "s/rebalance"

struct adm_rebalance_opts {
    const struct cn_cluster *map;   /* the cluster map in use */
    uint32_t replicas;              /* N for the ETA's key count; 0: min(3, active nodes) */
    int timeout_ms;
    const struct msg_curve_client *curve;
    int json;
};

/* The known fields of the record (0 / "" when absent). */
struct adm_rebalance_fields {
    int has;   /* a record that parses was found */
    char holder[128], state[16];
    uint64_t lease_until, done, from, to, scanned, copied, bytes, purged, failed;
    uint64_t started, updated, finished, throttle;
    int has_throttle;
};

/* Reads the newest copy of the record on the map's nodes into *f (has 0
 * when none parses). Returns how many nodes answered. */
uint32_t adm_rebalance_fetch(const struct adm_rebalance_opts *o, struct adm_rebalance_fields *f);

/* Prints the progress (text: a few lines; json: one object). 0 when some
 * node answered, 1 when none did. */
int adm_rebalance_status(const struct adm_rebalance_opts *o);

/* The status as a JSON value (an object, or null when no record) after
 * `"rebalance": ` in node status's object, or as one text line. */
void adm_rebalance_summary(const struct adm_rebalance_opts *o);

/* Sets the throttle to rate (a size: 50M, 0 = no limit; "off" = back to
 * the gateways' rebalance.throttle). 0 done, 1 failed, 2 bad rate. */
int adm_rebalance_throttle(const struct adm_rebalance_opts *o, const char *rate);

#endif
