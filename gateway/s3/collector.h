/* The chunk collector: a background task on worker 0 of each gateway that
 * finds chunk records ("c/...", lo_map.h) that no parent references — the
 * leftovers of a PUT whose gateway died, of two PUTs that raced, of an
 * overwrite or an aborted upload whose in-memory reclaim job (lo_reclaim.h)
 * was lost with its gateway — and deletes them once they are older than
 * collector.grace. At most one gateway of a cluster scans at a time: the one
 * that holds the lease kept in the system record "s/collector", by the same
 * protocol as the lifecycle worker's "s/lifecycle" (lease.h); the
 * record also keeps the scan's cursor (a scan resumes where the last holder
 * stopped) and what the scans did, for `cairn-admin collector status`.
 * docs/large-objects.md ("The chunk collector") gives the safety argument.
 *
 * Memory: two listing pages (GW_COLLECTOR_PAGE entries, ~230 KiB each), one
 * chunk map being checked, and one store operation in flight (or one HEAD
 * per replica of a parent). */
#ifndef GW_COLLECTOR_H
#define GW_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

struct gw_store;
struct gw_lo_map;
struct cn_metrics;

/* The system record's key (outside the S3 namespace, keys.h). */
#define GW_COLLECTOR_KEY "s/collector"
#define GW_COLLECTOR_PAGE 100
/* The suffix of a chunk key after its object part: NUL, 16 hex, '/', 8 hex. */
#define GW_COLLECTOR_SUFFIX_LEN 26

/* ---- the pure part (unit-tested: tests/unit/test_gw_collector.c) ------- */

/* A chunk key split (gw_collector_chunk_parse). The object record's key is
 * "o" followed by key[1 .. okey_len). */
struct gw_collector_chunk {
    size_t okey_len;     /* length of "c/<bucket>/<key>" */
    size_t seg_len;      /* length of "c/<bucket>/<key>" NUL <ver> "/": the segment's prefix */
    uint64_t ver;        /* the segment's write version */
    uint32_t idx;        /* the chunk's index in its segment */
};

/* Splits a chunk key k[len] ("c/" bucket "/" key NUL 16 hex "/" 8 hex,
 * lower-case hex as gw_lo_map_chunk_key writes it). CN_OK, or CN_INVAL for
 * anything else (such a record is never deleted). */
int gw_collector_chunk_parse(const void *k, size_t len, struct gw_collector_chunk *out);

/* 1 when the chunk map m has a segment written with version ver. */
int gw_collector_map_names(const struct gw_lo_map *m, uint64_t ver);

/* What the collector learnt of one segment (all the chunks of one write). */
struct gw_collector_facts {
    uint64_t now_us;            /* the wall clock (µs, as record ts) */
    uint64_t grace_us;          /* collector.grace */
    uint64_t newest_chunk_ts;   /* the newest ts among the segment's chunks */
    int lookups_ok;             /* every parent lookup answered (from enough replicas) */
    int referenced;             /* a part, version or object record names the segment */
    uint64_t parent_ts;         /* ts of the object record or its tombstone; 0: none */
};

enum gw_collector_verdict {
    GW_COLLECTOR_DELETE = 0,
    GW_COLLECTOR_KEEP_YOUNG,           /* a chunk is younger than the grace */
    GW_COLLECTOR_KEEP_UNSURE,          /* a lookup failed: keep, look again next scan */
    GW_COLLECTOR_KEEP_REFERENCED,      /* a parent names it */
    GW_COLLECTOR_KEEP_PARENT_RECENT,   /* the object changed within the grace */
};

/* The decision for one segment: delete only when its newest chunk is older
 * than the grace, every lookup answered, nothing names it and the object
 * record (or its tombstone) is older than the grace too. A ts in the future
 * counts as young. */
enum gw_collector_verdict gw_collector_decide(const struct gw_collector_facts *f);
const char *gw_collector_verdict_str(enum gw_collector_verdict v);

/* 1 when data[len] reads as the record GW_COLLECTOR_KEY holds (a msgpack
 * map whose known keys have their types; others are skipped), else 0: the
 * worker then takes the record as empty. For the fuzz target. */
int gw_collector_record_parses(const void *data, size_t len);

/* ---- the worker -------------------------------------------------------- */

struct gw_collector_opts {
    uint64_t interval_us;         /* collector.interval: a scan starts this long after the last */
    uint64_t grace_us;            /* collector.grace */
    uint64_t lease_us;            /* collector.lease_time */
    uint64_t settle_us;           /* wait between claiming the lease and reading it back */
    uint32_t max_rate;            /* collector.max_rate: chunk deletes per second */
    uint32_t min_answers;         /* replicas of an object record that must answer: N - W + 1 */
    const char *holder;           /* this gateway's name in the lease (copied) */
};

struct gw_collector;

/* Creates the worker on base (the thread whose store this is) and arms its
 * first tick; reg (NULL: none) gets its series. */
struct gw_collector *gw_collector_new(struct event_base *base, struct gw_store *store,
                                      const struct gw_collector_opts *o, struct cn_metrics *reg);

/* Stops: no new operation starts; callbacks still due only return. Call
 * before the store's client is freed. NULL: no-op. */
void gw_collector_close(struct gw_collector *c);

/* Frees c, after gw_collector_close() and the client's free. NULL: no-op. */
void gw_collector_free(struct gw_collector *c);

#endif
