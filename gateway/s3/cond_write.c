/* Conditional writes made atomic with the storage nodes' leases
 * (cond_write.h). A round LOCKs every replica; W grants let the write go on
 * under the lease; a refusal because a replica's record is no longer the
 * one read is final (412); refusals only because other writers hold the
 * lease are retried a few times after a short random pause (the holder
 * either writes, and the next round sees its record: 412, or gives up and
 * releases), then answered 409 ConditionalRequestConflict. */
#include "cond_write.h"

#include <string.h>
#include <sys/random.h>

#include <event2/event.h>

#include "lo_map.h"
#include "s3_ctx.h"

#include "cn/log.h"

#define GW_COND_WRITE_ROUNDS 8        /* LOCK rounds before 409 */
#define GW_COND_WRITE_PAUSE_US 4000   /* pause before round k: k x this, plus up to as much */

int gw_cond_write_etag_in(const char *list, size_t len, const char *etag, size_t elen)
{
    size_t i = 0;
    while (i < len) {
        while (i < len && (list[i] == ' ' || list[i] == ','))
            i++;
        size_t s = i;
        while (i < len && list[i] != ',')
            i++;
        size_t e = i;
        while (e > s && list[e - 1] == ' ')
            e--;
        if (e - s >= 2 && list[s] == 'W' && list[s + 1] == '/')
            s += 2;
        if (e - s >= 2 && list[s] == '"' && list[e - 1] == '"') {
            s++;
            e--;
        }
        if ((e - s == 1 && list[s] == '*') || (e - s == elen && memcmp(list + s, etag, elen) == 0))
            return 1;
    }
    return 0;
}

static uint64_t gw_cond_write_random(void)
{
    uint64_t v = 0;
    while (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
        ;
    return v != 0 ? v : 1;
}

enum gw_s3_err gw_cond_write_check(struct gw_cond_write *cw, const struct gw_req *r,
                                   const struct msg *cur)
{
    size_t im_len, inm_len, elen = 0;
    const char *im = gw_req_header(r, "if-match", &im_len);
    const char *inm = gw_req_header(r, "if-none-match", &inm_len);
    const char *etag = cur != NULL ? (const char *)cur->etag.ptr : "";
    uint64_t size;
    /* a large object's etag field may be "<etag> <size>": compare the etag */
    if (cur != NULL)
        gw_lo_map_reply_size(cur, &elen, &size);
    cw->armed = 0;
    if (im != NULL && cur == NULL)
        return GW_S3_NO_SUCH_KEY;
    if (im != NULL && !gw_cond_write_etag_in(im, im_len, etag, elen))
        return GW_S3_PRECONDITION_FAILED;
    if (inm != NULL && cur != NULL && gw_cond_write_etag_in(inm, inm_len, etag, elen))
        return GW_S3_PRECONDITION_FAILED;
    if (im == NULL && inm == NULL)
        return GW_S3_OK;
    cw->armed = 1;
    cw->has_ifver = cur != NULL;
    cw->ifver = cur != NULL ? cur->ver : 0;
    if (cw->tok == 0)
        cw->tok = gw_cond_write_random();
    return GW_S3_OK;
}

static void gw_cond_write_round(struct gw_cond_write *cw);

/* Ends the request with err: nothing was written. */
static void gw_cond_write_fail(struct gw_cond_write *cw, enum gw_s3_err err, const char *why)
{
    struct gw_req *r = cw->r;
    gw_blob_unref(cw->blob);
    cw->blob = NULL;
    if (!gw_req_release(r))
        return;
    gw_req_error(r, err, why);
}

static void gw_cond_write_on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gw_cond_write_round(arg);
}

static void gw_cond_write_on_lock(struct gw_store_result *res, void *arg)
{
    struct gw_cond_write *cw = arg;
    struct gw_req *r = cw->r;
    if (res->rc == CN_OK) {
        cw->n_granted = res->n_granted;
        memcpy(cw->granted, res->granted, sizeof(cw->granted));
        struct gw_store_record rec = cw->rec;
        rec.tok = cw->tok;
        rec.tok_nodes = cw->granted;
        rec.n_tok_nodes = cw->n_granted;
        struct gw_blob *blob = cw->blob;
        cw->blob = NULL;
        /* the PUT's timeouts count from now, not from the loop's cached
         * time: after a stall (a paused VM, a debugger) they would fire at
         * once and turn the lease's answer (409) into a 503 */
        event_base_update_cache_time(r->s3->lo.base);
        gw_store_put(r->s3->store, &rec, blob, cw->cb, r);
        gw_blob_unref(blob);
        return;
    }
    CN_LOGR(CN_LOG_DEBUG, r->id, "conditional write: %u granted, %u precondition, %u locked "
            "(round %u)%s%s", res->n_granted, res->precondition, res->locked, cw->attempts,
            res->err[0] ? ": " : "", res->err);
    /* the object the condition held for was deleted meanwhile: S3 answers
     * a concurrent delete 409 (a retry then sees no object) */
    if (res->precondition > 0 && cw->has_ifver && res->precondition_absent == res->precondition) {
        gw_cond_write_fail(cw, GW_S3_CONDITIONAL_REQUEST_CONFLICT, NULL);
        return;
    }
    if (res->precondition > 0) {
        gw_cond_write_fail(cw, GW_S3_PRECONDITION_FAILED, NULL);
        return;
    }
    if (res->locked > 0 && cw->attempts < GW_COND_WRITE_ROUNDS) {
        if (cw->timer == NULL)
            cw->timer = evtimer_new(r->s3->lo.base, gw_cond_write_on_timer, cw);
        uint64_t us = (uint64_t)cw->attempts * GW_COND_WRITE_PAUSE_US;
        us += gw_cond_write_random() % (us + 1);
        struct timeval tv = {(time_t)(us / 1000000), (suseconds_t)(us % 1000000)};
        evtimer_add(cw->timer, &tv);
        return;
    }
    if (res->locked > 0) {
        gw_cond_write_fail(cw, GW_S3_CONDITIONAL_REQUEST_CONFLICT, NULL);
        return;
    }
    gw_cond_write_fail(cw, GW_S3_SERVICE_UNAVAILABLE, NULL);
}

static void gw_cond_write_round(struct gw_cond_write *cw)
{
    cw->attempts++;
    gw_store_lock(cw->r->s3->store, cw->rec.key, cw->rec.key_len, cw->tok, cw->has_ifver,
                  cw->ifver, gw_cond_write_on_lock, cw);
}

void gw_cond_write_put(struct gw_cond_write *cw, struct gw_req *r,
                       const struct gw_store_record *rec, struct gw_blob *data, gw_store_cb cb)
{
    if (!cw->armed) {
        gw_store_put(r->s3->store, rec, data, cb, r);
        return;
    }
    cw->r = r;
    cw->rec = *rec;
    cw->cb = cb;
    if (data != NULL)
        gw_blob_ref(data);
    cw->blob = data;
    gw_cond_write_round(cw);
}

void gw_cond_write_fini(struct gw_cond_write *cw)
{
    if (cw->timer != NULL)
        event_free(cw->timer);
    cw->timer = NULL;
    gw_blob_unref(cw->blob);
    cw->blob = NULL;
}
