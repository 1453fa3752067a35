/* The application-facing side of an HTTP exchange: holds, the body stream
 * and the response writer (http_req.h). The connection state machine that
 * drives it is conn.c. */
#include "http_req.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>

#include <event2/bufferevent.h>

#include "conn.h"
#include "http_date.h"
#include "http_loop.h"

#include "cn/log.h"
#include "cn/time.h"

void gw_http_req_hold(struct gw_http_req *x)
{
    x->conn->refs++;
}

int gw_http_req_is_tls(const struct gw_http_req *x)
{
    return x->conn != NULL && x->conn->tls;
}

int gw_http_req_peer(const struct gw_http_req *x, struct sockaddr_storage *ss)
{
    const struct gw_conn *c = x->conn;
    socklen_t len = sizeof(*ss);
    memset(ss, 0, sizeof(*ss));
    if (c == NULL || c->dead || c->bev == NULL)
        return CN_ERR;
    evutil_socket_t fd = bufferevent_getfd(c->bev);
    if (fd < 0 || getpeername(fd, (struct sockaddr *)ss, &len) != 0)
        return CN_ERR;
    return CN_OK;
}

int gw_http_req_release(struct gw_http_req *x)
{
    struct gw_conn *c = x->conn;
    int alive = !c->dead;
    gw_conn_unref(c);
    return alive;
}

void gw_http_req_body_read(struct gw_http_req *x, gw_http_req_cb on_body)
{
    x->on_body = on_body;
    gw_conn_body_start(x->conn);
}

void gw_http_req_body_consumed(struct gw_http_req *x)
{
    gw_conn_kick(x->conn);
}

void gw_http_req_reply_start(struct gw_http_req *x, int status)
{
    static const struct {
        int code;
        const char *text;
    } reasons[] = {
        {200, "OK"}, {201, "Created"}, {204, "No Content"}, {206, "Partial Content"},
        {303, "See Other"}, {304, "Not Modified"}, {400, "Bad Request"}, {403, "Forbidden"},
        {404, "Not Found"}, {405, "Method Not Allowed"}, {409, "Conflict"},
        {411, "Length Required"}, {412, "Precondition Failed"}, {414, "URI Too Long"},
        {416, "Requested Range Not Satisfiable"}, {500, "Internal Server Error"},
        {501, "Not Implemented"}, {503, "Service Unavailable"},
    };
    const char *reason = "Unknown";
    for (size_t i = 0; i < CN_ARRAY_LEN(reasons); i++)
        if (reasons[i].code == status)
            reason = reasons[i].text;
    x->status = status;
    evbuffer_drain(x->hdrs, evbuffer_get_length(x->hdrs));
    char date[GW_HTTP_DATE_LEN];
    gw_http_date_format(time(NULL), date);
    evbuffer_add_printf(x->hdrs, "HTTP/1.1 %d %s\r\nDate: %s\r\nServer: cairn\r\n", status,
                        reason, date);
}

int gw_http_field_name_ok(const char *name)
{
    static const char tchar_punct[] = "!#$%&'*+-.^_`|~";
    if (*name == '\0')
        return 0;
    for (const char *p = name; *p != '\0'; p++) {
        unsigned char c = (unsigned char)*p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              strchr(tchar_punct, c) != NULL))
            return 0;
    }
    return 1;
}

int gw_http_field_value_ok(const char *v, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)v[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return 0;
    }
    return 1;
}

void gw_http_req_reply_header(struct gw_http_req *x, const char *name, const char *value,
                              size_t len)
{
    if (!gw_http_field_name_ok(name) || !gw_http_field_value_ok(value, len)) {
        CN_LOGR(CN_LOG_WARN, x->id, "response header '%.64s' not sent: not a valid field",
                name);
        return;
    }
    evbuffer_add_printf(x->hdrs, "%s: ", name);
    evbuffer_add(x->hdrs, value, len);
    evbuffer_add(x->hdrs, "\r\n", 2);
}

void gw_http_req_reply_send_headers(struct gw_http_req *x, uint64_t length)
{
    struct gw_conn *c = x->conn;
    CN_ASSERT(!x->headers_sent);
    x->headers_sent = 1;
    x->first_byte_us = cn_time_mono_us();
    /* an unread request body makes the connection unusable afterwards; so
     * does a final answer to Expect: 100-continue without a 100 first
     * (refused before the body was asked for, even an empty one):
     * botocore keeps the status line of such an answer and reads the next
     * response on the connection without its own (conn.c,
     * gw_conn_body_start), so that client must reconnect */
    if (!x->body_done || x->body_failed || c->loop->draining ||
        (c->parser.expect_continue && !c->continue_sent))
        x->close_after = 1;
    if (x->status != 304 && x->status != 204)
        evbuffer_add_printf(x->hdrs, "Content-Length: %llu\r\n", (unsigned long long)length);
    x->reply_length = x->head_only || x->status == 304 || x->status == 204 ? 0 : length;
    evbuffer_add_printf(x->hdrs, "Connection: %s\r\n\r\n", x->close_after ? "close" : "keep-alive");
    if (!c->dead)
        evbuffer_add_buffer(bufferevent_get_output(c->bev), x->hdrs);
    else
        evbuffer_drain(x->hdrs, evbuffer_get_length(x->hdrs));
}

struct evbuffer *gw_http_req_reply_body(struct gw_http_req *x)
{
    struct gw_conn *c = x->conn;
    if (x->head_only || c->dead) {
        evbuffer_drain(c->sink, evbuffer_get_length(c->sink));
        return c->sink;
    }
    return bufferevent_get_output(c->bev);
}

int gw_http_req_output_full(const struct gw_http_req *x)
{
    struct gw_conn *c = x->conn;
    if (c->dead)
        return 0;
    return evbuffer_get_length(bufferevent_get_output(c->bev)) > c->loop->opts.output_high_water;
}

uint64_t gw_http_req_kernel_unsent(const struct gw_http_req *x)
{
    struct gw_conn *c = x->conn;
    int n = 0;
    if (c->dead || ioctl(bufferevent_getfd(c->bev), SIOCOUTQNSD, &n) != 0 || n < 0)
        return 0;
    return (uint64_t)n;
}

void gw_http_req_on_drain(struct gw_http_req *x, gw_http_req_cb cb)
{
    x->on_drain = cb;
}

void gw_http_req_reply_end(struct gw_http_req *x)
{
    CN_ASSERT(x->headers_sent && !x->finished);
    x->finished = 1;
    struct gw_conn *c = x->conn;
    if (c->loop->app.done != NULL)
        c->loop->app.done(x);
    gw_conn_request_done(c);
}

void gw_http_req_abort(struct gw_http_req *x)
{
    x->close_after = 1;
    gw_conn_close(x->conn);
}
