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

/* CRC32C of A || B from crc1 = CRC32C(A), crc2 = CRC32C(B) and len2 = |B|,
 * without the bytes (so a value whose block CRCs are known is checked
 * against a whole-value CRC without a second pass over it). The shift by
 * len2 bytes is an operator, x^(8 len2) mod P: compute it once with
 * cn_crc32c_shift_op() to combine many blocks of one length. */
uint32_t cn_crc32c_shift_op(uint64_t len2);
uint32_t cn_crc32c_combine_op(uint32_t crc1, uint32_t crc2, uint32_t op);
uint32_t cn_crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t len2);

#endif
