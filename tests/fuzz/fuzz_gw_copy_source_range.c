/* Fuzzes UploadPartCopy's x-amz-copy-source-range parser: the first 8 input
 * bytes are the source size (little-endian), the rest the header value.
 * Whatever it accepts lies inside the source (first <= last < size) and
 * reads back the same when printed in the canonical form; the parse is
 * deterministic, and a refusal is InvalidArgument or InvalidRange only. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy_source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t src = 0;
    if (size >= 8) {
        for (int i = 7; i >= 0; i--)
            src = (src << 8) | data[i];
        data += 8;
        size -= 8;
    }
    uint64_t f1 = 0, l1 = 0, f2 = 0, l2 = 0;
    const char *why1, *why2;
    enum gw_s3_err e1 = gw_copy_source_range_parse((const char *)data, size, src, &f1, &l1, &why1);
    enum gw_s3_err e2 = gw_copy_source_range_parse((const char *)data, size, src, &f2, &l2, &why2);
    if (e1 != e2 || (e1 == GW_S3_OK && (f1 != f2 || l1 != l2)))
        abort();
    if (e1 != GW_S3_OK && e1 != GW_S3_INVALID_ARGUMENT && e1 != GW_S3_INVALID_RANGE)
        abort();
    if (e1 != GW_S3_OK)
        return 0;
    if (f1 > l1 || l1 >= src)
        abort();
    char canon[64];
    int n = snprintf(canon, sizeof(canon), "bytes=%" PRIu64 "-%" PRIu64, f1, l1);
    if (gw_copy_source_range_parse(canon, (size_t)n, src, &f2, &l2, &why2) != GW_S3_OK ||
        f2 != f1 || l2 != l1)
        abort();
    return 0;
}
