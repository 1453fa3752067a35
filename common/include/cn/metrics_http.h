/* A daemon's metrics endpoint (storage nodes and gateways): a small HTTP/1.1
 * listener (libevent evhttp) on its own thread, answering GET /metrics with
 * the Prometheus text of cn_metrics_render(); every other path is 404, every other method on
 * /metrics 405. Requests are bounded (8 KiB of headers, 4 KiB of body, 10 s
 * per request). For scrapers on a trusted network: no TLS, no auth. */
#ifndef CN_METRICS_HTTP_H
#define CN_METRICS_HTTP_H

#include <stdint.h>

#include "cn/rc.h"
#include "cn/metrics.h"

struct cn_metrics_http;

/* Binds host:port and starts serving m. On error *out is NULL and err says
 * why (nothing is left bound). m must outlive the listener. */
int cn_metrics_http_new(const char *host, uint16_t port, struct cn_metrics *m,
                        struct cn_metrics_http **out, char err[CN_ERR_LEN]);

/* Stops the thread (a scrape in progress finishes first), closes the socket
 * and frees h. NULL is allowed. */
void cn_metrics_http_free(struct cn_metrics_http *h);

#endif
