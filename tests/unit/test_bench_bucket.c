/* create_bucket's pure parts: which bucket, whether a run creates it, and
 * how the server's answer is judged (200 and 409 BucketAlreadyOwnedByYou
 * go on, everything else stops the run). The request itself is covered by
 * tests/integration/test_bench_cluster.py against a real cluster. */
#include "bucket.h"

#include <string.h>

#include "cn/test.h"

CN_TEST_GLOBALS;

static void test_bucket_name(void)
{
    char name[BENCH_BUCKET_NAME_MAX];
    CN_CHECK_EQ_INT(bench_bucket_name("/bench", name, sizeof(name)), CN_OK);
    CN_CHECK_EQ_STR(name, "bench");
    CN_CHECK_EQ_INT(bench_bucket_name("/b1/some/prefix", name, sizeof(name)), CN_OK);
    CN_CHECK_EQ_STR(name, "b1");
    CN_CHECK_EQ_INT(bench_bucket_name("//b2", name, sizeof(name)), CN_OK);
    CN_CHECK_EQ_STR(name, "b2");
    CN_CHECK_EQ_INT(bench_bucket_name("", name, sizeof(name)), CN_NOTFOUND);
    CN_CHECK_EQ_INT(bench_bucket_name("/", name, sizeof(name)), CN_NOTFOUND);
    char small[4];
    CN_CHECK_EQ_INT(bench_bucket_name("/abcd", small, sizeof(small)), CN_TOOBIG);
    CN_CHECK_EQ_INT(bench_bucket_name("/abc", small, sizeof(small)), CN_OK);
    CN_CHECK_EQ_STR(small, "abc");
}

static int set(struct bench_settings *s, const char *key, const char *value)
{
    char err[CN_ERR_LEN];
    return bench_settings_apply_text(s, key, value, NULL, NULL, err);
}

static void test_bucket_wanted(void)
{
    struct bench_settings s;
    bench_settings_init(&s);
    CN_CHECK_EQ_INT(s.create_bucket, 1);
    CN_CHECK_EQ_INT(set(&s, "http_raw_path", "/bench"), CN_OK);
    /* the default mix is get only: nothing to write, no bucket made */
    CN_CHECK_EQ_INT(bench_bucket_wanted(&s), 0);
    CN_CHECK_EQ_INT(set(&s, "operations", "[{get,9},{update,1}]"), CN_OK);
    CN_CHECK_EQ_INT(bench_bucket_wanted(&s), 1);
    /* a put of weight 0 writes nothing */
    CN_CHECK_EQ_INT(set(&s, "operations", "[{get,9},{put,0}]"), CN_OK);
    CN_CHECK_EQ_INT(bench_bucket_wanted(&s), 0);
    CN_CHECK_EQ_INT(set(&s, "operations", "[{{put,load},1}]"), CN_OK);
    CN_CHECK_EQ_INT(bench_bucket_wanted(&s), 1);
    CN_CHECK_EQ_INT(set(&s, "create_bucket", "false"), CN_OK);
    CN_CHECK_EQ_INT(s.create_bucket, 0);
    CN_CHECK_EQ_INT(bench_bucket_wanted(&s), 0);
    CN_CHECK_EQ_INT(set(&s, "create_bucket", "true"), CN_OK);
    CN_CHECK_EQ_INT(bench_bucket_wanted(&s), 1);
    CN_CHECK(set(&s, "create_bucket", "maybe") != CN_OK);
    /* no bucket in the path: keys go to /KEY, nothing to create */
    CN_CHECK_EQ_INT(set(&s, "http_raw_path", "/"), CN_OK);
    CN_CHECK_EQ_INT(bench_bucket_wanted(&s), 0);

    /* the config-file form, and --dump-config writes it back */
    struct bench_term_doc doc;
    char err[CN_ERR_LEN];
    const char *cfg = "{create_bucket, false}.\n";
    CN_CHECK_EQ_INT(bench_term_parse_doc(cfg, strlen(cfg), &doc, err), CN_OK);
    CN_CHECK_EQ_INT(bench_settings_apply_doc(&s, &doc, "t.config", NULL, NULL, err), CN_OK);
    bench_term_doc_fini(&doc);
    CN_CHECK_EQ_INT(s.create_bucket, 0);
    char dump[4096] = "";
    FILE *mem = fmemopen(dump, sizeof(dump) - 1, "w");
    bench_settings_dump(&s, mem);
    fclose(mem);
    CN_CHECK(strstr(dump, "{create_bucket, false}.") != NULL);
}

static const char owned[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>BucketAlreadyOwnedByYou</Code>"
    "<Message>Your previous request to create the named bucket succeeded and you already own "
    "it.</Message><BucketName>bench</BucketName></Error>";
static const char taken[] =
    "<Error><Code>BucketAlreadyExists</Code><Message>The requested bucket name is not "
    "available.</Message></Error>";

static void test_bucket_xml_text(void)
{
    char out[64];
    CN_CHECK_EQ_INT(bench_bucket_xml_text(owned, strlen(owned), "Code", out, sizeof(out)), CN_OK);
    CN_CHECK_EQ_STR(out, "BucketAlreadyOwnedByYou");
    CN_CHECK_EQ_INT(bench_bucket_xml_text(taken, strlen(taken), "Message", out, 13), CN_OK);
    CN_CHECK_EQ_STR(out, "The requeste");
    CN_CHECK_EQ_INT(bench_bucket_xml_text(taken, strlen(taken), "Resource", out, sizeof(out)),
                    CN_NOTFOUND);
    /* the body is not NUL-terminated at len: a tag cut by len is absent */
    size_t cut = (size_t)(strstr(owned, "</Code>") - owned) + 3;
    CN_CHECK_EQ_INT(bench_bucket_xml_text(owned, cut, "Code", out, sizeof(out)), CN_NOTFOUND);
    CN_CHECK_EQ_INT(bench_bucket_xml_text("", 0, "Code", out, sizeof(out)), CN_NOTFOUND);
    CN_CHECK_EQ_INT(bench_bucket_xml_text("<Code>", 6, "Code", out, sizeof(out)), CN_NOTFOUND);
    CN_CHECK_EQ_INT(bench_bucket_xml_text("<Code></Code>", 13, "Code", out, sizeof(out)), CN_OK);
    CN_CHECK_EQ_STR(out, "");
}

static void test_bucket_judge(void)
{
    CN_CHECK_EQ_INT(bench_bucket_judge(200, "", 0), BENCH_BUCKET_CREATED);
    CN_CHECK_EQ_INT(bench_bucket_judge(409, owned, strlen(owned)), BENCH_BUCKET_EXISTS);
    /* someone else's bucket of that name */
    CN_CHECK_EQ_INT(bench_bucket_judge(409, taken, strlen(taken)), BENCH_BUCKET_FAILED);
    CN_CHECK_EQ_INT(bench_bucket_judge(409, "", 0), BENCH_BUCKET_FAILED);
    /* the code alone is not enough: it must come with a 409 */
    CN_CHECK_EQ_INT(bench_bucket_judge(403, owned, strlen(owned)), BENCH_BUCKET_FAILED);
    CN_CHECK_EQ_INT(bench_bucket_judge(204, "", 0), BENCH_BUCKET_FAILED);
    CN_CHECK_EQ_INT(bench_bucket_judge(405, "<html>405 Not Allowed</html>", 28),
                    BENCH_BUCKET_FAILED);
    CN_CHECK_EQ_INT(bench_bucket_judge(0, "", 0), BENCH_BUCKET_FAILED);
}

static void test_bucket_config_body(void)
{
    char body[512];
    CN_CHECK_EQ_INT(bench_bucket_config_body("us-east-1", body, sizeof(body)), CN_OK);
    CN_CHECK_EQ_STR(body, "");
    CN_CHECK_EQ_INT(bench_bucket_config_body("", body, sizeof(body)), CN_OK);
    CN_CHECK_EQ_STR(body, "");
    CN_CHECK_EQ_INT(bench_bucket_config_body("eu-west-3", body, sizeof(body)), CN_OK);
    CN_CHECK(strstr(body, "<LocationConstraint>eu-west-3</LocationConstraint>") != NULL);
    CN_CHECK(strncmp(body, "<CreateBucketConfiguration xmlns=", 33) == 0);
    CN_CHECK_EQ_INT(bench_bucket_config_body("eu-west-3", body, 40), CN_TOOBIG);
}

static const struct cn_test_case cases[] = {
    {"name", test_bucket_name},
    {"wanted", test_bucket_wanted},
    {"xml_text", test_bucket_xml_text},
    {"judge", test_bucket_judge},
    {"config_body", test_bucket_config_body},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
