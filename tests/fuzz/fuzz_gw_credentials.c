/* Fuzzes the credentials file parser: any buffer either loads into a table
 * whose every entry obeys the documented field rules and can be found by
 * its access key, or is refused with an error message. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "credentials.h"
#include "cn/rc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gw_credentials *c = NULL;
    char err[CN_ERR_LEN];
    int rc = gw_credentials_load_buf((const char *)data, size, "fuzz", &c, err);
    if (rc != CN_OK) {
        if (c != NULL || err[0] == '\0')
            abort();
        return 0;
    }
    size_t n = gw_credentials_count(c);
    if (n == 0)
        abort();
    for (size_t i = 0; i < n; i++) {
        const struct gw_cred *e = gw_credentials_at(c, i);
        if (e->access_key_len < 3 || e->access_key_len > 128 || e->secret_key_len < 1 ||
            e->secret_key_len > 128 || strlen(e->owner_id) < 1 || strlen(e->owner_id) > 64 ||
            strlen(e->display_name) < 1 || strlen(e->display_name) > 64)
            abort();
        if (gw_credentials_find(c, e->access_key, e->access_key_len) != e)
            abort();
    }
    gw_credentials_free(c);
    return 0;
}
