/* Hinted handoff: the keys each storage node missed while it was down or did
 * not acknowledge a write. Shared by the worker threads of a gateway (one
 * mutex); each thread's store adds hints when a replica is skipped or fails,
 * and replays the hints of nodes that are up again by repairing those keys
 * from the other replicas (repair.h), so replicas converge. A key is held
 * once per node however often it was written. Hints live in memory: a
 * gateway restart or an overflow (max_hints, counted as dropped) loses them,
 * and the anti-entropy repair (cairn-admin repair) covers that case. */
#ifndef GW_HANDOFF_H
#define GW_HANDOFF_H

#include <stddef.h>
#include <stdint.h>

struct gw_handoff;

/* max_hints bounds the hints held per node. Free with gw_handoff_free(). */
struct gw_handoff *gw_handoff_new(uint32_t n_nodes, uint64_t max_hints);
void gw_handoff_free(struct gw_handoff *h);

/* Records that node misses key. Returns 1 when added, 0 when the key was
 * already pending for node, -1 when the node's queue is full (dropped). */
int gw_handoff_add(struct gw_handoff *h, uint32_t node, const void *key, size_t key_len);

/* One taken hint: key is a heap copy the caller frees with cn_free(). */
struct gw_handoff_hint {
    char *key;
    size_t key_len;
};

/* Takes up to max of node's hints, oldest first, into out; returns how many.
 * A taken hint is no longer pending (re-add it if its replay fails). */
uint32_t gw_handoff_take(struct gw_handoff *h, uint32_t node, struct gw_handoff_hint *out,
                         uint32_t max);

/* Counts a successful replay (for status). */
void gw_handoff_replayed(struct gw_handoff *h, uint32_t node, uint64_t n);

struct gw_handoff_stats {
    uint64_t pending;
    uint64_t added;
    uint64_t replayed;
    uint64_t dropped;
};
void gw_handoff_stats(struct gw_handoff *h, uint32_t node, struct gw_handoff_stats *st);

/* Pending hints of node, without the lock (may be a moment stale). */
uint64_t gw_handoff_pending(const struct gw_handoff *h, uint32_t node);

/* Checks the invariants (list and table agree, counts match); CN_OK or
 * CN_CORRUPT. For unit tests. */
int gw_handoff_validate(struct gw_handoff *h);

#endif
