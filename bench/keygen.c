/* Key generators (see keygen.h). */
#include "keygen.h"

#include <math.h>

#include "cn/rc.h"

#define BENCH_KEYGEN_PARETO_SHAPE 1.5

void bench_keygen_init(struct bench_keygen *g, const struct bench_keygen_spec *spec,
                       int id, int workers)
{
    g->kind = spec->kind;
    g->start = spec->start;
    g->n = spec->n;
    g->lo = 0;
    g->hi = spec->n;
    if (spec->kind == BENCH_KEYGEN_PARTITIONED) {
        /* as basho_bench: equal slices, the last worker takes the rest */
        int64_t range = spec->n / workers;
        g->lo = spec->start + range * id;
        g->hi = id == workers - 1 ? spec->start + spec->n : g->lo + range;
    }
}

int bench_keygen_next(struct bench_keygen *g, struct bench_rng *r, int64_t *key)
{
    switch (g->kind) {
    case BENCH_KEYGEN_UNIFORM:
        *key = g->start + (int64_t)bench_rng_below(r, (uint64_t)g->n);
        return CN_OK;
    case BENCH_KEYGEN_SEQUENTIAL:
    case BENCH_KEYGEN_PARTITIONED:
        if (g->lo >= g->hi)
            return CN_DONE;
        *key = g->lo++;
        return CN_OK;
    case BENCH_KEYGEN_PARETO: {
        /* basho_bench: trunc((U^(-1/shape) - 1) * mean * (shape - 1)) with
         * mean = N/5 and U in (0, 1] */
        double mean = (double)(g->n / 5 > 0 ? g->n / 5 : 1);
        double u = 1.0 - bench_rng_double(r);
        double v = (pow(u, -1.0 / BENCH_KEYGEN_PARETO_SHAPE) - 1.0) * mean *
                   (BENCH_KEYGEN_PARETO_SHAPE - 1.0);
        *key = v >= 9.0e18 ? INT64_MAX : (int64_t)v;
        return CN_OK;
    }
    }
    return CN_INVAL;
}

int64_t bench_keygen_limit(const struct bench_keygen_spec *spec)
{
    switch (spec->kind) {
    case BENCH_KEYGEN_UNIFORM:
    case BENCH_KEYGEN_PARTITIONED:
        return spec->start + spec->n;
    case BENCH_KEYGEN_SEQUENTIAL:
        return spec->n;
    case BENCH_KEYGEN_PARETO:
        return INT64_MAX;
    }
    return INT64_MAX;
}
