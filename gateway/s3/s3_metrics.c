/* Gateway metrics (s3_metrics.h). Every (operation, status) series is
 * registered up front, as cn/metrics asks: the statuses are the ones the
 * gateway answers (gw_s3_metrics_codes), anything else counts as "other". */
#include "s3_metrics.h"

#include <stdio.h>

#include "access_log.h"
#include "http_loop.h"
#include "s3_ops.h"

#include "cn/alloc.h"
#include "cn/metrics.h"

static const int gw_s3_metrics_codes[] = {200, 204, 206, 304, 400, 403, 404, 405, 409,
                                          411, 412, 414, 416, 500, 501, 503};
#define GW_S3_METRICS_N_CODES (sizeof(gw_s3_metrics_codes) / sizeof(gw_s3_metrics_codes[0]))
/* the operation slot of a request refused before routing ("-") */
#define GW_S3_METRICS_NO_OP GW_S3_OP_COUNT

struct gw_s3_metrics {
    struct cn_metrics *reg;
    struct gw_http_loop *const *loops;
    uint32_t n_loops;
    /* [op][code], the last code slot is "other" */
    uint32_t requests[GW_S3_OP_COUNT + 1][GW_S3_METRICS_N_CODES + 1];
    uint32_t duration[GW_S3_OP_COUNT + 1];
    uint32_t bytes_in, bytes_out, in_flight, connections;
    uint32_t access_dropped;
    struct gw_access_log *access;   /* read at scrape; NULL: none */
};

/* Request durations: 100 us to 60 s (in us). */
static const uint64_t gw_s3_metrics_bounds[] = {
    100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000,
    1000000, 2500000, 5000000, 10000000, 30000000, 60000000};

static void gw_s3_metrics_collect(struct cn_metrics *reg, void *arg)
{
    struct gw_s3_metrics *m = arg;
    uint64_t conns = 0;
    for (uint32_t i = 0; i < m->n_loops; i++)
        conns += m->loops[i]->n_conns;   /* a glance at another thread's count */
    cn_metrics_set(reg, m->connections, (int64_t)conns);
    if (m->access != NULL)
        cn_metrics_set(reg, m->access_dropped, (int64_t)gw_access_log_dropped(m->access));
}

struct gw_s3_metrics *gw_s3_metrics_new(struct gw_http_loop *const *loops, uint32_t n_loops)
{
    struct gw_s3_metrics *m = cn_calloc(1, sizeof(*m));
    m->reg = cn_metrics_new();
    m->loops = loops;
    m->n_loops = n_loops;
    for (uint32_t op = 0; op <= GW_S3_OP_COUNT; op++) {
        const char *name = op < GW_S3_OP_COUNT ? gw_s3_ops_table[op].name : "-";
        for (size_t c = 0; c <= GW_S3_METRICS_N_CODES; c++) {
            char code[8];
            if (c < GW_S3_METRICS_N_CODES)
                snprintf(code, sizeof(code), "%d", gw_s3_metrics_codes[c]);
            else
                snprintf(code, sizeof(code), "other");
            const char *labels[] = {"op", name, "code", code, NULL};
            m->requests[op][c] = cn_metrics_counter(
                m->reg, "cairn_gateway_requests_total",
                "S3 requests answered, by operation (AWS API name; - when refused before "
                "routing) and HTTP status", 0, labels);
        }
    }
    for (uint32_t op = 0; op <= GW_S3_OP_COUNT; op++) {
        const char *name = op < GW_S3_OP_COUNT ? gw_s3_ops_table[op].name : "-";
        const char *labels[] = {"op", name, NULL};
        m->duration[op] = cn_metrics_histogram(
            m->reg, "cairn_gateway_request_duration_seconds",
            "Time from a request's first byte to the end of its response, by operation", -6,
            labels, gw_s3_metrics_bounds,
            (uint32_t)(sizeof(gw_s3_metrics_bounds) / sizeof(gw_s3_metrics_bounds[0])));
    }
    m->bytes_in = cn_metrics_counter(m->reg, "cairn_gateway_received_bytes_total",
                                     "Request body bytes received (HTTP framing undone)", 0,
                                     NULL);
    m->bytes_out = cn_metrics_counter(m->reg, "cairn_gateway_sent_bytes_total",
                                      "Response body bytes announced (Content-Length) and sent",
                                      0, NULL);
    m->in_flight = cn_metrics_gauge(m->reg, "cairn_gateway_requests_in_flight",
                                    "Requests dispatched and not yet answered", 0, NULL);
    m->connections = cn_metrics_gauge(m->reg, "cairn_gateway_connections",
                                      "Open client connections", 0, NULL);
    m->access_dropped = cn_metrics_counter(
        m->reg, "cairn_gateway_access_log_dropped_lines_total",
        "Access lines dropped because log.access_buffer was full (the file was slower than "
        "the requests) or the write failed", 0, NULL);
    cn_metrics_on_collect(m->reg, gw_s3_metrics_collect, m);
    return m;
}

void gw_s3_metrics_free(struct gw_s3_metrics *m)
{
    if (m == NULL)
        return;
    cn_metrics_free(m->reg);
    cn_free(m);
}

void gw_s3_metrics_watch_access_log(struct gw_s3_metrics *m, struct gw_access_log *a)
{
    m->access = a;
}

struct cn_metrics *gw_s3_metrics_registry(struct gw_s3_metrics *m)
{
    return m->reg;
}

void gw_s3_metrics_started(struct gw_s3_metrics *m)
{
    cn_metrics_add(m->reg, m->in_flight, 1);
}

void gw_s3_metrics_done(struct gw_s3_metrics *m, const struct gw_s3_op *op, int status,
                        uint64_t duration_us, uint64_t bytes_in, uint64_t bytes_out,
                        int was_started)
{
    if (was_started)
        cn_metrics_sub(m->reg, m->in_flight, 1);
    uint32_t o = op != NULL ? (uint32_t)op->id : GW_S3_METRICS_NO_OP;
    size_t c = GW_S3_METRICS_N_CODES;
    for (size_t i = 0; i < GW_S3_METRICS_N_CODES; i++)
        if (gw_s3_metrics_codes[i] == status)
            c = i;
    cn_metrics_add(m->reg, m->requests[o][c], 1);
    cn_metrics_observe(m->reg, m->duration[o], duration_us);
    if (bytes_in > 0)
        cn_metrics_add(m->reg, m->bytes_in, bytes_in);
    if (bytes_out > 0)
        cn_metrics_add(m->reg, m->bytes_out, bytes_out);
}
