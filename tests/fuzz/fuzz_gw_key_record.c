/* Fuzzes the cluster key record decoder and opener: the first byte is the
 * AKID's length, then the AKID, then the record's data. Whatever decodes
 * and opens must seal again and decode/open to the same fields (a
 * restricted key's list and flag included). The same bytes are also read
 * as an account record (account_record.h) for the id given, which must
 * encode again to a record that decodes to the same fields. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/rc.h"
#include "account_record.h"
#include "key_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const unsigned char gw_fuzz_mk[GW_KEY_MASTER_LEN] = {7};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || (size_t)data[0] + 1 > size)
        return 0;
    const char *akid = (const char *)data + 1;
    size_t akid_len = data[0];
    struct gw_key_record k, d;
    char err[CN_ERR_LEN];
    struct gw_account_record a, b;
    if (gw_account_record_decode(&a, data + 1 + akid_len, size - 1 - akid_len, akid, akid_len,
                                 err) == CN_OK) {
        char *abuf;
        size_t alen;
        if (gw_account_record_encode(&a, &abuf, &alen, err) != CN_OK ||
            gw_account_record_decode(&b, abuf, alen, akid, akid_len, err) != CN_OK ||
            memcmp(&a, &b, sizeof(a)) != 0)
            __builtin_trap();
        cn_free(abuf);
    }
    if (gw_key_record_decode(&k, data + 1 + akid_len, size - 1 - akid_len, akid, akid_len,
                             err) != CN_OK)
        return 0;
    if (gw_key_record_open(&k, gw_fuzz_mk, err) != CN_OK)
        return 0;
    char *buf;
    size_t len;
    if (gw_key_record_seal(&k, gw_fuzz_mk, &buf, &len, err) != CN_OK)
        __builtin_trap();
    if (gw_key_record_decode(&d, buf, len, akid, akid_len, err) != CN_OK ||
        gw_key_record_open(&d, gw_fuzz_mk, err) != CN_OK || strcmp(d.secret, k.secret) != 0 ||
        strcmp(d.owner, k.owner) != 0 || strcmp(d.name, k.name) != 0 ||
        d.created_us != k.created_us || d.restricted != k.restricted ||
        (k.restricted && memcmp(&d.limits, &k.limits, sizeof(k.limits)) != 0))
        __builtin_trap();
    cn_free(buf);
    return 0;
}
