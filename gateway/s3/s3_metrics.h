/* The gateway's Prometheus metrics (served on metrics.listen:metrics.port
 * by cn_metrics_http): requests by S3 operation (the AWS API name from the
 * table of operations, s3_ops.h) and HTTP status, their durations, bytes in
 * and out, requests in flight and open connections. Counting takes no lock
 * (cn/metrics.h: each worker thread adds into its own shard); the
 * connection gauge is read at scrape time. One registry per process. */
#ifndef GW_S3_METRICS_H
#define GW_S3_METRICS_H

#include <stdint.h>

struct cn_metrics;
struct gw_s3_op;
struct gw_http_loop;

struct gw_s3_metrics;

/* Registers every series; loops[n_loops] are read for the connection
 * gauge at each scrape (a glance across threads). Free after the workers. */
struct gw_s3_metrics *gw_s3_metrics_new(struct gw_http_loop *const *loops, uint32_t n_loops);
void gw_s3_metrics_free(struct gw_s3_metrics *m);
struct cn_metrics *gw_s3_metrics_registry(struct gw_s3_metrics *m);
/* The access log whose dropped lines are reported at each scrape (before
 * the workers start; it must outlive the registry's scrapes). */
struct gw_access_log;
void gw_s3_metrics_watch_access_log(struct gw_s3_metrics *m, struct gw_access_log *a);

/* A request head was dispatched / its response ended. op is the matched
 * operation (NULL: refused before routing), status the HTTP status. */
void gw_s3_metrics_started(struct gw_s3_metrics *m);
void gw_s3_metrics_done(struct gw_s3_metrics *m, const struct gw_s3_op *op, int status,
                        uint64_t duration_us, uint64_t bytes_in, uint64_t bytes_out,
                        int was_started);

#endif
