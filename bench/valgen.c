/* Value generator (see valgen.h). */
#include "valgen.h"

#include <string.h>

#include "cn/alloc.h"
#include "cn/rc.h"

/* Not a power of two, so bodies from nearby origins do not line up. */
#define BENCH_VALGEN_SRCLEN ((size_t)(4u << 20) + 4093)

void bench_valgen_init(struct bench_valgen *v, const struct bench_valgen_spec *spec,
                       uint64_t seed)
{
    memset(v, 0, sizeof(*v));
    v->spec = *spec;
    for (size_t i = 0; i < spec->ngroups; i++)
        v->total_weight += spec->groups[i].weight;
    v->srclen = BENCH_VALGEN_SRCLEN;
    v->src = cn_malloc(v->srclen);
    struct bench_rng r;
    bench_rng_init(&r, seed, 0x76616c7565ULL);
    size_t i = 0;
    for (; i + 8 <= v->srclen; i += 8) {
        uint64_t x = bench_rng_next(&r);
        memcpy(v->src + i, &x, 8);
    }
    for (; i < v->srclen; i++)
        v->src[i] = (unsigned char)bench_rng_next(&r);
}

void bench_valgen_fini(struct bench_valgen *v)
{
    cn_free(v->src);
    v->src = NULL;
}

int64_t bench_valgen_size(const struct bench_valgen *v, struct bench_rng *r)
{
    const struct bench_size_group *g = &v->spec.groups[0];
    if (v->spec.exp_mean > 0)
        return g->min + (int64_t)bench_rng_exp(r, (double)v->spec.exp_mean);
    if (v->spec.ngroups > 1) {
        uint64_t pick = bench_rng_below(r, v->total_weight);
        for (size_t i = 0; i < v->spec.ngroups; i++) {
            if (pick < v->spec.groups[i].weight) {
                g = &v->spec.groups[i];
                break;
            }
            pick -= v->spec.groups[i].weight;
        }
    }
    if (g->max == g->min)
        return g->min;
    return g->min + (int64_t)bench_rng_below(r, (uint64_t)(g->max - g->min) + 1);
}

uint64_t bench_valgen_origin(const struct bench_valgen *v, struct bench_rng *r)
{
    return bench_rng_below(r, v->srclen);
}

void bench_valgen_fill(const struct bench_valgen *v, uint64_t origin, uint64_t pos,
                       void *dst, size_t n)
{
    unsigned char *out = dst;
    size_t at = (size_t)((origin + pos) % v->srclen);
    while (n > 0) {
        size_t chunk = CN_MIN(n, v->srclen - at);
        memcpy(out, v->src + at, chunk);
        out += chunk;
        n -= chunk;
        at = 0;
    }
}

int bench_valgen_compare(const struct bench_valgen *v, uint64_t origin, uint64_t pos,
                         const void *buf, size_t n)
{
    const unsigned char *in = buf;
    size_t at = (size_t)((origin + pos) % v->srclen);
    while (n > 0) {
        size_t chunk = CN_MIN(n, v->srclen - at);
        if (memcmp(in, v->src + at, chunk) != 0)
            return 1;
        in += chunk;
        n -= chunk;
        at = 0;
    }
    return 0;
}

int64_t bench_valgen_min_size(const struct bench_valgen *v)
{
    int64_t m = INT64_MAX;
    for (size_t i = 0; i < v->spec.ngroups; i++)
        if (v->spec.groups[i].weight > 0 && v->spec.groups[i].min < m)
            m = v->spec.groups[i].min;
    return m == INT64_MAX ? 0 : m;
}
