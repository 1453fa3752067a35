/* Per-worker pseudo-random numbers (xoshiro256**, seeded by splitmix64):
 * fast, lock-free because each worker owns its state, and reproducible from
 * the run's seed. */
#ifndef BENCH_RNG_H
#define BENCH_RNG_H

#include <math.h>
#include <stdint.h>

struct bench_rng {
    uint64_t s[4];
};

static inline uint64_t bench_rng_splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Seeds from (seed, stream): different streams give independent sequences. */
static inline void bench_rng_init(struct bench_rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * 0xd1342543de82ef95ULL);
    for (int i = 0; i < 4; i++)
        r->s[i] = bench_rng_splitmix(&x);
}

static inline uint64_t bench_rng_next(struct bench_rng *r)
{
    uint64_t *s = r->s;
    uint64_t x = s[1] * 5;
    uint64_t result = ((x << 7) | (x >> 57)) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
}

/* Uniform in [0, n) without modulo bias (Lemire); n > 0. */
static inline uint64_t bench_rng_below(struct bench_rng *r, uint64_t n)
{
    unsigned __int128 m = (unsigned __int128)bench_rng_next(r) * n;
    uint64_t lo = (uint64_t)m;
    if (lo < n) {
        uint64_t thresh = -n % n;
        while (lo < thresh) {
            m = (unsigned __int128)bench_rng_next(r) * n;
            lo = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

/* Uniform in [0, 1). */
static inline double bench_rng_double(struct bench_rng *r)
{
    return (double)(bench_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Exponentially distributed with the given mean. */
static inline double bench_rng_exp(struct bench_rng *r, double mean)
{
    return -mean * log(1.0 - bench_rng_double(r));
}

#endif
