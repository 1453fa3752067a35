/* Recursive-descent reader of Erlang terms (see term.h). All nodes of one
 * parse live in one arena, freed at once by bench_term_doc_fini(). */
#include "term.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/hex.h"

#define BENCH_TERM_MAX_NODES 1000000
#define BENCH_TERM_ARENA_BLOCK 16384

struct bench_term_arena {
    struct bench_term_arena *next;
    size_t used, cap;
    char data[];
};

struct bench_term_parser {
    const char *buf;
    size_t len, pos;
    int line;
    size_t line_start;
    int depth;
    size_t nodes;
    struct bench_term_arena *arena;
    char *err;
    int failed;
};

static void *bench_term_arena_alloc(struct bench_term_parser *p, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    struct bench_term_arena *a = p->arena;
    if (a == NULL || a->cap - a->used < n) {
        size_t cap = n > BENCH_TERM_ARENA_BLOCK ? n : BENCH_TERM_ARENA_BLOCK;
        a = cn_malloc(sizeof(*a) + cap);
        a->next = p->arena;
        a->used = 0;
        a->cap = cap;
        p->arena = a;
    }
    void *r = a->data + a->used;
    a->used += n;
    return r;
}

static void bench_term_arena_free(struct bench_term_arena *a)
{
    while (a != NULL) {
        struct bench_term_arena *next = a->next;
        cn_free(a);
        a = next;
    }
}

/* Records the first error at the current position; later ones are dropped. */
static __attribute__((format(printf, 2, 3))) void
bench_term_fail(struct bench_term_parser *p, const char *fmt, ...)
{
    if (p->failed)
        return;
    p->failed = 1;
    int n = snprintf(p->err, CN_ERR_LEN, "line %d, column %d: ", p->line,
                     (int)(p->pos - p->line_start) + 1);
    if (n < 0 || n >= CN_ERR_LEN)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + n, CN_ERR_LEN - (size_t)n, fmt, ap);
    va_end(ap);
}

static int bench_term_peek(const struct bench_term_parser *p)
{
    return p->pos < p->len ? (unsigned char)p->buf[p->pos] : -1;
}

/* Consumes one byte, keeping the line count. */
static int bench_term_next(struct bench_term_parser *p)
{
    if (p->pos >= p->len)
        return -1;
    int c = (unsigned char)p->buf[p->pos++];
    if (c == '\n') {
        p->line++;
        p->line_start = p->pos;
    }
    return c;
}

static void bench_term_skip_space(struct bench_term_parser *p)
{
    for (;;) {
        int c = bench_term_peek(p);
        if (c == '%') {
            while (c != -1 && c != '\n')
                c = bench_term_next(p);
        } else if (c != -1 && isspace(c)) {
            bench_term_next(p);
        } else {
            return;
        }
    }
}

static struct bench_term *bench_term_node(struct bench_term_parser *p,
                                          enum bench_term_type type, size_t at,
                                          int line, size_t line_start)
{
    if (++p->nodes > BENCH_TERM_MAX_NODES) {
        bench_term_fail(p, "too many terms (more than %d)", BENCH_TERM_MAX_NODES);
        return NULL;
    }
    struct bench_term *t = bench_term_arena_alloc(p, sizeof(*t));
    memset(t, 0, sizeof(*t));
    t->type = type;
    t->line = line;
    t->col = (int)(at - line_start) + 1;
    return t;
}

/* Reads one character of a quoted string or $c after the backslash has been
 * seen; returns the byte value or -1 (error recorded). */
static int bench_term_escape(struct bench_term_parser *p)
{
    int c = bench_term_next(p);
    switch (c) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case 's': return ' ';
    case 'e': return 27;
    case 'd': return 127;
    case 'b': return '\b';
    case 'f': return '\f';
    case 'v': return '\v';
    case 'x': {
        int v = 0, digits = 0;
        if (bench_term_peek(p) == '{') {
            bench_term_next(p);
            while (cn_hex_val(bench_term_peek(p)) >= 0 && digits < 2) {
                v = v * 16 + cn_hex_val(bench_term_next(p));
                digits++;
            }
            if (bench_term_next(p) != '}' || digits == 0) {
                bench_term_fail(p, "bad \\x{..} escape (only bytes are supported)");
                return -1;
            }
            return v;
        }
        for (; digits < 2; digits++) {
            int h = cn_hex_val(bench_term_next(p));
            if (h < 0) {
                bench_term_fail(p, "bad \\x escape");
                return -1;
            }
            v = v * 16 + h;
        }
        return v;
    }
    case -1:
        bench_term_fail(p, "unterminated escape");
        return -1;
    default:
        if (c >= '0' && c <= '7') {
            int v = c - '0';
            for (int i = 0; i < 2 && bench_term_peek(p) >= '0' && bench_term_peek(p) <= '7'; i++)
                v = v * 8 + (bench_term_next(p) - '0');
            return v & 0xff;
        }
        return c; /* \\ \" \' and any other char stand for themselves */
    }
}

/* Reads the body of a quoted text up to the closing quote q, appending to
 * *out (grown with cn_realloc). Returns CN_OK or CN_INVAL. */
static int bench_term_quoted(struct bench_term_parser *p, int q, char **out, size_t *len,
                             size_t *cap)
{
    size_t start = p->pos, start_ls = p->line_start;
    int start_line = p->line;
    bench_term_next(p); /* opening quote */
    for (;;) {
        int c = bench_term_next(p);
        if (c == -1) {
            /* point at the opening quote: the end of the file says little */
            p->pos = start, p->line = start_line, p->line_start = start_ls;
            bench_term_fail(p, "unterminated %s", q == '"' ? "string" : "quoted atom");
            return CN_INVAL;
        }
        if (c == q)
            return CN_OK;
        if (c == '\\' && (c = bench_term_escape(p)) < 0)
            return CN_INVAL;
        if (*len + 2 > *cap) {
            *cap = *cap ? *cap * 2 : 64;
            *out = cn_realloc(*out, *cap);
        }
        (*out)[(*len)++] = (char)c;
    }
}

/* Copies a text into a new STRING or ATOM node. */
static struct bench_term *bench_term_text_node(struct bench_term_parser *p,
                                               enum bench_term_type type, const char *s,
                                               size_t n, size_t at, int line, size_t ls)
{
    struct bench_term *t = bench_term_node(p, type, at, line, ls);
    if (t == NULL)
        return NULL;
    char *copy = bench_term_arena_alloc(p, n + 1);
    if (n)
        memcpy(copy, s, n);
    copy[n] = '\0';
    t->s = copy;
    t->len = n;
    return t;
}

/* "..." possibly followed by more adjacent "..." (Erlang concatenates them). */
static struct bench_term *bench_term_string(struct bench_term_parser *p)
{
    size_t at = p->pos, ls = p->line_start;
    int line = p->line;
    char *s = NULL;
    size_t len = 0, cap = 0;
    struct bench_term *t = NULL;
    for (;;) {
        if (bench_term_quoted(p, '"', &s, &len, &cap) != CN_OK)
            goto done;
        size_t save = p->pos, save_ls = p->line_start;
        int save_line = p->line;
        bench_term_skip_space(p);
        if (bench_term_peek(p) != '"') {
            p->pos = save, p->line = save_line, p->line_start = save_ls;
            break;
        }
    }
    t = bench_term_text_node(p, BENCH_TERM_STRING, s, len, at, line, ls);
done:
    cn_free(s);
    return t;
}

static struct bench_term *bench_term_binary(struct bench_term_parser *p)
{
    size_t at = p->pos, ls = p->line_start;
    int line = p->line;
    char *s = NULL;
    size_t len = 0, cap = 0;
    struct bench_term *t = NULL;
    p->pos += 2; /* "<<" */
    bench_term_skip_space(p);
    if (bench_term_peek(p) == '"' && bench_term_quoted(p, '"', &s, &len, &cap) != CN_OK)
        goto done;
    bench_term_skip_space(p);
    if (p->pos + 2 > p->len || p->buf[p->pos] != '>' || p->buf[p->pos + 1] != '>') {
        bench_term_fail(p, "expected '>>' (only <<\"text\">> binaries are supported)");
        goto done;
    }
    p->pos += 2;
    t = bench_term_text_node(p, BENCH_TERM_STRING, s, len, at, line, ls);
done:
    cn_free(s);
    return t;
}

static int bench_term_is_atom_char(int c)
{
    return c != -1 && (isalnum(c) || c == '_' || c == '@');
}

static struct bench_term *bench_term_atom(struct bench_term_parser *p)
{
    size_t at = p->pos, ls = p->line_start;
    int line = p->line;
    if (bench_term_peek(p) == '\'') {
        char *s = NULL;
        size_t len = 0, cap = 0;
        struct bench_term *t = NULL;
        if (bench_term_quoted(p, '\'', &s, &len, &cap) == CN_OK)
            t = bench_term_text_node(p, BENCH_TERM_ATOM, s, len, at, line, ls);
        cn_free(s);
        return t;
    }
    while (bench_term_is_atom_char(bench_term_peek(p)))
        p->pos++;
    if (p->pos - at > 255) {
        p->pos = at;
        bench_term_fail(p, "atom longer than 255 characters");
        return NULL;
    }
    return bench_term_text_node(p, BENCH_TERM_ATOM, p->buf + at, p->pos - at, at, line, ls);
}

/* Integers (decimal, Base#digits, $c, with _ separators) and floats. */
static struct bench_term *bench_term_number_term(struct bench_term_parser *p)
{
    size_t at = p->pos, ls = p->line_start;
    int line = p->line;
    int neg = 0;
    if (bench_term_peek(p) == '-' || bench_term_peek(p) == '+') {
        neg = bench_term_next(p) == '-';
        bench_term_skip_space(p);
    }
    if (bench_term_peek(p) == '$') {
        bench_term_next(p);
        int c = bench_term_next(p);
        if (c == '\\')
            c = bench_term_escape(p);
        if (c < 0) {
            bench_term_fail(p, "bad character literal");
            return NULL;
        }
        struct bench_term *t = bench_term_node(p, BENCH_TERM_INT, at, line, ls);
        if (t != NULL)
            t->i = neg ? -c : c;
        return t;
    }
    char digits[128];
    size_t nd = 0;
    int is_float = 0, base = 10;
    while (p->pos < p->len) {
        int c = bench_term_peek(p);
        if (nd + 3 >= sizeof(digits)) {
            bench_term_fail(p, "number too long");
            return NULL;
        }
        if (isdigit(c) || (base != 10 && isalnum(c))) {
            digits[nd++] = (char)c;
        } else if (c == '_' && nd > 0 && p->pos + 1 < p->len &&
                   isalnum((unsigned char)p->buf[p->pos + 1])) {
            /* digit separator: skip */
        } else if (c == '#' && base == 10 && !is_float && nd > 0 && nd <= 2) {
            digits[nd] = '\0';
            base = atoi(digits);
            if (base < 2 || base > 36) {
                bench_term_fail(p, "bad integer base %d", base);
                return NULL;
            }
            nd = 0;
        } else if (c == '.' && base == 10 && !is_float && p->pos + 1 < p->len &&
                   isdigit((unsigned char)p->buf[p->pos + 1])) {
            is_float = 1;
            digits[nd++] = '.';
        } else if ((c == 'e' || c == 'E') && is_float) {
            digits[nd++] = 'e';
            p->pos++;
            if (bench_term_peek(p) == '-' || bench_term_peek(p) == '+')
                digits[nd++] = (char)bench_term_peek(p);
            else
                continue;
        } else {
            break;
        }
        p->pos++;
    }
    digits[nd] = '\0';
    if (nd == 0) {
        bench_term_fail(p, "expected a number");
        return NULL;
    }
    struct bench_term *t = bench_term_node(p, is_float ? BENCH_TERM_FLOAT : BENCH_TERM_INT,
                                           at, line, ls);
    if (t == NULL)
        return NULL;
    char *end;
    errno = 0;
    if (is_float) {
        t->f = strtod(digits, &end);
        if (neg)
            t->f = -t->f;
        if (*end != '\0' || !isfinite(t->f)) {
            bench_term_fail(p, "bad float '%s'", digits);
            return NULL;
        }
    } else {
        unsigned long long v = strtoull(digits, &end, base);
        if (*end != '\0' || errno == ERANGE || v > (unsigned long long)INT64_MAX) {
            p->pos = at;
            bench_term_fail(p, "bad or too large integer '%s'", digits);
            return NULL;
        }
        t->i = neg ? -(int64_t)v : (int64_t)v;
    }
    return t;
}

static struct bench_term *bench_term_parse_term(struct bench_term_parser *p);

/* Tuple or list: open, items separated by ',', close. */
static struct bench_term *bench_term_seq(struct bench_term_parser *p,
                                         enum bench_term_type type, int close)
{
    size_t at = p->pos, ls = p->line_start;
    int line = p->line;
    struct bench_term **items = NULL;
    size_t n = 0, cap = 0;
    struct bench_term *t = NULL;
    if (++p->depth > BENCH_TERM_MAX_DEPTH) {
        bench_term_fail(p, "terms nested deeper than %d", BENCH_TERM_MAX_DEPTH);
        goto done;
    }
    bench_term_next(p);
    bench_term_skip_space(p);
    if (bench_term_peek(p) != close) {
        for (;;) {
            struct bench_term *item = bench_term_parse_term(p);
            if (item == NULL)
                goto done;
            if (n == cap) {
                cap = cap ? cap * 2 : 8;
                items = cn_realloc(items, cap * sizeof(*items));
            }
            items[n++] = item;
            bench_term_skip_space(p);
            int c = bench_term_peek(p);
            if (c == close)
                break;
            if (c == '|' && type == BENCH_TERM_LIST) {
                bench_term_fail(p, "improper lists ([H|T]) are not supported");
                goto done;
            }
            if (c != ',') {
                bench_term_fail(p, "expected ',' or '%c'", close);
                goto done;
            }
            bench_term_next(p);
            bench_term_skip_space(p);
        }
    }
    bench_term_next(p); /* close */
    t = bench_term_node(p, type, at, line, ls);
    if (t == NULL)
        goto done;
    t->len = n;
    if (n) {
        t->items = bench_term_arena_alloc(p, n * sizeof(*items));
        memcpy(t->items, items, n * sizeof(*items));
    }
done:
    p->depth--;
    cn_free(items);
    return t;
}

static struct bench_term *bench_term_parse_term(struct bench_term_parser *p)
{
    bench_term_skip_space(p);
    int c = bench_term_peek(p);
    if (c == -1) {
        bench_term_fail(p, "unexpected end of input");
        return NULL;
    }
    if (c == '{')
        return bench_term_seq(p, BENCH_TERM_TUPLE, '}');
    if (c == '[')
        return bench_term_seq(p, BENCH_TERM_LIST, ']');
    if (c == '"')
        return bench_term_string(p);
    if (c == '<' && p->pos + 1 < p->len && p->buf[p->pos + 1] == '<')
        return bench_term_binary(p);
    if (c == '\'' || islower(c))
        return bench_term_atom(p);
    if (isdigit(c) || c == '-' || c == '+' || c == '$')
        return bench_term_number_term(p);
    if (isupper(c) || c == '_') {
        bench_term_fail(p, "variables are not allowed in a config file");
        return NULL;
    }
    if (isprint(c))
        bench_term_fail(p, "unexpected '%c'", c);
    else
        bench_term_fail(p, "unexpected byte 0x%02x", c);
    return NULL;
}

static void bench_term_doc_add(struct bench_term_doc *doc, struct bench_term *t, size_t *cap)
{
    if (doc->nterms == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        doc->terms = cn_realloc(doc->terms, *cap * sizeof(*doc->terms));
    }
    doc->terms[doc->nterms++] = t;
}

static int bench_term_parse_common(const char *buf, size_t len, struct bench_term_doc *doc,
                                   char err[CN_ERR_LEN], int one)
{
    struct bench_term_parser p = {.buf = buf, .len = len, .line = 1, .err = err};
    size_t cap = 0;
    memset(doc, 0, sizeof(*doc));
    err[0] = '\0';
    if (len > BENCH_TERM_MAX_INPUT) {
        snprintf(err, CN_ERR_LEN, "input larger than %u bytes", BENCH_TERM_MAX_INPUT);
        return CN_TOOBIG;
    }
    for (;;) {
        bench_term_skip_space(&p);
        if (bench_term_peek(&p) == -1 && !one)
            break;
        struct bench_term *t = bench_term_parse_term(&p);
        if (t == NULL)
            goto fail;
        bench_term_doc_add(doc, t, &cap);
        bench_term_skip_space(&p);
        if (one) {
            if (bench_term_peek(&p) == '.')
                bench_term_next(&p), bench_term_skip_space(&p);
            if (bench_term_peek(&p) != -1) {
                bench_term_fail(&p, "unexpected text after the term");
                goto fail;
            }
            break;
        }
        if (bench_term_peek(&p) != '.') {
            bench_term_fail(&p, "expected '.' after the term");
            goto fail;
        }
        bench_term_next(&p);
        int c = bench_term_peek(&p);
        if (c != -1 && c != '%' && !isspace(c)) {
            bench_term_fail(&p, "expected white space after '.'");
            goto fail;
        }
    }
    doc->arena = p.arena;
    return CN_OK;
fail:
    cn_free(doc->terms);
    bench_term_arena_free(p.arena);
    memset(doc, 0, sizeof(*doc));
    return CN_INVAL;
}

int bench_term_parse_doc(const char *buf, size_t len, struct bench_term_doc *doc,
                         char err[CN_ERR_LEN])
{
    return bench_term_parse_common(buf, len, doc, err, 0);
}

int bench_term_parse_one(const char *buf, size_t len, struct bench_term_doc *doc,
                         char err[CN_ERR_LEN])
{
    return bench_term_parse_common(buf, len, doc, err, 1);
}

void bench_term_doc_fini(struct bench_term_doc *doc)
{
    cn_free(doc->terms);
    bench_term_arena_free(doc->arena);
    memset(doc, 0, sizeof(*doc));
}

int bench_term_is_atom(const struct bench_term *t, const char *name)
{
    return t != NULL && t->type == BENCH_TERM_ATOM && strcmp(t->s, name) == 0;
}

int bench_term_is_tuple(const struct bench_term *t, size_t arity)
{
    return t != NULL && t->type == BENCH_TERM_TUPLE && t->len == arity;
}

int bench_term_number(const struct bench_term *t, double *out)
{
    if (t->type == BENCH_TERM_INT)
        *out = (double)t->i;
    else if (t->type == BENCH_TERM_FLOAT)
        *out = t->f;
    else
        return CN_INVAL;
    return CN_OK;
}

int bench_term_text(const struct bench_term *t, char *out, size_t outlen)
{
    if (outlen == 0)
        return CN_TOOBIG;
    if (t->type == BENCH_TERM_STRING || t->type == BENCH_TERM_ATOM) {
        if (t->len + 1 > outlen)
            return CN_TOOBIG;
        memcpy(out, t->s, t->len + 1);
        return CN_OK;
    }
    if (t->type != BENCH_TERM_LIST)
        return CN_INVAL;
    /* "" is the empty list; a list of byte values is a string too */
    if (t->len + 1 > outlen)
        return CN_TOOBIG;
    for (size_t i = 0; i < t->len; i++) {
        const struct bench_term *c = t->items[i];
        if (c->type != BENCH_TERM_INT || c->i < 1 || c->i > 255)
            return CN_INVAL;
        out[i] = (char)c->i;
    }
    out[t->len] = '\0';
    return CN_OK;
}

/* snprintf-like append that keeps counting past the end. */
static void bench_term_put(char *out, size_t outlen, size_t *n, const char *s, size_t len)
{
    if (*n < outlen) {
        size_t room = outlen - *n - 1;
        memcpy(out + *n, s, len < room ? len : room);
    }
    *n += len;
}

static void bench_term_put_quoted(char *out, size_t outlen, size_t *n, const char *s,
                                  size_t len, char q)
{
    bench_term_put(out, outlen, n, &q, 1);
    for (size_t i = 0; i < len; i++) {
        char esc[8];
        unsigned char c = (unsigned char)s[i];
        if (c == (unsigned char)q || c == '\\')
            snprintf(esc, sizeof(esc), "\\%c", c);
        else if (c < 32 || c >= 127)
            snprintf(esc, sizeof(esc), "\\x%02x", c);
        else
            snprintf(esc, sizeof(esc), "%c", c);
        bench_term_put(out, outlen, n, esc, strlen(esc));
    }
    bench_term_put(out, outlen, n, &q, 1);
}

static int bench_term_atom_plain(const struct bench_term *t)
{
    if (t->len == 0 || !islower((unsigned char)t->s[0]))
        return 0;
    for (size_t i = 0; i < t->len; i++)
        if (!bench_term_is_atom_char((unsigned char)t->s[i]))
            return 0;
    return 1;
}

static void bench_term_format_into(const struct bench_term *t, char *out, size_t outlen,
                                   size_t *n)
{
    char num[64];
    switch (t->type) {
    case BENCH_TERM_INT:
        snprintf(num, sizeof(num), "%lld", (long long)t->i);
        bench_term_put(out, outlen, n, num, strlen(num));
        break;
    case BENCH_TERM_FLOAT:
        snprintf(num, sizeof(num), "%.17g", t->f);
        if (strpbrk(num, ".e") == NULL)
            strcat(num, ".0");
        bench_term_put(out, outlen, n, num, strlen(num));
        break;
    case BENCH_TERM_ATOM:
        if (bench_term_atom_plain(t))
            bench_term_put(out, outlen, n, t->s, t->len);
        else
            bench_term_put_quoted(out, outlen, n, t->s, t->len, '\'');
        break;
    case BENCH_TERM_STRING:
        bench_term_put_quoted(out, outlen, n, t->s, t->len, '"');
        break;
    case BENCH_TERM_TUPLE:
    case BENCH_TERM_LIST:
        bench_term_put(out, outlen, n, t->type == BENCH_TERM_TUPLE ? "{" : "[", 1);
        for (size_t i = 0; i < t->len; i++) {
            if (i)
                bench_term_put(out, outlen, n, ",", 1);
            bench_term_format_into(t->items[i], out, outlen, n);
        }
        bench_term_put(out, outlen, n, t->type == BENCH_TERM_TUPLE ? "}" : "]", 1);
        break;
    }
}

size_t bench_term_format(const struct bench_term *t, char *out, size_t outlen)
{
    size_t n = 0;
    bench_term_format_into(t, out, outlen, &n);
    if (outlen)
        out[n < outlen ? n : outlen - 1] = '\0';
    return n;
}
