/* cairn-bench settings: a full basho_bench config, flags, environment,
 * warnings for unknown keys and errors that name the key and line. */
#include "settings.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cn/test.h"

CN_TEST_GLOBALS;

static int warnings;
static char last_warning[512];

static void on_warn(void *arg, const char *msg)
{
    (void)arg;
    warnings++;
    snprintf(last_warning, sizeof(last_warning), "%s", msg);
}

static int apply_text(struct bench_settings *s, const char *cfg, char err[CN_ERR_LEN])
{
    struct bench_term_doc doc;
    int rc = bench_term_parse_doc(cfg, strlen(cfg), &doc, err);
    if (rc != CN_OK)
        return rc;
    rc = bench_settings_apply_doc(s, &doc, "test.config", on_warn, NULL, err);
    bench_term_doc_fini(&doc);
    return rc;
}

static void test_settings_defaults(void)
{
    struct bench_settings s;
    bench_settings_init(&s);
    CN_CHECK(s.mode_max);
    CN_CHECK(s.duration_s == 300);
    CN_CHECK_EQ_INT(s.concurrent, 3);
    CN_CHECK(s.report_interval_s == 10);
    CN_CHECK_EQ_INT(s.port, 8098);
    CN_CHECK_EQ_STR(s.test_dir, "tests");
    CN_CHECK_EQ_INT(s.request_timeout_ms, 5000);
}

static void test_settings_full_config(void)
{
    const char *cfg =
        "{mode, {rate, 20}}.\n"
        "{duration, 2}.\n"
        "{concurrent, 8}.\n"
        "{driver, basho_bench_driver_http_raw}.\n"
        "{operations, [{get, 95}, {update, 4}, {{range_get, rg}, 1}]}.\n"
        "{key_generator, {int_to_str, {partitioned_sequential_int, 100, 1000}}}.\n"
        "{value_size_groups, [{9, 100, 200}, {1, 1000000, 2000000}]}.\n"
        "{report_interval, 5}.\n"
        "{http_raw_ips, [\"10.0.0.1\", \"10.0.0.2:9000\"]}.\n"
        "{http_raw_port, 8080}.\n"
        "{http_raw_path, \"/bucket/\"}.\n"
        "{http_raw_request_timeout, 30000}.\n"
        "{test_dir, \"out\"}.\n"
        "{range_len, 65536}.\n"
        "{integrity, true}.\n"
        "{frobnicate, 1}.\n";
    struct bench_settings s;
    char err[CN_ERR_LEN];
    bench_settings_init(&s);
    warnings = 0;
    CN_CHECK_EQ_INT(apply_text(&s, cfg, err), CN_OK);
    CN_CHECK_EQ_INT(warnings, 2); /* driver (basho-only) and frobnicate (unknown) */
    CN_CHECK(strstr(last_warning, "line 16") != NULL && strstr(last_warning, "frobnicate"));
    CN_CHECK(!s.mode_max && s.rate == 20);
    CN_CHECK(s.duration_s == 120);
    CN_CHECK_EQ_INT(s.concurrent, 8);
    CN_CHECK_EQ_INT(s.nops, 3);
    CN_CHECK_EQ_STR(s.ops[1].label, "update");
    CN_CHECK(s.ops[1].kind == BENCH_OP_PUT && s.ops[1].weight == 4);
    CN_CHECK_EQ_STR(s.ops[2].label, "rg");
    CN_CHECK(s.ops[2].kind == BENCH_OP_RANGE_GET);
    CN_CHECK(s.keygen.kind == BENCH_KEYGEN_PARTITIONED && s.keygen.start == 100 &&
             s.keygen.n == 1000);
    CN_CHECK_EQ_INT(s.valgen.ngroups, 2);
    CN_CHECK_EQ_INT(s.valgen.groups[1].max, 2000000);
    CN_CHECK(s.report_interval_s == 5);
    CN_CHECK_EQ_INT(s.nips, 2);
    CN_CHECK_EQ_STR(s.ips[1], "10.0.0.2:9000");
    CN_CHECK_EQ_INT(s.port, 8080);
    CN_CHECK_EQ_STR(s.path, "/bucket");
    CN_CHECK_EQ_INT(s.request_timeout_ms, 30000);
    CN_CHECK_EQ_STR(s.test_dir, "out");
    CN_CHECK(s.integrity && s.range_len == 65536);
    CN_CHECK_EQ_INT(bench_settings_check(&s, err), CN_OK);
}

static void test_settings_generators(void)
{
    struct bench_settings s;
    char err[CN_ERR_LEN];
    bench_settings_init(&s);
    CN_CHECK_EQ_INT(apply_text(&s, "{key_generator, {uniform_int, 50}}.", err), CN_OK);
    CN_CHECK(s.keygen.kind == BENCH_KEYGEN_UNIFORM && s.keygen.start == 1 && s.keygen.n == 50);
    CN_CHECK_EQ_INT(apply_text(&s, "{key_generator, {sequential_int, 7}}.", err), CN_OK);
    CN_CHECK(s.keygen.kind == BENCH_KEYGEN_SEQUENTIAL && s.keygen.n == 7);
    CN_CHECK_EQ_INT(apply_text(&s, "{key_generator, {pareto_int, 1000}}.", err), CN_OK);
    CN_CHECK(s.keygen.kind == BENCH_KEYGEN_PARETO);
    CN_CHECK_EQ_INT(apply_text(&s, "{value_generator, {fixed_bin, 10000}}.", err), CN_OK);
    CN_CHECK(s.valgen.ngroups == 1 && s.valgen.groups[0].min == 10000 &&
             s.valgen.groups[0].max == 10000);
    CN_CHECK_EQ_INT(apply_text(&s, "{value_generator, {uniform_bin, 10, 20}}.", err), CN_OK);
    CN_CHECK(s.valgen.groups[0].min == 10 && s.valgen.groups[0].max == 20);
    CN_CHECK_EQ_INT(apply_text(&s, "{mode, max}.", err), CN_OK);
    CN_CHECK(s.mode_max);
}

/* A bad value fails, names the file, line, column and key, and leaves the
 * setting as it was. */
static void check_bad(const char *cfg, const char *want)
{
    struct bench_settings s;
    char err[CN_ERR_LEN];
    bench_settings_init(&s);
    int rc = apply_text(&s, cfg, err);
    CN_CHECK_EQ_INT(rc, CN_INVAL);
    if (rc == CN_INVAL && strstr(err, want) == NULL) {
        fprintf(stderr, "  config %s: error '%s' lacks '%s'\n", cfg, err, want);
        cn_test_failed_checks++;
    }
    CN_CHECK_EQ_INT(s.concurrent, 3);
}

static void test_settings_bad_values(void)
{
    check_bad("{concurrent, 0}.", "test.config: line 1, column 14: concurrent: 0 is out of range");
    check_bad("{mode, fast}.", "mode: expected max or {rate, N}, got fast");
    check_bad("\n{operations, [{get, 1}, {fly, 2}]}.", "line 2, column 14: operations: unknown operation 'fly'");
    check_bad("{operations, [{get, 0}]}.", "weights add up to 0");
    check_bad("{operations, [{get, 1}, {get, 2}]}.", "listed twice");
    check_bad("{key_generator, {zipf, 10}}.", "unknown key generator 'zipf'");
    check_bad("{key_generator, {uniform_int, 0}}.", "out of range");
    check_bad("{value_generator, {uniform_bin, 20, 10}}.", "out of range");
    check_bad("{http_raw_port, 70000}.", "http_raw_port: 70000 is out of range");
    check_bad("{http_raw_ips, [\"a b\"]}.", "bad host");
    check_bad("{http_raw_path, 5}.", "expected a string");
    check_bad("{integrity, maybe}.", "expected true or false");
    check_bad("{concurrent, 4, 5}.", "expected {Key, Value}.");
    check_bad("[concurrent].", "expected {Key, Value}.");
    check_bad("{concurrent, 4}", "line 1, column 16: expected '.'");
}

static void test_settings_flags(void)
{
    struct bench_settings s;
    char err[CN_ERR_LEN];
    bench_settings_init(&s);
    CN_CHECK_EQ_INT(bench_settings_apply_text(&s, "concurrent", "12", NULL, NULL, err), CN_OK);
    CN_CHECK_EQ_INT(s.concurrent, 12);
    CN_CHECK_EQ_INT(bench_settings_apply_text(&s, "mode", "{rate,5}", NULL, NULL, err), CN_OK);
    CN_CHECK(!s.mode_max && s.rate == 5);
    CN_CHECK_EQ_INT(bench_settings_apply_text(&s, "http_raw_path", "/b", NULL, NULL, err), CN_OK);
    CN_CHECK_EQ_STR(s.path, "/b");
    CN_CHECK_EQ_INT(bench_settings_apply_text(&s, "http_raw_ips", "127.0.0.1,::x", NULL, NULL,
                                              err), CN_OK);
    CN_CHECK_EQ_INT(s.nips, 2);
    CN_CHECK_EQ_INT(bench_settings_apply_text(&s, "duration", "30s", NULL, NULL, err), CN_OK);
    CN_CHECK(s.duration_s == 30);
    CN_CHECK_EQ_INT(bench_settings_apply_text(&s, "duration", "1.5", NULL, NULL, err), CN_OK);
    CN_CHECK(s.duration_s == 90);
    CN_CHECK_EQ_INT(bench_settings_apply_text(&s, "recv_rate", "100M", NULL, NULL, err), CN_OK);
    CN_CHECK_EQ_INT(s.recv_rate, 100 << 20);
    CN_CHECK_EQ_INT(bench_settings_apply_text(&s, "access_key", "AKIA/X", NULL, NULL, err), CN_OK);
    CN_CHECK_EQ_STR(s.access_key, "AKIA/X");
    CN_CHECK_EQ_INT(bench_settings_apply_text(&s, "endpoint", "http://h:9000/bkt", NULL, NULL,
                                              err), CN_OK);
    CN_CHECK(s.nips == 1 && s.port == 9000);
    CN_CHECK_EQ_STR(s.ips[0], "h");
    CN_CHECK_EQ_STR(s.path, "/bkt");
    CN_CHECK_EQ_INT(bench_settings_apply_text(&s, "operations", "[{get,1},{put,1}]", NULL, NULL,
                                              err), CN_OK);
    CN_CHECK_EQ_INT(s.nops, 2);
    CN_CHECK_EQ_INT(bench_settings_apply_text(&s, "concurrent", "many", NULL, NULL, err),
                    CN_INVAL);
    CN_CHECK(strstr(err, "--concurrent many: concurrent: expected an integer") != NULL);
    CN_CHECK_EQ_INT(bench_settings_apply_text(&s, "nope", "1", NULL, NULL, err), CN_INVAL);
    CN_CHECK(strstr(err, "unknown option --nope") != NULL);
    CN_CHECK(!s.https);
    CN_CHECK_EQ_INT(bench_settings_apply_text(&s, "endpoint", "https://h", NULL, NULL, err),
                    CN_OK);
    CN_CHECK(s.https && s.port == 443);
    CN_CHECK_EQ_INT(bench_settings_apply_text(&s, "endpoint", "http://h:81", NULL, NULL, err),
                    CN_OK);
    CN_CHECK(!s.https && s.port == 81);
    CN_CHECK_EQ_INT(bench_settings_apply_text(&s, "ca_cert", "/x/ca.pem", NULL, NULL, err),
                    CN_OK);
    CN_CHECK_EQ_STR(s.ca_cert, "/x/ca.pem");
    CN_CHECK_EQ_INT(bench_settings_apply_text(&s, "endpoint", "ftp://h", NULL, NULL, err),
                    CN_INVAL);
}

/* bench_settings_cli() over a NULL-terminated list of literal arguments. */
static int run_cli(struct bench_settings *s, FILE *out, char err[CN_ERR_LEN],
                   const char *const *args)
{
    char *argv[16];
    int argc = 0;
    for (; args[argc] != NULL && argc < 15; argc++)
        argv[argc] = strdup(args[argc]);
    argv[argc] = NULL;
    int rc = bench_settings_cli(s, argc, argv, out, on_warn, NULL, err);
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    return rc;
}

static void test_settings_cli(void)
{
    char path[] = "/tmp/test_bench_settings_XXXXXX";
    int fd = mkstemp(path);
    CN_CHECK(fd >= 0);
    const char *cfg = "{concurrent, 4}.\n{duration, 1}.\n{http_raw_port, 81}.\n";
    CN_CHECK_EQ_INT(write(fd, cfg, strlen(cfg)), (long long)strlen(cfg));
    close(fd);
    setenv("AWS_ACCESS_KEY_ID", "envkey", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
    setenv("AWS_REGION", "eu-west-1", 1);
    struct bench_settings s;
    char err[CN_ERR_LEN];
    const char *argv[] = {"cairn-bench", path, "--concurrent", "6", "--duration-s=2.5",
                          "--region", "local", NULL};
    FILE *out = fopen("/dev/null", "w");
    CN_CHECK_EQ_INT(run_cli(&s, out, err, argv), CN_OK);
    CN_CHECK_EQ_INT(s.concurrent, 6);       /* the flag beats the file */
    CN_CHECK(s.duration_s == 2.5);          /* duration_s beats duration */
    CN_CHECK_EQ_INT(s.port, 81);            /* from the file */
    CN_CHECK_EQ_STR(s.access_key, "envkey");
    CN_CHECK_EQ_STR(s.secret_key, "envsecret");
    CN_CHECK_EQ_STR(s.region, "local");
    const char *argv2[] = {"cairn-bench", "--config", path, "--dump-config", NULL};
    char dump[4096] = "";
    FILE *mem = fmemopen(dump, sizeof(dump) - 1, "w");
    CN_CHECK_EQ_INT(run_cli(&s, mem, err, argv2), CN_DONE);
    fclose(mem);
    CN_CHECK(strstr(dump, "{concurrent, 4}.") != NULL);
    CN_CHECK(strstr(dump, "{secret_key, \"<set>\"}.") != NULL);
    CN_CHECK(strstr(dump, "envsecret") == NULL);
    /* the dump is itself a config that reads back the same */
    struct bench_term_doc doc;
    CN_CHECK_EQ_INT(bench_term_parse_doc(dump, strlen(dump), &doc, err), CN_OK);
    bench_term_doc_fini(&doc);
    const char *argv3[] = {"cairn-bench", "--concurrent", NULL};
    CN_CHECK_EQ_INT(run_cli(&s, out, err, argv3), CN_INVAL);
    CN_CHECK(strstr(err, "needs a value") != NULL);
    const char *argv4[] = {"cairn-bench", "--operations", "[{range_get,1}]", NULL};
    CN_CHECK_EQ_INT(run_cli(&s, out, err, argv4), CN_INVAL);
    CN_CHECK(strstr(err, "range_len") != NULL);
    const char *argv5[] = {"cairn-bench", "/nonexistent/x.config", NULL};
    CN_CHECK_EQ_INT(run_cli(&s, out, err, argv5), CN_INVAL);
    CN_CHECK(strstr(err, "/nonexistent/x.config") != NULL);
    const char *argv6[] = {"cairn-bench", "--help", NULL};
    CN_CHECK_EQ_INT(run_cli(&s, out, err, argv6), CN_DONE);
    fclose(out);
    unlink(path);
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    unsetenv("AWS_REGION");
}

static const struct cn_test_case cases[] = {
    {"defaults", test_settings_defaults},
    {"full_config", test_settings_full_config},
    {"generators", test_settings_generators},
    {"bad_values", test_settings_bad_values},
    {"flags", test_settings_flags},
    {"cli", test_settings_cli},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
