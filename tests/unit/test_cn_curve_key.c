/* Unit tests of cn/curve_key.h: the Z85 key check, the key-file and
 * allow-list grammar, the permission check of secret key files, writing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cn/curve_key.h"
#include "cn/test.h"

CN_TEST_GLOBALS;

/* the example keys of ZeroMQ RFC 26 (CurveZMQ) */
#define KEY_A "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
#define KEY_B "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"

static void test_key_valid(void)
{
    CN_CHECK(cn_curve_key_valid(KEY_A, 40));
    CN_CHECK(cn_curve_key_valid(KEY_B, 40));
    CN_CHECK(!cn_curve_key_valid(KEY_A, 39));
    CN_CHECK(!cn_curve_key_valid("rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf~", 40)); /* ~ */
    CN_CHECK(!cn_curve_key_valid("rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf ", 40));
    /* 5 characters hold 4 bytes: "#####" is 85^5 - 1, over 32 bits */
    CN_CHECK(!cn_curve_key_valid("#####}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7", 40));
}

static void test_key_parse(void)
{
    struct cn_curve_key k;
    char err[CN_ERR_LEN];
    static const char ok[] = "# node key\n\n  " KEY_A "  node-1\n";
    CN_CHECK_EQ_INT(cn_curve_key_parse(ok, strlen(ok), "f", &k, err), CN_OK);
    CN_CHECK_EQ_STR(k.z85, KEY_A);
    CN_CHECK_EQ_INT(cn_curve_key_parse(KEY_B, 40, "f", &k, err), CN_OK); /* no newline */
    CN_CHECK_EQ_STR(k.z85, KEY_B);
    static const char two[] = KEY_A "\n" KEY_B "\n";
    CN_CHECK_EQ_INT(cn_curve_key_parse(two, strlen(two), "f", &k, err), CN_INVAL);
    CN_CHECK(strstr(err, "f:2:") != NULL);
    CN_CHECK_EQ_INT(cn_curve_key_parse("# nothing\n", 10, "f", &k, err), CN_INVAL);
    CN_CHECK(strstr(err, "no key") != NULL);
    static const char bad[] = "\n" KEY_A "x\n";
    CN_CHECK_EQ_INT(cn_curve_key_parse(bad, strlen(bad), "f", &k, err), CN_INVAL);
    CN_CHECK(strstr(err, "f:2:") != NULL);
    CN_CHECK_EQ_STR(k.z85, KEY_B); /* unchanged on error */
}

static void test_keyset(void)
{
    struct cn_curve_keyset *s = NULL;
    char err[CN_ERR_LEN];
    static const char list[] = "# allowed\n" KEY_B " gw-1\n#" KEY_A " revoked\n" KEY_B "\n";
    CN_CHECK_EQ_INT(cn_curve_keyset_parse(list, strlen(list), "l", &s, err), CN_OK);
    CN_CHECK_EQ_INT(cn_curve_keyset_count(s), 1);
    CN_CHECK(cn_curve_keyset_has(s, KEY_B, 40));
    CN_CHECK(!cn_curve_keyset_has(s, KEY_A, 40));
    CN_CHECK(!cn_curve_keyset_has(s, KEY_B, 39));
    cn_curve_keyset_free(s);
    CN_CHECK_EQ_INT(cn_curve_keyset_parse("", 0, "l", &s, err), CN_OK);
    CN_CHECK_EQ_INT(cn_curve_keyset_count(s), 0);
    CN_CHECK(!cn_curve_keyset_has(s, KEY_A, 40));
    cn_curve_keyset_free(s);
    CN_CHECK_EQ_INT(cn_curve_keyset_parse("garbage\n", 8, "l", &s, err), CN_INVAL);
    CN_CHECK(s == NULL);
    CN_CHECK(!cn_curve_keyset_has(NULL, KEY_A, 40));
}

static void test_files(void)
{
    char dir[] = "/tmp/cn-curve-XXXXXX", key[64], pub[64], err[CN_ERR_LEN];
    struct cn_curve_key a, got;
    struct stat st;
    CN_CHECK(mkdtemp(dir) != NULL);
    snprintf(key, sizeof(key), "%s/k.key", dir);
    snprintf(pub, sizeof(pub), "%s/k.pub", dir);
    memcpy(a.z85, KEY_A, sizeof(a.z85));
    CN_CHECK_EQ_INT(cn_curve_key_write(key, &a, 1, err), CN_OK);
    CN_CHECK_EQ_INT(cn_curve_key_write(pub, &a, 0, err), CN_OK);
    CN_CHECK(stat(key, &st) == 0 && (st.st_mode & 0777) == 0600);
    CN_CHECK(stat(pub, &st) == 0 && (st.st_mode & 0777) == 0644);
    CN_CHECK_EQ_INT(cn_curve_key_write(key, &a, 1, err), CN_IO); /* never overwrites */
    CN_CHECK_EQ_INT(cn_curve_key_load(key, 1, &got, err), CN_OK);
    CN_CHECK_EQ_STR(got.z85, KEY_A);
    /* a secret key others may read is refused; a public one is fine */
    CN_CHECK_EQ_INT(cn_curve_key_load(pub, 1, &got, err), CN_INVAL);
    CN_CHECK(strstr(err, "chmod 600") != NULL);
    CN_CHECK_EQ_INT(cn_curve_key_load(pub, 0, &got, err), CN_OK);
    chmod(key, 0640);
    CN_CHECK_EQ_INT(cn_curve_key_load(key, 1, &got, err), CN_INVAL);
    CN_CHECK_EQ_INT(cn_curve_key_load(dir, 0, &got, err), CN_IO); /* not a file */
    unlink(key);
    CN_CHECK_EQ_INT(cn_curve_key_load(key, 1, &got, err), CN_IO);
    CN_CHECK(strstr(err, key) != NULL);
    struct cn_curve_keyset *s = NULL;
    CN_CHECK_EQ_INT(cn_curve_keyset_load(pub, &s, err), CN_OK);
    CN_CHECK(cn_curve_keyset_has(s, KEY_A, 40));
    cn_curve_keyset_free(s);
    unlink(pub);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    static const struct cn_test_case cases[] = {
        {"key_valid", test_key_valid},
        {"key_parse", test_key_parse},
        {"keyset", test_keyset},
        {"files", test_files},
        {NULL, NULL},
    };
    return cn_test_main(cases, argc, argv);
}
