/* Hinted handoff, the gateway's view. Hints themselves live on the storage
 * nodes (storage_node/hint.h): when a write misses a replica, the store asks
 * a replica that took it to keep a hint (HINT_ADD), and one thread's replay
 * driver (hint_replay.h) asks the nodes for the hints of nodes that are up
 * (HINT_TAKE) and repairs those keys (repair.h). So a gateway keeps nothing
 * a restart could lose; this module only counts, per node, what this
 * gateway added, replayed and dropped, and remembers what each holder last
 * said it holds for each node (the "pending" of status and metrics, and the
 * read order: a node with hints waiting is read last). One mutex; shared by
 * the worker threads. */
#ifndef GW_HANDOFF_H
#define GW_HANDOFF_H

#include <stddef.h>
#include <stdint.h>

struct gw_handoff;

/* Node indexes are the gateway's node slots (cluster.h: every node any
 * cluster map named, in the order first seen, at most max_nodes). ids is
 * the slot table's id column (max_nodes entries, owned by the caller and
 * outliving the handoff): hints name their node by its ring id, ids[i].
 * Slots are named as maps add nodes (gw_handoff_set_nodes). Free with
 * gw_handoff_free(). Memory: max_nodes² counters, sized once (256 slots:
 * 512 KiB), so a node a later map adds needs no resize. */
struct gw_handoff *gw_handoff_new(const char *const *ids, uint32_t max_nodes);
void gw_handoff_free(struct gw_handoff *h);

/* ids[0..n) are set (n only grows; one thread calls it, after writing
 * ids[n - 1]); other threads see them once they see the count. */
void gw_handoff_set_nodes(struct gw_handoff *h, uint32_t n);
/* The slots named so far. Any thread. */
uint32_t gw_handoff_nodes(const struct gw_handoff *h);
/* The ring id of node i < gw_handoff_nodes (what HINT_ADD and HINT_TAKE
 * carry). */
const char *gw_handoff_node_id(const struct gw_handoff *h, uint32_t node);
/* The node whose ring id is the id_len bytes at id, or -1. When two slots
 * carry the id (a node replaced under its id at a new address), the later
 * one: the node that holds the id now. */
int gw_handoff_node_find(const struct gw_handoff *h, const void *id, size_t id_len);

/* holder kept a new hint for node (a HINT_ADD answered OK). */
void gw_handoff_added(struct gw_handoff *h, uint32_t holder, uint32_t node);
/* No replica kept a hint for node: the write it missed waits for
 * anti-entropy (cairn-admin repair). */
void gw_handoff_dropped(struct gw_handoff *h, uint32_t node);
/* n hints of node were replayed (the key repaired on node). */
void gw_handoff_replayed(struct gw_handoff *h, uint32_t node, uint64_t n);
/* holder says it holds count hints for node (a HINT_TAKE reply). */
void gw_handoff_set_held(struct gw_handoff *h, uint32_t holder, uint32_t node, uint64_t count);

struct gw_handoff_stats {
    uint64_t pending;    /* hints for the node on its holders, as last seen */
    uint64_t added;      /* hints this gateway had a holder keep */
    uint64_t replayed;   /* hints this gateway replayed */
    uint64_t dropped;    /* writes it missed that no holder would keep a hint of */
};
void gw_handoff_stats(struct gw_handoff *h, uint32_t node, struct gw_handoff_stats *st);

/* Pending hints of node, without the lock (may be a moment stale). */
uint64_t gw_handoff_pending(const struct gw_handoff *h, uint32_t node);

/* Checks that every node's pending is the sum of its holders' counts;
 * CN_OK or CN_CORRUPT. For unit tests. */
int gw_handoff_validate(struct gw_handoff *h);

#endif
