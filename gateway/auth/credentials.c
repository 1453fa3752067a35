/* The credentials table: parsed from the file format documented in
 * credentials.h, kept sorted by access key for binary search. */
#include "credentials.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "cn/alloc.h"
#include "key_record.h"

#define GW_CREDENTIALS_FILE_MAX (16u * 1024 * 1024)

struct gw_credentials {
    atomic_uint refs;           /* gw_credentials_hold/free */
    size_t n, cap;
    struct gw_cred *v;
};

static int gw_credentials_ak_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-' || c == '+' || c == '/' || c == '=';
}

static int gw_credentials_owner_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
}

static int gw_credentials_field_ok(const char *p, size_t n, size_t min, size_t max,
                                   int (*ok)(char))
{
    if (n < min || n > max)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!ok(p[i]))
            return 0;
    return 1;
}

static int gw_credentials_secret_char(char c)
{
    return c > ' ' && c < 0x7f;
}

static int gw_credentials_display_char(char c)
{
    return (unsigned char)c >= ' ' && c != 0x7f;
}

static int gw_credentials_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Splits the next blank-separated word off [*p, end). */
static void gw_credentials_word(const char **p, const char *end, const char **w, size_t *n)
{
    while (*p < end && gw_credentials_blank(**p))
        (*p)++;
    *w = *p;
    while (*p < end && !gw_credentials_blank(**p))
        (*p)++;
    *n = (size_t)(*p - *w);
}

static void gw_credentials_free_entry(struct gw_cred *e)
{
    if (e->secret_key != NULL)
        OPENSSL_cleanse((char *)e->secret_key, e->secret_key_len);
    cn_free((char *)e->access_key);
    cn_free((char *)e->secret_key);
    cn_free((char *)e->owner_id);
    cn_free((char *)e->display_name);
    cn_free((struct gw_key_limits *)e->limits);
}

/* Parses one non-comment line into c. CN_OK or CN_INVAL with err. */
static int gw_credentials_line(struct gw_credentials *c, const char *p, const char *end,
                               const char *origin, int lineno, char err[CN_ERR_LEN])
{
    const char *ak, *sk, *owner, *disp;
    size_t akn, skn, ownern, dispn;
    gw_credentials_word(&p, end, &ak, &akn);
    gw_credentials_word(&p, end, &sk, &skn);
    gw_credentials_word(&p, end, &owner, &ownern);
    while (p < end && gw_credentials_blank(*p))
        p++;
    disp = p;
    dispn = (size_t)(end - p);
    while (dispn > 0 && gw_credentials_blank(disp[dispn - 1]))
        dispn--;
    /* a last word admin=true is the attribute, not part of the name */
    static const char admin_attr[] = "admin=true";
    size_t an = sizeof(admin_attr) - 1;
    int admin = 0;
    if (dispn > an && memcmp(disp + dispn - an, admin_attr, an) == 0 &&
        gw_credentials_blank(disp[dispn - an - 1])) {
        admin = 1;
        dispn -= an;
        while (dispn > 0 && gw_credentials_blank(disp[dispn - 1]))
            dispn--;
    }
    const char *what = NULL;
    if (!gw_credentials_field_ok(ak, akn, 3, 128, gw_credentials_ak_char))
        what = "access key";
    else if (!gw_credentials_field_ok(sk, skn, 1, 128, gw_credentials_secret_char))
        what = "secret key";
    else if (!gw_credentials_field_ok(owner, ownern, 1, 64, gw_credentials_owner_char))
        what = "owner id";
    else if (!gw_credentials_field_ok(disp, dispn, 1, 64, gw_credentials_display_char))
        what = "display name";
    if (what != NULL) {
        snprintf(err, CN_ERR_LEN, "%s:%d: missing or invalid %s (want: access_key "
                 "secret_key owner_id display_name)", origin, lineno, what);
        return CN_INVAL;
    }
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 8;
        c->v = cn_realloc(c->v, c->cap * sizeof(*c->v));
    }
    struct gw_cred *e = &c->v[c->n++];
    memset(e, 0, sizeof(*e));
    e->access_key = cn_strndup(ak, akn);
    e->access_key_len = akn;
    e->secret_key = cn_strndup(sk, skn);
    e->secret_key_len = skn;
    e->owner_id = cn_strndup(owner, ownern);
    e->display_name = cn_strndup(disp, dispn);
    e->admin = admin;
    return CN_OK;
}

static int gw_credentials_cmp_key(const char *a, size_t an, const char *b, size_t bn)
{
    int r = memcmp(a, b, an < bn ? an : bn);
    return r != 0 ? r : (an > bn) - (an < bn);
}

static int gw_credentials_cmp(const void *x, const void *y)
{
    const struct gw_cred *a = x, *b = y;
    return gw_credentials_cmp_key(a->access_key, a->access_key_len, b->access_key,
                                  b->access_key_len);
}

/* Sorts and refuses duplicates. */
static int gw_credentials_seal(struct gw_credentials *c, const char *origin,
                               char err[CN_ERR_LEN])
{
    if (c->n == 0) {
        snprintf(err, CN_ERR_LEN, "%s: no credentials", origin);
        return CN_INVAL;
    }
    qsort(c->v, c->n, sizeof(*c->v), gw_credentials_cmp);
    for (size_t i = 1; i < c->n; i++) {
        if (gw_credentials_cmp(&c->v[i - 1], &c->v[i]) == 0) {
            snprintf(err, CN_ERR_LEN, "%s: duplicate access key %s", origin,
                     c->v[i].access_key);
            return CN_INVAL;
        }
    }
    return CN_OK;
}

int gw_credentials_load_buf(const char *buf, size_t len, const char *origin,
                            struct gw_credentials **out, char err[CN_ERR_LEN])
{
    *out = NULL;
    struct gw_credentials *c = cn_calloc(1, sizeof(*c));
    atomic_init(&c->refs, 1);
    const char *p = buf, *end = buf + len;
    int lineno = 0, rc = CN_OK;
    while (p < end && rc == CN_OK) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl != NULL ? nl : end;
        const char *q = p;
        lineno++;
        if (le > p && le[-1] == '\r')
            le--;
        while (q < le && gw_credentials_blank(*q))
            q++;
        if (q < le && *q != '#')
            rc = gw_credentials_line(c, q, le, origin, lineno, err);
        p = nl != NULL ? nl + 1 : end;
    }
    if (rc == CN_OK)
        rc = gw_credentials_seal(c, origin, err);
    if (rc != CN_OK) {
        gw_credentials_free(c);
        return rc;
    }
    *out = c;
    return CN_OK;
}

int gw_credentials_load_file(const char *path, struct gw_credentials **out,
                             char err[CN_ERR_LEN])
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, CN_ERR_LEN, "%s: %s", path, strerror(errno));
        return CN_IO;
    }
    char *buf = cn_malloc(GW_CREDENTIALS_FILE_MAX + 1);
    size_t n = fread(buf, 1, GW_CREDENTIALS_FILE_MAX + 1, f);
    int rc = CN_OK;
    if (ferror(f)) {
        snprintf(err, CN_ERR_LEN, "%s: read error", path);
        rc = CN_IO;
    } else if (n > GW_CREDENTIALS_FILE_MAX) {
        snprintf(err, CN_ERR_LEN, "%s: larger than %u bytes", path, GW_CREDENTIALS_FILE_MAX);
        rc = CN_TOOBIG;
    }
    fclose(f);
    if (rc == CN_OK)
        rc = gw_credentials_load_buf(buf, n, path, out, err);
    OPENSSL_cleanse(buf, n);
    cn_free(buf);
    return rc;
}

const struct gw_cred *gw_credentials_find(const struct gw_credentials *c, const char *ak,
                                          size_t len)
{
    size_t lo = 0, hi = c != NULL ? c->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct gw_cred *e = &c->v[mid];
        int r = gw_credentials_cmp_key(ak, len, e->access_key, e->access_key_len);
        if (r == 0)
            return e;
        if (r < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

size_t gw_credentials_count(const struct gw_credentials *c)
{
    return c->n;
}

const struct gw_cred *gw_credentials_at(const struct gw_credentials *c, size_t i)
{
    CN_ASSERT(i < c->n);
    return &c->v[i];
}

struct gw_credentials *gw_credentials_hold(const struct gw_credentials *c)
{
    struct gw_credentials *m = (struct gw_credentials *)c;
    atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
    return m;
}

/* Appends a copy of e (no checks: e comes from a checked table or record). */
static void gw_credentials_push_copy(struct gw_credentials *c, const struct gw_cred *e)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 8;
        c->v = cn_realloc(c->v, c->cap * sizeof(*c->v));
    }
    struct gw_cred *d = &c->v[c->n++];
    d->access_key = cn_strndup(e->access_key, e->access_key_len);
    d->access_key_len = e->access_key_len;
    d->secret_key = cn_strndup(e->secret_key, e->secret_key_len);
    d->secret_key_len = e->secret_key_len;
    d->owner_id = cn_strndup(e->owner_id, strlen(e->owner_id));
    d->display_name = cn_strndup(e->display_name, strlen(e->display_name));
    d->admin = e->admin;
    d->limits = e->limits != NULL ? cn_memdup(e->limits, sizeof(*e->limits)) : NULL;
}

struct gw_credentials *gw_credentials_merge(const struct gw_credentials *file,
                                            const struct gw_cred *extra, size_t n_extra,
                                            size_t *shadowed)
{
    struct gw_credentials *c = cn_calloc(1, sizeof(*c));
    atomic_init(&c->refs, 1);
    *shadowed = 0;
    for (size_t i = 0; file != NULL && i < file->n; i++)
        gw_credentials_push_copy(c, &file->v[i]);
    for (size_t i = 0; i < n_extra; i++) {
        if (gw_credentials_find(file, extra[i].access_key, extra[i].access_key_len) != NULL) {
            (*shadowed)++;
            continue;
        }
        struct gw_cred e = extra[i];
        e.admin = 0;        /* only the file makes operators */
        gw_credentials_push_copy(c, &e);
    }
    if (c->n > 1)
        qsort(c->v, c->n, sizeof(*c->v), gw_credentials_cmp);
    /* the extras are unique by construction (one record per key); keep the
     * first of any duplicate all the same, so find() stays well defined */
    size_t w = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (w > 0 && gw_credentials_cmp(&c->v[w - 1], &c->v[i]) == 0) {
            gw_credentials_free_entry(&c->v[i]);
            (*shadowed)++;
            continue;
        }
        c->v[w++] = c->v[i];
    }
    c->n = w;
    return c;
}

void gw_credentials_free(struct gw_credentials *c)
{
    if (c == NULL)
        return;
    if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (size_t i = 0; i < c->n; i++)
        gw_credentials_free_entry(&c->v[i]);
    cn_free(c->v);
    cn_free(c);
}
