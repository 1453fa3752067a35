/* Clock helpers over clock_gettime(). */
#include "cn/time.h"

#include <time.h>

static uint64_t cn_time_read_us(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t cn_time_now_us(void)
{
    return cn_time_read_us(CLOCK_REALTIME);
}

uint64_t cn_time_mono_us(void)
{
    return cn_time_read_us(CLOCK_MONOTONIC);
}
