/* Rate limit of repeated log lines: each call site may write `burst` lines
 * per `window`; further lines of that site are counted, not written, and a
 * later line reports "N similar lines suppressed". A fixed table of slots,
 * no allocation per line; not thread-safe (log.c holds a lock around it). */
#ifndef CN_LOG_LIMIT_H
#define CN_LOG_LIMIT_H

#include <stddef.h>
#include <stdint.h>

#define CN_LOG_LIMIT_SLOTS 256   /* call sites tracked at once (a power of 2) */
#define CN_LOG_LIMIT_WAYS 4      /* slots a site may occupy: collisions evict the oldest */

struct cn_log_limit_slot {
    const char *site;     /* NULL: free */
    uint64_t start_ms;    /* when the site's current window began */
    uint32_t written;     /* lines written in the window */
    uint64_t suppressed;  /* lines dropped in the window, not yet reported */
};

/* Suppressed lines of one site that are due to be reported. */
struct cn_log_limit_report {
    const char *site;
    uint64_t n;
};

/* Embedded (log.c keeps one static); _init sets it up, no _fini needed. */
struct cn_log_limit {
    uint64_t window_ms;
    uint32_t burst;       /* 0: no limit, every line is written */
    uint64_t pending;     /* suppressed lines not yet reported, all sites */
    uint64_t swept_ms;    /* last cn_log_limit_due() */
    struct cn_log_limit_slot slots[CN_LOG_LIMIT_SLOTS];
};

/* Clears every slot and sets the policy: at most burst lines per site per
 * window_ms (burst 0 turns the limit off). */
void cn_log_limit_init(struct cn_log_limit *l, uint64_t window_ms, uint32_t burst);

/* Decides one line of `site` (compared by pointer: a string literal per
 * call site) at now_ms. Returns 1 to write it, 0 to drop it. When it returns
 * 1 it may also fill *rep with lines suppressed earlier (of this site, whose
 * window ended, or of a site whose slot it took) that the caller should
 * report first; rep->n is 0 when there is nothing to report. */
int cn_log_limit_check(struct cn_log_limit *l, const char *site, uint64_t now_ms,
                       struct cn_log_limit_report *rep);

/* Collects up to max reports of sites whose window has ended with lines
 * suppressed, so a site that went quiet is still reported; clears them.
 * Scans the table at most once per window (returns 0 otherwise, or when
 * nothing is pending). Returns the number of reports filled. */
size_t cn_log_limit_due(struct cn_log_limit *l, uint64_t now_ms,
                        struct cn_log_limit_report *reps, size_t max);

#endif
