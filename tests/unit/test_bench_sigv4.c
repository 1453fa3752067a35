/* SigV4 signer of cairn-bench against the AWS S3 documentation example and
 * two signatures computed by botocore for the requests cairn-bench sends. */
#include "sigv4.h"

#include <string.h>

#include "cn/test.h"

CN_TEST_GLOBALS;

#define AK "AKIAIOSFODNN7EXAMPLE"
#define SK "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define PREFIX "AWS4-HMAC-SHA256 Credential=" AK "/20130524/us-east-1/s3/aws4_request, "

static void test_sigv4_aws_doc_get_range(void)
{
    struct bench_sigv4 s;
    bench_sigv4_init(&s, AK, SK, "us-east-1", "s3");
    struct bench_sigv4_header h[] = {
        {"host", "examplebucket.s3.amazonaws.com"},
        {"range", "bytes=0-9"},
        {"x-amz-content-sha256", BENCH_SIGV4_EMPTY_SHA256},
        {"x-amz-date", "20130524T000000Z"},
    };
    char auth[512];
    CN_CHECK_EQ_INT(bench_sigv4_sign(&s, "GET", "/test.txt", "", h, 4, BENCH_SIGV4_EMPTY_SHA256,
                                     "20130524T000000Z", auth, sizeof(auth)),
                    CN_OK);
    CN_CHECK_EQ_STR(auth, PREFIX "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                              "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

static void test_sigv4_botocore_list_and_put(void)
{
    struct bench_sigv4 s;
    bench_sigv4_init(&s, AK, SK, "us-east-1", "s3");
    struct bench_sigv4_header h[] = {
        {"host", "127.0.0.1:9000"},
        {"x-amz-content-sha256", BENCH_SIGV4_EMPTY_SHA256},
        {"x-amz-date", "20130524T000000Z"},
    };
    char auth[512];
    CN_CHECK_EQ_INT(bench_sigv4_sign(&s, "GET", "/bucket", "list-type=2&max-keys=1000", h, 3,
                                     BENCH_SIGV4_EMPTY_SHA256, "20130524T000000Z", auth,
                                     sizeof(auth)),
                    CN_OK);
    CN_CHECK_EQ_STR(auth, PREFIX "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
                              "Signature=9a127b19b7372fa01035200fce1a3928898869d371eda805aec54242be98b4e7");
    h[1].value = BENCH_SIGV4_UNSIGNED;
    CN_CHECK_EQ_INT(bench_sigv4_sign(&s, "PUT", "/bucket/42", "", h, 3, BENCH_SIGV4_UNSIGNED,
                                     "20130524T000000Z", auth, sizeof(auth)),
                    CN_OK);
    CN_CHECK_EQ_STR(auth, PREFIX "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
                              "Signature=a5c76cc1a5a83bdd2548e1ce86cffc51dfc1474f44b1fe6b8f4e14c6b2b4d334");
    /* the cached signing key follows the date */
    CN_CHECK_EQ_INT(bench_sigv4_sign(&s, "PUT", "/bucket/42", "", h, 3, BENCH_SIGV4_UNSIGNED,
                                     "20130525T000000Z", auth, sizeof(auth)),
                    CN_OK);
    CN_CHECK(strstr(auth, "/20130525/us-east-1/s3/aws4_request") != NULL);
    CN_CHECK(strstr(auth, "a5c76cc1a5a83bdd2548e1ce86cffc51dfc1474f44b1fe6b8f4e14c6b2b4d334") == NULL);
    /* a short buffer is reported, not overrun */
    CN_CHECK_EQ_INT(bench_sigv4_sign(&s, "PUT", "/bucket/42", "", h, 3, BENCH_SIGV4_UNSIGNED,
                                     "20130525T000000Z", auth, 40),
                    CN_TOOBIG);
}

static void test_sigv4_amz_date(void)
{
    char d[17];
    bench_sigv4_amz_date(1369353600LL, d);
    CN_CHECK_EQ_STR(d, "20130524T000000Z");
}

static const struct cn_test_case cases[] = {
    {"aws_doc_get_range", test_sigv4_aws_doc_get_range},
    {"botocore_list_and_put", test_sigv4_botocore_list_and_put},
    {"amz_date", test_sigv4_amz_date},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
