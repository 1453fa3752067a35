/* Unit tests of common/: checksums against published vectors, the settings
 * table (files, environment, bounds, malformed input), the allocator. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/config.h"
#include "cn/crc.h"
#include "cn/test.h"

CN_TEST_GLOBALS;

static void test_crc_vectors(void)
{
    /* RFC 3720 / the "check" values of the CRC catalogue */
    CN_CHECK_EQ_INT(cn_crc32c(0, "123456789", 9), 0xE3069283u);
    CN_CHECK_EQ_INT(cn_crc32(0, "123456789", 9), 0xCBF43926u);
    uint8_t zeros[32] = {0};
    CN_CHECK_EQ_INT(cn_crc32c(0, zeros, 32), 0x8A9136AAu);
    /* streaming in pieces gives the same value */
    uint32_t c = cn_crc32c(0, "1234", 4);
    CN_CHECK_EQ_INT(cn_crc32c(c, "56789", 5), 0xE3069283u);
    CN_CHECK_EQ_INT(cn_crc32c(0, "", 0), 0);
    /* combining the CRCs of two parts gives the whole's, at every split */
    static unsigned char buf[3 * 65536 + 77];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (unsigned char)(i * 2654435761u >> 11);
    uint32_t whole = cn_crc32c(0, buf, sizeof(buf));
    static const size_t cuts[] = {0, 1, 9, 4096, 65536, 65537, 131072, sizeof(buf) - 1,
                                  sizeof(buf)};
    for (size_t k = 0; k < sizeof(cuts) / sizeof(cuts[0]); k++) {
        size_t n = cuts[k];
        CN_CHECK_EQ_INT(cn_crc32c_combine(cn_crc32c(0, buf, n), cn_crc32c(0, buf + n,
                                          sizeof(buf) - n), sizeof(buf) - n), whole);
    }
    CN_CHECK_EQ_INT(cn_crc32c_combine(cn_crc32c(0, "1234", 4), cn_crc32c(0, "56789", 5), 5),
                    0xE3069283u);
    /* block by block with one operator, as the storage node checks a value */
    uint32_t op = cn_crc32c_shift_op(65536), acc = 0;
    for (size_t off = 0; off < sizeof(buf); off += 65536) {
        size_t n = sizeof(buf) - off < 65536 ? sizeof(buf) - off : 65536;
        uint32_t b = cn_crc32c(0, buf + off, n);
        acc = n == 65536 ? cn_crc32c_combine_op(acc, b, op) : cn_crc32c_combine(acc, b, n);
    }
    CN_CHECK_EQ_INT(acc, whole);
    CN_CHECK(cn_crc32c_combine(whole ^ 1, cn_crc32c(0, "x", 1), 1) !=
             cn_crc32c_combine(whole, cn_crc32c(0, "x", 1), 1));
}

struct test_conf {
    int flag;
    int64_t count;
    int64_t size;
    int64_t timeout;
    char *name;
    int mode;
};

static const char *const test_modes[] = {"none", "periodic", "writethrough", NULL};

static const struct cn_config_desc test_tab[] = {
    {"flag", CN_CONF_BOOL, offsetof(struct test_conf, flag), "false", 0, 0, NULL, "a flag"},
    {"count", CN_CONF_INT, offsetof(struct test_conf, count), "4", 1, 64, NULL, "a count"},
    {"large_object.chunked_obj_len", CN_CONF_SIZE, offsetof(struct test_conf, size), "5M", 1,
     INT64_MAX, NULL, "a size"},
    {"timeout", CN_CONF_MSEC, offsetof(struct test_conf, timeout), "5s", 0, 3600000, NULL,
     "a duration"},
    {"name", CN_CONF_STRING, offsetof(struct test_conf, name), "node1", 0, 0, NULL, "a name"},
    {"sync_mode", CN_CONF_ENUM, offsetof(struct test_conf, mode), "periodic", 0, 0, test_modes,
     "an enum"},
    CN_CONFIG_END,
};

static void test_config_defaults_and_file(void)
{
    struct test_conf c;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(cn_config_init(test_tab, &c, err), CN_OK);
    CN_CHECK_EQ_INT(c.size, 5 << 20);
    CN_CHECK_EQ_INT(c.timeout, 5000);
    CN_CHECK_EQ_INT(c.mode, 1);
    CN_CHECK_EQ_STR(c.name, "node1");
    static const char file[] =
        "# comment\n\n  count = 8   # trailing comment\n"
        "large_object.chunked_obj_len = 512K\n% erlang-style comment\n"
        "timeout=250ms\nname = \"with spaces\"\nflag = yes\nsync_mode = writethrough";
    CN_CHECK_EQ_INT(cn_config_load_buf(test_tab, &c, file, sizeof(file) - 1, "t.conf", err), CN_OK);
    CN_CHECK_EQ_INT(c.count, 8);
    CN_CHECK_EQ_INT(c.size, 512 * 1024);
    CN_CHECK_EQ_INT(c.timeout, 250);
    CN_CHECK_EQ_STR(c.name, "with spaces");
    CN_CHECK_EQ_INT(c.flag, 1);
    CN_CHECK_EQ_INT(c.mode, 2);
    cn_config_fini(test_tab, &c);
}

static void test_config_errors_name_the_key(void)
{
    struct test_conf c;
    char err[CN_ERR_LEN];
    cn_config_init(test_tab, &c, err);
    static const struct {
        const char *text;
        const char *want;
    } bad[] = {
        {"count = 100\n", "count"},                 /* out of range */
        {"count = -1\n", "count"},
        {"count = 3x\n", "count"},
        {"large_object.chunked_obj_len = 5Q\n", "large_object.chunked_obj_len"},
        {"large_object.chunked_obj_len = 99999999999999999999T\n", "chunked_obj_len"},
        {"flag = maybe\n", "flag"},
        {"sync_mode = fast\n", "sync_mode"},
        {"nosuchkey = 1\n", "nosuchkey"},
        {"count 4\n", "t.conf:1"},
        {"\n\ntimeout = 5 parsecs\n", "t.conf:3"},
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(bad); i++) {
        err[0] = '\0';
        int rc = cn_config_load_buf(test_tab, &c, bad[i].text, strlen(bad[i].text), "t.conf", err);
        CN_CHECK(rc != CN_OK);
        if (strstr(err, bad[i].want) == NULL)
            fprintf(stderr, "  error '%s' does not name '%s'\n", err, bad[i].want);
        CN_CHECK(strstr(err, bad[i].want) != NULL);
    }
    CN_CHECK_EQ_INT(c.count, 4); /* a refused value leaves the old one */
    cn_config_fini(test_tab, &c);
}

static void test_config_env_and_cli(void)
{
    struct test_conf c;
    char err[CN_ERR_LEN];
    setenv("TESTX_LARGE_OBJECT_CHUNKED_OBJ_LEN", "1M", 1);
    setenv("TESTX_COUNT", "9", 1);
    char a0[] = "prog", a1[] = "--set", a2[] = "count=10", a3[] = "--bogus";
    char *argv[] = {a0, a1, a2, NULL};
    CN_CHECK_EQ_INT(cn_config_cli(test_tab, &c, "prog", "TESTX_", 3, argv, err), CN_OK);
    CN_CHECK_EQ_INT(c.size, 1 << 20);
    CN_CHECK_EQ_INT(c.count, 10); /* --set beats the environment */
    cn_config_fini(test_tab, &c);
    setenv("TESTX_COUNT", "0", 1);
    char *argv2[] = {a0, NULL};
    CN_CHECK(cn_config_cli(test_tab, &c, "prog", "TESTX_", 1, argv2, err) != CN_OK);
    CN_CHECK(strstr(err, "TESTX_COUNT") != NULL);
    cn_config_fini(test_tab, &c);
    unsetenv("TESTX_COUNT");
    unsetenv("TESTX_LARGE_OBJECT_CHUNKED_OBJ_LEN");
    char *argv3[] = {a0, a3, NULL};
    CN_CHECK(cn_config_cli(test_tab, &c, "prog", "TESTX_", 2, argv3, err) != CN_OK);
    cn_config_fini(test_tab, &c);
}

static void test_alloc_counts_and_fails(void)
{
    size_t before = cn_alloc_used();
    char *p = cn_malloc(1000);
    CN_CHECK(cn_alloc_used() >= before + 1000);
    p = cn_realloc(p, 5000);
    CN_CHECK(cn_alloc_used() >= before + 5000);
    cn_free(p);
    CN_CHECK_EQ_INT(cn_alloc_used(), before);
    cn_alloc_fail_after(2);
    void *a = cn_malloc(10), *b = cn_malloc(10), *c = cn_malloc(10);
    CN_CHECK(a != NULL && b == NULL && c != NULL);
    cn_free(a);
    cn_free(c);
}

/* An INT or SIZE key with a named value: "auto" is stored as 0 and written
 * back as "auto"; numbers still pin it within the bounds; 0 itself and
 * other words are refused. */
static const char *const test_auto[] = {"auto", NULL};
static const struct cn_config_desc test_auto_tab[] = {
    {"depth", CN_CONF_INT, offsetof(struct test_conf, count), "auto", 1, 64, test_auto, "d"},
    {"slice", CN_CONF_SIZE, offsetof(struct test_conf, size), "512K", 4096, INT64_MAX,
     test_auto, "s"},
    CN_CONFIG_END,
};

static void test_config_auto(void)
{
    struct test_conf c;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(cn_config_init(test_auto_tab, &c, err), CN_OK);
    CN_CHECK_EQ_INT(c.count, 0);
    CN_CHECK_EQ_INT(c.size, 512 * 1024);
    CN_CHECK_EQ_INT(cn_config_set(test_auto_tab, &c, "slice", "auto", err), CN_OK);
    CN_CHECK_EQ_INT(c.size, 0);
    CN_CHECK_EQ_INT(cn_config_set(test_auto_tab, &c, "depth", "8", err), CN_OK);
    CN_CHECK_EQ_INT(c.count, 8);
    CN_CHECK(cn_config_set(test_auto_tab, &c, "depth", "0", err) != CN_OK);
    CN_CHECK(cn_config_set(test_auto_tab, &c, "depth", "automatic", err) != CN_OK);
    CN_CHECK_EQ_INT(c.count, 8);
    char buf[256] = {0};
    FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
    cn_config_dump(test_auto_tab, &c, f);
    fclose(f);
    CN_CHECK(strstr(buf, "depth = 8") != NULL);
    CN_CHECK(strstr(buf, "slice = auto") != NULL);
}

int main(int argc, char **argv)
{
    static const struct cn_test_case cases[] = {
        {"crc_vectors", test_crc_vectors},
        {"config_defaults_and_file", test_config_defaults_and_file},
        {"config_errors_name_the_key", test_config_errors_name_the_key},
        {"config_env_and_cli", test_config_env_and_cli},
        {"config_auto", test_config_auto},
        {"alloc_counts_and_fails", test_alloc_counts_and_fails},
        {NULL, NULL},
    };
    return cn_test_main(cases, argc, argv);
}
