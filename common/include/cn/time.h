/* Clocks: wall time for record timestamps, monotonic time for timeouts. */
#ifndef CN_TIME_H
#define CN_TIME_H

#include <stdint.h>

/* Microseconds since the Unix epoch (CLOCK_REALTIME). */
uint64_t cn_time_now_us(void);
/* Microseconds of CLOCK_MONOTONIC; only differences mean anything. */
uint64_t cn_time_mono_us(void);

#endif
