/* Fuzzes the response-* overrides: the input is a query string, split and
 * percent-decoded as the router does; every value the parser accepts is
 * written through the same header check as a reply would be, and must hold
 * no byte that could end a header line. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http_req.h"
#include "request.h"
#include "s3_names.h"
#include "s3_overrides.h"
#include "cn/rc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gw_req_param params[16];
    char store[16][2][512];
    size_t n = 0;
    const char *q = (const char *)data, *end = q + size;
    while (q < end && n < 16) {
        const char *amp = memchr(q, '&', (size_t)(end - q));
        const char *e = amp != NULL ? amp : end;
        const char *eq = memchr(q, '=', (size_t)(e - q));
        const char *ne = eq != NULL ? eq : e;
        const char *v = eq != NULL ? eq + 1 : e;
        struct gw_req_param *p = &params[n];
        if ((size_t)(ne - q) < 512 && (size_t)(e - v) < 512 &&
            gw_s3_names_uri_decode(q, (size_t)(ne - q), store[n][0], &p->name_len, 1) == CN_OK &&
            gw_s3_names_uri_decode(v, (size_t)(e - v), store[n][1], &p->value_len, 1) == CN_OK) {
            p->name = store[n][0];
            p->value = store[n][1];
            p->name[p->name_len] = '\0';
            p->value[p->value_len] = '\0';
            p->has_value = eq != NULL;
            n++;
        }
        q = e + 1;
    }
    struct gw_s3_overrides o;
    const char *why;
    if (gw_s3_overrides_parse(params, n, &o, &why) != GW_S3_OK)
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
