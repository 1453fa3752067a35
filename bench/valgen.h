/* Value generator: the size of each PUT body (fixed_bin, uniform_bin,
 * exponential_bin, weighted value_size_groups) and its bytes. Bodies are
 * windows into one shared block of random bytes, read cyclically from a
 * random offset, so a body of any size costs no memory and the bytes of any
 * stored object can be regenerated to check a ranged read. */
#ifndef BENCH_VALGEN_H
#define BENCH_VALGEN_H

#include <stddef.h>
#include <stdint.h>

#include "rng.h"
#include "settings.h"

struct bench_valgen {
    struct bench_valgen_spec spec;
    uint64_t total_weight;
    unsigned char *src;         /* srclen random bytes, read only once built */
    size_t srclen;
};

/* Builds the source block from seed; free with bench_valgen_fini(). */
void bench_valgen_init(struct bench_valgen *v, const struct bench_valgen_spec *spec,
                       uint64_t seed);
void bench_valgen_fini(struct bench_valgen *v);

/* The size of the next body. Safe from many threads (each its own rng). */
int64_t bench_valgen_size(const struct bench_valgen *v, struct bench_rng *r);

/* A starting offset into the source for a new body. */
uint64_t bench_valgen_origin(const struct bench_valgen *v, struct bench_rng *r);

/* Copies bytes [pos, pos+n) of the body that starts at `origin` to dst. */
void bench_valgen_fill(const struct bench_valgen *v, uint64_t origin, uint64_t pos,
                       void *dst, size_t n);

/* 0 when buf holds bytes [pos, pos+n) of that body, else nonzero. */
int bench_valgen_compare(const struct bench_valgen *v, uint64_t origin, uint64_t pos,
                         const void *buf, size_t n);

/* The smallest size it can give (what range_get assumes when it does not
 * know the object). */
int64_t bench_valgen_min_size(const struct bench_valgen *v);

#endif
