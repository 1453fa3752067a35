/* cairn-bench settings: one table of descriptors (settings.c) gives every
 * basho_bench config key and every command-line flag (--KEY VALUE, with '-'
 * or '_'), reads them from Erlang terms, and writes --help and
 * --dump-config. Precedence, lowest first: defaults, AWS environment
 * variables, the config file, flags. */
#ifndef BENCH_SETTINGS_H
#define BENCH_SETTINGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cn/rc.h"
#include "term.h"

enum bench_op_kind {
    BENCH_OP_GET,
    BENCH_OP_PUT,
    BENCH_OP_DELETE,
    BENCH_OP_HEAD,
    BENCH_OP_LIST,
    BENCH_OP_RANGE_GET,
};

#define BENCH_OPS_MAX 16
#define BENCH_IPS_MAX 32
#define BENCH_SIZE_GROUPS_MAX 32
#define BENCH_LABEL_LEN 48

struct bench_op_spec {
    char label[BENCH_LABEL_LEN];   /* names <label>_latencies.csv */
    enum bench_op_kind kind;
    uint32_t weight;
};

enum bench_keygen_kind {
    BENCH_KEYGEN_UNIFORM,       /* start .. start+n-1, uniformly */
    BENCH_KEYGEN_SEQUENTIAL,    /* each worker: 0 .. n-1, then stops */
    BENCH_KEYGEN_PARTITIONED,   /* worker i of K: its 1/K of start..start+n-1 */
    BENCH_KEYGEN_PARETO,        /* basho_bench pareto_int: mean n/5, shape 1.5 */
};

struct bench_keygen_spec {
    enum bench_keygen_kind kind;
    int64_t start;
    int64_t n;
};

struct bench_size_group {
    uint32_t weight;
    int64_t min, max;           /* bytes, inclusive */
};

struct bench_valgen_spec {
    struct bench_size_group groups[BENCH_SIZE_GROUPS_MAX];
    size_t ngroups;
    int64_t exp_mean;           /* > 0: exponential_bin, min + Exp(mean) */
};

struct bench_settings {
    /* basho_bench keys */
    int mode_max;               /* {mode, max} */
    double rate;                /* {mode, {rate, N}}: ops per worker per s */
    double duration_s;          /* {duration, Minutes} */
    int concurrent;
    struct bench_op_spec ops[BENCH_OPS_MAX];
    size_t nops;
    struct bench_keygen_spec keygen;
    struct bench_valgen_spec valgen;
    double report_interval_s;
    char ips[BENCH_IPS_MAX][128];
    size_t nips;
    int port;
    char path[512];
    int64_t request_timeout_ms;
    char test_dir[1024];
    /* beyond basho_bench */
    char out_dir[1024];         /* results straight here, no timestamp */
    char json_path[1024];       /* final summary JSON ("-" = stdout) */
    char access_key[256];
    char secret_key[256];
    char session_token[2048];
    char region[64];
    int integrity;
    int64_t range_len;
    int list_max_keys;
    int64_t recv_rate;          /* bytes/s per connection, 0 = unlimited */
    int threads;
    uint64_t seed;
    int not_found_ok;
    int progress;               /* -1 auto (a terminal), 0 off, 1 on */
    int plot;
    int create_bucket;          /* PUT /BUCKET before a run that has put */
    int https;                  /* an https:// endpoint: TLS toward the servers */
    char ca_cert[1024];         /* PEM CA bundle that verifies them; empty: the system's */
};

/* Called with one line for each warning (unknown key, ignored key). */
typedef void (*bench_settings_warn_cb)(void *arg, const char *msg);

/* Defaults: basho_bench's where it has one. */
void bench_settings_init(struct bench_settings *s);

/* Reads AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,
 * AWS_REGION / AWS_DEFAULT_REGION and AWS_ENDPOINT_URL. */
int bench_settings_apply_env(struct bench_settings *s, char err[CN_ERR_LEN]);

/* Applies one {Key, Value}. Unknown and basho-only keys are warned about
 * (not errors); a bad value is an error that names the key and line. */
int bench_settings_apply(struct bench_settings *s, const char *key,
                         const struct bench_term *value, bench_settings_warn_cb warn,
                         void *warn_arg, char err[CN_ERR_LEN]);

/* Applies every {Key, Value}. term of a parsed config file. */
int bench_settings_apply_doc(struct bench_settings *s, const struct bench_term_doc *doc,
                             const char *origin, bench_settings_warn_cb warn,
                             void *warn_arg, char err[CN_ERR_LEN]);

/* Reads and applies a basho_bench config file; syntax errors name the file,
 * line and column. */
int bench_settings_load_file(struct bench_settings *s, const char *path,
                             bench_settings_warn_cb warn, void *warn_arg,
                             char err[CN_ERR_LEN]);

/* Applies a flag's text value: parsed as an Erlang term, or for text
 * settings taken literally when it is not one ("/bucket", "127.0.0.1"). */
int bench_settings_apply_text(struct bench_settings *s, const char *key, const char *text,
                              bench_settings_warn_cb warn, void *warn_arg,
                              char err[CN_ERR_LEN]);

/* Cross-checks after everything is applied (ops present, range length set
 * for range_get, ...). */
int bench_settings_check(const struct bench_settings *s, char err[CN_ERR_LEN]);

/* Command line: [CONFIG_FILE] [--config FILE] [--KEY VALUE | --KEY=VALUE]...
 * [--help] [--dump-config]. Applies defaults, environment, the file, then
 * the flags. Returns CN_OK to run, CN_DONE when --help or --dump-config was
 * served, or an error with err filled. */
int bench_settings_cli(struct bench_settings *s, int argc, char **argv, FILE *out,
                       bench_settings_warn_cb warn, void *warn_arg, char err[CN_ERR_LEN]);

/* Writes the effective settings as a basho_bench config (secrets masked). */
void bench_settings_dump(const struct bench_settings *s, FILE *out);

/* Writes the flag reference (used by --help and docs/bench.md). */
void bench_settings_help(FILE *out);

const char *bench_op_kind_str(enum bench_op_kind kind);

/* 1 when an operation of this kind has a weight above 0. */
int bench_settings_has_kind(const struct bench_settings *s, enum bench_op_kind kind);

/* The Host of server i (round robin over http_raw_ips): "ip:port", or just
 * "ip" when it names its port or the port is 80. */
void bench_settings_host(const struct bench_settings *s, size_t i, char *out, size_t outlen);

#endif
