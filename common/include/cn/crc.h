/* Checksums. CRC32C (Castagnoli) protects every block on disk and every slice
 * on the wire; it comes from Intel ISA-L (crc32_iscsi, SSE4.2/PCLMUL
 * accelerated). CRC32 (the zlib/IEEE one) is what S3's x-amz-checksum-crc32
 * uses and comes from zlib. Both take the previous value to continue a stream;
 * start with 0. */
#ifndef CN_CRC_H
#define CN_CRC_H

#include <stddef.h>
#include <stdint.h>

uint32_t cn_crc32c(uint32_t crc, const void *buf, size_t len);
uint32_t cn_crc32(uint32_t crc, const void *buf, size_t len);

#endif
