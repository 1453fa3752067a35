/* The aws-chunked decoder: a resumable state machine over pushed bytes.
 * Chunk headers and trailer lines are gathered in a small line buffer (they
 * may arrive split); chunk data is handed to the caller straight from its
 * input, hashed on the way for the chunk signature and the trailer checksum. */
#include "aws_chunked.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "cn/alloc.h"
#include "cn/hex.h"
#include "cn/rc.h"

#define GW_AWS_CHUNKED_EMPTY_SHA \
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define GW_AWS_CHUNKED_MAX_TRAILERS 4

enum gw_aws_chunked_state {
    GW_AWS_CHUNKED_HEADER,     /* reading "hex[;ext]\r\n" */
    GW_AWS_CHUNKED_DATA,       /* chunk_left bytes of data to pass on */
    GW_AWS_CHUNKED_DATA_CR,    /* the "\r" after the data */
    GW_AWS_CHUNKED_DATA_LF,    /* the "\n" after the data */
    GW_AWS_CHUNKED_TRAILER,    /* after the 0 chunk: trailer lines, "" ends */
    GW_AWS_CHUNKED_END,        /* result is final */
};

struct gw_aws_chunked {
    enum gw_aws_chunked_state state;
    int result;                         /* CN_AGAIN while running */
    enum gw_s3_err err;
    int is_signed, has_trailer;
    int64_t decoded_length;
    uint64_t max_chunk, min_chunk;
    uint64_t decoded, chunk_left, last_data_chunk;
    /* signing */
    unsigned char key[32];
    char prev_sig[GW_SIGV4_SIG_HEX + 1], chunk_sig[GW_SIGV4_SIG_HEX + 1];
    char amz_date[GW_SIGV4_AMZ_DATE_LEN + 1];
    char scope[GW_SIGV4_SCOPE_MAX];
    EVP_MD_CTX *sha;                    /* SHA-256 of the current chunk */
    /* trailers */
    size_t n_announced;
    char announced[GW_AWS_CHUNKED_MAX_TRAILERS][40];
    int received[GW_AWS_CHUNKED_MAX_TRAILERS];
    int have_algo, got_checksum, got_trailer_sig, skipped_blank;
    enum gw_checksum_algo algo;
    struct gw_checksum ck;
    char checksum_b64[GW_CHECKSUM_B64_MAX];
    char canon[GW_AWS_CHUNKED_TRAILER_MAX]; /* "name:value\n" of each trailer */
    size_t canon_len, trailer_bytes;
    /* line buffer */
    char line[GW_AWS_CHUNKED_LINE_MAX];
    size_t line_len;
};

/* Ends the decoding with rc / err (first verdict wins). */
static int gw_aws_chunked_stop(struct gw_aws_chunked *d, int rc, enum gw_s3_err err)
{
    if (d->state != GW_AWS_CHUNKED_END) {
        d->state = GW_AWS_CHUNKED_END;
        d->result = rc;
        d->err = err;
    }
    return d->result;
}

/* ---- setup ----------------------------------------------------------- */

/* Parses the comma-separated x-amz-trailer names into d->announced. */
static int gw_aws_chunked_trailer_names(struct gw_aws_chunked *d, const char *s, size_t n)
{
    const char *p = s, *end = s + n;
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *e = comma != NULL ? comma : end;
        while (p < e && (*p == ' ' || *p == '\t'))
            p++;
        const char *q = e;
        while (q > p && (q[-1] == ' ' || q[-1] == '\t'))
            q--;
        size_t len = (size_t)(q - p);
        enum gw_checksum_algo a;
        if (len > 0) {
            if (d->n_announced == GW_AWS_CHUNKED_MAX_TRAILERS || len >= sizeof(d->announced[0]) ||
                gw_checksum_algo_from_header(p, len, &a) != CN_OK || d->have_algo)
                return CN_INVAL; /* S3 accepts one checksum trailer and nothing else */
            for (size_t i = 0; i < len; i++)
                d->announced[d->n_announced][i] = (char)(p[i] | (p[i] >= 'A' && p[i] <= 'Z' ? 0x20 : 0));
            d->announced[d->n_announced++][len] = '\0';
            d->have_algo = 1;
            d->algo = a;
        }
        p = comma != NULL ? comma + 1 : end;
    }
    return CN_OK;
}

struct gw_aws_chunked *gw_aws_chunked_new(const struct gw_aws_chunked_config *cfg,
                                          enum gw_s3_err *err)
{
    int is_signed = cfg->mode == GW_SIGV4_PAYLOAD_STREAMING ||
                    cfg->mode == GW_SIGV4_PAYLOAD_STREAMING_TRAILER;
    int trailer = cfg->mode == GW_SIGV4_PAYLOAD_STREAMING_TRAILER ||
                  cfg->mode == GW_SIGV4_PAYLOAD_STREAMING_UNSIGNED_TRAILER;
    *err = GW_S3_INVALID_REQUEST;
    if ((!is_signed && !trailer) || (is_signed && cfg->auth == NULL))
        return NULL;
    struct gw_aws_chunked *d = cn_calloc(1, sizeof(*d));
    d->state = GW_AWS_CHUNKED_HEADER;
    d->result = CN_AGAIN;
    d->is_signed = is_signed;
    d->has_trailer = trailer;
    d->decoded_length = cfg->decoded_length;
    d->max_chunk = cfg->max_chunk_size ? cfg->max_chunk_size : GW_AWS_CHUNKED_DEFAULT_MAX_CHUNK;
    d->min_chunk = cfg->min_chunk_size;
    if (cfg->trailer_names != NULL &&
        gw_aws_chunked_trailer_names(d, cfg->trailer_names, cfg->trailer_names_len) != CN_OK) {
        cn_free(d);
        *err = GW_S3_INVALID_ARGUMENT;
        return NULL;
    }
    if (is_signed) {
        const struct gw_sigv4_result *a = cfg->auth;
        memcpy(d->key, a->signing_key, 32);
        memcpy(d->prev_sig, a->signature, sizeof(d->prev_sig));
        memcpy(d->amz_date, a->amz_date, sizeof(d->amz_date));
        memcpy(d->scope, a->scope, sizeof(d->scope));
        d->sha = EVP_MD_CTX_new();
        if (d->sha == NULL || EVP_DigestInit_ex(d->sha, EVP_sha256(), NULL) != 1) {
            gw_aws_chunked_free(d);
            *err = GW_S3_INTERNAL_ERROR;
            return NULL;
        }
    }
    if (gw_checksum_init(&d->ck, d->have_algo ? GW_CHECKSUM_BIT(d->algo) : 0) != CN_OK) {
        gw_aws_chunked_free(d);
        *err = GW_S3_INTERNAL_ERROR;
        return NULL;
    }
    *err = GW_S3_OK;
    return d;
}

void gw_aws_chunked_free(struct gw_aws_chunked *d)
{
    if (d == NULL)
        return;
    EVP_MD_CTX_free(d->sha);
    gw_checksum_fini(&d->ck);
    OPENSSL_cleanse(d->key, sizeof(d->key));
    cn_free(d);
}

uint64_t gw_aws_chunked_decoded_bytes(const struct gw_aws_chunked *d)
{
    return d->decoded;
}

int gw_aws_chunked_trailer_checksum(const struct gw_aws_chunked *d,
                                    enum gw_checksum_algo *algo, char b64[GW_CHECKSUM_B64_MAX])
{
    if (d->result != CN_DONE || !d->got_checksum)
        return CN_NOTFOUND;
    *algo = d->algo;
    memcpy(b64, d->checksum_b64, GW_CHECKSUM_B64_MAX);
    return CN_OK;
}

/* ---- signatures ------------------------------------------------------ */

/* HMAC over "<prefix>\n<date>\n<scope>\n<prev>\n<h1>[\n<h2>]" and compares
 * with sig; on a match, sig becomes prev. */
static int gw_aws_chunked_check_sig(struct gw_aws_chunked *d, const char *prefix, const char *h1,
                                    const char *h2, const char *sig)
{
    char sts[512], mine[GW_SIGV4_SIG_HEX + 1];
    int n = snprintf(sts, sizeof(sts), "%s\n%s\n%s\n%s\n%s%s%s", prefix, d->amz_date, d->scope,
                     d->prev_sig, h1, h2 != NULL ? "\n" : "", h2 != NULL ? h2 : "");
    CN_ASSERT(n > 0 && (size_t)n < sizeof(sts));
    gw_sigv4_hmac_hex(d->key, sts, (size_t)n, mine);
    if (CRYPTO_memcmp(mine, sig, GW_SIGV4_SIG_HEX) != 0)
        return CN_CORRUPT;
    memcpy(d->prev_sig, mine, sizeof(d->prev_sig));
    return CN_OK;
}

/* The current chunk's data is complete: check its signature. */
static int gw_aws_chunked_chunk_done(struct gw_aws_chunked *d)
{
    if (!d->is_signed)
        return CN_OK;
    unsigned char h[32];
    unsigned int hl = 0;
    char hex[GW_CHECKSUM_HEX_MAX];
    CN_ASSERT(EVP_DigestFinal_ex(d->sha, h, &hl) == 1 &&
              EVP_DigestInit_ex(d->sha, EVP_sha256(), NULL) == 1);
    cn_hex_encode(h, 32, hex);
    if (gw_aws_chunked_check_sig(d, "AWS4-HMAC-SHA256-PAYLOAD", GW_AWS_CHUNKED_EMPTY_SHA, hex,
                                 d->chunk_sig) != CN_OK)
        return gw_aws_chunked_stop(d, CN_CORRUPT, GW_S3_SIGNATURE_DOES_NOT_MATCH);
    return CN_OK;
}

/* ---- chunk header ---------------------------------------------------- */

/* Finds ";chunk-signature=<64 hex>" among the extensions. */
static int gw_aws_chunked_find_sig(struct gw_aws_chunked *d, const char *ext, size_t n)
{
    static const char key[] = "chunk-signature=";
    const char *p = ext, *end = ext + n;
    while (p < end) {
        const char *semi = memchr(p, ';', (size_t)(end - p));
        const char *e = semi != NULL ? semi : end;
        if ((size_t)(e - p) == sizeof(key) - 1 + GW_SIGV4_SIG_HEX &&
            memcmp(p, key, sizeof(key) - 1) == 0) {
            memcpy(d->chunk_sig, p + sizeof(key) - 1, GW_SIGV4_SIG_HEX);
            d->chunk_sig[GW_SIGV4_SIG_HEX] = '\0';
            return CN_OK;
        }
        p = semi != NULL ? semi + 1 : end;
    }
    return CN_NOTFOUND;
}

/* The final (0-size) chunk: its signature, the decoded length, then on to
 * the trailer section. */
static int gw_aws_chunked_last_chunk(struct gw_aws_chunked *d)
{
    int rc = gw_aws_chunked_chunk_done(d);
    if (rc != CN_OK)
        return rc;
    if (d->decoded_length >= 0 && d->decoded != (uint64_t)d->decoded_length)
        return gw_aws_chunked_stop(d, CN_INVAL, GW_S3_INCOMPLETE_BODY);
    d->state = GW_AWS_CHUNKED_TRAILER;
    return CN_OK;
}

static int gw_aws_chunked_header_line(struct gw_aws_chunked *d, const char *l, size_t n)
{
    uint64_t size = 0;
    size_t i = 0;
    for (; i < n && cn_hex_val(l[i]) >= 0; i++) {
        if (i == 16)
            return gw_aws_chunked_stop(d, CN_TOOBIG, GW_S3_INVALID_REQUEST);
        size = size << 4 | (uint64_t)cn_hex_val(l[i]);
    }
    if (i == 0 || (i < n && l[i] != ';'))
        return gw_aws_chunked_stop(d, CN_INVAL, GW_S3_INVALID_REQUEST);
    if (d->is_signed && (i == n || gw_aws_chunked_find_sig(d, l + i + 1, n - i - 1) != CN_OK))
        return gw_aws_chunked_stop(d, CN_INVAL, GW_S3_INVALID_REQUEST);
    if (size > d->max_chunk)
        return gw_aws_chunked_stop(d, CN_TOOBIG, GW_S3_ENTITY_TOO_LARGE);
    if (size > 0 && d->last_data_chunk > 0 && d->last_data_chunk < d->min_chunk)
        return gw_aws_chunked_stop(d, CN_INVAL, GW_S3_INVALID_CHUNK_SIZE);
    if (d->decoded_length >= 0 && d->decoded + size > (uint64_t)d->decoded_length)
        return gw_aws_chunked_stop(d, CN_INVAL, GW_S3_INCOMPLETE_BODY);
    if (size == 0)
        return gw_aws_chunked_last_chunk(d);
    d->last_data_chunk = size;
    d->chunk_left = size;
    d->state = GW_AWS_CHUNKED_DATA;
    return CN_OK;
}

/* ---- trailer --------------------------------------------------------- */

/* Every announced trailer came, the signature too when needed, and the
 * checksum matches: the body is complete. */
static int gw_aws_chunked_finish_checks(struct gw_aws_chunked *d)
{
    for (size_t i = 0; i < d->n_announced; i++)
        if (!d->received[i])
            return gw_aws_chunked_stop(d, CN_INVAL, GW_S3_INCOMPLETE_BODY);
    if (d->is_signed && d->has_trailer && !d->got_trailer_sig)
        return gw_aws_chunked_stop(d, CN_CORRUPT, GW_S3_SIGNATURE_DOES_NOT_MATCH);
    if (d->got_checksum) {
        gw_checksum_final(&d->ck);
        int rc = gw_checksum_verify_base64(&d->ck, d->algo, d->checksum_b64,
                                           strlen(d->checksum_b64));
        if (rc == CN_INVAL)
            return gw_aws_chunked_stop(d, CN_CORRUPT, GW_S3_INVALID_REQUEST);
        if (rc != CN_OK)
            return gw_aws_chunked_stop(d, CN_CORRUPT, GW_S3_BAD_DIGEST);
    }
    return gw_aws_chunked_stop(d, CN_DONE, GW_S3_OK);
}

static int gw_aws_chunked_trailer_sig(struct gw_aws_chunked *d, const char *v, size_t vn)
{
    if (!d->is_signed)
        return CN_OK; /* unsigned form: nothing to check it with */
    if (d->got_trailer_sig || vn != GW_SIGV4_SIG_HEX)
        return gw_aws_chunked_stop(d, CN_INVAL, GW_S3_INVALID_REQUEST);
    char hex[GW_CHECKSUM_HEX_MAX], sig[GW_SIGV4_SIG_HEX + 1];
    memcpy(sig, v, vn);
    sig[vn] = '\0';
    gw_checksum_sha256_hex(d->canon, d->canon_len, hex);
    if (gw_aws_chunked_check_sig(d, "AWS4-HMAC-SHA256-TRAILER", hex, NULL, sig) != CN_OK)
        return gw_aws_chunked_stop(d, CN_CORRUPT, GW_S3_SIGNATURE_DOES_NOT_MATCH);
    d->got_trailer_sig = 1;
    return CN_OK;
}

/* One announced trailer "name:value" (name already lower-cased). */
static int gw_aws_chunked_trailer_value(struct gw_aws_chunked *d, const char *name, size_t nn,
                                        const char *v, size_t vn)
{
    size_t i = 0;
    while (i < d->n_announced &&
           !(strlen(d->announced[i]) == nn && memcmp(d->announced[i], name, nn) == 0))
        i++;
    if (i == d->n_announced || d->received[i] || d->got_trailer_sig || vn >= GW_CHECKSUM_B64_MAX)
        return gw_aws_chunked_stop(d, CN_INVAL, GW_S3_INVALID_REQUEST);
    d->received[i] = 1;
    memcpy(d->checksum_b64, v, vn);
    d->checksum_b64[vn] = '\0';
    d->got_checksum = 1;
    if (d->canon_len + nn + vn + 2 > sizeof(d->canon))
        return gw_aws_chunked_stop(d, CN_TOOBIG, GW_S3_INVALID_REQUEST);
    memcpy(d->canon + d->canon_len, name, nn);
    d->canon[d->canon_len + nn] = ':';
    memcpy(d->canon + d->canon_len + nn + 1, v, vn);
    d->canon[d->canon_len + nn + 1 + vn] = '\n';
    d->canon_len += nn + vn + 2;
    return CN_OK;
}

static int gw_aws_chunked_trailer_line(struct gw_aws_chunked *d, const char *l, size_t n)
{
    if (n == 0) {
        /* Some writers put an empty line between the 0 chunk and the
         * trailers: skip one while announced trailers are still due. */
        if (d->n_announced > 0 && !d->received[0] && !d->skipped_blank && !d->got_trailer_sig) {
            d->skipped_blank = 1;
            return CN_OK;
        }
        return gw_aws_chunked_finish_checks(d);
    }
    d->trailer_bytes += n + 2;
    if (d->trailer_bytes > GW_AWS_CHUNKED_TRAILER_MAX)
        return gw_aws_chunked_stop(d, CN_TOOBIG, GW_S3_INVALID_REQUEST);
    const char *colon = memchr(l, ':', n);
    if (colon == NULL || colon == l || !d->has_trailer)
        return gw_aws_chunked_stop(d, CN_INVAL, GW_S3_INVALID_REQUEST);
    char name[64];
    size_t nn = (size_t)(colon - l);
    while (nn > 0 && (l[nn - 1] == ' ' || l[nn - 1] == '\t'))
        nn--;
    if (nn >= sizeof(name))
        return gw_aws_chunked_stop(d, CN_INVAL, GW_S3_INVALID_REQUEST);
    for (size_t i = 0; i < nn; i++)
        name[i] = (char)(l[i] >= 'A' && l[i] <= 'Z' ? l[i] | 0x20 : l[i]);
    const char *v = colon + 1, *ve = l + n;
    while (v < ve && (*v == ' ' || *v == '\t'))
        v++;
    while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
        ve--;
    if (nn == 23 && memcmp(name, "x-amz-trailer-signature", 23) == 0)
        return gw_aws_chunked_trailer_sig(d, v, (size_t)(ve - v));
    return gw_aws_chunked_trailer_value(d, name, nn, v, (size_t)(ve - v));
}

/* ---- driver ---------------------------------------------------------- */

/* Gathers a CRLF-terminated line from in; *used bytes taken. Returns
 * CN_OK when d->line holds a whole line (without CRLF), CN_AGAIN when more
 * input is needed, or a stop verdict. */
static int gw_aws_chunked_gather(struct gw_aws_chunked *d, const char *in, size_t len,
                                 size_t *used)
{
    const char *nl = memchr(in, '\n', len);
    size_t take = nl != NULL ? (size_t)(nl - in) + 1 : len;
    *used = take;
    if (d->line_len + take > sizeof(d->line))
        return gw_aws_chunked_stop(d, CN_TOOBIG, GW_S3_INVALID_REQUEST);
    memcpy(d->line + d->line_len, in, take);
    d->line_len += take;
    if (nl == NULL)
        return CN_AGAIN;
    if (d->line_len < 2 || d->line[d->line_len - 2] != '\r')
        return gw_aws_chunked_stop(d, CN_INVAL, GW_S3_INVALID_REQUEST);
    d->line_len -= 2;
    return CN_OK;
}

/* Passes up to len bytes of chunk data on. */
static int gw_aws_chunked_data(struct gw_aws_chunked *d, const char *in, size_t len,
                               size_t *used, gw_aws_chunked_data_cb cb, void *arg)
{
    size_t n = (size_t)CN_MIN((uint64_t)len, d->chunk_left);
    *used = n;
    if (d->is_signed)
        CN_ASSERT(EVP_DigestUpdate(d->sha, in, n) == 1);
    gw_checksum_update(&d->ck, in, n);
    d->decoded += n;
    d->chunk_left -= n;
    int rc = cb(arg, in, n);
    if (rc != CN_OK) {
        gw_aws_chunked_stop(d, rc, GW_S3_INTERNAL_ERROR);
        return rc;
    }
    if (d->chunk_left > 0)
        return CN_OK;
    d->state = GW_AWS_CHUNKED_DATA_CR;
    return gw_aws_chunked_chunk_done(d);
}

/* Handles a whole line in d->line according to the state. */
static int gw_aws_chunked_line(struct gw_aws_chunked *d)
{
    size_t n = d->line_len;
    d->line_len = 0;
    if (d->state == GW_AWS_CHUNKED_HEADER)
        return gw_aws_chunked_header_line(d, d->line, n);
    return gw_aws_chunked_trailer_line(d, d->line, n);
}

/* One step of the machine over in[len] (len > 0); *used bytes consumed.
 * Returns CN_OK to go on or the final verdict. */
static int gw_aws_chunked_step(struct gw_aws_chunked *d, const char *in, size_t len,
                               size_t *used, gw_aws_chunked_data_cb cb, void *arg)
{
    int rc;
    *used = 0;
    switch (d->state) {
    case GW_AWS_CHUNKED_HEADER:
    case GW_AWS_CHUNKED_TRAILER:
        rc = gw_aws_chunked_gather(d, in, len, used);
        if (rc == CN_AGAIN)
            return CN_OK;
        return rc == CN_OK ? gw_aws_chunked_line(d) : rc;
    case GW_AWS_CHUNKED_DATA:
        return gw_aws_chunked_data(d, in, len, used, cb, arg);
    case GW_AWS_CHUNKED_DATA_CR:
    case GW_AWS_CHUNKED_DATA_LF:
        *used = 1;
        if (in[0] != (d->state == GW_AWS_CHUNKED_DATA_CR ? '\r' : '\n'))
            return gw_aws_chunked_stop(d, CN_INVAL, GW_S3_INVALID_REQUEST);
        d->state = d->state == GW_AWS_CHUNKED_DATA_CR ? GW_AWS_CHUNKED_DATA_LF
                                                      : GW_AWS_CHUNKED_HEADER;
        return CN_OK;
    case GW_AWS_CHUNKED_END:
        break;
    }
    return d->result;
}

int gw_aws_chunked_feed(struct gw_aws_chunked *d, const char *in, size_t len, size_t *used,
                        gw_aws_chunked_data_cb cb, void *arg, enum gw_s3_err *err)
{
    size_t pos = 0;
    while (pos < len && d->state != GW_AWS_CHUNKED_END) {
        size_t n = 0;
        int rc = gw_aws_chunked_step(d, in + pos, len - pos, &n, cb, arg);
        pos += n;
        if (rc != CN_OK)
            break;
    }
    *used = pos;
    *err = d->state == GW_AWS_CHUNKED_END ? d->err : GW_S3_OK;
    return d->state == GW_AWS_CHUNKED_END ? d->result : CN_AGAIN;
}

int gw_aws_chunked_finish(struct gw_aws_chunked *d, enum gw_s3_err *err)
{
    /* Only a trailer section that lacks its closing empty line can end
     * here: everything before it is framed by sizes. */
    if (d->state == GW_AWS_CHUNKED_TRAILER && d->line_len == 0)
        gw_aws_chunked_finish_checks(d);
    else
        gw_aws_chunked_stop(d, CN_INVAL, GW_S3_INCOMPLETE_BODY);
    *err = d->err;
    return d->result;
}
