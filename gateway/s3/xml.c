/* XML writer over evbuffer and the expat-based request-body parsers. The
 * parsers share one SAX frame (gw_xml_sax) that enforces the limits and
 * tracks, per depth, which known element is open; each body type adds a
 * start/end pair that checks the structure and collects the values. */
#include "xml.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <expat.h>

#include "cn/alloc.h"
#include "cn/rc.h"
#include "s3_names.h"

/* ---- writer ---------------------------------------------------------- */

/* The length (1..4) of the character at s[0..len) when it is valid UTF-8
 * and an XML 1.0 Char (TAB, LF, CR, U+0020..U+D7FF, U+E000..U+FFFD,
 * U+10000..U+10FFFF), else 0: a C0 control, a stray or overlong byte, a
 * surrogate, U+FFFE/U+FFFF. */
static size_t gw_xml_char_len(const unsigned char *s, size_t len)
{
    unsigned c = s[0];
    if (c < 0x80)
        return c >= 0x20 || c == '\t' || c == '\n' || c == '\r' ? 1 : 0;
    size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (n == 0 || c > 0xF4 || n > len)
        return 0;
    uint32_t cp = c & (0x7Fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF)
        return 0;
    return n;
}

int gw_xml_text_valid(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        size_t n = gw_xml_char_len(s + i, len - i);
        if (n == 0)
            return 0;
        i += n;
    }
    return 1;
}

int gw_xml_escape(struct evbuffer *out, const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t run = 0; /* start of the pending run of bytes that need no escape */
    for (size_t i = 0; i < len;) {
        size_t n = gw_xml_char_len(s + i, len - i);
        const char *rep = NULL;
        switch (n == 1 ? s[i] : 0) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&apos;"; break;
        case '\r': rep = "&#xD;"; break; /* survives line-end normalisation */
        default:
            /* XML 1.0 has no way to write it, not even as &#x1;: the
             * replacement character keeps the document well-formed */
            if (n == 0)
                rep = "\xEF\xBF\xBD";
        }
        if (rep == NULL) {
            i += n;
            continue;
        }
        if (i > run && evbuffer_add(out, text + run, i - run) != 0)
            return CN_ERR;
        if (evbuffer_add(out, rep, strlen(rep)) != 0)
            return CN_ERR;
        i += n > 0 ? n : 1;
        run = i;
    }
    if (len > run && evbuffer_add(out, text + run, len - run) != 0)
        return CN_ERR;
    return CN_OK;
}

void gw_xml_writer_init(struct gw_xml_writer *w, struct evbuffer *out)
{
    static const char decl[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    memset(w, 0, sizeof(*w));
    w->out = out;
    if (evbuffer_add(out, decl, sizeof(decl) - 1) != 0)
        w->failed = 1;
}

void gw_xml_open_attrs(struct gw_xml_writer *w, const char *name, const char *const *attrs)
{
    if (w->failed)
        return;
    if (w->depth >= GW_XML_MAX_DEPTH) {
        w->failed = 1;
        return;
    }
    if (evbuffer_add_printf(w->out, "<%s", name) < 0) {
        w->failed = 1;
        return;
    }
    for (size_t i = 0; attrs != NULL && attrs[i] != NULL && attrs[i + 1] != NULL; i += 2) {
        if (evbuffer_add_printf(w->out, " %s=\"", attrs[i]) < 0 ||
            gw_xml_escape(w->out, attrs[i + 1], strlen(attrs[i + 1])) != CN_OK ||
            evbuffer_add(w->out, "\"", 1) != 0) {
            w->failed = 1;
            return;
        }
    }
    if (evbuffer_add(w->out, ">", 1) != 0) {
        w->failed = 1;
        return;
    }
    w->stack[w->depth++] = name;
}

void gw_xml_open_ns(struct gw_xml_writer *w, const char *name, const char *xmlns)
{
    const char *const attrs[] = {"xmlns", xmlns, NULL};
    gw_xml_open_attrs(w, name, xmlns != NULL ? attrs : NULL);
}

void gw_xml_open(struct gw_xml_writer *w, const char *name)
{
    gw_xml_open_ns(w, name, NULL);
}

void gw_xml_close(struct gw_xml_writer *w)
{
    if (w->failed)
        return;
    if (w->depth == 0) {
        w->failed = 1;
        return;
    }
    const char *name = w->stack[--w->depth];
    if (evbuffer_add_printf(w->out, "</%s>", name) < 0)
        w->failed = 1;
}

void gw_xml_elem(struct gw_xml_writer *w, const char *name, const char *text, size_t len)
{
    if (w->failed)
        return;
    if (!gw_xml_text_valid(text, len))
        w->replaced = 1;
    if (evbuffer_add_printf(w->out, "<%s>", name) < 0 ||
        gw_xml_escape(w->out, text, len) != CN_OK ||
        evbuffer_add_printf(w->out, "</%s>", name) < 0)
        w->failed = 1;
}

void gw_xml_elem_str(struct gw_xml_writer *w, const char *name, const char *text)
{
    gw_xml_elem(w, name, text != NULL ? text : "", text != NULL ? strlen(text) : 0);
}

void gw_xml_elem_u64(struct gw_xml_writer *w, const char *name, uint64_t v)
{
    char num[24];
    int n = snprintf(num, sizeof(num), "%" PRIu64, v);
    gw_xml_elem(w, name, num, (size_t)n);
}

void gw_xml_elem_i64(struct gw_xml_writer *w, const char *name, int64_t v)
{
    char num[24];
    int n = snprintf(num, sizeof(num), "%" PRId64, v);
    gw_xml_elem(w, name, num, (size_t)n);
}

void gw_xml_elem_bool(struct gw_xml_writer *w, const char *name, int v)
{
    gw_xml_elem_str(w, name, v ? "true" : "false");
}

void gw_xml_elem_time_ms(struct gw_xml_writer *w, const char *name, int64_t ms)
{
    char t[GW_S3_NAMES_ISO8601_LEN];
    gw_s3_names_iso8601_format(ms, t);
    gw_xml_elem(w, name, t, strlen(t));
}

void gw_xml_empty(struct gw_xml_writer *w, const char *name)
{
    if (w->failed)
        return;
    if (evbuffer_add_printf(w->out, "<%s/>", name) < 0)
        w->failed = 1;
}

int gw_xml_writer_finish(struct gw_xml_writer *w)
{
    return w->failed || w->depth != 0 ? CN_ERR : CN_OK;
}

/* ---- parser frame ---------------------------------------------------- */

/* The elements the parsers know; everything else is GW_XML_TAG_OTHER. */
enum gw_xml_tag {
    GW_XML_TAG_OTHER = 0,
    GW_XML_TAG_DELETE,
    GW_XML_TAG_QUIET,
    GW_XML_TAG_OBJECT,
    GW_XML_TAG_KEY,
    GW_XML_TAG_VERSION_ID,
    GW_XML_TAG_COMPLETE,
    GW_XML_TAG_PART,
    GW_XML_TAG_PART_NUMBER,
    GW_XML_TAG_ETAG,
    GW_XML_TAG_CK_CRC32,
    GW_XML_TAG_CK_CRC32C,
    GW_XML_TAG_CK_CRC64NVME,
    GW_XML_TAG_CK_SHA1,
    GW_XML_TAG_CK_SHA256,
    GW_XML_TAG_CREATE_BUCKET,
    GW_XML_TAG_LOCATION,
    GW_XML_TAG_TAGGING,
    GW_XML_TAG_TAG_SET,
    GW_XML_TAG_TAG,
    GW_XML_TAG_VALUE,
    GW_XML_TAG_CORS,
    GW_XML_TAG_CORS_RULE,
    GW_XML_TAG_CORS_ORIGIN,
    GW_XML_TAG_CORS_METHOD,
    GW_XML_TAG_CORS_HEADER,
    GW_XML_TAG_CORS_EXPOSE,
    GW_XML_TAG_CORS_MAX_AGE,
    GW_XML_TAG_CORS_ID,
};

static const char *const gw_xml_tag_names[] = {
    [GW_XML_TAG_DELETE] = "Delete",
    [GW_XML_TAG_QUIET] = "Quiet",
    [GW_XML_TAG_OBJECT] = "Object",
    [GW_XML_TAG_KEY] = "Key",
    [GW_XML_TAG_VERSION_ID] = "VersionId",
    [GW_XML_TAG_COMPLETE] = "CompleteMultipartUpload",
    [GW_XML_TAG_PART] = "Part",
    [GW_XML_TAG_PART_NUMBER] = "PartNumber",
    [GW_XML_TAG_ETAG] = "ETag",
    [GW_XML_TAG_CK_CRC32] = "ChecksumCRC32",
    [GW_XML_TAG_CK_CRC32C] = "ChecksumCRC32C",
    [GW_XML_TAG_CK_CRC64NVME] = "ChecksumCRC64NVME",
    [GW_XML_TAG_CK_SHA1] = "ChecksumSHA1",
    [GW_XML_TAG_CK_SHA256] = "ChecksumSHA256",
    [GW_XML_TAG_CREATE_BUCKET] = "CreateBucketConfiguration",
    [GW_XML_TAG_LOCATION] = "LocationConstraint",
    [GW_XML_TAG_TAGGING] = "Tagging",
    [GW_XML_TAG_TAG_SET] = "TagSet",
    [GW_XML_TAG_TAG] = "Tag",
    [GW_XML_TAG_VALUE] = "Value",
    [GW_XML_TAG_CORS] = "CORSConfiguration",
    [GW_XML_TAG_CORS_RULE] = "CORSRule",
    [GW_XML_TAG_CORS_ORIGIN] = "AllowedOrigin",
    [GW_XML_TAG_CORS_METHOD] = "AllowedMethod",
    [GW_XML_TAG_CORS_HEADER] = "AllowedHeader",
    [GW_XML_TAG_CORS_EXPOSE] = "ExposeHeader",
    [GW_XML_TAG_CORS_MAX_AGE] = "MaxAgeSeconds",
    [GW_XML_TAG_CORS_ID] = "ID",
};

/* Text of one leaf element; a key is at most 1024 bytes, so 8 KiB leaves
 * room for the caller to answer KeyTooLongError per key. */
#define GW_XML_TEXT_MAX 8192
/* Separator expat puts between a namespace URI and the local name. */
#define GW_XML_NS_SEP ' '

struct gw_xml_sax;
typedef void (*gw_xml_start_cb)(struct gw_xml_sax *s, enum gw_xml_tag tag);
typedef void (*gw_xml_end_cb)(struct gw_xml_sax *s, enum gw_xml_tag tag);

struct gw_xml_sax {
    XML_Parser parser;
    int depth;                         /* open elements, root = 1 */
    size_t n_elems, max_elems;
    enum gw_s3_err err;                /* first error; stops the parse */
    enum gw_xml_tag tags[GW_XML_MAX_DEPTH_IN + 1]; /* tags[d] open at depth d */
    char text[GW_XML_TEXT_MAX];
    size_t text_len;
    const char *name;                  /* the local name of the element the
                                          callback is about (gw_xml_walk) */
    gw_xml_start_cb start;
    gw_xml_end_cb end;
    void *user;
};

/* Stops the parse with e (the first error wins). */
static void gw_xml_sax_fail(struct gw_xml_sax *s, enum gw_s3_err e)
{
    if (s->err == GW_S3_OK) {
        s->err = e;
        XML_StopParser(s->parser, XML_FALSE);
    }
}

static enum gw_xml_tag gw_xml_tag_lookup(const char *name)
{
    const char *local = strrchr(name, GW_XML_NS_SEP);
    local = local != NULL ? local + 1 : name;
    for (size_t i = 1; i < CN_ARRAY_LEN(gw_xml_tag_names); i++)
        if (strcmp(local, gw_xml_tag_names[i]) == 0)
            return (enum gw_xml_tag)i;
    return GW_XML_TAG_OTHER;
}

static void XMLCALL gw_xml_sax_start(void *arg, const XML_Char *name, const XML_Char **attrs)
{
    struct gw_xml_sax *s = arg;
    (void)attrs;
    if (s->err != GW_S3_OK)
        return;
    if (s->depth >= GW_XML_MAX_DEPTH_IN || ++s->n_elems > s->max_elems) {
        gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
        return;
    }
    enum gw_xml_tag tag = gw_xml_tag_lookup(name);
    s->tags[++s->depth] = tag;
    s->text_len = 0;
    s->name = name;
    s->start(s, tag);
}

static void XMLCALL gw_xml_sax_end(void *arg, const XML_Char *name)
{
    struct gw_xml_sax *s = arg;
    if (s->err != GW_S3_OK)
        return;
    s->name = name;
    s->end(s, s->tags[s->depth]);
    s->depth--;
    s->text_len = 0; /* text between siblings is not a value */
}

static void XMLCALL gw_xml_sax_text(void *arg, const XML_Char *t, int len)
{
    struct gw_xml_sax *s = arg;
    if (s->err != GW_S3_OK || len <= 0)
        return;
    if ((size_t)len > sizeof(s->text) - s->text_len) {
        gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
        return;
    }
    memcpy(s->text + s->text_len, t, (size_t)len);
    s->text_len += (size_t)len;
}

/* A DOCTYPE or an entity declaration: refused outright, so no entity
 * expansion (billion laughs) and no external fetch can happen. */
static void XMLCALL gw_xml_sax_doctype(void *arg, const XML_Char *name, const XML_Char *sysid,
                                       const XML_Char *pubid, int has_internal)
{
    (void)name, (void)sysid, (void)pubid, (void)has_internal;
    gw_xml_sax_fail(arg, GW_S3_MALFORMED_XML);
}

static void XMLCALL gw_xml_sax_entity(void *arg, const XML_Char *name, int is_param,
                                      const XML_Char *value, int value_len,
                                      const XML_Char *base, const XML_Char *sysid,
                                      const XML_Char *pubid, const XML_Char *notation)
{
    (void)name, (void)is_param, (void)value, (void)value_len, (void)base;
    (void)sysid, (void)pubid, (void)notation;
    gw_xml_sax_fail(arg, GW_S3_MALFORMED_XML);
}

/* Runs expat over body with s's callbacks. Returns CN_OK, or CN_INVAL with
 * s->err set. */
static int gw_xml_sax_run(struct gw_xml_sax *s, const char *body, size_t len)
{
    if (len > INT32_MAX) {
        s->err = GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED;
        return CN_INVAL;
    }
    s->parser = XML_ParserCreateNS(NULL, GW_XML_NS_SEP);
    if (s->parser == NULL) {
        s->err = GW_S3_INTERNAL_ERROR;
        return CN_INVAL;
    }
    XML_SetUserData(s->parser, s);
    XML_SetElementHandler(s->parser, gw_xml_sax_start, gw_xml_sax_end);
    XML_SetCharacterDataHandler(s->parser, gw_xml_sax_text);
    XML_SetStartDoctypeDeclHandler(s->parser, gw_xml_sax_doctype);
    XML_SetEntityDeclHandler(s->parser, gw_xml_sax_entity);
    XML_SetParamEntityParsing(s->parser, XML_PARAM_ENTITY_PARSING_NEVER);
    enum XML_Status st = XML_Parse(s->parser, body, (int)len, XML_TRUE);
    if (st != XML_STATUS_OK && s->err == GW_S3_OK)
        s->err = GW_S3_MALFORMED_XML;
    XML_ParserFree(s->parser);
    s->parser = NULL;
    return s->err == GW_S3_OK ? CN_OK : CN_INVAL;
}

/* The collected text with leading and trailing XML white space removed. */
static void gw_xml_sax_trimmed(const struct gw_xml_sax *s, const char **p, size_t *len)
{
    const char *b = s->text, *e = s->text + s->text_len;
    while (b < e && (*b == ' ' || *b == '\t' || *b == '\n' || *b == '\r'))
        b++;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
        e--;
    *p = b;
    *len = (size_t)(e - b);
}

/* The tag open one level above the current element. */
static enum gw_xml_tag gw_xml_sax_parent(const struct gw_xml_sax *s)
{
    return s->depth >= 2 ? s->tags[s->depth - 1] : GW_XML_TAG_OTHER;
}

/* ---- Delete ---------------------------------------------------------- */

struct gw_xml_delete_state {
    struct gw_xml_delete *d;
    size_t cap;
    int seen_quiet;
    int n_key, n_version;   /* in the current <Object> */
};

static void gw_xml_delete_start(struct gw_xml_sax *s, enum gw_xml_tag tag)
{
    struct gw_xml_delete_state *st = s->user;
    if (s->depth == 1) {
        if (tag != GW_XML_TAG_DELETE)
            gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
        return;
    }
    if (s->depth == 2 && tag == GW_XML_TAG_OBJECT) {
        struct gw_xml_delete *d = st->d;
        if (d->n_objects == GW_XML_DELETE_MAX_OBJECTS) {
            gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
            return;
        }
        if (d->n_objects == st->cap) {
            st->cap = st->cap ? st->cap * 2 : 16;
            d->objects = cn_realloc(d->objects, st->cap * sizeof(*d->objects));
        }
        memset(&d->objects[d->n_objects++], 0, sizeof(*d->objects));
        st->n_key = st->n_version = 0;
    }
}

static void gw_xml_delete_end(struct gw_xml_sax *s, enum gw_xml_tag tag)
{
    struct gw_xml_delete_state *st = s->user;
    struct gw_xml_delete *d = st->d;
    enum gw_xml_tag parent = gw_xml_sax_parent(s);
    if (s->depth == 2 && tag == GW_XML_TAG_QUIET) {
        const char *v;
        size_t n;
        gw_xml_sax_trimmed(s, &v, &n);
        if (st->seen_quiet++ || !((n == 4 && strncasecmp(v, "true", 4) == 0) ||
                                  (n == 5 && strncasecmp(v, "false", 5) == 0))) {
            gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
            return;
        }
        d->quiet = n == 4;
    } else if (s->depth == 2 && tag == GW_XML_TAG_OBJECT) {
        if (st->n_key != 1)
            gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
    } else if (s->depth == 3 && parent == GW_XML_TAG_OBJECT && tag == GW_XML_TAG_KEY) {
        struct gw_xml_delete_obj *o = &d->objects[d->n_objects - 1];
        if (st->n_key++) {
            gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
            return;
        }
        o->key = cn_strndup(s->text, s->text_len); /* keys keep their spaces */
        o->key_len = s->text_len;
    } else if (s->depth == 3 && parent == GW_XML_TAG_OBJECT && tag == GW_XML_TAG_VERSION_ID) {
        struct gw_xml_delete_obj *o = &d->objects[d->n_objects - 1];
        const char *v;
        size_t n;
        gw_xml_sax_trimmed(s, &v, &n);
        if (st->n_version++) {
            gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
            return;
        }
        o->version_id = cn_strndup(v, n);
        o->version_id_len = n;
    }
}

void gw_xml_delete_fini(struct gw_xml_delete *d)
{
    for (size_t i = 0; i < d->n_objects; i++) {
        cn_free(d->objects[i].key);
        cn_free(d->objects[i].version_id);
    }
    cn_free(d->objects);
    memset(d, 0, sizeof(*d));
}

int gw_xml_parse_delete(const char *body, size_t len, struct gw_xml_delete *out,
                        enum gw_s3_err *err)
{
    memset(out, 0, sizeof(*out));
    if (len > GW_XML_DELETE_MAX_BYTES) {
        *err = GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED;
        return CN_TOOBIG;
    }
    struct gw_xml_delete_state st = {.d = out};
    struct gw_xml_sax *s = cn_calloc(1, sizeof(*s));
    s->max_elems = 4 * GW_XML_DELETE_MAX_OBJECTS + 16;
    s->start = gw_xml_delete_start;
    s->end = gw_xml_delete_end;
    s->user = &st;
    int rc = gw_xml_sax_run(s, body, len);
    if (rc == CN_OK && out->n_objects == 0) {
        s->err = GW_S3_MALFORMED_XML;
        rc = CN_INVAL;
    }
    *err = s->err;
    cn_free(s);
    if (rc != CN_OK)
        gw_xml_delete_fini(out);
    return rc;
}

/* ---- CompleteMultipartUpload ----------------------------------------- */

struct gw_xml_complete_state {
    struct gw_xml_complete *c;
    size_t cap;
    int n_number, n_etag;   /* in the current <Part> */
};

static void gw_xml_complete_start(struct gw_xml_sax *s, enum gw_xml_tag tag)
{
    struct gw_xml_complete_state *st = s->user;
    if (s->depth == 1) {
        if (tag != GW_XML_TAG_COMPLETE)
            gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
        return;
    }
    if (s->depth == 2 && tag == GW_XML_TAG_PART) {
        struct gw_xml_complete *c = st->c;
        if (c->n_parts == GW_XML_COMPLETE_MAX_PARTS) {
            gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
            return;
        }
        if (c->n_parts == st->cap) {
            st->cap = st->cap ? st->cap * 2 : 16;
            c->parts = cn_realloc(c->parts, st->cap * sizeof(*c->parts));
        }
        memset(&c->parts[c->n_parts++], 0, sizeof(*c->parts));
        st->n_number = st->n_etag = 0;
    }
}

/* Decimal part number; 0 when not a plain decimal of at most 9 digits (the
 * range check comes after, so 0 and 10001 both reach it). */
static int gw_xml_part_number(const char *v, size_t n, uint32_t *out)
{
    if (n == 0 || n > 9)
        return CN_INVAL;
    uint32_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return CN_INVAL;
        x = x * 10 + (uint32_t)(v[i] - '0');
    }
    *out = x;
    return CN_OK;
}

/* Sets *slot to a copy of the trimmed text; a second value is an error. */
static void gw_xml_complete_string(struct gw_xml_sax *s, char **slot, size_t *slot_len)
{
    const char *v;
    size_t n;
    gw_xml_sax_trimmed(s, &v, &n);
    if (*slot != NULL) {
        gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
        return;
    }
    *slot = cn_strndup(v, n);
    if (slot_len != NULL)
        *slot_len = n;
}

static void gw_xml_complete_etag(struct gw_xml_sax *s, struct gw_xml_part *p)
{
    const char *v;
    size_t n;
    gw_xml_sax_trimmed(s, &v, &n);
    if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
        v++;
        n -= 2;
    }
    p->etag = cn_strndup(v, n);
    p->etag_len = n;
}

static void gw_xml_complete_end_part(struct gw_xml_sax *s, struct gw_xml_complete_state *st)
{
    struct gw_xml_complete *c = st->c;
    if (st->n_number != 1 || st->n_etag != 1) {
        gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
        return;
    }
    uint32_t num = c->parts[c->n_parts - 1].part_number;
    if (num < 1 || num > GW_XML_COMPLETE_MAX_PARTS) {
        gw_xml_sax_fail(s, GW_S3_INVALID_ARGUMENT);
        return;
    }
    if (c->n_parts > 1 && c->parts[c->n_parts - 2].part_number >= num)
        gw_xml_sax_fail(s, GW_S3_INVALID_PART_ORDER);
}

static void gw_xml_complete_end(struct gw_xml_sax *s, enum gw_xml_tag tag)
{
    struct gw_xml_complete_state *st = s->user;
    if (s->depth == 2 && tag == GW_XML_TAG_PART) {
        gw_xml_complete_end_part(s, st);
        return;
    }
    if (s->depth != 3 || gw_xml_sax_parent(s) != GW_XML_TAG_PART)
        return;
    struct gw_xml_part *p = &st->c->parts[st->c->n_parts - 1];
    const char *v;
    size_t n;
    switch (tag) {
    case GW_XML_TAG_PART_NUMBER:
        gw_xml_sax_trimmed(s, &v, &n);
        if (st->n_number++ || gw_xml_part_number(v, n, &p->part_number) != CN_OK)
            gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
        break;
    case GW_XML_TAG_ETAG:
        if (st->n_etag++)
            gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
        else
            gw_xml_complete_etag(s, p);
        break;
    case GW_XML_TAG_CK_CRC32: gw_xml_complete_string(s, &p->checksum_crc32, NULL); break;
    case GW_XML_TAG_CK_CRC32C: gw_xml_complete_string(s, &p->checksum_crc32c, NULL); break;
    case GW_XML_TAG_CK_CRC64NVME: gw_xml_complete_string(s, &p->checksum_crc64nvme, NULL); break;
    case GW_XML_TAG_CK_SHA1: gw_xml_complete_string(s, &p->checksum_sha1, NULL); break;
    case GW_XML_TAG_CK_SHA256: gw_xml_complete_string(s, &p->checksum_sha256, NULL); break;
    default:
        break;
    }
}

void gw_xml_complete_fini(struct gw_xml_complete *c)
{
    for (size_t i = 0; i < c->n_parts; i++) {
        struct gw_xml_part *p = &c->parts[i];
        cn_free(p->etag);
        cn_free(p->checksum_crc32);
        cn_free(p->checksum_crc32c);
        cn_free(p->checksum_crc64nvme);
        cn_free(p->checksum_sha1);
        cn_free(p->checksum_sha256);
    }
    cn_free(c->parts);
    memset(c, 0, sizeof(*c));
}

int gw_xml_parse_complete(const char *body, size_t len, struct gw_xml_complete *out,
                          enum gw_s3_err *err)
{
    memset(out, 0, sizeof(*out));
    if (len > GW_XML_COMPLETE_MAX_BYTES) {
        *err = GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED;
        return CN_TOOBIG;
    }
    struct gw_xml_complete_state st = {.c = out};
    struct gw_xml_sax *s = cn_calloc(1, sizeof(*s));
    s->max_elems = 8 * GW_XML_COMPLETE_MAX_PARTS + 16;
    s->start = gw_xml_complete_start;
    s->end = gw_xml_complete_end;
    s->user = &st;
    int rc = gw_xml_sax_run(s, body, len);
    if (rc == CN_OK && out->n_parts == 0) {
        s->err = GW_S3_MALFORMED_XML;
        rc = CN_INVAL;
    }
    *err = s->err;
    cn_free(s);
    if (rc != CN_OK)
        gw_xml_complete_fini(out);
    return rc;
}

/* ---- CreateBucketConfiguration --------------------------------------- */

struct gw_xml_create_state {
    char *location;
    int seen;
};

static void gw_xml_create_start(struct gw_xml_sax *s, enum gw_xml_tag tag)
{
    if (s->depth == 1 && tag != GW_XML_TAG_CREATE_BUCKET)
        gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
}

static void gw_xml_create_end(struct gw_xml_sax *s, enum gw_xml_tag tag)
{
    struct gw_xml_create_state *st = s->user;
    if (s->depth != 2 || tag != GW_XML_TAG_LOCATION)
        return;
    const char *v;
    size_t n;
    gw_xml_sax_trimmed(s, &v, &n);
    if (st->seen++) {
        gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
        return;
    }
    if (n > GW_XML_LOCATION_MAX) {
        gw_xml_sax_fail(s, GW_S3_INVALID_LOCATION_CONSTRAINT);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (!isalnum((unsigned char)v[i]) && v[i] != '-' && v[i] != '_') {
            gw_xml_sax_fail(s, GW_S3_INVALID_LOCATION_CONSTRAINT);
            return;
        }
    }
    memcpy(st->location, v, n);
    st->location[n] = '\0';
}

int gw_xml_parse_create_bucket(const char *body, size_t len,
                               char location[GW_XML_LOCATION_MAX + 1], enum gw_s3_err *err)
{
    location[0] = '\0';
    *err = GW_S3_OK;
    if (len == 0)
        return CN_OK;
    if (len > GW_XML_CREATE_BUCKET_MAX_BYTES) {
        *err = GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED;
        return CN_TOOBIG;
    }
    struct gw_xml_create_state st = {.location = location};
    struct gw_xml_sax *s = cn_calloc(1, sizeof(*s));
    s->max_elems = 256;
    s->start = gw_xml_create_start;
    s->end = gw_xml_create_end;
    s->user = &st;
    int rc = gw_xml_sax_run(s, body, len);
    *err = s->err;
    cn_free(s);
    if (rc != CN_OK)
        location[0] = '\0';
    return rc;
}

/* ---- Tagging --------------------------------------------------------- */

struct gw_xml_tagging_state {
    struct gw_tagset *set;
    const char **why;
    int n_tag_set;
    int n_key, n_value;     /* in the current <Tag> */
    char key[GW_TAGSET_KEY_BYTES + 1];
    size_t key_len;         /* > GW_TAGSET_KEY_BYTES: too long to keep */
    char value[GW_TAGSET_VALUE_BYTES + 1];
    size_t value_len;
};

static void gw_xml_tagging_start(struct gw_xml_sax *s, enum gw_xml_tag tag)
{
    struct gw_xml_tagging_state *st = s->user;
    if (s->depth == 1 && tag != GW_XML_TAG_TAGGING)
        gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
    else if (s->depth == 2 && tag == GW_XML_TAG_TAG_SET && st->n_tag_set++)
        gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
    else if (s->depth == 3 && gw_xml_sax_parent(s) == GW_XML_TAG_TAG_SET && tag == GW_XML_TAG_TAG)
        st->n_key = st->n_value = 0;
}

/* Keeps the text of a <Key> or <Value> in slot (cap bytes + 1); a text
 * longer than cap is recorded as cap + 1 bytes, which gw_tagset_add()
 * refuses as too long whatever the bytes are. */
static void gw_xml_tagging_keep(const struct gw_xml_sax *s, char *slot, size_t cap,
                                size_t *slot_len)
{
    *slot_len = CN_MIN(s->text_len, cap + 1);
    memcpy(slot, s->text, *slot_len);
}

static void gw_xml_tagging_end(struct gw_xml_sax *s, enum gw_xml_tag tag)
{
    struct gw_xml_tagging_state *st = s->user;
    if (s->depth < 3 || s->tags[2] != GW_XML_TAG_TAG_SET || s->tags[3] != GW_XML_TAG_TAG)
        return;
    if (s->depth == 4 && tag == GW_XML_TAG_KEY) {
        if (st->n_key++)
            gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
        gw_xml_tagging_keep(s, st->key, GW_TAGSET_KEY_BYTES, &st->key_len);
    } else if (s->depth == 4 && tag == GW_XML_TAG_VALUE) {
        if (st->n_value++)
            gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
        gw_xml_tagging_keep(s, st->value, GW_TAGSET_VALUE_BYTES, &st->value_len);
    } else if (s->depth == 3) {
        if (st->n_key != 1 || st->n_value != 1) {
            gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
            return;
        }
        enum gw_s3_err err = gw_tagset_add(st->set, st->key, st->key_len, st->value,
                                           st->value_len, st->why);
        if (err != GW_S3_OK)
            gw_xml_sax_fail(s, err);
    }
}

int gw_xml_parse_tagging(const char *body, size_t len, struct gw_tagset *out,
                         enum gw_s3_err *err, const char **why)
{
    out->n = 0;
    *why = NULL;
    if (len > GW_XML_TAGGING_MAX_BYTES) {
        *err = GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED;
        return CN_TOOBIG;
    }
    struct gw_xml_tagging_state *st = cn_calloc(1, sizeof(*st));
    st->set = out;
    st->why = why;
    struct gw_xml_sax *s = cn_calloc(1, sizeof(*s));
    s->max_elems = 256;
    s->start = gw_xml_tagging_start;
    s->end = gw_xml_tagging_end;
    s->user = st;
    int rc = gw_xml_sax_run(s, body, len);
    if (rc == CN_OK && st->n_tag_set != 1) {
        s->err = GW_S3_MALFORMED_XML;
        rc = CN_INVAL;
    }
    *err = s->err;
    if (rc != CN_OK && *err != GW_S3_INVALID_TAG && *err != GW_S3_BAD_REQUEST)
        *why = NULL; /* a tag's message only goes with a tag's error */
    cn_free(s);
    cn_free(st);
    if (rc != CN_OK)
        out->n = 0;
    return rc;
}

/* ---- CORSConfiguration ------------------------------------------------ */

struct gw_xml_cors_state {
    struct gw_cors *c;
    int n_max_age, n_id;       /* in the current <CORSRule> */
    char why[GW_XML_WHY_MAX];  /* the message of an InvalidRequest */
};

static void gw_xml_cors_start(struct gw_xml_sax *s, enum gw_xml_tag tag)
{
    struct gw_xml_cors_state *st = s->user;
    if (s->depth == 1 && tag != GW_XML_TAG_CORS) {
        gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
    } else if (s->depth == 2 && tag == GW_XML_TAG_CORS_RULE) {
        if (st->c->n_rules == GW_CORS_MAX_RULES) {
            gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
            return;
        }
        gw_cors_add_rule(st->c);
        st->n_max_age = st->n_id = 0;
    }
}

/* An InvalidRequest whose message names the offending value. */
static void gw_xml_cors_invalid(struct gw_xml_sax *s, const char *fmt, const char *v, size_t n)
{
    struct gw_xml_cors_state *st = s->user;
    snprintf(st->why, sizeof(st->why), fmt, (int)CN_MIN(n, 512), v);
    gw_xml_sax_fail(s, GW_S3_INVALID_REQUEST);
}

/* A leaf of <CORSRule>: its text, trimmed, into the rule. */
static void gw_xml_cors_leaf(struct gw_xml_sax *s, struct gw_cors_rule *r, enum gw_xml_tag tag)
{
    struct gw_xml_cors_state *st = s->user;
    const char *v;
    size_t n;
    gw_xml_sax_trimmed(s, &v, &n);
    switch (tag) {
    case GW_XML_TAG_CORS_ORIGIN:
        if (gw_cors_stars(v, n) > 1)
            gw_xml_cors_invalid(s, "AllowedOrigin \"%.*s\" can not have more than one wildcard.",
                                v, n);
        else
            gw_cors_list_add(&r->origins, v, n);
        break;
    case GW_XML_TAG_CORS_METHOD: {
        unsigned bit = gw_cors_method_bit(v, n);
        if (bit == 0)
            gw_xml_cors_invalid(s, "Found unsupported HTTP method in CORS config. "
                                   "Unsupported method is %.*s", v, n);
        r->methods |= bit;
        break;
    }
    case GW_XML_TAG_CORS_HEADER:
        if (gw_cors_stars(v, n) > 1)
            gw_xml_cors_invalid(s, "AllowedHeader \"%.*s\" can not have more than one wildcard.",
                                v, n);
        else
            gw_cors_list_add(&r->headers, v, n);
        break;
    case GW_XML_TAG_CORS_EXPOSE:
        gw_cors_list_add(&r->expose, v, n);
        break;
    case GW_XML_TAG_CORS_MAX_AGE: {
        int64_t age = 0;
        int ok = n > 0 && n <= 10 && st->n_max_age++ == 0;
        for (size_t i = 0; ok && i < n; i++) {
            ok = v[i] >= '0' && v[i] <= '9';
            age = age * 10 + (v[i] - '0');
        }
        if (!ok || age > INT32_MAX)
            gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
        r->max_age = age;
        break;
    }
    case GW_XML_TAG_CORS_ID:
        if (st->n_id++ || n > GW_CORS_ID_MAX) {
            gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
            return;
        }
        r->id = cn_strndup(v, n);
        break;
    default:
        break;
    }
}

static void gw_xml_cors_end(struct gw_xml_sax *s, enum gw_xml_tag tag)
{
    struct gw_xml_cors_state *st = s->user;
    if (s->depth == 2 && tag == GW_XML_TAG_CORS_RULE) {
        const struct gw_cors_rule *r = &st->c->rules[st->c->n_rules - 1];
        if (r->origins.n == 0 || r->methods == 0)
            gw_xml_sax_fail(s, GW_S3_MALFORMED_XML);
    } else if (s->depth == 3 && gw_xml_sax_parent(s) == GW_XML_TAG_CORS_RULE) {
        gw_xml_cors_leaf(s, &st->c->rules[st->c->n_rules - 1], tag);
    }
}

int gw_xml_parse_cors(const char *body, size_t len, struct gw_cors *out, enum gw_s3_err *err,
                      char why[GW_XML_WHY_MAX])
{
    memset(out, 0, sizeof(*out));
    why[0] = '\0';
    if (len > GW_CORS_MAX_BYTES) {
        *err = GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED;
        return CN_TOOBIG;
    }
    struct gw_xml_cors_state st = {.c = out};
    struct gw_xml_sax *s = cn_calloc(1, sizeof(*s));
    s->max_elems = 4096;
    s->start = gw_xml_cors_start;
    s->end = gw_xml_cors_end;
    s->user = &st;
    int rc = gw_xml_sax_run(s, body, len);
    if (rc == CN_OK && out->n_rules == 0) {
        s->err = GW_S3_MALFORMED_XML;
        rc = CN_INVAL;
    }
    *err = s->err;
    cn_free(s);
    if (rc != CN_OK) {
        if (*err == GW_S3_INVALID_REQUEST)
            memcpy(why, st.why, sizeof(st.why));
        gw_cors_fini(out);
    }
    return rc;
}

/* ---- the walk of parsers kept in their own module --------------------- */

struct gw_xml_walk_state {
    const struct gw_xml_walk_cbs *cbs;
    void *user;
};

/* The local name of s->name (expat gives "uri name" for a namespaced one). */
static const char *gw_xml_walk_local(const struct gw_xml_sax *s)
{
    const char *local = strrchr(s->name, GW_XML_NS_SEP);
    return local != NULL ? local + 1 : s->name;
}

static void gw_xml_walk_start(struct gw_xml_sax *s, enum gw_xml_tag tag)
{
    (void)tag;
    struct gw_xml_walk_state *st = s->user;
    enum gw_s3_err e = st->cbs->start(st->user, s->depth, gw_xml_walk_local(s));
    if (e != GW_S3_OK)
        gw_xml_sax_fail(s, e);
}

static void gw_xml_walk_end(struct gw_xml_sax *s, enum gw_xml_tag tag)
{
    (void)tag;
    struct gw_xml_walk_state *st = s->user;
    enum gw_s3_err e =
        st->cbs->end(st->user, s->depth, gw_xml_walk_local(s), s->text, s->text_len);
    if (e != GW_S3_OK)
        gw_xml_sax_fail(s, e);
}

int gw_xml_walk(const char *body, size_t len, size_t max_bytes, size_t max_elems,
                const struct gw_xml_walk_cbs *cbs, void *user, enum gw_s3_err *err)
{
    if (len > max_bytes) {
        *err = GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED;
        return CN_TOOBIG;
    }
    struct gw_xml_walk_state st = {cbs, user};
    struct gw_xml_sax *s = cn_calloc(1, sizeof(*s));
    s->max_elems = max_elems;
    s->start = gw_xml_walk_start;
    s->end = gw_xml_walk_end;
    s->user = &st;
    int rc = gw_xml_sax_run(s, body, len);
    *err = s->err;
    cn_free(s);
    return rc;
}
