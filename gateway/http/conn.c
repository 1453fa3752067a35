/* Client connections: the state machine that reads request heads and bodies
 * off a bufferevent and hands complete heads to the application (the loop's
 * struct gw_http_app: in cairn, the S3 layer). Timeouts are
 * per phase: keep-alive idle and the head deadline run on c->timer; body and
 * response progress use the bufferevent's idle timeouts, so a slow but live
 * transfer is never cut while a stalled one is. An HTTPS connection runs the
 * same machine over a TLS bufferevent (libevent's OpenSSL filter on the
 * socket); only the write-side shutdown differs. */
#include "conn.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent_ssl.h>
#include <event2/bufferevent_struct.h>   /* ev_write: gw_conn_flush_now() */
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "accept.h"
#include "http_loop.h"

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
    CN_LOGR(CN_LOG_DEBUG, c->req->id, "conn %p: %s -> %s", (void *)c, gw_conn_state_str(c->state),
            gw_conn_state_str(s));
    c->state = s;
}

static void gw_conn_on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_conn *c = arg;
    CN_LOGR(CN_LOG_DEBUG, c->req->id, "conn %p: %s timeout, closing", (void *)c,
            c->state == GW_CONN_IDLE ? "keep-alive" : "request head");
    gw_conn_close(c);
}

/* Ends the request's state: the application's first, then the HTTP
 * layer's (the buffers are kept for the next request). */
static void gw_conn_req_clear(struct gw_conn *c)
{
    struct gw_http_req *x = c->req;
    /* a dispatched request that never reached reply_end (the client went
     * away, or the response was cut short): it still gets its done() */
    if (x->http != NULL && !x->finished && c->loop->app.done != NULL) {
        x->aborted = 1;
        c->loop->app.done(x);
    }
    c->loop->app.req_clear(x);
    evbuffer_drain(x->body, evbuffer_get_length(x->body));
    evbuffer_drain(x->hdrs, evbuffer_get_length(x->hdrs));
    x->http = NULL;
    x->body_done = x->body_failed = x->body_bad_framing = 0;
    x->body_total = 0;
    x->on_body = NULL;
    x->on_drain = NULL;
    x->status = 0;
    x->headers_sent = x->finished = x->head_only = x->close_after = 0;
    x->reply_length = 0;
    x->first_byte_us = 0;
    x->aborted = 0;
}

void gw_conn_unref(struct gw_conn *c)
{
    CN_ASSERT(c->refs > 0);
    if (--c->refs > 0)
        return;
    CN_ASSERT(c->dead);
    struct gw_http_loop *l = c->loop;
    gw_conn_req_clear(c);
    evbuffer_free(c->req->body);
    evbuffer_free(c->req->hdrs);
    l->app.req_free(c->req);
    evbuffer_free(c->sink);
    gw_http_parser_fini(&c->parser);
    event_free(c->kick);
    event_free(c->timer);
    cn_free(c);
    l->n_conn_mem--;
    gw_http_loop_drain_check(l);
}

static void gw_conn_link(struct gw_conn *c)
{
    struct gw_http_loop *l = c->loop;
    c->prev = NULL;
    c->next = l->conns;
    if (l->conns != NULL)
        l->conns->prev = c;
    l->conns = c;
}

static void gw_conn_unlink(struct gw_conn *c)
{
    struct gw_http_loop *l = c->loop;
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        l->conns = c->next;
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
    c->loop->n_conns--;
    gw_accept_closed(c->loop);
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

/* Has a head that could not be parsed answered, then closes. */
static void gw_conn_head_failed(struct gw_conn *c)
{
    int status;
    switch (c->parser.fail) {
    case GW_HTTP_FAIL_HEADERS_TOO_LARGE: status = 431; break;
    case GW_HTTP_FAIL_URI_TOO_LONG: status = 414; break;
    case GW_HTTP_FAIL_BAD_VERSION: status = 505; break;
    default: status = 400; break;
    }
    gw_conn_set_state(c, GW_CONN_HANDLER);
    c->req->http = NULL;
    c->body_mode = GW_CONN_BODY_NONE;
    c->req->body_done = 0; /* the rest of the input cannot be trusted: close */
    c->loop->app.head_failed(c->req, c->parser.fail, status, c->parser.fail_reason);
}

/* A complete head: set up the body framing and hand it to the router. */
static void gw_conn_head_done(struct gw_conn *c)
{
    evtimer_del(c->timer);
    gw_conn_set_state(c, GW_CONN_HANDLER);
    struct gw_http_req *x = c->req;
    x->http = &c->parser;
    x->head_only = gw_http_token_eq(c->parser.method, c->parser.method_len, "HEAD");
    x->close_after = !c->parser.keep_alive;
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
        x->body_done = 1;
    }
    /* no reading while the application works until it asks for the body */
    bufferevent_disable(c->bev, EV_READ);
    c->loop->app.dispatch(x);
}

/* Feeds the parser from the input buffer. */
static void gw_conn_read_head(struct gw_conn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->bev);
    while (evbuffer_get_length(in) > 0) {
        if (c->state == GW_CONN_IDLE) {
            gw_conn_set_state(c, GW_CONN_HEAD);
            c->req->id = gw_http_loop_next_request_id(c->loop);
            snprintf(c->req->id_str, sizeof(c->req->id_str), "%016llX",
                     (unsigned long long)c->req->id);
            c->req->start_us = cn_time_mono_us();
            gw_conn_arm_timer(c, c->loop->opts.header_timeout_ms);
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

/* Bytes of one direct body read: below glibc's mmap threshold (the gateway
 * fixes it at 1 MiB), so the evbuffer chain each read fills comes from the
 * heap and is reused, not mapped fresh and faulted in page by page; 512
 * short of 256 KiB so that a new chain with libevent's header (rounded up
 * to a power of two) is a 256 KiB allocation, not 512 KiB for 256 KiB of
 * body. */
#define GW_CONN_DIRECT_READ (256 * 1024 - 512)

/* Reads up to want bytes of a Content-Length body straight from a plain
 * socket into r->body, in reads of up to GW_CONN_DIRECT_READ. libevent 2.1
 * reads at most 4 KiB per read callback whatever
 * bufferevent_set_max_single_read says (EVBUFFER_MAX_READ): ~260,000 readv,
 * FIONREAD ioctls and epoll_waits per GB of PUT body. Only once the input
 * buffer is empty (byte order). Stops at the first short read; on EOF or
 * an error it stops too and the bufferevent's own next read reports the
 * end (a reset consumed here then reads as EOF there), so the connection's
 * error handling stays in one place. Returns the bytes read. */
static size_t gw_conn_read_body_direct(struct gw_conn *c, size_t want)
{
    struct gw_http_req *r = c->req;
    evutil_socket_t fd = bufferevent_getfd(c->bev);
    size_t got = 0;
    while (got < want) {
        size_t n = CN_MIN(want - got, (size_t)GW_CONN_DIRECT_READ);
        struct evbuffer_iovec v[2];
        int nv = evbuffer_reserve_space(r->body, (ev_ssize_t)n, v, 2);
        if (nv < 1)
            break;
        size_t left = n;
        for (int i = 0; i < nv; i++) {   /* the iovecs may hold more than n */
            v[i].iov_len = CN_MIN(v[i].iov_len, left);
            left -= v[i].iov_len;
        }
        ssize_t rd = readv(fd, (struct iovec *)v, nv);
        if (rd <= 0) {
            evbuffer_commit_space(r->body, v, 0);
            break;
        }
        size_t keep = (size_t)rd;
        for (int i = 0; i < nv; i++) {
            v[i].iov_len = CN_MIN(v[i].iov_len, keep);
            keep -= v[i].iov_len;
        }
        evbuffer_commit_space(r->body, v, nv);
        got += (size_t)rd;
        if ((size_t)rd < n)
            break;   /* the socket is drained: no read that would only say EAGAIN */
    }
    return got;
}

/* Moves body bytes from the input into r->body, up to http.body_buffer. */
static void gw_conn_read_body(struct gw_conn *c)
{
    struct gw_http_req *r = c->req;
    if (r->body_done || r->body_failed) {
        if (r->on_body != NULL) /* handlers clear on_body once they have it all */
            r->on_body(r);
        return;
    }
    struct evbuffer *in = bufferevent_get_input(c->bev);
    size_t have = evbuffer_get_length(r->body);
    size_t limit = (size_t)c->loop->opts.body_buffer;
    size_t room = have < limit ? limit - have : 0;
    size_t before = have;
    if (c->body_mode == GW_CONN_BODY_LENGTH) {
        size_t n = (size_t)CN_MIN((uint64_t)CN_MIN(room, evbuffer_get_length(in)), c->body_left);
        if (n > 0)
            evbuffer_remove_buffer(in, r->body, n);
        c->body_left -= n;
        room -= n;
        if (!c->tls && evbuffer_get_length(in) == 0 && c->body_left > 0 && room > 0) {
            size_t want = (size_t)CN_MIN((uint64_t)CN_MIN(room, (size_t)c->loop->opts.read_size),
                                         c->body_left);
            c->body_left -= gw_conn_read_body_direct(c, want);
        }
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
        struct timeval wt = gw_conn_tv(c->loop->opts.body_idle_timeout_ms);
        bufferevent_set_timeouts(c->bev, NULL, &wt);
    } else if (evbuffer_get_length(r->body) >= limit) {
        bufferevent_disable(c->bev, EV_READ); /* backpressure: the handler is behind */
    } else {
        bufferevent_enable(c->bev, EV_READ);
    }
    /* bytes left waiting count too: a handler that hands the body to a new
     * reader (gw_http_req_body_read() again) may leave a full buffer, which
     * no read would add to */
    if ((added > 0 || before > 0 || r->body_done || r->body_failed) && r->on_body != NULL)
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
    SSL *ssl = c->tls ? bufferevent_openssl_get_ssl(c->bev) : NULL;
    if (ssl != NULL) {
        /* TLS: a TCP half-close under the session would end it without
         * close_notify (a truncation to the client); send the alert on the
         * socket (the output is flushed) and keep reading through TLS. If it
         * cannot go out now, the connection is simply closed. */
        int rc = SSL_shutdown(ssl);
        if (rc < 0) {
            char e[256] = "";
            ERR_error_string_n(ERR_peek_last_error(), e, sizeof(e));
            CN_LOGR(CN_LOG_DEBUG, c->req->id, "conn %p: TLS shutdown failed (%d, %s), closing",
                    (void *)c, SSL_get_error(ssl, rc), e);
            ERR_clear_error();
            gw_conn_close(c);
            return;
        }
    } else {
        shutdown(bufferevent_getfd(c->bev), SHUT_WR);
    }
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
    if (c->state == GW_CONN_HANDLER && c->req->on_drain != NULL &&
        !gw_http_req_output_full(c->req)) {
        gw_http_req_cb cb = c->req->on_drain;
        c->req->on_drain = NULL;
        cb(c->req);
    }
}

static void gw_conn_on_event(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    struct gw_conn *c = arg;
    struct gw_http_req *r = c->req;
    if (what == BEV_EVENT_CONNECTED) {
        /* a TLS handshake is done (it had http.header_timeout, like a
         * head): from here the connection is idle until its first request */
        if (c->state == GW_CONN_IDLE)
            gw_conn_arm_timer(c, c->loop->opts.keepalive_timeout_ms);
        return;
    }
    if ((what & BEV_EVENT_TIMEOUT) && c->state == GW_CONN_HANDLER && c->reading_body &&
        !r->body_done && !r->headers_sent) {
        CN_LOGR(CN_LOG_INFO, r->id, "request body idle for too long");
        r->body_failed = 1;
        bufferevent_disable(c->bev, EV_READ);
        bufferevent_set_timeouts(c->bev, NULL, NULL);
        if (r->on_body != NULL) {
            r->on_body(r); /* the application answers (RequestTimeout) */
            return;
        }
        c->loop->app.body_timeout(r);
        return;
    }
    if (what & BEV_EVENT_TIMEOUT)
        CN_LOGR(CN_LOG_INFO, r->id, "client idle for too long (%s), closing",
                gw_conn_state_str(c->state));
    else if ((what & BEV_EVENT_ERROR) && c->state != GW_CONN_IDLE)
        CN_LOGR(CN_LOG_INFO, r->id, "client connection error in %s", gw_conn_state_str(c->state));
    if ((what & BEV_EVENT_ERROR) && c->tls) {
        /* failed handshakes (old protocol versions, plain HTTP, scanners):
         * only at debug, they come from outside at any rate */
        unsigned long e = bufferevent_get_openssl_error(c->bev);
        char why[256] = "no TLS error";
        if (e != 0)
            ERR_error_string_n(e, why, sizeof(why));
        CN_LOGR(CN_LOG_DEBUG, r->id, "conn %p: TLS: %s", (void *)c, why);
    }
    gw_conn_close(c);
}

/* A finished response is written at once when the kernel takes it all, as
 * usual for a small one, instead of after a round of epoll: the output
 * buffer's callback (bufferevent) added the write event when the response
 * went in, and it is taken back here; with the loop's epoll changelist
 * (server.c) that add and delete within one loop iteration cost no
 * epoll_ctl at all (measured per 4 KiB GET: 5.2 -> 4.2 epoll_ctl, and no
 * wake-up for the socket's writability). What the kernel does not take, and any error, is left to the
 * bufferevent's own write, as before. TLS output goes through its
 * bufferevent. */
static void gw_conn_flush_now(struct gw_conn *c)
{
    struct evbuffer *out = bufferevent_get_output(c->bev);
    if (c->tls || c->dead || evbuffer_get_length(out) == 0)
        return;
    if (evbuffer_write(out, bufferevent_getfd(c->bev)) > 0 && evbuffer_get_length(out) == 0)
        event_del(&c->bev->ev_write);
}

void gw_conn_request_done(struct gw_conn *c)
{
    struct gw_http_req *r = c->req;
    gw_conn_flush_now(c);
    CN_LOGR(CN_LOG_DEBUG, r->id, "done %d in %llu us", r->status,
            (unsigned long long)(cn_time_mono_us() - r->start_us));
    int must_close = r->close_after || !r->body_done || r->body_failed || c->loop->draining;
    gw_conn_req_clear(c);
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
    gw_conn_arm_timer(c, c->loop->opts.keepalive_timeout_ms);
    bufferevent_set_timeouts(c->bev, NULL, NULL);
    struct timeval wt = gw_conn_tv(c->loop->opts.body_idle_timeout_ms);
    bufferevent_set_timeouts(c->bev, NULL, &wt);
    bufferevent_enable(c->bev, EV_READ);
    gw_conn_kick(c); /* a pipelined request may already be buffered */
}

void gw_conn_close_all(struct gw_http_loop *l)
{
    while (l->conns != NULL)
        gw_conn_reap(l->conns);   /* unlinks it */
}

void gw_conn_close_when_idle(struct gw_conn *c)
{
    if (c->state == GW_CONN_IDLE)
        gw_conn_close(c);
    else
        c->req->close_after = 1;   /* the response says Connection: close; then closed */
}

void gw_conn_body_start(struct gw_conn *c)
{
    struct gw_http_req *r = c->req;
    if (c->dead || c->state != GW_CONN_HANDLER)
        return;
    if (!c->reading_body) {
        c->reading_body = 1;
        /* also for an empty body: a client that sent Expect: 100-continue
         * and gets a final response instead of a 100 takes it as the
         * refusal of its body, and botocore (boto3, the aws cli: they send
         * Expect with every PutObject, empty ones too) then misreads the
         * next response on that connection, the status line of which it
         * believes it has already read: a hang until its read timeout.
         * After a 100 the final response is read the ordinary way. */
        if (c->parser.expect_continue && !c->continue_sent) {
            evbuffer_add(bufferevent_get_output(c->bev), "HTTP/1.1 100 Continue\r\n\r\n", 25);
            c->continue_sent = 1;
        }
        struct timeval t = gw_conn_tv(c->loop->opts.body_idle_timeout_ms);
        bufferevent_set_timeouts(c->bev, &t, &t);
    }
    if (!r->body_done && !r->body_failed)
        bufferevent_enable(c->bev, EV_READ);
    gw_conn_kick(c);
}

/* The bufferevent of a new connection: plain, or TLS (server side, the
 * handshake first) when ssl is set. It owns fd and ssl; on failure (out of
 * memory only) returns NULL with fd closed; ssl is then libevent's, which
 * frees it with its half-made bufferevent or, failing before that, leaks it
 * (libevent does not say which, and a double free is worse than a leak). */
static struct bufferevent *gw_conn_bev_new(struct gw_http_loop *l, evutil_socket_t fd, SSL *ssl)
{
    struct bufferevent *bev;
    if (ssl == NULL) {
        bev = bufferevent_socket_new(l->base, fd, BEV_OPT_CLOSE_ON_FREE);
    } else {
        bev = bufferevent_openssl_socket_new(l->base, fd, ssl, BUFFEREVENT_SSL_ACCEPTING,
                                             BEV_OPT_CLOSE_ON_FREE);
        /* clients often close without close_notify once they have their
         * response (Content-Length framed): an EOF, not an error */
        if (bev != NULL)
            bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
    }
    if (bev == NULL)
        evutil_closesocket(fd);
    return bev;
}

/* The client's address as "ADDR:PORT" ("[ADDR]:PORT" for IPv6), or "-"
 * (for the access line: once per connection, not per request). */
static void gw_conn_peer(evutil_socket_t fd, char *out, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char a[INET6_ADDRSTRLEN];
    snprintf(out, len, "-");
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) != 0)
        return;
    if (ss.ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
        if (inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a)) != NULL)
            snprintf(out, len, "%s:%u", a, (unsigned)ntohs(in->sin_port));
    } else if (ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
        if (inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a)) != NULL)
            snprintf(out, len, "[%s]:%u", a, (unsigned)ntohs(in6->sin6_port));
    }
}

void gw_conn_accept(struct gw_http_loop *l, evutil_socket_t fd, SSL *ssl)
{
    struct bufferevent *bev = gw_conn_bev_new(l, fd, ssl);
    if (bev == NULL)
        return;
    struct gw_conn *c = cn_calloc(1, sizeof(*c));
    c->loop = l;
    c->bev = bev;
    c->tls = ssl != NULL;
    c->refs = 1;
    c->kick = event_new(l->base, -1, 0, gw_conn_on_kick, c);
    c->timer = evtimer_new(l->base, gw_conn_on_timer, c);
    c->sink = evbuffer_new();
    c->req = l->app.req_new(l->app.arg);
    c->req->conn = c;
    c->req->body = evbuffer_new();
    c->req->hdrs = evbuffer_new();
    gw_conn_peer(fd, c->req->peer, sizeof(c->req->peer));
    gw_http_parser_init(&c->parser, &l->opts.limits);
    c->state = GW_CONN_IDLE;
    l->n_conns++;
    l->n_conn_mem++;
    gw_conn_link(c);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    bufferevent_setcb(bev, gw_conn_on_read, gw_conn_on_write, gw_conn_on_event, c);
    bufferevent_setwatermark(bev, EV_WRITE, (size_t)l->opts.output_high_water / 2, 0);
    /* libevent reads 16 KiB per call by default: large PUT bodies then
     * spend their time in the loop (the Proxmox chunker finding) */
    bufferevent_set_max_single_read(bev, (size_t)l->opts.read_size);
    /* and writes 16 KiB per call: a large GET then costs a writev and an
     * epoll_wait per 16 KiB (~65,000 of each per GB); hand the kernel
     * what it takes, up to the output high-water mark */
    bufferevent_set_max_single_write(bev, (size_t)l->opts.output_high_water);
    struct timeval wt = gw_conn_tv(l->opts.body_idle_timeout_ms);
    bufferevent_set_timeouts(bev, NULL, &wt);
    bufferevent_enable(bev, EV_READ | EV_WRITE);
    /* a stalled TLS handshake is a slowloris too: it gets a head's time */
    gw_conn_arm_timer(c, ssl != NULL ? l->opts.header_timeout_ms : l->opts.keepalive_timeout_ms);
    gw_accept_opened(l);   /* at the cap: stops accepting */
}
