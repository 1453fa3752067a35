/* CURVE key files and allow-lists: parsing, loading with the permission
 * check for secret keys, and writing new key files (see cn/curve_key.h). */
#include "cn/curve_key.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cn/alloc.h"

#define CN_CURVE_KEY_FILE_MAX (16u << 20)

struct cn_curve_keyset {
    struct cn_curve_key *keys; /* sorted by z85, no duplicates */
    size_t n;
};

/* Z85 (ZeroMQ RFC 32): the value of each character, -1 outside the set. */
static int cn_curve_key_z85_value(unsigned char c)
{
    static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz"
                                   "ABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
    const char *p = c != '\0' ? strchr(alphabet, c) : NULL;
    return p != NULL ? (int)(p - alphabet) : -1;
}

int cn_curve_key_valid(const char *s, size_t len)
{
    if (len != CN_CURVE_KEY_LEN)
        return 0;
    for (size_t g = 0; g < len; g += 5) {
        /* each 5 characters carry 4 bytes: their value must fit 32 bits */
        uint64_t v = 0;
        for (size_t i = g; i < g + 5; i++) {
            int d = cn_curve_key_z85_value((unsigned char)s[i]);
            if (d < 0)
                return 0;
            v = v * 85 + (uint64_t)d;
        }
        if (v > UINT32_MAX)
            return 0;
    }
    return 1;
}

static int cn_curve_key_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Called once per key found while parsing; returns CN_OK to go on. */
typedef int (*cn_curve_key_line_cb)(void *arg, const char *key, char err[CN_ERR_LEN]);

/* Walks the lines of buf, calling cb for each key (grammar in the header).
 * Errors name origin and the line. */
static int cn_curve_key_scan(const char *buf, size_t len, const char *origin,
                             cn_curve_key_line_cb cb, void *arg, char err[CN_ERR_LEN])
{
    const char *p = buf, *end = buf + len;
    for (int lineno = 1; p < end; lineno++) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *next = eol != NULL ? eol + 1 : end;
        if (eol == NULL)
            eol = end;
        while (p < eol && cn_curve_key_is_space(*p))
            p++;
        const char *tok = p;
        while (p < eol && !cn_curve_key_is_space(*p))
            p++;
        size_t tlen = (size_t)(p - tok);
        p = next;
        if (tlen == 0)
            continue;
        if (cn_curve_key_valid(tok, tlen)) {
            char key[CN_CURVE_KEY_LEN + 1];
            memcpy(key, tok, CN_CURVE_KEY_LEN);
            key[CN_CURVE_KEY_LEN] = '\0';
            char sub[CN_ERR_LEN];
            if (cb(arg, key, sub) != CN_OK) {
                snprintf(err, CN_ERR_LEN, "%s:%d: %s", origin, lineno, sub);
                return CN_INVAL;
            }
            continue;
        }
        if (tok[0] == '#')
            continue;
        snprintf(err, CN_ERR_LEN, "%s:%d: not a CURVE key (40 Z85 characters) nor a comment",
                 origin, lineno);
        return CN_INVAL;
    }
    return CN_OK;
}

struct cn_curve_key_one {
    struct cn_curve_key key;
    int found;
};

static int cn_curve_key_one_cb(void *arg, const char *key, char err[CN_ERR_LEN])
{
    struct cn_curve_key_one *o = arg;
    if (o->found) {
        snprintf(err, CN_ERR_LEN, "a second key (a key file holds one)");
        return CN_INVAL;
    }
    memcpy(o->key.z85, key, sizeof(o->key.z85));
    o->found = 1;
    return CN_OK;
}

int cn_curve_key_parse(const char *buf, size_t len, const char *origin,
                       struct cn_curve_key *out, char err[CN_ERR_LEN])
{
    struct cn_curve_key_one o;
    memset(&o, 0, sizeof(o));
    int rc = cn_curve_key_scan(buf, len, origin, cn_curve_key_one_cb, &o, err);
    if (rc != CN_OK)
        return rc;
    if (!o.found) {
        snprintf(err, CN_ERR_LEN, "%s: no key in the file (want 40 Z85 characters)", origin);
        return CN_INVAL;
    }
    *out = o.key;
    return CN_OK;
}

/* Reads a whole file (at most 16 MiB) into a new buffer; *out is the
 * caller's to cn_free(). secret: refuse a file open to group or others. */
static int cn_curve_key_read(const char *path, int secret, char **out, size_t *len,
                             char err[CN_ERR_LEN])
{
    struct stat st;
    char *buf = NULL;
    int rc = CN_IO;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, CN_ERR_LEN, "%s: %s", path, strerror(errno));
        return CN_IO;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, CN_ERR_LEN, "%s: not a regular file", path);
        goto out;
    }
    if (secret && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
        snprintf(err, CN_ERR_LEN, "%s: a secret key must not be open to group or others "
                 "(mode %03o; chmod 600 it)", path, (unsigned)(st.st_mode & 0777));
        rc = CN_INVAL;
        goto out;
    }
    if ((uint64_t)st.st_size > CN_CURVE_KEY_FILE_MAX) {
        snprintf(err, CN_ERR_LEN, "%s: file over 16 MiB", path);
        rc = CN_TOOBIG;
        goto out;
    }
    buf = cn_malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            snprintf(err, CN_ERR_LEN, "%s: %s", path, n < 0 ? strerror(errno) : "short read");
            goto out;
        }
        got += (size_t)n;
    }
    *out = buf;
    *len = got;
    buf = NULL;
    rc = CN_OK;
out:
    cn_free(buf);
    close(fd);
    return rc;
}

int cn_curve_key_load(const char *path, int secret, struct cn_curve_key *out,
                      char err[CN_ERR_LEN])
{
    char *buf = NULL;
    size_t len = 0;
    int rc = cn_curve_key_read(path, secret, &buf, &len, err);
    if (rc == CN_OK)
        rc = cn_curve_key_parse(buf, len, path, out, err);
    cn_free(buf);
    return rc;
}

int cn_curve_key_write(const char *path, const struct cn_curve_key *key, int secret,
                       char err[CN_ERR_LEN])
{
    mode_t mode = secret ? 0600 : 0644;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) {
        snprintf(err, CN_ERR_LEN, "%s: %s", path, strerror(errno));
        return CN_IO;
    }
    char line[CN_CURVE_KEY_LEN + 2];
    memcpy(line, key->z85, CN_CURVE_KEY_LEN);
    line[CN_CURVE_KEY_LEN] = '\n';
    /* the umask may only take bits away; set the mode exactly */
    int ok = fchmod(fd, mode) == 0 &&
             write(fd, line, CN_CURVE_KEY_LEN + 1) == CN_CURVE_KEY_LEN + 1 && fsync(fd) == 0;
    if (!ok)
        snprintf(err, CN_ERR_LEN, "%s: %s", path, strerror(errno));
    if (close(fd) != 0 && ok) {
        snprintf(err, CN_ERR_LEN, "%s: %s", path, strerror(errno));
        ok = 0;
    }
    if (!ok) {
        unlink(path);
        return CN_IO;
    }
    return CN_OK;
}

/* ---- allow-lists ---- */

static int cn_curve_keyset_add_cb(void *arg, const char *key, char err[CN_ERR_LEN])
{
    struct cn_curve_keyset *s = arg;
    (void)err;
    if ((s->n & (s->n - 1)) == 0) /* 0, 1, 2, 4, ...: grow by doubling */
        s->keys = cn_realloc(s->keys, (s->n == 0 ? 1 : 2 * s->n) * sizeof(*s->keys));
    memcpy(s->keys[s->n++].z85, key, CN_CURVE_KEY_LEN + 1);
    return CN_OK;
}

static int cn_curve_keyset_cmp(const void *a, const void *b)
{
    return memcmp(a, b, CN_CURVE_KEY_LEN);
}

int cn_curve_keyset_parse(const char *buf, size_t len, const char *origin,
                          struct cn_curve_keyset **out, char err[CN_ERR_LEN])
{
    struct cn_curve_keyset *s = cn_calloc(1, sizeof(*s));
    *out = NULL;
    int rc = cn_curve_key_scan(buf, len, origin, cn_curve_keyset_add_cb, s, err);
    if (rc != CN_OK) {
        cn_curve_keyset_free(s);
        return rc;
    }
    if (s->n > 1) {
        qsort(s->keys, s->n, sizeof(*s->keys), cn_curve_keyset_cmp);
        size_t w = 1;
        for (size_t r = 1; r < s->n; r++)
            if (cn_curve_keyset_cmp(&s->keys[r], &s->keys[w - 1]) != 0)
                s->keys[w++] = s->keys[r];
        s->n = w;
    }
    *out = s;
    return CN_OK;
}

int cn_curve_keyset_load(const char *path, struct cn_curve_keyset **out, char err[CN_ERR_LEN])
{
    char *buf = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = cn_curve_key_read(path, 0, &buf, &len, err);
    if (rc == CN_OK)
        rc = cn_curve_keyset_parse(buf, len, path, out, err);
    cn_free(buf);
    return rc;
}

int cn_curve_keyset_has(const struct cn_curve_keyset *s, const char *z85, size_t len)
{
    if (s == NULL || len != CN_CURVE_KEY_LEN || s->n == 0)
        return 0;
    return bsearch(z85, s->keys, s->n, sizeof(*s->keys), cn_curve_keyset_cmp) != NULL;
}

size_t cn_curve_keyset_count(const struct cn_curve_keyset *s)
{
    return s != NULL ? s->n : 0;
}

void cn_curve_keyset_free(struct cn_curve_keyset *s)
{
    if (s == NULL)
        return;
    cn_free(s->keys);
    cn_free(s);
}
