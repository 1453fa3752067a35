/* The hybrid logical clock that stamps record versions (cn/version.h).
 * A timestamp is a u64 on the microsecond scale, as record `ts` always was:
 * the next timestamp is max(wall µs, last issued + 1, newest observed + 1),
 * so the logical part of the HLC lives in the low microseconds (one tick =
 * 1 µs) and a timestamp stays within the clocks' skew of real time. Every
 * timestamp a gateway reads from a node is observed, so a write that follows
 * a read is stamped after what was read even when this machine's clock runs
 * behind the one that wrote it. docs/cluster.md "Version order". */
#ifndef CN_HLC_H
#define CN_HLC_H

#include <stdatomic.h>
#include <stdint.h>

/* An observed timestamp more than this far ahead of the local wall clock
 * does not move the clock (a corrupt or absurd record must not drag every
 * later write into the far future); 1 hour. A write that replaces such a
 * record is still stamped after it (cn_hlc_after). */
#define CN_HLC_MAX_AHEAD_US (3600ull * 1000000)

struct cn_hlc {
    _Atomic uint64_t last;  /* the newest timestamp issued or observed */
    int64_t offset_us;      /* added to the wall clock (tests only) */
};

/* Starts a clock at 0 with the wall clock shifted by offset_us (0 but in
 * tests). Lock-free; any thread may call the functions below. */
void cn_hlc_init(struct cn_hlc *h, int64_t offset_us);

/* The process's clock, made on first use, its offset taken from the
 * environment variable CAIRN_TEST_CLOCK_OFFSET_US (signed µs; test-only:
 * it simulates a machine whose clock is off, docs/config.md). */
struct cn_hlc *cn_hlc_default(void);

/* The wall clock as this clock sees it (with its offset), µs. */
uint64_t cn_hlc_wall_us(const struct cn_hlc *h);

/* A new timestamp: greater than every timestamp h issued or observed, and
 * at least the wall clock. */
uint64_t cn_hlc_now(struct cn_hlc *h);

/* A new timestamp for a write that replaces a version stamped `old`:
 * cn_hlc_now() observed after `old`, so it is greater than `old` too (the
 * pattern "max(now, old + 1)" of every overwrite). */
uint64_t cn_hlc_after(struct cn_hlc *h, uint64_t old);

/* Records a timestamp read from a node: later timestamps are greater (unless
 * it is more than CN_HLC_MAX_AHEAD_US ahead of the wall clock). */
void cn_hlc_observe(struct cn_hlc *h, uint64_t ts);

#endif
