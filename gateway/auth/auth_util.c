/* Shared by the SigV4 and SigV2 verifiers: see auth_util.h. */
#include "auth_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cn/rc.h"

int gw_auth_fail(struct gw_sigv4_result *res, enum gw_s3_err err, const char *fmt, ...)
{
    res->err = err;
    res->message[0] = '\0';
    if (fmt != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(res->message, sizeof(res->message), fmt, ap);
        va_end(ap);
    }
    return CN_INVAL;
}

int gw_auth_ieq(const char *a, size_t an, const char *b)
{
    size_t bn = strlen(b);
    return an == bn && strncasecmp(a, b, an) == 0;
}

const struct gw_sigv4_header *gw_auth_header(const struct gw_sigv4_request *req,
                                             const char *name)
{
    for (size_t i = 0; i < req->n_headers; i++)
        if (gw_auth_ieq(req->headers[i].name, req->headers[i].name_len, name))
            return &req->headers[i];
    return NULL;
}

int gw_auth_each_param(const char *q, size_t len, gw_auth_param_cb fn, void *arg)
{
    const char *p = q, *end = q + len;
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *pe = amp != NULL ? amp : end;
        if (pe > p) {
            const char *eq = memchr(p, '=', (size_t)(pe - p));
            const char *ne = eq != NULL ? eq : pe;
            const char *v = eq != NULL ? eq + 1 : pe;
            int rc = fn(arg, p, (size_t)(ne - p), v, (size_t)(pe - v), eq != NULL);
            if (rc != CN_OK)
                return rc;
        }
        p = amp != NULL ? amp + 1 : end;
    }
    return CN_OK;
}
