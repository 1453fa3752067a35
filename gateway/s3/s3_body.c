/* The body reader: r->body (HTTP framing undone) -> [aws-chunked decoder,
 * or a POST object's form parser] -> checksums -> sink. Each on_body wakeup consumes everything buffered, so
 * the connection resumes reading at once (the sink is bounded by limit). */
#include "s3_body.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aws_chunked.h"
#include "lo_put.h"
#include "post_form.h"
#include "s3_post.h"

#include "cn/alloc.h"
#include "cn/log.h"

struct gw_s3_body {
    struct gw_req *r;
    size_t limit;
    enum gw_s3_err too_large;
    gw_s3_body_cb done;
    gw_s3_body_data_cb on_data;   /* streaming mode (NULL: whole body) */
    gw_s3_body_stream_cb sdone;
    void *arg;
    int paused;                   /* the stream consumer is full */
    int md5_outside;              /* GW_S3_BODY_MD5_OUTSIDE */
    uint64_t decoded;             /* decoded bytes so far */
    struct evbuffer *data;
    struct gw_aws_chunked *ac;
    int ac_done;
    struct gw_post_form *form;    /* POST object: only the file's bytes are the body */
    int form_done;
    struct gw_checksum sums;
    int have_sums;
    int have_hdr_ck;          /* an x-amz-checksum-* header to verify */
    int no_hdr_ck;            /* x-amz-checksum-* headers describe something else */
    enum gw_checksum_algo hdr_algo;
    const char *hdr_ck;
    size_t hdr_ck_len;
    int have_trailer_ck;
    enum gw_checksum_algo trailer_algo;
    char trailer_b64[GW_CHECKSUM_B64_MAX];
    char md5_hex[GW_CHECKSUM_HEX_MAX];
    int finished;
};

void gw_s3_body_free(struct gw_s3_body *b)
{
    if (b == NULL)
        return;
    evbuffer_free(b->data);
    gw_aws_chunked_free(b->ac);
    if (b->have_sums)
        gw_checksum_fini(&b->sums);
    cn_free(b);
}

static int gw_s3_body_is_streaming(enum gw_sigv4_payload p)
{
    return p == GW_SIGV4_PAYLOAD_STREAMING || p == GW_SIGV4_PAYLOAD_STREAMING_TRAILER ||
           p == GW_SIGV4_PAYLOAD_STREAMING_UNSIGNED_TRAILER;
}

/* Parses a decimal header value; -1 when absent or malformed. */
static int64_t gw_s3_body_header_u64(const struct gw_req *r, const char *name)
{
    size_t len;
    const char *v = gw_req_header(r, name, &len);
    if (v == NULL || len == 0 || len > 18)
        return -1;
    int64_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        n = n * 10 + (v[i] - '0');
    }
    return n;
}

int64_t gw_s3_body_declared_length(const struct gw_req *r)
{
    if (r->post != NULL)
        return -1; /* the file's length is known only at its end */
    if (gw_s3_body_is_streaming(r->auth.payload))
        return gw_s3_body_header_u64(r, "x-amz-decoded-content-length");
    return r->http->content_length;
}

/* Ends the read once: reports err or hands over the data. */
static void gw_s3_body_finish(struct gw_s3_body *b, enum gw_s3_err err)
{
    if (b->finished)
        return;
    b->finished = 1;
    b->r->on_body = NULL;
    b->r->hr.on_body = NULL;
    if (b->sdone != NULL)
        b->sdone(b->r, err, err == GW_S3_OK ? b->data : NULL, b->arg);
    else
        b->done(b->r, err, err == GW_S3_OK ? b->data : NULL);
}

/* Sink of decoded bytes (from the decoder or the plain path). */
static int gw_s3_body_sink(void *arg, const char *data, size_t len)
{
    struct gw_s3_body *b = arg;
    if (b->decoded + len > b->limit)
        return CN_TOOBIG;
    b->decoded += len;
    gw_checksum_update(&b->sums, data, len);
    evbuffer_add(b->data, data, len);
    return CN_OK;
}

/* Feeds the buffered framed body through the aws-chunked decoder. */
static enum gw_s3_err gw_s3_body_feed_chunked(struct gw_s3_body *b, struct evbuffer *in)
{
    while (evbuffer_get_length(in) > 0) {
        struct evbuffer_iovec v;
        if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
            break;
        if (b->ac_done)
            return GW_S3_INVALID_REQUEST; /* bytes after the final chunk */
        size_t used = 0;
        enum gw_s3_err err = GW_S3_OK;
        int rc = gw_aws_chunked_feed(b->ac, v.iov_base, v.iov_len, &used, gw_s3_body_sink, b,
                                     &err);
        evbuffer_drain(in, used);
        if (rc == CN_DONE)
            b->ac_done = 1;
        else if (rc == CN_TOOBIG && err == GW_S3_INTERNAL_ERROR)
            return b->too_large; /* our sink refused: over the limit */
        else if (rc != CN_AGAIN)
            return err != GW_S3_OK ? err : GW_S3_INVALID_REQUEST;
    }
    return GW_S3_OK;
}

/* Feeds a POST object's form: its file's bytes go to the sink; what
 * follows the file part is read and dropped. */
static enum gw_s3_err gw_s3_body_feed_form(struct gw_s3_body *b, struct evbuffer *in)
{
    while (evbuffer_get_length(in) > 0) {
        struct evbuffer_iovec v;
        if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
            break;
        if (b->form_done) {
            evbuffer_drain(in, v.iov_len);
            continue;
        }
        size_t used = 0;
        enum gw_s3_err err = GW_S3_OK;
        int rc = gw_post_form_feed(b->form, v.iov_base, v.iov_len, &used, gw_s3_body_sink, b,
                                   &err);
        evbuffer_drain(in, used);
        if (rc == CN_DONE)
            b->form_done = 1;
        else if (rc == CN_TOOBIG && err == GW_S3_INTERNAL_ERROR)
            return b->too_large; /* our sink refused: over the limit */
        else if (rc != CN_AGAIN)
            return err != GW_S3_OK ? err : GW_S3_MALFORMED_POST_REQUEST;
    }
    return GW_S3_OK;
}

/* Feeds plain bytes: checksums over each chain, then a zero-copy move. */
static enum gw_s3_err gw_s3_body_feed_plain(struct gw_s3_body *b, struct evbuffer *in)
{
    size_t len = evbuffer_get_length(in);
    if (b->decoded + len > b->limit)
        return b->too_large;
    b->decoded += len;
    struct evbuffer_ptr pos;
    evbuffer_ptr_set(in, &pos, 0, EVBUFFER_PTR_SET);
    struct evbuffer_iovec v[16];
    size_t seen = 0;
    while (seen < len) {
        int n = evbuffer_peek(in, -1, seen == 0 ? NULL : &pos, v, 16);
        if (n <= 0)
            break;
        for (int i = 0; i < n && i < 16; i++) {
            gw_checksum_update(&b->sums, v[i].iov_base, v[i].iov_len);
            seen += v[i].iov_len;
        }
        if (evbuffer_ptr_set(in, &pos, seen, EVBUFFER_PTR_SET) != 0)
            break;
    }
    evbuffer_add_buffer(b->data, in);
    return GW_S3_OK;
}

/* All bytes are in: the end-of-body checks. */
static enum gw_s3_err gw_s3_body_verify(struct gw_s3_body *b)
{
    struct gw_req *r = b->r;
    if (b->ac != NULL && !b->ac_done)
        return GW_S3_INCOMPLETE_BODY;
    enum gw_s3_err ferr = GW_S3_OK;
    if (b->form != NULL && gw_post_form_finish(b->form, &ferr) != CN_OK)
        return ferr;
    gw_checksum_final(&b->sums);
    if (!b->md5_outside)
        gw_checksum_hex(&b->sums, GW_CHECKSUM_MD5, b->md5_hex);
    if (r->auth.payload == GW_SIGV4_PAYLOAD_SHA256 &&
        gw_checksum_verify_hex(&b->sums, GW_CHECKSUM_SHA256, r->auth.payload_hash,
                               strlen(r->auth.payload_hash)) != CN_OK)
        return GW_S3_X_AMZ_CONTENT_SHA256_MISMATCH;
    size_t len;
    const char *md5 = gw_req_header(r, "content-md5", &len);
    if (md5 != NULL && b->form == NULL && !b->md5_outside) {
        int rc = gw_checksum_verify_base64(&b->sums, GW_CHECKSUM_MD5, md5, len);
        if (rc != CN_OK)
            return rc == CN_CORRUPT ? GW_S3_BAD_DIGEST : GW_S3_INVALID_DIGEST;
    }
    if (b->have_hdr_ck) {
        int rc = gw_checksum_verify_base64(&b->sums, b->hdr_algo, b->hdr_ck, b->hdr_ck_len);
        if (rc != CN_OK)
            return rc == CN_CORRUPT ? GW_S3_BAD_DIGEST : GW_S3_INVALID_REQUEST;
    }
    if (b->ac != NULL && gw_aws_chunked_trailer_checksum(b->ac, &b->trailer_algo,
                                                         b->trailer_b64) == CN_OK)
        b->have_trailer_ck = 1;
    return GW_S3_OK;
}

static void gw_s3_body_on_body(struct gw_req *r)
{
    struct gw_s3_body *b = r->bs;
    if (b == NULL || b->finished || b->paused)
        return; /* paused: r->body stays full, so the connection stops reading */
    enum gw_s3_err err = b->ac != NULL     ? gw_s3_body_feed_chunked(b, r->hr.body)
                         : b->form != NULL ? gw_s3_body_feed_form(b, r->hr.body)
                                           : gw_s3_body_feed_plain(b, r->hr.body);
    evbuffer_drain(r->hr.body, evbuffer_get_length(r->hr.body));
    /* a stalled client is a timeout (clients retry it); bytes that break
     * the framing are the client's fault and the connection is closed */
    if (err == GW_S3_OK && r->hr.body_failed)
        err = r->hr.body_done || r->hr.body_bad_framing ? GW_S3_INCOMPLETE_BODY
                                                  : GW_S3_REQUEST_TIMEOUT;
    if (err == GW_S3_OK && r->hr.body_done)
        err = gw_s3_body_verify(b);
    if (err != GW_S3_OK || r->hr.body_done) {
        gw_s3_body_finish(b, err);
        return;
    }
    if (b->on_data != NULL && !b->on_data(r, b->data, b->arg)) {
        b->paused = 1;
        return;
    }
    gw_req_body_consumed(r);
}

/* Finds an x-amz-checksum-<algo> header (the one to verify). */
static enum gw_s3_err gw_s3_body_find_checksum_header(struct gw_s3_body *b)
{
    const struct gw_http_parser *h = b->r->http;
    for (uint32_t i = 0; i < h->n_headers; i++) {
        enum gw_checksum_algo algo;
        if (gw_checksum_algo_from_header(h->headers[i].name, h->headers[i].name_len, &algo) !=
            CN_OK)
            continue;
        if (b->have_hdr_ck)
            return GW_S3_INVALID_REQUEST; /* S3: one checksum per request */
        b->have_hdr_ck = 1;
        b->hdr_algo = algo;
        b->hdr_ck = h->headers[i].value;
        b->hdr_ck_len = h->headers[i].value_len;
    }
    return GW_S3_OK;
}

/* Sets up the decoder and the sums; GW_S3_OK or the error to answer. */
static enum gw_s3_err gw_s3_body_setup(struct gw_s3_body *b)
{
    struct gw_req *r = b->r;
    if (r->post != NULL) { /* the request's checksum headers describe no file */
        b->form = gw_s3_post_form(r->post);
        b->no_hdr_ck = 1;
    }
    enum gw_s3_err err = b->no_hdr_ck ? GW_S3_OK : gw_s3_body_find_checksum_header(b);
    if (err != GW_S3_OK)
        return err;
    int64_t declared = gw_s3_body_declared_length(r);
    if (declared >= 0 && (uint64_t)declared > b->limit)
        return b->too_large;
    size_t md5_len;
    const char *md5 = gw_req_header(r, "content-md5", &md5_len);
    unsigned char digest[16];
    if (md5 != NULL && b->form == NULL && gw_checksum_content_md5_parse(md5, md5_len, digest) != CN_OK)
        return GW_S3_INVALID_DIGEST;
    unsigned want = b->md5_outside ? 0 : GW_CHECKSUM_BIT(GW_CHECKSUM_MD5);
    if (r->auth.payload == GW_SIGV4_PAYLOAD_SHA256)
        want |= GW_CHECKSUM_BIT(GW_CHECKSUM_SHA256);
    if (b->have_hdr_ck)
        want |= GW_CHECKSUM_BIT(b->hdr_algo);
    if (gw_checksum_init(&b->sums, want) != CN_OK)
        return GW_S3_INTERNAL_ERROR;
    b->have_sums = 1;
    if (!gw_s3_body_is_streaming(r->auth.payload))
        return GW_S3_OK;
    size_t tlen = 0;
    const char *trailer = gw_req_header(r, "x-amz-trailer", &tlen);
    struct gw_aws_chunked_config cfg = {
        .mode = r->auth.payload,
        .auth = &r->auth,
        .decoded_length = declared,
        .trailer_names = trailer,
        .trailer_names_len = tlen,
    };
    b->ac = gw_aws_chunked_new(&cfg, &err);
    return b->ac != NULL ? GW_S3_OK : err;
}

void gw_s3_body_read(struct gw_req *r, size_t limit, enum gw_s3_err too_large, gw_s3_body_cb done)
{
    gw_s3_body_read_flags(r, limit, too_large, 0, done);
}

void gw_s3_body_read_integrity(struct gw_req *r, size_t limit, enum gw_s3_err too_large,
                               gw_s3_body_cb done)
{
    static const char *const headers[] = {
        "content-md5", "x-amz-checksum-crc32", "x-amz-checksum-crc32c",
        "x-amz-checksum-crc64nvme", "x-amz-checksum-sha1", "x-amz-checksum-sha256",
    };
    int sent = 0;
    for (size_t i = 0; i < CN_ARRAY_LEN(headers) && !sent; i++)
        sent = gw_req_header(r, headers[i], NULL) != NULL;
    size_t tl;
    const char *t = gw_req_header(r, "x-amz-trailer", &tl);
    sent = sent || (t != NULL && tl > 15 && strncasecmp(t, "x-amz-checksum-", 15) == 0);
    if (!sent) {
        gw_req_error(r, GW_S3_INVALID_REQUEST,
                     "Missing required header for this request: Content-MD5");
        return;
    }
    gw_s3_body_read(r, limit, too_large, done);
}

void gw_s3_body_read_flags(struct gw_req *r, size_t limit, enum gw_s3_err too_large,
                           unsigned flags, gw_s3_body_cb done)
{
    struct gw_s3_body *b = cn_calloc(1, sizeof(*b));
    b->no_hdr_ck = (flags & GW_S3_BODY_OBJECT_CHECKSUM_HEADERS) != 0;
    b->r = r;
    b->limit = limit;
    b->too_large = too_large;
    b->done = done;
    b->data = evbuffer_new();
    r->bs = b;
    enum gw_s3_err err = gw_s3_body_setup(b);
    if (err != GW_S3_OK) {
        gw_s3_body_finish(b, err); /* before 100 Continue: the client sends nothing */
        return;
    }
    gw_req_body_read(r, gw_s3_body_on_body);
}

void gw_s3_body_stream(struct gw_req *r, uint64_t limit, enum gw_s3_err too_large,
                       unsigned flags, gw_s3_body_data_cb on_data, gw_s3_body_stream_cb done,
                       void *arg)
{
    struct gw_s3_body *b = cn_calloc(1, sizeof(*b));
    b->md5_outside = (flags & GW_S3_BODY_MD5_OUTSIDE) != 0;
    b->r = r;
    b->limit = (size_t)limit;
    b->too_large = too_large;
    b->on_data = on_data;
    b->sdone = done;
    b->arg = arg;
    b->data = evbuffer_new();
    r->bs = b;
    enum gw_s3_err err = gw_s3_body_setup(b);
    if (err != GW_S3_OK) {
        gw_s3_body_finish(b, err);
        return;
    }
    gw_req_body_read(r, gw_s3_body_on_body);
}

void gw_s3_body_resume(struct gw_req *r)
{
    struct gw_s3_body *b = r->bs;
    if (b == NULL || b->finished || !b->paused)
        return;
    b->paused = 0;
    if (!b->on_data(r, b->data, b->arg)) {
        b->paused = 1;
        return;
    }
    if (evbuffer_get_length(r->hr.body) > 0 || r->hr.body_done || r->hr.body_failed)
        gw_s3_body_on_body(r);
    else
        gw_req_body_consumed(r);
}

uint64_t gw_s3_body_decoded(const struct gw_req *r)
{
    const struct gw_s3_body *b = r->bs;
    return b != NULL ? b->decoded : 0;
}

enum gw_s3_err gw_s3_body_md5_outside_done(struct gw_req *r, const struct gw_checksum *md5)
{
    struct gw_s3_body *b = r->bs;
    CN_ASSERT(b != NULL && b->md5_outside);
    gw_checksum_hex(md5, GW_CHECKSUM_MD5, b->md5_hex);
    size_t len;
    const char *want = gw_req_header(r, "content-md5", &len);
    if (want == NULL || b->form != NULL)
        return GW_S3_OK;
    int rc = gw_checksum_verify_base64(md5, GW_CHECKSUM_MD5, want, len);
    if (rc == CN_OK)
        return GW_S3_OK;
    /* its form was checked before the body was read */
    return rc == CN_CORRUPT ? GW_S3_BAD_DIGEST : GW_S3_INVALID_DIGEST;
}

const char *gw_s3_body_md5_hex(const struct gw_req *r)
{
    const struct gw_s3_body *b = r->bs;
    return b != NULL ? b->md5_hex : "";
}

int gw_s3_body_checksum(const struct gw_req *r, enum gw_checksum_algo *algo,
                        char b64[GW_CHECKSUM_B64_MAX])
{
    const struct gw_s3_body *b = r->bs;
    if (b == NULL)
        return CN_NOTFOUND;
    if (b->have_hdr_ck) {
        *algo = b->hdr_algo;
        return gw_checksum_base64(&b->sums, b->hdr_algo, b64);
    }
    if (b->have_trailer_ck) {
        *algo = b->trailer_algo;
        memcpy(b64, b->trailer_b64, GW_CHECKSUM_B64_MAX);
        return CN_OK;
    }
    return CN_NOTFOUND;
}

/* ---- a large PUT's source (lo_put.h) ----------------------------------- */

static int gw_s3_body_lo_on_data(struct gw_req *r, struct evbuffer *data, void *arg)
{
    (void)r;
    struct gw_lo_put *lp = arg;
    return gw_lo_put_data(lp, data);
}

static void gw_s3_body_lo_on_end(struct gw_req *r, enum gw_s3_err err, struct evbuffer *data,
                                 void *arg)
{
    (void)r;
    struct gw_lo_put *lp = arg;
    gw_lo_put_body_end(lp, err, data);
}

static void gw_s3_body_lo_start(void *ctx, uint64_t limit, int md5_outside, struct gw_lo_put *lp)
{
    struct gw_req *r = ctx;
    gw_s3_body_stream(r, limit, GW_S3_ENTITY_TOO_LARGE, md5_outside ? GW_S3_BODY_MD5_OUTSIDE : 0,
                      gw_s3_body_lo_on_data, gw_s3_body_lo_on_end, lp);
}

static uint64_t gw_s3_body_lo_decoded(void *ctx)
{
    struct gw_req *r = ctx;
    return gw_s3_body_decoded(r);
}

static void gw_s3_body_lo_resume(void *ctx)
{
    struct gw_req *r = ctx;
    gw_s3_body_resume(r);
}

static enum gw_s3_err gw_s3_body_lo_md5_done(void *ctx, const struct gw_checksum *md5)
{
    struct gw_req *r = ctx;
    return gw_s3_body_md5_outside_done(r, md5);
}

void gw_s3_body_lo_source(struct gw_req *r, struct gw_lo_put_source *out)
{
    *out = (struct gw_lo_put_source){
        .start = gw_s3_body_lo_start,
        .decoded = gw_s3_body_lo_decoded,
        .resume = gw_s3_body_lo_resume,
        .md5_done = gw_s3_body_lo_md5_done,
        .ctx = r,
    };
}
