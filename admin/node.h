/* cairn-admin node add|decommission|remove|replace|status: membership
 * changes through the cluster map (docs/cluster.md). decommission and
 * replace --wait wait for the gateways' rebalance worker (the record
 * s/rebalance: rebalance.h) to walk the new map, then verify by a dry-run
 * repair pass that every key has its N copies on active nodes. The map is the record
 * "s/cluster" (cn/cluster.h's text with a version line) kept on every node
 * of the map, not only on its ring replicas, so that a gateway finds it
 * whatever the ring became; the newest record (ts, then ver) wins and a
 * gateway takes a map whose version is above its own. The cluster file is
 * the bootstrap: the current map is the newest record found on the file's
 * nodes (and on the nodes that map names), or the file itself when its
 * version is higher or no node holds a map. Each change writes version + 1
 * to every node of the old and the new map. */
#ifndef ADM_NODE_H
#define ADM_NODE_H

#include <stdint.h>

#include "cn/cluster.h"
#include "msg/curve.h"

#define ADM_NODE_MAP_KEY "s/cluster"

struct adm_node_opts {
    const struct cn_cluster *file;   /* the bootstrap (--cluster) */
    uint32_t replicas;               /* N; 0: min(3, active nodes) */
    uint32_t vnodes;
    int timeout_ms;
    const struct msg_curve_client *curve;
    int json;
    int verbose;
    int wait;      /* decommission/replace: wait until every key has N copies */
    int repair;    /* with wait: copy by cairn-admin's own repair passes, not the
                    * gateways' rebalance worker */
    int worker_timeout_s; /* with wait: give up when no gateway's worker walks the
                           * new map for this long (0: 60) */
    int force;     /* remove: also a node that is not leaving */
    const char *given; /* how file was given, for messages ("--cluster file",
                        * "--nodes list"); NULL: "nodes given" */
    int quiet_no_map;  /* adm_node_map: say nothing when no node holds a map
                        * (file is then the whole cluster, as given) */
};

/* The cluster map in use (as `node status` finds it): the newest map held
 * on the nodes of o->file (and on the nodes that map names), or o->file
 * itself when no node holds one or its version is higher. Every
 * cairn-admin command that talks to the cluster takes its nodes from here.
 * Says on stderr when no node answered, when the nodes answered with no
 * map (o->file is used as given; unless quiet_no_map), when the file's version wins, and when
 * the nodes that answered hold different versions (each one's, and which
 * is used). A copy the caller frees with cn_cluster_free(); NULL when no
 * map can be trusted (said on stderr). */
struct cn_cluster *adm_node_map(const struct adm_node_opts *o);

/* Runs `node SUB ARGS...` (args[0] is SUB). Returns the exit status: 0
 * done, 1 failed (said on stderr), 2 bad usage. */
int adm_node_run(const struct adm_node_opts *o, char *const *args, uint32_t n_args);

#endif
