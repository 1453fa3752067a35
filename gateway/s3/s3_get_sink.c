/* An S3 request's response as a large-object GET's sink (s3_get_sink.h). */
#include "s3_get_sink.h"

#include "s3_error.h"

#include "cn/log.h"

static struct evbuffer *gw_s3_get_sink_body(void *ctx)
{
    struct gw_s3_get_sink *s = ctx;
    return gw_req_reply_body(s->r);
}

static uint64_t gw_s3_get_sink_unsent(void *ctx)
{
    struct gw_s3_get_sink *s = ctx;
    return gw_req_kernel_unsent(s->r);
}

static void gw_s3_get_sink_wait_drain(void *ctx)
{
    struct gw_s3_get_sink *s = ctx;
    gw_req_on_drain(s->r, s->on_drain);
}

static void gw_s3_get_sink_end(void *ctx)
{
    struct gw_s3_get_sink *s = ctx;
    gw_req_reply_end(s->r);
}

static void gw_s3_get_sink_abort(void *ctx, const char *why)
{
    struct gw_s3_get_sink *s = ctx;
    CN_LOGR(CN_LOG_ERROR, s->r->id, "%s", why);
    gw_req_abort(s->r);
}

static void gw_s3_get_sink_hold(void *ctx)
{
    struct gw_s3_get_sink *s = ctx;
    gw_req_hold(s->r);
}

/* The read-ahead budget let the GET in: its headers (built by the
 * handler) go out now. */
static void gw_s3_get_sink_admit(void *ctx)
{
    struct gw_s3_get_sink *s = ctx;
    gw_req_reply_send_headers(s->r, s->len);
}

/* The GET waited large_object.read_queue_timeout for room: 503 SlowDown
 * (the headers were not sent), which ends the request and frees the GET. */
static void gw_s3_get_sink_refuse(void *ctx)
{
    struct gw_s3_get_sink *s = ctx;
    CN_LOGR(CN_LOG_WARN, s->r->id, "large-object GET refused: no read-ahead budget within "
            "large_object.read_queue_timeout");
    gw_req_error(s->r, GW_S3_SLOW_DOWN, NULL);
}

/* The last release frees the request, and the GET with it: nothing after. */
static int gw_s3_get_sink_release(void *ctx)
{
    struct gw_s3_get_sink *s = ctx;
    return gw_req_release(s->r);
}

void gw_s3_get_sink_init(struct gw_s3_get_sink *s, struct gw_req *r, uint64_t len,
                         gw_req_cb on_drain, struct gw_read_pipeline_sink *out)
{
    s->r = r;
    s->on_drain = on_drain;
    s->len = len;
    *out = (struct gw_read_pipeline_sink){
        .body = gw_s3_get_sink_body,
        .unsent = gw_s3_get_sink_unsent,
        .wait_drain = gw_s3_get_sink_wait_drain,
        .end = gw_s3_get_sink_end,
        .abort = gw_s3_get_sink_abort,
        .hold = gw_s3_get_sink_hold,
        .release = gw_s3_get_sink_release,
        .admit = gw_s3_get_sink_admit,
        .refuse = gw_s3_get_sink_refuse,
        .ctx = s,
    };
}
