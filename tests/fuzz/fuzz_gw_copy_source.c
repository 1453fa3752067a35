/* Fuzzes the one parser of x-amz-copy-source: whatever it accepts must be a
 * valid bucket name, a key of 1..1024 bytes that is valid UTF-8 without NUL,
 * and, when a version is given, 1..1024 bytes without NUL; the parse must be
 * deterministic (the access check and the copy see the same result). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "copy_source.h"
#include "s3_names.h"
#include "cn/rc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gw_copy_source a, b;
    const char *why_a, *why_b;
    enum gw_s3_err ea = gw_copy_source_parse((const char *)data, size, 1024, &a, &why_a);
    enum gw_s3_err eb = gw_copy_source_parse((const char *)data, size, 1024, &b, &why_b);
    if (ea != eb)
        abort();
    if (ea != GW_S3_OK)
        return 0;
    enum gw_s3_err kerr;
    if (a.bucket_len != b.bucket_len || memcmp(a.bucket, b.bucket, a.bucket_len) != 0 ||
        a.key_len != b.key_len || memcmp(a.key, b.key, a.key_len) != 0)
        abort();
    if (gw_s3_names_bucket_check(a.bucket, a.bucket_len) != CN_OK || a.key_len == 0 ||
        a.key_len > 1024 || gw_s3_names_key_check(a.key, a.key_len, &kerr) != CN_OK ||
        strlen(a.key) != a.key_len)
        abort();
    if (a.version_id != NULL &&
        (a.version_id_len == 0 || a.version_id_len > GW_COPY_SOURCE_VERSION_MAX ||
         strlen(a.version_id) != a.version_id_len))
        abort();
    gw_copy_source_fini(&a);
    gw_copy_source_fini(&b);
    return 0;
}
