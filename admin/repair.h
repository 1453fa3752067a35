/* cairn-admin repair: anti-entropy over the whole cluster, by difference
 * (the default) or in full (--full, or when a node speaks protocol 1.0).
 * By difference: for each replica set of the ring, the set's nodes are asked
 * for record counts and digest sums of key ranges (DIGEST), top-down; only
 * ranges whose digests differ are split further, and only the keys of the
 * differing leaf ranges are listed (repair_digest.c). In full: every node's
 * keys (tombstones included) are read in order, page by page, and merged.
 * Either way, for each key listed the newest version (ts, then ver) wins,
 * and each of the key's N ring replicas that holds an older version or
 * nothing is sent the winner (the same bytes, etag, meta, ts and ver, or
 * the same tombstone). Nodes apply a write only when it is newer, so a repair running
 * while clients write never undoes their writes. A node that lost its disk is
 * refilled this way while the cluster serves. */
#ifndef ADM_REPAIR_H
#define ADM_REPAIR_H

#include <stdint.h>

#include "cn/cluster.h"
#include "msg/curve.h"

struct adm_repair_opts {
    uint32_t replicas;  /* N */
    uint32_t vnodes;    /* ring points per weight 100 */
    int timeout_ms;     /* per request */
    int dry_run;        /* count differences, write nothing */
    int verbose;        /* print each difference */
    int full;           /* list every key of every node (the pass before 1.1) */
    uint32_t fanout;    /* digest pass: most sub-ranges per DIGEST request (0: 64;
                         * fewer for a range known to hold few records) */
    uint32_t leaf_keys; /* digest pass: list a differing range at or below this
                         * many records (0: 4) */
    const struct msg_curve_client *curve; /* keys toward the nodes (NULL: none) */
    int skip_unplaced;  /* leave out s/cluster (on every node, not by the ring) and the
                         * workers' records their holders rewrite every round
                         * (s/rebalance, s/collector, s/lifecycle): node --wait's
                         * passes (a newer but malformed map on a few nodes is not
                         * spread, a lease record being rewritten is no difference) */
    int against_leaving; /* decommission's check (implies full): only the keys a leaving
                          * node holds count, and a replica differs when it lacks the
                          * leaving nodes' newest copy (ts, ver; a tombstone is a
                          * version) or holds an older one; a newer version in flight
                          * is no difference. A repair copies the overall newest. */
    uint64_t written_before_us; /* replace's check: a key whose newest copy is stamped at or
                                 * after this (ts, µs; written while every gateway already
                                 * used the new map, so its own quorum and hints place it)
                                 * is not counted; 0: every key counts */
};

struct adm_repair_counts {
    uint64_t keys;         /* distinct keys seen */
    uint64_t differences;  /* (key, replica) pairs older or missing */
    uint64_t leaving_keys; /* against_leaving: distinct keys a leaving node holds */
    uint64_t recent;       /* written_before_us: keys left out as written after it */
    uint64_t repaired;     /* of those, written */
    uint64_t failed;       /* writes or reads that failed */
    uint64_t bytes;        /* data bytes copied */
    uint64_t listed;       /* LIST entries received, over all nodes */
    uint64_t requests;     /* requests sent to the nodes */
    uint64_t bytes_read;   /* reply bytes received (header and payload frames) */
    uint64_t ranges_compared;  /* digest pass: ranges whose sums were compared */
    uint64_t ranges_differing; /* of their sub-ranges, those that differed */
    uint64_t leaves;           /* differing ranges whose keys were listed */
    int digest;            /* 1: the digest pass ran, 0: the full pass */
};

/* Runs the repair; prints progress lines to stdout. Returns CN_OK when every
 * node could be listed (counts say what was found and done), or CN_IO with
 * err when a node did not answer a LIST (the repair stops: it cannot tell
 * what that node holds). */
int adm_repair_run(const struct cn_cluster *cl, const struct adm_repair_opts *o,
                   struct adm_repair_counts *out, char err[CN_ERR_LEN]);

#endif
