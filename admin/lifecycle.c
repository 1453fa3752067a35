/* cairn-admin lifecycle status (lifecycle.h). The record is a msgpack map
 * of str keys (docs/operations.md); it is printed key by key, times (keys
 * ending in _us) as UTC dates with how far they are from now, so a field a
 * newer gateway adds shows without a change here. */
#include "lifecycle.h"

#include "json.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <msgpack.h>
#include <zmq.h>

#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/time.h"
#include "msg/client.h"
#include "msg/msg.h"

#define ADM_LC_KEY "s/lifecycle"

/* "2026-12-03T12:00:00Z (in 12.5 s)" for a time in us since the epoch. */
static void adm_lc_print_time(const char *name, uint64_t us, uint64_t now)
{
    if (us == 0) {
        printf("  %-16s never\n", name);
        return;
    }
    time_t t = (time_t)(us / 1000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char buf[32];
    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    double d = ((double)us - (double)now) / 1e6;
    printf("  %-16s %s (%s %.1f s)\n", name, buf, d >= 0 ? "in" : "ago", d >= 0 ? d : -d);
}

/* The record as a JSON object of its str and integer fields (--json). */
static void adm_lc_json(const void *data, size_t len)
{
    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    if (len > 4096 || msg_msgpack_bounded(data, len) != CN_OK ||
        msgpack_unpack_next(&up, data, len, &off) != MSGPACK_UNPACK_SUCCESS ||
        up.data.type != MSGPACK_OBJECT_MAP) {
        printf("null, \"error\": \"the record does not parse\"");
        msgpack_unpacked_destroy(&up);
        return;
    }
    int first = 1;
    putchar('{');
    for (uint32_t i = 0; i < up.data.via.map.size; i++) {
        const msgpack_object *k = &up.data.via.map.ptr[i].key, *v = &up.data.via.map.ptr[i].val;
        if (k->type != MSGPACK_OBJECT_STR || k->via.str.size > 64 ||
            (v->type != MSGPACK_OBJECT_STR && v->type != MSGPACK_OBJECT_POSITIVE_INTEGER))
            continue;
        printf("%s", first ? "" : ", ");
        first = 0;
        adm_json_str(k->via.str.ptr, k->via.str.size);
        printf(": ");
        if (v->type == MSGPACK_OBJECT_STR)
            adm_json_str(v->via.str.ptr, CN_MIN(v->via.str.size, 256u));
        else
            printf("%llu", (unsigned long long)v->via.u64);
    }
    putchar('}');
    msgpack_unpacked_destroy(&up);
}

static void adm_lc_print(const char *name_of, const void *data, size_t len)
{
    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    if (len > 4096 || msg_msgpack_bounded(data, len) != CN_OK ||
        msgpack_unpack_next(&up, data, len, &off) != MSGPACK_UNPACK_SUCCESS ||
        up.data.type != MSGPACK_OBJECT_MAP) {
        printf("%s: the record does not parse (%zu bytes)\n", name_of, len);
        msgpack_unpacked_destroy(&up);
        return;
    }
    uint64_t now = cn_time_now_us();
    printf("%s:\n", name_of);
    for (uint32_t i = 0; i < up.data.via.map.size; i++) {
        const msgpack_object *k = &up.data.via.map.ptr[i].key, *v = &up.data.via.map.ptr[i].val;
        if (k->type != MSGPACK_OBJECT_STR || k->via.str.size > 64)
            continue;
        char name[65];
        memcpy(name, k->via.str.ptr, k->via.str.size);
        name[k->via.str.size] = '\0';
        size_t nl = strlen(name);
        if (v->type == MSGPACK_OBJECT_STR)
            printf("  %-16s %.*s\n", name, (int)CN_MIN(v->via.str.size, 256u), v->via.str.ptr);
        else if (v->type == MSGPACK_OBJECT_POSITIVE_INTEGER && nl > 3 &&
                 strcmp(name + nl - 3, "_us") == 0 && strstr(name, "length") == NULL &&
                 strstr(name, "interval") == NULL && strcmp(name, "lease_us") != 0)
            adm_lc_print_time(name, v->via.u64, now);
        else if (v->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
            printf("  %-16s %llu\n", name, (unsigned long long)v->via.u64);
    }
    msgpack_unpacked_destroy(&up);
}

/* A node that did not answer: a text line, or an entry of "down". */
static void adm_lc_down(const char *ep, const char *err, int json, int *n_down)
{
    if (!json) {
        printf("%-28s down (%s)\n", ep, err);
        return;
    }
    printf("%s{\"address\": ", (*n_down)++ > 0 ? ", " : "");
    adm_json_cstr(ep);
    printf(", \"error\": ");
    adm_json_cstr(err);
    putchar('}');
}

int adm_lifecycle_status(const struct cn_cluster *cl, int timeout_ms,
                         const struct msg_curve_client *curve, int json)
{
    return adm_system_record_status(cl, timeout_ms, curve, json, ADM_LC_KEY, "lifecycle");
}

int adm_system_record_status(const struct cn_cluster *cl, int timeout_ms,
                             const struct msg_curve_client *curve, int json, const char *key,
                             const char *name)
{
    void *zctx = zmq_ctx_new();
    int n_down = 0;
    if (json)
        printf("{\"command\": \"%s status\", \"down\": [", name);
    int answered = 0;
    uint64_t best_ts = 0, best_ver = 0;
    char *best = NULL;
    size_t best_len = 0;
    for (uint32_t i = 0; i < cn_cluster_nodes(cl); i++) {
        const char *ep = cn_cluster_node(cl, i)->address;
        char err[CN_ERR_LEN];
        struct msg_client *c = msg_client_new_curve(zctx, ep, curve, err);
        if (c == NULL) {
            adm_lc_down(ep, err, json, &n_down);
            continue;
        }
        struct msg req;
        struct msg_reply rep;
        msg_init_request(&req, MSG_OP_GET, cn_time_mono_us());
        req.key = (struct msg_bytes){(const uint8_t *)key, (uint32_t)strlen(key)};
        MSG_SET(&req, MSG_F_KEY);
        if (msg_client_call(c, &req, &rep, timeout_ms, err) != CN_OK) {
            adm_lc_down(ep, err, json, &n_down);
            msg_client_free(c);
            continue;
        }
        const struct msg *m = &rep.m;
        if (m->st == MSG_ST_OK || m->st == MSG_ST_NOT_FOUND)
            answered++;
        if (m->st == MSG_ST_OK && (m->ts > best_ts || (m->ts == best_ts && m->ver > best_ver))) {
            cn_free(best);
            best = cn_memdup(m->payload.ptr, m->payload.len > 0 ? m->payload.len : 1);
            best_len = m->payload.len;
            best_ts = m->ts;
            best_ver = m->ver;
        }
        msg_reply_release(&rep);
        msg_client_free(c);
    }
    zmq_ctx_term(zctx);
    if (json) {
        printf("], \"answered\": %d, \"record\": ", answered);
        if (best != NULL)
            adm_lc_json(best, best_len);
        else
            printf("null");
        printf("}\n");
        cn_free(best);
        return answered == 0 ? 1 : 0;
    }
    if (answered == 0) {
        printf("%s: no node answered\n", name);
        return 1;
    }
    if (best == NULL)
        printf("%s: no scan has run yet (no %s record on %d nodes)\n", name, key, answered);
    else
        adm_lc_print(name, best, best_len);
    cn_free(best);
    return 0;
}
