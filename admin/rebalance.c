/* cairn-admin rebalance status|throttle (rebalance.h). The record is a
 * msgpack map of str keys (docs/cluster.md); status prints the fields it
 * knows plus an ETA from the walk's rate and the keys the nodes hold
 * (STATS records / N); throttle rewrites the record with throttle_bps and
 * reads it back, again when the worker's own write raced it. */
#include "rebalance.h"

#include "json.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <msgpack.h>
#include <zmq.h>

#include "cn/alloc.h"
#include "cn/config.h"
#include "cn/crc.h"
#include "cn/hlc.h"
#include "cn/rc.h"
#include "cn/time.h"
#include "msg/client.h"
#include "msg/msg.h"

#define ADM_RB_MAX 4096

/* The newest copy of the record on the map's nodes, and the records the
 * nodes hold in all (for the ETA). */
struct adm_rb_seen {
    char data[ADM_RB_MAX];
    size_t len;
    int has;
    uint64_t ts, ver;
    uint32_t answered;
    uint64_t records;
};

static void adm_rb_read(const struct adm_rebalance_opts *o, struct adm_rb_seen *s, int stats)
{
    memset(s, 0, sizeof(*s));
    void *zctx = zmq_ctx_new();
    for (uint32_t i = 0; i < cn_cluster_nodes(o->map); i++) {
        const char *ep = cn_cluster_node(o->map, i)->address;
        char err[CN_ERR_LEN];
        struct msg_client *c = msg_client_new_curve(zctx, ep, o->curve, err);
        if (c == NULL)
            continue;
        struct msg req;
        struct msg_reply rep;
        msg_init_request(&req, MSG_OP_GET, cn_time_mono_us());
        req.key = (struct msg_bytes){(const uint8_t *)ADM_REBALANCE_KEY,
                                     strlen(ADM_REBALANCE_KEY)};
        MSG_SET(&req, MSG_F_KEY);
        if (msg_client_call(c, &req, &rep, o->timeout_ms, err) == CN_OK) {
            const struct msg *m = &rep.m;
            s->answered += m->st == MSG_ST_OK || m->st == MSG_ST_NOT_FOUND;
            if (m->st == MSG_ST_OK && m->payload.len <= ADM_RB_MAX &&
                (!s->has || m->ts > s->ts || (m->ts == s->ts && m->ver > s->ver))) {
                memcpy(s->data, m->payload.ptr, m->payload.len);
                s->len = m->payload.len;
                s->has = 1;
                s->ts = m->ts;
                s->ver = m->ver;
            }
            msg_reply_release(&rep);
        }
        msg_init_request(&req, MSG_OP_STATS, cn_time_mono_us());
        if (stats && msg_client_call(c, &req, &rep, o->timeout_ms, err) == CN_OK) {
            for (uint32_t k = 0; k < rep.m.n_stats; k++)
                if (rep.m.stats[k].name.len == 7 &&
                    memcmp(rep.m.stats[k].name.ptr, "records", 7) == 0)
                    s->records += rep.m.stats[k].value;
            msg_reply_release(&rep);
        }
        msg_client_free(c);
    }
    zmq_ctx_term(zctx);
}

static int adm_rb_key_is(const msgpack_object *k, const char *name)
{
    size_t n = strlen(name);
    return k->type == MSGPACK_OBJECT_STR && k->via.str.size == n &&
           memcmp(k->via.str.ptr, name, n) == 0;
}

static int adm_rb_parse(const void *data, size_t len, struct adm_rebalance_fields *f)
{
    static const char *const u64s[] = {"lease_until_us", "done_version", "from_version",
                                       "to_version", "scanned", "copied", "bytes", "purged",
                                       "failed", "started_us", "updated_us", "finished_us",
                                       "throttle_bps"};
    uint64_t *slots[] = {&f->lease_until, &f->done, &f->from, &f->to, &f->scanned, &f->copied,
                         &f->bytes, &f->purged, &f->failed, &f->started, &f->updated,
                         &f->finished, &f->throttle};
    memset(f, 0, sizeof(*f));
    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    int ok = len > 0 && msg_msgpack_bounded(data, len) == CN_OK &&
             msgpack_unpack_next(&up, data, len, &off) == MSGPACK_UNPACK_SUCCESS &&
             up.data.type == MSGPACK_OBJECT_MAP;
    for (uint32_t i = 0; ok && i < up.data.via.map.size; i++) {
        const msgpack_object *k = &up.data.via.map.ptr[i].key, *v = &up.data.via.map.ptr[i].val;
        if (v->type == MSGPACK_OBJECT_STR && adm_rb_key_is(k, "holder"))
            snprintf(f->holder, sizeof(f->holder), "%.*s", (int)CN_MIN(v->via.str.size, 127u),
                     v->via.str.ptr);
        if (v->type == MSGPACK_OBJECT_STR && adm_rb_key_is(k, "state"))
            snprintf(f->state, sizeof(f->state), "%.*s", (int)CN_MIN(v->via.str.size, 15u),
                     v->via.str.ptr);
        for (size_t j = 0; j < CN_ARRAY_LEN(u64s); j++)
            if (v->type == MSGPACK_OBJECT_POSITIVE_INTEGER && adm_rb_key_is(k, u64s[j])) {
                *slots[j] = v->via.u64;
                f->has_throttle |= j == CN_ARRAY_LEN(u64s) - 1;
            }
    }
    msgpack_unpacked_destroy(&up);
    return ok;
}

/* Seconds left: the keys not scanned yet over the walk's rate; -1 unknown. */
static double adm_rb_eta(const struct adm_rebalance_opts *o, const struct adm_rb_seen *s,
                         const struct adm_rebalance_fields *f)
{
    uint64_t now = cn_time_now_us();
    uint32_t n = o->replicas > 0 ? o->replicas : CN_MIN(3u, cn_cluster_active_nodes(o->map));
    if (strcmp(f->state, "copying") != 0 || f->started == 0 || now <= f->started ||
        f->scanned == 0 || n == 0)
        return -1;
    double keys = (double)s->records / n;
    double rate = (double)f->scanned / ((double)(now - f->started) / 1e6);
    return keys > (double)f->scanned ? (keys - (double)f->scanned) / rate : 0;
}

static void adm_rb_print_json(const struct adm_rebalance_opts *o, const struct adm_rb_seen *s)
{
    struct adm_rebalance_fields f;
    if (!s->has || !adm_rb_parse(s->data, s->len, &f)) {
        printf("null");
        return;
    }
    printf("{\"holder\": ");
    adm_json_cstr(f.holder);
    printf(", \"state\": ");
    adm_json_cstr(f.state);
    printf(", \"map_version\": %llu, \"done_version\": %llu, \"from_version\": %llu, "
           "\"to_version\": %llu, \"scanned\": %llu, \"copied\": %llu, \"bytes\": %llu, "
           "\"purged\": %llu, \"failed\": %llu, \"started_us\": %llu, \"updated_us\": %llu, "
           "\"finished_us\": %llu, \"throttle_bps\": ",
           (unsigned long long)cn_cluster_version(o->map), (unsigned long long)f.done,
           (unsigned long long)f.from, (unsigned long long)f.to,
           (unsigned long long)f.scanned, (unsigned long long)f.copied,
           (unsigned long long)f.bytes, (unsigned long long)f.purged,
           (unsigned long long)f.failed, (unsigned long long)f.started,
           (unsigned long long)f.updated, (unsigned long long)f.finished);
    if (f.has_throttle)
        printf("%llu", (unsigned long long)f.throttle);
    else
        printf("null");
    double eta = adm_rb_eta(o, s, &f);
    if (eta >= 0)
        printf(", \"eta_s\": %.1f}", eta);
    else
        printf(", \"eta_s\": null}");
}

static void adm_rb_print_text(const struct adm_rebalance_opts *o, const struct adm_rb_seen *s)
{
    struct adm_rebalance_fields f;
    if (!s->has || !adm_rb_parse(s->data, s->len, &f)) {
        printf("rebalance: no walk has run yet (no %s record)\n", ADM_REBALANCE_KEY);
        return;
    }
    uint64_t v = cn_cluster_version(o->map);
    const char *what = strcmp(f.state, "copying") == 0 ? "copying"
                       : f.done >= v ? "done" : "pending";
    printf("rebalance: %s, map version %llu -> %llu (rebalanced up to %llu), holder %s\n", what,
           (unsigned long long)f.from, (unsigned long long)f.to, (unsigned long long)f.done,
           f.holder[0] ? f.holder : "none");
    printf("  keys scanned %llu, copies written %llu (%llu bytes), purged %llu, failed %llu\n",
           (unsigned long long)f.scanned, (unsigned long long)f.copied,
           (unsigned long long)f.bytes, (unsigned long long)f.purged,
           (unsigned long long)f.failed);
    if (f.has_throttle && f.throttle > 0)
        printf("  throttle %llu bytes/s\n", (unsigned long long)f.throttle);
    else
        printf("  throttle %s\n", f.has_throttle ? "none" : "the gateways' rebalance.throttle");
    double eta = adm_rb_eta(o, s, &f);
    if (eta >= 0)
        printf("  eta %.0f s\n", eta);
}

uint32_t adm_rebalance_fetch(const struct adm_rebalance_opts *o, struct adm_rebalance_fields *f)
{
    struct adm_rb_seen *s = cn_malloc(sizeof(*s));
    adm_rb_read(o, s, 0);
    f->has = s->has && adm_rb_parse(s->data, s->len, f);
    if (!f->has)
        memset(f, 0, sizeof(*f));
    uint32_t answered = s->answered;
    cn_free(s);
    return answered;
}

int adm_rebalance_status(const struct adm_rebalance_opts *o)
{
    struct adm_rb_seen *s = cn_malloc(sizeof(*s));
    adm_rb_read(o, s, 1);
    if (o->json) {
        printf("{\"command\": \"rebalance status\", \"answered\": %u, \"rebalance\": ",
               s->answered);
        adm_rb_print_json(o, s);
        printf("}\n");
    } else if (s->answered == 0) {
        printf("rebalance: no node answered\n");
    } else {
        adm_rb_print_text(o, s);
    }
    int bad = s->answered == 0;
    cn_free(s);
    return bad;
}

void adm_rebalance_summary(const struct adm_rebalance_opts *o)
{
    struct adm_rb_seen *s = cn_malloc(sizeof(*s));
    adm_rb_read(o, s, 1);
    if (o->json)
        adm_rb_print_json(o, s);
    else
        adm_rb_print_text(o, s);
    cn_free(s);
}

/* The record s holds with throttle_bps set to bps (has: 1) or removed. The
 * other fields are kept as they are. Caller frees *out (msgpack sbuffer). */
static void adm_rb_with_throttle(const struct adm_rb_seen *s, int has, uint64_t bps,
                                 msgpack_sbuffer *sb)
{
    msgpack_packer pk;
    msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    uint32_t n = 0;
    const msgpack_object *kv = NULL;
    if (s->has && msg_msgpack_bounded(s->data, s->len) == CN_OK &&
        msgpack_unpack_next(&up, s->data, s->len, &off) == MSGPACK_UNPACK_SUCCESS &&
        up.data.type == MSGPACK_OBJECT_MAP) {
        n = up.data.via.map.size;
        kv = (const msgpack_object *)up.data.via.map.ptr;
    }
    uint32_t keep = 0;
    for (uint32_t i = 0; i < n; i++)
        keep += !adm_rb_key_is(&up.data.via.map.ptr[i].key, "throttle_bps");
    msgpack_pack_map(&pk, keep + (uint32_t)has);
    for (uint32_t i = 0; kv != NULL && i < n; i++) {
        if (adm_rb_key_is(&up.data.via.map.ptr[i].key, "throttle_bps"))
            continue;
        msgpack_pack_object(&pk, up.data.via.map.ptr[i].key);
        msgpack_pack_object(&pk, up.data.via.map.ptr[i].val);
    }
    if (has) {
        msgpack_pack_str(&pk, 12);
        msgpack_pack_str_body(&pk, "throttle_bps", 12);
        msgpack_pack_uint64(&pk, bps);
    }
    msgpack_unpacked_destroy(&up);
}

/* Writes data to every node of the map at ts. How many stored it. */
static uint32_t adm_rb_write_all(const struct adm_rebalance_opts *o, const void *data,
                                 size_t len, uint64_t ts)
{
    void *zctx = zmq_ctx_new();
    uint32_t acks = 0;
    for (uint32_t i = 0; i < cn_cluster_nodes(o->map); i++) {
        const char *ep = cn_cluster_node(o->map, i)->address;
        char err[CN_ERR_LEN];
        struct msg_client *c = msg_client_new_curve(zctx, ep, o->curve, err);
        if (c == NULL)
            continue;
        struct msg req;
        struct msg_reply rep;
        msg_init_request(&req, MSG_OP_PUT, 0);
        req.key = (struct msg_bytes){(const uint8_t *)ADM_REBALANCE_KEY,
                                     strlen(ADM_REBALANCE_KEY)};
        req.ts = ts;
        req.ver = ts;
        req.crc = cn_crc32c(0, data, len);
        req.etag = (struct msg_bytes){(const uint8_t *)"", 0};
        req.payload = (struct msg_bytes){(const uint8_t *)data, (uint32_t)len};
        MSG_SET(&req, MSG_F_KEY);
        MSG_SET(&req, MSG_F_TS);
        MSG_SET(&req, MSG_F_VER);
        MSG_SET(&req, MSG_F_CRC);
        MSG_SET(&req, MSG_F_ETAG);
        if (msg_client_call(c, &req, &rep, o->timeout_ms, err) == CN_OK) {
            acks += rep.m.st == MSG_ST_OK;
            msg_reply_release(&rep);
        } else {
            fprintf(stderr, "cairn-admin: %s: %s\n", ep, err);
        }
        msg_client_free(c);
    }
    zmq_ctx_term(zctx);
    return acks;
}

int adm_rebalance_throttle(const struct adm_rebalance_opts *o, const char *rate)
{
    int64_t bps = 0;
    int has = strcmp(rate, "off") != 0;
    if (has && (cn_config_parse_size(rate, &bps) != CN_OK || bps < 0)) {
        fprintf(stderr, "cairn-admin: rebalance throttle: '%s' is not a size (50M, 0: no "
                "limit, off: the gateways' setting)\n", rate);
        return 2;
    }
    struct adm_rb_seen *s = cn_malloc(sizeof(*s));
    int ok = 0;
    /* the holder rewrites the record every round from what it read just
     * before: a write of ours between its read and its write is lost, so
     * read it back after a while and write again if so */
    for (int attempt = 0; attempt < 5 && !ok; attempt++) {
        adm_rb_read(o, s, 0);
        if (attempt > 0) {
            struct adm_rebalance_fields f;
            if (s->has && adm_rb_parse(s->data, s->len, &f) && f.has_throttle == has &&
                (!has || f.throttle == (uint64_t)bps)) {
                ok = 1;
                break;
            }
        }
        msgpack_sbuffer sb;
        msgpack_sbuffer_init(&sb);
        adm_rb_with_throttle(s, has, (uint64_t)bps, &sb);
        uint64_t ts = cn_hlc_after(cn_hlc_default(), s->ts);
        uint32_t acks = adm_rb_write_all(o, sb.data, sb.size, ts);
        msgpack_sbuffer_destroy(&sb);
        if (acks <= cn_cluster_nodes(o->map) / 2) {
            fprintf(stderr, "cairn-admin: rebalance throttle: only %u of %u nodes stored it\n",
                    acks, cn_cluster_nodes(o->map));
            break;
        }
        usleep(1500 * 1000);
    }
    cn_free(s);
    if (o->json && has)
        printf("{\"command\": \"rebalance throttle\", \"ok\": %s, \"throttle_bps\": %lld}\n",
               ok ? "true" : "false", (long long)bps);
    else if (o->json)
        printf("{\"command\": \"rebalance throttle\", \"ok\": %s, \"throttle_bps\": null}\n",
               ok ? "true" : "false");
    else if (ok)
        printf("rebalance throttle %s\n", has ? rate : "off (the gateways' setting)");
    else
        fprintf(stderr, "cairn-admin: rebalance throttle: not confirmed on the nodes\n");
    return ok ? 0 : 1;
}
