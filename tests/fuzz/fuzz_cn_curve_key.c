/* Fuzzes the CURVE key-file and allow-list parsers (cn/curve_key.h): any
 * buffer either parses, and then every key found is valid Z85 and is found
 * again in the set, or is refused with an error message. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cn/curve_key.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cn_curve_key k;
    struct cn_curve_keyset *s = NULL;
    char err[CN_ERR_LEN] = "";
    int rc = cn_curve_key_parse((const char *)data, size, "fuzz", &k, err);
    if (rc == CN_OK) {
        if (strlen(k.z85) != CN_CURVE_KEY_LEN || !cn_curve_key_valid(k.z85, CN_CURVE_KEY_LEN))
            abort();
    } else if (err[0] == '\0') {
        abort();
    }
    err[0] = '\0';
    rc = cn_curve_keyset_parse((const char *)data, size, "fuzz", &s, err);
    if (rc != CN_OK) {
        if (s != NULL || err[0] == '\0')
            abort();
        return 0;
    }
    /* a buffer that holds one key parses as a set that holds it */
    if (cn_curve_key_parse((const char *)data, size, "fuzz", &k, err) == CN_OK &&
        (cn_curve_keyset_count(s) != 1 || !cn_curve_keyset_has(s, k.z85, CN_CURVE_KEY_LEN)))
        abort();
    cn_curve_keyset_free(s);
    return 0;
}
