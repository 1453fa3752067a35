/* The lifecycle worker: a background task on one worker thread of each
 * gateway that applies the Enabled rules of every bucket (lifecycle.h):
 * expires current objects that fell due (their chunks reclaimed as a
 * DELETE's are; in a bucket with a versioning state a delete marker
 * instead, and noncurrent versions and lone delete markers removed:
 * lifecycle_vrun.c) and aborts incomplete multipart uploads (their parts'
 * chunks reclaimed at once). At most one gateway of a cluster scans at a
 * time: the one that holds the lease kept in the system record
 * "s/lifecycle" (docs/operations.md gives the design and what it
 * guarantees), which also carries what the last scan did, so
 * `cairn-admin lifecycle status` can print it.
 *
 * Memory: listing pages of fixed size (GW_LC_RUN_PAGE buckets and objects
 * or versions, GW_LC_RUN_PARTS_PAGE parts, about 1.3 KiB an entry: ~300 KiB
 * in all), one bucket's rules (at most the bucket record's 60 KiB), in a
 * versioned bucket one key's position (~2.5 KiB) and the chunk map of the
 * one version being removed, one store operation in flight. */
#ifndef GW_LIFECYCLE_RUN_H
#define GW_LIFECYCLE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

struct gw_store;
struct gw_lo_reclaim;
struct cn_metrics;

/* The system record's key (outside the S3 namespace, keys.h). */
#define GW_LC_RUN_KEY "s/lifecycle"
#define GW_LC_RUN_PAGE 100

struct gw_lc_run_opts {
    uint64_t day_us;              /* lifecycle.day_length */
    uint64_t interval_us;         /* lifecycle.interval: a scan starts this long after the last */
    uint64_t lease_us;            /* lifecycle.lease_time */
    uint64_t settle_us;           /* wait between claiming the lease and reading it back */
    uint32_t max_deletes_per_sec; /* lifecycle.max_deletes_per_sec */
    int64_t reclaim_delay_ms;     /* large_object.reclaim_delay for expired objects' chunks */
    const char *holder;           /* this gateway's name in the lease (copied) */
};

struct gw_lc_run;

/* Creates the worker on base (the thread whose store and reclaimer these
 * are) and arms its first tick; reg (NULL: none) gets its series. */
struct gw_lc_run *gw_lc_run_new(struct event_base *base, struct gw_store *store,
                                struct gw_lo_reclaim *reclaim, const struct gw_lc_run_opts *o,
                                struct cn_metrics *reg);

/* Stops: no new operation starts; callbacks still due only return. Call
 * before the store's client is freed. */
void gw_lc_run_close(struct gw_lc_run *run);

/* 1 when data[len] reads as the record GW_LC_RUN_KEY holds (a msgpack map
 * whose known keys have their types; others are skipped), else 0: the
 * worker then takes the record as empty. For the fuzz target. */
int gw_lc_run_record_parses(const void *data, size_t len);

/* Frees run, after gw_lc_run_close() and the client's free. NULL: no-op. */
void gw_lc_run_free(struct gw_lc_run *run);

#endif
