/* The hybrid logical clock (see cn/hlc.h): one atomic u64, advanced by
 * compare-and-swap so every gateway worker thread shares it. */
#include "cn/hlc.h"

#include <pthread.h>
#include <stdlib.h>

#include "cn/time.h"

static struct cn_hlc cn_hlc_process;
static pthread_once_t cn_hlc_process_once = PTHREAD_ONCE_INIT;

void cn_hlc_init(struct cn_hlc *h, int64_t offset_us)
{
    atomic_init(&h->last, 0);
    h->offset_us = offset_us;
}

static void cn_hlc_process_init(void)
{
    const char *e = getenv("CAIRN_TEST_CLOCK_OFFSET_US");
    cn_hlc_init(&cn_hlc_process, e != NULL ? strtoll(e, NULL, 10) : 0);
}

struct cn_hlc *cn_hlc_default(void)
{
    pthread_once(&cn_hlc_process_once, cn_hlc_process_init);
    return &cn_hlc_process;
}

uint64_t cn_hlc_wall_us(const struct cn_hlc *h)
{
    uint64_t now = cn_time_now_us();
    if (h->offset_us < 0 && (uint64_t)-h->offset_us > now)
        return 0;
    return now + (uint64_t)h->offset_us;
}

/* Raises h->last to at least v; returns the value it then holds. */
static uint64_t cn_hlc_raise(struct cn_hlc *h, uint64_t v)
{
    uint64_t cur = atomic_load(&h->last);
    while (cur < v && !atomic_compare_exchange_weak(&h->last, &cur, v))
        ;
    return cur < v ? v : cur;
}

uint64_t cn_hlc_now(struct cn_hlc *h)
{
    uint64_t wall = cn_hlc_wall_us(h);
    uint64_t cur = atomic_load(&h->last);
    for (;;) {
        uint64_t next = wall > cur ? wall : cur + 1;
        if (atomic_compare_exchange_weak(&h->last, &cur, next))
            return next;
    }
}

void cn_hlc_observe(struct cn_hlc *h, uint64_t ts)
{
    uint64_t wall = cn_hlc_wall_us(h);
    if (ts > wall && ts - wall > CN_HLC_MAX_AHEAD_US)
        return;
    cn_hlc_raise(h, ts);
}

uint64_t cn_hlc_after(struct cn_hlc *h, uint64_t old)
{
    cn_hlc_observe(h, old);
    uint64_t ts = cn_hlc_now(h);
    /* `old` too far ahead to be observed: this one write still follows it */
    return ts > old || old == UINT64_MAX ? ts : old + 1;
}
