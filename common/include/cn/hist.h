/* HDR-style log-linear histogram of unsigned 64-bit values (latencies in
 * microseconds, sizes in bytes). Values below 256 are exact; above, each
 * power of two is cut into 128 buckets, so any value is kept within 0.8 %.
 * Recording never allocates and takes no lock: give each thread its own
 * histogram and merge them (cn_hist_merge) where the totals are needed. */
#ifndef CN_HIST_H
#define CN_HIST_H

#include <stdint.h>

struct cn_hist;

/* A histogram that tracks values up to max_value exactly (larger values are
 * counted in the last bucket; min, max, mean and count stay exact). Aborts on
 * OOM; free with cn_hist_free(). */
struct cn_hist *cn_hist_new(uint64_t max_value);
void cn_hist_free(struct cn_hist *h);

/* Adds one value (or n copies). O(1), no allocation, no lock. */
void cn_hist_record(struct cn_hist *h, uint64_t value);
void cn_hist_record_n(struct cn_hist *h, uint64_t value, uint64_t n);

/* Empties h; cost is proportional to the buckets in use. */
void cn_hist_reset(struct cn_hist *h);

/* Adds every value of src to dst. Both must have the same max_value;
 * returns CN_INVAL (dst unchanged) otherwise. */
int cn_hist_merge(struct cn_hist *dst, const struct cn_hist *src);

uint64_t cn_hist_count(const struct cn_hist *h);
uint64_t cn_hist_min(const struct cn_hist *h);   /* 0 when empty */
uint64_t cn_hist_max(const struct cn_hist *h);   /* 0 when empty */
double cn_hist_mean(const struct cn_hist *h);    /* 0.0 when empty */

/* The value at percentile p (0..100) by nearest rank: the smallest recorded
 * value v such that at least p % of the values are <= v, reported as the
 * highest value of its bucket but never outside [min, max]. 0 when empty. */
uint64_t cn_hist_percentile(const struct cn_hist *h, double p);

/* Checks the internal invariants (counts add up, min/max inside the used
 * buckets). Returns CN_OK or CN_CORRUPT; for unit tests. */
int cn_hist_validate(const struct cn_hist *h);

/* Bucket arithmetic, exposed for tests: the bucket index of a value and the
 * lowest and highest value that share its bucket. */
uint32_t cn_hist_bucket_of(uint64_t value);
uint64_t cn_hist_bucket_low(uint32_t idx);
uint64_t cn_hist_bucket_high(uint32_t idx);

#endif
