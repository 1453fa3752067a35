/* The one ordering of record versions (cn/version.h): storage nodes, the
 * gateway's reads, repairs and listings, and the admin repair all use it. */
#include "cn/version.h"

int cn_version_cmp(uint64_t ts, uint64_t ver, uint64_t ts2, uint64_t ver2)
{
    if (ts != ts2)
        return ts > ts2 ? 1 : -1;
    return ver > ver2 ? 1 : ver < ver2 ? -1 : 0;
}

int cn_version_newer(uint64_t ts, uint64_t ver, uint64_t ts2, uint64_t ver2)
{
    return cn_version_cmp(ts, ver, ts2, ver2) > 0;
}
