/* Unit tests of hex digits (common/hex.c): every byte value round-trips,
 * encoders keep their case, readers accept only what they say, and decode
 * refuses odd lengths, stray chars and short buffers. */
#include "cn/hex.h"

#include <stdlib.h>
#include <string.h>

#include "cn/rc.h"
#include "cn/test.h"

CN_TEST_GLOBALS;

static void test_hex_val(void)
{
    for (int c = -1; c < 256; c++) {
        int want = -1;
        if (c >= '0' && c <= '9')
            want = c - '0';
        else if (c >= 'a' && c <= 'f')
            want = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            want = c - 'A' + 10;
        CN_CHECK_EQ_INT(cn_hex_val(c), want);
        CN_CHECK_EQ_INT(cn_hex_val_lower(c), c >= 'A' && c <= 'F' ? -1 : want);
    }
    /* a signed char above 0x7f is not a digit */
    CN_CHECK_EQ_INT(cn_hex_val((char)0xe6), -1);
}

static void test_hex_is(void)
{
    CN_CHECK(cn_hex_is("", 0));
    CN_CHECK(cn_hex_is_lower("", 0));
    CN_CHECK(cn_hex_is("09afAF", 6));
    CN_CHECK(!cn_hex_is_lower("09afAF", 6));
    CN_CHECK(cn_hex_is_lower("09af", 4));
    CN_CHECK(!cn_hex_is("0g", 2));
    CN_CHECK(!cn_hex_is("0 ", 2));
    /* only n chars are looked at */
    CN_CHECK(cn_hex_is("ab!", 2));
}

static void test_hex_byte_case(void)
{
    char two[3] = {'x', 'x', 'x'};
    cn_hex_byte(0xaf, two);
    CN_CHECK(two[0] == 'a' && two[1] == 'f' && two[2] == 'x');
    cn_hex_byte_upper(0xaf, two);
    CN_CHECK(two[0] == 'A' && two[1] == 'F' && two[2] == 'x');
    cn_hex_byte_upper(0x07, two);
    CN_CHECK(two[0] == '0' && two[1] == '7');
}

static void test_hex_encode(void)
{
    const unsigned char in[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
    char out[2 * sizeof(in) + 1];
    memset(out, 'x', sizeof(out));
    cn_hex_encode(in, sizeof(in), out);
    CN_CHECK_EQ_STR(out, "00017f80abff");
    cn_hex_encode(in, 0, out);
    CN_CHECK_EQ_STR(out, "");
}

static void test_hex_roundtrip_all_bytes(void)
{
    unsigned char in[256], back[256];
    char text[2 * 256 + 1];
    for (int i = 0; i < 256; i++)
        in[i] = (unsigned char)i;
    cn_hex_encode(in, sizeof(in), text);
    CN_CHECK(cn_hex_is_lower(text, 512));
    CN_CHECK_EQ_INT(cn_hex_decode(text, 512, back, sizeof(back)), CN_OK);
    CN_CHECK(memcmp(in, back, sizeof(in)) == 0);
    /* upper case reads back the same */
    for (int i = 0; i < 512; i++)
        if (text[i] >= 'a')
            text[i] = (char)(text[i] - 'a' + 'A');
    memset(back, 0, sizeof(back));
    CN_CHECK_EQ_INT(cn_hex_decode(text, 512, back, sizeof(back)), CN_OK);
    CN_CHECK(memcmp(in, back, sizeof(in)) == 0);
}

static void test_hex_decode_errors(void)
{
    unsigned char out[4];
    CN_CHECK_EQ_INT(cn_hex_decode("abc", 3, out, sizeof(out)), CN_INVAL);
    CN_CHECK_EQ_INT(cn_hex_decode("zz", 2, out, sizeof(out)), CN_INVAL);
    CN_CHECK_EQ_INT(cn_hex_decode("0x", 2, out, sizeof(out)), CN_INVAL);
    CN_CHECK_EQ_INT(cn_hex_decode("0011223344", 10, out, sizeof(out)), CN_TOOBIG);
    CN_CHECK_EQ_INT(cn_hex_decode("00112233", 8, out, sizeof(out)), CN_OK);
    CN_CHECK(out[0] == 0x00 && out[1] == 0x11 && out[2] == 0x22 && out[3] == 0x33);
    CN_CHECK_EQ_INT(cn_hex_decode("", 0, out, 0), CN_OK);
}

static const struct cn_test_case cases[] = {
    {"val", test_hex_val},
    {"is", test_hex_is},
    {"byte_case", test_hex_byte_case},
    {"encode", test_hex_encode},
    {"roundtrip_all_bytes", test_hex_roundtrip_all_bytes},
    {"decode_errors", test_hex_decode_errors},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
