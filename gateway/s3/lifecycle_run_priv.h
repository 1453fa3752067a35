/* The lifecycle worker's state, shared by its two files: lifecycle_run.c
 * (the lease, the scan's walk over buckets, unversioned expiry, multipart
 * aborts) and lifecycle_vrun.c (what a bucket with a versioning state
 * needs: delete markers for expired current versions, the removal of
 * noncurrent versions and of lone delete markers). Not for other modules:
 * lifecycle_run.h is the worker's interface. */
#ifndef GW_LIFECYCLE_RUN_PRIV_H
#define GW_LIFECYCLE_RUN_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "keys.h"
#include "lease.h"
#include "lifecycle.h"
#include "lifecycle_run.h"
#include "lo_map.h"
#include "store.h"
#include "tagset.h"
#include "versioning.h"

#define GW_LC_RUN_PARTS_PAGE 32

/* What the system record holds: the lease and the last scan's results. */
struct gw_lc_status {
    struct gw_lease_head lease;   /* holder, lease_until (lease.h) */
    uint64_t last_start, last_end, next_due, scans;
    uint64_t expired, aborted, buckets, total_expired, total_aborted;
    /* versioned buckets: noncurrent versions removed, delete markers
     * written for expired current versions, lone delete markers removed */
    uint64_t nc_expired, markers_added, markers_removed;
    uint64_t total_nc_expired, total_markers_added, total_markers_removed;
    int scanning;
};

/* One listed record, copied out of the listing's result (a version key is
 * the longest key listed). */
struct gw_lc_item {
    char key[GW_VERSIONING_KEY_MAX];
    uint32_t key_len;
    uint64_t size, ts;
    char etag[129];
    int has_osize;           /* the record's osize (lo_map.h) */
    uint64_t osize;
};

struct gw_lc_page {
    struct gw_lc_item *items;
    uint32_t n, idx, cap;
    int more;
};

/* lifecycle_vrun.c's state: the key whose versions are being walked (the
 * "group": one key's version records, listed newest first) and the step at
 * hand. */
struct gw_lc_vstate {
    enum gw_versioning_state versioning;   /* the bucket's */
    int group_open;
    char gprefix[GW_VERSIONING_KEY_MAX];   /* "v/" bucket "/" key NUL */
    size_t gprefix_len;
    uint32_t gidx;                         /* entries of the group seen */
    uint32_t gremoved;                     /* ... and removed by this scan */
    uint64_t gprev_ts;                     /* the last seen entry's version time */
    struct gw_lc_item gfirst;              /* the group's newest entry */
    int gfirst_marker;
    int gmarker_seen;                      /* a delete marker came in the group */
    int nc_first_marker;                   /* the step's version: the group's first marker */
    /* the step at hand */
    char okey[GW_KEYS_MAX];                /* the key's "o/" record */
    size_t okey_len;
    char vkey[GW_VERSIONING_KEY_MAX];      /* the version record at hand */
    size_t vkey_len;
    uint64_t vts;                          /* its listed ts */
    char id[GW_VERSIONING_ID_MAX];         /* its id */
    uint64_t o_ts;                         /* the "o/" record's ts */
    struct gw_lo_map map;                  /* the removed version's chunks */
    int have_map;
    int found_null;                        /* Suspended: the null version's record */
    void (*then)(struct gw_lc_run *run);
};

struct gw_lc_run {
    struct event_base *base;
    struct gw_store *store;
    struct gw_lo_reclaim *reclaim;
    struct gw_lc_run_opts o;
    char holder[GW_LEASE_HOLDER_MAX];
    uint64_t ver;                 /* this gateway's writes (the record's, deletes) */
    struct gw_lease *lease;       /* "s/lifecycle": reads and writes st */
    struct event *timer;          /* the delete throttle's waits */
    void (*resume)(struct gw_lc_run *run);
    int closed, inflight;         /* inflight: the scan's store operations */
    struct gw_lc_status st;
    uint64_t next_delete;         /* throttle: the earliest next delete */
    /* the scan */
    struct gw_lc_page buckets, objects, parts;
    char bucket[64];
    size_t bucket_len;
    struct gw_lc lc;              /* the bucket's rules */
    struct gw_tagset *tags;
    struct gw_lc_item *cur;       /* the object or upload at hand */
    char upload_okey[GW_LO_KEY_MAX];
    size_t upload_okey_len;
    void (*after_renew)(struct gw_lc_run *run);
    void (*after_slot)(struct gw_lc_run *run);
    struct gw_lc_vstate v;
    /* metrics (reg NULL: none) */
    struct cn_metrics *reg;
    uint32_t m_scans, m_expired, m_aborted, m_held, m_last_end;
    uint32_t m_nc_expired, m_markers_added, m_markers_removed;
};

/* ---- lifecycle_run.c, for lifecycle_vrun.c ---------------------------- */

/* A store callback's first call: 1 when the worker was closed meanwhile
 * (the callback must return at once). Every store call made for the run
 * counts run->inflight up first. */
int gw_lc_run_op_done(struct gw_lc_run *run);

/* Throttle: fn(run) once the next delete may start (max_deletes_per_sec),
 * after renewing the lease when it is due. */
void gw_lc_run_delete_slot(struct gw_lc_run *run, void (*fn)(struct gw_lc_run *run));

/* Copies a listing's entries into page; 0 when the listing failed. */
int gw_lc_run_page_fill(struct gw_lc_page *page, const struct gw_store_list_result *res);

/* Lists a page of prefix after the page's last key (none: from the start). */
void gw_lc_run_list(struct gw_lc_run *run, struct gw_lc_page *page, const char *prefix,
                    size_t prefix_len, int from_start, gw_store_list_cb cb);

/* The bucket's incomplete uploads: the phase after the objects'. */
void gw_lc_run_uploads_page(struct gw_lc_run *run, int from_start);

/* Ends the scan (why: NULL, or what stopped it) and writes the results. */
void gw_lc_run_finish(struct gw_lc_run *run, const char *why);

/* The next entry of the current-objects listing ("o/"). */
void gw_lc_run_next_object(struct gw_lc_run *run);

/* ---- lifecycle_vrun.c ------------------------------------------------- */

/* Does some Enabled rule of lc act on noncurrent versions or lone delete
 * markers (NoncurrentVersionExpiration, ExpiredObjectDeleteMarker, or an
 * Expiration Days / Date, which also removes expired markers)? */
int gw_lc_vrun_wanted(const struct gw_lc *lc);

/* The current version run->cur (an "o/" entry) of a bucket with a
 * versioning state fell due: write a delete marker over it (Enabled; a
 * null one replacing the null version when Suspended), then go on with the
 * next object. Called in a delete slot. */
void gw_lc_vrun_mark(struct gw_lc_run *run);

/* Walks the bucket's version records ("v/"), from the start: removes the
 * noncurrent versions and lone delete markers that fell due, then goes on
 * to the bucket's uploads. */
void gw_lc_vrun_versions(struct gw_lc_run *run);

/* Releases what the step at hand holds (a chunk map). */
void gw_lc_vrun_fini(struct gw_lc_run *run);

#endif
