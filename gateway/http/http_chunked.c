/* Chunked transfer-coding decoder (RFC 9112 7.1). Framing bytes are read one
 * at a time (there are few of them); data is moved in whole evbuffer chains.
 * Lines (size + extensions, trailers) are bounded so a client cannot make us
 * scan forever, and end in CRLF only: a bare LF or CR is bad framing, since
 * a lenient decoder behind a strict proxy (or the reverse) can be fed a
 * second, smuggled request. */
#include "http_chunked.h"

#include "cn/hex.h"

enum gw_http_chunked_state {
    GW_HC_SIZE,       /* hex digits of the chunk size */
    GW_HC_EXT,        /* ";ext" after the size, up to the CR */
    GW_HC_SIZE_LF,    /* CR seen at the end of the size line */
    GW_HC_DATA,
    GW_HC_DATA_CR,    /* the CRLF after the data */
    GW_HC_DATA_LF,
    GW_HC_TRAILER,    /* start of a trailer line (or the final blank line) */
    GW_HC_TRAILER_LINE,
    GW_HC_TRAILER_LF, /* CR seen at the end of a trailer line */
    GW_HC_END_LF,
    GW_HC_DONE,
    GW_HC_FAILED,
};

#define GW_HTTP_CHUNKED_MAX_LINE 4096
#define GW_HTTP_CHUNKED_MAX_DIGITS 15 /* sizes below 2^60 */

void gw_http_chunked_init(struct gw_http_chunked *c)
{
    c->state = GW_HC_SIZE;
    c->remaining = 0;
    c->line_bytes = 0;
    c->n_digits = 0;
    c->total = 0;
}

static int gw_http_chunked_fail(struct gw_http_chunked *c)
{
    c->state = GW_HC_FAILED;
    return CN_INVAL;
}

/* After the size line: a zero size starts the trailers, else the data. */
static void gw_http_chunked_size_done(struct gw_http_chunked *c)
{
    c->line_bytes = 0;
    c->state = c->remaining == 0 ? GW_HC_TRAILER : GW_HC_DATA;
}

/* One framing byte. Returns CN_AGAIN to go on, CN_DONE or CN_INVAL. */
static int gw_http_chunked_byte(struct gw_http_chunked *c, unsigned char ch)
{
    if (++c->line_bytes > GW_HTTP_CHUNKED_MAX_LINE)
        return gw_http_chunked_fail(c);
    switch (c->state) {
    case GW_HC_SIZE: {
        int h = cn_hex_val(ch);
        if (h >= 0) {
            if (++c->n_digits > GW_HTTP_CHUNKED_MAX_DIGITS)
                return gw_http_chunked_fail(c);
            c->remaining = c->remaining * 16 + (uint64_t)h;
            return CN_AGAIN;
        }
        if (c->n_digits == 0)
            return gw_http_chunked_fail(c);
        if (ch == '\r') {
            c->state = GW_HC_SIZE_LF;
            return CN_AGAIN;
        }
        if (ch == ';' || ch == ' ' || ch == '\t') {
            c->state = GW_HC_EXT;
            return CN_AGAIN;
        }
        return gw_http_chunked_fail(c);
    }
    case GW_HC_EXT:
        if (ch == '\r')
            c->state = GW_HC_SIZE_LF;
        else if (ch < 0x20 && ch != '\t')
            return gw_http_chunked_fail(c);
        return CN_AGAIN;
    case GW_HC_SIZE_LF:
        if (ch != '\n')
            return gw_http_chunked_fail(c);
        gw_http_chunked_size_done(c);
        return CN_AGAIN;
    case GW_HC_DATA_CR:
        if (ch != '\r')
            return gw_http_chunked_fail(c);
        c->state = GW_HC_DATA_LF;
        return CN_AGAIN;
    case GW_HC_DATA_LF:
        if (ch != '\n')
            return gw_http_chunked_fail(c);
        c->state = GW_HC_SIZE;
        c->n_digits = 0;
        c->line_bytes = 0;
        return CN_AGAIN;
    case GW_HC_TRAILER:
        if (ch == '\r') {
            c->state = GW_HC_END_LF;
            return CN_AGAIN;
        }
        if (ch < 0x20 || ch == ' ')
            return gw_http_chunked_fail(c); /* a bare LF, or obs-fold */
        c->state = GW_HC_TRAILER_LINE;
        return CN_AGAIN;
    case GW_HC_TRAILER_LINE:
        if (ch == '\r')
            c->state = GW_HC_TRAILER_LF;
        else if (ch < 0x20 && ch != '\t')
            return gw_http_chunked_fail(c);
        return CN_AGAIN;
    case GW_HC_TRAILER_LF:
        if (ch != '\n')
            return gw_http_chunked_fail(c);
        c->state = GW_HC_TRAILER;
        c->line_bytes = 0;
        return CN_AGAIN;
    case GW_HC_END_LF:
        if (ch != '\n')
            return gw_http_chunked_fail(c);
        c->state = GW_HC_DONE;
        return CN_DONE;
    default:
        return gw_http_chunked_fail(c);
    }
}

int gw_http_chunked_decode(struct gw_http_chunked *c, struct evbuffer *src,
                           struct evbuffer *dst, size_t max_out)
{
    size_t moved = 0;
    for (;;) {
        if (c->state == GW_HC_DONE)
            return CN_DONE;
        if (c->state == GW_HC_FAILED)
            return CN_INVAL;
        if (c->state == GW_HC_DATA) {
            size_t avail = evbuffer_get_length(src);
            size_t want = (size_t)CN_MIN(c->remaining, (uint64_t)(max_out - moved));
            size_t n = CN_MIN(avail, want);
            if (n == 0)
                return CN_AGAIN;
            int got = evbuffer_remove_buffer(src, dst, n);
            if (got <= 0)
                return CN_AGAIN;
            moved += (size_t)got;
            c->remaining -= (uint64_t)got;
            c->total += (uint64_t)got;
            if (c->remaining == 0) {
                c->state = GW_HC_DATA_CR;
                c->line_bytes = 0;
            }
            continue;
        }
        unsigned char ch;
        if (evbuffer_remove(src, &ch, 1) != 1)
            return CN_AGAIN;
        int rc = gw_http_chunked_byte(c, ch);
        if (rc != CN_AGAIN)
            return rc;
    }
}
