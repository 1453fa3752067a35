/* The CORS operations and the preflight (s3_cors.h). The rules live under
 * "cors" in the bucket record's meta (bucket_meta.h) in cors.c's form; the
 * changes go through s3_bucket.c's read-check-write of that record. */
#include "s3_cors.h"

#include <string.h>

#include "bucket_meta.h"
#include "cors.h"
#include "keys.h"
#include "s3_bucket.h"
#include "s3_bucket_cfg.h"
#include "s3_error.h"
#include "s3_reply.h"
#include "store.h"
#include "xml.h"

#include "cn/alloc.h"
#include "cn/log.h"

#define GW_S3_CORS_HDR_MAX 4096

struct gw_s3_cors_headers {
    char *allow_origin;
    char *methods;
    char *expose;      /* NULL: none */
    int64_t max_age;   /* -1: none */
    int credentials;
};

void gw_s3_cors_headers_free(struct gw_s3_cors_headers *h)
{
    if (h == NULL)
        return;
    cn_free(h->allow_origin);
    cn_free(h->methods);
    cn_free(h->expose);
    cn_free(h);
}

/* The headers rule gives an origin[olen]: "*" when it allows any origin,
 * else the origin itself with Access-Control-Allow-Credentials, as S3. */
static struct gw_s3_cors_headers *gw_s3_cors_headers_new(const struct gw_cors_rule *rule,
                                                         const char *origin, size_t olen)
{
    struct gw_s3_cors_headers *h = cn_calloc(1, sizeof(*h));
    char buf[GW_S3_CORS_HDR_MAX];
    int any = gw_cors_rule_any_origin(rule);
    h->allow_origin = any ? cn_strndup("*", 1) : cn_strndup(origin, olen);
    h->credentials = !any;
    size_t n = gw_cors_methods_str(rule, buf, sizeof(buf));
    h->methods = cn_strndup(buf, n);
    if (rule->expose.n > 0) {
        n = gw_cors_list_str(&rule->expose, buf, sizeof(buf));
        h->expose = cn_strndup(buf, n);
    }
    h->max_age = rule->max_age;
    return h;
}

/* Writes h; vary is the Vary header's value. */
static void gw_s3_cors_send(struct gw_req *r, const struct gw_s3_cors_headers *h,
                            const char *vary)
{
    gw_req_reply_header(r, "Access-Control-Allow-Origin", h->allow_origin,
                        strlen(h->allow_origin));
    gw_req_reply_header(r, "Access-Control-Allow-Methods", h->methods, strlen(h->methods));
    if (h->expose != NULL)
        gw_req_reply_header(r, "Access-Control-Expose-Headers", h->expose, strlen(h->expose));
    if (h->max_age >= 0)
        gw_req_reply_headerf(r, "Access-Control-Max-Age", "%lld", (long long)h->max_age);
    if (h->credentials)
        gw_req_reply_header(r, "Access-Control-Allow-Credentials", "true", 4);
    gw_req_reply_header(r, "Vary", vary, strlen(vary));
}

/* ---- Put / Get / Delete: a kind of s3_bucket_cfg.h's configurations ---- */

static enum gw_s3_err gw_s3_cors_encode(struct gw_req *r, const char *body, size_t len,
                                        char **value, size_t *value_len,
                                        char why[GW_S3_CFG_WHY_MAX])
{
    (void)r;
    struct gw_cors c;
    char msg[GW_XML_WHY_MAX] = "";
    enum gw_s3_err err;
    if (gw_xml_parse_cors(body, len, &c, &err, msg) != CN_OK) {
        snprintf(why, GW_S3_CFG_WHY_MAX, "%s", msg);
        return err;
    }
    gw_cors_encode(&c, value, value_len);
    gw_cors_fini(&c);
    return GW_S3_OK;
}

static enum gw_s3_err gw_s3_cors_render(struct gw_req *r, const char *value, size_t len,
                                        struct evbuffer *doc)
{
    struct gw_cors c;
    if (gw_cors_decode(&c, value, len) != CN_OK) {
        CN_LOGR(CN_LOG_WARN, r->id, "bucket '%s': stored CORS rules unreadable", r->bucket);
        return GW_S3_INTERNAL_ERROR;
    }
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    gw_cors_write_xml(&c, &w);
    gw_cors_fini(&c);
    return gw_xml_writer_finish(&w) == CN_OK ? GW_S3_OK : GW_S3_INTERNAL_ERROR;
}

static const struct gw_s3_cfg_kind gw_s3_cors_kind = {
    .name = "cors",
    .flags = GW_S3_CFG_MD5,
    .max_bytes = GW_CORS_MAX_BYTES,
    .put_status = 200,
    .missing = GW_S3_NO_SUCH_CORS_CONFIGURATION,
    .encode = gw_s3_cors_encode,
    .render = gw_s3_cors_render,
};

void gw_s3_cors_put(struct gw_req *r)
{
    gw_s3_cfg_put(r, &gw_s3_cors_kind);
}

void gw_s3_cors_get(struct gw_req *r)
{
    gw_s3_cfg_get(r, &gw_s3_cors_kind);
}

void gw_s3_cors_delete(struct gw_req *r)
{
    gw_s3_cfg_delete(r, &gw_s3_cors_kind);
}

/* ---- reading the rules without an owner check ------------------------- */

/* The bucket's rules from the record res read into *c. Returns CN_OK,
 * CN_NOTFOUND (no bucket, or no rules), or another code (store error,
 * unreadable record). */
static int gw_s3_cors_rules_of(struct gw_store_result *res, struct gw_cors *c)
{
    memset(c, 0, sizeof(*c));
    if (res->rc != CN_OK)
        return res->rc;
    const struct msg *m = &res->reply->m;
    struct gw_bucket_meta bm;
    if (gw_bucket_meta_decode_record(&bm, m) != CN_OK)
        return CN_CORRUPT;
    const struct gw_bucket_meta_config *v = gw_bucket_meta_config(&bm, "cors");
    if (v == NULL)
        return CN_NOTFOUND;
    return gw_cors_decode(c, v->value, v->value_len) == CN_OK ? CN_OK : CN_CORRUPT;
}

static void gw_s3_cors_head(struct gw_req *r, gw_store_cb cb)
{
    char key[GW_KEYS_MAX];
    size_t n = gw_keys_bucket(key, r->bucket, r->bucket_len);
    gw_req_hold(r);
    gw_store_head(r->s3->store, key, n, cb, r);
}

/* ---- preflight ------------------------------------------------------- */

static void gw_s3_cors_on_preflight(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    if (res->rc == CN_NOTFOUND) {
        gw_req_error(r, GW_S3_NO_SUCH_BUCKET, NULL);
        return;
    }
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    struct gw_cors c;
    int rc = gw_s3_cors_rules_of(res, &c);
    if (rc == CN_NOTFOUND) {
        gw_req_error(r, GW_S3_ACCESS_FORBIDDEN, "CORSResponse: CORS is not enabled for this bucket.");
        return;
    }
    if (rc != CN_OK) {
        gw_req_error(r, GW_S3_INTERNAL_ERROR, NULL);
        return;
    }
    size_t olen, mlen, hlen = 0;
    const char *origin = gw_req_header(r, "origin", &olen);
    const char *method = gw_req_header(r, "access-control-request-method", &mlen);
    const char *hdrs = gw_req_header(r, "access-control-request-headers", &hlen);
    const struct gw_cors_rule *rule =
        gw_cors_match(&c, origin, olen, method, mlen, hdrs != NULL ? hdrs : "", hlen);
    if (rule == NULL) {
        gw_cors_fini(&c);
        gw_req_error(r, GW_S3_ACCESS_FORBIDDEN, NULL);
        return;
    }
    struct gw_s3_cors_headers *h = gw_s3_cors_headers_new(rule, origin, olen);
    gw_cors_fini(&c);
    gw_req_reply_start(r, 200);
    gw_s3_cors_send(r, h, "Origin, Access-Control-Request-Headers, Access-Control-Request-Method");
    if (hdrs != NULL && hlen > 0)   /* each was allowed: echo them, as S3 does */
        gw_req_reply_header(r, "Access-Control-Allow-Headers", hdrs, hlen);
    gw_s3_cors_headers_free(h);
    gw_req_reply_send_headers(r, 0);
    gw_req_reply_end(r);
}

void gw_s3_cors_preflight(struct gw_req *r)
{
    if (gw_req_header(r, "origin", NULL) == NULL) {
        gw_req_error(r, GW_S3_BAD_REQUEST,
                     "Insufficient information. Origin request header needed.");
        return;
    }
    size_t mlen;
    const char *m = gw_req_header(r, "access-control-request-method", &mlen);
    if (m == NULL || gw_cors_method_bit(m, mlen) == 0) {
        char why[128];
        snprintf(why, sizeof(why), "Invalid Access-Control-Request-Method: %.*s",
                 m != NULL ? (int)CN_MIN(mlen, 64) : 4, m != NULL ? m : "null");
        gw_req_error(r, GW_S3_BAD_REQUEST, why);
        return;
    }
    gw_s3_cors_head(r, gw_s3_cors_on_preflight);
}

/* ---- actual requests ------------------------------------------------- */

int gw_s3_cors_wanted(const struct gw_req *r)
{
    return r->bucket_len > 0 && gw_req_header(r, "origin", NULL) != NULL;
}

static void gw_s3_cors_on_lookup(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    gw_req_cb next = r->then;
    r->then = NULL;
    struct gw_cors c;
    if (gw_s3_cors_rules_of(res, &c) == CN_OK) {
        size_t olen;
        const char *origin = gw_req_header(r, "origin", &olen);
        const struct gw_cors_rule *rule =
            gw_cors_match(&c, origin, olen, r->http->method, r->http->method_len, NULL, 0);
        if (rule != NULL)
            r->cors = gw_s3_cors_headers_new(rule, origin, olen);
        gw_cors_fini(&c);
    }
    next(r);
}

void gw_s3_cors_lookup(struct gw_req *r, gw_req_cb next)
{
    r->then = next;
    gw_s3_cors_head(r, gw_s3_cors_on_lookup);
}

void gw_s3_cors_reply_headers(struct gw_req *r)
{
    if (r->cors != NULL)
        gw_s3_cors_send(r, r->cors, "Origin, Access-Control-Request-Headers, "
                                    "Access-Control-Request-Method");
}
