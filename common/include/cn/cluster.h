/* The cluster description shared by gateways, cairn-admin and the test
 * harnesses: the storage nodes (id, address, weight, zone) that make up the
 * ring. Read from a small text file (docs/cluster.md), or built from a plain
 * comma-separated endpoint list (then each node's id is its endpoint, which
 * is what gateways without a cluster file have always placed keys by).
 * The same text with a `version N` line is the cluster map the nodes keep
 * (record s/cluster, docs/cluster.md): cn_cluster_format() writes it and the
 * cn_cluster_map_* calls edit a private copy before it is shared. Immutable
 * once shared. */
#ifndef CN_CLUSTER_H
#define CN_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "cn/rc.h"
#include "cn/ring.h"

#define CN_CLUSTER_MAX_NODES 256
#define CN_CLUSTER_MAX_NAME 255

struct cn_cluster;

struct cn_cluster_node {
    char *id;      /* the name the ring places keys by */
    char *address; /* ZeroMQ endpoint, e.g. tcp://10.201.0.11:7001 */
    uint32_t weight; /* 100 = normal share of the ring */
    char *zone;    /* failure domain, "" when none */
    int leaving;   /* state=leaving: read from, but owns no ring position */
};

/* The most bytes a cluster map may take (file or record). */
#define CN_CLUSTER_MAP_MAX (1u << 20)

/* Parses a cluster file's text (len bytes, need not be NUL-terminated):
 *
 *   # comment
 *   version <0..2^63-1>          (at most once; absent: version 0)
 *   node <id> <address> [weight=<1..10000>] [zone=<name>] [state=active|leaving]
 *
 * one node per line, ids and addresses unique, at least one node active. On success *out owns a new
 * description (cn_cluster_free). On error returns CN_INVAL with err naming
 * the line, and *out is NULL. */
int cn_cluster_parse(const char *text, size_t len, struct cn_cluster **out,
                     char err[CN_ERR_LEN]);

/* cn_cluster_parse() of the file at path (CN_IO when it cannot be read). */
int cn_cluster_load(const char *path, struct cn_cluster **out, char err[CN_ERR_LEN]);

/* A description from "ep1,ep2, ep3": id = address = endpoint, weight 100,
 * no zones. Errors as cn_cluster_parse (an empty list is one). */
int cn_cluster_from_endpoints(const char *list, struct cn_cluster **out, char err[CN_ERR_LEN]);

void cn_cluster_free(struct cn_cluster *c);

uint32_t cn_cluster_nodes(const struct cn_cluster *c);
/* Node i (0 <= i < nodes); valid as long as c. */
const struct cn_cluster_node *cn_cluster_node(const struct cn_cluster *c, uint32_t i);
/* Index of the node with this id or address, or -1. */
int cn_cluster_find(const struct cn_cluster *c, const char *id_or_address);
/* Whether any node names a zone. */
int cn_cluster_has_zones(const struct cn_cluster *c);

/* The ring of this cluster (node i of the ring is node i here), vnodes points
 * per weight 100; a leaving node keeps its index with no point (weight 0),
 * so it is never a replica. NULL with err on failure; free with
 * cn_ring_free(). */
struct cn_ring *cn_cluster_ring(const struct cn_cluster *c, uint32_t vnodes, char err[CN_ERR_LEN]);

/* The addresses as an array of n strings owned by c (for transports). */
char *const *cn_cluster_addresses(const struct cn_cluster *c);

/* The map version (the `version` line; 0 when absent). */
uint64_t cn_cluster_version(const struct cn_cluster *c);
/* Nodes not leaving. */
uint32_t cn_cluster_active_nodes(const struct cn_cluster *c);

/* The map as text that cn_cluster_parse() reads back to the same
 * description: the version line, then one node line per node in order.
 * Returns a NUL-terminated heap string (cn_free) of *len bytes. */
char *cn_cluster_format(const struct cn_cluster *c, size_t *len);

/* A private copy to edit (cn_cluster_free). */
struct cn_cluster *cn_cluster_map_copy(const struct cn_cluster *c);
void cn_cluster_map_set_version(struct cn_cluster *c, uint64_t version);
/* Appends an active node (strings copied). CN_INVAL with err when the id or
 * address is taken, too long, the weight is out of 1..10000, or the map is
 * full; c is then unchanged. */
int cn_cluster_map_add(struct cn_cluster *c, const char *id, const char *address,
                       uint32_t weight, const char *zone, char err[CN_ERR_LEN]);
/* Removes node i (later nodes move down one index). */
void cn_cluster_map_remove(struct cn_cluster *c, uint32_t i);
/* Marks node i leaving (1) or active (0). */
void cn_cluster_map_set_leaving(struct cn_cluster *c, uint32_t i, int leaving);

#endif
