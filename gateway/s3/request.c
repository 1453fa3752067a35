/* The S3 request (request.h): the S3 layer as the HTTP layer's
 * application (its callbacks below), and the handler-facing request API over
 * the HTTP exchange: holds, head lookups, the body stream, the response
 * writer with S3's request-id headers, S3 error documents and the access
 * line. */
#include "request.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "access.h"
#include "access_log.h"
#include "http_loop.h"
#include "s3_metrics.h"
#include "s3_body.h"
#include "s3_cors.h"
#include "s3_names.h"
#include "s3_ops.h"
#include "s3_post.h"
#include "s3_router.h"
#include "s3_versions.h"

#include "cn/alloc.h"
#include "cn/log.h"
#include "cn/time.h"

void gw_req_hold(struct gw_req *r)
{
    gw_http_req_hold(&r->hr);
}

int gw_req_release(struct gw_req *r)
{
    return gw_http_req_release(&r->hr);
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

static void gw_req_on_body_http(struct gw_http_req *x)
{
    struct gw_req *r = gw_req_of(x);
    if (r->on_body != NULL)
        r->on_body(r);
}

void gw_req_body_read(struct gw_req *r, gw_req_cb on_body)
{
    r->on_body = on_body;
    gw_http_req_body_read(&r->hr, on_body != NULL ? gw_req_on_body_http : NULL);
}

void gw_req_body_consumed(struct gw_req *r)
{
    gw_http_req_body_consumed(&r->hr);
}

void gw_req_reply_start(struct gw_req *r, int status)
{
    gw_http_req_reply_start(&r->hr, status);
    gw_http_req_reply_header(&r->hr, "x-amz-request-id", r->hr.id_str, 16);
    gw_http_req_reply_header(&r->hr, "x-amz-id-2", r->hr.id_str, 16);
    if (r->cors != NULL)
        gw_s3_cors_reply_headers(r);
    if (r->version_id[0] != '\0')
        gw_http_req_reply_header(&r->hr, "x-amz-version-id", r->version_id,
                                 strlen(r->version_id));
    if (r->copy_source_version_id[0] != '\0')
        gw_http_req_reply_header(&r->hr, "x-amz-copy-source-version-id",
                                 r->copy_source_version_id,
                                 strlen(r->copy_source_version_id));
    if (r->delete_marker)
        gw_http_req_reply_header(&r->hr, "x-amz-delete-marker", "true", 4);
}

void gw_req_reply_header(struct gw_req *r, const char *name, const char *value, size_t len)
{
    gw_http_req_reply_header(&r->hr, name, value, len);
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
    gw_http_req_reply_header(&r->hr, name, buf, (size_t)n);
}

void gw_req_reply_send_headers(struct gw_req *r, uint64_t length)
{
    gw_http_req_reply_send_headers(&r->hr, length);
}

struct evbuffer *gw_req_reply_body(struct gw_req *r)
{
    return gw_http_req_reply_body(&r->hr);
}

int gw_req_output_full(const struct gw_req *r)
{
    return gw_http_req_output_full(&r->hr);
}

uint64_t gw_req_kernel_unsent(const struct gw_req *r)
{
    return gw_http_req_kernel_unsent(&r->hr);
}

static void gw_req_on_drain_http(struct gw_http_req *x)
{
    struct gw_req *r = gw_req_of(x);
    gw_req_cb cb = r->on_drain;
    r->on_drain = NULL;
    if (cb != NULL)
        cb(r);
}

void gw_req_on_drain(struct gw_req *r, gw_req_cb cb)
{
    r->on_drain = cb;
    gw_http_req_on_drain(&r->hr, cb != NULL ? gw_req_on_drain_http : NULL);
}

void gw_req_reply_end(struct gw_req *r)
{
    gw_http_req_reply_end(&r->hr);
}

void gw_req_abort(struct gw_req *r)
{
    gw_http_req_abort(&r->hr);
}

void gw_req_reply_empty(struct gw_req *r, int status)
{
    gw_req_reply_start(r, status);
    gw_req_reply_send_headers(r, 0);
    gw_req_reply_end(r);
}

void gw_req_reply_xml(struct gw_req *r, int status, struct evbuffer *doc)
{
    gw_req_reply_doc(r, status, "application/xml", doc);
}

void gw_req_reply_doc(struct gw_req *r, int status, const char *type, struct evbuffer *doc)
{
    gw_req_reply_start(r, status);
    gw_req_reply_header(r, "Content-Type", type, strlen(type));
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
        .request_id = r->hr.id_str,
        .host_id = r->hr.id_str,
        .extra = extra,
        .n_extra = n_extra,
    };
    r->err = err;
    CN_LOGR(CN_LOG_DEBUG, r->id, "error %s: %s", gw_s3_error_code(err),
            message != NULL ? message : gw_s3_error_message(err));
    struct evbuffer *body = evbuffer_new();
    if (!r->hr.head_only && gw_s3_error_render(&doc, body) != CN_OK)
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

/* ---- the handler's state --------------------------------------------- */

void gw_req_state_set(struct gw_req *r, struct gw_hstate *hs, const struct gw_hstate_type *t)
{
    CN_ASSERT(r->state == NULL && hs != NULL && t != NULL && t->free != NULL);
    hs->type = t;
    r->state = hs;
}

void gw_req_state_drop(struct gw_req *r)
{
    struct gw_hstate *hs = r->state;
    r->state = NULL;
    gw_hstate_free(hs);
}

/* ---- the S3 layer as the HTTP layer's application -------------------- */

static struct gw_http_req *gw_req_app_new(void *arg)
{
    struct gw_req *r = cn_calloc(1, sizeof(*r));
    r->s3 = arg;
    return &r->hr;
}

static void gw_req_app_free(struct gw_http_req *x)
{
    gw_credentials_free(gw_req_of(x)->creds_held);
    cn_free(gw_req_of(x));
}

/* Frees the S3 request's per-request state (the HTTP layer clears its own). */
static void gw_req_app_clear(struct gw_http_req *x)
{
    struct gw_req *r = gw_req_of(x);
    gw_req_state_drop(r);
    gw_s3_body_free(r->bs);
    r->bs = NULL;
    gw_s3_versions_free(r->vs);
    r->vs = NULL;
    r->versioning = 0;
    r->version_id[0] = '\0';
    r->copy_source_version_id[0] = '\0';
    r->delete_marker = 0;
    gw_s3_post_free(r->post);
    r->post = NULL;
    r->then = NULL;
    r->on_body = NULL;
    r->on_drain = NULL;
    cn_free(r->key);
    r->key = NULL;
    r->key_len = 0;
    if (r->has_copy_src)
        gw_copy_source_fini(&r->copy_src);
    r->has_copy_src = 0;
    memset(&r->ovr, 0, sizeof(r->ovr));
    gw_s3_cors_headers_free(r->cors);
    r->cors = NULL;
    r->cors_checked = 0;
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
    memset(&r->auth, 0, sizeof(r->auth));
    gw_credentials_free(r->creds_held);
    r->creds_held = NULL;
    r->owner_known_until_us = 0;
    r->anonymous = 0;
    gw_access_config_unref(r->access_cfg);
    r->access_cfg = NULL;
    r->access_need_object = 0;
    r->access_cfg_fresh = 0;
    gw_access_config_unref(r->access_src_cfg);
    r->access_src_cfg = NULL;
    r->access_need_source = 0;
    r->access_src_cfg_fresh = 0;
    cn_free(r->acl_text);
    r->acl_text = NULL;
    r->acl_text_len = 0;
    r->http = NULL;
    r->id = 0;
    r->dispatched = 0;
    r->err = GW_S3_OK;
}

static void gw_req_app_dispatch(struct gw_http_req *x)
{
    struct gw_req *r = gw_req_of(x);
    r->http = x->http;
    r->id = x->id;
    if (r->s3->metrics != NULL) {
        gw_s3_metrics_started(r->s3->metrics);
        r->dispatched = 1;
    }
    if (CN_LOG_DEBUG >= cn_log_level_current) { /* skip the copy when not logged */
        char target[GW_REQ_LOG_TARGET_MAX];
        gw_req_log_target(r->http, target, sizeof(target));
        CN_LOGR(CN_LOG_DEBUG, r->id, "%s %s", r->http->method, target);
    }
    gw_s3_router_dispatch(r);
}

/* A head that could not be parsed: S3's answer for why. */
static void gw_req_app_head_failed(struct gw_http_req *x, enum gw_http_fail fail, int status,
                                   const char *reason)
{
    (void)status;
    struct gw_req *r = gw_req_of(x);
    r->http = NULL;
    r->id = x->id;
    enum gw_s3_err err;
    switch (fail) {
    case GW_HTTP_FAIL_HEADERS_TOO_LARGE: err = GW_S3_REQUEST_HEADER_SECTION_TOO_LARGE; break;
    case GW_HTTP_FAIL_URI_TOO_LONG: err = GW_S3_URI_TOO_LONG; break;
    case GW_HTTP_FAIL_BAD_VERSION: err = GW_S3_NOT_IMPLEMENTED; break;
    case GW_HTTP_FAIL_BAD_HOST: err = GW_S3_INVALID_REQUEST; break;
    default: err = GW_S3_BAD_REQUEST; break;
    }
    CN_LOGR(CN_LOG_INFO, r->id, "bad request head: %s", reason);
    gw_req_error(r, err, reason);
}

static void gw_req_app_body_timeout(struct gw_http_req *x)
{
    gw_req_error(gw_req_of(x), GW_S3_REQUEST_TIMEOUT, NULL);
}

/* The access line of r, which ended now_us (monotonic). */
static void gw_req_access_line(struct gw_req *r, uint64_t now_us)
{
    struct gw_http_req *x = &r->hr;
    char target[GW_REQ_LOG_TARGET_MAX];
    size_t target_len = 0;
    if (r->http != NULL)
        target_len = gw_req_log_target(r->http, target, sizeof(target));
    /* the account only once its signature checked out */
    const struct gw_cred *cred = r->auth.err == GW_S3_OK ? r->auth.cred : NULL;
    struct gw_access_log_entry e = {
        .time_us = cn_time_now_us() - (now_us - x->start_us),
        .client = x->peer,
        .account = cred != NULL ? cred->access_key : NULL,
        .account_len = cred != NULL ? cred->access_key_len : 0,
        .op = r->op != NULL ? r->op->name : NULL,
        .bucket = r->bucket,
        .bucket_len = r->bucket_len,
        .key = r->key,
        .key_len = r->key_len,
        .method = r->http != NULL ? r->http->method : NULL,
        .method_len = r->http != NULL ? r->http->method_len : 0,
        .target = r->http != NULL ? target : NULL,
        .target_len = target_len,
        .status = x->headers_sent ? x->status : 0,
        .error = r->err != GW_S3_OK ? gw_s3_error_code(r->err) : NULL,
        .bytes_in = x->body_total,
        .bytes_out = x->reply_length,
        .ttfb_us = x->first_byte_us > 0 ? x->first_byte_us - x->start_us : 0,
        .total_us = now_us - x->start_us,
        .request_id = x->id_str,
        .aborted = x->aborted,
    };
    gw_access_log_write(r->s3->access, &e);
}

/* The request's metrics and its access line (one per request, never rate
 * limited; also for a request cut short, x->aborted). */
static void gw_req_app_done(struct gw_http_req *x)
{
    struct gw_req *r = gw_req_of(x);
    uint64_t now_us = cn_time_mono_us();
    if (r->s3->metrics != NULL)
        gw_s3_metrics_done(r->s3->metrics, r->op, x->status, now_us - x->start_us,
                           x->body_total, x->reply_length, r->dispatched);
    if (gw_access_log_wanted(r->s3->access))
        gw_req_access_line(r, now_us);
}

void gw_req_app_init(struct gw_http_app *app, struct gw_s3_ctx *ctx)
{
    *app = (struct gw_http_app){
        .req_new = gw_req_app_new,
        .req_free = gw_req_app_free,
        .req_clear = gw_req_app_clear,
        .dispatch = gw_req_app_dispatch,
        .head_failed = gw_req_app_head_failed,
        .body_timeout = gw_req_app_body_timeout,
        .done = gw_req_app_done,
        .arg = ctx,
    };
}
