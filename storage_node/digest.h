/* The DIGEST op on a storage node (protocol 1.1): record counts and digest
 * sums of the sub-ranges of a key range, read from the index only (no
 * container reads), for repair by difference (docs/cluster.md). */
#ifndef SN_DIGEST_H
#define SN_DIGEST_H

#include "server.h"

/* Answers a decoded DIGEST request on an I/O thread; ends in
 * sn_server_reply() or sn_server_reply_error(). Reads at most the node's
 * max_digest_scan index entries; memory is fanout sums plus two keys. */
void sn_digest_handle(struct sn_job *j);

#endif
