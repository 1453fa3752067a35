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

uint32_t cn_ring_nodes(const struct cn_ring *r);

/* The 64-bit hash the ring places keys with (FNV-1a, then a splitmix64
 * finaliser so that similar keys spread). */
uint64_t cn_ring_hash(const void *key, size_t len);

/* Fills out[] with up to n distinct node indexes (0..n_nodes-1) for key, the
 * primary first. Returns how many were written: min(n, nodes). */
uint32_t cn_ring_lookup(const struct cn_ring *r, const void *key, size_t len, uint32_t n,
                        uint32_t *out);

/* Checks the invariants (points sorted, every node owns vnodes points);
 * returns CN_OK or CN_CORRUPT. For unit tests. */
int cn_ring_validate(const struct cn_ring *r);

#endif
