/* Fuzzes the response-* overrides: the input is a query string, split and
 * percent-decoded as the router does; every value the parser accepts is
 * written through the same header check as a reply would be, and must hold
 * no byte that could end a header line. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_query.h"
#include "http_req.h"
#include "s3_overrides.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fuzz_query fq;
    fuzz_query_split(&fq, data, size);
    struct gw_s3_overrides o;
    const char *why;
    if (gw_s3_overrides_parse(fq.params, fq.n, &o, &why) != GW_S3_OK)
        return 0;
    for (int k = 0; k < GW_S3_OVR_N; k++) {
        if (o.value[k] == NULL)
            continue;
        for (size_t i = 0; i < o.len[k]; i++)
            if (o.value[k][i] == '\r' || o.value[k][i] == '\n' || o.value[k][i] == '\0')
                abort();
        if (!gw_http_field_value_ok(o.value[k], o.len[k]))
            abort();
    }
    return 0;
}
