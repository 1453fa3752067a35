/* S3 routing: addressing (path style, or virtual host under s3.domain),
 * name checks, query parsing, SigV4, then the operation's handler. Nothing
 * here touches storage, so a refused request changes no stored data. */
#include "s3_router.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "access.h"
#include "bucket_owner.h"
#include "cluster.h"
#include "conn.h"
#include "s3_cors.h"
#include "s3_subres.h"
#include "s3_names.h"
#include "s3_ops.h"
#include "s3_status.h"
#include "sigv2.h"
#include "versioning.h"

#include "cn/alloc.h"
#include "cn/log.h"

#define GW_S3_ROUTER_MAX_PARAMS 64

/* Answers the unauthenticated probe paths, returning 1 when r was one of
 * them (answered), else 0. Neither is a valid bucket name, so they cannot
 * shadow one. /_cairn/health is liveness: 200 while the process serves.
 * /_cairn/ready is readiness: 503 with the reason while this thread drains
 * (SIGTERM) or while some replica set of the ring lacks W or R up nodes
 * (gw_cluster_ready), else 200. */
static int gw_s3_router_probe(struct gw_req *r)
{
    const struct gw_http_parser *h = r->http;
    char why[512];
    int status = 200;
    if (h->path_len == 14 && memcmp(h->path, "/_cairn/health", 14) == 0) {
        snprintf(why, sizeof(why), "ok");
    } else if (h->path_len == 13 && memcmp(h->path, "/_cairn/ready", 13) == 0) {
        snprintf(why, sizeof(why), "ok");
        if (*r->s3->draining) {   /* this thread's: it serves r */
            status = 503;
            snprintf(why, sizeof(why), "draining: the gateway is stopping");
        } else if (!gw_cluster_ready(r->s3->cluster, why, sizeof(why))) {
            status = 503;
        }
    } else {
        return 0;
    }
    size_t len = strlen(why);
    gw_req_reply_start(r, status);
    gw_req_reply_header(r, "Content-Type", "text/plain", 10);
    gw_req_reply_send_headers(r, len + 1);
    evbuffer_add(gw_req_reply_body(r), why, len);
    evbuffer_add(gw_req_reply_body(r), "\n", 1);
    gw_req_reply_end(r);
    return 1;
}

/* Splits the raw query into decoded parameters. */
static enum gw_s3_err gw_s3_router_parse_query(struct gw_req *r)
{
    const char *q = r->http->query, *end = q + r->http->query_len;
    while (q < end) {
        const char *amp = memchr(q, '&', (size_t)(end - q));
        const char *e = amp != NULL ? amp : end;
        if (e > q) {
            if (r->n_params == GW_S3_ROUTER_MAX_PARAMS)
                return GW_S3_INVALID_ARGUMENT;
            const char *eq = memchr(q, '=', (size_t)(e - q));
            const char *ne = eq != NULL ? eq : e;
            if (r->params == NULL)
                r->params = cn_calloc(GW_S3_ROUTER_MAX_PARAMS, sizeof(*r->params));
            struct gw_req_param *p = &r->params[r->n_params++];
            p->name = cn_malloc((size_t)(ne - q) + 1);
            p->has_value = eq != NULL;
            size_t vlen = eq != NULL ? (size_t)(e - eq - 1) : 0;
            p->value = cn_malloc(vlen + 1);
            if (gw_s3_names_uri_decode(q, (size_t)(ne - q), p->name, &p->name_len, 1) != CN_OK ||
                gw_s3_names_uri_decode(eq != NULL ? eq + 1 : "", vlen, p->value, &p->value_len,
                                       1) != CN_OK)
                return GW_S3_INVALID_ARGUMENT;
            p->name[p->name_len] = '\0';
            p->value[p->value_len] = '\0';
        }
        q = e + 1;
    }
    return GW_S3_OK;
}

/* The bucket from a virtual-host Host header, if any: *len 0 when none. */
static const char *gw_s3_router_vhost_bucket(const struct gw_req *r, size_t *len)
{
    *len = 0;
    const char *domain = r->s3->opts.domain;
    size_t dlen = domain != NULL ? strlen(domain) : 0, hlen;
    const char *host = gw_req_header(r, "host", &hlen);
    if (dlen == 0 || host == NULL)
        return NULL;
    const char *colon = memchr(host, ':', hlen);
    if (colon != NULL)
        hlen = (size_t)(colon - host);
    if (hlen <= dlen + 1 || host[hlen - dlen - 1] != '.' ||
        strncasecmp(host + hlen - dlen, domain, dlen) != 0)
        return NULL;
    *len = hlen - dlen - 1;
    return host;
}

/* Fills bucket and key from the addressing. */
static enum gw_s3_err gw_s3_router_target(struct gw_req *r, const char **why)
{
    const char *path = r->http->path;
    size_t plen = r->http->path_len, blen;
    const char *vb = gw_s3_router_vhost_bucket(r, &blen);
    const char *rest;
    size_t rest_len;
    if (vb != NULL) {
        rest = path + 1;
        rest_len = plen - 1;
    } else {
        const char *p = path + 1, *end = path + plen;
        const char *slash = memchr(p, '/', (size_t)(end - p));
        vb = p;
        blen = (size_t)((slash != NULL ? slash : end) - p);
        rest = slash != NULL ? slash + 1 : end;
        rest_len = (size_t)(end - rest);
    }
    if (blen > 0) {
        char tmp[256];
        size_t dlen;
        if (blen >= sizeof(tmp) || gw_s3_names_uri_decode(vb, blen, tmp, &dlen, 0) != CN_OK ||
            gw_s3_names_bucket_check(tmp, dlen) != CN_OK) {
            *why = "The specified bucket is not valid.";
            return GW_S3_INVALID_BUCKET_NAME;
        }
        memcpy(r->bucket, tmp, dlen);
        r->bucket[dlen] = '\0';
        r->bucket_len = dlen;
    }
    if (rest_len == 0)
        return GW_S3_OK;
    if (blen == 0)
        return GW_S3_INVALID_URI;
    char *key = cn_malloc(rest_len + 1);
    size_t klen;
    if (gw_s3_names_uri_decode(rest, rest_len, key, &klen, 0) != CN_OK) {
        cn_free(key);
        return GW_S3_INVALID_URI;
    }
    key[klen] = '\0';
    enum gw_s3_err kerr = GW_S3_OK;
    if (klen > (size_t)r->s3->opts.max_key_len) {
        kerr = GW_S3_KEY_TOO_LONG;
    } else if (gw_s3_names_key_check(key, klen, &kerr) != CN_OK) {
        /* a path that is not UTF-8 (or holds NUL) is InvalidURI, as S3
         * answers; "." and ".." segments are ordinary key bytes in S3 (the
         * store's keys are flat strings, so they lead nowhere) */
        kerr = GW_S3_INVALID_URI;
    }
    if (kerr != GW_S3_OK) {
        cn_free(key);
        return kerr;
    }
    r->key = key;
    r->key_len = klen;
    return GW_S3_OK;
}

/* SigV4 or SigV2: refuses anonymous and badly signed requests. */
static enum gw_s3_err gw_s3_router_auth(struct gw_req *r, const char **why)
{
    const struct gw_http_parser *h = r->http;
    struct gw_sigv4_header hdrs[256];
    size_t n = CN_MIN(h->n_headers, CN_ARRAY_LEN(hdrs));
    for (size_t i = 0; i < n; i++)
        hdrs[i] = (struct gw_sigv4_header){h->headers[i].name, h->headers[i].name_len,
                                           h->headers[i].value, h->headers[i].value_len};
    struct gw_sigv4_request sr = {
        .method = h->method,
        .method_len = h->method_len,
        .path = h->path,
        .path_len = h->path_len,
        .query = h->query,
        .query_len = h->query_len,
        .headers = hdrs,
        .n_headers = n,
        .now = time(NULL),
    };
    size_t vlen; /* SigV2 signs "/bucket" of a virtual-host request (sigv2.h) */
    const char *vb = gw_s3_router_vhost_bucket(r, &vlen) != NULL ? r->bucket : NULL;
    size_t blen = vb != NULL ? r->bucket_len : 0;
    if (r->creds_held == NULL)   /* the table the verifiers use now: the request keeps it */
        r->creds_held = gw_credentials_hold(r->s3->creds);
    int rc = r->s3->sigv2 != NULL && gw_sigv2_detect(&sr)
                 ? gw_sigv2_verify(r->s3->sigv2, &sr, vb, blen, &r->auth)
                 : gw_sigv4_verify(r->s3->sigv4, &sr, &r->auth);
    if (rc == CN_OK)
        return GW_S3_OK;
    if (rc == CN_NOTFOUND) {
        /* unsigned: the access decision (access.h) says what anonymous
         * may do, which is nothing unless an ACL or a policy allows it */
        r->anonymous = 1;
        r->auth.cred = &gw_access_anonymous;
        r->auth.payload = GW_SIGV4_PAYLOAD_UNSIGNED;
        return GW_S3_OK;
    }
    *why = r->auth.message[0] != '\0' ? r->auth.message : NULL;
    CN_LOGR(CN_LOG_INFO, r->id, "auth refused: %s %s", gw_s3_error_code(r->auth.err),
            r->auth.message);
    return r->auth.err != GW_S3_OK ? r->auth.err : GW_S3_ACCESS_DENIED;
}

static int gw_s3_router_is(const struct gw_req *r, const char *m)
{
    return gw_http_token_eq(r->http->method, r->http->method_len, m);
}

/* GET /_cairn/status (s3_status.h): answered only for a request signed by
 * an admin key; anyone else gets AccessDenied (anonymous ones too, as for a
 * bucket they may not read). Returns 1 when r was that path (answered). */
static int gw_s3_router_status(struct gw_req *r)
{
    const struct gw_http_parser *h = r->http;
    if (h->path_len != 14 || memcmp(h->path, "/_cairn/status", 14) != 0)
        return 0;
    const char *why = NULL;
    enum gw_s3_err err = GW_S3_OK;
    if (!gw_s3_router_is(r, "GET") && !gw_s3_router_is(r, "HEAD"))
        err = GW_S3_METHOD_NOT_ALLOWED;
    else
        err = gw_s3_router_auth(r, &why);
    if (err == GW_S3_OK &&
        gw_access_decide(r, &gw_access_no_bucket, GW_ACCESS_ACTION_STATUS, "", 0, NULL, 0, 0,
                         NULL) != GW_ACCESS_ALLOW) {
        err = GW_S3_ACCESS_DENIED;
        why = "Only an admin key (admin=true in the credentials file) may read the status.";
    }
    if (err != GW_S3_OK)
        gw_req_error(r, err, why);
    else
        gw_s3_status_reply(r);
    return 1;
}

/* Does r ask for server-side encryption (SSE-S3, SSE-KMS, SSE-C, or SSE-C
 * of a copy source)? The gateway stores nothing encrypted, so such a
 * request is refused rather than stored in the clear behind the client's
 * back. */
static int gw_s3_router_asks_sse(const struct gw_req *r)
{
    static const char sse[] = "x-amz-server-side-encryption";
    static const char copy_sse[] = "x-amz-copy-source-server-side-encryption";
    const struct gw_http_parser *h = r->http;
    for (uint32_t i = 0; i < h->n_headers; i++) {
        const struct gw_http_header *hd = &h->headers[i];
        if ((hd->name_len >= sizeof(sse) - 1 &&
             strncasecmp(hd->name, sse, sizeof(sse) - 1) == 0) ||
            (hd->name_len >= sizeof(copy_sse) - 1 &&
             strncasecmp(hd->name, copy_sse, sizeof(copy_sse) - 1) == 0))
            return 1;
    }
    return 0;
}

/* Headers that ask for a feature buckets never have here, and the answer
 * S3 gives for such a bucket: object lock on a write is InvalidRequest
 * ("Bucket is missing Object Lock Configuration"), a lock-enabled bucket
 * is NotImplemented. GW_S3_OK when none is present. */
static enum gw_s3_err gw_s3_router_unsupported_header(const struct gw_req *r, const char **why)
{
    static const char lock[] = "x-amz-object-lock-";
    const struct gw_http_parser *h = r->http;
    for (uint32_t i = 0; i < h->n_headers; i++) {
        const struct gw_http_header *hd = &h->headers[i];
        if (hd->name_len >= sizeof(lock) - 1 &&
            strncasecmp(hd->name, lock, sizeof(lock) - 1) == 0) {
            *why = "Bucket is missing Object Lock Configuration";
            return GW_S3_INVALID_REQUEST;
        }
        if (gw_http_token_eq(hd->name, hd->name_len, "x-amz-bucket-object-lock-enabled") &&
            gw_http_token_eq(hd->value, hd->value_len, "true")) {
            *why = "Object lock is not supported.";
            return GW_S3_NOT_IMPLEMENTED;
        }
    }
    return GW_S3_OK;
}

static void gw_s3_router_route_owned(struct gw_req *r);

/* Parses x-amz-copy-source of a PUT to a key, once, into r->copy_src: the
 * source bucket's owner check below and the copy handlers use that result.
 * A second x-amz-copy-source header is refused (which one would be meant?). */
static enum gw_s3_err gw_s3_router_copy_source(struct gw_req *r, const char **why)
{
    const struct gw_http_parser *h = r->http;
    const struct gw_http_header *src = NULL;
    if (r->key == NULL || !gw_s3_router_is(r, "PUT"))
        return GW_S3_OK;
    for (uint32_t i = 0; i < h->n_headers; i++) {
        const struct gw_http_header *hd = &h->headers[i];
        if (!gw_http_token_eq(hd->name, hd->name_len, "x-amz-copy-source"))
            continue;
        if (src != NULL) {
            *why = "Only one x-amz-copy-source header is allowed.";
            return GW_S3_INVALID_ARGUMENT;
        }
        src = hd;
    }
    if (src == NULL)
        return GW_S3_OK;
    enum gw_s3_err err = gw_copy_source_parse(src->value, src->value_len,
                                              (size_t)r->s3->opts.max_key_len,
                                              &r->copy_src, why);
    r->has_copy_src = err == GW_S3_OK;
    return err;
}

/* The target bucket is the caller's: check a copy's source bucket too. */
static void gw_s3_router_route_target_owned(struct gw_req *r)
{
    if (r->has_copy_src)
        gw_bucket_owner_check_source(r, gw_s3_router_route_owned);
    else
        gw_s3_router_route_owned(r);
}

/* Runs the operation of an authenticated request: first the checks that
 * need no storage, then the bucket's owner (every request on a bucket but
 * CreateBucket), then the operation's checks and handler. */
static void gw_s3_router_route(struct gw_req *r)
{
    if (gw_s3_router_asks_sse(r)) {
        gw_req_error(r, GW_S3_NOT_IMPLEMENTED, "Server-side encryption is not supported.");
        return;
    }
    const char *why = NULL;
    enum gw_s3_err herr = gw_s3_router_unsupported_header(r, &why);
    if (herr != GW_S3_OK) {
        gw_req_error(r, herr, why);
        return;
    }
    herr = gw_s3_overrides_parse(r->params, r->n_params, &r->ovr, &why);
    for (int i = 0; herr == GW_S3_OK && r->anonymous && i < GW_S3_OVR_N; i++)
        if (r->ovr.value[i] != NULL) {   /* as S3 refuses them */
            herr = GW_S3_INVALID_REQUEST;
            why = "Request specific response headers cannot be used for anonymous GET "
                  "requests.";
        }
    if (herr == GW_S3_OK)
        herr = gw_s3_router_copy_source(r, &why);
    if (herr != GW_S3_OK) {
        gw_req_error(r, herr, why);
        return;
    }
    int create = r->key == NULL && gw_s3_router_is(r, "PUT") && r->n_params == 0;
    if (r->anonymous && (r->bucket_len == 0 || create)) {
        /* ListBuckets and CreateBucket need an account */
        gw_req_error(r, GW_S3_ACCESS_DENIED, NULL);
        return;
    }
    if (create && gw_access_decide(r, &gw_access_no_bucket, "s3:CreateBucket", r->bucket,
                                   r->bucket_len, NULL, 0, 0, NULL) != GW_ACCESS_ALLOW) {
        gw_req_error(r, GW_S3_ACCESS_DENIED, NULL);   /* a restricted key without the flag */
        return;
    }
    if (r->bucket_len > 0 && !create)
        gw_bucket_owner_check(r, r->bucket, r->bucket_len, gw_s3_router_route_target_owned);
    else
        gw_s3_router_route_owned(r);
}

/* Runs r's operation (r->op) once the access checks let it on: first the
 * row's own checks (s3_ops.h), then its handler. */
static void gw_s3_router_route_owned(struct gw_req *r)
{
    const struct gw_s3_op *op = r->op;
    /* a request with an Origin may earn Access-Control-* headers: the
     * bucket's rules are read once, and only then (no Origin, no read) */
    if (!r->cors_checked && gw_s3_cors_wanted(r)) {
        r->cors_checked = 1;
        gw_s3_cors_lookup(r, gw_s3_router_route_owned);
        return;
    }
    /* the ACL a write asks for, checked and kept once (s3_subres.c) */
    if ((op->checks & GW_S3_OP_CHECK_ACL) &&
        (gw_s3_router_is(r, "PUT") || gw_s3_router_is(r, "POST"))) {
        /* on the bucket's current config, not a cached one */
        if (r->access_cfg != NULL && !r->access_cfg_fresh && gw_s3_acl_wanted(r)) {
            gw_bucket_owner_refresh(r, gw_s3_router_route_owned);
            return;
        }
        const char *awhy = NULL;
        enum gw_s3_err aerr = gw_s3_acl_request(r, &awhy);
        if (aerr != GW_S3_OK) {
            gw_req_error(r, aerr, awhy);
            return;
        }
    }
    /* a versionId is "null" or an id this gateway writes (versioning.h);
     * the handlers that take one look it up */
    const struct gw_req_param *vid = gw_req_param(r, "versionId");
    if ((op->checks & GW_S3_OP_CHECK_VERSION) && r->key != NULL && vid != NULL &&
        gw_versioning_id_check(vid->value, vid->value_len) == 0) {
        gw_req_error(r, GW_S3_INVALID_ARGUMENT, "Invalid version id specified");
        return;
    }
    if ((op->checks & GW_S3_OP_CHECK_VERSION) && r->key != NULL && vid != NULL &&
        gw_versioning_id_check(vid->value, vid->value_len) == 2 &&
        op->id != GW_S3_OP_GET_OBJECT && op->id != GW_S3_OP_HEAD_OBJECT &&
        op->id != GW_S3_OP_DELETE_OBJECT && op->id != GW_S3_OP_GET_OBJECT_TAGGING &&
        op->id != GW_S3_OP_PUT_OBJECT_TAGGING && op->id != GW_S3_OP_DELETE_OBJECT_TAGGING &&
        op->id != GW_S3_OP_GET_OBJECT_ACL && op->id != GW_S3_OP_PUT_OBJECT_ACL) {
        gw_req_error(r, GW_S3_NOT_IMPLEMENTED,
                     "This operation does not take a version id other than null yet.");
        return;
    }
    op->handler(r);
}

/* The matcher's view of r (struct gw_s3_ops_input): a parameter's value. */
static const char *gw_s3_router_op_param(const void *ctx, const char *name)
{
    const struct gw_req_param *p = gw_req_param(ctx, name);
    return p != NULL ? p->value : NULL;
}

/* ... and whether a header is present. */
static int gw_s3_router_op_header(const void *ctx, const char *name)
{
    return gw_req_header(ctx, name, NULL) != NULL;
}

/* Names r's operation: the first row of gw_s3_ops_table that matches it. */
static void gw_s3_router_match(struct gw_req *r)
{
    struct gw_s3_ops_input in = {
        .method = r->http->method,
        .method_len = r->http->method_len,
        .has_bucket = r->bucket_len > 0,
        .has_key = r->key != NULL,
        .param = gw_s3_router_op_param,
        .header = gw_s3_router_op_header,
        .ctx = r,
    };
    r->op = gw_s3_ops_match(&in);
}

void gw_s3_router_dispatch(struct gw_req *r)
{
    if (gw_s3_router_probe(r) || gw_s3_router_status(r))
        return;
    const char *why = NULL;
    enum gw_s3_err err = gw_s3_router_parse_query(r);
    if (err == GW_S3_OK)
        err = gw_s3_router_target(r, &why);
    if (err == GW_S3_OK) /* before auth, so that the access line names it */
        gw_s3_router_match(r);
    if (err == GW_S3_OK && (r->op->checks & GW_S3_OP_NO_AUTH)) {
        /* the CORS preflight: browsers send it without credentials, and it
         * reads only the bucket's CORS rules (s3_ops.h); POST object, whose
         * form is signed: s3_post.c authenticates it and checks access */
        CN_ASSERT(r->op->id == GW_S3_OP_CORS_PREFLIGHT || r->op->id == GW_S3_OP_POST_OBJECT);
        r->op->handler(r);
        return;
    }
    if (err == GW_S3_OK)
        err = gw_s3_router_auth(r, &why);
    if (err != GW_S3_OK) {
        gw_req_error(r, err, why);
        return;
    }
    gw_s3_router_route(r);
}
