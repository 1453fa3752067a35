/* The credentials file format and lookups. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/test.h"
#include "credentials.h"

CN_TEST_GLOBALS;

static void test_parse_and_find(void)
{
    static const char file[] =
        "# comment\n"
        "\n"
        "   # indented comment\n"
        "AKIACAIRNDEV00000000 cairn-dev-secret-key-000000000000000000 cairn-dev cairn\n"
        "AKIAB\tsecret/with+chars= owner2   Display Name Two  \r\n"
        "AKIAA s3cr3t o3 x";
    struct gw_credentials *c = NULL;
    char err[CN_ERR_LEN] = "";
    CN_CHECK_EQ_INT(gw_credentials_load_buf(file, sizeof(file) - 1, "t", &c, err), CN_OK);
    CN_CHECK(c != NULL);
    if (c == NULL)
        return;
    CN_CHECK_EQ_INT(gw_credentials_count(c), 3);
    CN_CHECK_EQ_STR(gw_credentials_at(c, 0)->access_key, "AKIAA"); /* sorted */
    const struct gw_cred *e = gw_credentials_find(c, "AKIACAIRNDEV00000000", 20);
    CN_CHECK(e != NULL);
    if (e != NULL) {
        CN_CHECK_EQ_STR(e->secret_key, "cairn-dev-secret-key-000000000000000000");
        CN_CHECK_EQ_INT(e->secret_key_len, 39);
        CN_CHECK_EQ_STR(e->owner_id, "cairn-dev");
        CN_CHECK_EQ_STR(e->display_name, "cairn");
    }
    e = gw_credentials_find(c, "AKIABxyz", 5); /* not NUL-terminated */
    CN_CHECK(e != NULL && strcmp(e->display_name, "Display Name Two") == 0);
    CN_CHECK(e != NULL && strcmp(e->secret_key, "secret/with+chars=") == 0);
    CN_CHECK(gw_credentials_find(c, "AKIA", 4) == NULL);
    CN_CHECK(gw_credentials_find(c, "AKIAC", 5) == NULL);
    CN_CHECK(gw_credentials_find(c, "", 0) == NULL);
    gw_credentials_free(c);
    gw_credentials_free(NULL);
}

static void expect_bad(const char *text, const char *want_in_err)
{
    struct gw_credentials *c = (struct gw_credentials *)1;
    char err[CN_ERR_LEN] = "";
    CN_CHECK_EQ_INT(gw_credentials_load_buf(text, strlen(text), "f", &c, err), CN_INVAL);
    CN_CHECK(c == NULL);
    if (strstr(err, want_in_err) == NULL)
        fprintf(stderr, "  err \"%s\" lacks \"%s\"\n", err, want_in_err);
    CN_CHECK(strstr(err, want_in_err) != NULL);
}

static void test_errors(void)
{
    expect_bad("", "no credentials");
    expect_bad("# only a comment\n", "no credentials");
    expect_bad("AK1 s o d\nAK1 t o d\n", "duplicate access key AK1");
    expect_bad("AK1 s o\n", "f:1: missing or invalid display name");
    expect_bad("\n\nAK1 s\n", "f:3: missing or invalid owner id");
    expect_bad("A s o d\n", "access key");
    expect_bad("AK1 s o!wner d\n", "owner id");
    expect_bad("AK\x01X s o d\n", "access key");
}

static void test_file(void)
{
    char path[] = "/tmp/gw_cred_testXXXXXX";
    int fd = mkstemp(path);
    CN_CHECK(fd >= 0);
    const char text[] = "AK1 sec own disp\n";
    CN_CHECK(write(fd, text, sizeof(text) - 1) == (ssize_t)(sizeof(text) - 1));
    close(fd);
    struct gw_credentials *c = NULL;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(gw_credentials_load_file(path, &c, err), CN_OK);
    CN_CHECK(c != NULL && gw_credentials_count(c) == 1);
    gw_credentials_free(c);
    unlink(path);
    CN_CHECK_EQ_INT(gw_credentials_load_file("/nonexistent/x", &c, err), CN_IO);
    CN_CHECK(c == NULL && strstr(err, "/nonexistent/x") != NULL);
}

/* The example file shipped for the local cluster parses and holds the
 * documented development pair. */
static void test_shipped_example(void)
{
    /* CMake compiles with absolute paths: the tree is __FILE__ less
     * tests/unit/<this file>; CAIRN_SRC overrides. */
    const char *src = getenv("CAIRN_SRC");
    char path[4096];
    if (src != NULL) {
        snprintf(path, sizeof(path), "%s/deploy/local/credentials.example", src);
    } else {
        const char *f = __FILE__, *cut = strstr(f, "tests/unit/");
        int n = cut != NULL ? (int)(cut - f) : 0;
        snprintf(path, sizeof(path), "%.*sdeploy/local/credentials.example", n, f);
    }
    struct gw_credentials *c = NULL;
    char err[CN_ERR_LEN] = "";
    int rc = gw_credentials_load_file(path, &c, err);
    if (rc != CN_OK)
        fprintf(stderr, "  %s\n", err);
    CN_CHECK_EQ_INT(rc, CN_OK);
    const struct gw_cred *e = c != NULL ? gw_credentials_find(c, "AKIACAIRNDEV00000000", 20)
                                        : NULL;
    CN_CHECK(e != NULL && strcmp(e->secret_key, "cairn-dev-secret-key-000000000000000000") == 0);
    CN_CHECK(e != NULL && strcmp(e->owner_id, "cairn-dev") == 0);
    CN_CHECK(e != NULL && strcmp(e->display_name, "cairn") == 0);
    CN_CHECK(e != NULL && e->admin == 1); /* cairn-admin status on a local cluster */
    gw_credentials_free(c);
}

/* The admin=true attribute: the last word only, never part of the name. */
static void test_admin_attribute(void)
{
    static const char file[] =
        "AKIAADMIN s1 ops Operations admin=true\n"
        "AKIATAB s2 ops2 Two Words\tadmin=true  \n"
        "AKIANOT s3 o3 admin=true\n"              /* the whole name: not the attribute */
        "AKIAMID s4 o4 x admin=true y\n"
        "AKIAGLUED s5 o5 xadmin=true\n";
    struct gw_credentials *c = NULL;
    char err[CN_ERR_LEN] = "";
    CN_CHECK_EQ_INT(gw_credentials_load_buf(file, sizeof(file) - 1, "t", &c, err), CN_OK);
    if (c == NULL)
        return;
    const struct gw_cred *e = gw_credentials_find(c, "AKIAADMIN", 9);
    CN_CHECK(e != NULL && e->admin == 1 && strcmp(e->display_name, "Operations") == 0);
    e = gw_credentials_find(c, "AKIATAB", 7);
    CN_CHECK(e != NULL && e->admin == 1 && strcmp(e->display_name, "Two Words") == 0);
    e = gw_credentials_find(c, "AKIANOT", 7);
    CN_CHECK(e != NULL && e->admin == 0 && strcmp(e->display_name, "admin=true") == 0);
    e = gw_credentials_find(c, "AKIAMID", 7);
    CN_CHECK(e != NULL && e->admin == 0 && strcmp(e->display_name, "x admin=true y") == 0);
    e = gw_credentials_find(c, "AKIAGLUED", 9);
    CN_CHECK(e != NULL && e->admin == 0 && strcmp(e->display_name, "xadmin=true") == 0);
    gw_credentials_free(c);
}

static const struct cn_test_case cases[] = {
    {"admin_attribute", test_admin_attribute},
    {"parse_and_find", test_parse_and_find},
    {"errors", test_errors},
    {"file", test_file},
    {"shipped_example", test_shipped_example},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
