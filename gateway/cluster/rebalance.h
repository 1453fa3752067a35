/* The rebalance worker: after a cluster map change, copies every key (a
 * key whose newest version is a tombstone too) to the replicas the new ring
 * gives it (the repair path, repair.h, with the map's other nodes as
 * sources) and then purges the copies on nodes that no longer own it
 * (PURGE: only the exact version that was copied, never a newer write, no
 * tombstone; never a system record). It runs on worker 0 of every gateway; one at
 * a time works, the one holding the lease kept in the system record
 * "s/rebalance" (the workers' lease, lease.h), which also
 * holds the walk's cursor (so another gateway resumes where a dead holder
 * stopped), its counters for `cairn-admin rebalance status`, and the
 * throttle `cairn-admin rebalance throttle` sets (re-read every round).
 *
 * Memory: one listing page (rebalance.page keys, each under 1.1 KiB) and
 * rebalance.inflight key repairs (one record's data each) at a time. */
#ifndef GW_REBALANCE_H
#define GW_REBALANCE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "repair.h"

struct gw_store;
struct gw_cluster;
struct cn_metrics;

#define GW_REBALANCE_KEY "s/rebalance"

struct gw_rebalance_opts {
    uint64_t interval_us;  /* rebalance.interval: how often an idle worker looks */
    uint64_t lease_us;     /* rebalance.lease_time */
    uint64_t settle_us;    /* wait between claiming the lease and reading it back */
    uint32_t inflight;     /* rebalance.inflight: key repairs at once */
    uint32_t page;         /* keys per listing page */
    uint64_t default_bps;  /* rebalance.throttle: bytes/s when the record sets none; 0 = no limit */
    int purge;             /* rebalance.purge: remove the copies non-owners hold */
    uint64_t map_delay_us; /* a walk starts this long after this gateway took the map, so
                              every gateway writes by it (2 x the map follower's delay) */
    const char *holder;    /* this gateway's name in the lease (copied) */
};

struct gw_rebalance;

/* Creates the worker on base (the thread of store) and arms its first tick;
 * cluster gives the map version in use; reg (NULL: none) gets its series. */
struct gw_rebalance *gw_rebalance_new(struct event_base *base, struct gw_store *store,
                                      const struct gw_cluster *cluster,
                                      const struct gw_rebalance_opts *o, struct cn_metrics *reg);

/* Stops: no new operation starts. Before the store's client is freed. */
void gw_rebalance_close(struct gw_rebalance *rb);

/* Frees rb after close and the client's free (a worker with operations
 * never answered is left, logged). NULL: no-op. */
void gw_rebalance_free(struct gw_rebalance *rb);

/* 1 when data[len] parses as the record (a msgpack map whose known keys
 * have their types, at most 4 KiB), else 0. For the fuzz target. */
int gw_rebalance_record_parses(const void *data, size_t len);

/* The placement decision, pure: the nodes of members[n_members] that are
 * not among owners[n_owners] (the key's replicas in the new ring), in
 * members' order, into out (room for n_members); returns how many. These
 * are HEADed as sources of the copy and are the candidates for purge. */
uint32_t gw_rebalance_non_owners(const uint32_t *owners, uint32_t n_owners,
                                 const uint32_t *members, uint32_t n_members, uint32_t *out);

/* The purge decision, pure: 1 when the copy res->extra_held[i] holds may be
 * removed: the repair succeeded (every owner answered and holds the newest
 * version, or was written it) and the copy's version is not newer than
 * it. The newest may be a tombstone: the owners hold the delete before an
 * old copy goes, so no stale copy can bring the key back. (The walk never
 * purges a system record, "s/...": rebalance.c.) */
int gw_rebalance_may_purge(const struct gw_repair_result *res, uint32_t i);

/* The throttle's token bucket, pure (times in us, bps 0 = no limit): a
 * copy of bytes about to be sent at now, when the next may start no
 * sooner than next_ok, moves next_ok to max(next_ok, now) + its time at
 * bps. The walk charges a key's listed size before it starts the key's
 * repair, so no copy is sent before the bucket has room for it. */
uint64_t gw_rebalance_charge(uint64_t next_ok, uint64_t now, uint64_t bytes, uint64_t bps);

/* Once the repair answered: charged bytes were paid in advance and copied
 * were written (0 when every owner held the key; more when several new
 * owners lacked it): next_ok moves by the difference. */
uint64_t gw_rebalance_settle(uint64_t next_ok, uint64_t charged, uint64_t copied, uint64_t bps);

#endif
