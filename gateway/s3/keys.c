/* Storage keys of buckets and objects (see keys.h and docs/gateway.md). */
#include "keys.h"

#include <string.h>

#include "cn/rc.h"

size_t gw_keys_bucket(char *out, const char *bucket, size_t bucket_len)
{
    CN_ASSERT(bucket_len <= 63);
    memcpy(out, "b/", 2);
    memcpy(out + 2, bucket, bucket_len);
    return 2 + bucket_len;
}

size_t gw_keys_object_prefix(char *out, const char *bucket, size_t bucket_len)
{
    CN_ASSERT(bucket_len <= 63);
    memcpy(out, "o/", 2);
    memcpy(out + 2, bucket, bucket_len);
    out[2 + bucket_len] = '/';
    return 3 + bucket_len;
}

size_t gw_keys_object(char *out, const char *bucket, size_t bucket_len, const char *key,
                      size_t key_len)
{
    CN_ASSERT(key_len <= 1024);
    size_t n = gw_keys_object_prefix(out, bucket, bucket_len);
    memcpy(out + n, key, key_len);
    return n + key_len;
}
