/* GET /metrics over evhttp on a dedicated thread (see cn/metrics_http.h). The
 * page is rendered on this thread at each request; the request's path and
 * method are all it looks at. */
#include "cn/metrics_http.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/thread.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cn/alloc.h"

#define CN_METRICS_HTTP_MAX_HEADERS 8192
#define CN_METRICS_HTTP_MAX_BODY 4096
#define CN_METRICS_HTTP_TIMEOUT_S 10

struct cn_metrics_http {
    struct cn_metrics *m;
    struct event_base *base;
    struct evhttp *http;
    struct event *stop;          /* activated by cn_metrics_http_free */
    pthread_t thread;
    int started;
};

static void cn_metrics_http_page_free(const void *data, size_t len, void *arg)
{
    (void)data;
    (void)len;
    cn_free(arg);
}

/* evhttp's generic callback: ends every request with a reply. */
static void cn_metrics_http_on_request(struct evhttp_request *req, void *arg)
{
    struct cn_metrics_http *h = arg;
    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
    const char *path = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
    struct evkeyvalq *out_h = evhttp_request_get_output_headers(req);
    if (path == NULL || strcmp(path, "/metrics") != 0) {
        evhttp_send_error(req, HTTP_NOTFOUND, NULL);
        return;
    }
    if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
        /* evhttp_send_error() would drop the Allow header */
        struct evbuffer *msg = evbuffer_new();
        evbuffer_add_printf(msg, "only GET /metrics\n");
        evhttp_add_header(out_h, "Allow", "GET");
        evhttp_add_header(out_h, "Content-Type", "text/plain");
        evhttp_send_reply(req, HTTP_BADMETHOD, "Method Not Allowed", msg);
        evbuffer_free(msg);
        return;
    }
    char *page;
    size_t len;
    cn_metrics_render(h->m, &page, &len);
    struct evbuffer *body = evbuffer_new();
    evbuffer_add_reference(body, page, len, cn_metrics_http_page_free, page);
    evhttp_add_header(out_h, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    evhttp_send_reply(req, HTTP_OK, "OK", body);
    evbuffer_free(body);
}

/* Runs on the loop's thread; an activation made before the loop started is
 * still delivered (a bare loopbreak then would be lost). */
static void cn_metrics_http_on_stop(evutil_socket_t fd, short what, void *arg)
{
    struct cn_metrics_http *h = arg;
    (void)fd;
    (void)what;
    event_base_loopbreak(h->base);
}

static void *cn_metrics_http_main(void *arg)
{
    struct cn_metrics_http *h = arg;
    event_base_dispatch(h->base);
    return NULL;
}

int cn_metrics_http_new(const char *host, uint16_t port, struct cn_metrics *m,
                        struct cn_metrics_http **out, char err[CN_ERR_LEN])
{
    struct cn_metrics_http *h = cn_calloc(1, sizeof(*h));
    *out = NULL;
    h->m = m;
    /* loopbreak from the main thread needs libevent's locking */
    evthread_use_pthreads();
    h->base = event_base_new();
    h->http = h->base != NULL ? evhttp_new(h->base) : NULL;
    h->stop = h->base != NULL ? event_new(h->base, -1, 0, cn_metrics_http_on_stop, h) : NULL;
    if (h->http == NULL || h->stop == NULL) {
        snprintf(err, CN_ERR_LEN, "metrics: cannot set up libevent");
        goto fail;
    }
    /* every method reaches the callback, which answers 405 for all but GET */
    evhttp_set_allowed_methods(h->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
                                            EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
                                            EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE |
                                            EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
    evhttp_set_max_headers_size(h->http, CN_METRICS_HTTP_MAX_HEADERS);
    evhttp_set_max_body_size(h->http, CN_METRICS_HTTP_MAX_BODY);
    evhttp_set_timeout(h->http, CN_METRICS_HTTP_TIMEOUT_S);
    evhttp_set_gencb(h->http, cn_metrics_http_on_request, h);
    if (evhttp_bind_socket_with_handle(h->http, host, port) == NULL) {
        snprintf(err, CN_ERR_LEN, "metrics: cannot bind %s:%u", host, (unsigned)port);
        goto fail;
    }
    if (pthread_create(&h->thread, NULL, cn_metrics_http_main, h) != 0) {
        snprintf(err, CN_ERR_LEN, "metrics: cannot start its thread");
        goto fail;
    }
    h->started = 1;
    *out = h;
    return CN_OK;
fail:
    cn_metrics_http_free(h);
    return CN_ERR;
}

void cn_metrics_http_free(struct cn_metrics_http *h)
{
    if (h == NULL)
        return;
    if (h->started) {
        event_active(h->stop, EV_READ, 0);
        pthread_join(h->thread, NULL);
    }
    if (h->stop != NULL)
        event_free(h->stop);
    if (h->http != NULL)
        evhttp_free(h->http);
    if (h->base != NULL)
        event_base_free(h->base);
    cn_free(h);
}
