/* AWS Signature Version 4 verification for S3: parse the Authorization
 * header or the presigned query, rebuild the canonical request the way S3
 * does, derive (and cache) the signing key, compare in constant time. */
#include "sigv4.h"

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
#include "cn/hex.h"
#include "s3_names.h"

#define GW_SIGV4_ALGORITHM "AWS4-HMAC-SHA256"
#define GW_SIGV4_CACHE_SIZE 32
#define GW_SIGV4_INPUT_MAX (64u * 1024)  /* path, query, one header value */
#define GW_SIGV4_QUERY_PARAMS_MAX 1024

struct gw_sigv4_cache_entry {
    const struct gw_cred *cred;          /* NULL: free slot */
    char date8[9];
    char region[GW_SIGV4_REGION_MAX + 1];
    unsigned char key[32];
};

struct gw_sigv4 {
    const struct gw_credentials *creds;
    char region[GW_SIGV4_REGION_MAX + 1];
    int max_skew_s;
    int allow_unsigned_amz_headers;
    unsigned cache_next;
    struct gw_sigv4_cache_entry cache[GW_SIGV4_CACHE_SIZE];
    struct evbuffer *canon;              /* reused for each request */
};

/* ---- small helpers --------------------------------------------------- */

static int gw_sigv4_eq(const char *a, size_t an, const char *b)
{
    size_t bn = strlen(b);
    return an == bn && memcmp(a, b, an) == 0;
}

static void gw_sigv4_hmac(const unsigned char *key, size_t key_len, const char *msg,
                          size_t len, unsigned char out[32])
{
    unsigned int n = 32;
    CN_ASSERT(HMAC(EVP_sha256(), key, (int)key_len, (const unsigned char *)msg, len, out,
                   &n) != NULL);
}

void gw_sigv4_signing_key(const char *secret, size_t secret_len, const char *date8,
                          const char *region, size_t region_len, unsigned char out[32])
{
    unsigned char k[32];
    char *ksecret = cn_malloc(secret_len + 4);
    memcpy(ksecret, "AWS4", 4);
    memcpy(ksecret + 4, secret, secret_len);
    gw_sigv4_hmac((unsigned char *)ksecret, secret_len + 4, date8, 8, k);
    OPENSSL_cleanse(ksecret, secret_len + 4);
    cn_free(ksecret);
    gw_sigv4_hmac(k, 32, region, region_len, k);
    gw_sigv4_hmac(k, 32, "s3", 2, k);
    gw_sigv4_hmac(k, 32, "aws4_request", 12, out);
    OPENSSL_cleanse(k, sizeof(k));
}

void gw_sigv4_hmac_hex(const unsigned char key[32], const char *msg, size_t len,
                       char out[GW_SIGV4_SIG_HEX + 1])
{
    unsigned char mac[32];
    gw_sigv4_hmac(key, 32, msg, len, mac);
    cn_hex_encode(mac, 32, out);
}

/* ---- credential scope ------------------------------------------------ */

/* Splits "AK/date/region/service/terminal" (auth->credential) into slices;
 * the access key is everything before the last four '/'. Form errors go to
 * res with code e and the message prefix pre. */
static int gw_sigv4_parse_credential(struct gw_sigv4_auth *a, struct gw_sigv4_result *res,
                                     enum gw_s3_err e, const char *pre)
{
    const char *c = a->credential;
    size_t n = strlen(c), cut[4];
    int found = 0;
    for (size_t i = n; i > 0 && found < 4; i--)
        if (c[i - 1] == '/')
            cut[found++] = i - 1;
    if (found < 4 || cut[3] == 0)
        return gw_auth_fail(res, e, "%sthe Credential is mal-formed; expecting "
                             "\"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".", pre);
    a->access_key = (struct gw_sigv4_slice){c, cut[3]};
    a->date = (struct gw_sigv4_slice){c + cut[3] + 1, cut[2] - cut[3] - 1};
    a->region = (struct gw_sigv4_slice){c + cut[2] + 1, cut[1] - cut[2] - 1};
    a->service = (struct gw_sigv4_slice){c + cut[1] + 1, cut[0] - cut[1] - 1};
    a->terminal = (struct gw_sigv4_slice){c + cut[0] + 1, n - cut[0] - 1};
    time_t t;
    char day[17];
    if (a->date.len == 8) {
        memcpy(day, a->date.p, 8);
        memcpy(day + 8, "T000000Z", 9);
    }
    if (a->date.len != 8 || gw_s3_names_amz_date_parse(day, 16, &t) != CN_OK)
        return gw_auth_fail(res, e, "%sInvalid credential date \"%.*s\".", pre,
                             (int)CN_MIN(a->date.len, 32), a->date.p);
    if (a->region.len == 0 || a->region.len > GW_SIGV4_REGION_MAX)
        return gw_auth_fail(res, e, "%sthe region is missing or too long.", pre);
    for (size_t i = 0; i < a->region.len; i++) {
        char ch = a->region.p[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (ch >= '0' && ch <= '9') || ch == '-' || ch == '_'))
            return gw_auth_fail(res, e, "%sthe region is not valid.", pre);
    }
    if (!gw_sigv4_eq(a->service.p, a->service.len, "s3"))
        return gw_auth_fail(res, e, "%sincorrect service \"%.*s\". This endpoint belongs to "
                             "\"s3\".", pre, (int)CN_MIN(a->service.len, 32), a->service.p);
    if (!gw_sigv4_eq(a->terminal.p, a->terminal.len, "aws4_request"))
        return gw_auth_fail(res, e, "%sincorrect terminal \"%.*s\". This endpoint uses "
                             "\"aws4_request\".", pre, (int)CN_MIN(a->terminal.len, 32),
                             a->terminal.p);
    return CN_OK;
}

/* Splits auth->signed_headers on ';' into auth->signed_list. */
static int gw_sigv4_parse_signed_headers(struct gw_sigv4_auth *a, struct gw_sigv4_result *res,
                                         enum gw_s3_err e, const char *pre)
{
    const char *p = a->signed_headers, *end = p + strlen(p);
    a->n_signed = 0;
    while (p <= end) {
        const char *semi = memchr(p, ';', (size_t)(end - p));
        const char *ne = semi != NULL ? semi : end;
        if (ne == p || a->n_signed == GW_SIGV4_MAX_SIGNED_HEADERS)
            return gw_auth_fail(res, e, "%sSignedHeaders is malformed.", pre);
        for (const char *q = p; q < ne; q++) {
            char ch = *q;
            if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' ||
                  ch == '_' || ch == '.' || ch == '!' || ch == '#' || ch == '$' ||
                  ch == '%' || ch == '&' || ch == '\'' || ch == '*' || ch == '+' ||
                  ch == '^' || ch == '`' || ch == '|' || ch == '~'))
                return gw_auth_fail(res, e, "%sSignedHeaders must be lower-case header "
                                     "names separated by ';'.", pre);
        }
        a->signed_list[a->n_signed++] = (struct gw_sigv4_slice){p, (size_t)(ne - p)};
        if (semi == NULL)
            break;
        p = semi + 1;
    }
    return CN_OK;
}

/* Copies v[n] into dst[cap] with a NUL; CN_TOOBIG if it does not fit. */
static int gw_sigv4_copy(char *dst, size_t cap, const char *v, size_t n)
{
    if (n >= cap)
        return CN_TOOBIG;
    memcpy(dst, v, n);
    dst[n] = '\0';
    return CN_OK;
}

/* ---- Authorization header -------------------------------------------- */

static int gw_sigv4_auth_component(struct gw_sigv4_auth *out, struct gw_sigv4_result *res,
                                   const char *k, size_t kn, const char *v, size_t vn,
                                   unsigned *seen)
{
    static const char pre[] = "The authorization header is malformed; ";
    const enum gw_s3_err e = GW_S3_AUTHORIZATION_HEADER_MALFORMED;
    if (gw_sigv4_eq(k, kn, "Credential") && !(*seen & 1)) {
        *seen |= 1;
        if (gw_sigv4_copy(out->credential, sizeof(out->credential), v, vn) != CN_OK)
            return gw_auth_fail(res, e, "%sthe Credential is too long.", pre);
        return gw_sigv4_parse_credential(out, res, e, pre);
    }
    if (gw_sigv4_eq(k, kn, "SignedHeaders") && !(*seen & 2)) {
        *seen |= 2;
        if (gw_sigv4_copy(out->signed_headers, sizeof(out->signed_headers), v, vn) != CN_OK)
            return gw_auth_fail(res, e, "%sSignedHeaders is too long.", pre);
        return gw_sigv4_parse_signed_headers(out, res, e, pre);
    }
    if (gw_sigv4_eq(k, kn, "Signature") && !(*seen & 4)) {
        *seen |= 4;
        if (vn != GW_SIGV4_SIG_HEX || !cn_hex_is_lower(v, vn))
            return gw_auth_fail(res, e, "%sthe Signature must be 64 lower-case hex "
                                 "characters.", pre);
        memcpy(out->signature, v, vn);
        out->signature[vn] = '\0';
        return CN_OK;
    }
    return gw_auth_fail(res, e, "%sunexpected or repeated component \"%.*s\".", pre,
                         (int)CN_MIN(kn, 32), k);
}

int gw_sigv4_parse_authorization(const char *value, size_t len, struct gw_sigv4_auth *out,
                                 struct gw_sigv4_result *res)
{
    static const char alg[] = GW_SIGV4_ALGORITHM " ";
    memset(out, 0, sizeof(*out));
    if (len < sizeof(alg) - 1 || memcmp(value, alg, sizeof(alg) - 1) != 0)
        return CN_NOTFOUND;
    if (len > GW_SIGV4_INPUT_MAX)
        return gw_auth_fail(res, GW_S3_AUTHORIZATION_HEADER_MALFORMED,
                             "The authorization header is too long.");
    const char *p = value + sizeof(alg) - 1, *end = value + len;
    unsigned seen = 0;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == ','))
            p++;
        if (p == end)
            break;
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *ce = comma != NULL ? comma : end;
        while (ce > p && (ce[-1] == ' ' || ce[-1] == '\t'))
            ce--;
        const char *eq = memchr(p, '=', (size_t)(ce - p));
        if (eq == NULL)
            return gw_auth_fail(res, GW_S3_AUTHORIZATION_HEADER_MALFORMED,
                                 "The authorization header is malformed; the authorization "
                                 "component \"%.*s\" is malformed.",
                                 (int)CN_MIN((size_t)(ce - p), 64), p);
        int rc = gw_sigv4_auth_component(out, res, p, (size_t)(eq - p), eq + 1,
                                         (size_t)(ce - eq - 1), &seen);
        if (rc != CN_OK)
            return rc;
        p = comma != NULL ? comma + 1 : end;
    }
    if (seen != 7)
        return gw_auth_fail(res, GW_S3_AUTHORIZATION_HEADER_MALFORMED,
                             "The authorization header is malformed; it needs Credential, "
                             "SignedHeaders and Signature.");
    return CN_OK;
}

/* ---- presigned query ------------------------------------------------- */

struct gw_sigv4_query_state {
    struct gw_sigv4_auth *auth;
    struct gw_sigv4_result *res;
    unsigned seen;
    int has_algorithm;
    char tmp[GW_SIGV4_SIGNED_HEADERS_MAX];
};

static const char *const gw_sigv4_query_names[] = {
    "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires",
    "X-Amz-SignedHeaders", "X-Amz-Signature",
};

static int gw_sigv4_query_value(struct gw_sigv4_query_state *st, int which, const char *v,
                                size_t vn)
{
    static const char pre[] = "Error parsing the X-Amz-Credential parameter; ";
    const enum gw_s3_err e = GW_S3_AUTHORIZATION_QUERY_PARAMETERS_ERROR;
    struct gw_sigv4_auth *a = st->auth;
    switch (which) {
    case 0:
        if (!gw_sigv4_eq(v, vn, GW_SIGV4_ALGORITHM))
            return gw_auth_fail(st->res, e, "X-Amz-Algorithm only supports \""
                                 GW_SIGV4_ALGORITHM "\"");
        return CN_OK;
    case 1:
        if (gw_sigv4_copy(a->credential, sizeof(a->credential), v, vn) != CN_OK)
            return gw_auth_fail(st->res, e, "%sthe Credential is too long.", pre);
        return gw_sigv4_parse_credential(a, st->res, e, pre);
    case 2:
        if (vn != GW_SIGV4_AMZ_DATE_LEN)
            return gw_auth_fail(st->res, e, "X-Amz-Date must be in the ISO8601 Long Format "
                                 "\"yyyyMMdd'T'HHmmss'Z'\"");
        memcpy(a->amz_date, v, vn);
        a->amz_date[vn] = '\0';
        return CN_OK;
    case 3: {
        int64_t x = 0;
        if (vn == 0 || vn > 7)
            return gw_auth_fail(st->res, e, "X-Amz-Expires should be a number between 1 "
                                 "and %d", GW_SIGV4_MAX_EXPIRES_S);
        for (size_t i = 0; i < vn; i++) {
            if (v[i] < '0' || v[i] > '9')
                return gw_auth_fail(st->res, e, "X-Amz-Expires should be a number");
            x = x * 10 + (v[i] - '0');
        }
        if (x < 1 || x > GW_SIGV4_MAX_EXPIRES_S)
            return gw_auth_fail(st->res, e, "X-Amz-Expires must be less than a week (in "
                                 "seconds) that is, the given X-Amz-Expires must be less "
                                 "than %d seconds", GW_SIGV4_MAX_EXPIRES_S);
        a->expires = x;
        return CN_OK;
    }
    case 4:
        if (gw_sigv4_copy(a->signed_headers, sizeof(a->signed_headers), v, vn) != CN_OK)
            return gw_auth_fail(st->res, e, "X-Amz-SignedHeaders is too long.");
        return gw_sigv4_parse_signed_headers(a, st->res, e, "");
    default:
        if (vn != GW_SIGV4_SIG_HEX || !cn_hex_is_lower(v, vn))
            return gw_auth_fail(st->res, e, "X-Amz-Signature must be 64 lower-case hex "
                                 "characters.");
        memcpy(a->signature, v, vn);
        a->signature[vn] = '\0';
        return CN_OK;
    }
}

static int gw_sigv4_query_param(void *arg, const char *name, size_t nn, const char *value,
                                size_t vn, int has_eq)
{
    (void)has_eq;
    struct gw_sigv4_query_state *st = arg;
    char dname[32];
    size_t dn = 0;
    if (nn >= sizeof(dname) || gw_s3_names_uri_decode(name, nn, dname, &dn, 1) != CN_OK)
        return CN_OK; /* not one of ours; the canonical query checks escapes */
    for (int i = 0; i < (int)CN_ARRAY_LEN(gw_sigv4_query_names); i++) {
        if (!gw_auth_ieq(dname, dn, gw_sigv4_query_names[i]))
            continue;
        if (st->seen & (1u << i))
            return gw_auth_fail(st->res, GW_S3_AUTHORIZATION_QUERY_PARAMETERS_ERROR,
                                 "%s appears more than once", gw_sigv4_query_names[i]);
        st->seen |= 1u << i;
        size_t tn = 0;
        if (vn >= sizeof(st->tmp) ||
            gw_s3_names_uri_decode(value, vn, st->tmp, &tn, 1) != CN_OK)
            return gw_auth_fail(st->res, GW_S3_AUTHORIZATION_QUERY_PARAMETERS_ERROR,
                                 "%s is malformed", gw_sigv4_query_names[i]);
        return gw_sigv4_query_value(st, i, st->tmp, tn);
    }
    return CN_OK;
}

int gw_sigv4_parse_query(const char *query, size_t len, struct gw_sigv4_auth *out,
                         struct gw_sigv4_result *res)
{
    memset(out, 0, sizeof(*out));
    out->presigned = 1;
    if (query == NULL || len == 0)
        return CN_NOTFOUND;
    if (len > GW_SIGV4_INPUT_MAX) /* too long to sign: refused later if not presigned */
        return memmem(query, len, "X-Amz-Algorithm", 15) == NULL
                   ? CN_NOTFOUND
                   : gw_auth_fail(res, GW_S3_AUTHORIZATION_QUERY_PARAMETERS_ERROR,
                                   "The query string is too long.");
    struct gw_sigv4_query_state *st = cn_calloc(1, sizeof(*st));
    st->auth = out;
    st->res = res;
    int rc = gw_auth_each_param(query, len, gw_sigv4_query_param, st);
    unsigned seen = st->seen;
    cn_free(st);
    if (rc != CN_OK)
        return rc;
    if (!(seen & 1))
        return CN_NOTFOUND;
    if (seen != (1u << CN_ARRAY_LEN(gw_sigv4_query_names)) - 1)
        return gw_auth_fail(res, GW_S3_AUTHORIZATION_QUERY_PARAMETERS_ERROR,
                             "Query-string authentication version 4 requires the "
                             "X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, "
                             "X-Amz-SignedHeaders, and X-Amz-Expires parameters.");
    return CN_OK;
}

/* ---- canonical request ----------------------------------------------- */

/* One query parameter, decoded then re-encoded the SigV4 way. */
struct gw_sigv4_param {
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
};

struct gw_sigv4_canon_query {
    struct gw_sigv4_param *v;
    size_t n, cap;
    char *arena;          /* encoded names and values */
    size_t used, arena_cap;
    char *tmp;            /* decode scratch */
    int skip_signature;
};

/* Decodes in[n] ('+' as space) and appends its encoded form to the arena. */
static int gw_sigv4_canon_encode(struct gw_sigv4_canon_query *cq, const char *in, size_t n,
                                 const char **out, size_t *out_len)
{
    size_t dn = 0;
    if (gw_s3_names_uri_decode(in, n, cq->tmp, &dn, 1) != CN_OK)
        return CN_INVAL;
    size_t en = gw_s3_names_uri_encode(cq->tmp, dn, cq->arena + cq->used,
                                       cq->arena_cap - cq->used, 0);
    CN_ASSERT(en <= cq->arena_cap - cq->used); /* arena is 3x the query */
    *out = cq->arena + cq->used;
    *out_len = en;
    cq->used += en;
    return CN_OK;
}

static int gw_sigv4_canon_param(void *arg, const char *name, size_t nn, const char *value,
                                size_t vn, int has_eq)
{
    (void)has_eq;
    struct gw_sigv4_canon_query *cq = arg;
    if (cq->n == GW_SIGV4_QUERY_PARAMS_MAX)
        return CN_TOOBIG;
    struct gw_sigv4_param p;
    if (gw_sigv4_canon_encode(cq, name, nn, &p.name, &p.name_len) != CN_OK ||
        gw_sigv4_canon_encode(cq, value, vn, &p.value, &p.value_len) != CN_OK)
        return CN_INVAL;
    if (cq->skip_signature && gw_sigv4_eq(p.name, p.name_len, "X-Amz-Signature"))
        return CN_OK;
    if (cq->n == cq->cap) {
        cq->cap = cq->cap ? cq->cap * 2 : 16;
        cq->v = cn_realloc(cq->v, cq->cap * sizeof(*cq->v));
    }
    cq->v[cq->n++] = p;
    return CN_OK;
}

static int gw_sigv4_cmp_bytes(const char *a, size_t an, const char *b, size_t bn)
{
    int r = memcmp(a, b, CN_MIN(an, bn));
    return r != 0 ? r : (an > bn) - (an < bn);
}

static int gw_sigv4_param_cmp(const void *x, const void *y)
{
    const struct gw_sigv4_param *a = x, *b = y;
    int r = gw_sigv4_cmp_bytes(a->name, a->name_len, b->name, b->name_len);
    return r != 0 ? r : gw_sigv4_cmp_bytes(a->value, a->value_len, b->value, b->value_len);
}

/* Appends the canonical query string (without the trailing newline). */
static int gw_sigv4_canon_query_add(const struct gw_sigv4_request *req, int presigned,
                                    struct evbuffer *out)
{
    if (req->query == NULL || req->query_len == 0)
        return CN_OK;
    struct gw_sigv4_canon_query cq = {.skip_signature = presigned};
    cq.arena_cap = 3 * req->query_len + 3;
    cq.arena = cn_malloc(cq.arena_cap);
    cq.tmp = cn_malloc(req->query_len + 1);
    int rc = gw_auth_each_param(req->query, req->query_len, gw_sigv4_canon_param, &cq);
    if (rc == CN_OK) {
        if (cq.n > 1) /* qsort(NULL, 0) is undefined */
            qsort(cq.v, cq.n, sizeof(*cq.v), gw_sigv4_param_cmp);
        for (size_t i = 0; i < cq.n && rc == CN_OK; i++) {
            if ((i > 0 && evbuffer_add(out, "&", 1) != 0) ||
                evbuffer_add(out, cq.v[i].name, cq.v[i].name_len) != 0 ||
                evbuffer_add(out, "=", 1) != 0 ||
                evbuffer_add(out, cq.v[i].value, cq.v[i].value_len) != 0)
                rc = CN_ERR;
        }
    }
    cn_free(cq.v);
    cn_free(cq.arena);
    cn_free(cq.tmp);
    return rc;
}

/* The canonical URI: the path decoded once and encoded once ('/' kept), so
 * clients that escape more or fewer characters than SigV4 still match. */
static int gw_sigv4_canon_uri_add(const struct gw_sigv4_request *req, struct evbuffer *out)
{
    if (req->path_len == 0)
        return evbuffer_add(out, "/", 1) == 0 ? CN_OK : CN_ERR;
    char *dec = cn_malloc(req->path_len);
    size_t dn = 0;
    int rc = gw_s3_names_uri_decode(req->path, req->path_len, dec, &dn, 0);
    if (rc == CN_OK) {
        char *enc = cn_malloc(3 * dn + 1);
        size_t en = gw_s3_names_uri_encode(dec, dn, enc, 3 * dn + 1, 1);
        rc = evbuffer_add(out, enc, en) == 0 ? CN_OK : CN_ERR;
        cn_free(enc);
    }
    cn_free(dec);
    return rc;
}

/* Appends one header value trimmed, its inner white space runs collapsed
 * to one space. *first says whether a ',' separator is due. */
static int gw_sigv4_canon_value_add(const char *v, size_t n, int *first, struct evbuffer *out)
{
    if (!*first && evbuffer_add(out, ",", 1) != 0)
        return CN_ERR;
    *first = 0;
    size_t i = 0;
    int pending_space = 0, wrote = 0;
    while (i < n) {
        size_t start = i;
        while (i < n && v[i] != ' ' && v[i] != '\t')
            i++;
        if (i > start) {
            if (pending_space && wrote && evbuffer_add(out, " ", 1) != 0)
                return CN_ERR;
            if (evbuffer_add(out, v + start, i - start) != 0)
                return CN_ERR;
            wrote = 1;
            pending_space = 0;
        }
        while (i < n && (v[i] == ' ' || v[i] == '\t')) {
            i++;
            pending_space = 1;
        }
    }
    return CN_OK;
}

static int gw_sigv4_canon_headers_add(const struct gw_sigv4_request *req,
                                      const struct gw_sigv4_auth *auth, struct evbuffer *out)
{
    for (size_t s = 0; s < auth->n_signed; s++) {
        const struct gw_sigv4_slice *name = &auth->signed_list[s];
        int first = 1;
        if (evbuffer_add(out, name->p, name->len) != 0 || evbuffer_add(out, ":", 1) != 0)
            return CN_ERR;
        for (size_t h = 0; h < req->n_headers; h++) {
            const struct gw_sigv4_header *hd = &req->headers[h];
            if (hd->name_len != name->len || strncasecmp(hd->name, name->p, name->len) != 0)
                continue;
            if (hd->value_len > GW_SIGV4_INPUT_MAX)
                return CN_TOOBIG;
            if (gw_sigv4_canon_value_add(hd->value, hd->value_len, &first, out) != CN_OK)
                return CN_ERR;
        }
        if (evbuffer_add(out, "\n", 1) != 0)
            return CN_ERR;
    }
    return CN_OK;
}

int gw_sigv4_canonical_request(const struct gw_sigv4_request *req,
                               const struct gw_sigv4_auth *auth, const char *payload_hash,
                               size_t payload_hash_len, struct evbuffer *out)
{
    if (req->path_len > GW_SIGV4_INPUT_MAX || req->query_len > GW_SIGV4_INPUT_MAX ||
        req->method_len > 32)
        return CN_TOOBIG;
    int rc = CN_OK;
    if (evbuffer_add(out, req->method, req->method_len) != 0 ||
        evbuffer_add(out, "\n", 1) != 0)
        return CN_ERR;
    if ((rc = gw_sigv4_canon_uri_add(req, out)) != CN_OK)
        return rc;
    if (evbuffer_add(out, "\n", 1) != 0)
        return CN_ERR;
    if ((rc = gw_sigv4_canon_query_add(req, auth->presigned, out)) != CN_OK)
        return rc;
    if (evbuffer_add(out, "\n", 1) != 0)
        return CN_ERR;
    if ((rc = gw_sigv4_canon_headers_add(req, auth, out)) != CN_OK)
        return rc;
    if (evbuffer_add_printf(out, "\n%s\n", auth->signed_headers) < 0 ||
        evbuffer_add(out, payload_hash, payload_hash_len) != 0)
        return CN_ERR;
    return CN_OK;
}

/* ---- verifier -------------------------------------------------------- */

struct gw_sigv4 *gw_sigv4_new(const struct gw_sigv4_config *cfg)
{
    if (cfg == NULL || cfg->creds == NULL)
        return NULL;
    if (cfg->region != NULL && strlen(cfg->region) > GW_SIGV4_REGION_MAX)
        return NULL;
    struct gw_sigv4 *v = cn_calloc(1, sizeof(*v));
    v->creds = cfg->creds;
    if (cfg->region != NULL)
        strcpy(v->region, cfg->region);
    v->max_skew_s = cfg->max_skew_s > 0 ? cfg->max_skew_s : GW_SIGV4_MAX_SKEW_S;
    v->allow_unsigned_amz_headers = cfg->allow_unsigned_amz_headers;
    v->canon = evbuffer_new();
    CN_ASSERT(v->canon != NULL);
    return v;
}

void gw_sigv4_free(struct gw_sigv4 *v)
{
    if (v == NULL)
        return;
    OPENSSL_cleanse(v->cache, sizeof(v->cache));
    evbuffer_free(v->canon);
    cn_free(v);
}

const struct gw_credentials *gw_sigv4_credentials(const struct gw_sigv4 *v)
{
    return v->creds;
}

void gw_sigv4_set_credentials(struct gw_sigv4 *v, const struct gw_credentials *creds)
{
    v->creds = creds;
    OPENSSL_cleanse(v->cache, sizeof(v->cache));
    memset(v->cache, 0, sizeof(v->cache));
}

/* The signing key for cred/date/region, from the cache or derived. */
static void gw_sigv4_key(struct gw_sigv4 *v, const struct gw_cred *cred,
                         const struct gw_sigv4_auth *a, unsigned char out[32])
{
    for (int i = 0; i < GW_SIGV4_CACHE_SIZE; i++) {
        struct gw_sigv4_cache_entry *e = &v->cache[i];
        if (e->cred == cred && memcmp(e->date8, a->date.p, 8) == 0 &&
            gw_sigv4_eq(a->region.p, a->region.len, e->region)) {
            memcpy(out, e->key, 32);
            return;
        }
    }
    gw_sigv4_signing_key(cred->secret_key, cred->secret_key_len, a->date.p, a->region.p,
                         a->region.len, out);
    struct gw_sigv4_cache_entry *e = &v->cache[v->cache_next++ % GW_SIGV4_CACHE_SIZE];
    e->cred = cred;
    memcpy(e->date8, a->date.p, 8);
    e->date8[8] = '\0';
    memcpy(e->region, a->region.p, a->region.len);
    e->region[a->region.len] = '\0';
    memcpy(e->key, out, 32);
}

static int gw_sigv4_is_signed(const struct gw_sigv4_auth *a, const char *name, size_t n)
{
    for (size_t i = 0; i < a->n_signed; i++)
        if (a->signed_list[i].len == n && strncasecmp(a->signed_list[i].p, name, n) == 0)
            return 1;
    return 0;
}

/* host must be signed; x-amz-* headers present must be too (unless
 * allowed by config; x-amz-content-sha256 and x-amz-date never are). */
static int gw_sigv4_check_signed(struct gw_sigv4 *v, const struct gw_sigv4_request *req,
                                 const struct gw_sigv4_auth *a, struct gw_sigv4_result *res)
{
    if (!gw_sigv4_is_signed(a, "host", 4))
        return gw_auth_fail(res, a->presigned ? GW_S3_AUTHORIZATION_QUERY_PARAMETERS_ERROR
                                               : GW_S3_AUTHORIZATION_HEADER_MALFORMED,
                             "'Host' must be a signed header.");
    for (size_t i = 0; i < req->n_headers; i++) {
        const struct gw_sigv4_header *h = &req->headers[i];
        if (h->name_len < 6 || strncasecmp(h->name, "x-amz-", 6) != 0 ||
            gw_sigv4_is_signed(a, h->name, h->name_len))
            continue;
        int always = gw_auth_ieq(h->name, h->name_len, "x-amz-content-sha256") ||
                     gw_auth_ieq(h->name, h->name_len, "x-amz-date");
        if (always || !v->allow_unsigned_amz_headers)
            return gw_auth_fail(res, GW_S3_ACCESS_DENIED, "There were headers present in the "
                                 "request which were not signed: %.*s",
                                 (int)CN_MIN(h->name_len, 64), h->name);
    }
    return CN_OK;
}

/* The request time: x-amz-date header (header auth) or X-Amz-Date. */
static int gw_sigv4_check_time(struct gw_sigv4 *v, const struct gw_sigv4_request *req,
                               struct gw_sigv4_auth *a, struct gw_sigv4_result *res)
{
    time_t t;
    if (!a->presigned) {
        const struct gw_sigv4_header *h = gw_auth_header(req, "x-amz-date");
        if (h == NULL || gw_sigv4_copy(a->amz_date, sizeof(a->amz_date), h->value,
                                       h->value_len) != CN_OK ||
            gw_s3_names_amz_date_parse(a->amz_date, h->value_len, &t) != CN_OK)
            return gw_auth_fail(res, GW_S3_ACCESS_DENIED, "AWS authentication requires a "
                                 "valid Date or x-amz-date header");
    } else if (gw_s3_names_amz_date_parse(a->amz_date, strlen(a->amz_date), &t) != CN_OK) {
        return gw_auth_fail(res, GW_S3_AUTHORIZATION_QUERY_PARAMETERS_ERROR,
                             "X-Amz-Date must be in the ISO8601 Long Format "
                             "\"yyyyMMdd'T'HHmmss'Z'\"");
    }
    if (memcmp(a->amz_date, a->date.p, 8) != 0)
        return gw_auth_fail(res, a->presigned ? GW_S3_AUTHORIZATION_QUERY_PARAMETERS_ERROR
                                               : GW_S3_AUTHORIZATION_HEADER_MALFORMED,
                             "Invalid credential date \"%.8s\". This date is not the same "
                             "as X-Amz-Date: \"%.8s\".", a->date.p, a->amz_date);
    int64_t now = (int64_t)req->now, when = (int64_t)t;
    if (!a->presigned) {
        if (when - now > v->max_skew_s || now - when > v->max_skew_s)
            return gw_auth_fail(res, GW_S3_REQUEST_TIME_TOO_SKEWED, NULL);
        return CN_OK;
    }
    if (when - now > v->max_skew_s)
        return gw_auth_fail(res, GW_S3_ACCESS_DENIED, "Request is not valid yet");
    if (now > when + a->expires)
        return gw_auth_fail(res, GW_S3_EXPIRED_PRESIGNED, NULL);
    return CN_OK;
}

/* Picks the payload hash line and the body mode. */
static int gw_sigv4_payload(const struct gw_sigv4_request *req, const struct gw_sigv4_auth *a,
                            struct gw_sigv4_result *res, const char **ph, size_t *phn)
{
    static const struct {
        const char *lit;
        enum gw_sigv4_payload mode;
    } lits[] = {
        {"UNSIGNED-PAYLOAD", GW_SIGV4_PAYLOAD_UNSIGNED},
        {"STREAMING-AWS4-HMAC-SHA256-PAYLOAD", GW_SIGV4_PAYLOAD_STREAMING},
        {"STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER", GW_SIGV4_PAYLOAD_STREAMING_TRAILER},
        {"STREAMING-UNSIGNED-PAYLOAD-TRAILER", GW_SIGV4_PAYLOAD_STREAMING_UNSIGNED_TRAILER},
    };
    const struct gw_sigv4_header *h = gw_auth_header(req, "x-amz-content-sha256");
    *ph = req->payload_hash;
    *phn = req->payload_hash_len;
    if (*ph == NULL && a->presigned) {
        *ph = "UNSIGNED-PAYLOAD"; /* X-Amz-Content-Sha256 in the query: see verify */
        *phn = 16;
    } else if (*ph == NULL && h != NULL) {
        *ph = h->value;
        *phn = h->value_len;
    } else if (*ph == NULL) {
        return gw_auth_fail(res, GW_S3_INVALID_REQUEST, "Missing required header for this "
                             "request: x-amz-content-sha256");
    }
    if (*phn == GW_SIGV4_SIG_HEX && cn_hex_is(*ph, *phn)) {
        res->payload = GW_SIGV4_PAYLOAD_SHA256;
        for (size_t i = 0; i < *phn; i++)
            res->payload_hash[i] = (char)((*ph)[i] | 0x20); /* hex digits to lower case */
        res->payload_hash[*phn] = '\0';
        return CN_OK;
    }
    for (size_t i = 0; i < CN_ARRAY_LEN(lits); i++) {
        if (gw_sigv4_eq(*ph, *phn, lits[i].lit)) {
            res->payload = lits[i].mode;
            if (a->presigned && lits[i].mode != GW_SIGV4_PAYLOAD_UNSIGNED)
                break;
            return CN_OK;
        }
    }
    if (*phn > 21 && memcmp(*ph, "STREAMING-AWS4-ECDSA-", 21) == 0)
        return gw_auth_fail(res, GW_S3_NOT_IMPLEMENTED, "SigV4a (ECDSA) signing is not "
                             "supported; use AWS4-HMAC-SHA256.");
    return gw_auth_fail(res, GW_S3_INVALID_ARGUMENT, "x-amz-content-sha256 must be "
                         "UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, "
                         "STREAMING-AWS4-HMAC-SHA256-PAYLOAD, "
                         "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, or a valid sha256 "
                         "value.");
}

/* Is a SigV2 presigned query (AWSAccessKeyId=, Expires=<epoch seconds>)
 * past its Expires? S3 answers such a URL "Request has expired" before it
 * looks at anything else, and so do we although SigV2 is not served:
 * clients that presign with SigV2 by default (older boto3) then read the
 * same answer as from S3. */
static int gw_sigv4_v2_expired(const struct gw_sigv4_request *req)
{
    static const char key[] = "Expires=";
    const char *q = req->query, *end = q + req->query_len;
    for (const char *p = q; p != NULL && p < end;) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *e = amp != NULL ? amp : end;
        size_t n = (size_t)(e - p);
        if (n > sizeof(key) - 1 && n <= sizeof(key) - 1 + 18 &&
            memcmp(p, key, sizeof(key) - 1) == 0) {
            int64_t t = 0;
            for (const char *d = p + sizeof(key) - 1; d < e; d++) {
                if (*d < '0' || *d > '9')
                    return 0;
                t = t * 10 + (*d - '0');
            }
            return (int64_t)req->now > t;
        }
        p = amp != NULL ? amp + 1 : NULL;
    }
    return 0;
}

/* Decides between header and query auth; CN_NOTFOUND for none. */
static int gw_sigv4_parse_any(const struct gw_sigv4_request *req, struct gw_sigv4_auth *a,
                              struct gw_sigv4_result *res)
{
    const struct gw_sigv4_header *h = gw_auth_header(req, "authorization");
    int qrc = gw_sigv4_parse_query(req->query, req->query_len, a, res);
    if (qrc == CN_INVAL)
        return qrc;
    if (h != NULL && qrc == CN_OK)
        return gw_auth_fail(res, GW_S3_INVALID_ARGUMENT, "Only one auth mechanism allowed; "
                             "only the X-Amz-Algorithm query parameter, Signature query "
                             "string parameter or the Authorization header should be "
                             "specified");
    if (qrc == CN_OK)
        return CN_OK;
    if (h == NULL) {
        if (req->query != NULL && req->query_len > 0 &&
            (memmem(req->query, req->query_len, "AWSAccessKeyId=", 15) != NULL)) {
            if (gw_sigv4_v2_expired(req))
                return gw_auth_fail(res, GW_S3_EXPIRED_PRESIGNED, NULL);
            return gw_auth_fail(res, GW_S3_INVALID_REQUEST, "The authorization mechanism you "
                                 "have provided is not supported. Please use "
                                 GW_SIGV4_ALGORITHM ".");
        }
        res->err = GW_S3_ACCESS_DENIED;
        return CN_NOTFOUND;
    }
    int rc = gw_sigv4_parse_authorization(h->value, h->value_len, a, res);
    if (rc == CN_NOTFOUND)
        return gw_auth_fail(res, GW_S3_INVALID_REQUEST, "The authorization mechanism you "
                             "have provided is not supported. Please use "
                             GW_SIGV4_ALGORITHM ".");
    return rc;
}

/* SHA-256 hex of the evbuffer's content, without pulling it up. */
static void gw_sigv4_evbuffer_sha256(struct evbuffer *b, char out[GW_SIGV4_SIG_HEX + 1])
{
    struct gw_checksum c;
    CN_ASSERT(gw_checksum_init(&c, GW_CHECKSUM_BIT(GW_CHECKSUM_SHA256)) == CN_OK);
    struct evbuffer_ptr pos;
    struct evbuffer_iovec vec[8];
    evbuffer_ptr_set(b, &pos, 0, EVBUFFER_PTR_SET);
    size_t left = evbuffer_get_length(b);
    while (left > 0) {
        int n = evbuffer_peek(b, (ev_ssize_t)left, &pos, vec, 8);
        CN_ASSERT(n > 0);
        size_t got = 0;
        for (int i = 0; i < n && i < 8; i++) {
            size_t take = CN_MIN(vec[i].iov_len, left - got);
            gw_checksum_update(&c, vec[i].iov_base, take);
            got += take;
        }
        left -= got;
        evbuffer_ptr_set(b, &pos, got, EVBUFFER_PTR_ADD);
    }
    gw_checksum_final(&c);
    gw_checksum_hex(&c, GW_CHECKSUM_SHA256, out);
    gw_checksum_fini(&c);
}

/* Builds the string to sign into res and checks the signature. */
static int gw_sigv4_check_signature(struct gw_sigv4 *v, const struct gw_sigv4_request *req,
                                    const struct gw_sigv4_auth *a, const char *ph, size_t phn,
                                    struct gw_sigv4_result *res)
{
    evbuffer_drain(v->canon, evbuffer_get_length(v->canon));
    int rc = gw_sigv4_canonical_request(req, a, ph, phn, v->canon);
    if (rc == CN_INVAL)
        return gw_auth_fail(res, GW_S3_INVALID_URI, NULL);
    if (rc != CN_OK)
        return gw_auth_fail(res, rc == CN_TOOBIG ? GW_S3_REQUEST_HEADER_SECTION_TOO_LARGE
                                                  : GW_S3_INTERNAL_ERROR, NULL);
    char creq_hash[GW_SIGV4_SIG_HEX + 1], sig[GW_SIGV4_SIG_HEX + 1];
    gw_sigv4_evbuffer_sha256(v->canon, creq_hash);
    snprintf(res->scope, sizeof(res->scope), "%.8s/%.*s/s3/aws4_request", a->date.p,
             (int)a->region.len, a->region.p);
    snprintf(res->string_to_sign, sizeof(res->string_to_sign), GW_SIGV4_ALGORITHM "\n%s\n%s\n%s",
             a->amz_date, res->scope, creq_hash);
    gw_sigv4_key(v, res->cred, a, res->signing_key);
    gw_sigv4_hmac_hex(res->signing_key, res->string_to_sign, strlen(res->string_to_sign), sig);
    if (CRYPTO_memcmp(sig, a->signature, GW_SIGV4_SIG_HEX) != 0) {
        OPENSSL_cleanse(res->signing_key, sizeof(res->signing_key));
        return gw_auth_fail(res, GW_S3_SIGNATURE_DOES_NOT_MATCH, NULL);
    }
    memcpy(res->signature, sig, sizeof(sig));
    return CN_OK;
}

/* X-Amz-Content-Sha256 of a presigned query, decoded, if present. */
static int gw_sigv4_query_payload(const struct gw_sigv4_request *req, char *out, size_t cap,
                                  size_t *n)
{
    const char *q = req->query, *end = q + req->query_len;
    static const char key[] = "X-Amz-Content-Sha256=";
    for (const char *p = q; p != NULL && p < end;) {
        if ((size_t)(end - p) > sizeof(key) - 1 && strncasecmp(p, key, sizeof(key) - 1) == 0) {
            const char *v = p + sizeof(key) - 1;
            const char *ve = memchr(v, '&', (size_t)(end - v));
            size_t vn = (size_t)((ve != NULL ? ve : end) - v);
            return vn < cap ? gw_s3_names_uri_decode(v, vn, out, n, 1) : CN_INVAL;
        }
        p = memchr(p, '&', (size_t)(end - p));
        p = p != NULL ? p + 1 : NULL;
    }
    return CN_NOTFOUND;
}

int gw_sigv4_verify(struct gw_sigv4 *v, const struct gw_sigv4_request *req,
                    struct gw_sigv4_result *res)
{
    memset(res, 0, sizeof(*res));
    struct gw_sigv4_auth *a = cn_malloc(sizeof(*a));
    int rc = gw_sigv4_parse_any(req, a, res);
    if (rc != CN_OK)
        goto out;
    res->presigned = a->presigned;
    const enum gw_s3_err form = a->presigned ? GW_S3_AUTHORIZATION_QUERY_PARAMETERS_ERROR
                                             : GW_S3_AUTHORIZATION_HEADER_MALFORMED;
    if (v->region[0] != '\0' && !gw_sigv4_eq(a->region.p, a->region.len, v->region)) {
        rc = gw_auth_fail(res, form, "The authorization header is malformed; the region "
                           "'%.*s' is wrong; expecting '%s'", (int)a->region.len, a->region.p,
                           v->region);
        goto out;
    }
    memcpy(res->region, a->region.p, a->region.len);
    res->region[a->region.len] = '\0';
    if ((rc = gw_sigv4_check_time(v, req, a, res)) != CN_OK ||
        (rc = gw_sigv4_check_signed(v, req, a, res)) != CN_OK)
        goto out;
    struct gw_sigv4_request r = *req;
    char qph[GW_SIGV4_SIG_HEX + 64];
    size_t qphn = 0;
    if (a->presigned && r.payload_hash == NULL &&
        gw_sigv4_query_payload(req, qph, sizeof(qph), &qphn) == CN_OK) {
        r.payload_hash = qph;
        r.payload_hash_len = qphn;
    }
    const char *ph;
    size_t phn;
    if ((rc = gw_sigv4_payload(&r, a, res, &ph, &phn)) != CN_OK)
        goto out;
    res->cred = gw_credentials_find(v->creds, a->access_key.p, a->access_key.len);
    if (res->cred == NULL) {
        rc = gw_auth_fail(res, GW_S3_INVALID_ACCESS_KEY_ID, NULL);
        goto out;
    }
    memcpy(res->amz_date, a->amz_date, sizeof(res->amz_date));
    rc = gw_sigv4_check_signature(v, &r, a, ph, phn, res);
out:
    cn_free(a);
    if (rc == CN_OK)
        res->err = GW_S3_OK;
    else if (rc != CN_NOTFOUND) {
        res->cred = rc == CN_INVAL && res->err == GW_S3_SIGNATURE_DOES_NOT_MATCH ? res->cred
                                                                                 : NULL;
        rc = CN_INVAL;
    }
    return rc;
}
