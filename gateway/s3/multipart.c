/* Multipart uploads (multipart.h). Every handler keeps its state in one
 * struct gw_multipart (r->state); storage calls hold the request. Part bodies go
 * through lo_put.c (streamed into chunks, committed only after the body
 * verified), so a part of any size costs (write_inflight + 1) chunks of
 * memory. */
#include "multipart.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checksum.h"
#include "access.h"
#include "bucket_owner.h"
#include "cond_write.h"
#include "keys.h"
#include "lo_copy.h"
#include "lo_map.h"
#include "lo_put.h"
#include "lo_reclaim.h"
#include "lo_writer.h"
#include "objmeta.h"
#include "s3_body.h"
#include "s3_bucket.h"
#include "s3_list.h"
#include "s3_names.h"
#include "s3_object.h"
#include "s3_reply.h"
#include "s3_tagging.h"
#include "s3_versions.h"
#include "store.h"
#include "versioning.h"
#include "xml.h"

#include "cn/alloc.h"
#include "cn/hex.h"
#include "cn/hlc.h"
#include "cn/log.h"

#define GW_MP_MIN_PART (5u * 1024 * 1024) /* S3: every part but the last */
#define GW_MP_MAX_PARTS 10000
#define GW_MP_ID_LEN 16

/* A stored part, from its record's etag field. */
struct gw_mp_part {
    uint32_t number;
    char md5[33];
    struct gw_lo_seg seg;
    uint64_t ts;
    char ck[GW_CHECKSUM_B64_MAX]; /* the upload's algorithm's checksum ("": none) */
};

/* The upload record's meta names the upload's checksum algorithm under this
 * header (CreateMultipartUpload's x-amz-checksum-algorithm); Complete
 * replaces it by the object's composite x-amz-checksum-* and
 * x-amz-checksum-type. */
static const char gw_mp_algo_header[] = "x-amz-checksum-algorithm";
static const char gw_mp_type_header[] = "x-amz-checksum-type";
/* the upload an object was completed from (an internal meta entry, objmeta.h):
 * a Complete retried after its reply was lost is recognised by it */
static const char gw_mp_upload_meta[] = ":upload";

struct gw_multipart {
    struct gw_hstate hs;
    char okey[GW_KEYS_MAX];       /* "o/" bucket "/" key */
    size_t okey_len;
    char ukey[GW_LO_KEY_MAX];     /* the upload record */
    size_t ukey_len;
    char pprefix[GW_LO_KEY_MAX];  /* "p/" ... upload_id "/" */
    size_t pprefix_len;
    char upload_id[GW_MP_ID_LEN + 1];
    uint32_t part_number;
    struct gw_lo_put *lp;         /* UploadPart body */
    struct gw_lo_writer *w;       /* UploadPartCopy bytes */
    struct gw_lo_copy *copy;      /* UploadPartCopy from a chunked source */
    char src[GW_KEYS_MAX];        /* UploadPartCopy source object ("o/": its chunks' names) */
    size_t src_len;
    char src_rkey[GW_VERSIONING_KEY_MAX]; /* the record read: src, or a version's */
    size_t src_rkey_len;
    struct evbuffer *copy_data;
    struct gw_lo_seg seg;         /* the new part's chunks */
    char md5[33];
    char part_ck[GW_CHECKSUM_B64_MAX]; /* UploadPart: the checksum the client sent */
    enum gw_checksum_algo part_ck_algo;
    int have_part_ck;
    int have_algo;                /* the upload has a checksum algorithm: */
    enum gw_checksum_algo algo;
    int full;                     /* ... of type FULL_OBJECT (else COMPOSITE) */
    char composite[GW_CHECKSUM_COMPOSITE_MAX]; /* Complete: the object's checksum */
    struct gw_mp_part old_part;   /* the part record a re-upload replaces */
    int have_old_part;
    char *meta;                   /* the upload's stored headers */
    size_t meta_len;
    uint64_t initiated_ts;
    struct gw_mp_part *parts;     /* listed parts, ascending */
    uint32_t n_parts, cap_parts;
    uint32_t list_limit;          /* ListParts: max-parts */
    struct gw_xml_complete cmp;
    struct gw_lo_map old_map;     /* the object Complete replaces */
    int have_old;
    uint64_t old_ts;
    struct gw_blob *blob;
    char etag[GW_CHECKSUM_MULTIPART_ETAG_MAX];
    char etag_field[GW_LO_ETAG_MAX];
    uint64_t ts;
    gw_req_cb then;
    gw_req_cb on_missing;         /* the upload record is gone: NULL answers NoSuchUpload */
    enum gw_s3_err retry_err;     /* Complete: the answer when it is not a retry (0: NoSuchUpload) */
    const char *retry_why;        /* ... and its message (static) */
    struct gw_cond_write cw;      /* Complete: If-Match / If-None-Match */
};

static void gw_multipart_free(struct gw_hstate *hs);
static const struct gw_hstate_type gw_multipart_hstate = {"gw_multipart", gw_multipart_free};

static void gw_multipart_free(struct gw_hstate *hs)
{
    struct gw_multipart *m = GW_HSTATE(hs, gw_multipart);
    gw_lo_put_free(m->lp);
    gw_lo_writer_abandon(m->w);
    gw_lo_copy_free(m->copy);
    if (m->copy_data != NULL)
        evbuffer_free(m->copy_data);
    cn_free(m->meta);
    cn_free(m->parts);
    gw_xml_complete_fini(&m->cmp);
    gw_lo_map_fini(&m->old_map);
    gw_blob_unref(m->blob);
    gw_cond_write_fini(&m->cw);
    cn_free(m);
}

/* Builds the record keys of upload id (16 hex digits). */
static void gw_multipart_keys(struct gw_req *r, struct gw_multipart *m, const char *id)
{
    memcpy(m->upload_id, id, GW_MP_ID_LEN);
    m->upload_id[GW_MP_ID_LEN] = '\0';
    m->okey_len = gw_keys_object(m->okey, r->bucket, r->bucket_len, r->key, r->key_len);
    memcpy(m->ukey, m->okey, m->okey_len);
    m->ukey[0] = 'u';
    m->ukey[m->okey_len] = '\0';
    memcpy(m->ukey + m->okey_len + 1, id, GW_MP_ID_LEN);
    m->ukey_len = m->okey_len + 1 + GW_MP_ID_LEN;
    memcpy(m->pprefix, m->ukey, m->ukey_len);
    m->pprefix[0] = 'p';
    m->pprefix[m->ukey_len] = '/';
    m->pprefix_len = m->ukey_len + 1;
}

static size_t gw_multipart_part_key(const struct gw_multipart *m, uint32_t n, char *out)
{
    memcpy(out, m->pprefix, m->pprefix_len);
    int k = snprintf(out + m->pprefix_len, GW_LO_KEY_MAX - m->pprefix_len, "%05u", n);
    return m->pprefix_len + (size_t)k;
}

static struct gw_multipart *gw_multipart_state(struct gw_req *r)
{
    if (r->state == NULL) {
        struct gw_multipart *m = cn_calloc(1, sizeof(*m));
        gw_req_state_set(r, &m->hs, &gw_multipart_hstate);
    }
    return GW_REQ_STATE(r, gw_multipart);
}

/* Reads uploadId into the state; NoSuchUpload when it is not one of ours. */
static enum gw_s3_err gw_multipart_upload_id(struct gw_req *r, struct gw_multipart *m)
{
    const struct gw_req_param *p = gw_req_param(r, "uploadId");
    if (p == NULL || p->value_len != GW_MP_ID_LEN)
        return GW_S3_NO_SUCH_UPLOAD;
    for (size_t i = 0; i < GW_MP_ID_LEN; i++) {
        char c = p->value[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return GW_S3_NO_SUCH_UPLOAD;
    }
    gw_multipart_keys(r, m, p->value);
    return GW_S3_OK;
}

/* A part record's etag field: "<md5> <size> <ver hex> <chunk_len>", then
 * " <base64>" when the part carries the upload's checksum (at most
 * 32+1+10+1+16+1+10+1+44 = 116 bytes for a 5 GiB part). */
static size_t gw_multipart_part_etag(char *out, const char *md5, const struct gw_lo_seg *s,
                                     const char *ck)
{
    return (size_t)snprintf(out, GW_LO_ETAG_MAX, "%s %llu %016llx %u%s%s", md5,
                            (unsigned long long)s->size, (unsigned long long)s->ver,
                            s->chunk_len, ck[0] != '\0' ? " " : "", ck);
}

static int gw_multipart_part_parse(const char *etag, struct gw_mp_part *p)
{
    unsigned long long size, ver;
    unsigned clen;
    char md5[33];
    int end = 0;
    if (sscanf(etag, "%32[0-9a-f] %llu %16llx %u%n", md5, &size, &ver, &clen, &end) != 4 ||
        clen == 0 || strlen(md5) != 32)
        return CN_INVAL;
    const char *ck = etag + end;
    size_t ckl = 0;
    if (*ck == ' ') {
        ck++;
        ckl = strlen(ck);
        if (ckl == 0 || ckl >= sizeof(p->ck) || strspn(ck, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                           "abcdefghijklmnopqrstuvwxyz"
                                                           "0123456789+/=") != ckl)
            return CN_INVAL;
    } else if (*ck != '\0') {
        return CN_INVAL;
    }
    memcpy(p->md5, md5, 33);
    memcpy(p->ck, ck, ckl);
    p->ck[ckl] = '\0';
    p->seg = (struct gw_lo_seg){ver, size, clen};
    return CN_OK;
}

/* Replaces m->meta by a copy without the headers whose names begin with
 * drop (NULL: none), with name: value added (name NULL: none). CN_TOOBIG
 * (m->meta unchanged) when the meta already holds the most headers. */
static int gw_multipart_meta_edit(struct gw_multipart *m, const char *drop, const char *name,
                                   const char *value)
{
    struct gw_objmeta in, out = {.n = 0};
    if (gw_objmeta_decode(&in, m->meta, m->meta_len) != CN_OK)
        in.n = 0;
    size_t dl = drop != NULL ? strlen(drop) : 0;
    for (size_t i = 0; i < in.n; i++) {
        const struct gw_objmeta_header *h = &in.h[i];
        if (drop != NULL && h->name_len >= dl && strncmp(h->name, drop, dl) == 0)
            continue;
        gw_objmeta_add(&out, h->name, h->name_len, h->value, h->value_len);
    }
    if (name != NULL && gw_objmeta_add(&out, name, strlen(name), value, strlen(value)) != CN_OK)
        return CN_TOOBIG;
    char *enc;
    size_t len;
    gw_objmeta_encode(&out, &enc, &len);
    cn_free(m->meta);
    m->meta = enc;
    m->meta_len = len;
    return CN_OK;
}

/* Sets m->have_algo / m->algo from the upload record's meta. */
static void gw_multipart_read_algo(struct gw_multipart *m)
{
    struct gw_objmeta om;
    m->have_algo = 0;
    if (gw_objmeta_decode(&om, m->meta, m->meta_len) != CN_OK)
        return;
    const struct gw_objmeta_header *h = gw_objmeta_find(&om, gw_mp_algo_header);
    m->have_algo = h != NULL && gw_checksum_algo_from_name(h->value, h->value_len, &m->algo) ==
                                    CN_OK;
    const struct gw_objmeta_header *t = gw_objmeta_find(&om, gw_mp_type_header);
    m->full = t != NULL && gw_http_token_eq(t->value, t->value_len, "FULL_OBJECT");
}

static const char *gw_multipart_type_name(const struct gw_multipart *m)
{
    return m->full ? "FULL_OBJECT" : "COMPOSITE";
}

/* The part number of a part record key (its last 5 characters). */
static uint32_t gw_multipart_key_number(const char *key, size_t len, size_t prefix_len)
{
    if (len != prefix_len + 5)
        return 0;
    uint32_t n = 0;
    for (size_t i = prefix_len; i < len; i++) {
        if (key[i] < '0' || key[i] > '9')
            return 0;
        n = n * 10 + (uint32_t)(key[i] - '0');
    }
    return n;
}

/* ---- the upload record ---------------------------------------------- */

static void gw_multipart_on_upload_head(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    if (!gw_req_release(r))
        return;
    if (res->rc == CN_NOTFOUND && m->on_missing != NULL) {
        m->on_missing(r);
        return;
    }
    if (res->rc == CN_NOTFOUND) {
        gw_req_error(r, GW_S3_NO_SUCH_UPLOAD, NULL);
        return;
    }
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    if (!gw_bucket_owner_allows_upload(r, (const char *)res->reply->m.etag.ptr,
                                       res->reply->m.etag.len)) {
        gw_req_error(r, GW_S3_ACCESS_DENIED, NULL);
        return;
    }
    cn_free(m->meta);
    m->meta = cn_memdup(res->reply->m.meta.ptr, res->reply->m.meta.len);
    m->meta_len = res->reply->m.meta.len;
    m->initiated_ts = res->reply->m.ts;
    gw_multipart_read_algo(m);
    m->then(r);
}

/* Checks that the upload exists (keeping its meta), then runs next. */
static void gw_multipart_require_upload(struct gw_req *r, gw_req_cb next)
{
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    m->then = next;
    gw_req_hold(r);
    gw_store_head(r->s3->store, m->ukey, m->ukey_len, gw_multipart_on_upload_head, r);
}

/* ---- listing an upload's parts --------------------------------------- */

static void gw_multipart_list_page(struct gw_req *r, const char *after, size_t after_len);

static void gw_multipart_on_list(struct gw_store_list_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    if (!gw_req_release(r))
        return;
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    for (uint32_t i = 0; i < res->n_ents && m->n_parts < m->list_limit; i++) {
        const struct gw_store_entry *e = &res->ents[i];
        struct gw_mp_part p = {.ts = e->ts};
        p.number = gw_multipart_key_number(e->key, e->key_len, m->pprefix_len);
        if (p.number == 0 || gw_multipart_part_parse(e->etag, &p) != CN_OK) {
            CN_LOGR(CN_LOG_WARN, r->id, "skipping a malformed part record");
            continue;
        }
        if (m->n_parts == m->cap_parts) {
            m->cap_parts = m->cap_parts ? 2 * m->cap_parts : 64;
            m->parts = cn_realloc(m->parts, m->cap_parts * sizeof(*m->parts));
        }
        m->parts[m->n_parts++] = p;
    }
    if (res->more && res->n_ents > 0 && m->n_parts < m->list_limit) {
        const struct gw_store_entry *last = &res->ents[res->n_ents - 1];
        char after[GW_LO_KEY_MAX];
        size_t al = CN_MIN((size_t)last->key_len, sizeof(after));
        memcpy(after, last->key, al);
        gw_multipart_list_page(r, after, al);
        return;
    }
    m->then(r);
}

static void gw_multipart_list_page(struct gw_req *r, const char *after, size_t after_len)
{
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    uint32_t limit = CN_MIN(m->list_limit - m->n_parts + 1, 1000u);
    gw_req_hold(r);
    gw_store_list(r->s3->store, m->pprefix, m->pprefix_len, after, after_len, limit,
                  gw_multipart_on_list, r);
}

/* Lists up to limit parts after part number `marker` into m->parts, then
 * runs next. */
static void gw_multipart_list(struct gw_req *r, uint32_t marker, uint32_t limit, gw_req_cb next)
{
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    m->then = next;
    m->list_limit = limit;
    m->n_parts = 0;
    char after[GW_LO_KEY_MAX];
    size_t al = marker > 0 ? gw_multipart_part_key(m, marker, after) : 0;
    gw_multipart_list_page(r, after, al);
}

/* Deletes records without waiting (part and upload records after Complete
 * or Abort; a failure leaves a record that a later Abort removes). */
static void gw_multipart_on_forget(struct gw_store_result *res, void *arg)
{
    (void)arg;
    if (res->rc != CN_OK)
        CN_LOG(CN_LOG_WARN, "multipart record delete failed: %s", res->err);
}

static void gw_multipart_forget_parts(struct gw_req *r, struct gw_multipart *m)
{
    uint64_t ts = cn_hlc_now(cn_hlc_default());
    for (uint32_t i = 0; i < m->n_parts; i++) {
        char key[GW_LO_KEY_MAX];
        size_t kl = gw_multipart_part_key(m, m->parts[i].number, key);
        gw_store_delete(r->s3->store, key, kl, r->id, CN_MAX(ts, m->parts[i].ts + 1),
                        gw_multipart_on_forget, NULL);
    }
}

/* ---- CreateMultipartUpload ------------------------------------------- */

static void gw_multipart_on_created(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    if (!gw_req_release(r))
        return;
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    struct evbuffer *doc = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    gw_xml_open_ns(&w, "InitiateMultipartUploadResult", GW_XML_S3_NS);
    gw_xml_elem(&w, "Bucket", r->bucket, r->bucket_len);
    gw_xml_elem(&w, "Key", r->key, r->key_len);
    gw_xml_elem_str(&w, "UploadId", m->upload_id);
    gw_xml_close(&w);
    gw_xml_writer_finish(&w);
    gw_req_reply_start(r, 200);
    if (m->have_algo) {
        const char *an = gw_checksum_algo_name(m->algo);
        const char *tn = gw_multipart_type_name(m);
        gw_req_reply_header(r, gw_mp_algo_header, an, strlen(an));
        gw_req_reply_header(r, gw_mp_type_header, tn, strlen(tn));
    }
    gw_req_reply_header(r, "Content-Type", "application/xml", 15);
    gw_req_reply_send_headers(r, evbuffer_get_length(doc));
    evbuffer_add_buffer(gw_req_reply_body(r), doc);
    gw_req_reply_end(r);
    evbuffer_free(doc);
}

/* CreateMultipartUpload's x-amz-checksum-algorithm (and -type): composite
 * checksums of CRC32, CRC32C, SHA1 and SHA256. */
static enum gw_s3_err gw_multipart_create_algo(struct gw_req *r, struct gw_multipart *m,
                                               const char **why)
{
    size_t al = 0, tl = 0;
    const char *a = gw_req_header(r, gw_mp_algo_header, &al);
    const char *t = gw_req_header(r, "x-amz-checksum-type", &tl);
    if (a == NULL) {
        if (t != NULL) {
            *why = "The x-amz-checksum-type header can only be used with the "
                   "x-amz-checksum-algorithm header.";
            return GW_S3_INVALID_REQUEST;
        }
        return GW_S3_OK;
    }
    if (gw_checksum_algo_from_name(a, al, &m->algo) != CN_OK) {
        *why = "Checksum algorithm provided is unsupported. Please try again with any of the "
               "valid types: [CRC32, CRC32C, CRC64NVME, SHA1, SHA256]";
        return GW_S3_INVALID_REQUEST;
    }
    int full = t != NULL ? gw_http_token_eq(t, tl, "FULL_OBJECT") : m->algo == GW_CHECKSUM_CRC64NVME;
    if (!full && t != NULL && !gw_http_token_eq(t, tl, "COMPOSITE")) {
        *why = "Value for x-amz-checksum-type header is invalid.";
        return GW_S3_INVALID_REQUEST;
    }
    if (full && (m->algo == GW_CHECKSUM_SHA1 || m->algo == GW_CHECKSUM_SHA256)) {
        *why = "The FULL_OBJECT checksum type is not supported with the SHA1 or SHA256 "
               "algorithms.";
        return GW_S3_INVALID_REQUEST;
    }
    if (m->algo == GW_CHECKSUM_CRC64NVME && t != NULL && !full) {
        *why = "The COMPOSITE checksum type is not supported with the CRC64NVME algorithm.";
        return GW_S3_INVALID_REQUEST;
    }
    m->have_algo = 1;
    m->full = full;
    return GW_S3_OK;
}

static void gw_multipart_create_bucket_ok(struct gw_req *r)
{
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    const char *why = NULL;
    enum gw_s3_err err = gw_multipart_create_algo(r, m, &why);
    if (err == GW_S3_OK)
        err = gw_s3_object_request_meta(r, &m->meta, &m->meta_len);
    if (err != GW_S3_OK) {
        gw_req_error(r, err, why);
        return;
    }
    if (m->have_algo &&
        (gw_multipart_meta_edit(m, NULL, gw_mp_algo_header, gw_checksum_algo_name(m->algo)) !=
             CN_OK ||
         gw_multipart_meta_edit(m, NULL, gw_mp_type_header, gw_multipart_type_name(m)) != CN_OK)) {
        gw_req_error(r, GW_S3_METADATA_TOO_LARGE, NULL);
        return;
    }
    /* the etag names the initiator: upload-id operations decide on it */
    const char *owner = r->auth.cred->owner_id;
    struct gw_store_record rec = {
        .key = m->ukey, .key_len = m->ukey_len,
        .etag = owner, .etag_len = strlen(owner),
        .meta = m->meta, .meta_len = m->meta_len,
        .ver = r->id, .ts = cn_hlc_now(cn_hlc_default()),
    };
    gw_req_hold(r);
    gw_store_put(r->s3->store, &rec, NULL, gw_multipart_on_created, r);
}

void gw_multipart_create(struct gw_req *r)
{
    struct gw_multipart *m = gw_multipart_state(r);
    char id[GW_MP_ID_LEN + 1];
    snprintf(id, sizeof(id), "%016llx", (unsigned long long)r->id);
    gw_multipart_keys(r, m, id);
    /* the tags go to the object at Complete, in the upload's meta */
    const char *why = NULL;
    char *tags;
    size_t tags_len;
    enum gw_s3_err err = gw_s3_tagging_request_tags(r, &tags, &tags_len, &why);
    cn_free(tags);
    if (err != GW_S3_OK) {
        gw_req_error(r, err, why);
        return;
    }
    gw_s3_bucket_require(r, gw_multipart_create_bucket_ok);
}

/* ---- UploadPart ------------------------------------------------------ */

/* The part is stored: answer with its ETag (or CopyPartResult). */
static void gw_multipart_part_reply(struct gw_req *r)
{
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    if (r->has_copy_src) {
        struct evbuffer *doc = evbuffer_new();
        struct gw_xml_writer w;
        gw_xml_writer_init(&w, doc);
        gw_xml_open_ns(&w, "CopyPartResult", GW_XML_S3_NS);
        gw_xml_elem_time_ms(&w, "LastModified", (int64_t)(m->ts / 1000));
        char q[40];
        snprintf(q, sizeof(q), "\"%s\"", m->md5);
        gw_xml_elem_str(&w, "ETag", q);
        gw_xml_close(&w);
        gw_xml_writer_finish(&w);
        gw_req_reply_xml(r, 200, doc);
        evbuffer_free(doc);
        return;
    }
    gw_req_reply_start(r, 200);
    gw_req_reply_headerf(r, "ETag", "\"%s\"", m->md5);
    if (m->have_part_ck) {
        const char *hn = gw_checksum_header_name(m->part_ck_algo);
        gw_req_reply_header(r, hn, m->part_ck, strlen(m->part_ck));
    }
    gw_req_reply_send_headers(r, 0);
    gw_req_reply_end(r);
}

/* The upload was completed or aborted while the part was being written:
 * the part is dropped (record and chunks) and the client told so. */
static void gw_multipart_on_recheck(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    int gone = res->rc == CN_NOTFOUND;
    if (gone) {
        char key[GW_LO_KEY_MAX];
        size_t kl = gw_multipart_part_key(m, m->part_number, key);
        gw_store_delete(r->s3->store, key, kl, r->id, m->ts + 1, gw_multipart_on_forget,
                        NULL);
        gw_lo_reclaim_segs(r->s3->reclaim, m->okey, m->okey_len, &m->seg, 1,
                           r->s3->lo.reclaim_delay_ms, r->id);
    }
    if (!gw_req_release(r))
        return;
    if (gone)
        gw_req_error(r, GW_S3_NO_SUCH_UPLOAD, NULL);
    else
        gw_multipart_part_reply(r);
}

static void gw_multipart_on_part_record(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    /* as for objects: once the record may be on a replica, keep the chunks */
    if (m->lp != NULL)
        gw_lo_put_commit(m->lp);
    if (m->w != NULL)
        gw_lo_writer_commit(m->w);
    m->w = NULL;
    if (m->copy != NULL)
        gw_lo_copy_commit(m->copy);
    if (res->rc == CN_OK && m->have_old_part)
        gw_lo_reclaim_segs(r->s3->reclaim, m->okey, m->okey_len, &m->old_part.seg, 1,
                           r->s3->lo.reclaim_delay_ms, r->id);
    if (!gw_req_release(r))
        return;
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    /* an Abort or Complete that ran meanwhile did not see this part */
    gw_req_hold(r);
    gw_store_head(r->s3->store, m->ukey, m->ukey_len, gw_multipart_on_recheck, r);
}

/* Writes the part record (the commit point of the part). */
static void gw_multipart_write_part(struct gw_req *r)
{
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    char key[GW_LO_KEY_MAX];
    size_t kl = gw_multipart_part_key(m, m->part_number, key);
    const char *ck = m->have_part_ck && m->have_algo && m->part_ck_algo == m->algo ? m->part_ck
                                                                                   : "";
    size_t el = gw_multipart_part_etag(m->etag_field, m->md5, &m->seg, ck);
    m->ts = cn_hlc_now(cn_hlc_default());
    if (m->have_old_part)
        m->ts = CN_MAX(m->ts, m->old_part.ts + 1);
    struct gw_store_record rec = {
        .key = key, .key_len = kl,
        .etag = m->etag_field, .etag_len = el,
        .ver = r->id, .ts = m->ts,
    };
    gw_req_hold(r);
    gw_store_put(r->s3->store, &rec, NULL, gw_multipart_on_part_record, r);
}

static void gw_multipart_on_old_part(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    if (res->rc == CN_OK) {
        char etag[GW_LO_ETAG_MAX + 1];
        size_t el = CN_MIN((size_t)res->reply->m.etag.len, sizeof(etag) - 1);
        memcpy(etag, res->reply->m.etag.ptr, el);
        etag[el] = '\0';
        if (gw_multipart_part_parse(etag, &m->old_part) == CN_OK) {
            m->old_part.ts = res->reply->m.ts;
            m->have_old_part = 1;
        }
    }
    if (!gw_req_release(r))
        return;
    gw_multipart_write_part(r);
}

/* The part's chunks are stored: learn what it replaces, then commit it. */
static void gw_multipart_part_stored(struct gw_req *r)
{
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    char key[GW_LO_KEY_MAX];
    size_t kl = gw_multipart_part_key(m, m->part_number, key);
    gw_req_hold(r);
    gw_store_head(r->s3->store, key, kl, gw_multipart_on_old_part, r);
}

static void gw_multipart_on_part_body(void *arg, enum gw_s3_err err, const char *why)
{
    struct gw_req *r = arg;
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    if (err != GW_S3_OK) {
        CN_LOGR(CN_LOG_INFO, r->id, "UploadPart failed: %s", why != NULL ? why : "body refused");
        gw_req_error(r, err, NULL);
        return;
    }
    m->have_part_ck = gw_s3_body_checksum(r, &m->part_ck_algo, m->part_ck) == CN_OK &&
                      gw_checksum_header_name(m->part_ck_algo) != NULL;
    if (m->have_part_ck && m->have_algo && m->part_ck_algo != m->algo) {
        /* the chunks are not committed: freeing the request reclaims them */
        char msg[160];
        snprintf(msg, sizeof(msg),
                 "Checksum Type mismatch occurred, expected checksum Type: %s, actual checksum "
                 "Type: %s", gw_checksum_algo_name(m->algo),
                 gw_checksum_algo_name(m->part_ck_algo));
        gw_req_error(r, GW_S3_INVALID_REQUEST, msg);
        return;
    }
    gw_lo_put_seg(m->lp, &m->seg);
    snprintf(m->md5, sizeof(m->md5), "%s", gw_s3_body_md5_hex(r));
    gw_multipart_part_stored(r);
}


static void gw_multipart_part_upload_ok(struct gw_req *r)
{
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    struct gw_lo_put_source src;
    gw_s3_body_lo_source(r, &src);
    m->lp = gw_lo_put_new(&r->s3->lo, &src, r->id, m->okey, m->okey_len, GW_LO_PUT_ALWAYS,
                          gw_multipart_on_part_body, r);
    gw_lo_put_begin(m->lp, r->s3->opts.part_limit);
}

/* ---- UploadPartCopy (single-record sources) --------------------------- */

static void gw_multipart_on_copy_writer(struct gw_lo_writer *w, void *arg)
{
    struct gw_req *r = arg;
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    if (gw_lo_writer_error(w) != NULL) {
        gw_req_error(r, GW_S3_SERVICE_UNAVAILABLE, gw_lo_writer_error(w));
        return;
    }
    int rc = gw_lo_writer_feed(w, m->copy_data, 1);
    if (rc == CN_OK && gw_lo_writer_inflight(w) == 0) {
        gw_lo_writer_seg(w, &m->seg);
        gw_multipart_part_stored(r);
    }
}

static void gw_multipart_on_copied(int rc, const char *err, void *arg)
{
    struct gw_req *r = arg;
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    if (rc != CN_OK) {
        gw_s3_reply_store_error(r, rc, err);
        return;
    }
    gw_lo_copy_seg(m->copy, &m->seg);
    snprintf(m->md5, sizeof(m->md5), "%s", gw_lo_copy_md5(m->copy));
    gw_multipart_part_stored(r);
}

static void gw_multipart_copy_upload_ok(struct gw_req *r);

static void gw_multipart_on_copy_source(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    if (!gw_req_release(r))
        return;
    if (res->rc == CN_NOTFOUND) {
        enum gw_s3_err err = gw_access_source_missing(r);
        if (err == GW_S3_NO_SUCH_KEY && r->copy_src.version_id != NULL)
            err = GW_S3_NO_SUCH_VERSION;   /* as CopyObject */
        gw_req_error(r, err, NULL);
        return;
    }
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    const struct msg *sm = &res->reply->m;
    if (gw_bucket_owner_recheck(r, r->copy_src.bucket, r->copy_src.bucket_len, sm->ts,
                                gw_multipart_copy_upload_ok))
        return;   /* the source is newer than its bucket's cached owner */
    if (!gw_access_source_allows(r, sm->meta.ptr, sm->meta.len)) {
        if (!gw_bucket_owner_retry_denied(r, 1, gw_multipart_copy_upload_ok))
            gw_req_error(r, GW_S3_ACCESS_DENIED, NULL);   /* no grant in the source's ACL */
        return;
    }
    if (gw_s3_versions_on_copy_record(r, sm))
        return;   /* a delete marker named by id, or no such null version */
    size_t tl;
    uint64_t lsize;
    int large = gw_lo_map_reply_size(sm, &tl, &lsize);
    uint64_t size = large ? lsize : sm->payload.len;
    uint64_t first = 0, len = size;
    size_t rl;
    const char *rv = gw_req_header(r, "x-amz-copy-source-range", &rl);
    if (rv != NULL) {
        uint64_t last;
        const char *why;
        enum gw_s3_err rerr = gw_copy_source_range_parse(rv, rl, size, &first, &last, &why);
        if (rerr != GW_S3_OK) {
            gw_req_error(r, rerr, why);
            return;
        }
        len = last - first + 1;
    }
    if (len > r->s3->opts.part_limit) {
        gw_req_error(r, GW_S3_INVALID_REQUEST, "The specified copy range is larger than the "
                     "maximum part size.");
        return;
    }
    if (large) {
        struct gw_lo_map map;
        if (gw_lo_map_decode(&map, sm->payload.ptr, sm->payload.len) != CN_OK ||
            map.size != size) {
            gw_lo_map_fini(&map);
            gw_req_error(r, GW_S3_INTERNAL_ERROR, "The source object's chunk map is damaged.");
            return;
        }
        m->copy = gw_lo_copy_start(&r->s3->lo, m->src, m->src_len, &map, first, len, m->okey,
                                   m->okey_len, r->id, r->id, gw_multipart_on_copied, r);
        return;
    }
    m->copy_data = evbuffer_new();
    evbuffer_add(m->copy_data, (const char *)sm->payload.ptr + first, len);
    unsigned char digest[16];
    gw_checksum_md5((const char *)sm->payload.ptr + first, len, digest);
    cn_hex_encode(digest, 16, m->md5);
    const struct gw_lo_env *lo = &r->s3->lo;
    struct gw_lo_writer_config wc = {
        .store = lo->store, .reclaim = lo->reclaim,
        .okey = m->okey, .okey_len = m->okey_len, .ver = r->id,
        .chunk_len = lo->chunk_len, .max_inflight = lo->write_inflight, .reqid = r->id,
    };
    m->w = gw_lo_writer_new(&wc, gw_multipart_on_copy_writer, r);
    gw_multipart_on_copy_writer(m->w, r);
}

/* Reads the copy source's record at key: the object's, or the version's
 * (s3_versions.h); a large one's chunks are named after m->src either way. */
static void gw_multipart_copy_read_src(struct gw_req *r, const char *key, size_t key_len)
{
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    memcpy(m->src_rkey, key, key_len);
    m->src_rkey_len = key_len;
    gw_req_hold(r);
    gw_store_get(r->s3->store, m->src_rkey, m->src_rkey_len, 1, 0, 0,
                 gw_multipart_on_copy_source, r);
}

static void gw_multipart_copy_upload_ok(struct gw_req *r)
{
    /* the router's one parse of x-amz-copy-source (copy_source.h) */
    const struct gw_copy_source *cs = &r->copy_src;
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    CN_ASSERT(r->has_copy_src);
    if (cs->version_id != NULL &&
        gw_versioning_id_check(cs->version_id, cs->version_id_len) == 0) {
        gw_req_error(r, GW_S3_INVALID_ARGUMENT, "Invalid version id specified");
        return;
    }
    m->src_len = gw_keys_object(m->src, cs->bucket, cs->bucket_len, cs->key, cs->key_len);
    if (cs->version_id != NULL) {   /* ...?versionId=: that version's record */
        gw_s3_versions_copy_source(r, gw_multipart_copy_read_src);
        return;
    }
    gw_multipart_copy_read_src(r, m->src, m->src_len);
}

void gw_multipart_upload_part(struct gw_req *r)
{
    struct gw_multipart *m = gw_multipart_state(r);
    const struct gw_req_param *pn = gw_req_param(r, "partNumber");
    char *end = NULL;
    unsigned long n = pn != NULL ? strtoul(pn->value, &end, 10) : 0;
    if (pn == NULL || pn->value_len == 0 || *end != '\0' || n < 1 || n > GW_MP_MAX_PARTS) {
        gw_req_error(r, GW_S3_INVALID_ARGUMENT,
                     "Part number must be an integer between 1 and 10000, inclusive.");
        return;
    }
    m->part_number = (uint32_t)n;
    enum gw_s3_err err = gw_multipart_upload_id(r, m);
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    if (r->has_copy_src) {
        gw_multipart_require_upload(r, gw_multipart_copy_upload_ok);
        return;
    }
    if (r->http->content_length < 0 && !r->http->chunked) {
        gw_req_error(r, GW_S3_MISSING_CONTENT_LENGTH, NULL);
        return;
    }
    int64_t declared = gw_s3_body_declared_length(r);
    if (declared > (int64_t)r->s3->opts.part_limit) {
        gw_req_error(r, GW_S3_ENTITY_TOO_LARGE, NULL);
        return;
    }
    gw_multipart_require_upload(r, gw_multipart_part_upload_ok);
}

/* ---- CompleteMultipartUpload ----------------------------------------- */

static void gw_multipart_complete_reply(struct gw_req *r);
static void gw_multipart_complete_missing(struct gw_req *r);
static int gw_multipart_completed_from(struct gw_multipart *m, const struct msg *om, int *same);
static void gw_multipart_complete_again(struct gw_req *r, int same);

static void gw_multipart_on_completed(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    if (res->rc == CN_OK) {
        int64_t delay_ms = r->s3->lo.reclaim_delay_ms;
        if (m->have_old && !gw_s3_versions_keeps_chunks(r))
            gw_lo_reclaim_segs(r->s3->reclaim, m->okey, m->okey_len, m->old_map.segs,
                               m->old_map.n_segs, delay_ms, r->id);
        /* parts uploaded but not named in the list */
        for (uint32_t i = 0, j = 0; i < m->n_parts; i++) {
            while (j < m->cmp.n_parts && m->cmp.parts[j].part_number < m->parts[i].number)
                j++;
            if (j < m->cmp.n_parts && m->cmp.parts[j].part_number == m->parts[i].number)
                continue;
            gw_lo_reclaim_segs(r->s3->reclaim, m->okey, m->okey_len, &m->parts[i].seg, 1,
                               delay_ms, r->id);
        }
        gw_multipart_forget_parts(r, m);
        gw_store_delete(r->s3->store, m->ukey, m->ukey_len, r->id,
                        cn_hlc_after(cn_hlc_default(), m->initiated_ts), gw_multipart_on_forget,
                        NULL);
    }
    if (!gw_req_release(r))
        return;
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    gw_multipart_complete_reply(r);
}

/* CompleteMultipartUpload's 200: the result document of m->etag (and the
 * checksum when m->have_algo). */
static void gw_multipart_complete_reply(struct gw_req *r)
{
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    struct evbuffer *doc = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    gw_xml_open_ns(&w, "CompleteMultipartUploadResult", GW_XML_S3_NS);
    char loc[GW_KEYS_MAX + 80];
    snprintf(loc, sizeof(loc), "/%.*s/%.*s", (int)r->bucket_len, r->bucket, (int)r->key_len,
             r->key);
    gw_xml_elem_str(&w, "Location", loc);
    gw_xml_elem(&w, "Bucket", r->bucket, r->bucket_len);
    gw_xml_elem(&w, "Key", r->key, r->key_len);
    char q[GW_CHECKSUM_MULTIPART_ETAG_MAX + 2];
    snprintf(q, sizeof(q), "\"%s\"", m->etag);
    gw_xml_elem_str(&w, "ETag", q);
    if (m->have_algo) {
        char elem[32];
        snprintf(elem, sizeof(elem), "Checksum%s", gw_checksum_algo_name(m->algo));
        gw_xml_elem_str(&w, elem, m->composite);
        gw_xml_elem_str(&w, "ChecksumType", gw_multipart_type_name(m));
    }
    gw_xml_close(&w);
    gw_xml_writer_finish(&w);
    /* Complete may take a while: S3 sends 200 and the result (or an error
     * document) in the body; here the whole answer comes at once */
    gw_req_reply_xml(r, 200, doc);
    evbuffer_free(doc);
}

/* Complete's conditional write of the "o/" record (s3_versions.h). */
static void gw_multipart_cond_put(struct gw_req *r, const struct gw_store_record *rec,
                                  struct gw_blob *data, gw_store_cb cb)
{
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    gw_cond_write_put(&m->cw, r, rec, data, cb);
}

/* Writes the object's parent record over the listed parts. */
static void gw_multipart_write_parent(struct gw_req *r)
{
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    struct gw_lo_seg *segs = cn_calloc(m->cmp.n_parts, sizeof(*segs));
    unsigned char (*md5s)[16] = cn_calloc(m->cmp.n_parts, 16);
    for (size_t i = 0, j = 0; i < m->cmp.n_parts; i++) {
        while (m->parts[j].number != m->cmp.parts[i].part_number)
            j++; /* validated: present, both ascending */
        segs[i] = m->parts[j].seg;
        /* 32 lower-case hex digits: gw_multipart_part_parse() checked them */
        CN_ASSERT(cn_hex_decode(m->parts[j].md5, 32, md5s[i], 16) == CN_OK);
    }
    gw_checksum_multipart_etag((const unsigned char (*)[16])md5s, m->cmp.n_parts, m->etag);
    uint64_t osize;
    m->blob = gw_lo_map_parent(segs, (uint32_t)m->cmp.n_parts, 1, &osize);
    cn_free(segs);
    cn_free(md5s);
    struct gw_store_record rec = {
        .key = m->okey, .key_len = m->okey_len,
        .etag = m->etag, .etag_len = strlen(m->etag),
        .meta = m->meta, .meta_len = m->meta_len,
        .ver = r->id, .ts = cn_hlc_after(cn_hlc_default(), m->old_ts),
        .has_osize = 1, .osize = osize,
    };
    gw_req_hold(r);
    if (m->cw.armed)   /* the "o/" record under the lease, then its version's */
        gw_s3_versions_put_with(r, &rec, m->blob, gw_multipart_on_completed,
                                gw_multipart_cond_put);
    else
        gw_s3_versions_put(r, &rec, m->blob, gw_multipart_on_completed, r);
}

/* The object Complete replaces: its chunks (if large) and timestamp, and
 * the request's If-Match / If-None-Match decided against it. */
static void gw_multipart_on_old_object(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    enum gw_s3_err cerr = GW_S3_OK;
    int again = 0, same = 0;
    /* the object is this upload's, completed already (a retry racing the
     * forgetting of the upload's records): never written twice, which
     * would reclaim the chunks it shares with itself */
    if (res->rc == CN_OK)
        again = gw_multipart_completed_from(m, &res->reply->m, &same);
    if (again) {
        if (gw_req_release(r))
            gw_multipart_complete_again(r, same);
        return;
    }
    if (res->rc == CN_OK || res->rc == CN_NOTFOUND)
        cerr = gw_cond_write_check(&m->cw, r, res->rc == CN_OK ? &res->reply->m : NULL);
    else if (gw_req_header(r, "if-match", NULL) != NULL ||
             gw_req_header(r, "if-none-match", NULL) != NULL)
        cerr = gw_s3_error_from_store(res->rc); /* a condition cannot be decided */
    if (res->rc == CN_OK) {
        const struct msg *om = &res->reply->m;
        size_t tl;
        uint64_t size;
        m->old_ts = om->ts;
        if (gw_lo_map_reply_size(om, &tl, &size) &&
            gw_lo_map_decode(&m->old_map, om->payload.ptr, om->payload.len) == CN_OK)
            m->have_old = 1;
    }
    if (!gw_req_release(r))
        return;
    if (cerr != GW_S3_OK) {
        gw_req_error(r, cerr, NULL);
        return;
    }
    gw_multipart_write_parent(r);
}

/* Checks the client's list against the stored parts. */
static enum gw_s3_err gw_multipart_validate(struct gw_multipart *m, const char **why)
{
    size_t j = 0;
    for (size_t i = 0; i < m->cmp.n_parts; i++) {
        const struct gw_xml_part *p = &m->cmp.parts[i];
        if (i > 0 && p->part_number <= m->cmp.parts[i - 1].part_number)
            return GW_S3_INVALID_PART_ORDER;
        while (j < m->n_parts && m->parts[j].number < p->part_number)
            j++;
        if (j == m->n_parts || m->parts[j].number != p->part_number) {
            *why = "One or more of the specified parts could not be found.";
            return GW_S3_INVALID_PART;
        }
        if (p->etag_len != 32 || strncmp(p->etag, m->parts[j].md5, 32) != 0) {
            *why = "One or more of the specified parts' ETags do not match.";
            return GW_S3_INVALID_PART;
        }
        if (i + 1 < m->cmp.n_parts && m->parts[j].seg.size < GW_MP_MIN_PART)
            return GW_S3_ENTITY_TOO_SMALL;
    }
    return GW_S3_OK;
}

/* The part's checksum of algo in the Complete request, or NULL. */
static const char *gw_multipart_xml_ck(const struct gw_xml_part *p, enum gw_checksum_algo algo)
{
    switch (algo) {
    case GW_CHECKSUM_CRC32: return p->checksum_crc32;
    case GW_CHECKSUM_CRC32C: return p->checksum_crc32c;
    case GW_CHECKSUM_CRC64NVME: return p->checksum_crc64nvme;
    case GW_CHECKSUM_SHA1: return p->checksum_sha1;
    case GW_CHECKSUM_SHA256: return p->checksum_sha256;
    default: return NULL;
    }
}

/* An upload with a checksum algorithm: every listed part names its
 * checksum (optional for FULL_OBJECT), which must be the stored one; the
 * object gets the composite or full-object checksum (m->composite, and in
 * m->meta in place of the algorithm), which must equal x-amz-checksum-<algo>
 * when the request sends one. A FULL_OBJECT upload with a part stored
 * without a checksum completes without an object checksum. */
static enum gw_s3_err gw_multipart_complete_checksum(struct gw_req *r, struct gw_multipart *m,
                                                     char *why, size_t whylen)
{
    const char *an = gw_checksum_algo_name(m->algo);
    const char **cks = cn_calloc(m->cmp.n_parts, sizeof(*cks));
    uint64_t *lens = cn_calloc(m->cmp.n_parts, sizeof(*lens));
    enum gw_s3_err err = GW_S3_OK;
    int all = 1;
    for (size_t i = 0, j = 0; i < m->cmp.n_parts && err == GW_S3_OK; i++) {
        const struct gw_xml_part *p = &m->cmp.parts[i];
        while (m->parts[j].number != p->part_number)
            j++; /* validated: present, both ascending */
        const char *sent = gw_multipart_xml_ck(p, m->algo);
        all &= m->parts[j].ck[0] != '\0';
        if (sent == NULL && !m->full) { /* FULL_OBJECT: optional */
            snprintf(why, whylen, "The upload was created using a %s checksum. The complete "
                     "request must include the checksum for each part. It was missing for part "
                     "%u in the request.", an, p->part_number);
            err = GW_S3_INVALID_REQUEST;
        } else if (sent != NULL && strcmp(sent, m->parts[j].ck) != 0) {
            snprintf(why, whylen, "The %s checksum of part %u does not match the one it was "
                     "uploaded with%s.", an, p->part_number,
                     m->parts[j].ck[0] == '\0' ? " (it was uploaded without one)" : "");
            err = GW_S3_INVALID_PART;
        }
        cks[i] = m->parts[j].ck;
        lens[i] = m->parts[j].seg.size;
    }
    if (err == GW_S3_OK && m->full && !all) {
        cn_free(cks);
        cn_free(lens);
        m->have_algo = 0; /* nothing to combine: the object gets no checksum */
        (void)gw_multipart_meta_edit(m, "x-amz-checksum-", NULL, NULL); /* only drops */
        return GW_S3_OK;
    }
    int rc = CN_OK;
    if (err == GW_S3_OK)
        rc = m->full ? gw_checksum_full_object(m->algo, cks, lens, m->cmp.n_parts, m->composite)
                     : gw_checksum_composite(m->algo, cks, m->cmp.n_parts, m->composite);
    if (rc != CN_OK) {
        snprintf(why, whylen, "A stored part checksum does not decode.");
        err = GW_S3_INTERNAL_ERROR;
    }
    cn_free(cks);
    cn_free(lens);
    size_t hl = 0;
    const char *want = gw_req_header(r, gw_checksum_header_name(m->algo), &hl);
    if (err == GW_S3_OK && want != NULL &&
        (hl != strlen(m->composite) || memcmp(want, m->composite, hl) != 0)) {
        snprintf(why, whylen, "The %s you specified did not match the calculated checksum.",
                 gw_checksum_header_name(m->algo));
        err = GW_S3_BAD_DIGEST;
    }
    if (err != GW_S3_OK)
        return err;
    /* the upload's algorithm and type headers are dropped first: two out, two in */
    if (gw_multipart_meta_edit(m, "x-amz-checksum-", gw_checksum_header_name(m->algo),
                               m->composite) != CN_OK ||
        gw_multipart_meta_edit(m, NULL, gw_mp_type_header, gw_multipart_type_name(m)) != CN_OK)
        return GW_S3_INTERNAL_ERROR;
    return GW_S3_OK;
}

static void gw_multipart_complete_listed(struct gw_req *r)
{
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    const char *why = NULL;
    char whybuf[256];
    enum gw_s3_err err = gw_multipart_validate(m, &why);
    if (err != GW_S3_OK) {
        /* a retry that comes while the completed upload's records are
         * being forgotten (its parts first) may find the upload without
         * its parts: it is answered as a retry if it is one */
        m->retry_err = err;
        m->retry_why = why;
        gw_multipart_complete_missing(r);
        return;
    }
    if (err == GW_S3_OK && m->have_algo) {
        err = gw_multipart_complete_checksum(r, m, whybuf, sizeof(whybuf));
        why = whybuf;
    }
    if (err == GW_S3_OK &&
        gw_multipart_meta_edit(m, gw_mp_upload_meta, gw_mp_upload_meta, m->upload_id) != CN_OK)
        err = GW_S3_METADATA_TOO_LARGE;
    if (err != GW_S3_OK) {
        gw_req_error(r, err, why);
        return;
    }
    gw_req_hold(r);
    gw_store_get(r->s3->store, m->okey, m->okey_len, 1, 0, 0, gw_multipart_on_old_object, r);
}

static void gw_multipart_complete_upload_ok(struct gw_req *r)
{
    gw_multipart_list(r, 0, GW_MP_MAX_PARTS, gw_multipart_complete_listed);
}

/* A Complete whose upload record is gone: if the object at the key was
 * completed from this upload with this part list (a retry after a lost
 * reply, which SDKs send), S3 answers 200 with the same ETag again;
 * otherwise NoSuchUpload. */
/* Whether om (the object at the key) was completed from m's upload: 1 when
 * it carries the upload id (and then m->etag is the ETag of the request's
 * part list), 0 otherwise. *same: that ETag is the object's. */
static int gw_multipart_completed_from(struct gw_multipart *m, const struct msg *om, int *same)
{
    struct gw_objmeta meta;
    const struct gw_objmeta_header *h = NULL;
    *same = 0;
    if (gw_objmeta_decode(&meta, om->meta.ptr, om->meta.len) == CN_OK)
        h = gw_objmeta_find(&meta, gw_mp_upload_meta);
    if (h == NULL || h->value_len != GW_MP_ID_LEN ||
        memcmp(h->value, m->upload_id, GW_MP_ID_LEN) != 0)
        return 0;
    if (m->cmp.n_parts == 0)
        return 1;
    unsigned char (*md5s)[16] = cn_calloc(m->cmp.n_parts, 16);
    int ok = 1;
    for (size_t i = 0; ok && i < m->cmp.n_parts; i++)
        ok = m->cmp.parts[i].etag_len == 32 &&
             cn_hex_decode(m->cmp.parts[i].etag, 32, md5s[i], 16) == CN_OK;
    if (ok) {
        size_t el = 0;
        uint64_t size;
        gw_checksum_multipart_etag((const unsigned char (*)[16])md5s, m->cmp.n_parts, m->etag);
        gw_lo_map_reply_size(om, &el, &size);   /* el: the ETag's length either way */
        *same = el == strlen(m->etag) && memcmp(om->etag.ptr, m->etag, el) == 0;
    }
    cn_free(md5s);
    return 1;
}

/* Answers a Complete of an upload that was already completed: 200 with the
 * same result when the part list is the same, else NoSuchUpload (or, for a
 * request that found the upload's records half forgotten, its own error). */
static void gw_multipart_complete_again(struct gw_req *r, int same)
{
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    if (!same) {
        gw_req_error(r, m->retry_err != GW_S3_OK ? m->retry_err : GW_S3_NO_SUCH_UPLOAD,
                     m->retry_err != GW_S3_OK ? m->retry_why : NULL);
        return;
    }
    m->have_algo = 0; /* the repeated answer carries the ETag; the checksum is on HEAD */
    gw_multipart_complete_reply(r);
}

static void gw_multipart_on_retried_object(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    int same = 0;
    if (res->rc == CN_OK)
        (void)gw_multipart_completed_from(m, &res->reply->m, &same);
    if (!gw_req_release(r))
        return;
    if (res->rc != CN_OK && res->rc != CN_NOTFOUND) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    gw_multipart_complete_again(r, same);
}

static void gw_multipart_complete_missing(struct gw_req *r)
{
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    gw_req_hold(r);
    gw_store_head(r->s3->store, m->okey, m->okey_len, gw_multipart_on_retried_object, r);
}

static void gw_multipart_complete_body(struct gw_req *r, enum gw_s3_err err,
                                       struct evbuffer *data)
{
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    size_t len = evbuffer_get_length(data);
    const char *body = len > 0 ? (const char *)evbuffer_pullup(data, -1) : "";
    if (gw_xml_parse_complete(body, len, &m->cmp, &err) != CN_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    m->on_missing = gw_multipart_complete_missing;
    gw_multipart_require_upload(r, gw_multipart_complete_upload_ok);
}

static void gw_multipart_complete_bucket_ok(struct gw_req *r)
{
    gw_s3_body_read_flags(r, GW_XML_COMPLETE_MAX_BYTES, GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED,
                          GW_S3_BODY_OBJECT_CHECKSUM_HEADERS, gw_multipart_complete_body);
}

void gw_multipart_complete(struct gw_req *r)
{
    struct gw_multipart *m = gw_multipart_state(r);
    enum gw_s3_err err = gw_multipart_upload_id(r, m);
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    /* Complete creates the object: the bucket record is read afresh and
     * decides access (a cached owner may be stale, bucket_owner.h) */
    gw_s3_bucket_require(r, gw_multipart_complete_bucket_ok);
}

/* ---- AbortMultipartUpload -------------------------------------------- */

static void gw_multipart_on_aborted(struct gw_store_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    gw_req_reply_empty(r, 204);
}

static void gw_multipart_abort_listed(struct gw_req *r)
{
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    for (uint32_t i = 0; i < m->n_parts; i++)
        gw_lo_reclaim_segs(r->s3->reclaim, m->okey, m->okey_len, &m->parts[i].seg, 1, 0,
                           r->id);
    gw_multipart_forget_parts(r, m);
    gw_req_hold(r);
    gw_store_delete(r->s3->store, m->ukey, m->ukey_len, r->id,
                    cn_hlc_after(cn_hlc_default(), m->initiated_ts), gw_multipart_on_aborted, r);
}

static void gw_multipart_abort_upload_ok(struct gw_req *r)
{
    gw_multipart_list(r, 0, GW_MP_MAX_PARTS, gw_multipart_abort_listed);
}

void gw_multipart_abort(struct gw_req *r)
{
    struct gw_multipart *m = gw_multipart_state(r);
    enum gw_s3_err err = gw_multipart_upload_id(r, m);
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    gw_multipart_require_upload(r, gw_multipart_abort_upload_ok);
}

/* ---- ListParts ------------------------------------------------------- */

/* A non-negative decimal query parameter, or def when absent; -1 when bad. */
static long gw_multipart_param_num(const struct gw_req *r, const char *name, long def, long max)
{
    const struct gw_req_param *p = gw_req_param(r, name);
    if (p == NULL)
        return def;
    char *end = NULL;
    long v = strtol(p->value, &end, 10);
    if (p->value_len == 0 || *end != '\0' || v < 0)
        return -1;
    return CN_MIN(v, max);
}

static void gw_multipart_owner(struct gw_xml_writer *w, const struct gw_req *r,
                               const char *elem)
{
    gw_xml_open(w, elem);
    gw_xml_elem_str(w, "ID", r->auth.cred->owner_id);
    gw_xml_elem_str(w, "DisplayName", r->auth.cred->display_name);
    gw_xml_close(w);
}

static void gw_multipart_list_parts_done(struct gw_req *r)
{
    struct gw_multipart *m = GW_REQ_STATE(r, gw_multipart);
    long marker = gw_multipart_param_num(r, "part-number-marker", 0, GW_MP_MAX_PARTS);
    struct evbuffer *doc = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    gw_xml_open_ns(&w, "ListPartsResult", GW_XML_S3_NS);
    gw_xml_elem(&w, "Bucket", r->bucket, r->bucket_len);
    gw_xml_elem(&w, "Key", r->key, r->key_len);
    gw_xml_elem_str(&w, "UploadId", m->upload_id);
    gw_multipart_owner(&w, r, "Initiator");
    gw_multipart_owner(&w, r, "Owner");
    gw_xml_elem_str(&w, "StorageClass", "STANDARD");
    gw_xml_elem_u64(&w, "PartNumberMarker", (uint64_t)marker);
    uint32_t shown = CN_MIN(m->n_parts, m->list_limit - 1);
    int truncated = m->n_parts > shown;
    if (shown > 0)
        gw_xml_elem_u64(&w, "NextPartNumberMarker", m->parts[shown - 1].number);
    gw_xml_elem_u64(&w, "MaxParts", m->list_limit - 1);
    gw_xml_elem_bool(&w, "IsTruncated", truncated);
    for (uint32_t i = 0; i < shown; i++) {
        const struct gw_mp_part *p = &m->parts[i];
        gw_xml_open(&w, "Part");
        gw_xml_elem_u64(&w, "PartNumber", p->number);
        gw_xml_elem_time_ms(&w, "LastModified", (int64_t)(p->ts / 1000));
        char q[40];
        snprintf(q, sizeof(q), "\"%s\"", p->md5);
        gw_xml_elem_str(&w, "ETag", q);
        gw_xml_elem_u64(&w, "Size", p->seg.size);
        if (m->have_algo && p->ck[0] != '\0') {
            char elem[32];
            snprintf(elem, sizeof(elem), "Checksum%s", gw_checksum_algo_name(m->algo));
            gw_xml_elem_str(&w, elem, p->ck);
        }
        gw_xml_close(&w);
    }
    if (m->have_algo) {
        gw_xml_elem_str(&w, "ChecksumAlgorithm", gw_checksum_algo_name(m->algo));
        gw_xml_elem_str(&w, "ChecksumType", gw_multipart_type_name(m));
    }
    gw_xml_close(&w);
    gw_xml_writer_finish(&w);
    gw_req_reply_xml(r, 200, doc);
    evbuffer_free(doc);
}

static void gw_multipart_list_parts_upload_ok(struct gw_req *r)
{
    long marker = gw_multipart_param_num(r, "part-number-marker", 0, GW_MP_MAX_PARTS);
    long max = gw_multipart_param_num(r, "max-parts", 1000, 1000);
    if (marker < 0 || max < 0) {
        gw_req_error(r, GW_S3_INVALID_ARGUMENT, NULL);
        return;
    }
    /* one more than asked, to tell whether the list is truncated */
    gw_multipart_list(r, (uint32_t)marker, (uint32_t)max + 1, gw_multipart_list_parts_done);
}

void gw_multipart_list_parts(struct gw_req *r)
{
    struct gw_multipart *m = gw_multipart_state(r);
    enum gw_s3_err err = gw_multipart_upload_id(r, m);
    if (err != GW_S3_OK) {
        gw_req_error(r, err, NULL);
        return;
    }
    gw_multipart_require_upload(r, gw_multipart_list_parts_upload_ok);
}

/* ---- ListMultipartUploads -------------------------------------------- */

struct gw_multipart_uploads {
    struct gw_hstate hs;
    uint32_t max;
    int url;                  /* encoding-type=url */
    char prefix[GW_LO_KEY_MAX];
    size_t prefix_len;        /* "u/" bucket "/" + the prefix parameter */
    size_t base_len;          /* "u/" bucket "/" */
};

static void gw_multipart_uploads_free(struct gw_hstate *hs);
static const struct gw_hstate_type gw_multipart_uploads_hstate = {"gw_multipart_uploads",
                                                                  gw_multipart_uploads_free};

static void gw_multipart_uploads_free(struct gw_hstate *hs)
{
    cn_free(GW_HSTATE(hs, gw_multipart_uploads));
}

/* A key or key-like parameter of ListMultipartUploads: percent-encoded with
 * encoding-type=url, as S3 does (the object listings' writer, s3_list.h). */
static void gw_multipart_uploads_text(const struct gw_multipart_uploads *u,
                                      struct gw_xml_writer *w, const char *name,
                                      const char *s, size_t len)
{
    gw_s3_list_text_elem(w, u->url, name, s, len);
}

static void gw_multipart_on_uploads(struct gw_store_list_result *res, void *arg)
{
    struct gw_req *r = arg;
    if (!gw_req_release(r))
        return;
    struct gw_multipart_uploads *u = GW_REQ_STATE(r, gw_multipart_uploads);
    if (res->rc != CN_OK) {
        gw_s3_reply_store_error(r, res->rc, res->err);
        return;
    }
    const struct gw_req_param *km = gw_req_param(r, "key-marker");
    const struct gw_req_param *um = gw_req_param(r, "upload-id-marker");
    const struct gw_req_param *pf = gw_req_param(r, "prefix");
    uint32_t shown = CN_MIN(res->n_ents, u->max);
    int truncated = res->n_ents > u->max || (res->more && shown > 0);
    struct evbuffer *doc = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, doc);
    gw_xml_open_ns(&w, "ListMultipartUploadsResult", GW_XML_S3_NS);
    gw_xml_elem(&w, "Bucket", r->bucket, r->bucket_len);
    gw_multipart_uploads_text(u, &w, "KeyMarker", km != NULL ? km->value : "",
                              km != NULL ? km->value_len : 0);
    gw_xml_elem(&w, "UploadIdMarker", um != NULL ? um->value : "",
                um != NULL ? um->value_len : 0);
    gw_multipart_uploads_text(u, &w, "Prefix", pf != NULL ? pf->value : "",
                              pf != NULL ? pf->value_len : 0);
    if (shown > 0) {
        const struct gw_store_entry *e = &res->ents[shown - 1];
        size_t kl = e->key_len - u->base_len - 1 - GW_MP_ID_LEN;
        gw_multipart_uploads_text(u, &w, "NextKeyMarker", e->key + u->base_len, kl);
        gw_xml_elem(&w, "NextUploadIdMarker", e->key + e->key_len - GW_MP_ID_LEN, GW_MP_ID_LEN);
    }
    gw_xml_elem_u64(&w, "MaxUploads", u->max);
    gw_xml_elem_bool(&w, "IsTruncated", truncated);
    for (uint32_t i = 0; i < shown; i++) {
        const struct gw_store_entry *e = &res->ents[i];
        if (e->key_len < u->base_len + 2 + GW_MP_ID_LEN ||
            e->key[e->key_len - GW_MP_ID_LEN - 1] != '\0')
            continue;
        gw_xml_open(&w, "Upload");
        gw_multipart_uploads_text(u, &w, "Key", e->key + u->base_len,
                                  e->key_len - u->base_len - 1 - GW_MP_ID_LEN);
        gw_xml_elem(&w, "UploadId", e->key + e->key_len - GW_MP_ID_LEN, GW_MP_ID_LEN);
        gw_multipart_owner(&w, r, "Initiator");
        gw_multipart_owner(&w, r, "Owner");
        gw_xml_elem_str(&w, "StorageClass", "STANDARD");
        gw_xml_elem_time_ms(&w, "Initiated", (int64_t)(e->ts / 1000));
        gw_xml_close(&w);
    }
    if (u->url)
        gw_xml_elem_str(&w, "EncodingType", "url");
    gw_xml_close(&w);
    if (gw_xml_writer_finish(&w) != CN_OK)
        gw_req_error(r, GW_S3_INTERNAL_ERROR, NULL);
    else if (w.replaced && !u->url) /* as s3_list.c: never an altered key */
        gw_req_error(r, GW_S3_INVALID_ARGUMENT, GW_XML_NEEDS_URL_MESSAGE);
    else
        gw_req_reply_xml(r, 200, doc);
    evbuffer_free(doc);
}

static void gw_multipart_list_uploads_bucket_ok(struct gw_req *r)
{
    struct gw_multipart_uploads *u = GW_REQ_STATE(r, gw_multipart_uploads);
    const struct gw_req_param *km = gw_req_param(r, "key-marker");
    const struct gw_req_param *um = gw_req_param(r, "upload-id-marker");
    char after[GW_LO_KEY_MAX + 2];
    size_t al = 0;
    if (km != NULL && km->value_len > 0 && km->value_len <= 1024) {
        memcpy(after, u->prefix, u->base_len);
        memcpy(after + u->base_len, km->value, km->value_len);
        al = u->base_len + km->value_len;
        after[al++] = '\0';
        if (um != NULL && um->value_len == GW_MP_ID_LEN) {
            memcpy(after + al, um->value, GW_MP_ID_LEN);
            al += GW_MP_ID_LEN;
        } else {
            after[al++] = (char)0xFF; /* past every upload of that key */
        }
    }
    gw_req_hold(r);
    gw_store_list(r->s3->store, u->prefix, u->prefix_len, after, al, u->max + 1,
                  gw_multipart_on_uploads, r);
}

void gw_multipart_list_uploads(struct gw_req *r)
{
    long max = gw_multipart_param_num(r, "max-uploads", 1000, 1000);
    const struct gw_req_param *pf = gw_req_param(r, "prefix");
    const struct gw_req_param *enc = gw_req_param(r, "encoding-type");
    if (max < 0 || (pf != NULL && pf->value_len > 1024) ||
        (enc != NULL && strcmp(enc->value, "url") != 0)) {
        gw_req_error(r, GW_S3_INVALID_ARGUMENT, NULL);
        return;
    }
    struct gw_multipart_uploads *u = cn_calloc(1, sizeof(*u));
    gw_req_state_set(r, &u->hs, &gw_multipart_uploads_hstate);
    u->url = enc != NULL;
    u->max = max > 0 ? (uint32_t)max : 1;
    u->base_len = gw_keys_object_prefix(u->prefix, r->bucket, r->bucket_len);
    u->prefix[0] = 'u';
    u->prefix_len = u->base_len;
    if (pf != NULL) {
        memcpy(u->prefix + u->base_len, pf->value, pf->value_len);
        u->prefix_len += pf->value_len;
    }
    gw_s3_bucket_require(r, gw_multipart_list_uploads_bucket_ok);
}

int gw_multipart_part_seg(const char *etag, struct gw_lo_seg *seg)
{
    struct gw_mp_part p;
    if (gw_multipart_part_parse(etag, &p) != CN_OK)
        return CN_INVAL;
    *seg = p.seg;
    return CN_OK;
}
