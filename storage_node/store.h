/* The storage engine of a node: containers + index + the group-commit
 * writer, with reads, listing, compaction and scrub on top. The daemon's
 * handlers (handler.c) call only this API; unit tests drive it directly. */
#ifndef SN_STORE_H
#define SN_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "cn/rc.h"
#include "index.h"
#include "record.h"

enum sn_sync_mode { SN_SYNC_NONE = 0, SN_SYNC_PERIODIC = 1, SN_SYNC_WRITETHROUGH = 2 };

struct sn_store_opts {
    const char *data_dir;        /* holds containers/ and index/ */
    int sync_mode;               /* enum sn_sync_mode */
    uint64_t sync_interval_ms;   /* for SN_SYNC_PERIODIC */
    uint64_t max_container_len;  /* roll to a new container past this */
    uint32_t dead_ratio_pct;     /* compaction candidates: dead share >= this */
    uint64_t tombstone_gc_after_ms; /* compaction purges tombstones older than this
                                     * (record ts); 0: keeps them forever */
    size_t index_cache;          /* LevelDB block cache bytes */
    uint32_t max_batch;          /* group commit: most writes per batch */
    uint64_t max_batch_bytes;    /* group commit: most bytes per batch */
    int read_mmap;               /* serve record data from a mapping of the container */
    uint64_t compact_min_dead_bytes; /* automatic compaction: a container needs at least
                                      * this many dead bytes (and dead_ratio_pct) */
    uint64_t compact_max_rate;   /* automatic compaction: most record bytes copied per
                                  * second; 0: no limit */
    struct sn_metrics *metrics;  /* group commits, syncs, scrub and compaction
                                  * progress are counted here; NULL: not counted */
};

struct sn_store;
struct sn_container;

/* Sets the defaults (writethrough, 1 GiB containers, 50 %, tombstones kept
 * 10 days, 8 MiB cache). */
void sn_store_opts_default(struct sn_store_opts *o);

/* Opens the store under o->data_dir (creating it), recovers (indexes the
 * records past what the index knows, truncates a torn tail), and starts the
 * writer thread. On error *out is NULL and err says why. */
int sn_store_open(const struct sn_store_opts *o, struct sn_store **out, char err[CN_ERR_LEN]);

/* Finishes every queued write (replying to each), syncs all containers and
 * the index, stops the writer and frees the store (always, also on error).
 * Returns CN_OK, or the first sync error with err (may be NULL) saying
 * which file. */
int sn_store_close(struct sn_store *s, char *err);

/* What opening the store found and repaired (a torn tail cut off, a
 * container shorter than its index entry), one line each, for the caller to
 * log: *notes gets the array, the return is its length (at most
 * SN_STORE_MAX_NOTES; the counters of sn_store_stats count every event). The
 * strings belong to the store and live until sn_store_close. */
#define SN_STORE_MAX_NOTES 64
size_t sn_store_notes(const struct sn_store *s, const char *const **notes);

/* The store's index (the hint store keeps its own keyspace in it, hint.h). */
struct sn_index *sn_store_index(struct sn_store *s);

/* ---- writes: queued to the writer thread, completed by callback ---- */

/* PUT/DELETE: client writes. RELOCATE (compaction): append the record again
 * and re-point the key, only if the key still points at old_cid/old_off with
 * the record's (ver, ts). PURGE (compaction, tombstone GC): remove the key
 * from the index, only if it still points at that same tombstone. DROP: forget
 * an empty container (old_cid) and unlink its file. */
enum sn_wop { SN_WOP_PUT, SN_WOP_DELETE, SN_WOP_RELOCATE, SN_WOP_PURGE, SN_WOP_DROP,
              SN_WOP_MARK, SN_WOP_FORGET };
/* FORGET (the PURGE op, a rebalance): remove the key from the index, without
 * a tombstone, only if it holds exactly the (ts, ver) of the header
 * sn_wreq_init(SN_WOP_FORGET) encodes (live or tombstone); nothing is
 * appended. */

/* An index entry flag (next to SN_RECORD_FLAG_TOMBSTONE, never in a record):
 * the record failed a checksum on a read or in a scrub and waits for a good
 * copy. A HEAD of the key answers CORRUPT (a GET verifies the blocks it
 * reads, as for any record); a PUT or DELETE with the same
 * (ts, ver) as the marked record is applied (it is the repair), and any
 * applied write clears the mark. LIST entries carry it (flags bit 1). */
#define SN_IVAL_FLAG_CORRUPT 0x02u

struct sn_wreq;
typedef void (*sn_wreq_done_cb)(struct sn_wreq *w, void *arg);

/* One queued write. The caller owns it and the bytes it points at until
 * done_cb runs (on the writer thread; it must not block for long). */
struct sn_wreq {
    enum sn_wop op;
    const uint8_t *hdr;          /* the encoded record header */
    const uint8_t *data;         /* data_len bytes of data */
    struct sn_record_info ri;    /* parsed hdr (sn_wreq_init fills it) */
    uint32_t old_cid;            /* RELOCATE/PURGE: where the record lies now; DROP: cid */
    uint64_t old_off;
    /* results */
    int rc;                      /* CN_OK, or an error with err */
    int applied;                 /* PUT/DELETE: newer than what was held;
                                    RELOCATE/PURGE: the key still pointed there */
    uint64_t cur_ver, cur_ts;    /* what the key holds after this write */
    uint32_t cur_flags;
    char err[CN_ERR_LEN];
    sn_wreq_done_cb done_cb;
    void *arg;
    struct sn_wreq *next;        /* queue link (writer's) */
};

/* Prepares w for a PUT or DELETE (tombstone, data_len 0): encodes the record
 * header into a buffer w owns (freed by sn_wreq_fini) and computes the block
 * CRCs over data, which the caller keeps alive until completion. Returns
 * CN_TOOBIG when a length is over the format limits. */
int sn_wreq_init(struct sn_wreq *w, enum sn_wop op, const uint8_t *key, uint32_t klen,
                 const uint8_t *meta, uint32_t meta_len, const uint8_t *etag,
                 uint32_t etag_len, uint64_t ver, uint64_t ts, const uint8_t *data,
                 uint64_t data_len, char err[CN_ERR_LEN]);
/* sn_wreq_init() of a PUT whose record also holds *osize (protocol version
 * 3; NULL: none) and, with owner set, whose etag is the record's owner;
 * both are ignored for anything but SN_WOP_PUT. */
int sn_wreq_init_osize(struct sn_wreq *w, enum sn_wop op, const uint8_t *key, uint32_t klen,
                       const uint8_t *meta, uint32_t meta_len, const uint8_t *etag,
                       uint32_t etag_len, const uint64_t *osize, int owner, uint64_t ver,
                       uint64_t ts,
                       const uint8_t *data, uint64_t data_len, char err[CN_ERR_LEN]);
void sn_wreq_fini(struct sn_wreq *w);

/* Queues w to the writer. done_cb is always called exactly once. */
void sn_store_submit(struct sn_store *s, struct sn_wreq *w);

/* Submits w and waits for it (tests, compaction). Returns w->rc. */
int sn_store_submit_wait(struct sn_store *s, struct sn_wreq *w);

/* MARK: sets SN_IVAL_FLAG_CORRUPT on key's index entry (durably), if the
 * key still holds the live record (ver, ts); waits for the writer. Returns
 * 1 when it marked, 0 when not (gone, newer, a tombstone, already marked or
 * an error). Called by reads and scrubs that find the record corrupt. */
int sn_store_mark_corrupt(struct sn_store *s, const uint8_t *key, uint32_t klen, uint64_t ver,
                          uint64_t ts);

/* ---- reads ---- */

/* The result of a read. data points into buf (owned) or, for data read
 * through the container's mapping, into that mapping, which pin keeps alive
 * (a reference); sn_read_fini releases both. */
struct sn_read {
    uint8_t *buf;
    struct sn_container *pin;
    const uint8_t *data;
    uint64_t len;               /* bytes at data */
    uint64_t size;              /* the whole record's data length */
    uint64_t ver, ts;
    uint32_t flags;
    uint32_t crc;               /* crc32c of the len bytes at data */
    uint8_t etag[SN_RECORD_MAX_ETAG];
    uint32_t etag_len;
    uint32_t has_osize;         /* the record holds osize (protocol version 3) */
    uint64_t osize;
    uint32_t has_owner;         /* etag holds the record's owner (protocol version 3) */
    uint8_t *meta;              /* owned copy, meta_len bytes */
    uint32_t meta_len;
};

#define SN_READ_DATA 0x1   /* read data, not only the header (GET vs HEAD) */
#define SN_READ_SLICE 0x2  /* off/len select a slice; else the whole record */

/* Reads the newest record of key. Every data block returned (and the
 * header) is verified first. Returns CN_OK; CN_NOTFOUND (r->flags has
 * SN_RECORD_FLAG_TOMBSTONE and ver/ts when it is a tombstone); CN_INVAL when
 * off > size; CN_CORRUPT / CN_IO with err naming the key. Call sn_read_fini
 * in every case. A slice's len is clipped at the end of the record. */
int sn_store_read(struct sn_store *s, const uint8_t *key, uint32_t klen, int flags,
                  uint64_t off, uint64_t len, struct sn_read *r, char err[CN_ERR_LEN]);
void sn_read_fini(struct sn_read *r);

/* sn_store_read() for a thread that must not wait for the disk (the node's
 * socket thread): CN_WOULDBLOCK, with nothing held in r, when the record's
 * header or data is not in the page cache, when it would read more than
 * max_data bytes of data, or when anything but CN_OK / CN_NOTFOUND /
 * CN_INVAL would be answered (damage is left to sn_store_read(), which logs
 * and marks it). The index lookup itself (LevelDB) may still read the disk. */
int sn_store_read_nowait(struct sn_store *s, const uint8_t *key, uint32_t klen, int flags,
                         uint64_t off, uint64_t len, uint64_t max_data, struct sn_read *r,
                         char err[CN_ERR_LEN]);

/* Called for each LIST entry; a non-zero return stops the listing. */
typedef int (*sn_list_cb)(void *arg, const uint8_t *key, uint32_t klen,
                          const struct sn_ival *v);

/* Lists keys starting with prefix, strictly after `after`, in bytewise
 * order, skipping tombstones, at most limit; *more says whether more match. */
int sn_store_list(struct sn_store *s, const uint8_t *prefix, uint32_t plen,
                  const uint8_t *after, uint32_t alen, uint32_t limit, sn_list_cb cb,
                  void *arg, int *more, char err[CN_ERR_LEN]);

/* sn_store_list() that also returns tombstones when with_tombstones is set
 * (their sn_ival has SN_RECORD_FLAG_TOMBSTONE; they count toward limit):
 * replication compares versions across nodes and needs "deleted at T". */
int sn_store_list_ex(struct sn_store *s, const uint8_t *prefix, uint32_t plen,
                     const uint8_t *after, uint32_t alen, uint32_t limit, int with_tombstones,
                     sn_list_cb cb, void *arg, int *more, char err[CN_ERR_LEN]);

/* ---- accounting ---- */

struct sn_store_stats {
    uint64_t records;           /* live objects: index entries that are not tombstones */
    uint64_t tombstones;        /* index entries that are tombstones */
    uint64_t bytes_live, bytes_dead, bytes_total;
    uint64_t containers;
    uint64_t active_container;
    uint64_t queue_depth;       /* writes waiting for the writer */
    uint64_t puts, deletes, stale_writes, relocations, tombstones_purged;
    uint64_t copies_purged;      /* PURGE (SN_WOP_FORGET) applied */
    uint64_t batches, syncs;
    uint64_t reads, corrupt_reads;
    uint64_t scrubs, scrub_corrupt;
    uint64_t compactions, containers_reclaimed, bytes_reclaimed;
    uint64_t auto_compactions;  /* runs started by sn_compact_run_auto */
    uint64_t corrupt_marked;    /* records marked SN_IVAL_FLAG_CORRUPT */
    uint64_t corrupt_repaired;  /* marked records replaced by a write */
    uint64_t compact_throttle_us; /* time compaction waited for compact_max_rate */
    uint64_t recovered_records, torn_tails;
};
void sn_store_stats(struct sn_store *s, struct sn_store_stats *st);

/* Writes a printable form of key into out: bytes outside 0x21..0x7e as \xNN,
 * cut with "..." past outlen. For logs and err strings. */
void sn_store_key_str(const uint8_t *key, uint32_t klen, char *out, size_t outlen);

/* ---- compaction (compact.c) ---- */

struct sn_compact_result {
    uint32_t containers_scanned, containers_reclaimed, containers_failed;
    uint64_t records_moved, bytes_moved, bytes_reclaimed;
    uint64_t tombstones_purged;
    uint64_t throttle_us;       /* time spent waiting for the rate limit */
    int aborted;                /* stopped early by sn_compact_abort */
};

/* Compacts every container (not the active one) whose dead share is at or
 * over dead_ratio_pct (0: use the store's), while writes and reads go on.
 * With tombstone GC on (opts.tombstone_gc_after_ms), a container last
 * appended to longer ago than the grace counts its live tombstones' bytes as
 * dead, and tombstones whose ts is older than the grace are purged from the
 * index instead of copied. One compaction or scrub at a time (others wait). */
int sn_compact_run(struct sn_store *s, uint32_t dead_ratio_pct, struct sn_compact_result *res,
                   char err[CN_ERR_LEN]);

/* Automatic compaction, in two steps. sn_compact_auto_claim() is cheap (the
 * containers' counters under the lock, no I/O) and is called periodically:
 * it returns 1 when some container other than the active one has a dead
 * share of at least opts.dead_ratio_pct AND at least
 * opts.compact_min_dead_bytes dead bytes, and no automatic run is claimed
 * already; the claim then holds until sn_compact_run_auto() (which the
 * caller must then call, on any thread) returns. sn_compact_run_auto()
 * compacts those containers like sn_compact_run, paced to
 * opts.compact_max_rate bytes copied per second (it sleeps between batches
 * of at most an eighth of a second's worth), and stops early, leaving the
 * rest for a later run, when sn_compact_abort() is called. A container left
 * half-moved is consistent: moved records were re-pointed one by one. */
int sn_compact_auto_claim(struct sn_store *s);
int sn_compact_run_auto(struct sn_store *s, struct sn_compact_result *res,
                        char err[CN_ERR_LEN]);

/* Async-signal-safe: makes a running automatic compaction stop at its next
 * batch (shutdown). Runs started afterwards stop at once. */
void sn_compact_abort(struct sn_store *s);

/* ---- scrub (scrub.c) ---- */

struct sn_scrub_result {
    uint64_t containers, records, bytes;
    uint64_t corrupt;           /* live records (the index points at them) */
    uint64_t corrupt_dead;      /* overwritten/deleted records */
    uint64_t headers_corrupt;   /* unreadable headers (scan of that container stops) */
    uint64_t elapsed_us;
};

/* Called for each corrupt live record (from a scrub thread, serialised). */
typedef void (*sn_scrub_cb)(void *arg, const uint8_t *key, uint32_t klen,
                            const struct sn_ival *v, const char *why);

/* Re-reads every record of every container and verifies the header and every
 * block with n_threads reader/checksum threads. */
int sn_scrub_run(struct sn_store *s, uint32_t n_threads, sn_scrub_cb cb, void *arg,
                 struct sn_scrub_result *res, char err[CN_ERR_LEN]);

#endif
