/* The integrity option: remembers, per key, the MD5, size and body origin of
 * the last PUT that succeeded, and judges each GET against it. Writers in
 * flight and versions make the verdict honest under concurrency: a GET that
 * raced a PUT or DELETE of its key may see either version, and when it
 * matches neither it is "unverifiable", not an error. Keys at or beyond the
 * table size are not tracked. Thread-safe (striped mutexes; off the latency
 * path, which records no lock). */
#ifndef BENCH_INTEGRITY_H
#define BENCH_INTEGRITY_H

#include <stdint.h>

enum bench_integrity_state {
    BENCH_INTEGRITY_UNKNOWN = 0,  /* never written, or a write failed midway */
    BENCH_INTEGRITY_PRESENT,
    BENCH_INTEGRITY_DELETED,
};

/* What a reader saw of a key when its GET started (or now). */
struct bench_integrity_snap {
    int tracked;
    enum bench_integrity_state state;
    unsigned char md5[16];
    int64_t size;
    uint64_t origin;
    uint32_t version;
    uint32_t writers;
};

enum bench_integrity_verdict {
    BENCH_INTEGRITY_OK,
    BENCH_INTEGRITY_MISMATCH,     /* body differs from the last PUT */
    BENCH_INTEGRITY_MISSING,      /* 404 for a key that was written */
    BENCH_INTEGRITY_UNVERIFIABLE, /* raced a write, or nothing known */
};

struct bench_integrity;

/* A table for keys [0, limit) (at most 2^24 of them; calloc'ed lazily by the
 * kernel, so untouched keys cost nothing). */
struct bench_integrity *bench_integrity_new(int64_t limit);
void bench_integrity_free(struct bench_integrity *t);

void bench_integrity_peek(struct bench_integrity *t, int64_t key,
                          struct bench_integrity_snap *snap);

/* A PUT or DELETE of key starts; must be followed by one _end. */
void bench_integrity_write_begin(struct bench_integrity *t, int64_t key);
/* ok: the write succeeded. For a PUT md5/size/origin describe the body;
 * deleted marks a DELETE. */
void bench_integrity_write_end(struct bench_integrity *t, int64_t key, int ok, int deleted,
                               const unsigned char md5[16], int64_t size, uint64_t origin);

/* Judges a full GET: before is the snap taken when it started; md5/size
 * what came back, or not_found for a 404. */
enum bench_integrity_verdict bench_integrity_judge(struct bench_integrity *t, int64_t key,
                                                   const struct bench_integrity_snap *before,
                                                   int not_found, const unsigned char md5[16],
                                                   int64_t size);

/* Judges a ranged GET whose bytes were compared as they came: same_bytes is
 * 1 when every byte matched the body of `before`. */
enum bench_integrity_verdict bench_integrity_judge_range(struct bench_integrity *t, int64_t key,
                                                         const struct bench_integrity_snap *before,
                                                         int not_found, int same_bytes);

#endif
