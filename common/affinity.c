/* CPU lists and process affinity (cn/affinity.h). */
#include "cn/affinity.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *cn_cpu_skip_blanks(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* One decimal CPU number at *pp, below CPU_SETSIZE; -1 when there is none
 * or it is too large. Advances *pp past it. */
static long cn_cpu_number(const char **pp)
{
    const char *p = *pp;
    long v = 0;
    if (*p < '0' || *p > '9')
        return -1;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (*p - '0');
        if (v >= CPU_SETSIZE)
            return -1;
        p++;
    }
    *pp = p;
    return v;
}

int cn_cpu_list_parse(const char *s, cpu_set_t *set, char err[CN_ERR_LEN])
{
    CPU_ZERO(set);
    const char *p = cn_cpu_skip_blanks(s);
    if (*p == '\0')
        return CN_OK;
    for (;;) {
        p = cn_cpu_skip_blanks(p);
        long lo = cn_cpu_number(&p);
        if (lo < 0)
            goto bad;
        long hi = lo;
        if (*p == '-') {
            p++;
            hi = cn_cpu_number(&p);
            if (hi < lo)
                goto bad;
        }
        for (long c = lo; c <= hi; c++)
            CPU_SET((size_t)c, set);
        p = cn_cpu_skip_blanks(p);
        if (*p == '\0')
            return CN_OK;
        if (*p != ',')
            goto bad;
        p++;
    }
bad:
    snprintf(err, CN_ERR_LEN, "bad CPU list \"%.64s\" (want e.g. 0, 0-3 or 0,2,4-7, "
             "each below %d)", s, CPU_SETSIZE);
    CPU_ZERO(set);
    return CN_INVAL;
}

int cn_cpu_affinity_apply(const char *s, char err[CN_ERR_LEN])
{
    cpu_set_t set;
    int rc = cn_cpu_list_parse(s, &set, err);
    if (rc != CN_OK || CPU_COUNT(&set) == 0)
        return rc;
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
        snprintf(err, CN_ERR_LEN, "cannot run on CPUs \"%.64s\": %s", s, strerror(errno));
        return CN_ERR;
    }
    return CN_OK;
}
