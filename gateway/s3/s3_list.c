/* Object listings. Pages of storage keys "o/<bucket>/<prefix>..." are asked
 * for in order; keys under a common prefix are rolled up, and the next page
 * starts after the whole prefix (prefix + 0xFF: no UTF-8 key holds that
 * byte), so a huge "folder" costs one round trip, not one per key. */
#include "s3_list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "checksum.h"
#include "keys.h"
#include "lo_map.h"
#include "s3_bucket.h"
#include "s3_names.h"
#include "s3_reply.h"
#include "store.h"
#include "xml.h"

#include "cn/alloc.h"

#define GW_S3_LIST_PAGE 1000
#define GW_S3_LIST_MAX_ROUNDS 10000

struct gw_s3_list_item {
    char *key;              /* user key, or common prefix */
    size_t key_len;
    int is_prefix;
    uint64_t size;
    uint64_t ts;
    char etag[129];
};

struct gw_s3_list {
    struct gw_hstate hs;         /* r->state (request.h) */
    int v2;
    int versions;                /* ListObjectVersions: every object is version "null" */
    int url;
    int fetch_owner;
    const struct gw_req_param *prefix, *delim, *marker, *token, *start_after;
    uint32_t max_keys;
    char sprefix[GW_KEYS_MAX];   /* "o/<bucket>/" + prefix */
    size_t base_len;             /* length of "o/<bucket>/" */
    size_t sprefix_len;
    char after[GW_KEYS_MAX + 2];
    size_t after_len;
    struct gw_s3_list_item *items;
    uint32_t n_items;
    int truncated;
    int rounds;
};

static void gw_s3_list_free(struct gw_hstate *hs);
static const struct gw_hstate_type gw_s3_list_hstate = {"gw_s3_list", gw_s3_list_free};

static void gw_s3_list_free(struct gw_hstate *hs)
{
    struct gw_s3_list *l = GW_HSTATE(hs, gw_s3_list);
    for (uint32_t i = 0; i < l->n_items; i++)
        cn_free(l->items[i].key);
    cn_free(l->items);
    cn_free(l);
}

/* Sets the storage "after" key from a user key (plus 0xFF to skip a prefix). */
static void gw_s3_list_set_after(struct gw_s3_list *l, const char *k, size_t len, int skip_all)
{
    len = CN_MIN(len, (size_t)1024);
    memcpy(l->after, l->sprefix, l->base_len);
    memcpy(l->after + l->base_len, k, len);
    l->after_len = l->base_len + len;
    if (skip_all)
        l->after[l->after_len++] = (char)0xff;
}

void gw_s3_list_text_elem(struct gw_xml_writer *w, int url, const char *name, const char *s,
                          size_t len)
{
    if (!url) {
        gw_xml_elem(w, name, s, len);
        return;
    }
    char *enc = cn_malloc(3 * len + 1);
    size_t n = gw_s3_names_uri_encode(s, len, enc, 3 * len, 1);
    gw_xml_elem(w, name, enc, n);
    cn_free(enc);
}

void gw_s3_list_param_echo(struct gw_xml_writer *w, int url, const char *name,
                           const struct gw_req_param *p, int always)
{
    if (p != NULL)
        gw_s3_list_text_elem(w, url, name, p->value, p->value_len);
    else if (always)
        gw_xml_elem(w, name, "", 0);
}

static void gw_s3_list_text(struct gw_s3_list *l, struct gw_xml_writer *w, const char *name,
                            const char *s, size_t len)
{
    gw_s3_list_text_elem(w, l->url, name, s, len);
}

static void gw_s3_list_param_elem(struct gw_s3_list *l, struct gw_xml_writer *w, const char *name,
                                  const struct gw_req_param *p, int always)
{
    gw_s3_list_param_echo(w, l->url, name, p, always);
}

/* The last item as the next marker / continuation token. */
static void gw_s3_list_next(struct gw_s3_list *l, struct gw_xml_writer *w)
{
    const struct gw_s3_list_item *last = &l->items[l->n_items - 1];
    if (!l->v2) {
        gw_s3_list_text(l, w, "NextMarker", last->key, last->key_len);
        return;
    }
    /* the token is the storage-side "after" of the next page, base64 */
    char raw[1030];
    size_t n = CN_MIN(last->key_len, (size_t)1024);
    memcpy(raw, last->key, n);
    if (last->is_prefix)
        raw[n++] = (char)0xff;
    char b64[1400];
    size_t bl = gw_checksum_base64_encode(raw, n, b64);
    gw_xml_elem(w, "NextContinuationToken", b64, bl);
}

/* The owner element of an entry: the bucket's owner (a listing does not
 * read each object's ACL; another account may be allowed to list, access.h),
 * with the display name when that is the caller. */
static void gw_s3_list_owner(const struct gw_req *r, struct gw_xml_writer *w)
{
    const char *id = r->access_cfg != NULL ? r->access_cfg->owner : r->auth.cred->owner_id;
    gw_xml_open(w, "Owner");
    gw_xml_elem_str(w, "ID", id);
    if (strcmp(id, r->auth.cred->owner_id) == 0)
        gw_xml_elem_str(w, "DisplayName", r->auth.cred->display_name);
    gw_xml_close(w);
}

/* ListVersionsResult of a bucket that was never versioned: each object is
 * its only version, "null", and the latest (as S3 lists such a bucket). */
static void gw_s3_list_versions_doc(struct gw_req *r, struct gw_s3_list *l,
                                    struct gw_xml_writer *w)
{
    gw_xml_open_ns(w, "ListVersionsResult", GW_XML_S3_NS);
    gw_xml_elem(w, "Name", r->bucket, r->bucket_len);
    gw_s3_list_param_elem(l, w, "Prefix", l->prefix, 1);
    gw_s3_list_param_elem(l, w, "KeyMarker", l->marker, 1);
    gw_xml_elem_str(w, "VersionIdMarker", gw_req_param(r, "version-id-marker") != NULL
                                              ? gw_req_param(r, "version-id-marker")->value : "");
    gw_xml_elem_u64(w, "MaxKeys", l->max_keys);
    gw_s3_list_param_elem(l, w, "Delimiter", l->delim, 0);
    if (l->url)
        gw_xml_elem_str(w, "EncodingType", "url");
    gw_xml_elem_bool(w, "IsTruncated", l->truncated);
    if (l->truncated && l->n_items > 0) {
        const struct gw_s3_list_item *last = &l->items[l->n_items - 1];
        gw_s3_list_text(l, w, "NextKeyMarker", last->key, last->key_len);
        if (!last->is_prefix)
            gw_xml_elem_str(w, "NextVersionIdMarker", "null");
    }
    for (uint32_t i = 0; i < l->n_items; i++) {
        const struct gw_s3_list_item *it = &l->items[i];
        if (it->is_prefix)
            continue;
        gw_xml_open(w, "Version");
        gw_s3_list_text(l, w, "Key", it->key, it->key_len);
        gw_xml_elem_str(w, "VersionId", "null");
        gw_xml_elem_bool(w, "IsLatest", 1);
        gw_xml_elem_time_ms(w, "LastModified", (int64_t)(it->ts / 1000));
        char q[140];
        snprintf(q, sizeof(q), "\"%s\"", it->etag);
        gw_xml_elem_str(w, "ETag", q);
        gw_xml_elem_u64(w, "Size", it->size);
        gw_s3_list_owner(r, w);
        gw_xml_elem_str(w, "StorageClass", "STANDARD");
        gw_xml_close(w);
    }
}

/* ListBucketResult (v1 or v2) up to its Contents. */
static void gw_s3_list_bucket_doc(struct gw_req *r, struct gw_s3_list *l,
                                  struct gw_xml_writer *w)
{
    gw_xml_open_ns(w, "ListBucketResult", GW_XML_S3_NS);
    gw_xml_elem(w, "Name", r->bucket, r->bucket_len);
    gw_s3_list_param_elem(l, w, "Prefix", l->prefix, 1);
    if (l->v2) {
        gw_s3_list_param_elem(l, w, "StartAfter", l->start_after, 0);
        if (l->token != NULL)
            gw_xml_elem(w, "ContinuationToken", l->token->value, l->token->value_len);
        gw_xml_elem_u64(w, "KeyCount", l->n_items);
    } else {
        gw_s3_list_param_elem(l, w, "Marker", l->marker, 1);
    }
    gw_xml_elem_u64(w, "MaxKeys", l->max_keys);
    gw_s3_list_param_elem(l, w, "Delimiter", l->delim, 0);
    if (l->url)
        gw_xml_elem_str(w, "EncodingType", "url");
    gw_xml_elem_bool(w, "IsTruncated", l->truncated);
    /* v1 has NextMarker only with a delimiter, as S3 (clients page on the
     * last key otherwise); v2 always has its token */
    int has_delim = l->delim != NULL && l->delim->value_len > 0;
    if (l->truncated && l->n_items > 0 && (l->v2 || has_delim))
        gw_s3_list_next(l, w);
    for (uint32_t i = 0; i < l->n_items; i++) {
        const struct gw_s3_list_item *it = &l->items[i];
        if (it->is_prefix)
            continue;
        gw_xml_open(w, "Contents");
        gw_s3_list_text(l, w, "Key", it->key, it->key_len);
        gw_xml_elem_time_ms(w, "LastModified", (int64_t)(it->ts / 1000));
        char q[140];
        snprintf(q, sizeof(q), "\"%s\"", it->etag);
        gw_xml_elem_str(w, "ETag", q);
        gw_xml_elem_u64(w, "Size", it->size);
        if (!l->v2 || l->fetch_owner)
            gw_s3_list_owner(r, w);
        gw_xml_elem_str(w, "StorageClass", "STANDARD");
        gw_xml_close(w);
    }
}

static void gw_s3_list_reply(struct gw_req *r)
{
    struct gw_s3_list *l = GW_REQ_STATE(r, gw_s3_list);
    struct evbuffer *doc = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    if (l->versions)
        gw_s3_list_versions_doc(r, l, &w);
    else
        gw_s3_list_bucket_doc(r, l, &w);
    for (uint32_t i = 0; i < l->n_items; i++) {
        const struct gw_s3_list_item *it = &l->items[i];
        if (!it->is_prefix)
            continue;
        gw_xml_open(&w, "CommonPrefixes");
        gw_s3_list_text(l, &w, "Prefix", it->key, it->key_len);
        gw_xml_close(&w);
    }
    gw_xml_close(&w);
    if (gw_xml_writer_finish(&w) != CN_OK)
        gw_req_error(r, GW_S3_INTERNAL_ERROR, NULL);
    else if (w.replaced && !l->url)
        gw_req_error(r, GW_S3_INVALID_ARGUMENT, GW_XML_NEEDS_URL_MESSAGE);
    else
        gw_req_reply_xml(r, 200, doc);
    evbuffer_free(doc);
}

static void gw_s3_list_add(struct gw_s3_list *l, const char *k, size_t len, int is_prefix,
                           const struct gw_store_entry *e)
{
    struct gw_s3_list_item *it = &l->items[l->n_items++];
    it->key = cn_memdup(k, len);
    it->key_len = len;
    it->is_prefix = is_prefix;
    if (e != NULL) {
        it->size = e->size;
        it->ts = e->ts;
        memcpy(it->etag, e->etag, sizeof(it->etag));
        /* a large object's record holds its size apart from the record's
         * (osize, or "<etag> <size>" before protocol version 3: lo_map.h) */
        size_t tl;
        uint64_t size;
        if (gw_lo_map_record_size(it->etag, strlen(it->etag), e->has_osize, e->osize, &tl,
                                  &size)) {
            it->etag[tl] = '\0';
            it->size = size;
        }
    }
}

static void gw_s3_list_page(struct gw_req *r);

/* Rolls one page into items. Returns 1 when the listing is complete. */
static int gw_s3_list_absorb(struct gw_s3_list *l, const struct gw_store_list_result *res)
{
    size_t plen = l->prefix != NULL ? l->prefix->value_len : 0;
    const char *d = l->delim != NULL && l->delim->value_len > 0 ? l->delim->value : NULL;
    size_t dlen = d != NULL ? l->delim->value_len : 0;
    for (uint32_t i = 0; i < res->n_ents; i++) {
        const struct gw_store_entry *e = &res->ents[i];
        if (e->key_len < l->base_len)
            continue;
        const char *k = e->key + l->base_len;
        size_t klen = e->key_len - l->base_len;
        size_t cut = 0;
        if (d != NULL) {
            for (size_t j = plen; j + dlen <= klen; j++)
                if (memcmp(k + j, d, dlen) == 0) {
                    cut = j + dlen;
                    break;
                }
        }
        if (cut > 0 && l->n_items > 0) {
            const struct gw_s3_list_item *last = &l->items[l->n_items - 1];
            if (last->is_prefix && last->key_len == cut && memcmp(last->key, k, cut) == 0)
                continue;
        }
        if (l->n_items == l->max_keys) {
            l->truncated = 1;
            return 1;
        }
        gw_s3_list_add(l, k, cut > 0 ? cut : klen, cut > 0, cut > 0 ? NULL : e);
    }
    if (!res->more || res->n_ents == 0)
        return 1;
    const struct gw_store_entry *e = &res->ents[res->n_ents - 1];
    const struct gw_s3_list_item *last = l->n_items > 0 ? &l->items[l->n_items - 1] : NULL;
    if (last != NULL && last->is_prefix && e->key_len - l->base_len >= last->key_len &&
        memcmp(e->key + l->base_len, last->key, last->key_len) == 0)
        gw_s3_list_set_after(l, last->key, last->key_len, 1);
    else
        gw_s3_list_set_after(l, e->key + l->base_len, e->key_len - l->base_len, 0);
    return 0;
}

static void gw_s3_list_on_page(struct gw_store_list_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    struct gw_s3_list *l = GW_REQ_STATE(r, gw_s3_list);
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    if (gw_s3_list_absorb(l, res) || ++l->rounds > GW_S3_LIST_MAX_ROUNDS)
        gw_s3_list_reply(r);
    else
        gw_s3_list_page(r);
}

static void gw_s3_list_page(struct gw_req *r)
{
    struct gw_s3_list *l = GW_REQ_STATE(r, gw_s3_list);
    gw_req_hold(r);
    gw_store_list(r->s3->store, l->sprefix, l->sprefix_len, l->after, l->after_len,
                  GW_S3_LIST_PAGE, gw_s3_list_on_page, r);
}

static void gw_s3_list_bucket_ok(struct gw_req *r)
{
    struct gw_s3_list *l = GW_REQ_STATE(r, gw_s3_list);
    if (l->max_keys == 0) {
        gw_s3_list_reply(r);
        return;
    }
    gw_s3_list_page(r);
}

enum gw_s3_err gw_s3_list_params_parse(struct gw_req *r, const char *marker_name,
                                       size_t marker_max, struct gw_s3_list_params *p)
{
    memset(p, 0, sizeof(*p));
    const struct gw_req_param *enc = gw_req_param(r, "encoding-type");
    if (enc != NULL && strcmp(enc->value, "url") != 0)
        return GW_S3_INVALID_ARGUMENT;
    p->url = enc != NULL;
    p->prefix = gw_req_param(r, "prefix");
    p->delim = gw_req_param(r, "delimiter");
    p->marker = marker_name != NULL ? gw_req_param(r, marker_name) : NULL;
    p->max_keys = (uint32_t)r->s3->opts.max_keys;
    const struct gw_req_param *mk = gw_req_param(r, "max-keys");
    if (mk != NULL) {
        char *end;
        long v = strtol(mk->value, &end, 10);
        if (mk->value_len == 0 || *end != '\0' || v < 0)
            return GW_S3_INVALID_ARGUMENT;
        p->max_keys = (uint32_t)CN_MIN(v, r->s3->opts.max_keys);
    }
    if (p->prefix != NULL && p->prefix->value_len > 1024)
        return GW_S3_KEY_TOO_LONG;
    if (marker_max > 0 && p->marker != NULL && p->marker->value_len > marker_max)
        return GW_S3_KEY_TOO_LONG;
    return GW_S3_OK;
}

int gw_s3_list_params_marker_is_prefix(const struct gw_s3_list_params *p)
{
    const struct gw_req_param *m = p->marker, *d = p->delim;
    return m != NULL && d != NULL && d->value_len > 0 && m->value_len >= d->value_len &&
           memcmp(m->value + m->value_len - d->value_len, d->value, d->value_len) == 0;
}

/* Reads the query; GW_S3_OK or the error to answer. */
static enum gw_s3_err gw_s3_list_parse(struct gw_req *r, struct gw_s3_list *l)
{
    const struct gw_req_param *lt = gw_req_param(r, "list-type");
    l->versions = gw_req_param(r, "versions") != NULL;
    l->v2 = !l->versions && lt != NULL && strcmp(lt->value, "2") == 0;
    struct gw_s3_list_params p;
    enum gw_s3_err err = gw_s3_list_params_parse(r, l->v2 ? NULL : l->versions ? "key-marker"
                                                                                : "marker", 0, &p);
    if (err != GW_S3_OK)
        return err;
    const struct gw_req_param *fo = gw_req_param(r, "fetch-owner");
    l->fetch_owner = fo != NULL && strcmp(fo->value, "true") == 0;
    l->url = p.url;
    l->prefix = p.prefix;
    l->delim = p.delim;
    l->marker = p.marker;
    l->max_keys = p.max_keys;
    if (l->delim != NULL && l->delim->value_len == 0)
        l->delim = NULL; /* S3: an empty delimiter is none, and is not echoed */
    l->items = cn_calloc(l->max_keys + 1, sizeof(*l->items));
    l->base_len = gw_keys_object_prefix(l->sprefix, r->bucket, r->bucket_len);
    l->sprefix_len = l->base_len;
    if (l->prefix != NULL) {
        memcpy(l->sprefix + l->base_len, l->prefix->value, l->prefix->value_len);
        l->sprefix_len += l->prefix->value_len;
    }
    if (l->v2) {
        l->token = gw_req_param(r, "continuation-token");
        l->start_after = gw_req_param(r, "start-after");
        /* an empty token is no token (s3-tests' continuationtoken_empty);
         * it is still echoed */
        if (l->token != NULL && l->token->value_len > 0) {
            unsigned char raw[1100];
            size_t n;
            if (gw_checksum_base64_decode(l->token->value, l->token->value_len, raw, sizeof(raw),
                                          &n) != CN_OK || n == 0 || n > 1025)
                return GW_S3_INVALID_ARGUMENT;
            gw_s3_list_set_after(l, (const char *)raw, n, 0);
        } else if (l->start_after != NULL) {
            gw_s3_list_set_after(l, l->start_after->value, l->start_after->value_len, 0);
        }
    } else {
        const struct gw_req_param *vm = gw_req_param(r, "version-id-marker");
        if (l->versions && vm != NULL && vm->value_len > 0 &&
            (l->marker == NULL || l->marker->value_len == 0))
            return GW_S3_INVALID_ARGUMENT; /* S3: no version-id marker without a key marker */
        if (l->marker != NULL && l->marker->value_len > 0)
            gw_s3_list_set_after(l, l->marker->value, l->marker->value_len,
                                 gw_s3_list_params_marker_is_prefix(&p));
    }
    return GW_S3_OK;
}

void gw_s3_list_objects(struct gw_req *r)
{
    struct gw_s3_list *l = cn_calloc(1, sizeof(*l));
    gw_req_state_set(r, &l->hs, &gw_s3_list_hstate);
    enum gw_s3_err err = gw_s3_list_parse(r, l);
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    gw_s3_bucket_require(r, gw_s3_list_bucket_ok);
}
