/* Key generators of basho_bench, one state per worker: uniform_int,
 * sequential_int (each worker walks 0..N-1), partitioned_sequential_int (the
 * workers share the range), pareto_int (basho's formula: Lomax with mean
 * N/5 and shape 1.5, not capped at N). */
#ifndef BENCH_KEYGEN_H
#define BENCH_KEYGEN_H

#include <stdint.h>

#include "rng.h"
#include "settings.h"

struct bench_keygen {
    enum bench_keygen_kind kind;
    int64_t lo, hi;             /* next key and end (exclusive) for sequences */
    int64_t start, n;
};

/* State for worker `id` (0-based) of `workers`. */
void bench_keygen_init(struct bench_keygen *g, const struct bench_keygen_spec *spec,
                       int id, int workers);

/* The next key in *key: CN_OK, or CN_DONE when a sequence is exhausted. */
int bench_keygen_next(struct bench_keygen *g, struct bench_rng *r, int64_t *key);

/* Upper bound (exclusive) on the keys it can give, for sizing tables;
 * INT64_MAX for pareto_int. */
int64_t bench_keygen_limit(const struct bench_keygen_spec *spec);

#endif
