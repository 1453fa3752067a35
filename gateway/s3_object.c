/* Object handlers. A PUT reads and verifies the whole body (s3_body.c)
 * before one record is written to the replicas, so a refused request stores
 * nothing. GET reads the record once and answers from it (conditionals,
 * ranges); its payload reaches the client without a copy. */
#include "s3_object.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "keys.h"
#include "objmeta.h"
#include "s3_body.h"
#include "s3_bucket.h"
#include "s3_names.h"
#include "s3_range.h"
#include "worker.h"
#include "xml.h"

#include "cn/alloc.h"
#include "cn/log.h"
#include "cn/time.h"

#define GW_S3_OBJECT_MAX_USER_META 2048 /* bytes of x-amz-meta-* names+values, as S3 */

/* Scratch of one object request: the storage key and lower-cased names. */
struct gw_s3_object {
    char skey[GW_KEYS_MAX];
    size_t skey_len;
    char names[8192];
    size_t names_used;
    char *meta;
    size_t meta_len;
    struct gw_blob *blob;
};

static void gw_s3_object_free(void *p)
{
    struct gw_s3_object *o = p;
    cn_free(o->meta);
    gw_blob_unref(o->blob);
    cn_free(o);
}

static struct gw_s3_object *gw_s3_object_state(struct gw_req *r)
{
    if (r->h == NULL) {
        struct gw_s3_object *o = cn_calloc(1, sizeof(*o));
        o->skey_len = gw_keys_object(o->skey, r->bucket, r->bucket_len, r->key, r->key_len);
        r->h = o;
        r->h_free = gw_s3_object_free;
    }
    return r->h;
}

/* ---- stored headers --------------------------------------------------- */

static const char *const gw_s3_object_std_headers[] = {
    "content-type", "cache-control", "content-disposition", "content-encoding",
    "content-language", "expires", "x-amz-website-redirect-location",
};

/* Content-Encoding without the aws-chunked token (it describes the upload). */
static size_t gw_s3_object_strip_aws_chunked(const char *v, size_t len, char *out, size_t cap)
{
    size_t n = 0, i = 0;
    while (i < len) {
        while (i < len && (v[i] == ' ' || v[i] == ','))
            i++;
        size_t s = i;
        while (i < len && v[i] != ',')
            i++;
        size_t e = i;
        while (e > s && v[e - 1] == ' ')
            e--;
        if (e == s || (e - s == 11 && strncasecmp(v + s, "aws-chunked", 11) == 0))
            continue;
        if (n + (e - s) + 1 >= cap)
            break;
        if (n > 0)
            out[n++] = ',';
        memcpy(out + n, v + s, e - s);
        n += e - s;
    }
    return n;
}

/* Copies a name lower-cased into the scratch; NULL when it is full. */
static const char *gw_s3_object_lower(struct gw_s3_object *o, const char *name, size_t len)
{
    if (o->names_used + len + 1 > sizeof(o->names))
        return NULL;
    char *d = o->names + o->names_used;
    for (size_t i = 0; i < len; i++)
        d[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] + 32 : name[i]);
    d[len] = '\0';
    o->names_used += len + 1;
    return d;
}

/* Builds the meta of a new object from the request headers. */
static enum gw_s3_err gw_s3_object_build_meta(struct gw_req *r, struct gw_s3_object *o)
{
    struct gw_objmeta m = {.n = 0};
    const struct gw_http_parser *h = r->http;
    size_t user_bytes = 0;
    int have_ct = 0;
    for (uint32_t i = 0; i < h->n_headers; i++) {
        const struct gw_http_header *hd = &h->headers[i];
        int keep = hd->name_len > 11 && strncasecmp(hd->name, "x-amz-meta-", 11) == 0;
        if (keep)
            user_bytes += hd->name_len - 11 + hd->value_len;
        for (size_t k = 0; !keep && k < CN_ARRAY_LEN(gw_s3_object_std_headers); k++)
            keep = gw_http_token_eq(hd->name, hd->name_len, gw_s3_object_std_headers[k]);
        if (!keep)
            continue;
        const char *name = gw_s3_object_lower(o, hd->name, hd->name_len);
        const char *value = hd->value;
        size_t vlen = hd->value_len;
        if (name != NULL && strcmp(name, "content-encoding") == 0) {
            char *buf = o->names + o->names_used;
            size_t cap = sizeof(o->names) - o->names_used;
            vlen = gw_s3_object_strip_aws_chunked(hd->value, hd->value_len, buf, cap);
            o->names_used += vlen;
            value = buf;
            if (vlen == 0)
                continue;
        }
        have_ct |= name != NULL && strcmp(name, "content-type") == 0;
        if (name == NULL || gw_objmeta_add(&m, name, hd->name_len, value, vlen) != CN_OK)
            return GW_S3_METADATA_TOO_LARGE;
    }
    if (user_bytes > GW_S3_OBJECT_MAX_USER_META)
        return GW_S3_METADATA_TOO_LARGE;
    if (!have_ct)
        gw_objmeta_add(&m, "content-type", 12, "binary/octet-stream", 19);
    enum gw_checksum_algo algo;
    char b64[GW_CHECKSUM_B64_MAX];
    if (gw_s3_body_checksum(r, &algo, b64) == CN_OK) {
        const char *hn = gw_checksum_header_name(algo);
        size_t bl = strlen(b64);
        char *keepb = o->names + o->names_used;
        if (hn != NULL && o->names_used + bl + 1 <= sizeof(o->names)) {
            memcpy(keepb, b64, bl + 1);
            o->names_used += bl + 1;
            gw_objmeta_add(&m, hn, strlen(hn), keepb, bl);
        }
    }
    gw_objmeta_encode(&m, &o->meta, &o->meta_len);
    return GW_S3_OK;
}

/* ---- PutObject ------------------------------------------------------- */

static void gw_s3_object_on_put(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    if (res->rc != CN_OK) {
        gw_req_error(r, gw_s3_bucket_store_err(res->rc), res->err);
        return;
    }
    gw_req_reply_start(r, 200);
    gw_req_reply_headerf(r, "ETag", "\"%s\"", gw_s3_body_md5_hex(r));
    enum gw_checksum_algo algo;
    char b64[GW_CHECKSUM_B64_MAX];
    if (gw_s3_body_checksum(r, &algo, b64) == CN_OK && gw_checksum_header_name(algo) != NULL)
        gw_req_reply_header(r, gw_checksum_header_name(algo), b64, strlen(b64));
    gw_req_reply_send_headers(r, 0);
    gw_req_reply_end(r);
}

static void gw_s3_object_put_body(struct gw_req *r, enum gw_s3_err err, struct evbuffer *data)
{
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    struct gw_s3_object *o = gw_s3_object_state(r);
    err = gw_s3_object_build_meta(r, o);
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    struct evbuffer *owned = evbuffer_new();
    evbuffer_add_buffer(owned, data);
    o->blob = gw_blob_from_evbuffer(owned);
    const char *etag = gw_s3_body_md5_hex(r);
    struct gw_store_record rec = {
        .key = o->skey,
        .key_len = o->skey_len,
        .etag = etag,
        .etag_len = strlen(etag),
        .meta = o->meta,
        .meta_len = o->meta_len,
        .ver = r->id,
        .ts = cn_time_now_us(),
    };
    gw_req_hold(r);
    gw_store_put(r->worker->store, &rec, o->blob, gw_s3_object_on_put, r);
}

static void gw_s3_object_put_bucket_ok(struct gw_req *r)
{
    gw_s3_body_read(r, (size_t)r->worker->cfg->lo_threshold, GW_S3_ENTITY_TOO_LARGE,
                    gw_s3_object_put_body);
}

void gw_s3_object_put(struct gw_req *r)
{
    const struct gw_config *cfg = r->worker->cfg;
    if (r->http->content_length < 0 && !r->http->chunked) {
        gw_req_error(r, GW_S3_MISSING_CONTENT_LENGTH, NULL);
        return;
    }
    int64_t declared = gw_s3_body_declared_length(r);
    if (declared > cfg->s3_max_object_size) {
        gw_req_error(r, GW_S3_ENTITY_TOO_LARGE, NULL);
        return;
    }
    if (declared > cfg->lo_threshold) {
        gw_req_error(r, GW_S3_ENTITY_TOO_LARGE,
                     "Objects over large_object.threshold_of_chunk_len are not supported yet.");
        return;
    }
    gw_s3_object_state(r);
    gw_s3_bucket_require(r, gw_s3_object_put_bucket_ok);
}

/* ---- conditionals ---------------------------------------------------- */

/* Does an If-Match / If-None-Match list match etag (hex, unquoted)? */
static int gw_s3_object_etag_in(const char *list, size_t len, const char *etag, size_t elen)
{
    size_t i = 0;
    while (i < len) {
        while (i < len && (list[i] == ' ' || list[i] == ','))
            i++;
        size_t s = i;
        while (i < len && list[i] != ',')
            i++;
        size_t e = i;
        while (e > s && list[e - 1] == ' ')
            e--;
        if (e - s >= 2 && list[s] == 'W' && list[s + 1] == '/')
            s += 2;
        if (e - s >= 2 && list[s] == '"' && list[e - 1] == '"') {
            s++;
            e--;
        }
        if ((e - s == 1 && list[s] == '*') || (e - s == elen && memcmp(list + s, etag, elen) == 0))
            return 1;
    }
    return 0;
}

/* Evaluates If-Match, If-Unmodified-Since, If-None-Match, If-Modified-Since
 * (RFC 7232 order, as S3). prefix "" for GET, "x-amz-copy-source-" for copy. */
static enum gw_s3_err gw_s3_object_conditions(const struct gw_req *r, const char *prefix,
                                              const char *etag, size_t elen, time_t mtime)
{
    char name[64];
    size_t len;
    const char *v;
    time_t t;
    snprintf(name, sizeof(name), "%sif-match", prefix);
    const char *im = gw_req_header(r, name, &len);
    if (im != NULL && !gw_s3_object_etag_in(im, len, etag, elen))
        return GW_S3_PRECONDITION_FAILED;
    snprintf(name, sizeof(name), "%sif-unmodified-since", prefix);
    if (im == NULL && (v = gw_req_header(r, name, &len)) != NULL &&
        gw_s3_names_http_date_parse(v, len, &t) == CN_OK && mtime > t)
        return GW_S3_PRECONDITION_FAILED;
    snprintf(name, sizeof(name), "%sif-none-match", prefix);
    const char *inm = gw_req_header(r, name, &len);
    int is_copy = prefix[0] != '\0';
    if (inm != NULL && gw_s3_object_etag_in(inm, len, etag, elen))
        return is_copy ? GW_S3_PRECONDITION_FAILED : GW_S3_NOT_MODIFIED;
    snprintf(name, sizeof(name), "%sif-modified-since", prefix);
    if (inm == NULL && (v = gw_req_header(r, name, &len)) != NULL &&
        gw_s3_names_http_date_parse(v, len, &t) == CN_OK && mtime <= t)
        return is_copy ? GW_S3_PRECONDITION_FAILED : GW_S3_NOT_MODIFIED;
    return GW_S3_OK;
}

/* ---- GetObject / HeadObject ------------------------------------------ */

static void gw_s3_object_not_found_bucket_ok(struct gw_req *r)
{
    gw_req_error(r, GW_S3_NO_SUCH_KEY, NULL);
}

/* The object headers of a GET/HEAD answer. A partial (ranged) answer
 * leaves out the whole-object x-amz-checksum-*, as S3 does: clients that
 * validate response checksums would check them against the range. */
static void gw_s3_object_reply_headers(struct gw_req *r, const struct msg *m,
                                       const struct gw_objmeta *om, int partial)
{
    char date[GW_S3_NAMES_HTTP_DATE_LEN];
    gw_s3_names_http_date_format((time_t)(m->ts / 1000000), date);
    gw_req_reply_header(r, "Last-Modified", date, strlen(date));
    gw_req_reply_headerf(r, "ETag", "\"%.*s\"", (int)m->etag.len, (const char *)m->etag.ptr);
    gw_req_reply_header(r, "Accept-Ranges", "bytes", 5);
    size_t cm_len;
    const char *cm = gw_req_header(r, "x-amz-checksum-mode", &cm_len);
    int want_ck = !partial && cm != NULL && gw_http_token_eq(cm, cm_len, "ENABLED");
    for (size_t i = 0; i < om->n; i++) {
        const struct gw_objmeta_header *h = &om->h[i];
        if (h->name_len > 15 && strncmp(h->name, "x-amz-checksum-", 15) == 0 && !want_ck)
            continue;
        char name[256];
        snprintf(name, sizeof(name), "%.*s", (int)h->name_len, h->name);
        /* response-* query parameters override (presigned downloads) */
        char qname[280];
        snprintf(qname, sizeof(qname), "response-%s", name);
        const struct gw_req_param *ov = strncmp(name, "x-amz-", 6) != 0
                                            ? gw_req_param(r, qname) : NULL;
        if (ov != NULL)
            continue;
        gw_req_reply_header(r, name, h->value, h->value_len);
    }
    static const char *const overridable[] = {"content-type", "content-language", "expires",
                                              "cache-control", "content-disposition",
                                              "content-encoding"};
    for (size_t i = 0; i < CN_ARRAY_LEN(overridable); i++) {
        char qname[64];
        snprintf(qname, sizeof(qname), "response-%s", overridable[i]);
        const struct gw_req_param *ov = gw_req_param(r, qname);
        if (ov != NULL)
            gw_req_reply_header(r, overridable[i], ov->value, ov->value_len);
    }
}

static void gw_s3_object_on_get(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    if (res->rc == CN_NOTFOUND) {
        gw_s3_bucket_require(r, gw_s3_object_not_found_bucket_ok);
        return;
    }
    if (res->rc != CN_OK) {
        gw_req_error(r, gw_s3_bucket_store_err(res->rc), res->err);
        return;
    }
    const struct msg *m = &res->reply->m;
    struct gw_objmeta om;
    if (gw_objmeta_decode(&om, m->meta.ptr, m->meta.len) != CN_OK)
        CN_LOGR(CN_LOG_WARN, r->id, "object meta does not decode; answering without it");
    enum gw_s3_err err = gw_s3_object_conditions(r, "", (const char *)m->etag.ptr, m->etag.len,
                                                 (time_t)(m->ts / 1000000));
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    uint64_t size = r->head_only ? m->size : m->payload.len;
    size_t rlen;
    const char *rh = gw_req_header(r, "range", &rlen);
    struct gw_s3_range range;
    enum gw_s3_range_kind kind = gw_s3_range_parse(rh, rh != NULL ? rlen : 0, size, &range);
    if (kind == GW_S3_RANGE_UNSATISFIABLE) {
        gw_req_error(r, GW_S3_INVALID_RANGE, NULL);
        return;
    }
    gw_req_reply_start(r, kind == GW_S3_RANGE_PARTIAL ? 206 : 200);
    gw_s3_object_reply_headers(r, m, &om, kind == GW_S3_RANGE_PARTIAL);
    uint64_t first = 0, len = size;
    if (kind == GW_S3_RANGE_PARTIAL) {
        char cr[GW_S3_RANGE_CONTENT_RANGE_MAX];
        size_t n = gw_s3_range_content_range(&range, size, cr, sizeof(cr));
        gw_req_reply_header(r, "Content-Range", cr, n);
        first = range.first;
        len = range.last - range.first + 1;
    }
    gw_req_reply_send_headers(r, len);
    if (!r->head_only) {
        struct evbuffer *tmp = evbuffer_new();
        gw_storage_reply_move_payload(res->reply, tmp); /* zero copy */
        evbuffer_drain(tmp, first);
        evbuffer_remove_buffer(tmp, gw_req_reply_body(r), len);
        evbuffer_free(tmp);
    }
    gw_req_reply_end(r);
}

void gw_s3_object_get(struct gw_req *r)
{
    struct gw_s3_object *o = gw_s3_object_state(r);
    gw_req_hold(r);
    if (r->head_only)
        gw_store_head(r->worker->store, o->skey, o->skey_len, gw_s3_object_on_get, r);
    else
        gw_store_get(r->worker->store, o->skey, o->skey_len, 1, 0, 0, gw_s3_object_on_get, r);
}

/* ---- DeleteObject ---------------------------------------------------- */

static void gw_s3_object_on_delete(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    if (res->rc != CN_OK) {
        gw_req_error(r, gw_s3_bucket_store_err(res->rc), res->err);
        return;
    }
    gw_req_reply_start(r, 204);
    gw_req_reply_send_headers(r, 0);
    gw_req_reply_end(r);
}

static void gw_s3_object_delete_bucket_ok(struct gw_req *r)
{
    struct gw_s3_object *o = gw_s3_object_state(r);
    gw_req_hold(r);
    gw_store_delete(r->worker->store, o->skey, o->skey_len, r->id, cn_time_now_us(),
                    gw_s3_object_on_delete, r);
}

void gw_s3_object_delete(struct gw_req *r)
{
    gw_s3_bucket_require(r, gw_s3_object_delete_bucket_ok);
}

/* ---- CopyObject ------------------------------------------------------ */

struct gw_s3_copy {
    struct gw_s3_object o;     /* first: the destination */
    char src_bucket[64];
    size_t src_bucket_len;
    char src_skey[GW_KEYS_MAX];
    size_t src_skey_len;
    char etag[129];
    uint64_t ts;
};

static void gw_s3_copy_on_put(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    struct gw_s3_copy *c = r->h;
    if (res->rc != CN_OK) {
        gw_req_error(r, gw_s3_bucket_store_err(res->rc), res->err);
        return;
    }
    struct evbuffer *doc = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    gw_xml_open_ns(&w, "CopyObjectResult", GW_XML_S3_NS);
    gw_xml_elem_time_ms(&w, "LastModified", (int64_t)(c->ts / 1000));
    char q[140];
    snprintf(q, sizeof(q), "\"%s\"", c->etag);
    gw_xml_elem_str(&w, "ETag", q);
    gw_xml_close(&w);
    gw_xml_writer_finish(&w);
    gw_req_reply_xml(r, 200, doc);
    evbuffer_free(doc);
}

static void gw_s3_copy_on_get(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    struct gw_s3_copy *c = r->h;
    if (res->rc == CN_NOTFOUND) {
        gw_req_error(r, GW_S3_NO_SUCH_KEY, NULL);
        return;
    }
    if (res->rc != CN_OK) {
        gw_req_error(r, gw_s3_bucket_store_err(res->rc), res->err);
        return;
    }
    const struct msg *m = &res->reply->m;
    enum gw_s3_err err = gw_s3_object_conditions(r, "x-amz-copy-source-",
                                                 (const char *)m->etag.ptr, m->etag.len,
                                                 (time_t)(m->ts / 1000000));
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    size_t dl;
    const char *dir = gw_req_header(r, "x-amz-metadata-directive", &dl);
    int replace = dir != NULL && gw_http_token_eq(dir, dl, "REPLACE");
    if (dir != NULL && !replace && !gw_http_token_eq(dir, dl, "COPY")) {
        gw_req_error(r, GW_S3_INVALID_ARGUMENT, "Unknown metadata directive.");
        return;
    }
    if (!replace && c->src_skey_len == c->o.skey_len &&
        memcmp(c->src_skey, c->o.skey, c->o.skey_len) == 0) {
        gw_req_error(r, GW_S3_INVALID_REQUEST,
                     "This copy request is illegal because it is trying to copy an object to "
                     "itself without changing the object's metadata, storage class, website "
                     "redirect location or encryption attributes.");
        return;
    }
    if (replace) {
        err = gw_s3_object_build_meta(r, &c->o);
        if (err != GW_S3_OK) {
            gw_req_error(r, err, NULL);
            return;
        }
    } else {
        c->o.meta = cn_memdup(m->meta.ptr, m->meta.len);
        c->o.meta_len = m->meta.len;
    }
    size_t el = CN_MIN(m->etag.len, sizeof(c->etag) - 1);
    memcpy(c->etag, m->etag.ptr, el);
    c->etag[el] = '\0';
    struct evbuffer *data = evbuffer_new();
    gw_storage_reply_move_payload(res->reply, data);
    c->o.blob = gw_blob_from_evbuffer(data);
    c->ts = cn_time_now_us();
    struct gw_store_record rec = {
        .key = c->o.skey, .key_len = c->o.skey_len,
        .etag = c->etag, .etag_len = el,
        .meta = c->o.meta, .meta_len = c->o.meta_len,
        .ver = r->id, .ts = c->ts,
    };
    gw_req_hold(r);
    gw_store_put(r->worker->store, &rec, c->o.blob, gw_s3_copy_on_put, r);
}

static void gw_s3_copy_bucket_ok(struct gw_req *r)
{
    struct gw_s3_copy *c = r->h;
    gw_req_hold(r);
    gw_store_get(r->worker->store, c->src_skey, c->src_skey_len, 1, 0, 0, gw_s3_copy_on_get, r);
}

static void gw_s3_copy_free(void *p)
{
    struct gw_s3_copy *c = p;
    cn_free(c->o.meta);
    gw_blob_unref(c->o.blob);
    cn_free(c);
}

/* Parses x-amz-copy-source: [/]bucket/key[?versionId=...], URL-encoded. */
static enum gw_s3_err gw_s3_copy_parse_source(struct gw_req *r, struct gw_s3_copy *c)
{
    size_t len;
    const char *v = gw_req_header(r, "x-amz-copy-source", &len);
    const char *q = memchr(v, '?', len);
    if (q != NULL)
        len = (size_t)(q - v); /* versionId: versioning is not supported; latest */
    char *dec = cn_malloc(len + 1);
    size_t dlen;
    enum gw_s3_err err = GW_S3_OK;
    if (gw_s3_names_uri_decode(v, len, dec, &dlen, 0) != CN_OK) {
        cn_free(dec);
        return GW_S3_INVALID_ARGUMENT;
    }
    const char *p = dec, *end = dec + dlen;
    if (p < end && *p == '/')
        p++;
    const char *slash = memchr(p, '/', (size_t)(end - p));
    size_t blen = slash != NULL ? (size_t)(slash - p) : 0;
    size_t klen = slash != NULL ? (size_t)(end - slash - 1) : 0;
    enum gw_s3_err kerr;
    if (slash == NULL || blen == 0 || blen > 63 || klen == 0 ||
        gw_s3_names_bucket_check(p, blen) != CN_OK ||
        gw_s3_names_key_check(slash + 1, klen, &kerr) != CN_OK) {
        err = GW_S3_INVALID_ARGUMENT;
    } else {
        memcpy(c->src_bucket, p, blen);
        c->src_bucket[blen] = '\0';
        c->src_bucket_len = blen;
        c->src_skey_len = gw_keys_object(c->src_skey, p, blen, slash + 1, klen);
    }
    cn_free(dec);
    return err;
}

void gw_s3_object_copy(struct gw_req *r)
{
    struct gw_s3_copy *c = cn_calloc(1, sizeof(*c));
    c->o.skey_len = gw_keys_object(c->o.skey, r->bucket, r->bucket_len, r->key, r->key_len);
    r->h = c;
    r->h_free = gw_s3_copy_free;
    enum gw_s3_err err = gw_s3_copy_parse_source(r, c);
    if (err != GW_S3_OK) {
        gw_req_error(r, err, "Copy Source must mention the source bucket and key: "
                             "sourcebucket/sourcekey.");
        return;
    }
    gw_s3_bucket_require(r, gw_s3_copy_bucket_ok);
}
