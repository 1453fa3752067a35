/* Encoding, parsing and verification of on-disk records (see record.h).
 * The parser is fed container bytes, which are outside input after a crash or
 * a disk fault: every length is checked before it is used. */
#include "record.h"

#include <stdio.h>
#include <string.h>

#include "cn/crc.h"

uint64_t sn_record_hdr_len(uint32_t key_len, uint32_t meta_len, uint32_t etag_len,
                           uint64_t data_len)
{
    uint64_t n_blocks = (data_len + SN_RECORD_BLOCK - 1) >> SN_RECORD_BLOCK_LOG2;
    return (uint64_t)SN_RECORD_FIXED + key_len + meta_len + etag_len + 4 * n_blocks;
}

int sn_record_parse_fixed(const uint8_t *buf, size_t len, struct sn_record_info *ri,
                          char err[CN_ERR_LEN])
{
    if (len < SN_RECORD_FIXED) {
        snprintf(err, CN_ERR_LEN, "record header truncated (%zu bytes)", len);
        return CN_AGAIN;
    }
    memset(ri, 0, sizeof(*ri));
    if (sn_get32(buf) != SN_RECORD_MAGIC) {
        snprintf(err, CN_ERR_LEN, "bad record magic 0x%08x", sn_get32(buf));
        return CN_CORRUPT;
    }
    ri->hdr_len = sn_get32(buf + 8);
    ri->key_len = sn_get32(buf + 12);
    ri->meta_len = sn_get32(buf + 16);
    ri->etag_len = sn_get32(buf + 20);
    uint32_t raw_flags = sn_get32(buf + 24);
    ri->flags = raw_flags & ~(SN_RECORD_FLAG_OSIZE | SN_RECORD_FLAG_OWNER);
    ri->has_osize = (raw_flags & SN_RECORD_FLAG_OSIZE) != 0;
    ri->has_owner = (raw_flags & SN_RECORD_FLAG_OWNER) != 0;
    ri->block_log2 = sn_get32(buf + 28);
    ri->data_len = sn_get64(buf + 32);
    ri->ver = sn_get64(buf + 40);
    ri->ts = sn_get64(buf + 48);
    if (ri->block_log2 != SN_RECORD_BLOCK_LOG2 || ri->key_len == 0 ||
        ri->key_len > SN_RECORD_MAX_KEY || ri->meta_len > SN_RECORD_MAX_META ||
        ri->etag_len > SN_RECORD_MAX_ETAG || ri->data_len > SN_RECORD_MAX_DATA ||
        (ri->flags & ~SN_RECORD_FLAG_TOMBSTONE) != 0 ||
        ((ri->flags & SN_RECORD_FLAG_TOMBSTONE) &&
         (ri->data_len != 0 || ri->has_osize || ri->has_owner))) {
        snprintf(err, CN_ERR_LEN, "record header fields out of range");
        return CN_CORRUPT;
    }
    if (sn_record_hdr_len(ri->key_len, ri->meta_len, ri->etag_len, ri->data_len) +
            (ri->has_osize ? SN_RECORD_OSIZE_LEN : 0) != ri->hdr_len) {
        snprintf(err, CN_ERR_LEN, "record header length %u inconsistent", ri->hdr_len);
        return CN_CORRUPT;
    }
    ri->n_blocks = (uint32_t)((ri->data_len + SN_RECORD_BLOCK - 1) >> SN_RECORD_BLOCK_LOG2);
    return CN_OK;
}

int sn_record_parse(const uint8_t *buf, size_t len, struct sn_record_info *ri,
                    char err[CN_ERR_LEN])
{
    int rc = sn_record_parse_fixed(buf, len, ri, err);
    if (rc != CN_OK)
        return rc;
    if (len < ri->hdr_len) {
        snprintf(err, CN_ERR_LEN, "record header truncated (%zu of %u bytes)", len,
                 ri->hdr_len);
        return CN_AGAIN;
    }
    uint32_t want = sn_get32(buf + 4);
    uint32_t got = cn_crc32c(0, buf + 8, ri->hdr_len - 8);
    if (want != got) {
        snprintf(err, CN_ERR_LEN, "record header checksum mismatch");
        return CN_CORRUPT;
    }
    ri->key = buf + SN_RECORD_FIXED;
    ri->meta = ri->key + ri->key_len;
    ri->etag = ri->meta + ri->meta_len;
    ri->crcs = ri->etag + ri->etag_len;
    if (ri->has_osize) {
        ri->osize = sn_get64(ri->crcs);
        ri->crcs += SN_RECORD_OSIZE_LEN;
    }
    return CN_OK;
}

void sn_record_encode(uint8_t *out, const uint8_t *key, uint32_t key_len,
                      const uint8_t *meta, uint32_t meta_len, const uint8_t *etag,
                      uint32_t etag_len, uint32_t flags, uint64_t ver, uint64_t ts,
                      const uint8_t *data, uint64_t data_len)
{
    sn_record_encode_osize(out, key, key_len, meta, meta_len, etag, etag_len, NULL, flags, ver,
                           ts, data, data_len);
}

void sn_record_encode_osize(uint8_t *out, const uint8_t *key, uint32_t key_len,
                            const uint8_t *meta, uint32_t meta_len, const uint8_t *etag,
                            uint32_t etag_len, const uint64_t *osize, uint32_t flags,
                            uint64_t ver, uint64_t ts, const uint8_t *data, uint64_t data_len)
{
    CN_ASSERT(osize == NULL || !(flags & SN_RECORD_FLAG_TOMBSTONE));
    uint32_t hdr_len = (uint32_t)(sn_record_hdr_len(key_len, meta_len, etag_len, data_len) +
                                  (osize != NULL ? SN_RECORD_OSIZE_LEN : 0));
    sn_put32(out, SN_RECORD_MAGIC);
    sn_put32(out + 8, hdr_len);
    sn_put32(out + 12, key_len);
    sn_put32(out + 16, meta_len);
    sn_put32(out + 20, etag_len);
    sn_put32(out + 24, flags | (osize != NULL ? SN_RECORD_FLAG_OSIZE : 0));
    sn_put32(out + 28, SN_RECORD_BLOCK_LOG2);
    sn_put64(out + 32, data_len);
    sn_put64(out + 40, ver);
    sn_put64(out + 48, ts);
    uint8_t *p = out + SN_RECORD_FIXED;
    if (key_len)
        memcpy(p, key, key_len);
    p += key_len;
    if (meta_len)
        memcpy(p, meta, meta_len);
    p += meta_len;
    if (etag_len)
        memcpy(p, etag, etag_len);
    p += etag_len;
    if (osize != NULL) {
        sn_put64(p, *osize);
        p += SN_RECORD_OSIZE_LEN;
    }
    for (uint64_t off = 0; off < data_len; off += SN_RECORD_BLOCK, p += 4) {
        uint64_t n = CN_MIN((uint64_t)SN_RECORD_BLOCK, data_len - off);
        sn_put32(p, cn_crc32c(0, data + off, (size_t)n));
    }
    sn_put32(out + 4, cn_crc32c(0, out + 8, hdr_len - 8));
}

uint32_t sn_record_block_crc(const struct sn_record_info *ri, uint32_t i)
{
    CN_ASSERT(i < ri->n_blocks);
    return sn_get32(ri->crcs + 4 * (size_t)i);
}

uint32_t sn_record_data_crc(const struct sn_record_info *ri)
{
    uint32_t crc = 0, op = cn_crc32c_shift_op(SN_RECORD_BLOCK);
    for (uint32_t b = 0; b < ri->n_blocks; b++) {
        uint64_t off = (uint64_t)b << SN_RECORD_BLOCK_LOG2;
        uint64_t n = CN_MIN((uint64_t)SN_RECORD_BLOCK, ri->data_len - off);
        crc = n == SN_RECORD_BLOCK ? cn_crc32c_combine_op(crc, sn_record_block_crc(ri, b), op)
                                   : cn_crc32c_combine(crc, sn_record_block_crc(ri, b), n);
    }
    return crc;
}

int sn_record_verify(const struct sn_record_info *ri, uint32_t first_block,
                     const uint8_t *data, uint64_t len, uint32_t *bad_block)
{
    uint64_t start = (uint64_t)first_block << SN_RECORD_BLOCK_LOG2;
    if (start > ri->data_len || len > ri->data_len - start)
        return CN_INVAL;
    if (start + len != ri->data_len && (len & (SN_RECORD_BLOCK - 1)) != 0)
        return CN_INVAL;
    uint32_t b = first_block;
    for (uint64_t off = 0; off < len; off += SN_RECORD_BLOCK, b++) {
        uint64_t n = CN_MIN((uint64_t)SN_RECORD_BLOCK, len - off);
        if (cn_crc32c(0, data + off, (size_t)n) != sn_record_block_crc(ri, b)) {
            *bad_block = b;
            return CN_CORRUPT;
        }
    }
    return CN_OK;
}

/* ---- CRC32C combination ----
 * CRC arithmetic in GF(2)[x] modulo the Castagnoli polynomial, in the
 * reflected bit order CRC32C uses (bit 31 holds x^0). Appending n zero bytes
 * to a message multiplies its CRC register by x^(8n); so
 * crc(A||B) = crc(A) * x^(8 len B) + crc(B) (the pre- and post-inversion
 * cancel out as in zlib's crc32_combine). */

#define SN_CRC32C_POLY 0x82f63b78u

/* a * b modulo the polynomial. */
static uint32_t sn_crc32c_mulmod(uint32_t a, uint32_t b)
{
    uint32_t prod = 0;
    for (uint32_t bit = 1u << 31; bit != 0; bit >>= 1) {
        if (a & bit)
            prod ^= b;
        b = (b & 1) ? (b >> 1) ^ SN_CRC32C_POLY : b >> 1;
    }
    return prod;
}

/* x^(8 n) modulo the polynomial, by squaring. */
static uint32_t sn_crc32c_xpow8n(uint64_t n)
{
    uint32_t result = 1u << 31;         /* x^0 */
    uint32_t sq = 1u << 23;             /* x^8: one zero byte */
    while (n != 0) {
        if (n & 1)
            result = sn_crc32c_mulmod(result, sq);
        sq = sn_crc32c_mulmod(sq, sq);
        n >>= 1;
    }
    return result;
}

uint32_t sn_crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b)
{
    return sn_crc32c_mulmod(sn_crc32c_xpow8n(len_b), crc_a) ^ crc_b;
}

int sn_record_verify_slice(const struct sn_record_info *ri, uint32_t first_block,
                           const uint8_t *buf, uint64_t buf_len, uint64_t slice_off,
                           uint64_t slice_len, uint32_t *slice_crc, uint32_t *bad_block)
{
    uint64_t start = (uint64_t)first_block << SN_RECORD_BLOCK_LOG2;
    if (start > ri->data_len || buf_len > ri->data_len - start ||
        (start + buf_len != ri->data_len && (buf_len & (SN_RECORD_BLOCK - 1)) != 0) ||
        slice_off > buf_len || slice_len > buf_len - slice_off)
        return CN_INVAL;
    uint32_t full_shift = 0; /* x^(8 block), derived at its first use: never 0 */
    uint64_t s0 = slice_off, s1 = slice_off + slice_len;
    uint32_t crc = 0, b = first_block;
    for (uint64_t off = 0; off < buf_len; off += SN_RECORD_BLOCK, b++) {
        uint64_t n = CN_MIN((uint64_t)SN_RECORD_BLOCK, buf_len - off);
        uint32_t c = cn_crc32c(0, buf + off, (size_t)n);
        if (c != sn_record_block_crc(ri, b)) {
            *bad_block = b;
            return CN_CORRUPT;
        }
        uint64_t lo = CN_MAX(off, s0), hi = CN_MIN(off + n, s1);
        if (lo >= hi)
            continue;
        if (lo == off && hi == off + n && crc == 0) {
            crc = c;   /* the first whole block (or all before it had crc 0) */
        } else if (lo == off && hi == off + n) {   /* the whole block is in the slice */
            if (full_shift == 0)
                full_shift = sn_crc32c_xpow8n(SN_RECORD_BLOCK);
            crc = n == SN_RECORD_BLOCK ? sn_crc32c_mulmod(full_shift, crc) ^ c
                                       : sn_crc32c_combine(crc, c, n);
        } else {
            crc = cn_crc32c(crc, buf + lo, (size_t)(hi - lo));
        }
    }
    *slice_crc = crc;
    return CN_OK;
}
