/* Streaming checksums and the base64/hex codecs, against published values. */
#include <string.h>

#include "checksum.h"
#include "cn/hex.h"
#include "cn/rc.h"
#include "cn/test.h"

CN_TEST_GLOBALS;

static const char check_input[] = "123456789";

/* The catalogue check values of each CRC, and well-known digests. */
static void test_known_values(void)
{
    struct gw_checksum c;
    unsigned all = (1u << GW_CHECKSUM_ALGO_COUNT) - 1;
    CN_CHECK_EQ_INT(gw_checksum_init(&c, all), CN_OK);
    gw_checksum_update(&c, check_input, 9);
    gw_checksum_final(&c);
    char hex[GW_CHECKSUM_HEX_MAX];
    gw_checksum_hex(&c, GW_CHECKSUM_CRC32, hex);
    CN_CHECK_EQ_STR(hex, "cbf43926");
    gw_checksum_hex(&c, GW_CHECKSUM_CRC32C, hex);
    CN_CHECK_EQ_STR(hex, "e3069283");
    gw_checksum_hex(&c, GW_CHECKSUM_CRC64NVME, hex);
    CN_CHECK_EQ_STR(hex, "ae8b14860a799888");
    gw_checksum_hex(&c, GW_CHECKSUM_SHA1, hex);
    CN_CHECK_EQ_STR(hex, "f7c3bc1d808e04732adf679965ccc34ca7ae3441");
    gw_checksum_hex(&c, GW_CHECKSUM_SHA256, hex);
    CN_CHECK_EQ_STR(hex, "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225");
    gw_checksum_hex(&c, GW_CHECKSUM_MD5, hex);
    CN_CHECK_EQ_STR(hex, "25f9e794323b453885f5181f1b624d0b");
    CN_CHECK_EQ_INT(gw_checksum_bytes(&c), 9);
    gw_checksum_fini(&c);
    gw_checksum_fini(&c); /* twice is fine */
}

/* S3's documented trailer value: CRC32C of 66560 'a' is sOO8/Q==. */
static void test_s3_crc32c_example(void)
{
    static char a[66560];
    memset(a, 'a', sizeof(a));
    struct gw_checksum c;
    CN_CHECK_EQ_INT(gw_checksum_init(&c, GW_CHECKSUM_BIT(GW_CHECKSUM_CRC32C)), CN_OK);
    gw_checksum_update(&c, a, sizeof(a));
    gw_checksum_final(&c);
    char b64[GW_CHECKSUM_B64_MAX];
    CN_CHECK_EQ_INT(gw_checksum_base64(&c, GW_CHECKSUM_CRC32C, b64), CN_OK);
    CN_CHECK_EQ_STR(b64, "sOO8/Q==");
    CN_CHECK_EQ_INT(gw_checksum_verify_base64(&c, GW_CHECKSUM_CRC32C, "sOO8/Q==", 8), CN_OK);
    CN_CHECK_EQ_INT(gw_checksum_verify_base64(&c, GW_CHECKSUM_CRC32C, "sOO8/A==", 8),
                    CN_CORRUPT);
    CN_CHECK_EQ_INT(gw_checksum_verify_base64(&c, GW_CHECKSUM_CRC32C, "sOO8/Q=", 7), CN_INVAL);
    CN_CHECK_EQ_INT(gw_checksum_verify_base64(&c, GW_CHECKSUM_CRC32C, "AAAAAAA=", 8),
                    CN_INVAL); /* 5 bytes: wrong size */
    /* not wanted: unavailable */
    CN_CHECK_EQ_INT(gw_checksum_base64(&c, GW_CHECKSUM_SHA1, b64), CN_INVAL);
    gw_checksum_fini(&c);
}

/* Any split of the stream gives the same sums. */
static void test_streaming_splits(void)
{
    unsigned char buf[5000];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (unsigned char)(i * 131 + 7);
    unsigned all = (1u << GW_CHECKSUM_ALGO_COUNT) - 1;
    struct gw_checksum one, many;
    gw_checksum_init(&one, all);
    gw_checksum_init(&many, all);
    gw_checksum_update(&one, buf, sizeof(buf));
    size_t pos = 0, step = 1;
    while (pos < sizeof(buf)) {
        size_t n = CN_MIN(step, sizeof(buf) - pos);
        gw_checksum_update(&many, buf + pos, n);
        pos += n;
        step = step * 3 % 97 + 1;
    }
    gw_checksum_final(&one);
    gw_checksum_final(&many);
    for (int a = 0; a < GW_CHECKSUM_ALGO_COUNT; a++) {
        unsigned char d1[GW_CHECKSUM_MAX_DIGEST], d2[GW_CHECKSUM_MAX_DIGEST];
        size_t n1 = gw_checksum_digest(&one, (enum gw_checksum_algo)a, d1);
        size_t n2 = gw_checksum_digest(&many, (enum gw_checksum_algo)a, d2);
        CN_CHECK(n1 > 0 && n1 == n2 && memcmp(d1, d2, n1) == 0);
    }
    CN_CHECK_EQ_INT(gw_checksum_crc64nvme(0, buf, sizeof(buf)),
                    gw_checksum_crc64nvme(gw_checksum_crc64nvme(0, buf, 13), buf + 13,
                                          sizeof(buf) - 13));
    gw_checksum_fini(&one);
    gw_checksum_fini(&many);
}

static void test_base64(void)
{
    static const struct {
        const char *in, *out;
    } v[] = {{"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"},
             {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
    for (size_t i = 0; i < CN_ARRAY_LEN(v); i++) {
        char out[16];
        unsigned char back[16];
        size_t n = gw_checksum_base64_encode(v[i].in, strlen(v[i].in), out);
        CN_CHECK_EQ_STR(out, v[i].out);
        CN_CHECK_EQ_INT(n, strlen(v[i].out));
        size_t bn = 0;
        CN_CHECK_EQ_INT(gw_checksum_base64_decode(out, n, back, sizeof(back), &bn), CN_OK);
        CN_CHECK(bn == strlen(v[i].in) && memcmp(back, v[i].in, bn) == 0);
    }
    unsigned char b[16];
    size_t bn;
    CN_CHECK_EQ_INT(gw_checksum_base64_decode("Zg=", 3, b, 16, &bn), CN_INVAL);
    CN_CHECK_EQ_INT(gw_checksum_base64_decode("Zg==Zg==", 8, b, 16, &bn), CN_INVAL);
    CN_CHECK_EQ_INT(gw_checksum_base64_decode("Zh==", 4, b, 16, &bn), CN_INVAL); /* bits */
    CN_CHECK_EQ_INT(gw_checksum_base64_decode("Z!==", 4, b, 16, &bn), CN_INVAL);
    CN_CHECK_EQ_INT(gw_checksum_base64_decode("Z===", 4, b, 16, &bn), CN_INVAL);
    CN_CHECK_EQ_INT(gw_checksum_base64_decode("Zm9vYmFy", 8, b, 5, &bn), CN_TOOBIG);
}

static void test_content_md5_and_etag(void)
{
    unsigned char md5[16];
    /* md5("") = d41d8cd98f00b204e9800998ecf8427e = 1B2M2Y8AsgTpgAmY7PhCfg== */
    CN_CHECK_EQ_INT(gw_checksum_content_md5_parse("1B2M2Y8AsgTpgAmY7PhCfg==", 24, md5), CN_OK);
    unsigned char want[16];
    gw_checksum_md5("", 0, want);
    CN_CHECK(memcmp(md5, want, 16) == 0);
    CN_CHECK_EQ_INT(gw_checksum_content_md5_parse("Zm9v", 4, md5), CN_INVAL);
    /* multipart ETag of two parts: md5(md5(a) || md5(b)) + "-2" */
    unsigned char parts[2][16];
    gw_checksum_md5("a", 1, parts[0]);
    gw_checksum_md5("b", 1, parts[1]);
    char etag[GW_CHECKSUM_MULTIPART_ETAG_MAX], hex[GW_CHECKSUM_HEX_MAX];
    gw_checksum_multipart_etag((const unsigned char (*)[16])parts, 2, etag);
    unsigned char cat[32], d[16];
    memcpy(cat, parts[0], 16);
    memcpy(cat + 16, parts[1], 16);
    gw_checksum_md5(cat, 32, d);
    cn_hex_encode(d, 16, hex);
    strcat(hex, "-2");
    CN_CHECK_EQ_STR(etag, hex);
    char sha[GW_CHECKSUM_HEX_MAX];
    gw_checksum_sha256_hex("", 0, sha);
    CN_CHECK_EQ_STR(sha, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_names(void)
{
    enum gw_checksum_algo a;
    CN_CHECK_EQ_INT(gw_checksum_algo_from_name("crc32c", 6, &a), CN_OK);
    CN_CHECK_EQ_INT(a, GW_CHECKSUM_CRC32C);
    CN_CHECK_EQ_INT(gw_checksum_algo_from_name("MD5", 3, &a), CN_NOTFOUND);
    CN_CHECK_EQ_INT(gw_checksum_algo_from_header("X-Amz-Checksum-SHA256", 21, &a), CN_OK);
    CN_CHECK_EQ_INT(a, GW_CHECKSUM_SHA256);
    CN_CHECK_EQ_INT(gw_checksum_algo_from_header("x-amz-checksum-crc", 18, &a), CN_NOTFOUND);
    CN_CHECK_EQ_STR(gw_checksum_header_name(GW_CHECKSUM_CRC64NVME), "x-amz-checksum-crc64nvme");
    CN_CHECK(gw_checksum_header_name(GW_CHECKSUM_MD5) == NULL);
    CN_CHECK_EQ_INT(gw_checksum_digest_len(GW_CHECKSUM_SHA1), 20);
}

/* Composite multipart checksums; the expected values were computed
 * independently (Python: zlib.crc32, a bitwise CRC-32C, hashlib) in
 * tests/integration/test_gateway_conformance.py. */
static void test_composite(void)
{
    char out[GW_CHECKSUM_COMPOSITE_MAX];
    const char *crc32[] = {"JCnBsQ==", "n4g2Cw=="};
    CN_CHECK_EQ_INT(gw_checksum_composite(GW_CHECKSUM_CRC32, crc32, 2, out), CN_OK);
    CN_CHECK_EQ_STR(out, "oePQCA==-2");
    const char *crc32c[] = {"OGE8Qg==", "IXDb4A=="};
    CN_CHECK_EQ_INT(gw_checksum_composite(GW_CHECKSUM_CRC32C, crc32c, 2, out), CN_OK);
    CN_CHECK_EQ_STR(out, "lcN4bA==-2");
    const char *sha256[] = {"w+00W+EpLUqgksmRJxzbaqfG43PQi1ZsG/3nQrJLFy0=",
                            "wpp7UuVRA90hA+8ysz9D/M4EygH5dH8jzxSG8uhf/LU="};
    CN_CHECK_EQ_INT(gw_checksum_composite(GW_CHECKSUM_SHA256, sha256, 2, out), CN_OK);
    CN_CHECK_EQ_STR(out, "P4nOSTZ6BuMdslqHpAJ5KGUo9NqOWnpmxtC6JqV5g+s=-2");
    const char *sha1[] = {"uAQkoKGLYGLI6SzhFfnCduRQ+kc=", "Dl5srvybpUjadAiSc0azSmOq5m8="};
    CN_CHECK_EQ_INT(gw_checksum_composite(GW_CHECKSUM_SHA1, sha1, 2, out), CN_OK);
    CN_CHECK_EQ_STR(out, "NzDrsEyygTWafCuEDBeCDmaGlbU=-2");
    /* refused: MD5, no parts, a value of the wrong length or not base64 */
    CN_CHECK_EQ_INT(gw_checksum_composite(GW_CHECKSUM_MD5, crc32, 2, out), CN_INVAL);
    CN_CHECK_EQ_INT(gw_checksum_composite(GW_CHECKSUM_CRC32, crc32, 0, out), CN_INVAL);
    CN_CHECK_EQ_INT(gw_checksum_composite(GW_CHECKSUM_SHA256, crc32, 2, out), CN_INVAL);
    const char *bad[] = {"JCnBsQ=", "n4g2Cw=="};
    CN_CHECK_EQ_INT(gw_checksum_composite(GW_CHECKSUM_CRC32, bad, 2, out), CN_INVAL);
}

/* FULL_OBJECT: the combined CRC of parts equals the CRC of the whole, for
 * every CRC and many splits (including empty parts). */
static void test_full_object(void)
{
    static unsigned char data[70000];
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < sizeof(data); i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        data[i] = (unsigned char)x;
    }
    const enum gw_checksum_algo algos[] = {GW_CHECKSUM_CRC32, GW_CHECKSUM_CRC32C,
                                           GW_CHECKSUM_CRC64NVME};
    const size_t cuts[][4] = {{0, 1, 2, 70000}, {0, 0, 5000, 70000}, {0, 33333, 65536, 70000},
                              {0, 69999, 70000, 70000}, {0, 7, 1031, 70000}};
    for (size_t a = 0; a < CN_ARRAY_LEN(algos); a++) {
        struct gw_checksum whole;
        char want[GW_CHECKSUM_B64_MAX], got[GW_CHECKSUM_B64_MAX];
        CN_CHECK_EQ_INT(gw_checksum_init(&whole, GW_CHECKSUM_BIT(algos[a])), CN_OK);
        gw_checksum_update(&whole, data, sizeof(data));
        gw_checksum_final(&whole);
        CN_CHECK_EQ_INT(gw_checksum_base64(&whole, algos[a], want), CN_OK);
        gw_checksum_fini(&whole);
        for (size_t c = 0; c < CN_ARRAY_LEN(cuts); c++) {
            char b64[3][GW_CHECKSUM_B64_MAX];
            const char *parts[3];
            uint64_t lens[3];
            for (int p = 0; p < 3; p++) {
                struct gw_checksum pc;
                CN_CHECK_EQ_INT(gw_checksum_init(&pc, GW_CHECKSUM_BIT(algos[a])), CN_OK);
                gw_checksum_update(&pc, data + cuts[c][p], cuts[c][p + 1] - cuts[c][p]);
                gw_checksum_final(&pc);
                CN_CHECK_EQ_INT(gw_checksum_base64(&pc, algos[a], b64[p]), CN_OK);
                gw_checksum_fini(&pc);
                parts[p] = b64[p];
                lens[p] = cuts[c][p + 1] - cuts[c][p];
            }
            CN_CHECK_EQ_INT(gw_checksum_full_object(algos[a], parts, lens, 3, got), CN_OK);
            CN_CHECK_EQ_STR(got, want);
        }
    }
    const char *one[] = {"AAAAAA=="};
    uint64_t len1 = 1;
    char out[GW_CHECKSUM_B64_MAX];
    CN_CHECK_EQ_INT(gw_checksum_full_object(GW_CHECKSUM_SHA256, one, &len1, 1, out), CN_INVAL);
    CN_CHECK_EQ_INT(gw_checksum_full_object(GW_CHECKSUM_CRC64NVME, one, &len1, 1, out), CN_INVAL);
    CN_CHECK_EQ_INT(gw_checksum_full_object(GW_CHECKSUM_CRC32, one, &len1, 0, out), CN_INVAL);
}

static void test_verify_hex(void)
{
    struct gw_checksum c;
    gw_checksum_init(&c, GW_CHECKSUM_BIT(GW_CHECKSUM_SHA256));
    gw_checksum_final(&c);
    const char *e = "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855";
    CN_CHECK_EQ_INT(gw_checksum_verify_hex(&c, GW_CHECKSUM_SHA256, e, 64), CN_OK);
    CN_CHECK_EQ_INT(gw_checksum_verify_hex(&c, GW_CHECKSUM_SHA256, e, 62), CN_INVAL);
    char bad[65];
    memcpy(bad, e, 65);
    bad[0] = 'F';
    CN_CHECK_EQ_INT(gw_checksum_verify_hex(&c, GW_CHECKSUM_SHA256, bad, 64), CN_CORRUPT);
    bad[0] = 'G';
    CN_CHECK_EQ_INT(gw_checksum_verify_hex(&c, GW_CHECKSUM_SHA256, bad, 64), CN_INVAL);
    gw_checksum_fini(&c);
}

static const struct cn_test_case cases[] = {
    {"known_values", test_known_values},
    {"s3_crc32c_example", test_s3_crc32c_example},
    {"streaming_splits", test_streaming_splits},
    {"base64", test_base64},
    {"content_md5_and_etag", test_content_md5_and_etag},
    {"names", test_names},
    {"verify_hex", test_verify_hex},
    {"composite", test_composite},
    {"full_object", test_full_object},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
