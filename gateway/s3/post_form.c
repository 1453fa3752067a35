/* Streaming multipart/form-data (RFC 7578 over RFC 2046) for POST object.
 * One state machine: the delimiter "\r\n--boundary" is matched byte by byte
 * with the matched prefix carried across feeds, so a boundary split at any
 * point of the input is found, and the bytes of a prefix that turns out not
 * to be one are data again (they are the delimiter's own first bytes, so
 * nothing needs to be held but their count). */
#include "post_form.h"

#include <string.h>
#include <strings.h>

#include "cn/alloc.h"

enum gw_post_form_state {
    GW_POST_FORM_DATA,        /* inside a part (or the preamble): looking for the delimiter */
    GW_POST_FORM_AFTER_DELIM, /* after a delimiter: "--" ends, CRLF starts a part */
    GW_POST_FORM_AFTER_DASH,  /* one '-' seen */
    GW_POST_FORM_AFTER_CR,    /* transport padding done, '\r' seen */
    GW_POST_FORM_HEADERS,     /* a part's header lines */
    GW_POST_FORM_DONE,        /* the file part ended: skip the rest */
    GW_POST_FORM_FAILED,
};

enum gw_post_form_kind {
    GW_POST_FORM_PREAMBLE,    /* before the first boundary: discarded */
    GW_POST_FORM_FIELD,       /* a field's value: kept */
    GW_POST_FORM_FILE,        /* the file: to the sink */
};

struct gw_post_form {
    char delim[GW_POST_FORM_BOUNDARY_MAX + 4]; /* "\r\n--" boundary */
    size_t dlen;
    size_t matched;                  /* delimiter bytes matched so far */
    enum gw_post_form_state state;
    enum gw_post_form_kind kind;
    size_t pre_data;                 /* bytes before the file's data */
    int ended;                       /* the last delimiter ("--") was seen */
    /* the part being read */
    char line[GW_POST_FORM_LINE_MAX];
    size_t line_len;
    int has_name, is_file;
    char name[256];
    size_t name_len;
    /* the fields: names and values in one arena */
    char *arena;
    size_t arena_used;
    struct gw_post_form_field fields[GW_POST_FORM_MAX_FIELDS];
    size_t n_fields;
    size_t value_start;              /* arena offset of the value being read */
    /* the file part */
    char filename[1024];
    size_t filename_len;
    char ftype[256];
    size_t ftype_len;
    uint64_t file_bytes, min_file, max_file;
};

/* ---- Content-Type ---------------------------------------------------- */

/* RFC 2046 bchars (a space only inside, never last). */
static int gw_post_form_bchar(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           strchr("'()+_,-./:=? ", c) != NULL;
}

int gw_post_form_boundary(const char *ctype, size_t len, char out[GW_POST_FORM_BOUNDARY_MAX + 1],
                          size_t *blen)
{
    static const char mt[] = "multipart/form-data";
    size_t i = 0;
    while (i < len && (ctype[i] == ' ' || ctype[i] == '\t'))
        i++;
    if (len - i < sizeof(mt) - 1 || strncasecmp(ctype + i, mt, sizeof(mt) - 1) != 0)
        return CN_NOTFOUND;
    i += sizeof(mt) - 1;
    if (i < len && ctype[i] != ';' && ctype[i] != ' ' && ctype[i] != '\t')
        return CN_NOTFOUND;
    while (i < len) {
        while (i < len && (ctype[i] == ';' || ctype[i] == ' ' || ctype[i] == '\t'))
            i++;
        size_t ns = i;
        while (i < len && ctype[i] != '=' && ctype[i] != ';')
            i++;
        size_t ne = i;
        while (ne > ns && (ctype[ne - 1] == ' ' || ctype[ne - 1] == '\t'))
            ne--;
        if (i >= len || ctype[i] != '=') {
            continue;
        }
        i++;
        const char *v = ctype + i;
        size_t vn;
        if (i < len && ctype[i] == '"') {
            const char *q = memchr(ctype + i + 1, '"', len - i - 1);
            if (q == NULL)
                return CN_INVAL;
            v = ctype + i + 1;
            vn = (size_t)(q - v);
            i = (size_t)(q - ctype) + 1;
        } else {
            while (i < len && ctype[i] != ';' && ctype[i] != ' ' && ctype[i] != '\t')
                i++;
            vn = (size_t)(ctype + i - v);
        }
        if (ne - ns != 8 || strncasecmp(ctype + ns, "boundary", 8) != 0)
            continue;
        if (vn == 0 || vn > GW_POST_FORM_BOUNDARY_MAX || v[vn - 1] == ' ')
            return CN_INVAL;
        for (size_t k = 0; k < vn; k++)
            if (!gw_post_form_bchar(v[k]))
                return CN_INVAL;
        memcpy(out, v, vn);
        out[vn] = '\0';
        *blen = vn;
        return CN_OK;
    }
    return CN_INVAL;
}

/* ---- lifetime -------------------------------------------------------- */

struct gw_post_form *gw_post_form_new(const char *boundary, size_t blen)
{
    CN_ASSERT(blen >= 1 && blen <= GW_POST_FORM_BOUNDARY_MAX);
    struct gw_post_form *f = cn_calloc(1, sizeof(*f));
    memcpy(f->delim, "\r\n--", 4);
    memcpy(f->delim + 4, boundary, blen);
    f->dlen = blen + 4;
    /* the body may open with "--boundary": start as if after a CRLF */
    f->matched = 2;
    f->state = GW_POST_FORM_DATA;
    f->kind = GW_POST_FORM_PREAMBLE;
    f->arena = cn_malloc(GW_POST_FORM_PRE_DATA_MAX + 2 * GW_POST_FORM_MAX_FIELDS);
    f->max_file = UINT64_MAX;
    return f;
}

void gw_post_form_free(struct gw_post_form *f)
{
    if (f == NULL)
        return;
    cn_free(f->arena);
    cn_free(f);
}

void gw_post_form_set_range(struct gw_post_form *f, uint64_t min, uint64_t max)
{
    f->min_file = min;
    f->max_file = max;
}

uint64_t gw_post_form_file_bytes(const struct gw_post_form *f)
{
    return f->file_bytes;
}

/* ---- fields ---------------------------------------------------------- */

size_t gw_post_form_field_count(const struct gw_post_form *f)
{
    return f->n_fields;
}

const struct gw_post_form_field *gw_post_form_field_at(const struct gw_post_form *f, size_t i)
{
    return i < f->n_fields ? &f->fields[i] : NULL;
}

const struct gw_post_form_field *gw_post_form_field(const struct gw_post_form *f,
                                                    const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < f->n_fields; i++)
        if (f->fields[i].name_len == n && strncasecmp(f->fields[i].name, name, n) == 0)
            return &f->fields[i];
    return NULL;
}

const char *gw_post_form_filename(const struct gw_post_form *f, size_t *len)
{
    *len = f->filename_len;
    return f->filename;
}

const char *gw_post_form_file_type(const struct gw_post_form *f, size_t *len)
{
    *len = f->ftype_len;
    return f->ftype;
}

/* ---- the parser ------------------------------------------------------ */

static int gw_post_form_fail(struct gw_post_form *f, enum gw_s3_err *err, enum gw_s3_err e,
                             int rc)
{
    f->state = GW_POST_FORM_FAILED;
    *err = e;
    return rc;
}

/* Counts bytes that precede the file's data against S3's limit. */
static int gw_post_form_pre(struct gw_post_form *f, size_t n)
{
    f->pre_data += n;
    return f->pre_data <= GW_POST_FORM_PRE_DATA_MAX ? CN_OK : CN_TOOBIG;
}

/* Data bytes of the current part. */
static int gw_post_form_emit(struct gw_post_form *f, const char *p, size_t n,
                             gw_post_form_sink_cb sink, void *arg, enum gw_s3_err *err)
{
    if (n == 0)
        return CN_OK;
    switch (f->kind) {
    case GW_POST_FORM_PREAMBLE:
        return CN_OK; /* counted as consumed (gw_post_form_feed) */
    case GW_POST_FORM_FIELD:
        if (n > GW_POST_FORM_PRE_DATA_MAX - f->arena_used)
            return gw_post_form_fail(f, err, GW_S3_MAX_POST_PRE_DATA_LENGTH_EXCEEDED, CN_TOOBIG);
        memcpy(f->arena + f->arena_used, p, n);
        f->arena_used += n;
        return CN_OK;
    case GW_POST_FORM_FILE:
    default:
        if (n > f->max_file - f->file_bytes)
            return gw_post_form_fail(f, err, GW_S3_ENTITY_TOO_LARGE, CN_TOOBIG);
        f->file_bytes += n;
        if (sink(arg, p, n) != CN_OK)
            return gw_post_form_fail(f, err, GW_S3_INTERNAL_ERROR, CN_TOOBIG);
        return CN_OK;
    }
}

/* A part ended at a delimiter. */
static int gw_post_form_part_end(struct gw_post_form *f, enum gw_s3_err *err)
{
    if (f->kind == GW_POST_FORM_FIELD) {
        struct gw_post_form_field *fd = &f->fields[f->n_fields - 1];
        fd->value = f->arena + f->value_start;
        fd->value_len = f->arena_used - f->value_start;
        f->arena[f->arena_used++] = '\0';
    } else if (f->kind == GW_POST_FORM_FILE) {
        if (f->file_bytes < f->min_file)
            return gw_post_form_fail(f, err, GW_S3_ENTITY_TOO_SMALL, CN_INVAL);
        f->state = GW_POST_FORM_DONE;
        return CN_DONE;
    }
    f->state = GW_POST_FORM_AFTER_DELIM;
    return CN_OK;
}

/* Reads a parameter value of a Content-Disposition (quoted or token) at
 * *p; copies at most cap-1 bytes. CN_INVAL when it does not fit. */
static int gw_post_form_param(const char **p, const char *end, char *out, size_t cap,
                              size_t *out_len)
{
    const char *s = *p;
    size_t n = 0;
    if (s < end && *s == '"') {
        s++;
        while (s < end && *s != '"') {
            /* curl escapes '"' and '\\' so; browsers send a Windows path's
             * backslashes as they are */
            if (*s == '\\' && s + 1 < end && (s[1] == '"' || s[1] == '\\'))
                s++;
            if (n + 1 >= cap)
                return CN_INVAL;
            out[n++] = *s++;
        }
        if (s >= end)
            return CN_INVAL;
        s++;
    } else {
        while (s < end && *s != ';' && *s != ' ' && *s != '\t') {
            if (n + 1 >= cap)
                return CN_INVAL;
            out[n++] = *s++;
        }
    }
    out[n] = '\0';
    *out_len = n;
    *p = s;
    return CN_OK;
}

/* Content-Disposition: form-data; name="..."[; filename="..."]. */
static int gw_post_form_disposition(struct gw_post_form *f, const char *v, const char *end)
{
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    if ((size_t)(end - v) < 9 || strncasecmp(v, "form-data", 9) != 0)
        return CN_INVAL;
    v += 9;
    while (v < end) {
        while (v < end && (*v == ';' || *v == ' ' || *v == '\t'))
            v++;
        const char *ns = v;
        while (v < end && *v != '=' && *v != ';')
            v++;
        if (v >= end || *v != '=')
            continue;
        size_t nn = (size_t)(v - ns);
        v++;
        char tmp[1024];
        size_t tn;
        if (gw_post_form_param(&v, end, tmp, sizeof(tmp), &tn) != CN_OK)
            return CN_INVAL;
        if (nn == 4 && strncasecmp(ns, "name", 4) == 0) {
            if (tn == 0 || tn >= sizeof(f->name))
                return CN_INVAL;
            memcpy(f->name, tmp, tn + 1);
            f->name_len = tn;
            f->has_name = 1;
        } else if (nn == 8 && strncasecmp(ns, "filename", 8) == 0) {
            memcpy(f->filename, tmp, tn + 1);
            f->filename_len = tn;
        }
    }
    return CN_OK;
}

/* One complete header line of a part (without its CRLF). */
static int gw_post_form_header_line(struct gw_post_form *f)
{
    const char *l = f->line, *end = l + f->line_len;
    const char *colon = memchr(l, ':', f->line_len);
    if (colon == NULL)
        return CN_INVAL;
    size_t nn = (size_t)(colon - l);
    if (nn == 19 && strncasecmp(l, "Content-Disposition", 19) == 0)
        return gw_post_form_disposition(f, colon + 1, end);
    if (nn == 12 && strncasecmp(l, "Content-Type", 12) == 0) {
        const char *v = colon + 1;
        while (v < end && (*v == ' ' || *v == '\t'))
            v++;
        size_t vn = (size_t)(end - v);
        if (vn >= sizeof(f->ftype))
            return CN_INVAL;
        memcpy(f->ftype, v, vn);
        f->ftype[vn] = '\0';
        f->ftype_len = vn; /* kept for the file part; reset per part */
    }
    return CN_OK; /* other part headers are ignored */
}

/* The empty line after a part's headers: a field starts, or the file. */
static int gw_post_form_headers_end(struct gw_post_form *f, enum gw_s3_err *err)
{
    if (!f->has_name)
        return gw_post_form_fail(f, err, GW_S3_MALFORMED_POST_REQUEST, CN_INVAL);
    if (f->name_len == 4 && strncasecmp(f->name, "file", 4) == 0) {
        f->kind = GW_POST_FORM_FILE;
        f->state = GW_POST_FORM_DATA;
        return CN_OK;
    }
    if (f->n_fields == GW_POST_FORM_MAX_FIELDS ||
        f->name_len > GW_POST_FORM_PRE_DATA_MAX - f->arena_used)
        return gw_post_form_fail(f, err, GW_S3_MAX_POST_PRE_DATA_LENGTH_EXCEEDED, CN_TOOBIG);
    struct gw_post_form_field *fd = &f->fields[f->n_fields++];
    memcpy(f->arena + f->arena_used, f->name, f->name_len);
    fd->name = f->arena + f->arena_used;
    fd->name_len = f->name_len;
    f->arena_used += f->name_len;
    f->arena[f->arena_used++] = '\0';
    f->value_start = f->arena_used;
    f->kind = GW_POST_FORM_FIELD;
    f->state = GW_POST_FORM_DATA;
    return CN_AGAIN;
}

/* Scans data for the delimiter. Returns CN_AGAIN (all consumed), CN_OK
 * (a delimiter ended the part; *i past it), CN_DONE or an error. */
static int gw_post_form_scan(struct gw_post_form *f, const char *in, size_t len, size_t *i,
                             gw_post_form_sink_cb sink, void *arg, enum gw_s3_err *err)
{
    size_t run = *i;          /* start of the data not yet emitted */
    while (*i < len) {
        if (f->matched > 0) {
            if (in[*i] == f->delim[f->matched]) {
                f->matched++;
                (*i)++;
                if (f->matched == f->dlen) {
                    f->matched = 0;
                    return gw_post_form_part_end(f, err);
                }
                continue;
            }
            /* not the delimiter: its matched prefix was data */
            size_t m = f->matched;
            f->matched = 0;
            int rc = gw_post_form_emit(f, f->delim, m, sink, arg, err);
            if (rc != CN_OK)
                return rc;
            run = *i;
            continue;
        }
        const char *cr = memchr(in + *i, '\r', len - *i);
        size_t stop = cr != NULL ? (size_t)(cr - in) : len;
        int rc = gw_post_form_emit(f, in + run, stop - run, sink, arg, err);
        if (rc != CN_OK)
            return rc;
        *i = stop;
        if (cr != NULL) {
            f->matched = 1;
            (*i)++;
        }
        run = *i;
    }
    return CN_AGAIN;
}

int gw_post_form_feed(struct gw_post_form *f, const char *in, size_t len, size_t *used,
                      gw_post_form_sink_cb sink, void *arg, enum gw_s3_err *err)
{
    size_t i = 0;
    int rc = CN_AGAIN;
    *used = 0;
    while (i < len) {
        char c = in[i];
        switch (f->state) {
        case GW_POST_FORM_DATA: {
            size_t before = i;
            int file = f->kind == GW_POST_FORM_FILE;
            rc = gw_post_form_scan(f, in, len, &i, sink, arg, err);
            if (!file && (rc == CN_OK || rc == CN_AGAIN) &&
                gw_post_form_pre(f, i - before) != CN_OK)
                return gw_post_form_fail(f, err, GW_S3_MAX_POST_PRE_DATA_LENGTH_EXCEEDED,
                                         CN_TOOBIG);
            if (rc == CN_DONE) {
                *used = len; /* what follows the file is skipped */
                return CN_DONE;
            }
            if (rc != CN_OK && rc != CN_AGAIN)
                return rc;
            continue;
        }
        case GW_POST_FORM_AFTER_DELIM:
            i++;
            if (c == '-') {
                f->state = GW_POST_FORM_AFTER_DASH;
            } else if (c == ' ' || c == '\t') {
                /* transport padding */
            } else if (c == '\r') {
                f->state = GW_POST_FORM_AFTER_CR;
            } else {
                return gw_post_form_fail(f, err, GW_S3_MALFORMED_POST_REQUEST, CN_INVAL);
            }
            if (gw_post_form_pre(f, 1) != CN_OK)
                return gw_post_form_fail(f, err, GW_S3_MAX_POST_PRE_DATA_LENGTH_EXCEEDED,
                                         CN_TOOBIG);
            break;
        case GW_POST_FORM_AFTER_DASH:
            i++;
            if (c != '-')
                return gw_post_form_fail(f, err, GW_S3_MALFORMED_POST_REQUEST, CN_INVAL);
            /* the last delimiter, and no file part came */
            f->ended = 1;
            f->state = GW_POST_FORM_DONE;
            *used = len;
            return gw_post_form_fail(f, err, GW_S3_INVALID_ARGUMENT, CN_INVAL);
        case GW_POST_FORM_AFTER_CR:
            i++;
            if (c != '\n')
                return gw_post_form_fail(f, err, GW_S3_MALFORMED_POST_REQUEST, CN_INVAL);
            f->state = GW_POST_FORM_HEADERS;
            f->line_len = 0;
            f->has_name = 0;
            f->ftype_len = 0;
            f->filename_len = 0;
            f->filename[0] = '\0';
            f->ftype[0] = '\0';
            break;
        case GW_POST_FORM_HEADERS:
            i++;
            if (gw_post_form_pre(f, 1) != CN_OK)
                return gw_post_form_fail(f, err, GW_S3_MAX_POST_PRE_DATA_LENGTH_EXCEEDED,
                                         CN_TOOBIG);
            if (c != '\n') {
                if (f->line_len == sizeof(f->line))
                    return gw_post_form_fail(f, err, GW_S3_MAX_POST_PRE_DATA_LENGTH_EXCEEDED,
                                             CN_TOOBIG);
                f->line[f->line_len++] = c;
                break;
            }
            if (f->line_len == 0 || f->line[f->line_len - 1] != '\r')
                return gw_post_form_fail(f, err, GW_S3_MALFORMED_POST_REQUEST, CN_INVAL);
            f->line_len--;
            if (f->line_len > 0) {
                if (gw_post_form_header_line(f) != CN_OK)
                    return gw_post_form_fail(f, err, GW_S3_MALFORMED_POST_REQUEST, CN_INVAL);
                f->line_len = 0;
                break;
            }
            rc = gw_post_form_headers_end(f, err);
            if (rc == CN_OK) {
                *used = i;
                return CN_OK; /* the file's bytes start here */
            }
            if (rc != CN_AGAIN)
                return rc;
            break;
        case GW_POST_FORM_DONE:
            *used = len;
            return CN_DONE;
        case GW_POST_FORM_FAILED:
        default:
            *err = GW_S3_MALFORMED_POST_REQUEST;
            return CN_INVAL;
        }
    }
    *used = len;
    return f->state == GW_POST_FORM_DONE ? CN_DONE : CN_AGAIN;
}

int gw_post_form_finish(const struct gw_post_form *f, enum gw_s3_err *err)
{
    if (f->state == GW_POST_FORM_DONE && f->kind == GW_POST_FORM_FILE)
        return CN_OK;
    *err = f->kind == GW_POST_FORM_FILE ? GW_S3_INCOMPLETE_BODY : GW_S3_INVALID_ARGUMENT;
    return CN_INVAL;
}
