/* The handler-facing side of a request: holds, head lookups, the body
 * stream and the response writer. The connection state machine is conn.c. */
#include "request.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <event2/bufferevent.h>

#include "conn.h"
#include "s3_names.h"
#include "s3_ops.h"
#include "worker.h"

#include "cn/log.h"

void gw_conn_body_start(struct gw_conn *c);

void gw_req_hold(struct gw_req *r)
{
    r->conn->refs++;
}

int gw_req_release(struct gw_req *r)
{
    struct gw_conn *c = r->conn;
    int alive = !c->dead;
    gw_conn_unref(c);
    return alive;
}

const char *gw_req_header(const struct gw_req *r, const char *name, size_t *len)
{
    if (r->http == NULL)
        return NULL;
    const struct gw_http_header *h = gw_http_parser_header(r->http, name);
    if (h == NULL)
        return NULL;
    if (len != NULL)
        *len = h->value_len;
    return h->value;
}

const struct gw_req_param *gw_req_param(const struct gw_req *r, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < r->n_params; i++)
        if (r->params[i].name_len == n && memcmp(r->params[i].name, name, n) == 0)
            return &r->params[i];
    return NULL;
}

/* Does the query parameter name n[len] (raw, percent-encoded) name a
 * secret whose value must not reach the log? */
static int gw_req_log_secret_param(const char *n, size_t len)
{
    static const char *const names[] = {"x-amz-signature", "signature",
                                        "x-amz-security-token"};
    char dec[96]; /* the longest name, every byte percent-encoded */
    size_t dlen;
    if (len > sizeof(dec) || gw_s3_names_uri_decode(n, len, dec, &dlen, 1) != CN_OK)
        return 0; /* no name the verifier could read as one of these */
    for (size_t i = 0; i < CN_ARRAY_LEN(names); i++)
        if (gw_http_token_eq(dec, dlen, names[i]))
            return 1;
    return 0;
}

/* Appends s[len] to out[cap] at *pos; 0 once out is full. */
static int gw_req_log_put(char *out, size_t cap, size_t *pos, const char *s, size_t len)
{
    size_t room = cap - 1 - *pos;
    size_t n = CN_MIN(len, room);
    memcpy(out + *pos, s, n);
    *pos += n;
    return n == len;
}

size_t gw_req_log_target(const struct gw_http_parser *h, char *out, size_t cap)
{
    static const char cut[] = "...";
    CN_ASSERT(cap > sizeof(cut));
    size_t pos = 0, body = cap - (sizeof(cut) - 1); /* room kept for the cut mark */
    int whole = gw_req_log_put(out, body, &pos, h->path, h->path_len);
    const char *q = h->query, *end = h->query + h->query_len;
    if (whole && h->path_len < h->target_len)
        whole = gw_req_log_put(out, body, &pos, "?", 1);
    while (whole && q < end) {
        const char *amp = memchr(q, '&', (size_t)(end - q));
        const char *e = amp != NULL ? amp : end;
        const char *eq = memchr(q, '=', (size_t)(e - q));
        if (eq != NULL && gw_req_log_secret_param(q, (size_t)(eq - q)))
            whole = gw_req_log_put(out, body, &pos, q, (size_t)(eq - q)) &&
                    gw_req_log_put(out, body, &pos, "=REDACTED", 9);
        else
            whole = gw_req_log_put(out, body, &pos, q, (size_t)(e - q));
        if (whole && amp != NULL)
            whole = gw_req_log_put(out, body, &pos, "&", 1);
        q = e + 1;
    }
    if (!whole) {
        memcpy(out + pos, cut, sizeof(cut) - 1);
        pos += sizeof(cut) - 1;
    }
    out[pos] = '\0';
    return pos;
}

void gw_req_body_read(struct gw_req *r, gw_req_cb on_body)
{
    r->on_body = on_body;
    gw_conn_body_start(r->conn);
}

void gw_req_body_consumed(struct gw_req *r)
{
    gw_conn_kick(r->conn);
}

void gw_req_reply_start(struct gw_req *r, int status)
{
    static const struct {
        int code;
        const char *text;
    } reasons[] = {
        {200, "OK"}, {204, "No Content"}, {206, "Partial Content"},
        {304, "Not Modified"}, {400, "Bad Request"}, {403, "Forbidden"},
        {404, "Not Found"}, {405, "Method Not Allowed"}, {409, "Conflict"},
        {411, "Length Required"}, {412, "Precondition Failed"}, {414, "URI Too Long"},
        {416, "Requested Range Not Satisfiable"}, {500, "Internal Server Error"},
        {501, "Not Implemented"}, {503, "Service Unavailable"},
    };
    const char *reason = "Unknown";
    for (size_t i = 0; i < CN_ARRAY_LEN(reasons); i++)
        if (reasons[i].code == status)
            reason = reasons[i].text;
    r->status = status;
    evbuffer_drain(r->hdrs, evbuffer_get_length(r->hdrs));
    char date[GW_S3_NAMES_HTTP_DATE_LEN];
    gw_s3_names_http_date_format(time(NULL), date);
    evbuffer_add_printf(r->hdrs,
                        "HTTP/1.1 %d %s\r\nDate: %s\r\nServer: cairn\r\n"
                        "x-amz-request-id: %s\r\nx-amz-id-2: %s\r\n",
                        status, reason, date, r->id_str, r->id_str);
}

/* 1 when name is a non-empty HTTP token (RFC 9110 5.6.2). */
static int gw_req_header_name_ok(const char *name)
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

void gw_req_reply_header(struct gw_req *r, const char *name, const char *value, size_t len)
{
    if (!gw_req_header_name_ok(name) || !gw_s3_overrides_value_ok(value, len)) {
        CN_LOGR(CN_LOG_WARN, r->id, "response header '%.64s' not sent: not a valid field",
                name);
        return;
    }
    evbuffer_add_printf(r->hdrs, "%s: ", name);
    evbuffer_add(r->hdrs, value, len);
    evbuffer_add(r->hdrs, "\r\n", 2);
}

void gw_req_reply_headerf(struct gw_req *r, const char *name, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(buf)) {
        CN_LOGR(CN_LOG_WARN, r->id, "response header '%.64s' not sent: too long", name);
        return;
    }
    gw_req_reply_header(r, name, buf, (size_t)n);
}

void gw_req_reply_send_headers(struct gw_req *r, uint64_t length)
{
    struct gw_conn *c = r->conn;
    CN_ASSERT(!r->headers_sent);
    r->headers_sent = 1;
    /* an unread request body makes the connection unusable afterwards */
    if (!r->body_done || r->body_failed || r->worker->draining)
        r->close_after = 1;
    if (r->status != 304 && r->status != 204)
        evbuffer_add_printf(r->hdrs, "Content-Length: %llu\r\n", (unsigned long long)length);
    evbuffer_add_printf(r->hdrs, "Connection: %s\r\n\r\n", r->close_after ? "close" : "keep-alive");
    if (!c->dead)
        evbuffer_add_buffer(bufferevent_get_output(c->bev), r->hdrs);
    else
        evbuffer_drain(r->hdrs, evbuffer_get_length(r->hdrs));
}

struct evbuffer *gw_req_reply_body(struct gw_req *r)
{
    struct gw_conn *c = r->conn;
    if (r->head_only || c->dead) {
        evbuffer_drain(c->sink, evbuffer_get_length(c->sink));
        return c->sink;
    }
    return bufferevent_get_output(c->bev);
}

int gw_req_output_full(const struct gw_req *r)
{
    struct gw_conn *c = r->conn;
    if (c->dead)
        return 0;
    return evbuffer_get_length(bufferevent_get_output(c->bev)) >
           (size_t)c->worker->cfg->http_output_high_water;
}

void gw_req_on_drain(struct gw_req *r, gw_req_cb cb)
{
    r->on_drain = cb;
}

void gw_req_reply_end(struct gw_req *r)
{
    CN_ASSERT(r->headers_sent && !r->finished);
    r->finished = 1;
    if (CN_LOG_INFO >= cn_log_level_current) { /* skip the copy when not logged */
        char target[GW_REQ_LOG_TARGET_MAX];
        if (r->http != NULL)
            gw_req_log_target(r->http, target, sizeof(target));
        /* the access line: one per request, so never rate limited */
        CN_LOGR_EVERY(CN_LOG_INFO, r->id, "%s %s -> %d %s", r->http != NULL ? r->http->method : "-",
                      r->http != NULL ? target : "-", r->status,
                      r->op != NULL ? r->op->name : "-");
    }
    gw_conn_request_done(r->conn);
}

void gw_req_abort(struct gw_req *r)
{
    r->close_after = 1;
    gw_conn_close(r->conn);
}

void gw_req_reply_empty(struct gw_req *r, int status)
{
    gw_req_reply_start(r, status);
    gw_req_reply_send_headers(r, 0);
    gw_req_reply_end(r);
}

void gw_req_reply_xml(struct gw_req *r, int status, struct evbuffer *doc)
{
    gw_req_reply_start(r, status);
    gw_req_reply_header(r, "Content-Type", "application/xml", 15);
    gw_req_reply_send_headers(r, evbuffer_get_length(doc));
    evbuffer_add_buffer(gw_req_reply_body(r), doc);
    gw_req_reply_end(r);
}

void gw_req_error(struct gw_req *r, enum gw_s3_err err, const char *message)
{
    gw_req_error_header(r, err, message, NULL, NULL, 0);
}

void gw_req_error_header(struct gw_req *r, enum gw_s3_err err, const char *message,
                         const char *name, const char *value, size_t len)
{
    struct gw_s3_error_extra extra[2];
    size_t n_extra = 0;
    if (r->bucket_len > 0)
        extra[n_extra++] = (struct gw_s3_error_extra){"BucketName", r->bucket, r->bucket_len};
    if (r->key != NULL)
        extra[n_extra++] = (struct gw_s3_error_extra){"Key", r->key, r->key_len};
    struct gw_s3_error_doc doc = {
        .err = err,
        .message = message,
        .resource = r->http != NULL ? r->http->path : "",
        .resource_len = r->http != NULL ? r->http->path_len : 0,
        .request_id = r->id_str,
        .host_id = r->id_str,
        .extra = extra,
        .n_extra = n_extra,
    };
    CN_LOGR(CN_LOG_DEBUG, r->id, "error %s: %s", gw_s3_error_code(err),
            message != NULL ? message : gw_s3_error_message(err));
    struct evbuffer *body = evbuffer_new();
    if (!r->head_only && gw_s3_error_render(&doc, body) != CN_OK)
        evbuffer_drain(body, evbuffer_get_length(body));
    gw_req_reply_start(r, gw_s3_error_status(err));
    if (gw_s3_error_has_body(err))
        gw_req_reply_header(r, "Content-Type", "application/xml", 15);
    if (err == GW_S3_SERVICE_UNAVAILABLE || err == GW_S3_SLOW_DOWN)
        gw_req_reply_header(r, "Retry-After", "1", 1);
    if (name != NULL)
        gw_req_reply_header(r, name, value, len);
    gw_req_reply_send_headers(r, evbuffer_get_length(body));
    evbuffer_add_buffer(gw_req_reply_body(r), body);
    evbuffer_free(body);
    gw_req_reply_end(r);
}
