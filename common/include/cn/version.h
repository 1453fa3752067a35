/* The order of record versions. Every write carries (ts, ver): the gateway's
 * hybrid-logical-clock microseconds (cn/hlc.h) and a tie-breaker. A node applies a write only when
 * it is newer than what it holds, and readers, repair and listings pick the
 * newest copy by the same rule, so it lives here once. */
#ifndef CN_VERSION_H
#define CN_VERSION_H

#include <stdint.h>

/* Compares (ts, ver) with (ts2, ver2): ts first, ver breaks a tie. Returns
 * 1 when the first is newer, -1 when it is older, 0 when they are equal. */
int cn_version_cmp(uint64_t ts, uint64_t ver, uint64_t ts2, uint64_t ver2);

/* Is (ts, ver) strictly newer than (ts2, ver2)? Equal is not newer. */
int cn_version_newer(uint64_t ts, uint64_t ver, uint64_t ts2, uint64_t ver2);

#endif
