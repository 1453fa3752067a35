/* The settings table of cairn-bench (see settings.h). Each row names a
 * basho_bench key (also the flag --KEY), the function that reads its Erlang
 * value into struct bench_settings, and one line of help. */
#include "settings.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cn/alloc.h"
#include "cn/config.h"

typedef int (*bench_settings_apply_fn)(struct bench_settings *s, const struct bench_term *v,
                                       char err[CN_ERR_LEN]);

struct bench_setting_desc {
    const char *key;
    bench_settings_apply_fn apply;
    int text;            /* a flag value that is no Erlang term is a string */
    const char *arg;     /* what the value looks like, for --help */
    const char *doc;
};

const char *bench_op_kind_str(enum bench_op_kind kind)
{
    static const char *const names[] = {"get", "put", "delete", "head", "list", "range_get"};
    return (unsigned)kind < CN_ARRAY_LEN(names) ? names[kind] : "?";
}

static int bench_settings_bad(char err[CN_ERR_LEN], const struct bench_term *v,
                              const char *want)
{
    char shown[96];
    bench_term_format(v, shown, sizeof(shown));
    snprintf(err, CN_ERR_LEN, "expected %s, got %s", want, shown);
    return CN_INVAL;
}

/* An integer in [min, max]; text values may carry a size suffix (64K, 5M). */
static int bench_settings_int(const struct bench_term *v, int64_t min, int64_t max,
                              int64_t *out, char err[CN_ERR_LEN])
{
    int64_t x;
    if (v->type == BENCH_TERM_INT) {
        x = v->i;
    } else if ((v->type == BENCH_TERM_STRING || v->type == BENCH_TERM_ATOM) &&
               cn_config_parse_size(v->s, &x) == CN_OK) {
        /* "64K" from a flag */
    } else {
        return bench_settings_bad(err, v, "an integer");
    }
    if (x < min || x > max) {
        snprintf(err, CN_ERR_LEN, "%lld is out of range [%lld, %lld]", (long long)x,
                 (long long)min, (long long)max);
        return CN_INVAL;
    }
    *out = x;
    return CN_OK;
}

static int bench_settings_num(const struct bench_term *v, double min, double max,
                              double *out, char err[CN_ERR_LEN])
{
    double x;
    if (bench_term_number(v, &x) != CN_OK)
        return bench_settings_bad(err, v, "a number");
    if (!(x >= min && x <= max)) {
        snprintf(err, CN_ERR_LEN, "%g is out of range [%g, %g]", x, min, max);
        return CN_INVAL;
    }
    *out = x;
    return CN_OK;
}

static int bench_settings_str(const struct bench_term *v, char *out, size_t outlen,
                              char err[CN_ERR_LEN])
{
    int rc = bench_term_text(v, out, outlen);
    if (rc == CN_TOOBIG)
        snprintf(err, CN_ERR_LEN, "text longer than %zu bytes", outlen - 1);
    else if (rc != CN_OK)
        return bench_settings_bad(err, v, "a string");
    return rc;
}

static int bench_settings_bool(const struct bench_term *v, int *out, char err[CN_ERR_LEN])
{
    char text[16];
    if (v->type == BENCH_TERM_INT && (v->i == 0 || v->i == 1)) {
        *out = (int)v->i;
        return CN_OK;
    }
    if (bench_term_text(v, text, sizeof(text)) != CN_OK ||
        cn_config_parse_bool(text, out) != CN_OK)
        return bench_settings_bad(err, v, "true or false");
    return CN_OK;
}

static int bench_set_mode(struct bench_settings *s, const struct bench_term *v,
                          char err[CN_ERR_LEN])
{
    if (bench_term_is_atom(v, "max")) {
        s->mode_max = 1;
        return CN_OK;
    }
    if (bench_term_is_tuple(v, 2) && bench_term_is_atom(v->items[0], "rate")) {
        if (bench_term_is_atom(v->items[1], "max")) {
            s->mode_max = 1;
            return CN_OK;
        }
        if (bench_settings_num(v->items[1], 1e-6, 1e7, &s->rate, err) != CN_OK)
            return CN_INVAL;
        s->mode_max = 0;
        return CN_OK;
    }
    return bench_settings_bad(err, v, "max or {rate, N}");
}

static int bench_set_duration(struct bench_settings *s, const struct bench_term *v,
                              char err[CN_ERR_LEN])
{
    int64_t ms;
    if ((v->type == BENCH_TERM_STRING || v->type == BENCH_TERM_ATOM) &&
        cn_config_parse_msec(v->s, &ms) == CN_OK && strpbrk(v->s, "smh") != NULL) {
        s->duration_s = (double)ms / 1000.0;    /* "30s" from a flag */
        return CN_OK;
    }
    double minutes;
    if (bench_settings_num(v, 0, 1e7, &minutes, err) != CN_OK)
        return CN_INVAL;
    s->duration_s = minutes * 60.0;
    return CN_OK;
}

static int bench_set_duration_s(struct bench_settings *s, const struct bench_term *v,
                                char err[CN_ERR_LEN])
{
    return bench_settings_num(v, 0, 1e9, &s->duration_s, err);
}

static int bench_set_concurrent(struct bench_settings *s, const struct bench_term *v,
                                char err[CN_ERR_LEN])
{
    int64_t x;
    if (bench_settings_int(v, 1, 100000, &x, err) != CN_OK)
        return CN_INVAL;
    s->concurrent = (int)x;
    return CN_OK;
}

/* get, put (insert, update, write), delete, head, list, range_get. */
static int bench_settings_op_kind(const char *name, enum bench_op_kind *kind)
{
    static const struct {
        const char *name;
        enum bench_op_kind kind;
    } names[] = {
        {"get", BENCH_OP_GET},       {"read", BENCH_OP_GET},
        {"put", BENCH_OP_PUT},       {"insert", BENCH_OP_PUT},
        {"update", BENCH_OP_PUT},    {"write", BENCH_OP_PUT},
        {"delete", BENCH_OP_DELETE}, {"head", BENCH_OP_HEAD},
        {"list", BENCH_OP_LIST},     {"range_get", BENCH_OP_RANGE_GET},
        {"get_range", BENCH_OP_RANGE_GET},
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(names); i++)
        if (strcmp(name, names[i].name) == 0) {
            *kind = names[i].kind;
            return CN_OK;
        }
    return CN_NOTFOUND;
}

/* One {Op, Weight} or {{Op, Label}, Weight}. */
static int bench_settings_op(struct bench_op_spec *op, const struct bench_term *v,
                             char err[CN_ERR_LEN])
{
    if (!bench_term_is_tuple(v, 2))
        return bench_settings_bad(err, v, "{Op, Weight}");
    const struct bench_term *name = v->items[0], *label = v->items[0];
    if (bench_term_is_tuple(name, 2)) {
        label = name->items[1];
        name = name->items[0];
    }
    if (name->type != BENCH_TERM_ATOM || label->type != BENCH_TERM_ATOM)
        return bench_settings_bad(err, v, "{Op, Weight} with Op an atom");
    if (bench_settings_op_kind(name->s, &op->kind) != CN_OK) {
        snprintf(err, CN_ERR_LEN,
                 "unknown operation '%s' (get, put, delete, head, list, range_get)", name->s);
        return CN_INVAL;
    }
    if (label->len == 0 || label->len >= sizeof(op->label) || strchr(label->s, '/') != NULL)
        return bench_settings_bad(err, label, "a short label usable as a file name");
    memcpy(op->label, label->s, label->len + 1);
    int64_t w;
    if (bench_settings_int(v->items[1], 0, 1000000, &w, err) != CN_OK)
        return CN_INVAL;
    op->weight = (uint32_t)w;
    return CN_OK;
}

static int bench_set_operations(struct bench_settings *s, const struct bench_term *v,
                                char err[CN_ERR_LEN])
{
    if (v->type != BENCH_TERM_LIST || v->len == 0)
        return bench_settings_bad(err, v, "a non-empty list of {Op, Weight}");
    if (v->len > BENCH_OPS_MAX) {
        snprintf(err, CN_ERR_LEN, "more than %d operations", BENCH_OPS_MAX);
        return CN_INVAL;
    }
    struct bench_op_spec ops[BENCH_OPS_MAX];
    uint64_t total = 0;
    for (size_t i = 0; i < v->len; i++) {
        if (bench_settings_op(&ops[i], v->items[i], err) != CN_OK)
            return CN_INVAL;
        for (size_t j = 0; j < i; j++)
            if (strcmp(ops[j].label, ops[i].label) == 0) {
                snprintf(err, CN_ERR_LEN, "operation '%s' listed twice", ops[i].label);
                return CN_INVAL;
            }
        total += ops[i].weight;
    }
    if (total == 0) {
        snprintf(err, CN_ERR_LEN, "operation weights add up to 0");
        return CN_INVAL;
    }
    memcpy(s->ops, ops, v->len * sizeof(ops[0]));
    s->nops = v->len;
    return CN_OK;
}

static int bench_set_key_generator(struct bench_settings *s, const struct bench_term *v,
                                   char err[CN_ERR_LEN])
{
    static const struct {
        const char *name;
        enum bench_keygen_kind kind;
        int64_t default_start;
    } kinds[] = {
        {"uniform_int", BENCH_KEYGEN_UNIFORM, 1},
        {"sequential_int", BENCH_KEYGEN_SEQUENTIAL, 0},
        {"partitioned_sequential_int", BENCH_KEYGEN_PARTITIONED, 0},
        {"pareto_int", BENCH_KEYGEN_PARETO, 0},
    };
    /* keys always travel as decimal text in the URL, so basho's int_to_str
     * and int_to_bin wrappers change nothing here */
    while (bench_term_is_tuple(v, 2) && v->items[0]->type == BENCH_TERM_ATOM &&
           strncmp(v->items[0]->s, "int_to_", 7) == 0 && v->items[1]->type == BENCH_TERM_TUPLE)
        v = v->items[1];
    if (v->type != BENCH_TERM_TUPLE || (v->len != 2 && v->len != 3) ||
        v->items[0]->type != BENCH_TERM_ATOM)
        return bench_settings_bad(err, v, "{uniform_int, N} or another key generator");
    for (size_t i = 0; i < CN_ARRAY_LEN(kinds); i++) {
        if (strcmp(v->items[0]->s, kinds[i].name) != 0)
            continue;
        if (v->len == 3 && kinds[i].kind != BENCH_KEYGEN_UNIFORM &&
            kinds[i].kind != BENCH_KEYGEN_PARTITIONED)
            return bench_settings_bad(err, v, "a 2-tuple");
        int64_t start = kinds[i].default_start, n;
        if (v->len == 3 &&
            bench_settings_int(v->items[1], 0, INT64_MAX / 4, &start, err) != CN_OK)
            return CN_INVAL;
        if (bench_settings_int(v->items[v->len - 1], 1, INT64_MAX / 4, &n, err) != CN_OK)
            return CN_INVAL;
        s->keygen.kind = kinds[i].kind;
        s->keygen.start = start;
        s->keygen.n = n;
        return CN_OK;
    }
    snprintf(err, CN_ERR_LEN, "unknown key generator '%s' (uniform_int, sequential_int, "
             "partitioned_sequential_int, pareto_int)", v->items[0]->s);
    return CN_INVAL;
}

#define BENCH_VALUE_MAX (INT64_C(1) << 44)

/* [{Weight, Min, Max}, ...] */
static int bench_set_value_size_groups(struct bench_settings *s, const struct bench_term *v,
                                       char err[CN_ERR_LEN])
{
    if (v->type != BENCH_TERM_LIST || v->len == 0 || v->len > BENCH_SIZE_GROUPS_MAX)
        return bench_settings_bad(err, v, "a list of 1 to 32 {Weight, Min, Max}");
    struct bench_valgen_spec g = {0};
    uint64_t total = 0;
    for (size_t i = 0; i < v->len; i++) {
        const struct bench_term *t = v->items[i];
        int64_t w;
        if (!bench_term_is_tuple(t, 3))
            return bench_settings_bad(err, t, "{Weight, Min, Max}");
        if (bench_settings_int(t->items[0], 0, 1000000, &w, err) != CN_OK ||
            bench_settings_int(t->items[1], 0, BENCH_VALUE_MAX, &g.groups[i].min, err) != CN_OK ||
            bench_settings_int(t->items[2], g.groups[i].min, BENCH_VALUE_MAX, &g.groups[i].max,
                               err) != CN_OK)
            return CN_INVAL;
        g.groups[i].weight = (uint32_t)w;
        total += (uint64_t)w;
    }
    if (total == 0) {
        snprintf(err, CN_ERR_LEN, "size group weights add up to 0");
        return CN_INVAL;
    }
    g.ngroups = v->len;
    s->valgen = g;
    return CN_OK;
}

static int bench_set_value_generator(struct bench_settings *s, const struct bench_term *v,
                                     char err[CN_ERR_LEN])
{
    struct bench_valgen_spec g = {0};
    g.ngroups = 1;
    g.groups[0].weight = 1;
    if (bench_term_is_tuple(v, 2) && bench_term_is_atom(v->items[0], "fixed_bin")) {
        if (bench_settings_int(v->items[1], 0, BENCH_VALUE_MAX, &g.groups[0].min, err) != CN_OK)
            return CN_INVAL;
        g.groups[0].max = g.groups[0].min;
    } else if (bench_term_is_tuple(v, 3) && bench_term_is_atom(v->items[0], "uniform_bin")) {
        if (bench_settings_int(v->items[1], 0, BENCH_VALUE_MAX, &g.groups[0].min, err) != CN_OK ||
            bench_settings_int(v->items[2], g.groups[0].min, BENCH_VALUE_MAX, &g.groups[0].max,
                               err) != CN_OK)
            return CN_INVAL;
    } else if (bench_term_is_tuple(v, 3) && bench_term_is_atom(v->items[0], "exponential_bin")) {
        if (bench_settings_int(v->items[1], 0, BENCH_VALUE_MAX, &g.groups[0].min, err) != CN_OK ||
            bench_settings_int(v->items[2], 1, BENCH_VALUE_MAX, &g.exp_mean, err) != CN_OK)
            return CN_INVAL;
        g.groups[0].max = BENCH_VALUE_MAX;
    } else if (bench_term_is_tuple(v, 2) && bench_term_is_atom(v->items[0], "value_size_groups")) {
        return bench_set_value_size_groups(s, v->items[1], err);
    } else {
        return bench_settings_bad(err, v, "{fixed_bin, N}, {uniform_bin, Min, Max}, "
                                          "{exponential_bin, Min, Mean} or {value_size_groups, L}");
    }
    s->valgen = g;
    return CN_OK;
}

static int bench_set_report_interval(struct bench_settings *s, const struct bench_term *v,
                                     char err[CN_ERR_LEN])
{
    return bench_settings_num(v, 0.01, 86400, &s->report_interval_s, err);
}

/* One "host" or "host:port" (a flag may give several, comma-separated). */
static int bench_settings_add_ip(struct bench_settings *s, const char *text,
                                 char err[CN_ERR_LEN])
{
    size_t n = strlen(text);
    if (n == 0 || n >= sizeof(s->ips[0]) || strpbrk(text, "/ ?#@") != NULL) {
        snprintf(err, CN_ERR_LEN, "bad host '%s'", text);
        return CN_INVAL;
    }
    if (s->nips == BENCH_IPS_MAX) {
        snprintf(err, CN_ERR_LEN, "more than %d hosts", BENCH_IPS_MAX);
        return CN_INVAL;
    }
    memcpy(s->ips[s->nips++], text, n + 1);
    return CN_OK;
}

static int bench_set_ips(struct bench_settings *s, const struct bench_term *v,
                         char err[CN_ERR_LEN])
{
    char text[1024];
    s->nips = 0;
    if (v->type == BENCH_TERM_LIST && bench_term_text(v, text, sizeof(text)) != CN_OK) {
        for (size_t i = 0; i < v->len; i++) {
            char one[128];
            if (bench_settings_str(v->items[i], one, sizeof(one), err) != CN_OK ||
                bench_settings_add_ip(s, one, err) != CN_OK)
                return CN_INVAL;
        }
    } else {
        if (bench_settings_str(v, text, sizeof(text), err) != CN_OK)
            return CN_INVAL;
        for (char *save = NULL, *tok = strtok_r(text, ",", &save); tok != NULL;
             tok = strtok_r(NULL, ",", &save))
            if (bench_settings_add_ip(s, tok, err) != CN_OK)
                return CN_INVAL;
    }
    if (s->nips == 0) {
        snprintf(err, CN_ERR_LEN, "no host given");
        return CN_INVAL;
    }
    return CN_OK;
}

static int bench_set_port(struct bench_settings *s, const struct bench_term *v,
                          char err[CN_ERR_LEN])
{
    int64_t x;
    if (bench_settings_int(v, 1, 65535, &x, err) != CN_OK)
        return CN_INVAL;
    s->port = (int)x;
    return CN_OK;
}

static int bench_set_path(struct bench_settings *s, const struct bench_term *v,
                          char err[CN_ERR_LEN])
{
    char text[sizeof(s->path) - 1];
    if (bench_settings_str(v, text, sizeof(text), err) != CN_OK)
        return CN_INVAL;
    if (strpbrk(text, " ?#\r\n") != NULL)
        return bench_settings_bad(err, v, "a URL path without spaces, '?' or '#'");
    size_t n = strlen(text);
    while (n > 0 && text[n - 1] == '/')
        text[--n] = '\0';
    snprintf(s->path, sizeof(s->path), "%s%s", text[0] == '/' || n == 0 ? "" : "/", text);
    return CN_OK;
}

static int bench_set_timeout(struct bench_settings *s, const struct bench_term *v,
                             char err[CN_ERR_LEN])
{
    return bench_settings_int(v, 0, INT64_C(86400000) * 365, &s->request_timeout_ms, err);
}

#define BENCH_SET_TEXT(fn, field)                                                     \
    static int fn(struct bench_settings *s, const struct bench_term *v,               \
                  char err[CN_ERR_LEN])                                               \
    {                                                                                 \
        return bench_settings_str(v, s->field, sizeof(s->field), err);                \
    }

BENCH_SET_TEXT(bench_set_test_dir, test_dir)
BENCH_SET_TEXT(bench_set_out_dir, out_dir)
BENCH_SET_TEXT(bench_set_json, json_path)
BENCH_SET_TEXT(bench_set_access_key, access_key)
BENCH_SET_TEXT(bench_set_secret_key, secret_key)
BENCH_SET_TEXT(bench_set_session_token, session_token)
BENCH_SET_TEXT(bench_set_region, region)
BENCH_SET_TEXT(bench_set_ca_cert, ca_cert)

/* http[s]://host:port[/path] sets http_raw_ips, http_raw_port (default 80
 * or 443), https and, when a path is given, http_raw_path. */
static int bench_set_endpoint(struct bench_settings *s, const struct bench_term *v,
                              char err[CN_ERR_LEN])
{
    char text[1024];
    if (bench_settings_str(v, text, sizeof(text), err) != CN_OK)
        return CN_INVAL;
    const char *p = text;
    int https = 0;
    if (strncmp(p, "http://", 7) == 0)
        p += 7;
    else if (strncmp(p, "https://", 8) == 0)
        p += 8, https = 1;
    else if (strstr(p, "://") != NULL)
        return bench_settings_bad(err, v, "an http:// or https:// URL");
    char host[128];
    size_t hl = strcspn(p, ":/");
    if (hl == 0 || hl >= sizeof(host))
        return bench_settings_bad(err, v, "http://host:port");
    memcpy(host, p, hl);
    host[hl] = '\0';
    p += hl;
    int port = https ? 443 : 80;
    if (*p == ':') {
        char *end;
        long x = strtol(p + 1, &end, 10);
        if (end == p + 1 || x < 1 || x > 65535)
            return bench_settings_bad(err, v, "http://host:port with a valid port");
        port = (int)x;
        p = end;
    }
    if (*p != '\0' && *p != '/')
        return bench_settings_bad(err, v, "http://host:port[/path]");
    s->nips = 0;
    if (bench_settings_add_ip(s, host, err) != CN_OK)
        return CN_INVAL;
    s->port = port;
    s->https = https;
    if (*p == '/' && p[1] != '\0') {
        struct bench_term pt = {.type = BENCH_TERM_STRING, .s = p, .len = strlen(p)};
        return bench_set_path(s, &pt, err);
    }
    return CN_OK;
}

static int bench_set_https(struct bench_settings *s, const struct bench_term *v,
                           char err[CN_ERR_LEN])
{
    return bench_settings_bool(v, &s->https, err);
}

static int bench_set_integrity(struct bench_settings *s, const struct bench_term *v,
                               char err[CN_ERR_LEN])
{
    return bench_settings_bool(v, &s->integrity, err);
}

static int bench_set_not_found_ok(struct bench_settings *s, const struct bench_term *v,
                                  char err[CN_ERR_LEN])
{
    return bench_settings_bool(v, &s->not_found_ok, err);
}

static int bench_set_plot(struct bench_settings *s, const struct bench_term *v,
                          char err[CN_ERR_LEN])
{
    return bench_settings_bool(v, &s->plot, err);
}

static int bench_set_create_bucket(struct bench_settings *s, const struct bench_term *v,
                                   char err[CN_ERR_LEN])
{
    return bench_settings_bool(v, &s->create_bucket, err);
}

static int bench_set_progress(struct bench_settings *s, const struct bench_term *v,
                              char err[CN_ERR_LEN])
{
    if (bench_term_is_atom(v, "auto")) {
        s->progress = -1;
        return CN_OK;
    }
    return bench_settings_bool(v, &s->progress, err);
}

static int bench_set_range_len(struct bench_settings *s, const struct bench_term *v,
                               char err[CN_ERR_LEN])
{
    return bench_settings_int(v, 1, BENCH_VALUE_MAX, &s->range_len, err);
}

static int bench_set_recv_rate(struct bench_settings *s, const struct bench_term *v,
                               char err[CN_ERR_LEN])
{
    return bench_settings_int(v, 0, INT64_MAX / 2, &s->recv_rate, err);
}

static int bench_set_list_max_keys(struct bench_settings *s, const struct bench_term *v,
                                   char err[CN_ERR_LEN])
{
    int64_t x;
    if (bench_settings_int(v, 1, 1000000, &x, err) != CN_OK)
        return CN_INVAL;
    s->list_max_keys = (int)x;
    return CN_OK;
}

static int bench_set_threads(struct bench_settings *s, const struct bench_term *v,
                             char err[CN_ERR_LEN])
{
    int64_t x;
    if (bench_settings_int(v, 1, 256, &x, err) != CN_OK)
        return CN_INVAL;
    s->threads = (int)x;
    return CN_OK;
}

static int bench_set_seed(struct bench_settings *s, const struct bench_term *v,
                          char err[CN_ERR_LEN])
{
    int64_t x;
    if (bench_settings_int(v, 0, INT64_MAX, &x, err) != CN_OK)
        return CN_INVAL;
    s->seed = (uint64_t)x;
    return CN_OK;
}

static const struct bench_setting_desc bench_settings_table[] = {
    {"mode", bench_set_mode, 0, "max|{rate,N}",
     "max: each worker starts its next request at once; {rate,N}: N per worker per s "
     "(Poisson arrivals)"},
    {"duration", bench_set_duration, 0, "MINUTES",
     "run length in minutes (a flag also takes 30s, 500ms, 2m)"},
    {"duration_s", bench_set_duration_s, 0, "SECONDS", "run length in seconds (overrides)"},
    {"concurrent", bench_set_concurrent, 0, "K", "workers, each with one connection"},
    {"operations", bench_set_operations, 0, "[{Op,W},...]",
     "weighted mix of get, put, delete, head, list, range_get ({{Op,Label},W} names the CSV)"},
    {"key_generator", bench_set_key_generator, 0, "{uniform_int,N}",
     "uniform_int, sequential_int, partitioned_sequential_int, pareto_int"},
    {"value_generator", bench_set_value_generator, 0, "{fixed_bin,N}",
     "PUT body size: {fixed_bin,N}, {uniform_bin,Min,Max}, {exponential_bin,Min,Mean}"},
    {"value_size_groups", bench_set_value_size_groups, 0, "[{W,Min,Max},...]",
     "PUT body size drawn from weighted uniform ranges"},
    {"report_interval", bench_set_report_interval, 0, "SECONDS", "CSV window length"},
    {"http_raw_ips", bench_set_ips, 1, "[\"host\",...]",
     "servers; workers are spread over them round robin (a flag: comma-separated)"},
    {"http_raw_port", bench_set_port, 0, "PORT", "server port"},
    {"http_raw_path", bench_set_path, 1, "\"/bucket\"", "path before the key: PATH/KEY"},
    {"http_raw_request_timeout", bench_set_timeout, 0, "MS",
     "whole-request timeout in ms (0: none)"},
    {"test_dir", bench_set_test_dir, 1, "DIR",
     "results go to DIR/<timestamp>/ with DIR/current linked to it"},
    {"out", bench_set_out_dir, 1, "DIR", "results straight into DIR (no timestamp, no link)"},
    {"json", bench_set_json, 1, "FILE", "also write the final summary JSON here (- = stdout)"},
    {"endpoint", bench_set_endpoint, 1, "http[s]://host:port[/path]",
     "shorthand for http_raw_ips, http_raw_port, http_raw_path and https (env AWS_ENDPOINT_URL)"},
    {"https", bench_set_https, 0, "true|false", "TLS toward the servers (an https endpoint)"},
    {"ca_cert", bench_set_ca_cert, 1, "FILE",
     "PEM CA bundle that verifies an https server (env AWS_CA_BUNDLE; default: the system's)"},
    {"access_key", bench_set_access_key, 1, "KEY",
     "SigV4 access key (env AWS_ACCESS_KEY_ID); none: requests are unsigned"},
    {"secret_key", bench_set_secret_key, 1, "SECRET", "SigV4 secret (env AWS_SECRET_ACCESS_KEY)"},
    {"session_token", bench_set_session_token, 1, "TOKEN",
     "x-amz-security-token (env AWS_SESSION_TOKEN)"},
    {"region", bench_set_region, 1, "REGION", "SigV4 region (env AWS_REGION)"},
    {"integrity", bench_set_integrity, 0, "true|false",
     "keep the MD5 of each PUT, check every GET (and range_get bytes) against it"},
    {"range_len", bench_set_range_len, 0, "BYTES", "length of each range_get (64K, 1M, ...)"},
    {"list_max_keys", bench_set_list_max_keys, 0, "N", "max-keys of each list request"},
    {"recv_rate", bench_set_recv_rate, 0, "BYTES/S",
     "receive limit per connection to play slow clients (100M, 300M; 0: none)"},
    {"threads", bench_set_threads, 0, "N", "event-loop threads sharing the workers"},
    {"seed", bench_set_seed, 0, "N", "random seed (keys, sizes, bodies, op choice)"},
    {"not_found_ok", bench_set_not_found_ok, 0, "true|false",
     "404 on get/head/delete/range_get counts as success, as in basho_bench http_raw"},
    {"progress", bench_set_progress, 0, "auto|true|false", "live one-line progress display"},
    {"plot", bench_set_plot, 0, "true|false", "draw summary.png with gnuplot"},
    {"create_bucket", bench_set_create_bucket, 0, "true|false",
     "before a run with put: PUT /BUCKET (first segment of http_raw_path); off for plain HTTP"},
    {NULL, NULL, 0, NULL, NULL},
};

/* basho_bench keys that mean nothing to an HTTP driver that is built in. */
static const char *const bench_settings_ignored[] = {
    "driver", "code_paths", "log_level", "value_generator_source_size",
    "disable_sequential_int_progress_report", "shutdown_on_error", "pre_hook", "post_hook",
    "http_raw_params", "http_raw_disconnect_frequency", "measurement_driver",
    "key_generator_source", "random_algorithm", "random_seed", "stats", NULL,
};

static const struct bench_setting_desc *bench_settings_find(const char *key)
{
    for (const struct bench_setting_desc *d = bench_settings_table; d->key != NULL; d++)
        if (strcmp(d->key, key) == 0)
            return d;
    return NULL;
}

void bench_settings_init(struct bench_settings *s)
{
    memset(s, 0, sizeof(*s));
    s->mode_max = 1;
    s->rate = 1;
    s->duration_s = 300;            /* basho_bench: {duration, 5} */
    s->concurrent = 3;              /* basho_bench default */
    snprintf(s->ops[0].label, sizeof(s->ops[0].label), "get");
    s->ops[0].kind = BENCH_OP_GET;
    s->ops[0].weight = 1;
    s->nops = 1;
    s->keygen.kind = BENCH_KEYGEN_UNIFORM;
    s->keygen.start = 1;
    s->keygen.n = 100000;
    s->valgen.ngroups = 1;
    s->valgen.groups[0].weight = 1;
    s->valgen.groups[0].min = s->valgen.groups[0].max = 100;
    s->report_interval_s = 10;
    snprintf(s->ips[0], sizeof(s->ips[0]), "localhost");
    s->nips = 1;
    s->port = 8098;                 /* basho_bench http_raw default */
    snprintf(s->path, sizeof(s->path), "/riak/test");
    s->request_timeout_ms = 5000;
    snprintf(s->test_dir, sizeof(s->test_dir), "tests");
    snprintf(s->region, sizeof(s->region), "us-east-1");
    s->range_len = 0;
    s->list_max_keys = 1000;
    s->threads = 1;
    s->seed = 42;
    s->not_found_ok = 1;
    s->progress = -1;
    s->plot = 1;
    s->create_bucket = 1;
}

int bench_settings_apply_env(struct bench_settings *s, char err[CN_ERR_LEN])
{
    static const struct {
        const char *var;
        bench_settings_apply_fn fn;
    } vars[] = {
        {"AWS_ACCESS_KEY_ID", bench_set_access_key},
        {"AWS_SECRET_ACCESS_KEY", bench_set_secret_key},
        {"AWS_SESSION_TOKEN", bench_set_session_token},
        {"AWS_DEFAULT_REGION", bench_set_region},
        {"AWS_REGION", bench_set_region},
        {"AWS_ENDPOINT_URL", bench_set_endpoint},
        {"AWS_CA_BUNDLE", bench_set_ca_cert},
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(vars); i++) {
        const char *val = getenv(vars[i].var);
        if (val == NULL || *val == '\0')
            continue;
        struct bench_term t = {.type = BENCH_TERM_STRING, .s = val, .len = strlen(val)};
        char why[CN_ERR_LEN];
        if (vars[i].fn(s, &t, why) != CN_OK) {
            snprintf(err, CN_ERR_LEN, "environment %s: %s", vars[i].var, why);
            return CN_INVAL;
        }
    }
    return CN_OK;
}

int bench_settings_apply(struct bench_settings *s, const char *key,
                         const struct bench_term *value, bench_settings_warn_cb warn,
                         void *warn_arg, char err[CN_ERR_LEN])
{
    const struct bench_setting_desc *d = bench_settings_find(key);
    char msg[CN_ERR_LEN + 64];
    if (d == NULL) {
        int ignored = 0;
        for (const char *const *k = bench_settings_ignored; *k != NULL; k++)
            ignored |= strcmp(*k, key) == 0;
        snprintf(msg, sizeof(msg), "line %d: %s key '%s' ignored", value->line,
                 ignored ? "basho_bench-only" : "unknown", key);
        if (warn != NULL)
            warn(warn_arg, msg);
        return CN_OK;
    }
    char why[CN_ERR_LEN];
    if (d->apply(s, value, why) != CN_OK) {
        snprintf(err, CN_ERR_LEN, "%s: %s", key, why);
        return CN_INVAL;
    }
    return CN_OK;
}

int bench_settings_apply_doc(struct bench_settings *s, const struct bench_term_doc *doc,
                             const char *origin, bench_settings_warn_cb warn,
                             void *warn_arg, char err[CN_ERR_LEN])
{
    char why[CN_ERR_LEN];
    for (size_t i = 0; i < doc->nterms; i++) {
        const struct bench_term *t = doc->terms[i];
        if (!bench_term_is_tuple(t, 2) || t->items[0]->type != BENCH_TERM_ATOM) {
            snprintf(err, CN_ERR_LEN, "%s: line %d, column %d: expected {Key, Value}.", origin,
                     t->line, t->col);
            return CN_INVAL;
        }
        if (bench_settings_apply(s, t->items[0]->s, t->items[1], warn, warn_arg, why) != CN_OK) {
            snprintf(err, CN_ERR_LEN, "%s: line %d, column %d: %s", origin, t->items[1]->line,
                     t->items[1]->col, why);
            return CN_INVAL;
        }
    }
    return CN_OK;
}

/* Reads a whole file into a new buffer (cn_free it); at most the parser's
 * input limit. */
static int bench_settings_read_file(const char *path, char **buf, size_t *len,
                                    char err[CN_ERR_LEN])
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, CN_ERR_LEN, "%s: %s", path, strerror(errno));
        return CN_IO;
    }
    size_t cap = 4096, n = 0;
    char *b = cn_malloc(cap);
    for (;;) {
        if (n == cap) {
            if (cap > BENCH_TERM_MAX_INPUT) {
                fclose(f);
                cn_free(b);
                snprintf(err, CN_ERR_LEN, "%s: larger than %u bytes", path,
                         BENCH_TERM_MAX_INPUT);
                return CN_TOOBIG;
            }
            cap *= 2;
            b = cn_realloc(b, cap);
        }
        size_t got = fread(b + n, 1, cap - n, f);
        if (got == 0)
            break;
        n += got;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        cn_free(b);
        snprintf(err, CN_ERR_LEN, "%s: read error", path);
        return CN_IO;
    }
    *buf = b;
    *len = n;
    return CN_OK;
}

int bench_settings_load_file(struct bench_settings *s, const char *path,
                             bench_settings_warn_cb warn, void *warn_arg,
                             char err[CN_ERR_LEN])
{
    char *buf = NULL;
    size_t len = 0;
    int rc = bench_settings_read_file(path, &buf, &len, err);
    if (rc != CN_OK)
        return rc;
    struct bench_term_doc doc;
    char why[CN_ERR_LEN];
    rc = bench_term_parse_doc(buf, len, &doc, why);
    cn_free(buf);
    if (rc != CN_OK) {
        snprintf(err, CN_ERR_LEN, "%s: %s", path, why);
        return rc;
    }
    rc = bench_settings_apply_doc(s, &doc, path, warn, warn_arg, err);
    bench_term_doc_fini(&doc);
    return rc;
}

int bench_settings_apply_text(struct bench_settings *s, const char *key, const char *text,
                              bench_settings_warn_cb warn, void *warn_arg,
                              char err[CN_ERR_LEN])
{
    const struct bench_setting_desc *d = bench_settings_find(key);
    if (d == NULL) {
        snprintf(err, CN_ERR_LEN, "unknown option --%s (see --help)", key);
        return CN_INVAL;
    }
    /* a text setting takes the flag literally unless it is a quoted string
     * or a list; any other setting reads an Erlang term, or failing that
     * the text itself ("64K", "30s") */
    struct bench_term_doc doc;
    char why[CN_ERR_LEN];
    int rc, parsed = bench_term_parse_one(text, strlen(text), &doc, why) == CN_OK;
    if (parsed && d->text && doc.terms[0]->type != BENCH_TERM_STRING &&
        doc.terms[0]->type != BENCH_TERM_LIST) {
        bench_term_doc_fini(&doc);
        parsed = 0;
    }
    if (parsed) {
        rc = bench_settings_apply(s, key, doc.terms[0], warn, warn_arg, why);
        bench_term_doc_fini(&doc);
    } else {
        struct bench_term t = {.type = BENCH_TERM_STRING, .s = text, .len = strlen(text)};
        rc = bench_settings_apply(s, key, &t, warn, warn_arg, why);
    }
    if (rc != CN_OK)
        snprintf(err, CN_ERR_LEN, "--%s %s: %s", key, text, why);
    return rc;
}

void bench_settings_host(const struct bench_settings *s, size_t i, char *out, size_t outlen)
{
    const char *ip = s->ips[i % s->nips];
    if (strchr(ip, ':') != NULL || s->port == 80)
        snprintf(out, outlen, "%s", ip);
    else
        snprintf(out, outlen, "%s:%d", ip, s->port);
}

int bench_settings_has_kind(const struct bench_settings *s, enum bench_op_kind kind)
{
    for (size_t i = 0; i < s->nops; i++)
        if (s->ops[i].kind == kind && s->ops[i].weight > 0)
            return 1;
    return 0;
}

int bench_settings_check(const struct bench_settings *s, char err[CN_ERR_LEN])
{
    if (bench_settings_has_kind(s, BENCH_OP_RANGE_GET) && s->range_len <= 0) {
        snprintf(err, CN_ERR_LEN, "range_get needs {range_len, Bytes}");
        return CN_INVAL;
    }
    if (s->threads > s->concurrent) {
        snprintf(err, CN_ERR_LEN, "threads (%d) is more than concurrent (%d)", s->threads,
                 s->concurrent);
        return CN_INVAL;
    }
    if ((s->access_key[0] != '\0') != (s->secret_key[0] != '\0')) {
        snprintf(err, CN_ERR_LEN, "access_key and secret_key go together");
        return CN_INVAL;
    }
    if (s->keygen.kind == BENCH_KEYGEN_PARTITIONED && s->keygen.n < s->concurrent) {
        snprintf(err, CN_ERR_LEN, "partitioned_sequential_int needs at least one key per "
                 "worker (%lld keys, %d workers)", (long long)s->keygen.n, s->concurrent);
        return CN_INVAL;
    }
    if (s->nips == 0) {
        snprintf(err, CN_ERR_LEN, "no server (http_raw_ips)");
        return CN_INVAL;
    }
    return CN_OK;
}

/* "--a-b=c" -> key "a_b" and value "c" (or the next argument). */
static int bench_settings_flag(const char *arg, char *key, size_t keylen, const char **val)
{
    const char *name = arg + 2;
    size_t n = strcspn(name, "=");
    if (n == 0 || n >= keylen)
        return CN_INVAL;
    for (size_t i = 0; i < n; i++)
        key[i] = name[i] == '-' ? '_' : name[i];
    key[n] = '\0';
    *val = name[n] == '=' ? name + n + 1 : NULL;
    return CN_OK;
}

static void bench_settings_usage(FILE *out, const char *prog)
{
    fprintf(out,
            "usage: %s [CONFIG_FILE] [--config FILE] [--KEY VALUE]... [--dump-config] [--help]\n"
            "\n"
            "Reads a basho_bench config file (Erlang terms: {Key, Value}.) and runs the\n"
            "load it describes against an S3 or plain HTTP server. Every key is also a\n"
            "flag: --concurrent 16 --mode '{rate,50}' --operations '[{get,9},{put,1}]'.\n\n",
            prog);
    bench_settings_help(out);
}

int bench_settings_cli(struct bench_settings *s, int argc, char **argv, FILE *out,
                       bench_settings_warn_cb warn, void *warn_arg, char err[CN_ERR_LEN])
{
    const char *config = NULL;
    int dump = 0;
    char key[64];
    const char *val;
    bench_settings_init(s);
    if (bench_settings_apply_env(s, err) != CN_OK)
        return CN_INVAL;
    /* pass 1: the config file and the actions */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            bench_settings_usage(out, argv[0]);
            return CN_DONE;
        } else if (strcmp(argv[i], "--dump-config") == 0) {
            dump = 1;
        } else if (strcmp(argv[i], "--config") == 0 || strcmp(argv[i], "-c") == 0) {
            if (i + 1 >= argc) {
                snprintf(err, CN_ERR_LEN, "%s needs a file", argv[i]);
                return CN_INVAL;
            }
            config = argv[++i];
        } else if (strncmp(argv[i], "--config=", 9) == 0) {
            config = argv[i] + 9;
        } else if (strncmp(argv[i], "--", 2) == 0) {
            if (strchr(argv[i], '=') == NULL)
                i++;
        } else if (config == NULL) {
            config = argv[i];
        } else {
            snprintf(err, CN_ERR_LEN, "unexpected argument '%s'", argv[i]);
            return CN_INVAL;
        }
    }
    if (config != NULL && bench_settings_load_file(s, config, warn, warn_arg, err) != CN_OK)
        return CN_INVAL;
    /* pass 2: the flags, in order */
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--", 2) != 0 || strcmp(argv[i], "--dump-config") == 0 ||
            strcmp(argv[i], "--config") == 0 || strncmp(argv[i], "--config=", 9) == 0) {
            if (strcmp(argv[i], "--config") == 0)
                i++;
            continue;
        }
        if (bench_settings_flag(argv[i], key, sizeof(key), &val) != CN_OK) {
            snprintf(err, CN_ERR_LEN, "bad option '%s'", argv[i]);
            return CN_INVAL;
        }
        if (val == NULL) {
            if (i + 1 >= argc) {
                snprintf(err, CN_ERR_LEN, "%s needs a value", argv[i]);
                return CN_INVAL;
            }
            val = argv[++i];
        }
        if (bench_settings_apply_text(s, key, val, warn, warn_arg, err) != CN_OK)
            return CN_INVAL;
    }
    if (bench_settings_check(s, err) != CN_OK)
        return CN_INVAL;
    if (dump) {
        bench_settings_dump(s, out);
        return CN_DONE;
    }
    return CN_OK;
}

/* Writes a string as an Erlang string literal. */
static void bench_settings_dump_str(FILE *out, const char *key, const char *v)
{
    struct bench_term t = {.type = BENCH_TERM_STRING, .s = v, .len = strlen(v)};
    char buf[4096];
    bench_term_format(&t, buf, sizeof(buf));
    fprintf(out, "{%s, %s}.\n", key, buf);
}

void bench_settings_dump(const struct bench_settings *s, FILE *out)
{
    static const char *const kg[] = {"uniform_int", "sequential_int",
                                     "partitioned_sequential_int", "pareto_int"};
    if (s->mode_max)
        fprintf(out, "{mode, max}.\n");
    else
        fprintf(out, "{mode, {rate, %.17g}}.\n", s->rate);
    fprintf(out, "{duration_s, %.17g}.\n{concurrent, %d}.\n{operations, [", s->duration_s,
            s->concurrent);
    for (size_t i = 0; i < s->nops; i++)
        fprintf(out, "%s{{%s, '%s'}, %u}", i ? ", " : "", bench_op_kind_str(s->ops[i].kind),
                s->ops[i].label, s->ops[i].weight);
    fprintf(out, "]}.\n");
    if (s->keygen.kind == BENCH_KEYGEN_UNIFORM || s->keygen.kind == BENCH_KEYGEN_PARTITIONED)
        fprintf(out, "{key_generator, {%s, %lld, %lld}}.\n", kg[s->keygen.kind],
                (long long)s->keygen.start, (long long)s->keygen.n);
    else
        fprintf(out, "{key_generator, {%s, %lld}}.\n", kg[s->keygen.kind],
                (long long)s->keygen.n);
    if (s->valgen.exp_mean > 0) {
        fprintf(out, "{value_generator, {exponential_bin, %lld, %lld}}.\n",
                (long long)s->valgen.groups[0].min, (long long)s->valgen.exp_mean);
    } else {
        fprintf(out, "{value_size_groups, [");
        for (size_t i = 0; i < s->valgen.ngroups; i++)
            fprintf(out, "%s{%u, %lld, %lld}", i ? ", " : "", s->valgen.groups[i].weight,
                    (long long)s->valgen.groups[i].min, (long long)s->valgen.groups[i].max);
        fprintf(out, "]}.\n");
    }
    fprintf(out, "{report_interval, %.17g}.\n{http_raw_ips, [", s->report_interval_s);
    for (size_t i = 0; i < s->nips; i++) {
        /* as a string literal: a host name may hold any byte */
        struct bench_term t = {.type = BENCH_TERM_STRING, .s = s->ips[i], .len = strlen(s->ips[i])};
        char buf[4096];
        bench_term_format(&t, buf, sizeof(buf));
        fprintf(out, "%s%s", i ? ", " : "", buf);
    }
    fprintf(out, "]}.\n{http_raw_port, %d}.\n", s->port);
    bench_settings_dump_str(out, "http_raw_path", s->path);
    fprintf(out, "{http_raw_request_timeout, %lld}.\n", (long long)s->request_timeout_ms);
    bench_settings_dump_str(out, "test_dir", s->test_dir);
    bench_settings_dump_str(out, "out", s->out_dir);
    bench_settings_dump_str(out, "json", s->json_path);
    bench_settings_dump_str(out, "access_key", s->access_key);
    bench_settings_dump_str(out, "secret_key", s->secret_key[0] ? "<set>" : "");
    bench_settings_dump_str(out, "session_token", s->session_token[0] ? "<set>" : "");
    bench_settings_dump_str(out, "region", s->region);
    fprintf(out, "{https, %s}.\n", s->https ? "true" : "false");
    bench_settings_dump_str(out, "ca_cert", s->ca_cert);
    fprintf(out,
            "{integrity, %s}.\n{range_len, %lld}.\n{list_max_keys, %d}.\n{recv_rate, %lld}.\n"
            "{threads, %d}.\n{seed, %llu}.\n{not_found_ok, %s}.\n{progress, %s}.\n"
            "{plot, %s}.\n{create_bucket, %s}.\n",
            s->integrity ? "true" : "false", (long long)s->range_len, s->list_max_keys,
            (long long)s->recv_rate, s->threads, (unsigned long long)s->seed,
            s->not_found_ok ? "true" : "false",
            s->progress < 0 ? "auto" : s->progress ? "true" : "false",
            s->plot ? "true" : "false", s->create_bucket ? "true" : "false");
}

void bench_settings_help(FILE *out)
{
    for (const struct bench_setting_desc *d = bench_settings_table; d->key != NULL; d++)
        fprintf(out, "  --%-26s %-24s %s\n", d->key, d->arg, d->doc);
}
