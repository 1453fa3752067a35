/* AWS Signature Version 2 verification for S3: parse the "AWS AKID:sig"
 * header or the AWSAccessKeyId/Signature/Expires query, rebuild the
 * StringToSign the way AWS documents it (positional Content-MD5,
 * Content-Type and Date, canonicalized x-amz-* headers, canonicalized
 * resource with its sub-resources), HMAC-SHA1 it with the signer's secret
 * through OpenSSL and compare in constant time. */
#include "sigv2.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "auth_util.h"
#include "checksum.h"
#include "cn/alloc.h"
#include "s3_names.h"

#define GW_SIGV2_MAX_AMZ_HEADERS 256
#define GW_SIGV2_MAX_SUBRESOURCES 64

struct gw_sigv2 {
    const struct gw_credentials *creds;
    int max_skew_s;
    struct evbuffer *sts;              /* the StringToSign, reused */
};

/* The sub-resources that go into the CanonicalizedResource: AWS's list
 * (acl ... website and the response-* overrides) and the later ones that S3
 * and the SDKs (botocore's HmacV1Auth) sign too, such as tagging's
 * neighbours accelerate, replication, restore, select. Sorted. */
static const char *const gw_sigv2_subresources[] = {
    "accelerate", "acl", "analytics", "cors", "delete", "inventory", "lifecycle", "location",
    "logging", "metrics", "notification", "object-lock", "partNumber", "policy",
    "replication", "requestPayment", "response-cache-control", "response-content-disposition",
    "response-content-encoding", "response-content-language", "response-content-type",
    "response-expires", "restore", "select", "select-type", "tagging", "torrent", "uploadId",
    "uploads", "versionId", "versioning", "versions", "website",
};

/* ---- small helpers --------------------------------------------------- */

static int gw_sigv2_is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Trims white space at both ends of [*p, *p + *n). */
static void gw_sigv2_trim(const char **p, size_t *n)
{
    while (*n > 0 && gw_sigv2_is_ws(**p)) {
        (*p)++;
        (*n)--;
    }
    while (*n > 0 && gw_sigv2_is_ws((*p)[*n - 1]))
        (*n)--;
}

void gw_sigv2_sign(const char *secret, size_t secret_len, const char *msg, size_t len,
                   char out[GW_SIGV2_SIG_B64 + 1])
{
    unsigned char mac[20];
    unsigned int n = sizeof(mac);
    CN_ASSERT(HMAC(EVP_sha1(), secret, (int)secret_len, (const unsigned char *)msg, len, mac,
                   &n) != NULL && n == sizeof(mac));
    CN_ASSERT(gw_checksum_base64_encode(mac, sizeof(mac), out) == GW_SIGV2_SIG_B64);
    OPENSSL_cleanse(mac, sizeof(mac));
}

int gw_sigv2_is_subresource(const char *name, size_t len)
{
    size_t lo = 0, hi = CN_ARRAY_LEN(gw_sigv2_subresources);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *s = gw_sigv2_subresources[mid];
        size_t sn = strlen(s);
        int c = memcmp(name, s, CN_MIN(len, sn));
        if (c == 0)
            c = (len > sn) - (len < sn);
        if (c == 0)
            return 1;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return 0;
}

/* ---- the two forms ----------------------------------------------------- */

/* An access key's bytes as credentials.c allows them. */
static int gw_sigv2_key_ok(const char *k, size_t n)
{
    if (n == 0 || n > GW_SIGV2_ACCESS_KEY_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = k[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-' || c == '+' || c == '/' || c == '='))
            return 0;
    }
    return 1;
}

int gw_sigv2_parse_authorization(const char *value, size_t len, struct gw_sigv2_auth *out,
                                 struct gw_sigv4_result *res)
{
    memset(out, 0, sizeof(*out));
    if (len < 4 || memcmp(value, "AWS ", 4) != 0)
        return CN_NOTFOUND;
    const char *p = value + 4;
    size_t n = len - 4;
    gw_sigv2_trim(&p, &n);
    const char *colon = memchr(p, ':', n);
    size_t kn = colon != NULL ? (size_t)(colon - p) : 0;
    size_t sn = colon != NULL ? n - kn - 1 : 0;
    if (colon == NULL || !gw_sigv2_key_ok(p, kn) || sn == 0 || sn > GW_SIGV2_SIG_MAX ||
        memchr(colon + 1, ' ', sn) != NULL)
        return gw_auth_fail(res, GW_S3_INVALID_ARGUMENT, "AWS authorization header is "
                             "invalid.  Expected AwsAccessKeyId:signature");
    memcpy(out->access_key, p, kn);
    out->access_key_len = kn;
    memcpy(out->signature, colon + 1, sn);
    out->signature_len = sn;
    return CN_OK;
}

struct gw_sigv2_query_state {
    struct gw_sigv2_auth *auth;
    struct gw_sigv4_result *res;
    unsigned seen;
    char tmp[GW_SIGV2_SIG_MAX + GW_SIGV2_ACCESS_KEY_MAX];
};

static const char *const gw_sigv2_query_names[] = {"AWSAccessKeyId", "Signature", "Expires"};

static int gw_sigv2_query_value(struct gw_sigv2_query_state *st, int which, const char *v,
                                size_t vn)
{
    struct gw_sigv2_auth *a = st->auth;
    switch (which) {
    case 0:
        if (!gw_sigv2_key_ok(v, vn))
            return gw_auth_fail(st->res, GW_S3_INVALID_ACCESS_KEY_ID, NULL);
        memcpy(a->access_key, v, vn);
        a->access_key_len = vn;
        return CN_OK;
    case 1:
        if (vn == 0 || vn > GW_SIGV2_SIG_MAX)
            return gw_auth_fail(st->res, GW_S3_SIGNATURE_DOES_NOT_MATCH, NULL);
        memcpy(a->signature, v, vn);
        a->signature_len = vn;
        return CN_OK;
    default: {
        int64_t t = 0;
        if (vn == 0 || vn > 18)
            goto bad_date;
        for (size_t i = 0; i < vn; i++) {
            if (v[i] < '0' || v[i] > '9')
                goto bad_date;
            t = t * 10 + (v[i] - '0');
        }
        memcpy(a->expires_str, v, vn);
        a->expires_str[vn] = '\0';
        a->expires = t;
        return CN_OK;
    bad_date:
        return gw_auth_fail(st->res, GW_S3_ACCESS_DENIED, "Invalid date (should be seconds "
                             "since epoch): %.*s", (int)CN_MIN(vn, 32), v);
    }
    }
}

static int gw_sigv2_query_param(void *arg, const char *name, size_t nn, const char *value,
                                size_t vn, int has_eq)
{
    (void)has_eq;
    struct gw_sigv2_query_state *st = arg;
    char dname[32];
    size_t dn = 0;
    if (nn >= sizeof(dname) || gw_s3_names_uri_decode(name, nn, dname, &dn, 0) != CN_OK)
        return CN_OK; /* not one of ours */
    for (int i = 0; i < (int)CN_ARRAY_LEN(gw_sigv2_query_names); i++) {
        if (dn != strlen(gw_sigv2_query_names[i]) ||
            memcmp(dname, gw_sigv2_query_names[i], dn) != 0)
            continue;
        if (st->seen & (1u << i))
            return gw_auth_fail(st->res, GW_S3_INVALID_ARGUMENT, "%s appears more than once",
                                 gw_sigv2_query_names[i]);
        st->seen |= 1u << i;
        size_t tn = 0;
        if (vn >= sizeof(st->tmp) || gw_s3_names_uri_decode(value, vn, st->tmp, &tn, 0) != CN_OK)
            return gw_auth_fail(st->res, GW_S3_INVALID_ARGUMENT, "%s is malformed",
                                 gw_sigv2_query_names[i]);
        return gw_sigv2_query_value(st, i, st->tmp, tn);
    }
    return CN_OK;
}

int gw_sigv2_parse_query(const char *query, size_t len, struct gw_sigv2_auth *out,
                         struct gw_sigv4_result *res)
{
    memset(out, 0, sizeof(*out));
    out->presigned = 1;
    if (query == NULL || len == 0)
        return CN_NOTFOUND;
    if (len > GW_SIGV2_INPUT_MAX)
        return gw_auth_fail(res, GW_S3_REQUEST_HEADER_SECTION_TOO_LARGE, NULL);
    struct gw_sigv2_query_state st = {.auth = out, .res = res};
    int rc = gw_auth_each_param(query, len, gw_sigv2_query_param, &st);
    if (rc != CN_OK)
        return rc;
    if (st.seen == 0)
        return CN_NOTFOUND;
    if (st.seen != 7)
        return gw_auth_fail(res, GW_S3_ACCESS_DENIED, "Query-string authentication requires "
                             "the Signature, Expires and AWSAccessKeyId parameters");
    return CN_OK;
}

/* ---- StringToSign ------------------------------------------------------ */

/* Appends the value of one x-amz-* header as the doc canonicalizes it:
 * trimmed, and folding white space (a run holding a CR or LF) unfolded to
 * one space. Other inner white space is kept as sent. */
static int gw_sigv2_amz_value_add(const char *v, size_t n, struct evbuffer *out)
{
    gw_sigv2_trim(&v, &n);
    size_t i = 0;
    while (i < n) {
        size_t start = i;
        while (i < n && v[i] != '\r' && v[i] != '\n')
            i++;
        size_t e = i;
        if (i < n) { /* a fold: drop the white space around it */
            while (e > start && (v[e - 1] == ' ' || v[e - 1] == '\t'))
                e--;
            while (i < n && gw_sigv2_is_ws(v[i]))
                i++;
        }
        if (evbuffer_add(out, v + start, e - start) != 0 ||
            (i < n && e != i && evbuffer_add(out, " ", 1) != 0))
            return CN_ERR;
    }
    return CN_OK;
}

struct gw_sigv2_amz {
    const struct gw_sigv4_header *h;
    size_t order;
};

static int gw_sigv2_amz_cmp(const void *x, const void *y)
{
    const struct gw_sigv2_amz *a = x, *b = y;
    size_t n = CN_MIN(a->h->name_len, b->h->name_len);
    int c = strncasecmp(a->h->name, b->h->name, n);
    if (c == 0)
        c = (a->h->name_len > b->h->name_len) - (a->h->name_len < b->h->name_len);
    return c != 0 ? c : (a->order > b->order) - (a->order < b->order);
}

/* CanonicalizedAmzHeaders: lower-case names in order, one line each, the
 * values of a repeated name joined with ','. */
static int gw_sigv2_amz_headers_add(const struct gw_sigv4_request *req, struct evbuffer *out)
{
    struct gw_sigv2_amz amz[GW_SIGV2_MAX_AMZ_HEADERS];
    size_t n = 0;
    for (size_t i = 0; i < req->n_headers && n < CN_ARRAY_LEN(amz); i++) {
        const struct gw_sigv4_header *h = &req->headers[i];
        if (h->name_len < 6 || strncasecmp(h->name, "x-amz-", 6) != 0)
            continue;
        if (h->value_len > GW_SIGV2_INPUT_MAX || h->name_len > GW_SIGV2_INPUT_MAX)
            return CN_TOOBIG;
        amz[n++] = (struct gw_sigv2_amz){h, i};
    }
    if (n > 1)
        qsort(amz, n, sizeof(amz[0]), gw_sigv2_amz_cmp);
    for (size_t i = 0; i < n; i++) {
        const struct gw_sigv4_header *h = amz[i].h;
        int same = i > 0 && h->name_len == amz[i - 1].h->name_len &&
                   strncasecmp(h->name, amz[i - 1].h->name, h->name_len) == 0;
        if (same) {
            if (evbuffer_add(out, ",", 1) != 0)
                return CN_ERR;
        } else {
            if (i > 0 && evbuffer_add(out, "\n", 1) != 0)
                return CN_ERR;
            for (size_t k = 0; k < h->name_len; k++) {
                char c = h->name[k];
                c = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
                if (evbuffer_add(out, &c, 1) != 0)
                    return CN_ERR;
            }
            if (evbuffer_add(out, ":", 1) != 0)
                return CN_ERR;
        }
        if (gw_sigv2_amz_value_add(h->value, h->value_len, out) != CN_OK)
            return CN_ERR;
    }
    if (n > 0 && evbuffer_add(out, "\n", 1) != 0)
        return CN_ERR;
    return CN_OK;
}

/* One sub-resource of the query, decoded. */
struct gw_sigv2_sub {
    char *name;
    size_t name_len;
    char *value;
    size_t value_len;
    int has_value;
    size_t order;
};

struct gw_sigv2_subs {
    struct gw_sigv2_sub v[GW_SIGV2_MAX_SUBRESOURCES];
    size_t n;
    char *arena;           /* decoded names and values */
    size_t used, cap;
};

/* Keeps a query parameter that is a sub-resource (decoded, '+' kept: S3
 * signs the sub-resource values unencoded). */
static int gw_sigv2_sub_param(void *arg, const char *name, size_t nn, const char *value,
                              size_t vn, int has_eq)
{
    struct gw_sigv2_subs *s = arg;
    CN_ASSERT(s->cap - s->used >= nn + vn);   /* the arena is as long as the query */
    char *dn = s->arena + s->used;
    size_t dnl = 0;
    if (gw_s3_names_uri_decode(name, nn, dn, &dnl, 0) != CN_OK)
        return CN_INVAL;
    if (!gw_sigv2_is_subresource(dn, dnl))
        return CN_OK;
    if (s->n == CN_ARRAY_LEN(s->v))
        return CN_TOOBIG;
    char *dv = dn + dnl;
    size_t dvl = 0;
    if (gw_s3_names_uri_decode(value, vn, dv, &dvl, 0) != CN_OK)
        return CN_INVAL;
    s->used += dnl + dvl;
    s->v[s->n] = (struct gw_sigv2_sub){dn, dnl, dv, dvl, has_eq, s->n};
    s->n++;
    return CN_OK;
}

static int gw_sigv2_sub_cmp(const void *x, const void *y)
{
    const struct gw_sigv2_sub *a = x, *b = y;
    int c = memcmp(a->name, b->name, CN_MIN(a->name_len, b->name_len));
    if (c == 0)
        c = (a->name_len > b->name_len) - (a->name_len < b->name_len);
    return c != 0 ? c : (a->order > b->order) - (a->order < b->order);
}

/* CanonicalizedResource: "/" bucket "/" key ["?" sub-resources], the key as
 * sent (still encoded). S3 builds it from the bucket and key it addressed,
 * so a path-style "/bucket" is "/bucket/" as for "/bucket/" (the form
 * SDKs sign), and a virtual-host request prefixes "/" bucket to its path. */
static int gw_sigv2_resource_add(const struct gw_sigv4_request *req, const char *vb,
                                 size_t vbn, struct evbuffer *out)
{
    if (vb != NULL && vbn > 0 &&
        (evbuffer_add(out, "/", 1) != 0 || evbuffer_add(out, vb, vbn) != 0))
        return CN_ERR;
    if (req->path_len == 0 ? evbuffer_add(out, "/", 1) != 0
                           : evbuffer_add(out, req->path, req->path_len) != 0)
        return CN_ERR;
    if ((vb == NULL || vbn == 0) && req->path_len > 1 && req->path[0] == '/' &&
        memchr(req->path + 1, '/', req->path_len - 1) == NULL && evbuffer_add(out, "/", 1) != 0)
        return CN_ERR; /* path style, bucket only */
    if (req->query == NULL || req->query_len == 0)
        return CN_OK;
    struct gw_sigv2_subs *s = cn_calloc(1, sizeof(*s));
    s->cap = req->query_len;
    s->arena = cn_malloc(s->cap + 1);
    int rc = gw_auth_each_param(req->query, req->query_len, gw_sigv2_sub_param, s);
    if (rc == CN_OK && s->n > 1)
        qsort(s->v, s->n, sizeof(s->v[0]), gw_sigv2_sub_cmp);
    for (size_t i = 0; rc == CN_OK && i < s->n; i++) {
        const struct gw_sigv2_sub *e = &s->v[i];
        if (evbuffer_add(out, i == 0 ? "?" : "&", 1) != 0 ||
            evbuffer_add(out, e->name, e->name_len) != 0 ||
            (e->has_value && (evbuffer_add(out, "=", 1) != 0 ||
                              evbuffer_add(out, e->value, e->value_len) != 0)))
            rc = CN_ERR;
    }
    cn_free(s->arena);
    cn_free(s);
    return rc;
}

/* Appends a positional header's value (trimmed) and a newline. */
static int gw_sigv2_line_add(const char *v, size_t n, struct evbuffer *out)
{
    if (v != NULL)
        gw_sigv2_trim(&v, &n);
    if ((v != NULL && n > 0 && evbuffer_add(out, v, n) != 0) || evbuffer_add(out, "\n", 1) != 0)
        return CN_ERR;
    return CN_OK;
}

int gw_sigv2_string_to_sign(const struct gw_sigv4_request *req, const char *vhost_bucket,
                            size_t vhost_len, const char *date, size_t date_len,
                            struct evbuffer *out)
{
    if (req->path_len > GW_SIGV2_INPUT_MAX || req->query_len > GW_SIGV2_INPUT_MAX ||
        req->method_len > 32 || vhost_len > 255 || date_len > GW_SIGV2_INPUT_MAX)
        return CN_TOOBIG;
    const struct gw_sigv4_header *md5 = gw_auth_header(req, "content-md5");
    const struct gw_sigv4_header *type = gw_auth_header(req, "content-type");
    if ((md5 != NULL && md5->value_len > GW_SIGV2_INPUT_MAX) ||
        (type != NULL && type->value_len > GW_SIGV2_INPUT_MAX))
        return CN_TOOBIG;
    if (date == NULL && gw_auth_header(req, "x-amz-date") == NULL) {
        const struct gw_sigv4_header *d = gw_auth_header(req, "date");
        if (d != NULL && d->value_len > GW_SIGV2_INPUT_MAX)
            return CN_TOOBIG;
        date = d != NULL ? d->value : NULL;
        date_len = d != NULL ? d->value_len : 0;
    }
    int rc;
    if (evbuffer_add(out, req->method, req->method_len) != 0 || evbuffer_add(out, "\n", 1) != 0 ||
        gw_sigv2_line_add(md5 != NULL ? md5->value : NULL, md5 != NULL ? md5->value_len : 0,
                          out) != CN_OK ||
        gw_sigv2_line_add(type != NULL ? type->value : NULL, type != NULL ? type->value_len : 0,
                          out) != CN_OK ||
        gw_sigv2_line_add(date, date_len, out) != CN_OK)
        return CN_ERR;
    if ((rc = gw_sigv2_amz_headers_add(req, out)) != CN_OK)
        return rc;
    return gw_sigv2_resource_add(req, vhost_bucket, vhost_len, out);
}

/* ---- verifier -------------------------------------------------------- */

struct gw_sigv2 *gw_sigv2_new(const struct gw_sigv2_config *cfg)
{
    if (cfg == NULL || cfg->creds == NULL)
        return NULL;
    struct gw_sigv2 *v = cn_calloc(1, sizeof(*v));
    v->creds = cfg->creds;
    v->max_skew_s = cfg->max_skew_s > 0 ? cfg->max_skew_s : GW_SIGV4_MAX_SKEW_S;
    v->sts = evbuffer_new();
    CN_ASSERT(v->sts != NULL);
    return v;
}

void gw_sigv2_free(struct gw_sigv2 *v)
{
    if (v == NULL)
        return;
    evbuffer_free(v->sts);
    cn_free(v);
}

void gw_sigv2_set_credentials(struct gw_sigv2 *v, const struct gw_credentials *creds)
{
    v->creds = creds;
}

/* Is a query parameter named name present (raw name compared, and its
 * percent-decoded form)? */
static int gw_sigv2_has_param_cb(void *arg, const char *name, size_t nn, const char *value,
                                 size_t vn, int has_eq)
{
    (void)value;
    (void)vn;
    (void)has_eq;
    const char *want = arg;
    char d[32];
    size_t dn = 0;
    if (nn < sizeof(d) && gw_s3_names_uri_decode(name, nn, d, &dn, 0) == CN_OK &&
        dn == strlen(want) && memcmp(d, want, dn) == 0)
        return CN_DONE;
    return CN_OK;
}

static int gw_sigv2_has_param(const struct gw_sigv4_request *req, const char *name)
{
    if (req->query == NULL || req->query_len == 0)
        return 0;
    return gw_auth_each_param(req->query, CN_MIN(req->query_len, GW_SIGV2_INPUT_MAX),
                               gw_sigv2_has_param_cb, (void *)(uintptr_t)name) == CN_DONE;
}

int gw_sigv2_detect(const struct gw_sigv4_request *req)
{
    const struct gw_sigv4_header *h = gw_auth_header(req, "authorization");
    if (h != NULL)
        return h->value_len >= 4 && memcmp(h->value, "AWS ", 4) == 0;
    if (gw_sigv2_has_param(req, "X-Amz-Algorithm"))
        return 0;
    return gw_sigv2_has_param(req, "AWSAccessKeyId") || gw_sigv2_has_param(req, "Signature");
}

/* A Date or x-amz-date as V2 clients send it: an HTTP date (IMF-fixdate,
 * RFC 850, asctime), the same with a numeric zone ("+0000", as in AWS's
 * examples) instead of GMT, or the ISO 8601 basic form. */
static int gw_sigv2_date_parse(const char *s, size_t n, time_t *out)
{
    gw_sigv2_trim(&s, &n);
    if (gw_s3_names_http_date_parse(s, n, out) == CN_OK ||
        gw_s3_names_amz_date_parse(s, n, out) == CN_OK)
        return CN_OK;
    char buf[64];
    const char *z = s + n - 5;
    if (n < 7 || n - 5 + 4 >= sizeof(buf) || z[-1] != ' ' || (z[0] != '+' && z[0] != '-'))
        return CN_INVAL;
    for (int i = 1; i < 5; i++)
        if (z[i] < '0' || z[i] > '9')
            return CN_INVAL;
    int off = ((z[1] - '0') * 10 + (z[2] - '0')) * 3600 + ((z[3] - '0') * 10 + (z[4] - '0')) * 60;
    memcpy(buf, s, n - 5);
    memcpy(buf + n - 5, "GMT", 3);
    if (gw_s3_names_http_date_parse(buf, n - 2, out) != CN_OK)
        return CN_INVAL;
    *out -= z[0] == '+' ? off : -off;
    return CN_OK;
}

/* The request time of header auth (x-amz-date wins over Date) against the
 * clock. */
static int gw_sigv2_check_time(struct gw_sigv2 *v, const struct gw_sigv4_request *req,
                               struct gw_sigv4_result *res)
{
    const struct gw_sigv4_header *h = gw_auth_header(req, "x-amz-date");
    if (h == NULL)
        h = gw_auth_header(req, "date");
    time_t t;
    if (h == NULL || h->value_len > 64 || gw_sigv2_date_parse(h->value, h->value_len, &t) != CN_OK)
        return gw_auth_fail(res, GW_S3_ACCESS_DENIED, "AWS authentication requires a valid "
                             "Date or x-amz-date header");
    int64_t now = (int64_t)req->now, when = (int64_t)t;
    if (when - now > v->max_skew_s || now - when > v->max_skew_s)
        return gw_auth_fail(res, GW_S3_REQUEST_TIME_TOO_SKEWED, NULL);
    return CN_OK;
}

/* Builds the StringToSign and compares the signatures. */
static int gw_sigv2_check_signature(struct gw_sigv2 *v, const struct gw_sigv4_request *req,
                                    const char *vb, size_t vbn, const struct gw_sigv2_auth *a,
                                    struct gw_sigv4_result *res)
{
    evbuffer_drain(v->sts, evbuffer_get_length(v->sts));
    int rc = gw_sigv2_string_to_sign(req, vb, vbn, a->presigned ? a->expires_str : NULL,
                                     a->presigned ? strlen(a->expires_str) : 0, v->sts);
    if (rc == CN_INVAL)
        return gw_auth_fail(res, GW_S3_INVALID_ARGUMENT, NULL);
    if (rc != CN_OK)
        return gw_auth_fail(res, rc == CN_TOOBIG ? GW_S3_REQUEST_HEADER_SECTION_TOO_LARGE
                                                  : GW_S3_INTERNAL_ERROR, NULL);
    size_t n = evbuffer_get_length(v->sts);
    const char *sts = (const char *)evbuffer_pullup(v->sts, -1);
    char sig[GW_SIGV2_SIG_B64 + 1];
    gw_sigv2_sign(res->cred->secret_key, res->cred->secret_key_len, sts != NULL ? sts : "", n,
                  sig);
    size_t keep = CN_MIN(n, sizeof(res->string_to_sign) - 1);
    memcpy(res->string_to_sign, sts != NULL ? sts : "", keep);
    res->string_to_sign[keep] = '\0';
    if (a->signature_len != GW_SIGV2_SIG_B64 ||
        CRYPTO_memcmp(sig, a->signature, GW_SIGV2_SIG_B64) != 0)
        return gw_auth_fail(res, GW_S3_SIGNATURE_DOES_NOT_MATCH, NULL);
    memcpy(res->signature, sig, sizeof(sig));
    return CN_OK;
}

/* Chooses the form: header, query, or (both) a refusal. */
static int gw_sigv2_parse_any(const struct gw_sigv4_request *req, struct gw_sigv2_auth *a,
                              struct gw_sigv4_result *res)
{
    const struct gw_sigv4_header *h = gw_auth_header(req, "authorization");
    int qrc = gw_sigv2_parse_query(req->query, req->query_len, a, res);
    if (h != NULL && qrc != CN_NOTFOUND)
        return gw_auth_fail(res, GW_S3_INVALID_ARGUMENT, "Only one auth mechanism allowed; "
                             "only the X-Amz-Algorithm query parameter, Signature query "
                             "string parameter or the Authorization header should be "
                             "specified");
    if (h == NULL)
        return qrc == CN_NOTFOUND ? gw_auth_fail(res, GW_S3_ACCESS_DENIED, NULL) : qrc;
    int rc = gw_sigv2_parse_authorization(h->value, h->value_len, a, res);
    return rc == CN_NOTFOUND ? gw_auth_fail(res, GW_S3_ACCESS_DENIED, NULL) : rc;
}

int gw_sigv2_verify(struct gw_sigv2 *v, const struct gw_sigv4_request *req,
                    const char *vhost_bucket, size_t vhost_len, struct gw_sigv4_result *res)
{
    memset(res, 0, sizeof(*res));
    struct gw_sigv2_auth a;
    int rc = gw_sigv2_parse_any(req, &a, res);
    if (rc != CN_OK)
        goto out;
    res->presigned = a.presigned;
    res->payload = GW_SIGV4_PAYLOAD_UNSIGNED;
    if (a.presigned && (int64_t)req->now > a.expires) {
        rc = gw_auth_fail(res, GW_S3_EXPIRED_PRESIGNED, NULL);
        goto out;
    }
    if (!a.presigned && (rc = gw_sigv2_check_time(v, req, res)) != CN_OK)
        goto out;
    res->cred = gw_credentials_find(v->creds, a.access_key, a.access_key_len);
    if (res->cred == NULL) {
        rc = gw_auth_fail(res, GW_S3_INVALID_ACCESS_KEY_ID, NULL);
        goto out;
    }
    rc = gw_sigv2_check_signature(v, req, vhost_bucket, vhost_len, &a, res);
out:
    OPENSSL_cleanse(&a, sizeof(a));
    if (rc == CN_OK) {
        res->err = GW_S3_OK;
    } else {
        if (res->err != GW_S3_SIGNATURE_DOES_NOT_MATCH)
            res->cred = NULL;
        if (res->err == GW_S3_OK)
            res->err = GW_S3_ACCESS_DENIED;
        rc = CN_INVAL;
    }
    return rc;
}
