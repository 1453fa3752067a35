/* POST object: the fields phase (read the form up to the file, bounded by
 * S3's 20 KiB), the checks (signature, policy, key, access), then
 * PutObject's streaming write with this module's answer (s3_post.h). */
#include "s3_post.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/crypto.h>

#include "access.h"
#include "bucket_owner.h"
#include "cn/alloc.h"
#include "cn/hex.h"
#include "cn/log.h"
#include "post_policy.h"
#include "s3_cors.h"
#include "s3_names.h"
#include "s3_object.h"
#include "s3_subres.h"
#include "sigv2.h"
#include "sigv4.h"
#include "xml.h"

struct gw_s3_post {
    struct gw_post_form *form;
    int fields_done;
    int acl_checked;                  /* the acl field passed gw_s3_acl_request() */
    int status;                       /* success_action_status: 200, 201 or 204 */
    const char *redirect;             /* success_action_redirect (a field's value) */
    size_t redirect_len;
    struct gw_http_header hdrs[GW_POST_FORM_MAX_FIELDS];
    uint32_t n_hdrs;
};

struct gw_post_form *gw_s3_post_form(struct gw_s3_post *p)
{
    return p->form;
}

const struct gw_http_header *gw_s3_post_headers(const struct gw_s3_post *p, uint32_t *n)
{
    *n = p->n_hdrs;
    return p->hdrs;
}

void gw_s3_post_free(struct gw_s3_post *p)
{
    if (p == NULL)
        return;
    gw_post_form_free(p->form);
    cn_free(p);
}

/* A field's value, or NULL. */
static const char *gw_s3_post_field(const struct gw_s3_post *p, const char *name, size_t *len)
{
    const struct gw_post_form_field *f = gw_post_form_field(p->form, name);
    *len = 0;
    if (f == NULL)
        return NULL;
    *len = f->value_len;
    return f->value;
}

/* ---- authentication -------------------------------------------------- */

/* SigV4: x-amz-signature = hex(HMAC-SHA256(kSigning, policy)). */
static enum gw_s3_err gw_s3_post_auth_v4(struct gw_req *r, const char *policy, size_t plen,
                                         const char **why)
{
    struct gw_s3_post *p = r->post;
    size_t alen, clen, dlen, slen;
    const char *alg = gw_s3_post_field(p, "x-amz-algorithm", &alen);
    const char *cred = gw_s3_post_field(p, "x-amz-credential", &clen);
    const char *date = gw_s3_post_field(p, "x-amz-date", &dlen);
    const char *sig = gw_s3_post_field(p, "x-amz-signature", &slen);
    if (alen != 16 || memcmp(alg, "AWS4-HMAC-SHA256", 16) != 0) {
        *why = "Only AWS4-HMAC-SHA256 is supported for x-amz-algorithm.";
        return GW_S3_INVALID_ARGUMENT;
    }
    if (cred == NULL || date == NULL || sig == NULL) {
        *why = "Bucket POST with x-amz-algorithm must contain the fields x-amz-credential, "
               "x-amz-date and x-amz-signature.";
        return GW_S3_INVALID_ARGUMENT;
    }
    /* AK/YYYYMMDD/region/s3/aws4_request: the key is what precedes the
     * last four '/' */
    const char *cut[4];
    int found = 0;
    for (size_t i = clen; i > 0 && found < 4; i--)
        if (cred[i - 1] == '/')
            cut[found++] = cred + i - 1;
    time_t t;
    if (found < 4 || cut[3] == cred || cut[2] - cut[3] != 9 || dlen != 16 ||
        gw_s3_names_amz_date_parse(date, dlen, &t) != CN_OK ||
        memcmp(cut[3] + 1, date, 8) != 0 || cut[1] - cut[2] - 1 < 1 ||
        cut[1] - cut[2] - 1 > GW_SIGV4_REGION_MAX || cut[0] - cut[1] - 1 != 2 ||
        memcmp(cut[1] + 1, "s3", 2) != 0 || (size_t)(cred + clen - cut[0] - 1) != 12 ||
        memcmp(cut[0] + 1, "aws4_request", 12) != 0) {
        *why = "Invalid x-amz-credential or x-amz-date.";
        return GW_S3_INVALID_ARGUMENT;
    }
    const char *region = cut[2] + 1;
    size_t rlen = (size_t)(cut[1] - region);
    const char *want = r->s3->opts.region;
    if (want != NULL && want[0] != '\0' && (strlen(want) != rlen || memcmp(want, region, rlen))) {
        *why = "The region in x-amz-credential is wrong.";
        return GW_S3_INVALID_ARGUMENT;
    }
    if (slen != GW_SIGV4_SIG_HEX || !cn_hex_is(sig, slen)) {
        *why = "x-amz-signature must be 64 hex characters.";
        return GW_S3_INVALID_ARGUMENT;
    }
    if (r->creds_held == NULL)   /* a form is not signed in a header: held here */
        r->creds_held = gw_credentials_hold(r->s3->creds);
    r->auth.cred = gw_credentials_find(r->creds_held, cred, (size_t)(cut[3] - cred));
    if (r->auth.cred == NULL)
        return GW_S3_INVALID_ACCESS_KEY_ID;
    char date8[9];
    memcpy(date8, date, 8);
    date8[8] = '\0';
    unsigned char key[32];
    char mine[GW_SIGV4_SIG_HEX + 1], theirs[GW_SIGV4_SIG_HEX + 1];
    gw_sigv4_signing_key(r->auth.cred->secret_key, r->auth.cred->secret_key_len, date8, region,
                         rlen, key);
    gw_sigv4_hmac_hex(key, policy, plen, mine);
    OPENSSL_cleanse(key, sizeof(key));
    for (size_t i = 0; i < slen; i++)
        theirs[i] = (char)(sig[i] | 0x20);
    return CRYPTO_memcmp(mine, theirs, GW_SIGV4_SIG_HEX) == 0 ? GW_S3_OK
                                                               : GW_S3_SIGNATURE_DOES_NOT_MATCH;
}

/* SigV2: signature = base64(HMAC-SHA1(secret, policy)). */
static enum gw_s3_err gw_s3_post_auth_v2(struct gw_req *r, const char *policy, size_t plen,
                                         const char **why)
{
    struct gw_s3_post *p = r->post;
    size_t klen, slen;
    const char *ak = gw_s3_post_field(p, "AWSAccessKeyId", &klen);
    const char *sig = gw_s3_post_field(p, "signature", &slen);
    if (r->s3->sigv2 == NULL) {
        *why = "The authorization mechanism you have provided is not supported. Please use "
               "AWS4-HMAC-SHA256.";
        return GW_S3_INVALID_REQUEST;
    }
    if (sig == NULL) {
        *why = "Bucket POST with AWSAccessKeyId must contain a field named 'signature'.";
        return GW_S3_INVALID_ARGUMENT;
    }
    if (r->creds_held == NULL)   /* a form is not signed in a header: held here */
        r->creds_held = gw_credentials_hold(r->s3->creds);
    r->auth.cred = gw_credentials_find(r->creds_held, ak, klen);
    if (r->auth.cred == NULL)
        return GW_S3_INVALID_ACCESS_KEY_ID;
    char mine[GW_SIGV2_SIG_B64 + 1];
    gw_sigv2_sign(r->auth.cred->secret_key, r->auth.cred->secret_key_len, policy, plen, mine);
    return slen == GW_SIGV2_SIG_B64 && CRYPTO_memcmp(mine, sig, slen) == 0
               ? GW_S3_OK
               : GW_S3_SIGNATURE_DOES_NOT_MATCH;
}

/* Who signed the form; fills r->auth as a signed request's. */
static enum gw_s3_err gw_s3_post_auth(struct gw_req *r, const char **why)
{
    struct gw_s3_post *p = r->post;
    size_t plen;
    const char *policy = gw_s3_post_field(p, "policy", &plen);
    int v4 = gw_post_form_field(p->form, "x-amz-algorithm") != NULL ||
             gw_post_form_field(p->form, "x-amz-signature") != NULL;
    int v2 = gw_post_form_field(p->form, "AWSAccessKeyId") != NULL;
    memset(&r->auth, 0, sizeof(r->auth));
    r->auth.payload = GW_SIGV4_PAYLOAD_UNSIGNED;
    if (!v4 && !v2 && policy == NULL) {
        /* an anonymous form (no credential, no policy): S3 takes it where
         * the access decision lets anyone write (a public-read-write
         * bucket, a policy allowing "*" s3:PutObject) */
        r->anonymous = 1;
        r->auth.cred = &gw_access_anonymous;
        return GW_S3_OK;
    }
    if (!v4 && !v2) {
        *why = "Bucket POST with a policy must contain x-amz-credential or AWSAccessKeyId.";
        return GW_S3_ACCESS_DENIED;
    }
    if (v4 && v2) {
        *why = "Only one auth mechanism allowed.";
        return GW_S3_INVALID_ARGUMENT;
    }
    if (policy == NULL) {
        *why = "Bucket POST must contain a field named 'policy'.  If it is specified, please "
               "check the order of the fields.";
        return GW_S3_INVALID_ARGUMENT;
    }
    enum gw_s3_err err = v4 ? gw_s3_post_auth_v4(r, policy, plen, why)
                            : gw_s3_post_auth_v2(r, policy, plen, why);
    if (err != GW_S3_OK)
        r->auth.cred = NULL;
    return err;
}

/* ---- the other fields ------------------------------------------------ */

/* The key field, ${filename} replaced by the file's name (its last path
 * segment, as browsers on some systems send a path). */
static enum gw_s3_err gw_s3_post_key(struct gw_req *r, const char **why)
{
    struct gw_s3_post *p = r->post;
    size_t klen, fnlen;
    const char *k = gw_s3_post_field(p, "key", &klen);
    if (k == NULL) {
        *why = "Bucket POST must contain a field named 'key'.  If it is specified, please "
               "check the order of the fields.";
        return GW_S3_INVALID_ARGUMENT;
    }
    const char *fn = gw_post_form_filename(p->form, &fnlen);
    for (size_t i = fnlen; i > 0; i--) {
        if (fn[i - 1] == '/' || fn[i - 1] == '\\') {
            fnlen -= i;
            fn += i;
            break;
        }
    }
    static const char var[] = "${filename}";
    size_t uses = 0, n = 0;
    for (const char *q = k;
         (q = memmem(q, klen - (size_t)(q - k), var, sizeof(var) - 1)) != NULL;
         q += sizeof(var) - 1)
        uses++;
    size_t cap = klen + uses * fnlen + 1;
    char *key = cn_malloc(cap);
    for (size_t i = 0; i < klen;) {
        if (klen - i >= sizeof(var) - 1 && memcmp(k + i, var, sizeof(var) - 1) == 0) {
            if (n + fnlen < cap) {
                memcpy(key + n, fn, fnlen);
                n += fnlen;
            }
            i += sizeof(var) - 1;
            continue;
        }
        if (n + 1 < cap)
            key[n++] = k[i];
        i++;
    }
    key[n] = '\0';
    enum gw_s3_err err = GW_S3_OK;
    if (n > r->s3->opts.max_key_len)
        err = GW_S3_KEY_TOO_LONG;
    else if (gw_s3_names_key_check(key, n, &err) != CN_OK)
        *why = "The key is empty or not valid UTF-8.";
    if (err != GW_S3_OK) {
        cn_free(key);
        return err;
    }
    cn_free(r->key);
    r->key = key;
    r->key_len = n;
    return GW_S3_OK;
}

/* Does a field become a stored header of the object? */
static int gw_s3_post_stored(const char *name, size_t len)
{
    static const char *const std[] = {"content-type", "cache-control", "content-disposition",
                                      "content-encoding", "content-language", "expires"};
    if (len > 11 && strncasecmp(name, "x-amz-meta-", 11) == 0)
        return 1;
    for (size_t i = 0; i < CN_ARRAY_LEN(std); i++)
        if (len == strlen(std[i]) && strncasecmp(name, std[i], len) == 0)
            return 1;
    return 0;
}

/* Fields that become stored headers must be headers: a token name and a
 * value without control bytes. Also collects them for PutObject. */
static enum gw_s3_err gw_s3_post_headers_collect(struct gw_s3_post *p, const char **why)
{
    for (size_t i = 0; i < gw_post_form_field_count(p->form); i++) {
        const struct gw_post_form_field *f = gw_post_form_field_at(p->form, i);
        if (f->name_len >= 28 && strncasecmp(f->name, "x-amz-server-side-encryption", 28) == 0) {
            *why = "Server-side encryption is not supported.";
            return GW_S3_NOT_IMPLEMENTED;
        }
        if (gw_post_policy_exempt(f->name, f->name_len))
            continue;
        p->hdrs[p->n_hdrs++] = (struct gw_http_header){f->name, (uint32_t)f->name_len, f->value,
                                                       (uint32_t)f->value_len};
        if (!gw_s3_post_stored(f->name, f->name_len))
            continue; /* not metadata: PutObject ignores it */
        for (size_t k = 0; k < f->name_len; k++) {
            char c = f->name[k];
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  strchr("!#$%&'*+-.^_`|~", c) != NULL)) {
                *why = "A form field name is not a valid header name.";
                return GW_S3_INVALID_ARGUMENT;
            }
        }
        for (size_t k = 0; k < f->value_len; k++) {
            unsigned char c = (unsigned char)f->value[k];
            if ((c < 0x20 && c != '\t') || c == 0x7f) {
                *why = "A form field value holds a control character.";
                return GW_S3_INVALID_ARGUMENT;
            }
        }
    }
    return GW_S3_OK;
}

/* success_action_status / success_action_redirect (or redirect). The acl
 * field is checked with the access (gw_s3_post_owned). */
static enum gw_s3_err gw_s3_post_answer_fields(struct gw_s3_post *p, const char **why)
{
    size_t len;
    const char *s = gw_s3_post_field(p, "success_action_status", &len);
    p->status = 204;
    if (s != NULL && len == 3 && (memcmp(s, "200", 3) == 0 || memcmp(s, "201", 3) == 0))
        p->status = s[2] == '0' ? 200 : 201;
    p->redirect = gw_s3_post_field(p, "success_action_redirect", &p->redirect_len);
    if (p->redirect == NULL)
        p->redirect = gw_s3_post_field(p, "redirect", &p->redirect_len);
    if (p->redirect != NULL && p->redirect_len == 0)
        p->redirect = NULL;
    for (size_t i = 0; p->redirect != NULL && i < p->redirect_len; i++) {
        unsigned char c = (unsigned char)p->redirect[i];
        if (c <= 0x20 || c == 0x7f) {
            *why = "success_action_redirect is not a valid URL.";
            return GW_S3_INVALID_ARGUMENT;
        }
    }
    return GW_S3_OK;
}

/* ---- the phases ------------------------------------------------------ */

/* The access decision passed: CORS headers for a browser, then the write. */
static void gw_s3_post_owned(struct gw_req *r)
{
    struct gw_s3_post *p = r->post;
    if (!r->cors_checked && gw_s3_cors_wanted(r)) {
        r->cors_checked = 1;
        gw_s3_cors_lookup(r, gw_s3_post_owned);
        return;
    }
    /* the acl field, as PutObject's x-amz-acl (s3_subres.h), on the
     * bucket's current configuration */
    if (!p->acl_checked) {
        if (r->access_cfg != NULL && !r->access_cfg_fresh && gw_s3_acl_wanted(r)) {
            gw_bucket_owner_refresh(r, gw_s3_post_owned);
            return;
        }
        p->acl_checked = 1;
        const char *why = NULL;
        enum gw_s3_err err = gw_s3_acl_request(r, &why);
        if (err != GW_S3_OK) {
            gw_req_error(r, err, why);
            return;
        }
    }
    CN_LOGR(CN_LOG_DEBUG, r->id, "POST object: access granted, %zu bytes buffered",
            evbuffer_get_length(r->hr.body));
    gw_s3_object_put_form(r);
}

/* Every field before the file is in: check them all, then the access. */
static void gw_s3_post_fields_ready(struct gw_req *r)
{
    struct gw_s3_post *p = r->post;
    const char *why = NULL;
    char pwhy[CN_ERR_LEN];
    enum gw_s3_err err = gw_s3_post_auth(r, &why);
    if (err == GW_S3_OK && r->anonymous) {
        gw_post_form_set_range(p->form, 0, r->s3->opts.put_limit);   /* no policy to say less */
    } else if (err == GW_S3_OK) {
        size_t plen;
        const char *policy = gw_s3_post_field(p, "policy", &plen);
        uint64_t min, max;
        struct gw_post_policy_input in = {
            .bucket = r->bucket, .bucket_len = r->bucket_len, .form = p->form, .now = time(NULL),
        };
        err = gw_post_policy_check(policy, plen, &in, &min, &max, pwhy);
        why = pwhy[0] != '\0' ? pwhy : NULL;
        gw_post_form_set_range(p->form, min, CN_MIN(max, r->s3->opts.put_limit));
    }
    if (err == GW_S3_OK)
        err = gw_s3_post_key(r, &why);
    if (err == GW_S3_OK)
        err = gw_s3_post_headers_collect(p, &why);
    if (err == GW_S3_OK)
        err = gw_s3_post_answer_fields(p, &why);
    if (err != GW_S3_OK) {
        CN_LOGR(CN_LOG_INFO, r->id, "POST object refused: %s %s", gw_s3_error_code(err),
                why != NULL ? why : "");
        gw_req_error(r, err, why);
        return;
    }
    CN_LOGR(CN_LOG_DEBUG, r->id, "POST object: fields checked (%zu), key %s",
            gw_post_form_field_count(p->form), r->key);
    gw_bucket_owner_check(r, r->bucket, r->bucket_len, gw_s3_post_owned);
}

/* The fields phase: feeds the body to the form parser until the file's
 * headers are complete. The file's bytes stay in r->hr.body for the body
 * reader; until it starts, reading pauses (nothing is consumed). */
static void gw_s3_post_on_fields(struct gw_req *r)
{
    struct gw_s3_post *p = r->post;
    if (p == NULL || p->fields_done)
        return;
    enum gw_s3_err err = GW_S3_OK;
    while (evbuffer_get_length(r->hr.body) > 0) {
        struct evbuffer_iovec v;
        if (evbuffer_peek(r->hr.body, -1, NULL, &v, 1) < 1)
            break;
        size_t used = 0;
        int rc = gw_post_form_feed(p->form, v.iov_base, v.iov_len, &used, NULL, NULL, &err);
        evbuffer_drain(r->hr.body, used);
        if (rc == CN_OK) {
            p->fields_done = 1;
            gw_s3_post_fields_ready(r);
            return;
        }
        if (rc != CN_AGAIN) {
            gw_req_error(r, err, err == GW_S3_INVALID_ARGUMENT
                                     ? "POST requires exactly one file upload per request."
                                     : NULL);
            return;
        }
    }
    if (r->hr.body_failed || r->hr.body_done) {
        err = r->hr.body_done ? GW_S3_INVALID_ARGUMENT
              : r->hr.body_bad_framing ? GW_S3_INCOMPLETE_BODY
                                       : GW_S3_REQUEST_TIMEOUT;
        gw_req_error(r, err, err == GW_S3_INVALID_ARGUMENT
                                 ? "POST requires exactly one file upload per request."
                                 : NULL);
        return;
    }
    gw_req_body_consumed(r);
}

void gw_s3_post_object(struct gw_req *r)
{
    size_t ctlen, blen;
    char boundary[GW_POST_FORM_BOUNDARY_MAX + 1];
    const char *ct = gw_req_header(r, "content-type", &ctlen);
    int rc = ct != NULL ? gw_post_form_boundary(ct, ctlen, boundary, &blen) : CN_NOTFOUND;
    if (rc == CN_NOTFOUND) {
        gw_req_error(r, GW_S3_PRECONDITION_FAILED, "Bucket POST must be of the enclosure-type "
                                                   "multipart/form-data");
        return;
    }
    if (rc != CN_OK) {
        gw_req_error(r, GW_S3_MALFORMED_POST_REQUEST, NULL);
        return;
    }
    if (r->http->content_length < 0 && !r->http->chunked) {
        gw_req_error(r, GW_S3_MISSING_CONTENT_LENGTH, NULL);
        return;
    }
    struct gw_s3_post *p = cn_calloc(1, sizeof(*p));
    p->form = gw_post_form_new(boundary, blen);
    r->post = p;
    gw_req_body_read(r, gw_s3_post_on_fields);
}

/* ---- the answer ------------------------------------------------------ */

/* Appends s percent-encoded (RFC 3986 unreserved kept). */
static void gw_s3_post_url_add(struct evbuffer *b, const char *s, size_t n)
{
    char *enc = cn_malloc(3 * n + 1);
    size_t en = gw_s3_names_uri_encode(s, n, enc, 3 * n + 1, 0);
    evbuffer_add(b, enc, en);
    cn_free(enc);
}

void gw_s3_post_reply(struct gw_req *r, const char *etag)
{
    struct gw_s3_post *p = r->post;
    struct evbuffer *loc = evbuffer_new();
    size_t hlen;
    const char *host = gw_req_header(r, "host", &hlen);
    evbuffer_add_printf(loc, "%s://%.*s/", gw_http_req_is_tls(&r->hr) ? "https" : "http",
                        host != NULL ? (int)CN_MIN(hlen, 255) : 9,
                        host != NULL ? host : "localhost");
    gw_s3_post_url_add(loc, r->bucket, r->bucket_len);
    evbuffer_add(loc, "/", 1);
    char *enc = cn_malloc(3 * r->key_len + 1);
    evbuffer_add(loc, enc, gw_s3_names_uri_encode(r->key, r->key_len, enc, 3 * r->key_len + 1, 1));
    cn_free(enc);
    if (p->redirect != NULL) {
        struct evbuffer *to = evbuffer_new();
        char quoted[64];
        int qn = snprintf(quoted, sizeof(quoted), "\"%s\"", etag);
        evbuffer_add(to, p->redirect, p->redirect_len);
        evbuffer_add(to, memchr(p->redirect, '?', p->redirect_len) != NULL ? "&" : "?", 1);
        evbuffer_add(to, "bucket=", 7);
        gw_s3_post_url_add(to, r->bucket, r->bucket_len);
        evbuffer_add(to, "&key=", 5);
        gw_s3_post_url_add(to, r->key, r->key_len);
        evbuffer_add(to, "&etag=", 6);
        gw_s3_post_url_add(to, quoted, (size_t)qn);
        gw_req_reply_start(r, 303);
        gw_req_reply_header(r, "Location", (const char *)evbuffer_pullup(to, -1),
                            evbuffer_get_length(to));
        gw_req_reply_headerf(r, "ETag", "\"%s\"", etag);
        gw_req_reply_send_headers(r, 0);
        gw_req_reply_end(r);
        evbuffer_free(to);
        evbuffer_free(loc);
        return;
    }
    struct evbuffer *doc = evbuffer_new();
    if (p->status == 201) {
        char quoted[64];
        snprintf(quoted, sizeof(quoted), "\"%s\"", etag);
        struct gw_xml_writer w;
        gw_xml_writer_init(&w, doc);
        gw_xml_open(&w, "PostResponse");
        gw_xml_elem(&w, "Location", (const char *)evbuffer_pullup(loc, -1),
                    evbuffer_get_length(loc));
        gw_xml_elem(&w, "Bucket", r->bucket, r->bucket_len);
        gw_xml_elem(&w, "Key", r->key, r->key_len);
        gw_xml_elem_str(&w, "ETag", quoted);
        gw_xml_close(&w);
        gw_xml_writer_finish(&w);
    }
    gw_req_reply_start(r, p->status);
    gw_req_reply_header(r, "Location", (const char *)evbuffer_pullup(loc, -1),
                        evbuffer_get_length(loc));
    gw_req_reply_headerf(r, "ETag", "\"%s\"", etag);
    if (p->status == 201)
        gw_req_reply_header(r, "Content-Type", "application/xml", 15);
    gw_req_reply_send_headers(r, evbuffer_get_length(doc));
    evbuffer_add_buffer(gw_req_reply_body(r), doc);
    gw_req_reply_end(r);
    evbuffer_free(doc);
    evbuffer_free(loc);
}
