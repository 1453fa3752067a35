/* Fuzzes the bucket-record meta decoder: the first byte is the etag's
 * length (the owner id, at most 64), then the etag, then the meta. Whatever
 * decodes must encode, and decode again to the same fields. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bucket_meta.h"
#include "cn/alloc.h"
#include "cn/rc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || (size_t)data[0] + 1 > size)
        return 0;
    const char *etag = (const char *)data + 1;
    size_t etag_len = data[0];
    const uint8_t *meta = data + 1 + etag_len;
    size_t meta_len = size - 1 - etag_len;
    struct gw_bucket_meta m;
    if (gw_bucket_meta_decode(&m, meta, meta_len, etag, etag_len) != CN_OK)
        return 0;
    if (m.region_len == 0)
        m.region = "r", m.region_len = 1;   /* as the gateway fills an empty legacy region */
    char *buf;
    size_t len;
    if (gw_bucket_meta_encode(&m, &buf, &len) != CN_OK)
        return 0;
    struct gw_bucket_meta d;
    if (gw_bucket_meta_decode(&d, buf, len, etag, etag_len) != CN_OK || d.legacy ||
        d.n_configs != m.n_configs || !gw_bucket_incarnation_eq(&d.inc, &m.inc) ||
        d.region_len != m.region_len || memcmp(d.region, m.region, m.region_len) != 0)
        abort();
    for (size_t i = 0; i < m.n_configs; i++) {
        char name[GW_BUCKET_META_NAME_MAX + 1];
        memcpy(name, m.configs[i].name, m.configs[i].name_len);
        name[m.configs[i].name_len] = '\0';
        const struct gw_bucket_meta_config *c = gw_bucket_meta_config(&d, name);
        if (c == NULL || c->value_len != m.configs[i].value_len ||
            memcmp(c->value, m.configs[i].value, c->value_len) != 0)
            abort();
    }
    cn_free(buf);
    return 0;
}
