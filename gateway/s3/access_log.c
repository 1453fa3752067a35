/* Access lines (access_log.h): the two formats over one list of fields.
 * Text: space-separated, every field non-empty ("-" when it does not
 * apply), the key percent-encoded and the request line quoted, so a line
 * splits on spaces outside the quotes. JSON: one object per line, strings
 * escaped per RFC 8259, bytes that are not UTF-8 replaced by U+FFFD. */
#include "access_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cn/alloc.h"
#include "cn/log.h"
#include "cn/log_file.h"

/* A bounded line being built: puts stop at end (cap minus a reserve for
 * the closing fields), so an overlong field is cut, never the line. */
struct gw_access_log_buf {
    char *p;
    size_t len;
    size_t end;      /* escaped string fields stop here */
    size_t cap;      /* the fixed fields may use up to here */
};

static void gw_access_log_put(struct gw_access_log_buf *b, const char *s, size_t n)
{
    size_t room = b->cap - 1 - b->len;
    if (n > room)
        n = room;
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void gw_access_log_puts(struct gw_access_log_buf *b, const char *s)
{
    gw_access_log_put(b, s, strlen(s));
}

static void gw_access_log_putf(struct gw_access_log_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void gw_access_log_putf(struct gw_access_log_buf *b, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n > 0)
        gw_access_log_put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Appends an escaped piece of at most n bytes if it fits below b->end;
 * returns 0 (nothing written) when it does not. */
static int gw_access_log_piece(struct gw_access_log_buf *b, const char *s, size_t n)
{
    if (b->len + n > b->end)
        return 0;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    return 1;
}

/* Length of the valid UTF-8 sequence at s[n] (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF), or 0 when it is not one. */
static size_t gw_access_log_utf8_len(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80)
        return 1;
    size_t len;
    unsigned int min, cp;
    if ((s[0] & 0xe0) == 0xc0) {
        len = 2, min = 0x80, cp = s[0] & 0x1f;
    } else if ((s[0] & 0xf0) == 0xe0) {
        len = 3, min = 0x800, cp = s[0] & 0x0f;
    } else if ((s[0] & 0xf8) == 0xf0) {
        len = 4, min = 0x10000, cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

/* A JSON string of s[n] (quotes included); "-" when s is NULL or empty. */
static void gw_access_log_json_str(struct gw_access_log_buf *b, const char *s, size_t n)
{
    if (s == NULL || n == 0) {
        s = "-";
        n = 1;
    }
    gw_access_log_put(b, "\"", 1);
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        char esc[8];
        size_t k = 1, en;
        unsigned char c = u[i];
        if (c == '"' || c == '\\') {
            esc[0] = '\\', esc[1] = (char)c, en = 2;
        } else if (c == '\n') {
            memcpy(esc, "\\n", 2), en = 2;
        } else if (c == '\r') {
            memcpy(esc, "\\r", 2), en = 2;
        } else if (c == '\t') {
            memcpy(esc, "\\t", 2), en = 2;
        } else if (c < 0x20 || c == 0x7f) {
            en = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", c);
        } else if (c < 0x80) {
            esc[0] = (char)c, en = 1;
        } else if ((k = gw_access_log_utf8_len(u + i, n - i)) == 0) {
            memcpy(esc, "\\ufffd", 6), en = 6, k = 1;
        } else if (k == 3 && c == 0xe2 && u[i + 1] == 0x80 && (u[i + 2] & 0xfe) == 0xa8) {
            /* U+2028/U+2029: valid JSON, but not valid JavaScript source */
            en = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", 0x2028 + (u[i + 2] & 1));
        } else {
            memcpy(esc, u + i, k), en = k;
        }
        if (!gw_access_log_piece(b, esc, en))
            break;
        i += k;
    }
    gw_access_log_put(b, "\"", 1);
}

/* The text format's key: RFC 3986 unreserved characters and '/' as they
 * are, every other byte %XX (so no space, quote or control byte). */
static void gw_access_log_text_key(struct gw_access_log_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    if (s == NULL || n == 0) {
        gw_access_log_put(b, "-", 1);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[3] = {(char)c, 0, 0};
        size_t en = 1;
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '.' || c == '_' || c == '~' || c == '/'))
            esc[0] = '%', esc[1] = hex[c >> 4], esc[2] = hex[c & 15], en = 3;
        if (!gw_access_log_piece(b, esc, en))
            return;
    }
}

/* A text field that is normally a token (client, account, op, bucket,
 * error, id): bytes that would split or break the line become \xHH. */
static void gw_access_log_text_word(struct gw_access_log_buf *b, const char *s, size_t n,
                                    int quoted)
{
    if (!quoted && (s == NULL || n == 0)) {
        gw_access_log_put(b, "-", 1);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[5];
        size_t en = 1;
        esc[0] = (char)c;
        if (c <= ' ' || c >= 0x7f || c == '"' || c == '\\')
            en = (size_t)snprintf(esc, sizeof(esc), "\\x%02X", c);
        if (!gw_access_log_piece(b, esc, en))
            return;
    }
}

void gw_access_log_time(uint64_t us, char out[25])
{
    time_t t = (time_t)(us / 1000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    snprintf(out, 25, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", (tm.tm_year + 1900) % 10000,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             (int)((us / 1000) % 1000));
}

static size_t gw_access_log_slen(const char *s)
{
    return s != NULL ? strlen(s) : 0;
}

static void gw_access_log_format_text(const struct gw_access_log_entry *e,
                                      struct gw_access_log_buf *b, const char *when)
{
    gw_access_log_puts(b, when);
    gw_access_log_put(b, " ", 1);
    gw_access_log_text_word(b, e->client, gw_access_log_slen(e->client), 0);
    gw_access_log_put(b, " ", 1);
    gw_access_log_text_word(b, e->account, e->account_len, 0);
    gw_access_log_put(b, " ", 1);
    gw_access_log_text_word(b, e->op, gw_access_log_slen(e->op), 0);
    gw_access_log_put(b, " ", 1);
    gw_access_log_text_word(b, e->bucket, e->bucket_len, 0);
    gw_access_log_put(b, " ", 1);
    gw_access_log_text_key(b, e->key, e->key_len);
    if (e->method != NULL) {
        gw_access_log_put(b, " \"", 2);
        gw_access_log_text_word(b, e->method, e->method_len, 1);
        gw_access_log_put(b, " ", 1);
        gw_access_log_text_word(b, e->target, e->target_len, 1);
        gw_access_log_put(b, "\" ", 2);
    } else {
        gw_access_log_put(b, " \"-\" ", 5); /* the head could not be parsed */
    }
    b->end = b->cap - 1; /* the fixed fields below fit in the reserve */
    if (e->status > 0)
        gw_access_log_putf(b, "%d ", e->status);
    else
        gw_access_log_put(b, "- ", 2);
    gw_access_log_text_word(b, e->error, gw_access_log_slen(e->error), 0);
    gw_access_log_putf(b, " %llu %llu ", (unsigned long long)e->bytes_in,
                       (unsigned long long)e->bytes_out);
    if (e->ttfb_us > 0)
        gw_access_log_putf(b, "%.3f ", (double)e->ttfb_us / 1000.0);
    else
        gw_access_log_put(b, "- ", 2);
    gw_access_log_putf(b, "%.3f ", (double)e->total_us / 1000.0);
    gw_access_log_text_word(b, e->request_id, gw_access_log_slen(e->request_id), 0);
    gw_access_log_puts(b, e->aborted ? " aborted" : " ok");
}

static void gw_access_log_format_json(const struct gw_access_log_entry *e,
                                      struct gw_access_log_buf *b, const char *when)
{
    gw_access_log_puts(b, "{\"time\":\"");
    gw_access_log_puts(b, when);
    gw_access_log_puts(b, "\",\"client\":");
    gw_access_log_json_str(b, e->client, gw_access_log_slen(e->client));
    gw_access_log_puts(b, ",\"account\":");
    gw_access_log_json_str(b, e->account, e->account_len);
    gw_access_log_puts(b, ",\"operation\":");
    gw_access_log_json_str(b, e->op, gw_access_log_slen(e->op));
    gw_access_log_puts(b, ",\"bucket\":");
    gw_access_log_json_str(b, e->bucket, e->bucket_len);
    gw_access_log_puts(b, ",\"key\":");
    gw_access_log_json_str(b, e->key, e->key_len);
    gw_access_log_puts(b, ",\"method\":");
    gw_access_log_json_str(b, e->method, e->method_len);
    gw_access_log_puts(b, ",\"target\":");
    gw_access_log_json_str(b, e->target, e->target_len);
    b->end = b->cap - 1; /* the fixed fields below fit in the reserve */
    gw_access_log_putf(b, ",\"status\":%d,\"error\":", e->status);
    gw_access_log_json_str(b, e->error, gw_access_log_slen(e->error));
    gw_access_log_putf(b, ",\"bytes_in\":%llu,\"bytes_out\":%llu,\"ttfb_ms\":",
                       (unsigned long long)e->bytes_in, (unsigned long long)e->bytes_out);
    if (e->ttfb_us > 0)
        gw_access_log_putf(b, "%.3f", (double)e->ttfb_us / 1000.0);
    else
        gw_access_log_puts(b, "null");
    gw_access_log_putf(b, ",\"total_ms\":%.3f,\"request_id\":", (double)e->total_us / 1000.0);
    gw_access_log_json_str(b, e->request_id, gw_access_log_slen(e->request_id));
    gw_access_log_puts(b, e->aborted ? ",\"aborted\":true}" : ",\"aborted\":false}");
}

size_t gw_access_log_format(const struct gw_access_log_entry *e, enum gw_access_log_format fmt,
                            char *out, size_t cap)
{
    CN_ASSERT(cap >= 1024);
    /* what follows the last string that may be cut: at most ~400 bytes */
    struct gw_access_log_buf b = {.p = out, .len = 0, .end = cap - 512, .cap = cap - 1};
    char when[25];
    gw_access_log_time(e->time_us, when);
    if (fmt == GW_ACCESS_LOG_JSON)
        gw_access_log_format_json(e, &b, when);
    else
        gw_access_log_format_text(e, &b, when);
    out[b.len++] = '\n';
    out[b.len] = '\0';
    return b.len;
}

/* ---- the destination ------------------------------------------------- */

struct gw_access_log {
    struct cn_log_file *file;
    enum gw_access_log_format fmt;
    int own_file;   /* log.access_file is set */
};

int gw_access_log_new(const char *path, enum gw_access_log_format fmt, size_t buffer,
                      struct gw_access_log **out, char err[CN_ERR_LEN])
{
    *out = NULL;
    struct cn_log_file *f = NULL;
    int rc = cn_log_file_new(path, buffer, &f, err);
    if (rc != CN_OK)
        return rc;
    struct gw_access_log *a = cn_calloc(1, sizeof(*a));
    a->file = f;
    a->fmt = fmt;
    a->own_file = path != NULL && path[0] != '\0';
    *out = a;
    return CN_OK;
}

void gw_access_log_free(struct gw_access_log *a)
{
    if (a == NULL)
        return;
    cn_log_file_free(a->file);
    cn_free(a);
}

int gw_access_log_wanted(const struct gw_access_log *a)
{
    return a != NULL && (a->own_file || CN_LOG_INFO >= cn_log_level_current);
}

void gw_access_log_write(struct gw_access_log *a, const struct gw_access_log_entry *e)
{
    char line[GW_ACCESS_LOG_LINE_MAX];
    size_t n = gw_access_log_format(e, a->fmt, line, sizeof(line));
    cn_log_file_write(a->file, line, n);
}

int gw_access_log_reopen(struct gw_access_log *a, char err[CN_ERR_LEN])
{
    return cn_log_file_reopen(a->file, err);
}

uint64_t gw_access_log_dropped(struct gw_access_log *a)
{
    struct cn_log_file_stats st;
    cn_log_file_stats(a->file, &st);
    return st.dropped;
}

void gw_access_log_flush(struct gw_access_log *a)
{
    cn_log_file_flush(a->file);
}
