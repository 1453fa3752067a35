/* Fuzzes the reader of the rebalance worker's system record (s/rebalance,
 * gateway/cluster/rebalance.h), which cairn-admin rebalance throttle also
 * writes: whatever bytes a node hands back, it either reads them (the
 * holder NUL-terminated, the cursor within its buffer) or refuses them. */
#include <stddef.h>
#include <stdint.h>

#include "rebalance.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)gw_rebalance_record_parses(data, size);
    return 0;
}
