/* Incremental HTTP/1.1 request-head parser: a byte-at-a-time state machine
 * (nginx ngx_http_parse_request_line style) that copies the head into a
 * bounded buffer, NUL-terminates each token in place and, at the blank line,
 * derives the body framing (Content-Length / chunked), keep-alive and
 * Expect: 100-continue. Everything it reads is outside input: every byte is
 * checked against the grammar and every length against the limits. */
#include "http_parser.h"

#include <string.h>

#include "cn/alloc.h"

enum gw_http_parser_state {
    GW_HP_METHOD,
    GW_HP_TARGET,
    GW_HP_VERSION,
    GW_HP_RL_LF,        /* CR seen at the end of the request line */
    GW_HP_HDR_START,    /* first byte of a header line (or of the blank line) */
    GW_HP_HDR_NAME,
    GW_HP_HDR_VALUE_WS, /* blanks after the colon */
    GW_HP_HDR_VALUE,
    GW_HP_HDR_LF,       /* CR seen at the end of a header line */
    GW_HP_END_LF,       /* CR seen on the blank line */
    GW_HP_DONE,
    GW_HP_FAILED,
};

void gw_http_limits_default(struct gw_http_limits *lim)
{
    lim->max_request_line = 16 * 1024;
    lim->max_headers = 128;
    lim->max_head_bytes = 64 * 1024;
}

void gw_http_parser_init(struct gw_http_parser *p, const struct gw_http_limits *lim)
{
    memset(p, 0, sizeof(*p));
    if (lim != NULL)
        p->lim = *lim;
    else
        gw_http_limits_default(&p->lim);
    CN_ASSERT(p->lim.max_head_bytes >= 64 && p->lim.max_headers >= 1);
    p->buf = cn_malloc(p->lim.max_head_bytes);
    p->headers = cn_calloc(p->lim.max_headers, sizeof(*p->headers));
    p->hdr_off_ = cn_calloc((size_t)p->lim.max_headers * 2, sizeof(uint32_t));
    gw_http_parser_reset(p);
}

void gw_http_parser_fini(struct gw_http_parser *p)
{
    cn_free(p->buf);
    cn_free(p->headers);
    cn_free(p->hdr_off_);
    p->buf = NULL;
    p->headers = NULL;
    p->hdr_off_ = NULL;
}

void gw_http_parser_reset(struct gw_http_parser *p)
{
    p->len = 0;
    p->state = GW_HP_METHOD;
    p->line_start = 0;
    p->mark = 0;
    p->method = p->target = p->path = p->query = NULL;
    p->method_len = p->target_len = p->path_len = p->query_len = 0;
    p->version_minor = 0;
    p->n_headers = 0;
    p->content_length = -1;
    p->chunked = 0;
    p->keep_alive = 0;
    p->expect_continue = 0;
    p->fail = GW_HTTP_FAIL_NONE;
    p->fail_reason = NULL;
}

int gw_http_token_eq(const char *s, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    if (n != len)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char a = (unsigned char)s[i], b = (unsigned char)lit[i];
        if (a >= 'A' && a <= 'Z')
            a = (unsigned char)(a - 'A' + 'a');
        if (b >= 'A' && b <= 'Z')
            b = (unsigned char)(b - 'A' + 'a');
        if (a != b)
            return 0;
    }
    return 1;
}

/* RFC 9110 tchar. */
static int gw_http_parser_is_tchar(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return 1;
    return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int gw_http_parser_fail(struct gw_http_parser *p, enum gw_http_fail f, const char *why)
{
    p->state = GW_HP_FAILED;
    p->fail = f;
    p->fail_reason = why;
    return f == GW_HTTP_FAIL_HEADERS_TOO_LARGE || f == GW_HTTP_FAIL_URI_TOO_LONG
               ? CN_TOOBIG
               : CN_INVAL;
}

int gw_http_fail_status(enum gw_http_fail f)
{
    switch (f) {
    case GW_HTTP_FAIL_NONE: return 200;
    case GW_HTTP_FAIL_BAD_REQUEST: return 400;
    case GW_HTTP_FAIL_URI_TOO_LONG: return 414;
    case GW_HTTP_FAIL_HEADERS_TOO_LARGE: return 431;
    case GW_HTTP_FAIL_BAD_VERSION: return 505;
    case GW_HTTP_FAIL_BAD_FRAMING: return 400;
    case GW_HTTP_FAIL_BAD_HOST: return 400;
    }
    return 400;
}

const struct gw_http_header *gw_http_parser_header(const struct gw_http_parser *p,
                                                   const char *name)
{
    for (uint32_t i = 0; i < p->n_headers; i++)
        if (gw_http_token_eq(p->headers[i].name, p->headers[i].name_len, name))
            return &p->headers[i];
    return NULL;
}

/* Parses a Content-Length value: digits only, at most 18 of them. */
static int gw_http_parser_parse_length(const char *s, uint32_t len, int64_t *out)
{
    if (len == 0 || len > 18)
        return CN_INVAL;
    int64_t v = 0;
    for (uint32_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return CN_INVAL;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return CN_OK;
}

/* Does a comma-separated header value contain token (case-insensitive)? */
static int gw_http_parser_list_has(const char *v, uint32_t len, const char *token)
{
    uint32_t i = 0;
    while (i < len) {
        while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        uint32_t s = i;
        while (i < len && v[i] != ',')
            i++;
        uint32_t e = i;
        while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
            e--;
        if (e > s && gw_http_token_eq(v + s, e - s, token))
            return 1;
    }
    return 0;
}

/* Called at the blank line: fills headers[] from the offsets, splits the
 * target, derives framing. Returns CN_OK or a failure. */
static int gw_http_parser_finish(struct gw_http_parser *p)
{
    for (uint32_t i = 0; i < p->n_headers; i++) {
        struct gw_http_header *h = &p->headers[i];
        h->name = p->buf + p->hdr_off_[2 * i];
        h->name_len = (uint32_t)strlen(h->name);
        h->value = p->buf + p->hdr_off_[2 * i + 1];
        h->value_len = (uint32_t)strlen(h->value);
    }
    p->method = p->buf;
    p->path = p->target;
    const char *q = memchr(p->target, '?', p->target_len);
    if (q != NULL) {
        p->path_len = (uint32_t)(q - p->target);
        p->query = q + 1;
        p->query_len = p->target_len - p->path_len - 1;
    } else {
        p->path_len = p->target_len;
        p->query = p->target + p->target_len; /* the NUL after the target */
        p->query_len = 0;
    }
    p->keep_alive = p->version_minor >= 1;
    int have_te = 0, n_host = 0;
    for (uint32_t i = 0; i < p->n_headers; i++) {
        const struct gw_http_header *h = &p->headers[i];
        if (gw_http_token_eq(h->name, h->name_len, "content-length")) {
            int64_t v;
            if (gw_http_parser_parse_length(h->value, h->value_len, &v) != CN_OK)
                return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_FRAMING, "bad Content-Length");
            if (p->content_length >= 0 && p->content_length != v)
                return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_FRAMING,
                                           "conflicting Content-Length");
            p->content_length = v;
        } else if (gw_http_token_eq(h->name, h->name_len, "transfer-encoding")) {
            if (have_te || !gw_http_token_eq(h->value, h->value_len, "chunked"))
                return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_FRAMING,
                                           "unsupported Transfer-Encoding");
            have_te = 1;
            p->chunked = 1;
        } else if (gw_http_token_eq(h->name, h->name_len, "connection")) {
            if (gw_http_parser_list_has(h->value, h->value_len, "close"))
                p->keep_alive = 0;
            else if (gw_http_parser_list_has(h->value, h->value_len, "keep-alive"))
                p->keep_alive = 1;
        } else if (gw_http_token_eq(h->name, h->name_len, "host")) {
            n_host++;
        } else if (gw_http_token_eq(h->name, h->name_len, "expect")) {
            if (gw_http_token_eq(h->value, h->value_len, "100-continue"))
                p->expect_continue = p->version_minor >= 1;
        }
    }
    if (p->chunked && p->content_length >= 0)
        return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_FRAMING,
                                   "both Content-Length and Transfer-Encoding");
    /* RFC 9112 3.2: an HTTP/1.1 request names its host exactly once (1.0
     * clients may leave it out); two could route one request two ways */
    if (n_host > 1 || (n_host == 0 && p->version_minor >= 1))
        return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_HOST,
                                   n_host > 1 ? "More than one Host header"
                                              : "Missing Host header");
    p->state = GW_HP_DONE;
    return CN_OK;
}

/* Appends one byte of the head to the buffer, enforcing the head limit. A
 * request line that alone fills the head buffer is a long target (414), not
 * a large header section: http.max_request_line may equal the head size. */
static int gw_http_parser_push(struct gw_http_parser *p, char c)
{
    if (p->len + 1 >= p->lim.max_head_bytes)
        return p->state <= GW_HP_RL_LF
                   ? gw_http_parser_fail(p, GW_HTTP_FAIL_URI_TOO_LONG, "request line too long")
                   : gw_http_parser_fail(p, GW_HTTP_FAIL_HEADERS_TOO_LARGE,
                                         "request head too large");
    p->buf[p->len++] = c;
    return CN_OK;
}

/* Request-line states. Returns CN_AGAIN to go on, or a failure. */
static int gw_http_parser_request_line(struct gw_http_parser *p, unsigned char c)
{
    if (p->len >= p->lim.max_request_line && p->state != GW_HP_RL_LF)
        return gw_http_parser_fail(p, GW_HTTP_FAIL_URI_TOO_LONG, "request line too long");
    switch (p->state) {
    case GW_HP_METHOD:
        if (p->len == 0 && (c == '\r' || c == '\n'))
            return CN_AGAIN; /* RFC 9112 2.2: ignore empty lines before a request */
        if (c == ' ' && p->len > 0) {
            p->method_len = p->len;
            if (gw_http_parser_push(p, '\0') != CN_OK)
                return CN_TOOBIG;
            p->mark = p->len;
            p->state = GW_HP_TARGET;
            return CN_AGAIN;
        }
        if (!gw_http_parser_is_tchar(c))
            return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_REQUEST, "bad method");
        return gw_http_parser_push(p, (char)c) == CN_OK ? CN_AGAIN : CN_TOOBIG;
    case GW_HP_TARGET:
        if (c == ' ') {
            p->target_len = p->len - p->mark;
            if (p->target_len == 0 || p->buf[p->mark] != '/')
                return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_REQUEST, "bad request target");
            if (gw_http_parser_push(p, '\0') != CN_OK)
                return CN_TOOBIG;
            p->target = p->buf + p->mark;
            p->mark = p->len;
            p->state = GW_HP_VERSION;
            return CN_AGAIN;
        }
        if (c <= 0x20 || c >= 0x7f)
            return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_REQUEST, "bad byte in request target");
        return gw_http_parser_push(p, (char)c) == CN_OK ? CN_AGAIN : CN_TOOBIG;
    case GW_HP_VERSION:
        if (c == '\n') /* RFC 9112 2.2: a bare LF is where parsers disagree */
            return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_REQUEST, "bare LF");
        if (c == '\r') {
            const char *v = p->buf + p->mark;
            uint32_t vlen = p->len - p->mark;
            if (vlen != 8 || memcmp(v, "HTTP/1.", 7) != 0)
                return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_VERSION, "not HTTP/1.x");
            if (v[7] != '0' && v[7] != '1')
                return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_VERSION, "not HTTP/1.0 or 1.1");
            p->version_minor = v[7] - '0';
            p->state = GW_HP_RL_LF;
            return CN_AGAIN;
        }
        if (p->len - p->mark >= 8)
            return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_VERSION, "bad HTTP version");
        return gw_http_parser_push(p, (char)c) == CN_OK ? CN_AGAIN : CN_TOOBIG;
    case GW_HP_RL_LF:
        if (c != '\n')
            return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_REQUEST, "CR without LF");
        p->state = GW_HP_HDR_START;
        return CN_AGAIN;
    default:
        CN_ASSERT(0);
    }
}

/* Ends a header value: trims trailing blanks and NUL-terminates it. */
static int gw_http_parser_end_value(struct gw_http_parser *p)
{
    while (p->len > p->mark && (p->buf[p->len - 1] == ' ' || p->buf[p->len - 1] == '\t'))
        p->len--;
    if (gw_http_parser_push(p, '\0') != CN_OK)
        return CN_TOOBIG;
    p->hdr_off_[2 * p->n_headers + 1] = p->mark;
    p->n_headers++;
    return CN_AGAIN;
}

/* Header-section states. Returns CN_AGAIN, CN_OK at the end, or a failure. */
static int gw_http_parser_header_byte(struct gw_http_parser *p, unsigned char c)
{
    switch (p->state) {
    case GW_HP_HDR_START:
        if (c == '\r') {
            p->state = GW_HP_END_LF;
            return CN_AGAIN;
        }
        if (c == '\n')
            return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_REQUEST, "bare LF");
        if (c == ' ' || c == '\t')
            return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_REQUEST, "obsolete line folding");
        if (p->n_headers >= p->lim.max_headers)
            return gw_http_parser_fail(p, GW_HTTP_FAIL_HEADERS_TOO_LARGE, "too many headers");
        p->hdr_off_[2 * p->n_headers] = p->len;
        p->state = GW_HP_HDR_NAME;
        /* fall through: c is the first byte of the name */
        /* FALLTHROUGH */
    case GW_HP_HDR_NAME:
        if (c == ':') {
            if (p->len == p->hdr_off_[2 * p->n_headers])
                return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_REQUEST, "empty header name");
            if (gw_http_parser_push(p, '\0') != CN_OK)
                return CN_TOOBIG;
            p->state = GW_HP_HDR_VALUE_WS;
            p->mark = p->len;
            return CN_AGAIN;
        }
        if (!gw_http_parser_is_tchar(c))
            return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_REQUEST, "bad header name");
        return gw_http_parser_push(p, (char)c) == CN_OK ? CN_AGAIN : CN_TOOBIG;
    case GW_HP_HDR_VALUE_WS:
        if (c == ' ' || c == '\t')
            return CN_AGAIN;
        p->mark = p->len;
        p->state = GW_HP_HDR_VALUE;
        /* FALLTHROUGH */
    case GW_HP_HDR_VALUE:
        if (c == '\n')
            return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_REQUEST, "bare LF");
        if (c == '\r') {
            p->state = GW_HP_HDR_LF;
            return gw_http_parser_end_value(p);
        }
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_REQUEST, "bad byte in header value");
        return gw_http_parser_push(p, (char)c) == CN_OK ? CN_AGAIN : CN_TOOBIG;
    case GW_HP_HDR_LF:
        if (c != '\n')
            return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_REQUEST, "CR without LF");
        p->state = GW_HP_HDR_START;
        return CN_AGAIN;
    case GW_HP_END_LF:
        if (c != '\n')
            return gw_http_parser_fail(p, GW_HTTP_FAIL_BAD_REQUEST, "CR without LF");
        return gw_http_parser_finish(p);
    default:
        CN_ASSERT(0);
    }
}

int gw_http_parser_feed(struct gw_http_parser *p, const char *data, size_t len, size_t *used)
{
    *used = 0;
    if (p->state == GW_HP_FAILED)
        return p->fail == GW_HTTP_FAIL_HEADERS_TOO_LARGE ? CN_TOOBIG : CN_INVAL;
    if (p->state == GW_HP_DONE)
        return CN_OK;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)data[i];
        int rc = p->state <= GW_HP_RL_LF ? gw_http_parser_request_line(p, c)
                                         : gw_http_parser_header_byte(p, c);
        if (rc == CN_AGAIN)
            continue;
        *used = i + 1;
        return rc;
    }
    *used = len;
    return CN_AGAIN;
}
