/* cairn-admin repair: anti-entropy over the whole cluster. Every node's keys
 * (tombstones included) are read in order, page by page, and merged; for
 * each key the newest version (ts, then ver) over all nodes wins, and each of
 * the key's N ring replicas that holds an older version or nothing is sent
 * the winner (the same bytes, etag, meta, ts and ver, or the same
 * tombstone). Nodes apply a write only when it is newer, so a repair running
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
    const struct msg_curve_client *curve; /* keys toward the nodes (NULL: none) */
};

struct adm_repair_counts {
    uint64_t keys;         /* distinct keys seen */
    uint64_t differences;  /* (key, replica) pairs older or missing */
    uint64_t repaired;     /* of those, written */
    uint64_t failed;       /* writes or reads that failed */
    uint64_t bytes;        /* data bytes copied */
};

/* Runs the repair; prints progress lines to stdout. Returns CN_OK when every
 * node could be listed (counts say what was found and done), or CN_IO with
 * err when a node did not answer a LIST (the repair stops: it cannot tell
 * what that node holds). */
int adm_repair_run(const struct cn_cluster *cl, const struct adm_repair_opts *o,
                   struct adm_repair_counts *out, char err[CN_ERR_LEN]);

#endif
