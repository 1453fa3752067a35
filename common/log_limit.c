/* Rate limit of repeated log lines (see cn/log_limit.h): a small
 * set-associative table keyed by call-site pointer, one fixed window per
 * site. Used by log.c under its lock. */
#include "cn/log_limit.h"

#include <string.h>

void cn_log_limit_init(struct cn_log_limit *l, uint64_t window_ms, uint32_t burst)
{
    memset(l, 0, sizeof(*l));
    l->window_ms = window_ms;
    l->burst = burst;
}

/* The first slot of site's set: a pointer hash (call-site literals are
 * spread over .rodata, so the low bits are dropped). */
static size_t cn_log_limit_set_of(const char *site)
{
    uint64_t h = (uint64_t)(uintptr_t)site * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 40) & (CN_LOG_LIMIT_SLOTS - 1) & ~(size_t)(CN_LOG_LIMIT_WAYS - 1);
}

/* Moves what slot s suppressed into rep (if anything) and starts a new
 * window for site at now_ms. */
static void cn_log_limit_restart(struct cn_log_limit *l, struct cn_log_limit_slot *s,
                                 const char *site, uint64_t now_ms,
                                 struct cn_log_limit_report *rep)
{
    if (s->site != NULL && s->suppressed > 0) {
        rep->site = s->site;
        rep->n = s->suppressed;
        l->pending -= s->suppressed;
    }
    s->site = site;
    s->start_ms = now_ms;
    s->written = 1;
    s->suppressed = 0;
}

int cn_log_limit_check(struct cn_log_limit *l, const char *site, uint64_t now_ms,
                       struct cn_log_limit_report *rep)
{
    rep->site = NULL;
    rep->n = 0;
    if (l->burst == 0)
        return 1;
    struct cn_log_limit_slot *set = &l->slots[cn_log_limit_set_of(site)];
    struct cn_log_limit_slot *victim = &set[0];
    for (size_t i = 0; i < CN_LOG_LIMIT_WAYS; i++) {
        struct cn_log_limit_slot *s = &set[i];
        if (s->site == site) {
            if (now_ms - s->start_ms >= l->window_ms) {
                cn_log_limit_restart(l, s, site, now_ms, rep);
                return 1;
            }
            if (s->written < l->burst) {
                s->written++;
                return 1;
            }
            s->suppressed++;
            l->pending++;
            return 0;
        }
        /* a free slot, else the one whose window began first */
        if (victim->site != NULL && (s->site == NULL || s->start_ms < victim->start_ms))
            victim = s;
    }
    cn_log_limit_restart(l, victim, site, now_ms, rep);
    return 1;
}

size_t cn_log_limit_due(struct cn_log_limit *l, uint64_t now_ms,
                        struct cn_log_limit_report *reps, size_t max)
{
    if (l->pending == 0 || now_ms - l->swept_ms < l->window_ms)
        return 0;
    l->swept_ms = now_ms;
    size_t n = 0;
    for (size_t i = 0; i < CN_LOG_LIMIT_SLOTS && n < max; i++) {
        struct cn_log_limit_slot *s = &l->slots[i];
        if (s->site == NULL || s->suppressed == 0 || now_ms - s->start_ms < l->window_ms)
            continue;
        reps[n].site = s->site;
        reps[n].n = s->suppressed;
        n++;
        l->pending -= s->suppressed;
        s->suppressed = 0;
        /* the window stays: the site's next line starts a new one */
    }
    return n;
}
