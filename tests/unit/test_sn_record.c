/* Unit tests of the on-disk record format: encode/parse round trip, header
 * damage, block verification of slices. */
#include <stdlib.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/crc.h"
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

/* The one-pass slice CRC equals a direct CRC of the slice, for slices that
 * start and end inside blocks, on boundaries, and at the record's end. */
static void test_sn_record_slice_crc(void)
{
    struct sn_record_info ri;
    uint64_t n = 5 * SN_RECORD_BLOCK + 1234;
    uint8_t *data, *hdr = test_sn_record_make(n, &data, &ri);
    CN_CHECK_EQ_INT(sn_crc32c_combine(cn_crc32c(0, data, 1000), cn_crc32c(0, data + 1000, 77777), 77777),
                    cn_crc32c(0, data, 78777));
    CN_CHECK_EQ_INT(sn_crc32c_combine(0, cn_crc32c(0, data, 10), 10), cn_crc32c(0, data, 10));
    const uint64_t offs[] = {0, 1, 65535, 65536, 65537, 200000, 5 * 65536, n - 1, n};
    const uint64_t lens[] = {0, 1, 100, 65535, 65536, 65537, 131072, 300000, n};
    int checked = 0;
    for (size_t i = 0; i < CN_ARRAY_LEN(offs); i++)
        for (size_t k = 0; k < CN_ARRAY_LEN(lens); k++) {
            uint64_t off = offs[i], len = CN_MIN(lens[k], n - off);
            uint32_t first = (uint32_t)(off >> SN_RECORD_BLOCK_LOG2);
            uint64_t start = (uint64_t)first << SN_RECORD_BLOCK_LOG2;
            uint64_t end = CN_MIN((off + len + SN_RECORD_BLOCK - 1) & ~(uint64_t)(SN_RECORD_BLOCK - 1), n);
            uint32_t crc = 0, bad = 0;
            CN_CHECK_EQ_INT(sn_record_verify_slice(&ri, first, data + start, end - start, off - start,
                                                   len, &crc, &bad), CN_OK);
            CN_CHECK_EQ_INT(crc, cn_crc32c(0, data + off, (size_t)len));
            checked++;
        }
    CN_CHECK_EQ_INT(checked, 81);
    uint32_t crc, bad = 0;
    data[3 * SN_RECORD_BLOCK + 5] ^= 4;
    CN_CHECK_EQ_INT(sn_record_verify_slice(&ri, 2, data + 2 * SN_RECORD_BLOCK, 2 * SN_RECORD_BLOCK,
                                           10, 20, &crc, &bad), CN_CORRUPT);
    CN_CHECK_EQ_INT(bad, 3);
    CN_CHECK_EQ_INT(sn_record_verify_slice(&ri, 0, data, 100, 0, 10, &crc, &bad), CN_INVAL);
    cn_free(hdr);
    cn_free(data);
}

/* A record with osize (SN_RECORD_FLAG_OSIZE): 8 more header bytes after
 * the etag, parsed into has_osize/osize and left out of flags; the block
 * CRCs after it still verify; a tombstone with the flag, or a header whose
 * length does not count the 8 bytes, is corrupt. */
static void test_sn_record_osize(void)
{
    uint8_t data[70000];
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i * 7);
    uint64_t osize = 123456789012ull;
    uint64_t hl = sn_record_hdr_len(1, 0, 3, sizeof(data)) + SN_RECORD_OSIZE_LEN;
    uint8_t *hdr = cn_malloc(hl);
    sn_record_encode_osize(hdr, (const uint8_t *)"k", 1, NULL, 0, (const uint8_t *)"e-2", 3,
                           &osize, 0, 1, 2, data, sizeof(data));
    struct sn_record_info ri;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(sn_record_parse(hdr, hl, &ri, err), CN_OK);
    CN_CHECK(ri.has_osize && ri.osize == osize && ri.flags == 0 && ri.hdr_len == hl);
    CN_CHECK(ri.etag_len == 3 && memcmp(ri.etag, "e-2", 3) == 0);
    uint32_t bad;
    CN_CHECK_EQ_INT(sn_record_verify(&ri, 0, data, sizeof(data), &bad), CN_OK);
    CN_CHECK_EQ_INT(sn_record_data_crc(&ri), cn_crc32c(0, data, sizeof(data)));
    /* without the flag the same lengths do not add up */
    uint8_t *copy = cn_memdup(hdr, hl);
    sn_put32(copy + 24, 0);
    sn_put32(copy + 4, cn_crc32c(0, copy + 8, hl - 8));
    CN_CHECK_EQ_INT(sn_record_parse(copy, hl, &ri, err), CN_CORRUPT);
    /* a tombstone never has one */
    sn_put32(copy + 24, SN_RECORD_FLAG_OSIZE | SN_RECORD_FLAG_TOMBSTONE);
    sn_put64(copy + 32, 0);
    sn_put32(copy + 8, (uint32_t)(sn_record_hdr_len(1, 0, 3, 0) + SN_RECORD_OSIZE_LEN));
    sn_put32(copy + 4, cn_crc32c(0, copy + 8, sn_get32(copy + 8) - 8));
    CN_CHECK_EQ_INT(sn_record_parse(copy, hl, &ri, err), CN_CORRUPT);
    cn_free(copy);
    /* without osize: the format of before, byte for byte */
    uint64_t hl0 = sn_record_hdr_len(1, 0, 3, sizeof(data));
    uint8_t *a = cn_malloc(hl0), *b = cn_malloc(hl0);
    sn_record_encode(a, (const uint8_t *)"k", 1, NULL, 0, (const uint8_t *)"e-2", 3, 0, 1, 2,
                     data, sizeof(data));
    sn_record_encode_osize(b, (const uint8_t *)"k", 1, NULL, 0, (const uint8_t *)"e-2", 3, NULL,
                           0, 1, 2, data, sizeof(data));
    CN_CHECK(memcmp(a, b, hl0) == 0);
    CN_CHECK_EQ_INT(sn_record_parse(a, hl0, &ri, err), CN_OK);
    CN_CHECK(!ri.has_osize);
    cn_free(a);
    cn_free(b);
    cn_free(hdr);
}

static const struct cn_test_case cases[] = {
    {"osize", test_sn_record_osize},
    {"slice_crc", test_sn_record_slice_crc},
    {"roundtrip", test_sn_record_roundtrip},
    {"damage", test_sn_record_damage},
    {"empty", test_sn_record_empty},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
