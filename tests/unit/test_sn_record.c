/* Unit tests of the on-disk record format: encode/parse round trip, header
 * damage, block verification of slices. */
#include <stdlib.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/test.h"
#include "record.h"

CN_TEST_GLOBALS;

static uint8_t *test_sn_record_make(uint64_t data_len, uint8_t **data_out, struct sn_record_info *ri)
{
    uint8_t *data = cn_malloc(data_len + 1);
    for (uint64_t i = 0; i < data_len; i++)
        data[i] = (uint8_t)(i * 131 + 7);
    const uint8_t key[] = {'b', 0, 'k', 0xff};
    uint64_t hl = sn_record_hdr_len(sizeof(key), 3, 2, data_len);
    uint8_t *hdr = cn_malloc(hl);
    sn_record_encode(hdr, key, sizeof(key), (const uint8_t *)"met", 3, (const uint8_t *)"et", 2,
                     0, 42, 1000, data, data_len);
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(sn_record_parse(hdr, hl, ri, err), CN_OK);
    *data_out = data;
    return hdr;
}

static void test_sn_record_roundtrip(void)
{
    struct sn_record_info ri;
    uint8_t *data, *hdr = test_sn_record_make(200000, &data, &ri);
    CN_CHECK_EQ_INT(ri.key_len, 4);
    CN_CHECK(memcmp(ri.key, "b\0k\xff", 4) == 0);
    CN_CHECK(memcmp(ri.meta, "met", 3) == 0);
    CN_CHECK(memcmp(ri.etag, "et", 2) == 0);
    CN_CHECK_EQ_INT(ri.data_len, 200000);
    CN_CHECK_EQ_INT(ri.n_blocks, 4);
    CN_CHECK_EQ_INT(ri.ver, 42);
    CN_CHECK_EQ_INT(ri.ts, 1000);
    uint32_t bad = 99;
    CN_CHECK_EQ_INT(sn_record_verify(&ri, 0, data, 200000, &bad), CN_OK);
    /* a slice of blocks 1..2 and the short last block alone */
    CN_CHECK_EQ_INT(sn_record_verify(&ri, 1, data + 65536, 131072, &bad), CN_OK);
    CN_CHECK_EQ_INT(sn_record_verify(&ri, 3, data + 196608, 200000 - 196608, &bad), CN_OK);
    /* a range that does not end on a block boundary is refused */
    CN_CHECK_EQ_INT(sn_record_verify(&ri, 0, data, 1000, &bad), CN_INVAL);
    CN_CHECK_EQ_INT(sn_record_verify(&ri, 5, data, 0, &bad), CN_INVAL);
    data[70000] ^= 1;
    CN_CHECK_EQ_INT(sn_record_verify(&ri, 0, data, 200000, &bad), CN_CORRUPT);
    CN_CHECK_EQ_INT(bad, 1);
    CN_CHECK_EQ_INT(sn_record_verify(&ri, 2, data + 131072, 65536, &bad), CN_OK);
    cn_free(hdr);
    cn_free(data);
}

static void test_sn_record_damage(void)
{
    struct sn_record_info ri, ri2;
    char err[CN_ERR_LEN];
    uint8_t *data, *hdr = test_sn_record_make(10, &data, &ri);
    uint32_t hl = ri.hdr_len;
    /* every single-bit flip in the header is caught */
    for (uint32_t i = 0; i < hl; i++) {
        hdr[i] ^= 0x10;
        CN_CHECK(sn_record_parse(hdr, hl, &ri2, err) != CN_OK);
        hdr[i] ^= 0x10;
    }
    CN_CHECK_EQ_INT(sn_record_parse(hdr, hl, &ri2, err), CN_OK);
    /* every truncation answers AGAIN, never reads past */
    for (uint32_t n = 0; n < hl; n++)
        CN_CHECK_EQ_INT(sn_record_parse(hdr, n, &ri2, err), CN_AGAIN);
    /* a huge length is rejected before anything is read */
    sn_put64(hdr + 32, 1ull << 50);
    CN_CHECK_EQ_INT(sn_record_parse_fixed(hdr, hl, &ri2, err), CN_CORRUPT);
    cn_free(hdr);
    cn_free(data);
}

static void test_sn_record_empty(void)
{
    struct sn_record_info ri;
    uint8_t *data, *hdr = test_sn_record_make(0, &data, &ri);
    uint32_t bad;
    CN_CHECK_EQ_INT(ri.n_blocks, 0);
    CN_CHECK_EQ_INT(ri.hdr_len, SN_RECORD_FIXED + 4 + 3 + 2);
    CN_CHECK_EQ_INT(sn_record_verify(&ri, 0, data, 0, &bad), CN_OK);
    cn_free(hdr);
    cn_free(data);
}

static const struct cn_test_case cases[] = {
    {"roundtrip", test_sn_record_roundtrip},
    {"damage", test_sn_record_damage},
    {"empty", test_sn_record_empty},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
