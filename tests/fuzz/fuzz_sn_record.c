/* Fuzz target for the on-disk record parser: after a crash or a disk fault a
 * container file is outside input. The input is treated as the bytes of a
 * container after its file header: records are parsed one after another as
 * recovery and scrub do (fixed part, whole header, data blocks verified), and
 * a header that parses must describe itself consistently (with or without
 * the osize of protocol version 3). */
#include <stdint.h>
#include <string.h>

#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t off = 0;
    char err[CN_ERR_LEN];
    while (off < size) {
        struct sn_record_info ri;
        const uint8_t *p = data + off;
        size_t left = size - off;
        if (sn_record_parse(p, left, &ri, err) != CN_OK)
            break;
        CN_ASSERT(ri.hdr_len <= left);
        CN_ASSERT(ri.key + ri.key_len <= p + ri.hdr_len);
        CN_ASSERT(ri.crcs + 4 * (size_t)ri.n_blocks == p + ri.hdr_len);
        CN_ASSERT(ri.hdr_len == sn_record_hdr_len(ri.key_len, ri.meta_len, ri.etag_len,
                                                   ri.data_len) +
                                    (ri.has_osize ? SN_RECORD_OSIZE_LEN : 0));
        /* the on-disk osize flag is never a record flag, nor on a tombstone */
        CN_ASSERT((ri.flags & ~SN_RECORD_FLAG_TOMBSTONE) == 0);
        CN_ASSERT(!(ri.has_osize && (ri.flags & SN_RECORD_FLAG_TOMBSTONE)));
        if (ri.data_len > left - ri.hdr_len)
            break;   /* a torn tail */
        uint32_t bad = 0;
        int rc = sn_record_verify(&ri, 0, p + ri.hdr_len, ri.data_len, &bad);
        CN_ASSERT(rc == CN_OK || (rc == CN_CORRUPT && bad < ri.n_blocks));
        if (rc != CN_OK)
            break;
        off += ri.hdr_len + (size_t)ri.data_len;
    }
    return 0;
}
