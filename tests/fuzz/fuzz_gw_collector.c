/* Fuzzes the chunk collector's readers of node bytes: its system record
 * (s/collector, collector.h), which either reads (holder NUL-terminated,
 * cursor within its buffer and a chunk key) or is refused, and the chunk
 * key parser over listed keys. */
#include <stddef.h>
#include <stdint.h>

#include "collector.h"
#include "cn/rc.h"
#include "cn/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)gw_collector_record_parses(data, size);
    struct gw_collector_chunk ch;
    if (gw_collector_chunk_parse(data, size, &ch) == CN_OK)
        CN_ASSERT(ch.okey_len < ch.seg_len && ch.seg_len < size && data[ch.okey_len] == '\0');
    return 0;
}
