/* Fuzzes versioning's parsers of outside input (versioning.c): the first
 * byte picks the PutBucketVersioning body, a versionId, or a stored version
 * key; the rest is the input. A versionId that passes must be exactly
 * "null" or 32 lower-case hex, and a key that splits must build back into
 * the same bytes. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cn/rc.h"
#include "versioning.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_gw_versioning_key(const char *k, size_t len)
{
    const char *key;
    size_t key_len;
    char id[GW_VERSIONING_ID_MAX];
    uint64_t ts;
    if (len > GW_VERSIONING_KEY_MAX || len < 6 || memcmp(k, "v/bkt/", 6) != 0)
        return;
    if (gw_versioning_key_split(k, len, 6, &key, &key_len, id, &ts) != 0 || key_len > 1024)
        return;
    CN_ASSERT(gw_versioning_id_check(id, strlen(id)) != 0);
    char back[GW_VERSIONING_KEY_MAX];
    size_t n = gw_versioning_key(back, "bkt", 3, key, key_len, id, ts);
    CN_ASSERT(n == len && memcmp(back, k, n) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *in = (const char *)data + 1;
    size_t len = size - 1;
    enum gw_versioning_state st;
    switch (data[0] % 3) {
    case 0:
        if (gw_versioning_parse_xml(in, len, &st) == GW_S3_OK)
            CN_ASSERT(st == GW_VERSIONING_OFF || gw_versioning_state_str(st) != NULL);
        break;
    case 1: {
        int kind = gw_versioning_id_check(in, len);
        CN_ASSERT(kind == 0 || (kind == 1 && len == 4) || (kind == 2 && len == 32));
        if (kind == 2) {
            char id[GW_VERSIONING_ID_MAX];
            memcpy(id, in, 32);
            id[32] = '\0';
            (void)gw_versioning_id_ts(id);
        }
        break;
    }
    default:
        fuzz_gw_versioning_key(in, len);
        break;
    }
    return 0;
}
