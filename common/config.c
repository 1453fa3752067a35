/* Table-driven settings: see cn/config.h for the rules. */
#include "cn/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/build_info.h"

static const struct cn_config_desc *cn_config_find(const struct cn_config_desc *tab,
                                                   const char *name, size_t len)
{
    for (; tab->name != NULL; tab++)
        if (strlen(tab->name) == len && memcmp(tab->name, name, len) == 0)
            return tab;
    return NULL;
}

/* Parses a decimal integer with an optional unit suffix from units[], each
 * with its multiplier. The whole string must be consumed. */
struct cn_config_unit {
    const char *suffix;
    int64_t mult;
};

static int cn_config_parse_units(const char *s, const struct cn_config_unit *units,
                                 int64_t *out)
{
    char *end;
    if (s == NULL || !isdigit((unsigned char)*s))
        return CN_INVAL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || v < 0)
        return CN_INVAL;
    while (*end == ' ')
        end++;
    int64_t mult = 1;
    if (*end != '\0') {
        const struct cn_config_unit *u;
        for (u = units; u->suffix != NULL; u++)
            if (strcasecmp(end, u->suffix) == 0)
                break;
        if (u->suffix == NULL)
            return CN_INVAL;
        mult = u->mult;
    }
    if (v > INT64_MAX / mult)
        return CN_TOOBIG;
    *out = (int64_t)v * mult;
    return CN_OK;
}

int cn_config_parse_size(const char *s, int64_t *out)
{
    static const struct cn_config_unit units[] = {
        {"B", 1},
        {"K", 1LL << 10}, {"KB", 1LL << 10}, {"KiB", 1LL << 10},
        {"M", 1LL << 20}, {"MB", 1LL << 20}, {"MiB", 1LL << 20},
        {"G", 1LL << 30}, {"GB", 1LL << 30}, {"GiB", 1LL << 30},
        {"T", 1LL << 40}, {"TB", 1LL << 40}, {"TiB", 1LL << 40},
        {NULL, 0},
    };
    return cn_config_parse_units(s, units, out);
}

int cn_config_parse_msec(const char *s, int64_t *out)
{
    static const struct cn_config_unit units[] = {
        {"ms", 1}, {"s", 1000}, {"m", 60000}, {"min", 60000}, {"h", 3600000},
        {NULL, 0},
    };
    return cn_config_parse_units(s, units, out);
}

int cn_config_parse_bool(const char *s, int *out)
{
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < CN_ARRAY_LEN(yes); i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = 1;
            return CN_OK;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = 0;
            return CN_OK;
        }
    }
    return CN_INVAL;
}

static int cn_config_set_desc(const struct cn_config_desc *d, void *obj,
                              const char *value, char err[CN_ERR_LEN])
{
    char *field = (char *)obj + d->offset;
    int64_t v = 0;
    int b = 0, rc;

    switch (d->type) {
    case CN_CONF_BOOL:
        if (cn_config_parse_bool(value, &b) != CN_OK) {
            snprintf(err, CN_ERR_LEN, "%s: '%s' is not a boolean (true/false)",
                     d->name, value);
            return CN_INVAL;
        }
        *(int *)field = b;
        return CN_OK;
    case CN_CONF_INT:
    case CN_CONF_SIZE:
    case CN_CONF_MSEC:
        if (d->enum_names != NULL && strcmp(value, d->enum_names[0]) == 0) {
            *(int64_t *)field = 0; /* the named value, e.g. "auto" */
            return CN_OK;
        }
        if (d->type == CN_CONF_SIZE)
            rc = cn_config_parse_size(value, &v);
        else if (d->type == CN_CONF_MSEC)
            rc = cn_config_parse_msec(value, &v);
        else
            rc = cn_config_parse_units(value, (const struct cn_config_unit[]){{NULL, 0}}, &v);
        if (rc != CN_OK) {
            snprintf(err, CN_ERR_LEN, "%s: '%s' is not a valid %s", d->name, value,
                     d->type == CN_CONF_SIZE   ? "size (e.g. 512K, 5M)"
                     : d->type == CN_CONF_MSEC ? "duration (e.g. 500ms, 5s)"
                                               : "non-negative integer");
            return CN_INVAL;
        }
        if (v < d->min || v > d->max) {
            snprintf(err, CN_ERR_LEN, "%s: %s is out of range [%lld, %lld]", d->name,
                     value, (long long)d->min, (long long)d->max);
            return CN_INVAL;
        }
        *(int64_t *)field = v;
        return CN_OK;
    case CN_CONF_STRING:
        cn_free(*(char **)field);
        *(char **)field = cn_strdup(value);
        return CN_OK;
    case CN_CONF_ENUM:
        for (int i = 0; d->enum_names[i] != NULL; i++) {
            if (strcmp(d->enum_names[i], value) == 0) {
                *(int *)field = i;
                return CN_OK;
            }
        }
        {
            char choices[128] = "";
            for (int i = 0; d->enum_names[i] != NULL; i++) {
                if (i > 0)
                    strncat(choices, "|", sizeof(choices) - strlen(choices) - 1);
                strncat(choices, d->enum_names[i], sizeof(choices) - strlen(choices) - 1);
            }
            snprintf(err, CN_ERR_LEN, "%s: '%s' is not one of %s", d->name, value, choices);
        }
        return CN_INVAL;
    }
    snprintf(err, CN_ERR_LEN, "%s: bad descriptor type", d->name);
    return CN_INVAL;
}

int cn_config_init(const struct cn_config_desc *tab, void *obj, char err[CN_ERR_LEN])
{
    for (const struct cn_config_desc *d = tab; d->name != NULL; d++) {
        if (d->type == CN_CONF_STRING)
            *(char **)((char *)obj + d->offset) = NULL;
        int rc = cn_config_set_desc(d, obj, d->def ? d->def : "", err);
        if (rc != CN_OK)
            return rc;
    }
    return CN_OK;
}

int cn_config_set(const struct cn_config_desc *tab, void *obj, const char *name,
                  const char *value, char err[CN_ERR_LEN])
{
    const struct cn_config_desc *d = cn_config_find(tab, name, strlen(name));
    if (d == NULL) {
        snprintf(err, CN_ERR_LEN, "%s: unknown setting", name);
        return CN_INVAL;
    }
    return cn_config_set_desc(d, obj, value, err);
}

static const char *cn_config_trim(const char *s, const char *end, const char **out_end)
{
    while (s < end && isspace((unsigned char)*s))
        s++;
    while (end > s && isspace((unsigned char)end[-1]))
        end--;
    *out_end = end;
    return s;
}

int cn_config_load_buf(const struct cn_config_desc *tab, void *obj, const char *buf,
                       size_t len, const char *origin, char err[CN_ERR_LEN])
{
    const char *p = buf, *end = buf + len;
    int lineno = 0;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *next = eol ? eol + 1 : end;
        if (eol == NULL)
            eol = end;
        lineno++;
        /* strip comments that start a line or follow whitespace */
        const char *stop = eol;
        for (const char *q = p; q < eol; q++) {
            if ((*q == '#' || *q == '%') && (q == p || isspace((unsigned char)q[-1]))) {
                stop = q;
                break;
            }
        }
        const char *le, *ls = cn_config_trim(p, stop, &le);
        p = next;
        if (ls == le)
            continue;
        const char *eq = memchr(ls, '=', (size_t)(le - ls));
        if (eq == NULL) {
            snprintf(err, CN_ERR_LEN, "%s:%d: expected 'key = value'", origin, lineno);
            return CN_INVAL;
        }
        const char *ke, *ks = cn_config_trim(ls, eq, &ke);
        const char *ve, *vs = cn_config_trim(eq + 1, le, &ve);
        if (ve - vs >= 2 && *vs == '"' && ve[-1] == '"') {
            vs++;
            ve--;
        }
        if (ke - ks >= 128 || ve - vs >= 4096 || memchr(vs, '\0', (size_t)(ve - vs))) {
            snprintf(err, CN_ERR_LEN, "%s:%d: key or value too long", origin, lineno);
            return CN_INVAL;
        }
        char key[128], val[4096], sub[CN_ERR_LEN];
        memcpy(key, ks, (size_t)(ke - ks));
        key[ke - ks] = '\0';
        memcpy(val, vs, (size_t)(ve - vs));
        val[ve - vs] = '\0';
        if (cn_config_set(tab, obj, key, val, sub) != CN_OK) {
            snprintf(err, CN_ERR_LEN, "%s:%d: %s", origin, lineno, sub);
            return CN_INVAL;
        }
    }
    return CN_OK;
}

int cn_config_load_file(const struct cn_config_desc *tab, void *obj, const char *path,
                        char err[CN_ERR_LEN])
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    int rc = CN_IO;
    if (f == NULL) {
        snprintf(err, CN_ERR_LEN, "%s: %s", path, strerror(errno));
        return CN_IO;
    }
    size_t cap = 1 << 16, len = 0;
    buf = cn_malloc(cap);
    for (;;) {
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
        if (len == cap) {
            if (cap >= (1u << 24)) {
                snprintf(err, CN_ERR_LEN, "%s: file over 16 MiB", path);
                rc = CN_TOOBIG;
                goto out;
            }
            cap *= 2;
            buf = cn_realloc(buf, cap);
        }
    }
    if (ferror(f)) {
        snprintf(err, CN_ERR_LEN, "%s: read error", path);
        goto out;
    }
    rc = cn_config_load_buf(tab, obj, buf, len, path, err);
out:
    cn_free(buf);
    fclose(f);
    return rc;
}

void cn_config_env_name(const char *prefix, const char *name, char *out, size_t outlen)
{
    size_t n = 0;
    for (const char *s = prefix; *s && n + 1 < outlen; s++)
        out[n++] = *s;
    for (const char *s = name; *s && n + 1 < outlen; s++)
        out[n++] = (*s == '.' || *s == '-') ? '_' : (char)toupper((unsigned char)*s);
    out[n] = '\0';
}

int cn_config_apply_env(const struct cn_config_desc *tab, void *obj, const char *prefix,
                        char err[CN_ERR_LEN])
{
    for (const struct cn_config_desc *d = tab; d->name != NULL; d++) {
        char env[160], sub[CN_ERR_LEN];
        cn_config_env_name(prefix, d->name, env, sizeof(env));
        const char *v = getenv(env);
        if (v == NULL)
            continue;
        if (cn_config_set_desc(d, obj, v, sub) != CN_OK) {
            snprintf(err, CN_ERR_LEN, "environment %s: %s", env, sub);
            return CN_INVAL;
        }
    }
    return CN_OK;
}

static void cn_config_format(const struct cn_config_desc *d, const void *obj, char *out,
                             size_t outlen)
{
    const char *field = (const char *)obj + d->offset;
    switch (d->type) {
    case CN_CONF_BOOL:
        snprintf(out, outlen, "%s", *(const int *)field ? "true" : "false");
        break;
    case CN_CONF_INT:
    case CN_CONF_SIZE:
    case CN_CONF_MSEC:
        if (d->enum_names != NULL && *(const int64_t *)field == 0)
            snprintf(out, outlen, "%s", d->enum_names[0]);
        else
            snprintf(out, outlen, "%lld", (long long)*(const int64_t *)field);
        break;
    case CN_CONF_STRING: {
        const char *s = *(char *const *)field;
        snprintf(out, outlen, "%s", s ? s : "");
        break;
    }
    case CN_CONF_ENUM:
        snprintf(out, outlen, "%s", d->enum_names[*(const int *)field]);
        break;
    }
}

void cn_config_dump(const struct cn_config_desc *tab, const void *obj, FILE *out)
{
    char val[4096];
    for (const struct cn_config_desc *d = tab; d->name != NULL; d++) {
        cn_config_format(d, obj, val, sizeof(val));
        fprintf(out, "%s = %s\n", d->name, val);
    }
}

void cn_config_help(const struct cn_config_desc *tab, FILE *out)
{
    static const char *const type_names[] = {"bool", "integer", "size", "duration",
                                             "string", "enum"};
    fprintf(out, "| key | type | default | meaning |\n|---|---|---|---|\n");
    for (const struct cn_config_desc *d = tab; d->name != NULL; d++)
        fprintf(out, "| `%s` | %s | `%s` | %s |\n", d->name, type_names[d->type],
                d->def ? d->def : "", d->doc ? d->doc : "");
}

void cn_config_fini(const struct cn_config_desc *tab, void *obj)
{
    for (const struct cn_config_desc *d = tab; d->name != NULL; d++) {
        if (d->type == CN_CONF_STRING) {
            char **f = (char **)((char *)obj + d->offset);
            cn_free(*f);
            *f = NULL;
        }
    }
}

int cn_config_cli(const struct cn_config_desc *tab, void *obj, const char *progname,
                  const char *env_prefix, int argc, char **argv, char err[CN_ERR_LEN])
{
    const char *file = NULL;
    int dump = 0, rc;
    /* --help and --version return CN_DONE before the defaults are set, and
     * the caller then runs cn_config_fini: its strings must be NULL, not
     * whatever the stack held (ASan caught a wild free) */
    for (const struct cn_config_desc *d = tab; d->name != NULL; d++)
        if (d->type == CN_CONF_STRING)
            *(char **)((char *)obj + d->offset) = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if ((strcmp(a, "--config") == 0 || strcmp(a, "-c") == 0) && i + 1 < argc) {
            file = argv[++i];
        } else if (strcmp(a, "--dump-config") == 0) {
            dump = 1;
        } else if (strcmp(a, "--version") == 0) {
            printf("%s %s\n", progname, cn_build_info_version());
            return CN_DONE;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: %s [--config FILE] [--set KEY=VALUE]... [--dump-config] [--version]\n\n"
                   "Every key can also be set in the environment as %sKEY_NAME\n\n",
                   progname, env_prefix);
            cn_config_help(tab, stdout);
            return CN_DONE;
        } else if (strcmp(a, "--set") == 0 && i + 1 < argc) {
            i++; /* applied below, after file and environment */
        } else {
            snprintf(err, CN_ERR_LEN, "unknown argument '%s' (try --help)", a);
            return CN_INVAL;
        }
    }
    if ((rc = cn_config_init(tab, obj, err)) != CN_OK)
        return rc;
    if (file != NULL && (rc = cn_config_load_file(tab, obj, file, err)) != CN_OK)
        return rc;
    if ((rc = cn_config_apply_env(tab, obj, env_prefix, err)) != CN_OK)
        return rc;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--set") != 0 || i + 1 >= argc)
            continue;
        const char *kv = argv[++i], *eq = strchr(kv, '=');
        if (eq == NULL || eq == kv || eq - kv >= 128) {
            snprintf(err, CN_ERR_LEN, "--set expects KEY=VALUE, got '%s'", kv);
            return CN_INVAL;
        }
        char key[128];
        memcpy(key, kv, (size_t)(eq - kv));
        key[eq - kv] = '\0';
        if ((rc = cn_config_set(tab, obj, key, eq + 1, err)) != CN_OK)
            return rc;
    }
    if (dump) {
        cn_config_dump(tab, obj, stdout);
        return CN_DONE;
    }
    return CN_OK;
}
