/* Repair of one key across its replicas: ask every replica for the key's
 * version (HEAD), take the newest (ts, then ver; a tombstone counts), and
 * write it — the same bytes, etag, meta, ts and ver, or the same tombstone —
 * to every replica that holds an older version or nothing. The nodes apply a
 * write only when it is newer than what they hold, so a repair racing a
 * client's write can never undo it. Used by read repair (a read saw a stale
 * replica) and by hinted handoff (a node is back). */
#ifndef GW_REPAIR_H
#define GW_REPAIR_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

#define GW_REPAIR_MAX_REPLICAS 16

struct gw_repair_result {
    int rc;              /* CN_OK: every replica answered and each stale one was written */
    uint32_t stale;      /* replicas found older or empty */
    uint32_t written;    /* of those, brought up to date */
    uint32_t n_failed;   /* replicas that could not be read or written */
    uint32_t failed[GW_REPAIR_MAX_REPLICAS];
    uint64_t bytes;      /* data bytes written to stale replicas (a record's length per write) */
    /* gw_repair_key_from() only: the extra nodes that hold a live copy or a
     * tombstone of key, with its version (the copies a rebalance may purge) */
    uint32_t n_extra_held;
    uint32_t extra_held[GW_REPAIR_MAX_REPLICAS];
    uint64_t extra_ts[GW_REPAIR_MAX_REPLICAS], extra_ver[GW_REPAIR_MAX_REPLICAS];
    int newest_live;     /* the newest version found is a live record (not a tombstone) */
    uint64_t newest_ts, newest_ver;
};

typedef void (*gw_repair_cb)(const struct gw_repair_result *res, void *arg);

/* Repairs key (copied) on its replicas. cb (may be NULL) runs once, later,
 * from the store's event loop. */
void gw_repair_key(struct gw_store *s, const void *key, size_t key_len, gw_repair_cb cb,
                   void *arg);

/* gw_repair_key() that also HEADs the nodes in extra (at most
 * GW_REPAIR_MAX_REPLICAS in all with the replicas; nodes that are replicas
 * are skipped): they count when the newest version is chosen and may be the
 * source of the copy, but are never written. A rebalance passes the nodes
 * of the map that no longer own key, so a key whose every replica moved is
 * still copied, and res->extra_held says which of them hold a copy. */
void gw_repair_key_from(struct gw_store *s, const void *key, size_t key_len,
                        const uint32_t *extra, uint32_t n_extra, gw_repair_cb cb, void *arg);

/* Whether failed[] of res names node. */
int gw_repair_result_failed(const struct gw_repair_result *res, uint32_t node);

#endif
