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
