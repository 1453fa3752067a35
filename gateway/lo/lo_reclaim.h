/* Reclaiming the chunks of large objects that nothing references any more:
 * the chunks of an overwritten or deleted object (after a delay, so reads
 * that began before the overwrite can finish), of a failed or abandoned PUT
 * or part upload (at once: no reader ever saw them), of an aborted multipart
 * upload. Each worker thread owns one; jobs delete chunk records (tombstones
 * newer than the chunks) with a bounded number of deletes in flight.
 *
 * Jobs live in memory only: a gateway that stops before a job ran leaves
 * those chunks behind (logged at shutdown with the count) for the chunk
 * collector (s3/collector.h), which deletes them once no parent names them
 * and they are older than collector.grace. */
#ifndef GW_LO_RECLAIM_H
#define GW_LO_RECLAIM_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "lo_map.h"
#include "store.h"

struct gw_lo_reclaim;

struct gw_lo_reclaim *gw_lo_reclaim_new(struct event_base *base, struct gw_store *store);

/* Stops issuing deletes: jobs still waiting are dropped (logged), and new
 * ones are refused. Call before the store's client is freed (its pending
 * callbacks then only count down). */
void gw_lo_reclaim_close(struct gw_lo_reclaim *rc);

/* Frees rc and every job (after gw_lo_reclaim_close and after the storage
 * client failed its pending requests). NULL is a no-op. */
void gw_lo_reclaim_free(struct gw_lo_reclaim *rc);

/* Schedules the deletion of every chunk of segs[0..n) of the object okey
 * ("o/...") delay_ms from now (0: at once, from the loop). The arguments are
 * copied. reqid tags the log lines and the tombstones' ver. */
void gw_lo_reclaim_segs(struct gw_lo_reclaim *rc, const char *okey, size_t okey_len,
                        const struct gw_lo_seg *segs, uint32_t n, int64_t delay_ms,
                        uint64_t reqid);

/* Deletes the object record okey ("o/...") the way DeleteObject does:
 * reads the record first (a large object's chunk map), writes a tombstone
 * newer than it (ver), and once that succeeded schedules its chunks for
 * deletion after delay_ms. cb gets the tombstone write's result. For callers
 * that delete many keys (DeleteObjects). */
void gw_lo_reclaim_delete_object(struct gw_lo_reclaim *rc, const char *okey, size_t okey_len,
                                 uint64_t ver, int64_t delay_ms, gw_store_cb cb, void *arg);

/* gw_lo_reclaim_delete_object() of one version only: the version written
 * at ts (as a listing showed it). When the record read is another version
 * (overwritten since) or gone, cb gets CN_AGAIN and nothing is written;
 * otherwise the tombstone is written at ts + 1, so an overwrite that lands
 * meanwhile (a later ts) wins over it. For the lifecycle worker. */
void gw_lo_reclaim_delete_version(struct gw_lo_reclaim *rc, const char *okey, size_t okey_len,
                                  uint64_t ver, uint64_t ts, int64_t delay_ms, gw_store_cb cb,
                                  void *arg);

/* Jobs waiting or running, and chunk deletes done (for tests and stats). */
uint64_t gw_lo_reclaim_pending(const struct gw_lo_reclaim *rc);
uint64_t gw_lo_reclaim_deleted(const struct gw_lo_reclaim *rc);

#endif
