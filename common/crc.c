/* CRC32C over ISA-L and CRC32 over zlib, both in the standard (reflected,
 * inverted) form so values match AWS and RFC 3720 test vectors. */
#include "cn/crc.h"

#include <isa-l/crc.h>
#include <zlib.h>

uint32_t cn_crc32c(uint32_t crc, const void *buf, size_t len)
{
    /* crc32_iscsi() takes and returns the raw register, without the final
     * inversion, and an int length: invert around it and feed in pieces. */
    uint32_t reg = ~crc;
    const unsigned char *p = buf;
    while (len > 0) {
        int n = len > (1u << 30) ? (1 << 30) : (int)len;
        reg = crc32_iscsi((unsigned char *)p, n, reg);
        p += n;
        len -= (size_t)n;
    }
    return ~reg;
}

uint32_t cn_crc32(uint32_t crc, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    uLong c = crc;
    while (len > 0) {
        uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;
        c = crc32(c, p, n);
        p += n;
        len -= n;
    }
    return (uint32_t)c;
}

/* The Castagnoli polynomial, bit-reflected: bit 31 is x^0, bit 0 is x^31. */
#define CN_CRC32C_POLY 0x82f63b78u

/* a * b mod P, both reflected. */
static uint32_t cn_crc32c_mulmod(uint32_t a, uint32_t b)
{
    uint32_t p = 0;
    for (int i = 31; i >= 0; i--) {
        if (a & (1u << i))
            p ^= b;
        b = (b & 1) ? (b >> 1) ^ CN_CRC32C_POLY : b >> 1;   /* b *= x */
    }
    return p;
}

uint32_t cn_crc32c_shift_op(uint64_t len2)
{
    uint32_t r = 1u << 31, base = 1u << 23;   /* x^0, x^8 */
    for (; len2 > 0; len2 >>= 1) {
        if (len2 & 1)
            r = cn_crc32c_mulmod(r, base);
        base = cn_crc32c_mulmod(base, base);
    }
    return r;
}

uint32_t cn_crc32c_combine_op(uint32_t crc1, uint32_t crc2, uint32_t op)
{
    /* the pre- and post-inversions of both CRCs cancel out (as zlib's
     * crc32_combine relies on): only crc1's shift past B remains */
    return cn_crc32c_mulmod(crc1, op) ^ crc2;
}

uint32_t cn_crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t len2)
{
    return cn_crc32c_combine_op(crc1, crc2, cn_crc32c_shift_op(len2));
}
