/* Fuzzes the reader of the lifecycle worker's system record (s/lifecycle,
 * lifecycle_run.h): whatever bytes a node hands back, it either reads them
 * (the holder NUL-terminated inside its buffer) or refuses them. */
#include <stddef.h>
#include <stdint.h>

#include "lifecycle_run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)gw_lc_run_record_parses(data, size);
    return 0;
}
