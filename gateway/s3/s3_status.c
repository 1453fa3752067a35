/* The status document (s3_status.h), built per request from the shared
 * node states and hint counters (a glance: no lock but the hint counters'). */
#include "s3_status.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "access_log.h"
#include "cluster.h"
#include "handoff.h"
#include "node_health.h"
#include "request.h"

#include "cn/build_info.h"
#include "cn/cluster.h"
#include "cn/time.h"

void gw_s3_status_json_str(struct evbuffer *b, const char *s, size_t n)
{
    evbuffer_add(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            evbuffer_add_printf(b, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            evbuffer_add_printf(b, "\\u%04x", c);
        else
            evbuffer_add(b, &s[i], 1);
    }
    evbuffer_add(b, "\"", 1);
}

static void gw_s3_status_cstr(struct evbuffer *b, const char *s)
{
    gw_s3_status_json_str(b, s, strlen(s));
}

/* RFC 3339 of the wall-clock moment that was mono_us on the monotonic clock. */
static void gw_s3_status_when(struct evbuffer *b, uint64_t mono_us)
{
    char t[25];
    uint64_t now = cn_time_now_us(), mono_now = cn_time_mono_us();
    gw_access_log_time(now - (mono_now > mono_us ? mono_now - mono_us : 0), t);
    evbuffer_add_printf(b, "\"%s\"", t);
}

/* The nodes of the cluster map in use (a node a later map added too; one
 * a map removed no more), each with the states kept for its slot. */
static void gw_s3_status_nodes(struct evbuffer *b, const struct gw_cluster *c,
                               const struct gw_s3_status_info *info)
{
    const struct gw_cluster_view *v = gw_cluster_view(c);
    const struct cn_cluster *cl = gw_cluster_view_map(v);
    struct gw_node_health *h = gw_cluster_health(c);
    struct gw_handoff *ho = gw_cluster_handoff(c);
    evbuffer_add_printf(b, "  \"nodes\": [");
    for (uint32_t i = 0; i < cn_cluster_nodes(cl); i++) {
        const struct cn_cluster_node *n = cn_cluster_node(cl, i);
        uint32_t slot = gw_cluster_view_slot(v, i);
        struct gw_node_health_stats st;
        gw_node_health_stats(h, slot, &st);
        struct gw_handoff_stats hs = {0};
        if (ho != NULL)
            gw_handoff_stats(ho, slot, &hs);
        evbuffer_add_printf(b, "%s\n    {\"id\": ", i > 0 ? "," : "");
        gw_s3_status_cstr(b, n->id);
        evbuffer_add_printf(b, ", \"address\": ");
        gw_s3_status_cstr(b, n->address);
        evbuffer_add_printf(b, ", \"zone\": ");
        gw_s3_status_cstr(b, n->zone != NULL ? n->zone : "");
        evbuffer_add_printf(b, ", \"weight\": %u, \"state\": \"%s\", \"up\": %s, "
                            "\"since\": ", n->weight, n->leaving ? "leaving" : "active",
                            st.up ? "true" : "false");
        uint64_t since = st.up ? st.up_since_us : st.down_since_us;
        gw_s3_status_when(b, since != 0 ? since : info->started_mono_us);
        evbuffer_add_printf(b, ", \"marked_down\": %llu, \"marked_up\": %llu, "
                            "\"hints\": {\"pending\": %llu, \"added\": %llu, "
                            "\"replayed\": %llu, \"dropped\": %llu}}",
                            (unsigned long long)st.marked_down,
                            (unsigned long long)st.marked_up, (unsigned long long)hs.pending,
                            (unsigned long long)hs.added, (unsigned long long)hs.replayed,
                            (unsigned long long)hs.dropped);
    }
    evbuffer_add_printf(b, "\n  ],\n");
}

void gw_s3_status_reply(struct gw_req *r)
{
    const struct gw_s3_status_info *info = r->s3->status;
    const struct gw_cluster *c = r->s3->cluster;
    struct evbuffer *b = evbuffer_new();
    char why[512];
    int ready = !*r->s3->draining && gw_cluster_ready(c, why, sizeof(why));
    if (*r->s3->draining)
        snprintf(why, sizeof(why), "draining: the gateway is stopping");
    else if (ready)
        snprintf(why, sizeof(why), "ok");
    char started[25];
    gw_access_log_time(info->started_us, started);
    evbuffer_add_printf(b, "{\n  \"version\": ");
    gw_s3_status_cstr(b, cn_build_info_version());
    evbuffer_add_printf(b, ",\n  \"started\": \"%s\",\n  \"uptime_s\": %llu,\n"
                        "  \"threads\": %u,\n  \"ready\": %s,\n  \"ready_reason\": ",
                        started,
                        (unsigned long long)((cn_time_mono_us() - info->started_mono_us) /
                                             1000000),
                        info->threads, ready ? "true" : "false");
    gw_s3_status_cstr(b, why);
    uint32_t n, w, rq, d;
    gw_cluster_quorum_values(c, &n, &w, &rq, &d);
    const struct cn_cluster *cl = gw_cluster_view_map(gw_cluster_view(c));
    evbuffer_add_printf(b, ",\n  \"ring\": {\"digest\": \"%s\", \"vnodes\": %u, \"nodes\": %u, "
                        "\"zones\": %s, \"replicas\": %u, \"write\": %u, \"read\": %u, "
                        "\"delete\": %u, \"map_version\": %llu},\n", info->ring_digest,
                        info->vnodes, cn_cluster_nodes(cl),
                        cn_cluster_has_zones(cl) ? "true" : "false", n, w, rq, d,
                        (unsigned long long)gw_cluster_view_version(gw_cluster_view(c)));
    gw_s3_status_nodes(b, c, info);
    evbuffer_add_printf(b, "  \"settings\": %s\n}\n", info->settings_json);
    gw_req_reply_start(r, 200);
    gw_req_reply_header(r, "Content-Type", "application/json", 16);
    gw_req_reply_header(r, "Cache-Control", "no-store", 8);
    gw_req_reply_send_headers(r, evbuffer_get_length(b));
    evbuffer_add_buffer(gw_req_reply_body(r), b);
    evbuffer_free(b);
    gw_req_reply_end(r);
}
