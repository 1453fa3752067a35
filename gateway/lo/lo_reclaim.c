/* Chunk reclaim jobs (lo_reclaim.h): a timer per job, then deletes of the
 * job's chunks, at most GW_LO_RECLAIM_INFLIGHT at once per job. A job is
 * unlinked and freed when its cursor passed the last chunk and its deletes
 * answered. */
#include "lo_reclaim.h"

#include <string.h>

#include "cn/alloc.h"
#include "cn/hlc.h"
#include "cn/log.h"

#define GW_LO_RECLAIM_INFLIGHT 16

struct gw_lo_reclaim_job {
    struct gw_lo_reclaim *rc;     /* NULL once the owner closed */
    struct gw_lo_reclaim_job *prev, *next;
    struct event *timer;
    char okey[GW_KEYS_MAX];
    size_t okey_len;
    struct gw_lo_seg *segs;
    uint32_t n_segs;
    uint32_t seg, chunk;          /* cursor: the next chunk to delete */
    uint32_t inflight;
    uint64_t reqid;
    uint64_t failed;
};

struct gw_lo_reclaim {
    struct event_base *base;
    struct gw_store *store;
    struct gw_lo_reclaim_job *jobs;
    int closed;
    uint64_t n_jobs;
    uint64_t deleted;
};

struct gw_lo_reclaim *gw_lo_reclaim_new(struct event_base *base, struct gw_store *store)
{
    struct gw_lo_reclaim *rc = cn_calloc(1, sizeof(*rc));
    rc->base = base;
    rc->store = store;
    return rc;
}

static void gw_lo_reclaim_job_free(struct gw_lo_reclaim_job *j)
{
    struct gw_lo_reclaim *rc = j->rc;
    if (rc != NULL) {
        if (j->prev != NULL)
            j->prev->next = j->next;
        else
            rc->jobs = j->next;
        if (j->next != NULL)
            j->next->prev = j->prev;
        rc->n_jobs--;
    }
    if (j->failed > 0)
        CN_LOGR(CN_LOG_WARN, j->reqid, "reclaim: %llu chunk deletes failed (chunks left behind)",
                (unsigned long long)j->failed);
    event_free(j->timer);
    cn_free(j->segs);
    cn_free(j);
}

static void gw_lo_reclaim_pump(struct gw_lo_reclaim_job *j);

static void gw_lo_reclaim_on_delete(struct gw_store_result *res, void *arg)
{
    struct gw_lo_reclaim_job *j = arg;
    j->inflight--;
    if (res->rc != CN_OK)
        j->failed++;
    else if (j->rc != NULL)
        j->rc->deleted++;
    gw_lo_reclaim_pump(j);
}

/* Advances the cursor past empty segments; 1 when a chunk is left. */
static int gw_lo_reclaim_has_next(struct gw_lo_reclaim_job *j)
{
    while (j->seg < j->n_segs && j->chunk >= gw_lo_seg_chunks(&j->segs[j->seg])) {
        j->seg++;
        j->chunk = 0;
    }
    return j->seg < j->n_segs;
}

/* Issues deletes up to the in-flight cap; frees the job when all answered. */
static void gw_lo_reclaim_pump(struct gw_lo_reclaim_job *j)
{
    while (j->rc != NULL && !j->rc->closed && j->inflight < GW_LO_RECLAIM_INFLIGHT &&
           gw_lo_reclaim_has_next(j)) {
        char key[GW_LO_KEY_MAX];
        size_t klen = gw_lo_map_chunk_key(key, j->okey, j->okey_len, j->segs[j->seg].ver,
                                          j->chunk++);
        j->inflight++;
        gw_store_delete(j->rc->store, key, klen, j->reqid, cn_hlc_now(cn_hlc_default()),
                        gw_lo_reclaim_on_delete, j);
    }
    int stopped = j->rc == NULL || j->rc->closed;
    if (j->inflight == 0 && (stopped || !gw_lo_reclaim_has_next(j)))
        gw_lo_reclaim_job_free(j);
}

static void gw_lo_reclaim_on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gw_lo_reclaim_pump(arg);
}

void gw_lo_reclaim_segs(struct gw_lo_reclaim *rc, const char *okey, size_t okey_len,
                        const struct gw_lo_seg *segs, uint32_t n, int64_t delay_ms,
                        uint64_t reqid)
{
    if (n == 0)
        return;
    if (rc->closed) {
        CN_LOGR(CN_LOG_WARN, reqid, "reclaim refused while shutting down: chunks left behind");
        return;
    }
    CN_ASSERT(okey_len <= GW_KEYS_MAX);
    struct gw_lo_reclaim_job *j = cn_calloc(1, sizeof(*j));
    j->rc = rc;
    memcpy(j->okey, okey, okey_len);
    j->okey_len = okey_len;
    j->segs = cn_memdup(segs, n * sizeof(*segs));
    j->n_segs = n;
    j->reqid = reqid;
    j->timer = evtimer_new(rc->base, gw_lo_reclaim_on_timer, j);
    j->next = rc->jobs;
    if (rc->jobs != NULL)
        rc->jobs->prev = j;
    rc->jobs = j;
    rc->n_jobs++;
    struct timeval tv = {(time_t)(delay_ms / 1000), (suseconds_t)((delay_ms % 1000) * 1000)};
    evtimer_add(j->timer, &tv);
}

void gw_lo_reclaim_close(struct gw_lo_reclaim *rc)
{
    if (rc == NULL || rc->closed)
        return;
    rc->closed = 1;
    if (rc->n_jobs > 0)
        cn_warn("shutting down with %llu chunk reclaim jobs pending: their chunks stay",
                (unsigned long long)rc->n_jobs);
    /* jobs with deletes in flight are detached: their callbacks free them */
    struct gw_lo_reclaim_job *j = rc->jobs;
    while (j != NULL) {
        struct gw_lo_reclaim_job *next = j->next;
        if (j->inflight == 0) {
            gw_lo_reclaim_job_free(j);
        } else {
            evtimer_del(j->timer);
            j->rc = NULL;
        }
        j = next;
    }
    rc->jobs = NULL;
    rc->n_jobs = 0;
}

void gw_lo_reclaim_free(struct gw_lo_reclaim *rc)
{
    if (rc == NULL)
        return;
    gw_lo_reclaim_close(rc);
    cn_free(rc);
}

/* One gw_lo_reclaim_delete_object(): HEAD, GET when large, tombstone. */
struct gw_lo_reclaim_del {
    struct gw_lo_reclaim *rc;
    char okey[GW_KEYS_MAX];
    size_t okey_len;
    uint64_t ver;
    int64_t delay_ms;
    gw_store_cb cb;
    void *arg;
    uint64_t old_ts;
    uint64_t expect_ts;           /* gw_lo_reclaim_delete_version(): the version; 0: any */
    struct gw_lo_map map;
    int have_map;
};

/* delete_version: the record read is another version (or none): cb gets
 * rc, nothing is written. */
static void gw_lo_reclaim_del_skip(struct gw_lo_reclaim_del *d, int rc)
{
    struct gw_store_result res = {.rc = rc};
    d->cb(&res, d->arg);
    gw_lo_map_fini(&d->map);
    cn_free(d);
}

static void gw_lo_reclaim_del_on_tomb(struct gw_store_result *res, void *arg)
{
    struct gw_lo_reclaim_del *d = arg;
    if (res->rc == CN_OK && d->have_map)
        gw_lo_reclaim_segs(d->rc, d->okey, d->okey_len, d->map.segs, d->map.n_segs,
                           d->delay_ms, d->ver);
    d->cb(res, d->arg);
    gw_lo_map_fini(&d->map);
    cn_free(d);
}

static void gw_lo_reclaim_del_tomb(struct gw_lo_reclaim_del *d)
{
    /* a lifecycle expiry deletes exactly the version it listed: its
     * tombstone sits just after it, so a later overwrite still wins */
    uint64_t ts = d->expect_ts != 0 ? d->expect_ts + 1 : cn_hlc_after(cn_hlc_default(), d->old_ts);
    gw_store_delete(d->rc->store, d->okey, d->okey_len, d->ver, ts, gw_lo_reclaim_del_on_tomb, d);
}

static void gw_lo_reclaim_del_on_get(struct gw_store_result *res, void *arg)
{
    struct gw_lo_reclaim_del *d = arg;
    if (d->expect_ts != 0 && (res->rc != CN_OK || res->reply->m.ts != d->expect_ts)) {
        gw_lo_reclaim_del_skip(d, res->rc == CN_OK || res->rc == CN_NOTFOUND ? CN_AGAIN : res->rc);
        return;
    }
    if (res->rc == CN_OK) {
        const struct msg *m = &res->reply->m;
        d->old_ts = CN_MAX(d->old_ts, m->ts);
        d->have_map = gw_lo_map_decode(&d->map, m->payload.ptr, m->payload.len) == CN_OK;
    }
    gw_lo_reclaim_del_tomb(d);
}

static void gw_lo_reclaim_del_on_head(struct gw_store_result *res, void *arg)
{
    struct gw_lo_reclaim_del *d = arg;
    size_t tl;
    uint64_t size;
    if (d->expect_ts != 0 && (res->rc != CN_OK || res->reply->m.ts != d->expect_ts)) {
        gw_lo_reclaim_del_skip(d, res->rc == CN_OK || res->rc == CN_NOTFOUND ? CN_AGAIN : res->rc);
        return;
    }
    if (res->rc == CN_OK) {
        const struct msg *m = &res->reply->m;
        d->old_ts = m->ts;
        if (gw_lo_map_reply_size(m, &tl, &size)) {
            gw_store_get(d->rc->store, d->okey, d->okey_len, 1, 0, 0, gw_lo_reclaim_del_on_get,
                         d);
            return;
        }
    }
    gw_lo_reclaim_del_tomb(d);
}

void gw_lo_reclaim_delete_object(struct gw_lo_reclaim *rc, const char *okey, size_t okey_len,
                                 uint64_t ver, int64_t delay_ms, gw_store_cb cb, void *arg)
{
    CN_ASSERT(okey_len <= GW_KEYS_MAX);
    struct gw_lo_reclaim_del *d = cn_calloc(1, sizeof(*d));
    d->rc = rc;
    memcpy(d->okey, okey, okey_len);
    d->okey_len = okey_len;
    d->ver = ver;
    d->delay_ms = delay_ms;
    d->cb = cb;
    d->arg = arg;
    gw_store_head(rc->store, okey, okey_len, gw_lo_reclaim_del_on_head, d);
}

void gw_lo_reclaim_delete_version(struct gw_lo_reclaim *rc, const char *okey, size_t okey_len,
                                  uint64_t ver, uint64_t ts, int64_t delay_ms, gw_store_cb cb,
                                  void *arg)
{
    CN_ASSERT(okey_len <= GW_KEYS_MAX && ts > 0);
    struct gw_lo_reclaim_del *d = cn_calloc(1, sizeof(*d));
    d->rc = rc;
    memcpy(d->okey, okey, okey_len);
    d->okey_len = okey_len;
    d->ver = ver;
    d->expect_ts = ts;
    d->delay_ms = delay_ms;
    d->cb = cb;
    d->arg = arg;
    gw_store_head(rc->store, okey, okey_len, gw_lo_reclaim_del_on_head, d);
}

uint64_t gw_lo_reclaim_pending(const struct gw_lo_reclaim *rc)
{
    return rc->n_jobs;
}

uint64_t gw_lo_reclaim_deleted(const struct gw_lo_reclaim *rc)
{
    return rc->deleted;
}
