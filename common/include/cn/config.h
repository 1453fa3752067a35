/* Settings from one table of descriptors per binary (redis static_configs[],
 * nginx ngx_command_t). From the table come defaults, LeoFS-style
 * `key = value` files, environment overrides, --help, range errors naming the
 * key, and --dump-config for tests.
 *
 * Order of precedence, lowest first: default, file, environment
 * (CAIRN_ + the name upper-cased with '.' as '_'), --set KEY=VALUE. */
#ifndef CN_CONFIG_H
#define CN_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cn/rc.h"

enum cn_config_type {
    CN_CONF_BOOL,   /* int field: 0/1; "true/false/yes/no/on/off/1/0" */
    CN_CONF_INT,    /* int64_t field */
    CN_CONF_SIZE,   /* int64_t field, bytes; accepts 512, 64K, 5M, 1G, 2T */
    CN_CONF_MSEC,   /* int64_t field, milliseconds; accepts 250ms, 5s, 2m, 1h,
                       a bare number is milliseconds */
    CN_CONF_STRING, /* char * field, owned (freed by cn_config_fini) */
    CN_CONF_ENUM,   /* int field: index into enum_names */
};

struct cn_config_desc {
    const char *name;
    enum cn_config_type type;
    size_t offset;                  /* offsetof() the field in the object */
    const char *def;                /* default, as it would be written */
    int64_t min, max;               /* bounds for INT, SIZE and MSEC */
    const char *const *enum_names;  /* NULL-terminated, for ENUM; for INT, SIZE
                                       and MSEC, enum_names[0] is a word
                                       stored as 0 (e.g. "auto"; min > 0) */
    const char *doc;                /* one line for --help and docs */
};

/* Table terminator. */
#define CN_CONFIG_END {NULL, CN_CONF_INT, 0, NULL, 0, 0, NULL, NULL}

/* Sets every field of obj to its default. On error (a bad default: a bug)
 * fills err and returns CN_INVAL. */
int cn_config_init(const struct cn_config_desc *tab, void *obj, char err[CN_ERR_LEN]);

/* Sets one key from its text form. Errors name the key: unknown key, bad
 * value, out of range. On error the field keeps its old value. */
int cn_config_set(const struct cn_config_desc *tab, void *obj, const char *name,
                  const char *value, char err[CN_ERR_LEN]);

/* Reads a `key = value` file ('#' and '%' start comments, blank lines are
 * skipped, values may be quoted with "). Errors name the file, line and key. */
int cn_config_load_file(const struct cn_config_desc *tab, void *obj,
                        const char *path, char err[CN_ERR_LEN]);

/* Same as cn_config_load_file() over a buffer; `origin` names it in errors. */
int cn_config_load_buf(const struct cn_config_desc *tab, void *obj,
                       const char *buf, size_t len, const char *origin,
                       char err[CN_ERR_LEN]);

/* Applies every PREFIX + NAME variable that is set in the environment. */
int cn_config_apply_env(const struct cn_config_desc *tab, void *obj,
                        const char *prefix, char err[CN_ERR_LEN]);

/* Environment variable name of a key: prefix + upper(name), '.' -> '_'. */
void cn_config_env_name(const char *prefix, const char *name, char *out, size_t outlen);

/* Writes every key as `key = value`, in table order. */
void cn_config_dump(const struct cn_config_desc *tab, const void *obj, FILE *out);

/* Writes a markdown table: key, default, meaning. */
void cn_config_help(const struct cn_config_desc *tab, FILE *out);

/* Frees the strings the object owns. */
void cn_config_fini(const struct cn_config_desc *tab, void *obj);

/* Command-line front: handles --config FILE (or -c FILE), --set KEY=VALUE
 * (repeatable), --dump-config, --help, --version ("progname VERSION");
 * anything else is an error. Applies in order defaults, file, environment,
 * --set. Returns CN_OK to run, CN_DONE when --help, --version or
 * --dump-config was served (exit 0), or an error. */
int cn_config_cli(const struct cn_config_desc *tab, void *obj, const char *progname,
                  const char *env_prefix, int argc, char **argv, char err[CN_ERR_LEN]);

int cn_config_parse_size(const char *s, int64_t *out);
int cn_config_parse_msec(const char *s, int64_t *out);
int cn_config_parse_bool(const char *s, int *out);

#endif
