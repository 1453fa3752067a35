/* ACLs (acl.h): canned names, grant headers, the AccessControlPolicy XML
 * body, the stored text form and the XML answer. The XML parser follows
 * xml.c's rules (expat, bounded depth and element count, DOCTYPE and
 * entity declarations refused) with its own small handler, since a Grantee
 * is told by its child (ID or URI), not by its xsi:type attribute alone. */
#include "acl.h"

#include <expat.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "xml.h"

#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/rc.h"

#define GW_ACL_URI_ALL "http://acs.amazonaws.com/groups/global/AllUsers"
#define GW_ACL_URI_AUTH "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
#define GW_ACL_URI_LOG "http://acs.amazonaws.com/groups/s3/LogDelivery"

static const char *const gw_acl_perm_names[] = {"READ", "WRITE", "READ_ACP", "WRITE_ACP",
                                                "FULL_CONTROL"};
static const char *const gw_acl_kind_names[] = {"id", "all", "auth", "log"};

const char *gw_acl_perm_name(unsigned perm)
{
    for (unsigned i = 0; i < CN_ARRAY_LEN(gw_acl_perm_names); i++)
        if (perm == (1u << i))
            return gw_acl_perm_names[i];
    return NULL;
}

/* The bit named s[len], or 0. */
static unsigned gw_acl_perm_lookup(const char *s, size_t len)
{
    for (unsigned i = 0; i < CN_ARRAY_LEN(gw_acl_perm_names); i++)
        if (len == strlen(gw_acl_perm_names[i]) && memcmp(s, gw_acl_perm_names[i], len) == 0)
            return 1u << i;
    return 0;
}

/* An account id: 1..GW_ACL_ID_MAX visible ASCII bytes. */
static int gw_acl_id_ok(const char *s, size_t n)
{
    if (n == 0 || n > GW_ACL_ID_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < 0x21 || s[i] > 0x7e)
            return 0;
    return 1;
}

/* Appends a grant; CN_TOOBIG when full, CN_INVAL for a bad id. */
static int gw_acl_add(struct gw_acl *acl, enum gw_acl_grantee kind, unsigned perm,
                      const char *id, size_t idlen)
{
    if (acl->n == GW_ACL_MAX_GRANTS)
        return CN_TOOBIG;
    if (kind == GW_ACL_USER && !gw_acl_id_ok(id, idlen))
        return CN_INVAL;
    struct gw_acl_grant *g = &acl->g[acl->n++];
    memset(g, 0, sizeof(*g));
    g->grantee = (uint8_t)kind;
    g->perm = (uint8_t)perm;
    if (kind == GW_ACL_USER)
        memcpy(g->id, id, idlen);
    return CN_OK;
}

/* Sets acl to the owner's FULL_CONTROL alone. */
static void gw_acl_private(struct gw_acl *acl, const char *owner)
{
    size_t n = strlen(owner);
    memset(acl->owner, 0, sizeof(acl->owner));
    memcpy(acl->owner, owner, CN_MIN(n, (size_t)GW_ACL_ID_MAX));
    acl->n = 0;
    gw_acl_add(acl, GW_ACL_USER, GW_ACL_FULL_CONTROL, owner, n);
}

int gw_acl_canned(struct gw_acl *acl, const char *name, size_t len, const char *owner,
                  const char *bucket_owner)
{
    gw_acl_private(acl, owner);
#define GW_ACL_IS(s) (len == sizeof(s) - 1 && memcmp(name, s, len) == 0)
    int same = bucket_owner == NULL || strcmp(owner, bucket_owner) == 0;
    if (GW_ACL_IS("private"))
        return CN_OK;
    if (GW_ACL_IS("public-read") || GW_ACL_IS("public-read-write")) {
        gw_acl_add(acl, GW_ACL_ALL_USERS, GW_ACL_READ, NULL, 0);
        if (GW_ACL_IS("public-read-write"))
            gw_acl_add(acl, GW_ACL_ALL_USERS, GW_ACL_WRITE, NULL, 0);
        return CN_OK;
    }
    if (GW_ACL_IS("authenticated-read")) {
        gw_acl_add(acl, GW_ACL_AUTH_USERS, GW_ACL_READ, NULL, 0);
        return CN_OK;
    }
    if (GW_ACL_IS("bucket-owner-read") || GW_ACL_IS("bucket-owner-full-control")) {
        if (!same)
            gw_acl_add(acl, GW_ACL_USER,
                       GW_ACL_IS("bucket-owner-read") ? GW_ACL_READ : GW_ACL_FULL_CONTROL,
                       bucket_owner, strlen(bucket_owner));
        return CN_OK;
    }
    if (GW_ACL_IS("log-delivery-write")) {
        gw_acl_add(acl, GW_ACL_LOG_DELIVERY, GW_ACL_WRITE, NULL, 0);
        gw_acl_add(acl, GW_ACL_LOG_DELIVERY, GW_ACL_READ_ACP, NULL, 0);
        return CN_OK;
    }
    if (GW_ACL_IS("aws-exec-read"))
        return CN_OK;   /* grants EC2 a read; there is no EC2 here */
#undef GW_ACL_IS
    return CN_INVAL;
}

/* The group a grant uri names, or -1. */
static int gw_acl_uri_kind(const char *v, size_t n)
{
    if (n == sizeof(GW_ACL_URI_ALL) - 1 && memcmp(v, GW_ACL_URI_ALL, n) == 0)
        return GW_ACL_ALL_USERS;
    if (n == sizeof(GW_ACL_URI_AUTH) - 1 && memcmp(v, GW_ACL_URI_AUTH, n) == 0)
        return GW_ACL_AUTH_USERS;
    if (n == sizeof(GW_ACL_URI_LOG) - 1 && memcmp(v, GW_ACL_URI_LOG, n) == 0)
        return GW_ACL_LOG_DELIVERY;
    return -1;
}

static int gw_acl_space(char c)
{
    return c == ' ' || c == '\t';
}

/* One key=value item of a grant header (quotes optional). */
static enum gw_s3_err gw_acl_grant_item(struct gw_acl *acl, unsigned perm, const char *p,
                                        size_t n)
{
    while (n > 0 && gw_acl_space(*p))
        p++, n--;
    while (n > 0 && gw_acl_space(p[n - 1]))
        n--;
    const char *eq = memchr(p, '=', n);
    if (eq == NULL)
        return GW_S3_INVALID_ARGUMENT;
    size_t klen = (size_t)(eq - p);
    const char *v = eq + 1;
    size_t vlen = n - klen - 1;
    if (vlen >= 2 && v[0] == '"' && v[vlen - 1] == '"')
        v++, vlen -= 2;
    int rc;
    if (klen == 2 && memcmp(p, "id", 2) == 0) {
        rc = gw_acl_add(acl, GW_ACL_USER, perm, v, vlen);
    } else if (klen == 3 && memcmp(p, "uri", 3) == 0) {
        int kind = gw_acl_uri_kind(v, vlen);
        if (kind < 0)
            return GW_S3_INVALID_ARGUMENT;
        rc = gw_acl_add(acl, (enum gw_acl_grantee)kind, perm, NULL, 0);
    } else if (klen == 12 && memcmp(p, "emailAddress", 12) == 0) {
        return GW_S3_UNRESOLVABLE_GRANT_BY_EMAIL_ADDRESS;
    } else {
        return GW_S3_INVALID_ARGUMENT;
    }
    return rc == CN_OK ? GW_S3_OK : GW_S3_INVALID_ARGUMENT;
}

enum gw_s3_err gw_acl_add_grant_header(struct gw_acl *acl, unsigned perm, const char *v,
                                       size_t len)
{
    const char *end = v + len;
    if (len == 0)
        return GW_S3_INVALID_ARGUMENT;
    while (v <= end) {
        /* a comma inside quotes is part of the value */
        const char *e = v;
        int quoted = 0;
        while (e < end && (quoted || *e != ',')) {
            if (*e == '"')
                quoted = !quoted;
            e++;
        }
        enum gw_s3_err err = gw_acl_grant_item(acl, perm, v, (size_t)(e - v));
        if (err != GW_S3_OK)
            return err;
        v = e + 1;
    }
    return GW_S3_OK;
}

/* ---- the text form ---------------------------------------------------- */

void gw_acl_encode(const struct gw_acl *acl, char **out, size_t *len)
{
    size_t cap = 8 + strlen(acl->owner) + acl->n * (16 + GW_ACL_ID_MAX);
    char *s = cn_malloc(cap);
    size_t n = (size_t)snprintf(s, cap, "acl1\n%s\n", acl->owner);
    for (size_t i = 0; i < acl->n; i++) {
        const struct gw_acl_grant *g = &acl->g[i];
        n += (size_t)snprintf(s + n, cap - n, "%s %s %s\n", gw_acl_perm_name(g->perm),
                              gw_acl_kind_names[g->grantee],
                              g->grantee == GW_ACL_USER ? g->id : "-");
    }
    *out = s;
    *len = n;
}

/* One "<PERM> <kind> <id>" line. */
static int gw_acl_decode_line(struct gw_acl *acl, const char *p, size_t n)
{
    const char *sp1 = memchr(p, ' ', n);
    if (sp1 == NULL)
        return CN_INVAL;
    const char *k = sp1 + 1;
    const char *sp2 = memchr(k, ' ', (size_t)(p + n - k));
    if (sp2 == NULL)
        return CN_INVAL;
    unsigned perm = gw_acl_perm_lookup(p, (size_t)(sp1 - p));
    const char *id = sp2 + 1;
    size_t klen = (size_t)(sp2 - k), idlen = (size_t)(p + n - id);
    for (unsigned kind = 0; kind < CN_ARRAY_LEN(gw_acl_kind_names); kind++)
        if (perm != 0 && klen == strlen(gw_acl_kind_names[kind]) &&
            memcmp(k, gw_acl_kind_names[kind], klen) == 0)
            return gw_acl_add(acl, (enum gw_acl_grantee)kind, perm, id, idlen);
    return CN_INVAL;
}

int gw_acl_decode(struct gw_acl *acl, const char *s, size_t len)
{
    memset(acl->owner, 0, sizeof(acl->owner));
    acl->n = 0;
    const char *end = s + len;
    if (len < 5 || memcmp(s, "acl1\n", 5) != 0)
        goto bad;
    s += 5;
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    if (nl == NULL || (nl > s && !gw_acl_id_ok(s, (size_t)(nl - s))))
        goto bad;
    memcpy(acl->owner, s, (size_t)(nl - s));
    for (s = nl + 1; s < end; s = nl + 1) {
        nl = memchr(s, '\n', (size_t)(end - s));
        if (nl == NULL || gw_acl_decode_line(acl, s, (size_t)(nl - s)) != CN_OK)
            goto bad;
    }
    return CN_OK;
bad:
    memset(acl->owner, 0, sizeof(acl->owner));
    acl->n = 0;
    return CN_INVAL;
}

struct gw_acl *gw_acl_dup(const struct gw_acl *acl)
{
    size_t sz = offsetof(struct gw_acl, g) + acl->n * sizeof(acl->g[0]);
    struct gw_acl *c = cn_malloc(sz);
    memcpy(c, acl, sz);
    return c;
}

/* ---- decisions -------------------------------------------------------- */

unsigned gw_acl_perms(const struct gw_acl *acl, const struct gw_acl_who *who, int ignore_public)
{
    unsigned bits = 0;
    for (size_t i = 0; i < acl->n; i++) {
        const struct gw_acl_grant *g = &acl->g[i];
        int match = 0;
        if (g->grantee == GW_ACL_USER)
            match = who->id != NULL && strcmp(g->id, who->id) == 0;
        else if (g->grantee == GW_ACL_ALL_USERS)
            match = !ignore_public;
        else if (g->grantee == GW_ACL_AUTH_USERS)
            match = !ignore_public && who->id != NULL;
        if (match)
            bits |= g->perm;
    }
    if (bits & GW_ACL_FULL_CONTROL)
        bits |= GW_ACL_READ | GW_ACL_WRITE | GW_ACL_READ_ACP | GW_ACL_WRITE_ACP;
    return bits;
}

int gw_acl_is_public(const struct gw_acl *acl)
{
    for (size_t i = 0; i < acl->n; i++)
        if (acl->g[i].grantee == GW_ACL_ALL_USERS || acl->g[i].grantee == GW_ACL_AUTH_USERS)
            return 1;
    return 0;
}

/* ---- XML out ---------------------------------------------------------- */

static const char gw_acl_xsi[] = "http://www.w3.org/2001/XMLSchema-instance";

static void gw_acl_write_user(struct gw_xml_writer *w, const char *id,
                              const char *(*display)(const char *id, void *arg), void *arg)
{
    gw_xml_elem_str(w, "ID", id);
    const char *name = display != NULL ? display(id, arg) : NULL;
    if (name != NULL)
        gw_xml_elem_str(w, "DisplayName", name);
}

void gw_acl_write_xml(const struct gw_acl *acl, struct gw_xml_writer *w,
                      const char *(*display)(const char *id, void *arg), void *arg)
{
    static const char *const uris[] = {NULL, GW_ACL_URI_ALL, GW_ACL_URI_AUTH, GW_ACL_URI_LOG};
    gw_xml_open_ns(w, "AccessControlPolicy", GW_XML_S3_NS);
    gw_xml_open(w, "Owner");
    gw_acl_write_user(w, acl->owner, display, arg);
    gw_xml_close(w);
    gw_xml_open(w, "AccessControlList");
    for (size_t i = 0; i < acl->n; i++) {
        const struct gw_acl_grant *g = &acl->g[i];
        int user = g->grantee == GW_ACL_USER;
        const char *const attrs[] = {"xmlns:xsi", gw_acl_xsi, "xsi:type",
                                     user ? "CanonicalUser" : "Group", NULL};
        gw_xml_open(w, "Grant");
        gw_xml_open_attrs(w, "Grantee", attrs);
        if (user)
            gw_acl_write_user(w, g->id, display, arg);
        else
            gw_xml_elem_str(w, "URI", uris[g->grantee]);
        gw_xml_close(w); /* Grantee */
        gw_xml_elem_str(w, "Permission", gw_acl_perm_name(g->perm));
        gw_xml_close(w); /* Grant */
    }
    gw_xml_close(w); /* AccessControlList */
    gw_xml_close(w); /* AccessControlPolicy */
}

/* ---- XML in ----------------------------------------------------------- */

#define GW_ACL_XML_DEPTH 8
#define GW_ACL_XML_MAX_ELEMS 1024
#define GW_ACL_XML_TEXT_MAX 1024

struct gw_acl_xml {
    XML_Parser p;
    struct gw_acl *acl;
    enum gw_s3_err err;
    int depth;
    size_t n_elems;
    char path[GW_ACL_XML_DEPTH + 1][24];  /* local names of the open elements */
    char text[GW_ACL_XML_TEXT_MAX];
    size_t text_len;
    int text_over;
    /* the grant being read */
    int g_kind;             /* -1 none yet */
    char g_id[GW_ACL_ID_MAX + 1];
    size_t g_id_len;
    unsigned g_perm;
    int g_email;
    int seen_root;
};

static void gw_acl_xml_fail(struct gw_acl_xml *x, enum gw_s3_err e)
{
    if (x->err == GW_S3_OK) {
        x->err = e;
        XML_StopParser(x->p, XML_FALSE);
    }
}

static const char *gw_acl_xml_local(const char *name)
{
    const char *l = strrchr(name, ' ');
    return l != NULL ? l + 1 : name;
}

/* Is the open element at depth d named s? */
static int gw_acl_xml_at(const struct gw_acl_xml *x, int d, const char *s)
{
    return x->depth >= d && strcmp(x->path[d], s) == 0;
}

static void XMLCALL gw_acl_xml_start(void *arg, const XML_Char *name, const XML_Char **attrs)
{
    struct gw_acl_xml *x = arg;
    (void)attrs;
    if (x->err != GW_S3_OK)
        return;
    if (x->depth >= GW_ACL_XML_DEPTH || ++x->n_elems > GW_ACL_XML_MAX_ELEMS) {
        gw_acl_xml_fail(x, GW_S3_MALFORMED_ACL_ERROR);
        return;
    }
    const char *local = gw_acl_xml_local(name);
    x->depth++;
    snprintf(x->path[x->depth], sizeof(x->path[0]), "%s", local);
    x->text_len = 0;
    x->text_over = 0;
    if (x->depth == 1) {
        if (strcmp(local, "AccessControlPolicy") != 0)
            gw_acl_xml_fail(x, GW_S3_MALFORMED_ACL_ERROR);
        x->seen_root = 1;
    }
    if (x->depth == 3 && gw_acl_xml_at(x, 2, "AccessControlList") &&
        strcmp(local, "Grant") == 0) {
        x->g_kind = -1;
        x->g_id_len = 0;
        x->g_perm = 0;
        x->g_email = 0;
    }
}

/* The end of a leaf inside a Grant (depth 4 or 5). */
static void gw_acl_xml_grant_leaf(struct gw_acl_xml *x, const char *local, const char *t,
                                  size_t n)
{
    if (x->depth == 4 && strcmp(local, "Permission") == 0) {
        x->g_perm = gw_acl_perm_lookup(t, n);
        if (x->g_perm == 0)
            gw_acl_xml_fail(x, GW_S3_MALFORMED_ACL_ERROR);
    } else if (x->depth == 5 && gw_acl_xml_at(x, 4, "Grantee")) {
        if (strcmp(local, "ID") == 0) {
            if (n == 0 || n > GW_ACL_ID_MAX || x->text_over) {
                gw_acl_xml_fail(x, GW_S3_INVALID_ARGUMENT);
                return;
            }
            x->g_kind = GW_ACL_USER;
            memcpy(x->g_id, t, n);
            x->g_id_len = n;
        } else if (strcmp(local, "URI") == 0) {
            x->g_kind = gw_acl_uri_kind(t, n);
            if (x->g_kind < 0)
                gw_acl_xml_fail(x, GW_S3_INVALID_ARGUMENT);
        } else if (strcmp(local, "EmailAddress") == 0) {
            x->g_email = 1;
        }
    }
}

static void XMLCALL gw_acl_xml_end(void *arg, const XML_Char *name)
{
    struct gw_acl_xml *x = arg;
    if (x->err != GW_S3_OK)
        return;
    const char *local = gw_acl_xml_local(name);
    const char *t = x->text;
    size_t n = x->text_len;
    while (n > 0 && (*t == ' ' || *t == '\n' || *t == '\r' || *t == '\t'))
        t++, n--;
    while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == '\t'))
        n--;
    if (x->depth == 3 && gw_acl_xml_at(x, 2, "Owner") && strcmp(local, "ID") == 0) {
        if (n > GW_ACL_ID_MAX || x->text_over || (n > 0 && !gw_acl_id_ok(t, n)))
            gw_acl_xml_fail(x, GW_S3_INVALID_ARGUMENT);
        else
            memcpy(x->acl->owner, t, n);
    } else if (x->depth >= 4 && gw_acl_xml_at(x, 2, "AccessControlList") &&
               gw_acl_xml_at(x, 3, "Grant")) {
        gw_acl_xml_grant_leaf(x, local, t, n);
    } else if (x->depth == 3 && gw_acl_xml_at(x, 2, "AccessControlList") &&
               strcmp(local, "Grant") == 0) {
        if (x->g_email) {
            gw_acl_xml_fail(x, GW_S3_UNRESOLVABLE_GRANT_BY_EMAIL_ADDRESS);
        } else if (x->g_kind < 0 || x->g_perm == 0) {
            gw_acl_xml_fail(x, GW_S3_MALFORMED_ACL_ERROR);
        } else {
            int rc = gw_acl_add(x->acl, (enum gw_acl_grantee)x->g_kind, x->g_perm, x->g_id,
                                x->g_id_len);
            if (rc != CN_OK)
                gw_acl_xml_fail(x, rc == CN_TOOBIG ? GW_S3_MALFORMED_ACL_ERROR
                                                   : GW_S3_INVALID_ARGUMENT);
        }
    }
    x->depth--;
    x->text_len = 0;
}

static void XMLCALL gw_acl_xml_text(void *arg, const XML_Char *t, int len)
{
    struct gw_acl_xml *x = arg;
    if (x->err != GW_S3_OK || len <= 0)
        return;
    if ((size_t)len > sizeof(x->text) - x->text_len) {
        x->text_over = 1;   /* too long for any field: refused where it is read */
        return;
    }
    memcpy(x->text + x->text_len, t, (size_t)len);
    x->text_len += (size_t)len;
}

static void XMLCALL gw_acl_xml_doctype(void *arg, const XML_Char *name, const XML_Char *sysid,
                                       const XML_Char *pubid, int has_internal)
{
    (void)name, (void)sysid, (void)pubid, (void)has_internal;
    gw_acl_xml_fail(arg, GW_S3_MALFORMED_ACL_ERROR);
}

static void XMLCALL gw_acl_xml_entity(void *arg, const XML_Char *name, int is_param,
                                      const XML_Char *value, int value_len,
                                      const XML_Char *base, const XML_Char *sysid,
                                      const XML_Char *pubid, const XML_Char *notation)
{
    (void)name, (void)is_param, (void)value, (void)value_len, (void)base;
    (void)sysid, (void)pubid, (void)notation;
    gw_acl_xml_fail(arg, GW_S3_MALFORMED_ACL_ERROR);
}

enum gw_s3_err gw_acl_parse_xml(struct gw_acl *acl, const char *body, size_t len)
{
    memset(acl->owner, 0, sizeof(acl->owner));
    acl->n = 0;
    if (len > GW_ACL_XML_MAX_BYTES)
        return GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED;
    struct gw_acl_xml *x = cn_calloc(1, sizeof(*x));
    x->acl = acl;
    x->p = XML_ParserCreateNS(NULL, ' ');
    if (x->p == NULL) {
        cn_free(x);
        return GW_S3_INTERNAL_ERROR;
    }
    XML_SetUserData(x->p, x);
    XML_SetElementHandler(x->p, gw_acl_xml_start, gw_acl_xml_end);
    XML_SetCharacterDataHandler(x->p, gw_acl_xml_text);
    XML_SetStartDoctypeDeclHandler(x->p, gw_acl_xml_doctype);
    XML_SetEntityDeclHandler(x->p, gw_acl_xml_entity);
    XML_SetParamEntityParsing(x->p, XML_PARAM_ENTITY_PARSING_NEVER);
    if (XML_Parse(x->p, body, (int)len, XML_TRUE) != XML_STATUS_OK && x->err == GW_S3_OK)
        x->err = GW_S3_MALFORMED_ACL_ERROR;
    if (x->err == GW_S3_OK && !x->seen_root)
        x->err = GW_S3_MALFORMED_ACL_ERROR;
    enum gw_s3_err err = x->err;
    XML_ParserFree(x->p);
    cn_free(x);
    return err;
}

/* ---- OwnershipControls and PublicAccessBlockConfiguration ---------------- */

/* A tiny expat walk for the two flat documents below: the root's local
 * name must be root; leaves at depth leaf_depth are handed to leaf(). */
struct gw_acl_flat {
    XML_Parser p;
    const char *root;
    int leaf_depth;
    int depth;
    size_t n_elems;
    enum gw_s3_err err;
    char text[256];
    size_t text_len;
    int text_over;
    void (*leaf)(struct gw_acl_flat *f, const char *name, const char *t, size_t n);
    void *out;
    unsigned seen;
};

static void XMLCALL gw_acl_flat_start(void *arg, const XML_Char *name, const XML_Char **attrs)
{
    struct gw_acl_flat *f = arg;
    (void)attrs;
    if (f->err != GW_S3_OK)
        return;
    if (++f->depth > GW_ACL_XML_DEPTH || ++f->n_elems > 64 ||
        (f->depth == 1 && strcmp(gw_acl_xml_local(name), f->root) != 0)) {
        f->err = GW_S3_MALFORMED_XML;
        XML_StopParser(f->p, XML_FALSE);
        return;
    }
    f->text_len = 0;
    f->text_over = 0;
}

static void XMLCALL gw_acl_flat_end(void *arg, const XML_Char *name)
{
    struct gw_acl_flat *f = arg;
    if (f->err != GW_S3_OK)
        return;
    if (f->depth == f->leaf_depth) {
        const char *t = f->text;
        size_t n = f->text_over ? sizeof(f->text) : f->text_len;
        while (n > 0 && (*t == ' ' || *t == '\n' || *t == '\r' || *t == '\t'))
            t++, n--;
        while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\n' || t[n - 1] == '\r' ||
                         t[n - 1] == '\t'))
            n--;
        f->leaf(f, gw_acl_xml_local(name), t, n);
        if (f->err != GW_S3_OK)
            XML_StopParser(f->p, XML_FALSE);
    }
    f->depth--;
    f->text_len = 0;
}

static void XMLCALL gw_acl_flat_text(void *arg, const XML_Char *t, int len)
{
    struct gw_acl_flat *f = arg;
    if (f->err != GW_S3_OK || len <= 0)
        return;
    if ((size_t)len > sizeof(f->text) - f->text_len) {
        f->text_over = 1;
        return;
    }
    memcpy(f->text + f->text_len, t, (size_t)len);
    f->text_len += (size_t)len;
}

static void XMLCALL gw_acl_flat_doctype(void *arg, const XML_Char *name, const XML_Char *sysid,
                                        const XML_Char *pubid, int has_internal)
{
    struct gw_acl_flat *f = arg;
    (void)name, (void)sysid, (void)pubid, (void)has_internal;
    f->err = GW_S3_MALFORMED_XML;
    XML_StopParser(f->p, XML_FALSE);
}

static enum gw_s3_err gw_acl_flat_run(struct gw_acl_flat *f, const char *body, size_t len)
{
    if (len > 16 * 1024)
        return GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED;
    f->p = XML_ParserCreateNS(NULL, ' ');
    if (f->p == NULL)
        return GW_S3_INTERNAL_ERROR;
    XML_SetUserData(f->p, f);
    XML_SetElementHandler(f->p, gw_acl_flat_start, gw_acl_flat_end);
    XML_SetCharacterDataHandler(f->p, gw_acl_flat_text);
    XML_SetStartDoctypeDeclHandler(f->p, gw_acl_flat_doctype);
    XML_SetParamEntityParsing(f->p, XML_PARAM_ENTITY_PARSING_NEVER);
    if (XML_Parse(f->p, body, (int)len, XML_TRUE) != XML_STATUS_OK && f->err == GW_S3_OK)
        f->err = GW_S3_MALFORMED_XML;
    XML_ParserFree(f->p);
    return f->err;
}

static void gw_acl_ownership_leaf(struct gw_acl_flat *f, const char *name, const char *t,
                                  size_t n)
{
    static const char *const names[] = {"ObjectWriter", "BucketOwnerPreferred",
                                        "BucketOwnerEnforced"};
    if (strcmp(name, "ObjectOwnership") != 0)
        return;
    for (size_t i = 0; i < CN_ARRAY_LEN(names); i++)
        if (n == strlen(names[i]) && memcmp(t, names[i], n) == 0 && f->seen == 0) {
            *(int *)f->out = (int)i;
            f->seen = 1;
            return;
        }
    f->err = GW_S3_MALFORMED_XML;
}

enum gw_s3_err gw_acl_parse_ownership_xml(const char *body, size_t len, int *ownership)
{
    struct gw_acl_flat f = {.root = "OwnershipControls", .leaf_depth = 3,
                            .leaf = gw_acl_ownership_leaf, .out = ownership};
    enum gw_s3_err err = gw_acl_flat_run(&f, body, len);
    if (err == GW_S3_OK && f.seen != 1)
        err = GW_S3_MALFORMED_XML;
    return err;
}

static void gw_acl_pab_leaf(struct gw_acl_flat *f, const char *name, const char *t, size_t n)
{
    static const char *const names[] = {"BlockPublicAcls", "IgnorePublicAcls",
                                        "BlockPublicPolicy", "RestrictPublicBuckets"};
    for (unsigned i = 0; i < CN_ARRAY_LEN(names); i++) {
        if (strcmp(name, names[i]) != 0)
            continue;
        int on = n == 4 && strncasecmp(t, "true", 4) == 0;
        if ((!on && !(n == 5 && strncasecmp(t, "false", 5) == 0)) || (f->seen & (1u << i))) {
            f->err = GW_S3_MALFORMED_XML;
            return;
        }
        f->seen |= 1u << i;
        if (on)
            *(unsigned *)f->out |= 1u << i;
    }
}

enum gw_s3_err gw_acl_parse_pab_xml(const char *body, size_t len, unsigned *flags)
{
    *flags = 0;
    struct gw_acl_flat f = {.root = "PublicAccessBlockConfiguration", .leaf_depth = 2,
                            .leaf = gw_acl_pab_leaf, .out = flags};
    return gw_acl_flat_run(&f, body, len);
}
