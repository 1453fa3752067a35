/* The fuzz targets' query string: split at '&' and '=' and percent-decoded
 * as the router does (s3_names.h), into at most FUZZ_QUERY_MAX parameters
 * of names and values under 512 bytes (longer ones, or ones that do not
 * decode, are dropped). */
#ifndef FUZZ_QUERY_H
#define FUZZ_QUERY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "request.h"
#include "s3_names.h"
#include "cn/rc.h"

#define FUZZ_QUERY_MAX 16

struct fuzz_query {
    struct gw_req_param params[FUZZ_QUERY_MAX];
    char store[FUZZ_QUERY_MAX][2][512];
    size_t n;
};

static inline void fuzz_query_split(struct fuzz_query *fq, const uint8_t *data, size_t size)
{
    fq->n = 0;
    const char *q = (const char *)data, *end = q + size;
    while (q < end && fq->n < FUZZ_QUERY_MAX) {
        const char *amp = memchr(q, '&', (size_t)(end - q));
        const char *e = amp != NULL ? amp : end;
        const char *eq = memchr(q, '=', (size_t)(e - q));
        const char *ne = eq != NULL ? eq : e;
        const char *v = eq != NULL ? eq + 1 : e;
        struct gw_req_param *p = &fq->params[fq->n];
        char *name = fq->store[fq->n][0], *value = fq->store[fq->n][1];
        if ((size_t)(ne - q) < 512 && (size_t)(e - v) < 512 &&
            gw_s3_names_uri_decode(q, (size_t)(ne - q), name, &p->name_len, 1) == CN_OK &&
            gw_s3_names_uri_decode(v, (size_t)(e - v), value, &p->value_len, 1) == CN_OK) {
            p->name = name;
            p->value = value;
            p->name[p->name_len] = '\0';
            p->value[p->value_len] = '\0';
            p->has_value = eq != NULL;
            fq->n++;
        }
        q = e + 1;
    }
}

#endif
