/* Consistent-hash ring with virtual nodes (LeoFS: 168 per node). A key's
 * replicas are the first N distinct nodes met walking clockwise from the
 * key's hash, so adding or removing a node moves only about 1/nodes of the
 * keys. Immutable once built: threads may share one ring without locks. */
#ifndef CN_RING_H
#define CN_RING_H

#include <stddef.h>
#include <stdint.h>

#include "cn/rc.h"

struct cn_ring;

/* Builds a ring over n_nodes nodes named names[i] (e.g. their endpoints: the
 * name, not the position, decides the points, so every gateway with the same
 * node list builds the same ring). vnodes points per node. Returns NULL when
 * n_nodes is 0, vnodes is 0 or a name is repeated (err says why). The caller
 * frees it with cn_ring_free(). */
struct cn_ring *cn_ring_new(const char *const *names, uint32_t n_nodes, uint32_t vnodes,
                            char err[CN_ERR_LEN]);
void cn_ring_free(struct cn_ring *r);

/* Like cn_ring_new with per-node weights and zones. weights[i] scales node
 * i's points: vnodes * weight / 100 (at least 1), so 100 is the normal
 * weight and 200 takes twice the share; weights NULL means 100 each. Weight
 * 0 places no point: the node keeps its index but is never a replica (a
 * node leaving the cluster); at least one node must weigh more. zones[i]
 * names node i's failure domain (NULL or "" = none); when zones is not NULL,
 * cn_ring_lookup() picks replicas in distinct zones first and only then
 * fills up with further distinct nodes. Errors as cn_ring_new, plus every
 * weight 0. */
struct cn_ring *cn_ring_new_weighted(const char *const *names, const uint32_t *weights,
                                     const char *const *zones, uint32_t n_nodes,
                                     uint32_t vnodes, char err[CN_ERR_LEN]);

/* Node i's number of points (its share of the ring is that over the total). */
uint32_t cn_ring_node_points(const struct cn_ring *r, uint32_t node);
uint32_t cn_ring_total_points(const struct cn_ring *r);

/* The share of the hash space for which node is the primary (0..1): the
 * arcs that end at its points. */
double cn_ring_ownership(const struct cn_ring *r, uint32_t node);

uint32_t cn_ring_nodes(const struct cn_ring *r);

/* The 64-bit hash the ring places keys with (FNV-1a, then a splitmix64
 * finaliser so that similar keys spread). */
uint64_t cn_ring_hash(const void *key, size_t len);

/* Fills out[] with up to n distinct node indexes (0..n_nodes-1) for key, the
 * primary first (distinct zones first on a ring with zones). Returns how
 * many were written: min(n, nodes). */
uint32_t cn_ring_lookup(const struct cn_ring *r, const void *key, size_t len, uint32_t n,
                        uint32_t *out);

/* Like cn_ring_lookup for the keys that land on point i (0 ..
 * cn_ring_total_points() - 1, in ring order): every key's replicas are those
 * of one point, so walking every point visits every replica set (readiness
 * checks). Returns how many were written: min(n, nodes). */
uint32_t cn_ring_replicas_at(const struct cn_ring *r, uint32_t i, uint32_t n, uint32_t *out);

/* The hash of point i (0 .. cn_ring_total_points() - 1, ascending): point
 * i takes the keys hashing into (hash of point i-1, hash of point i], point
 * 0 also those above the last point's hash (repair by difference sends
 * these arcs to the nodes). */
uint64_t cn_ring_point_hash(const struct cn_ring *r, uint32_t i);

/* Checks the invariants (points sorted, every node owns its points);
 * returns CN_OK or CN_CORRUPT. For unit tests. */
int cn_ring_validate(const struct cn_ring *r);

#endif
