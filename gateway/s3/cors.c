/* CORS rules (cors.h): the stored msgpack form, checked strictly when read
 * back; the GetBucketCors document; and the matching S3 applies to a
 * preflight or an actual request (the first rule that allows the origin,
 * the method and every requested header wins). */
#include "cors.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <msgpack.h>

#include "msg/msg.h"

#include "xml.h"

#include "cn/alloc.h"

static const struct {
    const char *name;
    unsigned bit;
} gw_cors_methods[] = {
    {"GET", GW_CORS_GET}, {"PUT", GW_CORS_PUT},   {"POST", GW_CORS_POST},
    {"DELETE", GW_CORS_DELETE}, {"HEAD", GW_CORS_HEAD},
};

#define GW_CORS_ALL_METHODS 31u

static void gw_cors_list_fini(struct gw_cors_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        cn_free(l->v[i]);
    cn_free(l->v);
    l->v = NULL;
    l->n = 0;
}

void gw_cors_fini(struct gw_cors *c)
{
    for (size_t i = 0; i < c->n_rules; i++) {
        struct gw_cors_rule *r = &c->rules[i];
        cn_free(r->id);
        gw_cors_list_fini(&r->origins);
        gw_cors_list_fini(&r->headers);
        gw_cors_list_fini(&r->expose);
    }
    cn_free(c->rules);
    c->rules = NULL;
    c->n_rules = 0;
}

struct gw_cors_rule *gw_cors_add_rule(struct gw_cors *c)
{
    c->rules = cn_realloc(c->rules, (c->n_rules + 1) * sizeof(*c->rules));
    struct gw_cors_rule *r = &c->rules[c->n_rules++];
    memset(r, 0, sizeof(*r));
    r->max_age = -1;
    return r;
}

void gw_cors_list_add(struct gw_cors_list *l, const char *s, size_t len)
{
    l->v = cn_realloc(l->v, (l->n + 1) * sizeof(*l->v));
    l->v[l->n++] = cn_strndup(s, len);
}

unsigned gw_cors_method_bit(const char *m, size_t len)
{
    for (size_t i = 0; i < CN_ARRAY_LEN(gw_cors_methods); i++)
        if (strlen(gw_cors_methods[i].name) == len && memcmp(gw_cors_methods[i].name, m, len) == 0)
            return gw_cors_methods[i].bit;
    return 0;
}

size_t gw_cors_stars(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += s[i] == '*';
    return n;
}

/* ---- stored form: [[id|nil, methods, [origins], [headers], [expose],
 * max_age|nil], ...] ------------------------------------------------------ */

static void gw_cors_pack_list(msgpack_packer *pk, const struct gw_cors_list *l)
{
    msgpack_pack_array(pk, l->n);
    for (size_t i = 0; i < l->n; i++)
        msgpack_pack_str_with_body(pk, l->v[i], strlen(l->v[i]));
}

void gw_cors_encode(const struct gw_cors *c, char **out, size_t *len)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_array(&pk, c->n_rules);
    for (size_t i = 0; i < c->n_rules; i++) {
        const struct gw_cors_rule *r = &c->rules[i];
        msgpack_pack_array(&pk, 6);
        if (r->id != NULL)
            msgpack_pack_str_with_body(&pk, r->id, strlen(r->id));
        else
            msgpack_pack_nil(&pk);
        msgpack_pack_unsigned_int(&pk, r->methods);
        gw_cors_pack_list(&pk, &r->origins);
        gw_cors_pack_list(&pk, &r->headers);
        gw_cors_pack_list(&pk, &r->expose);
        if (r->max_age >= 0)
            msgpack_pack_int64(&pk, r->max_age);
        else
            msgpack_pack_nil(&pk);
    }
    *out = cn_memdup(sb.data, sb.size);
    *len = sb.size;
    msgpack_sbuffer_destroy(&sb);
}

/* A str with no NUL, at most max bytes. */
static int gw_cors_str_ok(const msgpack_object *o, size_t max)
{
    return o->type == MSGPACK_OBJECT_STR && o->via.str.size <= max &&
           memchr(o->via.str.ptr, '\0', o->via.str.size) == NULL;
}

static int gw_cors_decode_list(struct gw_cors_list *l, const msgpack_object *o, int one_star)
{
    if (o->type != MSGPACK_OBJECT_ARRAY)
        return CN_INVAL;
    for (uint32_t i = 0; i < o->via.array.size; i++) {
        const msgpack_object *s = &o->via.array.ptr[i];
        if (!gw_cors_str_ok(s, GW_CORS_MAX_BYTES) ||
            (one_star && gw_cors_stars(s->via.str.ptr, s->via.str.size) > 1))
            return CN_INVAL;
        gw_cors_list_add(l, s->via.str.ptr, s->via.str.size);
    }
    return CN_OK;
}

static int gw_cors_decode_rule(struct gw_cors *c, const msgpack_object *o)
{
    if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size != 6)
        return CN_INVAL;
    const msgpack_object *f = o->via.array.ptr;
    struct gw_cors_rule *r = gw_cors_add_rule(c);
    if (f[0].type != MSGPACK_OBJECT_NIL) {
        if (!gw_cors_str_ok(&f[0], GW_CORS_ID_MAX))
            return CN_INVAL;
        r->id = cn_strndup(f[0].via.str.ptr, f[0].via.str.size);
    }
    if (f[1].type != MSGPACK_OBJECT_POSITIVE_INTEGER || f[1].via.u64 == 0 ||
        (f[1].via.u64 & ~(uint64_t)GW_CORS_ALL_METHODS) != 0)
        return CN_INVAL;
    r->methods = (unsigned)f[1].via.u64;
    if (gw_cors_decode_list(&r->origins, &f[2], 1) != CN_OK || r->origins.n == 0 ||
        gw_cors_decode_list(&r->headers, &f[3], 1) != CN_OK ||
        gw_cors_decode_list(&r->expose, &f[4], 0) != CN_OK)
        return CN_INVAL;
    if (f[5].type == MSGPACK_OBJECT_POSITIVE_INTEGER && f[5].via.u64 <= INT32_MAX)
        r->max_age = (int64_t)f[5].via.u64;
    else if (f[5].type != MSGPACK_OBJECT_NIL)
        return CN_INVAL;
    return CN_OK;
}

int gw_cors_decode(struct gw_cors *c, const void *bytes, size_t len)
{
    memset(c, 0, sizeof(*c));
    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    int rc = CN_INVAL;
    if (msg_msgpack_bounded(bytes, len) == CN_OK &&
        msgpack_unpack_next(&up, bytes, len, &off) == MSGPACK_UNPACK_SUCCESS && off == len &&
        up.data.type == MSGPACK_OBJECT_ARRAY && up.data.via.array.size >= 1 &&
        up.data.via.array.size <= GW_CORS_MAX_RULES) {
        rc = CN_OK;
        for (uint32_t i = 0; i < up.data.via.array.size && rc == CN_OK; i++)
            rc = gw_cors_decode_rule(c, &up.data.via.array.ptr[i]);
    }
    msgpack_unpacked_destroy(&up);
    if (rc != CN_OK)
        gw_cors_fini(c);
    return rc;
}

/* ---- GetBucketCors ---------------------------------------------------- */

static void gw_cors_write_list(struct gw_xml_writer *w, const char *name,
                               const struct gw_cors_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        gw_xml_elem_str(w, name, l->v[i]);
}

void gw_cors_write_xml(const struct gw_cors *c, struct gw_xml_writer *w)
{
    gw_xml_open_ns(w, "CORSConfiguration", GW_XML_S3_NS);
    for (size_t i = 0; i < c->n_rules; i++) {
        const struct gw_cors_rule *r = &c->rules[i];
        gw_xml_open(w, "CORSRule");
        if (r->id != NULL)
            gw_xml_elem_str(w, "ID", r->id);
        gw_cors_write_list(w, "AllowedHeader", &r->headers);
        for (size_t m = 0; m < CN_ARRAY_LEN(gw_cors_methods); m++)
            if (r->methods & gw_cors_methods[m].bit)
                gw_xml_elem_str(w, "AllowedMethod", gw_cors_methods[m].name);
        gw_cors_write_list(w, "AllowedOrigin", &r->origins);
        gw_cors_write_list(w, "ExposeHeader", &r->expose);
        if (r->max_age >= 0)
            gw_xml_elem_i64(w, "MaxAgeSeconds", r->max_age);
        gw_xml_close(w);
    }
    gw_xml_close(w);
}

/* ---- matching --------------------------------------------------------- */

/* Does s[len] match pattern (at most one '*', which stands for any run of
 * bytes)? icase: compare case-insensitively (header names). */
static int gw_cors_wild_match(const char *pattern, const char *s, size_t len, int icase)
{
    size_t plen = strlen(pattern);
    const char *star = memchr(pattern, '*', plen);
    size_t pre = star != NULL ? (size_t)(star - pattern) : plen;
    size_t suf = star != NULL ? plen - pre - 1 : 0;
    if (star == NULL ? len != plen : len < pre + suf)
        return 0;
    int (*cmp)(const char *, const char *, size_t) = icase ? strncasecmp : strncmp;
    return cmp(pattern, s, pre) == 0 && cmp(star != NULL ? star + 1 : "", s + len - suf, suf) == 0;
}

static int gw_cors_list_match(const struct gw_cors_list *l, const char *s, size_t len, int icase)
{
    for (size_t i = 0; i < l->n; i++)
        if (gw_cors_wild_match(l->v[i], s, len, icase))
            return 1;
    return 0;
}

/* Is every name of the comma-separated list h[hlen] allowed by rule? */
static int gw_cors_headers_allowed(const struct gw_cors_rule *rule, const char *h, size_t hlen)
{
    const char *p = h, *end = h + hlen;
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *e = comma != NULL ? comma : end, *b = p;
        while (b < e && (*b == ' ' || *b == '\t'))
            b++;
        const char *t = e;
        while (t > b && (t[-1] == ' ' || t[-1] == '\t'))
            t--;
        if (t > b && !gw_cors_list_match(&rule->headers, b, (size_t)(t - b), 1))
            return 0;
        p = e + 1;
    }
    return 1;
}

const struct gw_cors_rule *gw_cors_match(const struct gw_cors *c, const char *origin,
                                         size_t olen, const char *m, size_t mlen,
                                         const char *req_headers, size_t hlen)
{
    unsigned bit = gw_cors_method_bit(m, mlen);
    if (bit == 0)
        return NULL;
    for (size_t i = 0; i < c->n_rules; i++) {
        const struct gw_cors_rule *r = &c->rules[i];
        if ((r->methods & bit) && gw_cors_list_match(&r->origins, origin, olen, 0) &&
            (req_headers == NULL || gw_cors_headers_allowed(r, req_headers, hlen)))
            return r;
    }
    return NULL;
}

int gw_cors_rule_any_origin(const struct gw_cors_rule *rule)
{
    for (size_t i = 0; i < rule->origins.n; i++)
        if (strcmp(rule->origins.v[i], "*") == 0)
            return 1;
    return 0;
}

/* Appends s to out[cap] at *n with sep before it when *n > 0. */
static void gw_cors_append(char *out, size_t cap, size_t *n, const char *s)
{
    int w = snprintf(out + *n, cap - *n, "%s%s", *n > 0 ? ", " : "", s);
    if (w > 0)
        *n = CN_MIN(*n + (size_t)w, cap - 1);
}

size_t gw_cors_methods_str(const struct gw_cors_rule *rule, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t m = 0; m < CN_ARRAY_LEN(gw_cors_methods); m++)
        if (rule->methods & gw_cors_methods[m].bit)
            gw_cors_append(out, cap, &n, gw_cors_methods[m].name);
    return n;
}

size_t gw_cors_list_str(const struct gw_cors_list *l, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < l->n; i++)
        gw_cors_append(out, cap, &n, l->v[i]);
    return n;
}
