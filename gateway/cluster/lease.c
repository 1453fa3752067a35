/* The cluster-held lease (lease.h). One chain of callbacks: tick -> read
 * the record -> held: ops->held; another's live lease: wait a tick; free or
 * expired: write our claim -> wait settle_us -> read it back -> held only
 * when it names us. The worker then writes (gw_lease_write) and renews
 * (gw_lease_renew) through here, so every write of the record carries the
 * lease and the record's newest ts. */
#include "lease.h"

#include <stdio.h>
#include <string.h>

#include "store.h"

#include "msg/msg.h"

#include "cn/alloc.h"
#include "cn/hlc.h"
#include "cn/log.h"
#include "cn/metrics.h"
#include "cn/time.h"

struct gw_lease {
    struct event_base *base;
    struct gw_store *store;
    const struct gw_lease_ops *ops;
    struct gw_lease_opts o;
    char holder[GW_LEASE_HOLDER_MAX];
    void *st;                     /* the worker's status (its head: struct gw_lease_head) */
    void *rd;                     /* the record as read last, as a status */
    void *arg;
    struct event *timer;
    void (*resume)(struct gw_lease *l);
    gw_lease_cb cb;               /* the worker's, for the operation in flight */
    int closed, inflight, held;
    uint64_t rec_ts;              /* the record's newest ts seen or written */
    uint64_t last_renew;          /* when the record was last written */
    struct cn_metrics *reg;
    uint32_t m_held;
};

static void gw_lease_tick(struct gw_lease *l);

static struct gw_lease_head *gw_lease_head(void *status)
{
    return status;
}

static uint64_t gw_lease_now(const struct gw_lease *l)
{
    return l->o.now_us != NULL ? l->o.now_us() : cn_time_now_us();
}

/* ---- the record -------------------------------------------------------- */

void gw_lease_pack_str(msgpack_packer *pk, const char *s, size_t n)
{
    msgpack_pack_str(pk, n);
    msgpack_pack_str_body(pk, s, n);
}

void gw_lease_pack_u64(msgpack_packer *pk, const char *k, uint64_t v)
{
    gw_lease_pack_str(pk, k, strlen(k));
    msgpack_pack_uint64(pk, v);
}

int gw_lease_key_is(const msgpack_object *k, const char *name)
{
    size_t n = strlen(name);
    return k->type == MSGPACK_OBJECT_STR && k->via.str.size == n &&
           memcmp(k->via.str.ptr, name, n) == 0;
}

int gw_lease_decode_u64(const msgpack_object *k, const msgpack_object *v,
                        const char *const *names, uint64_t *const *slots, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (gw_lease_key_is(k, names[i])) {
            if (v->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
                return CN_INVAL;
            *slots[i] = v->via.u64;
            return CN_OK;
        }
    return CN_OK;
}

/* The record's data: a msgpack map of str keys, the lease's two first, then
 * the worker's. */
static struct gw_blob *gw_lease_encode(struct gw_lease *l)
{
    const struct gw_lease_head *h = gw_lease_head(l->st);
    msgpack_sbuffer own;
    msgpack_sbuffer_init(&own);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &own, msgpack_sbuffer_write);
    uint32_t n = l->ops->encode(l->arg, &pk);
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 2 + n);
    gw_lease_pack_str(&pk, "holder", 6);
    gw_lease_pack_str(&pk, h->holder, strlen(h->holder));
    gw_lease_pack_u64(&pk, "lease_until_us", h->lease_until);
    struct evbuffer *b = evbuffer_new();
    evbuffer_add(b, sb.data, sb.size);
    evbuffer_add(b, own.data, own.size);
    msgpack_sbuffer_destroy(&sb);
    msgpack_sbuffer_destroy(&own);
    return gw_blob_from_evbuffer(b);
}

/* The lease's keys of the record; others go to the worker. */
static int gw_lease_decode_field(const struct gw_lease_ops *ops, const msgpack_object *k,
                                 const msgpack_object *v, void *status)
{
    struct gw_lease_head *h = gw_lease_head(status);
    if (gw_lease_key_is(k, "holder")) {
        if (v->type != MSGPACK_OBJECT_STR || v->via.str.size >= sizeof(h->holder))
            return CN_INVAL;
        memcpy(h->holder, v->via.str.ptr, v->via.str.size);
        h->holder[v->via.str.size] = '\0';
        return CN_OK;
    }
    if (gw_lease_key_is(k, "lease_until_us")) {
        if (v->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
            return CN_INVAL;
        h->lease_until = v->via.u64;
        return CN_OK;
    }
    return ops->decode_field(status, k, v);
}

int gw_lease_decode(const struct gw_lease_ops *ops, const void *data, size_t len, void *status)
{
    memset(status, 0, ops->status_size);
    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    int rc = CN_INVAL;
    if (len > 0 && len <= ops->record_max && msg_msgpack_bounded(data, len) == CN_OK &&
        msgpack_unpack_next(&up, data, len, &off) == MSGPACK_UNPACK_SUCCESS && off == len &&
        up.data.type == MSGPACK_OBJECT_MAP) {
        rc = CN_OK;
        for (uint32_t i = 0; i < up.data.via.map.size && rc == CN_OK; i++)
            rc = gw_lease_decode_field(ops, &up.data.via.map.ptr[i].key,
                                       &up.data.via.map.ptr[i].val, status);
    }
    msgpack_unpacked_destroy(&up);
    if (rc != CN_OK)
        memset(status, 0, ops->status_size);
    return rc;
}

/* The record as read: into l->rd, and its ts noted. CN_OK (found or not
 * found: rd is then empty; a record that does not parse is taken as
 * empty) or the store's error. */
static int gw_lease_record(struct gw_lease *l, struct gw_store_result *res)
{
    memset(l->rd, 0, l->ops->status_size);
    if (res->rc == CN_NOTFOUND)
        return CN_OK;
    if (res->rc != CN_OK)
        return res->rc;
    const struct msg *m = &res->reply->m;
    l->rec_ts = CN_MAX(l->rec_ts, m->ts);
    if (gw_lease_decode(l->ops, m->payload.ptr, m->payload.len, l->rd) != CN_OK)
        CN_LOG(CN_LOG_WARN, "%s: the record %s does not parse: taken as empty", l->ops->what,
               l->ops->key);
    return CN_OK;
}

static int gw_lease_read_mine(const struct gw_lease *l)
{
    return strcmp(gw_lease_head(l->rd)->holder, l->holder) == 0;
}

/* ---- plumbing ---------------------------------------------------------- */

static void gw_lease_on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    struct gw_lease *l = arg;
    void (*fn)(struct gw_lease *) = l->resume;
    l->resume = NULL;
    if (!l->closed && fn != NULL)
        fn(l);
}

/* Runs fn(l) delay_us from now, from the loop. */
static void gw_lease_after(struct gw_lease *l, uint64_t delay_us, void (*fn)(struct gw_lease *l))
{
    l->resume = fn;
    struct timeval tv = {(time_t)(delay_us / 1000000), (suseconds_t)(delay_us % 1000000)};
    evtimer_add(l->timer, &tv);
}

/* The time between ticks: the interval, or a third of the lease when that
 * is shorter (so a holder renews before its lease runs out). */
static uint64_t gw_lease_tick_us(const struct gw_lease *l)
{
    uint64_t t = CN_MIN(l->o.interval_us, l->o.lease_us / 3);
    return CN_MAX(t, 100000u);
}

/* A store callback's first call: 1 when the lease was closed meanwhile
 * (the callback must return at once). */
static int gw_lease_op_done(struct gw_lease *l)
{
    l->inflight--;
    return l->closed;
}

static void gw_lease_set_held(struct gw_lease *l, int held)
{
    if (held != l->held)
        CN_LOG(CN_LOG_INFO, "%s: %s the lease (%s)", l->ops->what,
               held ? "holding" : "not holding", l->holder);
    l->held = held;
    if (l->reg != NULL)
        cn_metrics_set(l->reg, l->m_held, held);
}

static void gw_lease_read(struct gw_lease *l, gw_store_cb cb)
{
    l->inflight++;
    gw_store_get(l->store, l->ops->key, strlen(l->ops->key), 1, 0, 0, cb, l);
}

static void gw_lease_put(struct gw_lease *l, gw_store_cb cb)
{
    uint64_t ts = cn_hlc_after(cn_hlc_default(), l->rec_ts);
    l->rec_ts = ts;
    gw_lease_head(l->st)->lease_until = gw_lease_now(l) + l->o.lease_us;
    struct gw_store_record rec = {
        .key = l->ops->key, .key_len = strlen(l->ops->key),
        .etag = "", .etag_len = 0, .meta = "", .meta_len = 0,
        .ver = l->o.ver, .ts = ts,
    };
    struct gw_blob *b = gw_lease_encode(l);
    l->inflight++;
    gw_store_put(l->store, &rec, b, cb, l);
    gw_blob_unref(b);
}

/* ---- the worker's writes ------------------------------------------------ */

static void gw_lease_on_written(struct gw_store_result *res, void *arg)
{
    struct gw_lease *l = arg;
    if (gw_lease_op_done(l))
        return;
    if (res->rc == CN_OK)
        l->last_renew = gw_lease_now(l);
    gw_lease_cb cb = l->cb;
    l->cb = NULL;
    if (cb == NULL)
        gw_lease_again(l);
    else
        cb(l->arg, res->rc == CN_OK ? GW_LEASE_OK : GW_LEASE_UNWRITTEN);
}

void gw_lease_write(struct gw_lease *l, gw_lease_cb cb)
{
    l->cb = cb;
    gw_lease_put(l, gw_lease_on_written);
}

int gw_lease_renew_due(const struct gw_lease *l)
{
    return gw_lease_now(l) >= l->last_renew + l->o.lease_us / 3;
}

static void gw_lease_on_renew_read(struct gw_store_result *res, void *arg)
{
    struct gw_lease *l = arg;
    if (gw_lease_op_done(l))
        return;
    gw_lease_cb cb = l->cb;
    if (gw_lease_record(l, res) != CN_OK) {
        l->cb = NULL;
        cb(l->arg, GW_LEASE_UNREAD);
        return;
    }
    if (!gw_lease_read_mine(l)) {
        l->cb = NULL;
        gw_lease_set_held(l, 0);
        cb(l->arg, GW_LEASE_LOST);
        return;
    }
    if (l->ops->merge != NULL)
        l->ops->merge(l->arg, l->rd);
    gw_lease_put(l, gw_lease_on_written);
}

void gw_lease_renew(struct gw_lease *l, gw_lease_cb cb)
{
    CN_ASSERT(cb != NULL);
    l->cb = cb;
    gw_lease_read(l, gw_lease_on_renew_read);
}

/* ---- the protocol ------------------------------------------------------- */

/* The lease is ours: counted from now; the worker's turn. */
static void gw_lease_held_now(struct gw_lease *l)
{
    gw_lease_set_held(l, 1);
    gw_lease_head(l->st)->lease_until = gw_lease_now(l) + l->o.lease_us;
    l->ops->held(l->arg);
}

static void gw_lease_not_held(struct gw_lease *l)
{
    gw_lease_set_held(l, 0);
    if (l->ops->on_lost != NULL)
        l->ops->on_lost(l->arg);
    gw_lease_again(l);
}

static void gw_lease_on_claim_check(struct gw_store_result *res, void *arg)
{
    struct gw_lease *l = arg;
    if (gw_lease_op_done(l))
        return;
    if (gw_lease_record(l, res) == CN_OK && gw_lease_read_mine(l)) {
        memcpy(l->st, l->rd, l->ops->status_size);
        gw_lease_held_now(l);
        return;
    }
    gw_lease_not_held(l);   /* another gateway's claim won */
}

static void gw_lease_claim_check(struct gw_lease *l)
{
    gw_lease_read(l, gw_lease_on_claim_check);
}

static void gw_lease_on_claimed(struct gw_store_result *res, void *arg)
{
    struct gw_lease *l = arg;
    if (gw_lease_op_done(l))
        return;
    if (res->rc != CN_OK) {
        gw_lease_again(l);
        return;
    }
    /* every claim that raced this one has been written by now: the newest
     * of them is the record every gateway reads back */
    gw_lease_after(l, l->o.settle_us, gw_lease_claim_check);
}

static void gw_lease_on_read(struct gw_store_result *res, void *arg)
{
    struct gw_lease *l = arg;
    if (gw_lease_op_done(l))
        return;
    if (gw_lease_record(l, res) != CN_OK) {
        gw_lease_again(l);
        return;
    }
    if (l->ops->on_read != NULL)
        l->ops->on_read(l->arg);
    uint64_t now = gw_lease_now(l);
    int mine = gw_lease_read_mine(l);
    memcpy(l->st, l->rd, l->ops->status_size);
    struct gw_lease_head *h = gw_lease_head(l->st);
    if (h->lease_until > now && mine) {
        gw_lease_held_now(l);
        return;
    }
    if (h->lease_until > now) {   /* another gateway holds it */
        gw_lease_not_held(l);
        return;
    }
    /* free or expired: claim it, keeping what the last holder left (a
     * worker with a cursor resumes where it stopped) */
    if (l->ops->on_claim != NULL)
        l->ops->on_claim(l->arg);
    snprintf(h->holder, sizeof(h->holder), "%s", l->holder);
    gw_lease_put(l, gw_lease_on_claimed);
}

static void gw_lease_tick(struct gw_lease *l)
{
    gw_lease_read(l, gw_lease_on_read);
}

void gw_lease_again(struct gw_lease *l)
{
    gw_lease_after(l, gw_lease_tick_us(l), gw_lease_tick);
}

void gw_lease_check(struct gw_lease *l)
{
    evtimer_del(l->timer);
    l->resume = NULL;
    gw_lease_tick(l);
}

/* ---- life -------------------------------------------------------------- */

int gw_lease_held(const struct gw_lease *l)
{
    return l->held;
}

const char *gw_lease_read_holder(const struct gw_lease *l)
{
    return gw_lease_head(l->rd)->holder;
}

int gw_lease_inflight(const struct gw_lease *l)
{
    return l->inflight;
}

struct gw_lease *gw_lease_new(struct event_base *base, struct gw_store *store,
                              const struct gw_lease_ops *ops, const struct gw_lease_opts *o,
                              void *status, void *arg, struct cn_metrics *reg, uint32_t m_held)
{
    CN_ASSERT(ops->status_size >= sizeof(struct gw_lease_head));
    CN_ASSERT(ops->encode != NULL && ops->decode_field != NULL && ops->held != NULL);
    struct gw_lease *l = cn_calloc(1, sizeof(*l));
    l->base = base;
    l->store = store;
    l->ops = ops;
    l->o = *o;
    l->o.holder = NULL;
    snprintf(l->holder, sizeof(l->holder), "%s", o->holder);
    l->st = status;
    l->rd = cn_calloc(1, ops->status_size);
    l->arg = arg;
    l->reg = reg;
    l->m_held = m_held;
    l->timer = evtimer_new(base, gw_lease_on_timer, l);
    gw_lease_after(l, gw_lease_tick_us(l) / 4, gw_lease_tick);
    return l;
}

void gw_lease_close(struct gw_lease *l)
{
    if (l == NULL)
        return;
    l->closed = 1;
    evtimer_del(l->timer);
}

int gw_lease_free(struct gw_lease *l)
{
    if (l == NULL)
        return 1;
    if (l->inflight != 0)   /* a callback still to come would find it freed */
        return 0;
    event_free(l->timer);
    cn_free(l->rd);
    cn_free(l);
    return 1;
}
