/* Client connections: the state machine that reads request heads and bodies
 * off a bufferevent and hands complete heads to the S3 router. Timeouts are
 * per phase: keep-alive idle and the head deadline run on c->timer; body and
 * response progress use the bufferevent's idle timeouts, so a slow but live
 * transfer is never cut while a stalled one is. */
#include "conn.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>

#include "accept.h"
#include "s3_router.h"
#include "worker.h"

#include "cn/alloc.h"
#include "cn/log.h"
#include "cn/time.h"

static void gw_conn_on_read(struct bufferevent *bev, void *arg);
static void gw_conn_on_write(struct bufferevent *bev, void *arg);
static void gw_conn_on_event(struct bufferevent *bev, short what, void *arg);

static const char *gw_conn_state_str(enum gw_conn_state s)
{
    switch (s) {
    case GW_CONN_IDLE: return "IDLE";
    case GW_CONN_HEAD: return "HEAD";
    case GW_CONN_HANDLER: return "HANDLER";
    case GW_CONN_CLOSING: return "CLOSING";
    }
    return "?";
}

static struct timeval gw_conn_tv(int64_t ms)
{
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)((ms % 1000) * 1000)};
    return tv;
}

/* Arms c->timer for the phase: keep-alive idle or the head deadline. */
static void gw_conn_arm_timer(struct gw_conn *c, int64_t ms)
{
    struct timeval tv = gw_conn_tv(ms);
    evtimer_add(c->timer, &tv);
}

static void gw_conn_set_state(struct gw_conn *c, enum gw_conn_state s)
{
    CN_LOGR(CN_LOG_DEBUG, c->req.id, "conn %p: %s -> %s", (void *)c, gw_conn_state_str(c->state),
            gw_conn_state_str(s));
    c->state = s;
}

static void gw_conn_on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_conn *c = arg;
    CN_LOGR(CN_LOG_DEBUG, c->req.id, "conn %p: %s timeout, closing", (void *)c,
            c->state == GW_CONN_IDLE ? "keep-alive" : "request head");
    gw_conn_close(c);
}

/* Frees the request's per-request resources (not the embedded struct). */
static void gw_conn_req_clear(struct gw_req *r)
{
    if (r->h_free != NULL && r->h != NULL)
        r->h_free(r->h);
    r->h = NULL;
    r->h_free = NULL;
    if (r->bs_free != NULL && r->bs != NULL)
        r->bs_free(r->bs);
    r->bs = NULL;
    r->bs_free = NULL;
    r->then = NULL;
    cn_free(r->key);
    r->key = NULL;
    if (r->has_copy_src)
        gw_copy_source_fini(&r->copy_src);
    r->has_copy_src = 0;
    memset(&r->ovr, 0, sizeof(r->ovr));
    r->key_len = 0;
    for (size_t i = 0; i < r->n_params; i++) {
        cn_free(r->params[i].name);
        cn_free(r->params[i].value);
    }
    cn_free(r->params);
    r->params = NULL;
    r->n_params = 0;
    r->op = NULL;
    r->bucket[0] = '\0';
    r->bucket_len = 0;
    evbuffer_drain(r->body, evbuffer_get_length(r->body));
    evbuffer_drain(r->hdrs, evbuffer_get_length(r->hdrs));
    r->body_done = r->body_failed = r->body_bad_framing = 0;
    r->body_total = 0;
    r->on_body = NULL;
    r->on_drain = NULL;
    r->status = 0;
    r->headers_sent = r->finished = r->head_only = r->close_after = 0;
    memset(&r->auth, 0, sizeof(r->auth));
    r->owner_known_until_us = 0;
}

void gw_conn_unref(struct gw_conn *c)
{
    CN_ASSERT(c->refs > 0);
    if (--c->refs > 0)
        return;
    CN_ASSERT(c->dead);
    struct gw_worker *w = c->worker;
    gw_conn_req_clear(&c->req);
    evbuffer_free(c->req.body);
    evbuffer_free(c->req.hdrs);
    evbuffer_free(c->sink);
    gw_http_parser_fini(&c->parser);
    event_free(c->kick);
    event_free(c->timer);
    cn_free(c);
    w->n_conn_mem--;
    gw_worker_drain_check(w);
}

static void gw_conn_link(struct gw_conn *c)
{
    struct gw_worker *w = c->worker;
    c->prev = NULL;
    c->next = w->conns;
    if (w->conns != NULL)
        w->conns->prev = c;
    w->conns = c;
}

static void gw_conn_unlink(struct gw_conn *c)
{
    struct gw_worker *w = c->worker;
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        w->conns = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

/* Closes the socket; the memory goes with the last reference. */
static void gw_conn_reap(struct gw_conn *c)
{
    if (c->dead)
        return;
    c->dead = 1;
    evtimer_del(c->timer);
    if (c->bev != NULL)
        bufferevent_free(c->bev);
    c->bev = NULL;
    c->worker->n_conns--;
    gw_accept_closed(c->worker);
    gw_conn_unlink(c);
    gw_conn_unref(c);
}

void gw_conn_close(struct gw_conn *c)
{
    if (c->state == GW_CONN_CLOSING)
        return;
    gw_conn_set_state(c, GW_CONN_CLOSING);
    if (c->bev != NULL)
        bufferevent_disable(c->bev, EV_READ | EV_WRITE);
    event_active(c->kick, EV_TIMEOUT, 0);
}

void gw_conn_kick(struct gw_conn *c)
{
    if (!c->dead)
        event_active(c->kick, EV_TIMEOUT, 0);
}

/* Answers a head that could not be parsed, then closes. */
static void gw_conn_head_failed(struct gw_conn *c)
{
    enum gw_s3_err err;
    switch (c->parser.fail) {
    case GW_HTTP_FAIL_HEADERS_TOO_LARGE: err = GW_S3_REQUEST_HEADER_SECTION_TOO_LARGE; break;
    case GW_HTTP_FAIL_URI_TOO_LONG: err = GW_S3_URI_TOO_LONG; break;
    case GW_HTTP_FAIL_BAD_VERSION: err = GW_S3_NOT_IMPLEMENTED; break;
    case GW_HTTP_FAIL_BAD_HOST: err = GW_S3_INVALID_REQUEST; break;
    default: err = GW_S3_BAD_REQUEST; break;
    }
    CN_LOGR(CN_LOG_INFO, c->req.id, "bad request head: %s", c->parser.fail_reason);
    gw_conn_set_state(c, GW_CONN_HANDLER);
    c->req.http = NULL;
    c->body_mode = GW_CONN_BODY_NONE;
    c->req.body_done = 0; /* the rest of the input cannot be trusted: close */
    gw_req_error(&c->req, err, c->parser.fail_reason);
}

/* A complete head: set up the body framing and hand it to the router. */
static void gw_conn_head_done(struct gw_conn *c)
{
    evtimer_del(c->timer);
    gw_conn_set_state(c, GW_CONN_HANDLER);
    struct gw_req *r = &c->req;
    r->http = &c->parser;
    r->head_only = gw_http_token_eq(c->parser.method, c->parser.method_len, "HEAD");
    r->close_after = !c->parser.keep_alive;
    c->continue_sent = 0;
    c->reading_body = 0;
    if (c->parser.chunked) {
        c->body_mode = GW_CONN_BODY_CHUNKED;
        gw_http_chunked_init(&c->chunked);
    } else if (c->parser.content_length > 0) {
        c->body_mode = GW_CONN_BODY_LENGTH;
        c->body_left = (uint64_t)c->parser.content_length;
    } else {
        c->body_mode = GW_CONN_BODY_NONE;
        r->body_done = 1;
    }
    /* no reading while the handler works until it asks for the body */
    bufferevent_disable(c->bev, EV_READ);
    if (CN_LOG_DEBUG >= cn_log_level_current) { /* skip the copy when not logged */
        char target[GW_REQ_LOG_TARGET_MAX];
        gw_req_log_target(&c->parser, target, sizeof(target));
        CN_LOGR(CN_LOG_DEBUG, r->id, "%s %s", c->parser.method, target);
    }
    gw_s3_router_dispatch(r);
}

/* Feeds the parser from the input buffer. */
static void gw_conn_read_head(struct gw_conn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->bev);
    while (evbuffer_get_length(in) > 0) {
        if (c->state == GW_CONN_IDLE) {
            gw_conn_set_state(c, GW_CONN_HEAD);
            c->req.id = gw_worker_next_request_id(c->worker);
            snprintf(c->req.id_str, sizeof(c->req.id_str), "%016llX",
                     (unsigned long long)c->req.id);
            c->req.start_us = cn_time_mono_us();
            gw_conn_arm_timer(c, c->worker->cfg->http_header_timeout_ms);
        }
        struct evbuffer_iovec v;
        if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
            return;
        size_t used = 0;
        int rc = gw_http_parser_feed(&c->parser, v.iov_base, v.iov_len, &used);
        evbuffer_drain(in, used);
        if (rc == CN_OK) {
            gw_conn_head_done(c);
            return;
        }
        if (rc != CN_AGAIN) {
            gw_conn_head_failed(c);
            return;
        }
    }
}

/* Moves body bytes from the input into r->body, up to http.body_buffer. */
static void gw_conn_read_body(struct gw_conn *c)
{
    struct gw_req *r = &c->req;
    if (r->body_done || r->body_failed) {
        if (r->on_body != NULL) /* handlers clear on_body once they have it all */
            r->on_body(r);
        return;
    }
    struct evbuffer *in = bufferevent_get_input(c->bev);
    size_t have = evbuffer_get_length(r->body);
    size_t limit = (size_t)c->worker->cfg->http_body_buffer;
    size_t room = have < limit ? limit - have : 0;
    size_t before = have;
    if (c->body_mode == GW_CONN_BODY_LENGTH) {
        size_t n = (size_t)CN_MIN((uint64_t)CN_MIN(room, evbuffer_get_length(in)), c->body_left);
        if (n > 0)
            evbuffer_remove_buffer(in, r->body, n);
        c->body_left -= n;
        r->body_done = c->body_left == 0;
    } else if (c->body_mode == GW_CONN_BODY_CHUNKED) {
        int rc = gw_http_chunked_decode(&c->chunked, in, r->body, room);
        if (rc == CN_DONE)
            r->body_done = 1;
        else if (rc == CN_INVAL)
            r->body_failed = r->body_bad_framing = 1;
    }
    size_t added = evbuffer_get_length(r->body) - before;
    r->body_total += added;
    if (r->body_done || r->body_failed) {
        bufferevent_disable(c->bev, EV_READ);
        bufferevent_set_timeouts(c->bev, NULL, NULL);
        struct timeval wt = gw_conn_tv(c->worker->cfg->http_body_idle_timeout_ms);
        bufferevent_set_timeouts(c->bev, NULL, &wt);
    } else if (evbuffer_get_length(r->body) >= limit) {
        bufferevent_disable(c->bev, EV_READ); /* backpressure: the handler is behind */
    } else {
        bufferevent_enable(c->bev, EV_READ);
    }
    if ((added > 0 || r->body_done || r->body_failed) && r->on_body != NULL)
        r->on_body(r);
}

/* The state machine's one entry point (memcached drive_machine). */
static void gw_conn_drive(struct gw_conn *c)
{
    switch (c->state) {
    case GW_CONN_IDLE:
    case GW_CONN_HEAD:
        gw_conn_read_head(c);
        return;
    case GW_CONN_HANDLER:
        if (c->reading_body)
            gw_conn_read_body(c);
        return;
    case GW_CONN_CLOSING:
        return;
    }
}

static void gw_conn_on_kick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_conn *c = arg;
    if (c->state == GW_CONN_CLOSING)
        gw_conn_reap(c);
    else
        gw_conn_drive(c);
}

/* Lingering close (nginx lingering_close): after the last response the
 * write side is shut and the input drained for a while, so a client still
 * sending a refused body reads our answer instead of a reset. */
static void gw_conn_linger(struct gw_conn *c)
{
    c->lingering = 1;
    shutdown(bufferevent_getfd(c->bev), SHUT_WR);
    struct timeval t = {2, 0};
    bufferevent_set_timeouts(c->bev, &t, NULL);
    bufferevent_enable(c->bev, EV_READ);
}

static void gw_conn_on_read(struct bufferevent *bev, void *arg)
{
    struct gw_conn *c = arg;
    if (c->lingering) {
        struct evbuffer *in = bufferevent_get_input(bev);
        c->lingered += evbuffer_get_length(in);
        evbuffer_drain(in, evbuffer_get_length(in));
        if (c->lingered > 8 * 1024 * 1024)
            gw_conn_close(c);
        return;
    }
    gw_conn_drive(c);
}

static void gw_conn_on_write(struct bufferevent *bev, void *arg)
{
    struct gw_conn *c = arg;
    struct evbuffer *out = bufferevent_get_output(bev);
    if (c->close_after_write) {
        if (evbuffer_get_length(out) == 0 && !c->lingering)
            gw_conn_linger(c);
        return;
    }
    if (c->state == GW_CONN_HANDLER && c->req.on_drain != NULL &&
        !gw_req_output_full(&c->req)) {
        gw_req_cb cb = c->req.on_drain;
        c->req.on_drain = NULL;
        cb(&c->req);
    }
}

static void gw_conn_on_event(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    struct gw_conn *c = arg;
    struct gw_req *r = &c->req;
    if ((what & BEV_EVENT_TIMEOUT) && c->state == GW_CONN_HANDLER && c->reading_body &&
        !r->body_done && !r->headers_sent) {
        CN_LOGR(CN_LOG_INFO, r->id, "request body idle for too long");
        r->body_failed = 1;
        bufferevent_disable(c->bev, EV_READ);
        bufferevent_set_timeouts(c->bev, NULL, NULL);
        if (r->on_body != NULL) {
            r->on_body(r); /* the handler answers (RequestTimeout) */
            return;
        }
        gw_req_error(r, GW_S3_REQUEST_TIMEOUT, NULL);
        return;
    }
    if (what & BEV_EVENT_TIMEOUT)
        CN_LOGR(CN_LOG_INFO, r->id, "client idle for too long (%s), closing",
                gw_conn_state_str(c->state));
    else if ((what & BEV_EVENT_ERROR) && c->state != GW_CONN_IDLE)
        CN_LOGR(CN_LOG_INFO, r->id, "client connection error in %s", gw_conn_state_str(c->state));
    gw_conn_close(c);
}

void gw_conn_request_done(struct gw_conn *c)
{
    struct gw_req *r = &c->req;
    CN_LOGR(CN_LOG_DEBUG, r->id, "done %d in %llu us", r->status,
            (unsigned long long)(cn_time_mono_us() - r->start_us));
    int must_close = r->close_after || !r->body_done || r->body_failed || c->worker->draining;
    gw_conn_req_clear(r);
    r->http = NULL;
    gw_http_parser_reset(&c->parser);
    c->reading_body = 0;
    if (c->state == GW_CONN_CLOSING)
        return;
    if (must_close) {
        c->close_after_write = 1;
        bufferevent_setwatermark(c->bev, EV_WRITE, 0, 0);
        bufferevent_disable(c->bev, EV_READ);
        if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
            gw_conn_linger(c);
        return;
    }
    gw_conn_set_state(c, GW_CONN_IDLE);
    gw_conn_arm_timer(c, c->worker->cfg->http_keepalive_timeout_ms);
    bufferevent_set_timeouts(c->bev, NULL, NULL);
    struct timeval wt = gw_conn_tv(c->worker->cfg->http_body_idle_timeout_ms);
    bufferevent_set_timeouts(c->bev, NULL, &wt);
    bufferevent_enable(c->bev, EV_READ);
    gw_conn_kick(c); /* a pipelined request may already be buffered */
}

void gw_conn_close_all(struct gw_worker *w)
{
    while (w->conns != NULL)
        gw_conn_reap(w->conns);   /* unlinks it */
}

void gw_conn_close_when_idle(struct gw_conn *c)
{
    if (c->state == GW_CONN_IDLE)
        gw_conn_close(c);
    else
        c->req.close_after = 1;   /* the response says Connection: close; then closed */
}

/* Called by gw_req_body_read(): the handler wants the body. */
void gw_conn_body_start(struct gw_conn *c);
void gw_conn_body_start(struct gw_conn *c)
{
    struct gw_req *r = &c->req;
    if (c->dead || c->state != GW_CONN_HANDLER)
        return;
    if (!c->reading_body) {
        c->reading_body = 1;
        if (c->parser.expect_continue && !r->body_done && !c->continue_sent) {
            evbuffer_add(bufferevent_get_output(c->bev), "HTTP/1.1 100 Continue\r\n\r\n", 25);
            c->continue_sent = 1;
        }
        struct timeval t = gw_conn_tv(c->worker->cfg->http_body_idle_timeout_ms);
        bufferevent_set_timeouts(c->bev, &t, &t);
    }
    if (!r->body_done && !r->body_failed)
        bufferevent_enable(c->bev, EV_READ);
    gw_conn_kick(c);
}

void gw_conn_accept(struct gw_worker *w, evutil_socket_t fd)
{
    struct bufferevent *bev = bufferevent_socket_new(w->base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (bev == NULL) {
        evutil_closesocket(fd);
        return;
    }
    struct gw_conn *c = cn_calloc(1, sizeof(*c));
    c->worker = w;
    c->bev = bev;
    c->refs = 1;
    c->kick = event_new(w->base, -1, 0, gw_conn_on_kick, c);
    c->timer = evtimer_new(w->base, gw_conn_on_timer, c);
    c->sink = evbuffer_new();
    c->req.conn = c;
    c->req.worker = w;
    c->req.body = evbuffer_new();
    c->req.hdrs = evbuffer_new();
    gw_http_parser_init(&c->parser, &w->http_limits);
    c->state = GW_CONN_IDLE;
    w->n_conns++;
    w->n_conn_mem++;
    gw_conn_link(c);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    bufferevent_setcb(bev, gw_conn_on_read, gw_conn_on_write, gw_conn_on_event, c);
    bufferevent_setwatermark(bev, EV_WRITE, (size_t)w->cfg->http_output_high_water / 2, 0);
    /* libevent reads 16 KiB per call by default: large PUT bodies then
     * spend their time in the loop (the Proxmox chunker finding) */
    bufferevent_set_max_single_read(bev, (size_t)w->cfg->http_read_size);
    struct timeval wt = gw_conn_tv(w->cfg->http_body_idle_timeout_ms);
    bufferevent_set_timeouts(bev, NULL, &wt);
    bufferevent_enable(bev, EV_READ | EV_WRITE);
    gw_conn_arm_timer(c, w->cfg->http_keepalive_timeout_ms);
    gw_accept_opened(w);   /* at the cap: stops accepting */
}
