/* cairn-gateway: the S3 HTTP front of a cairn cluster. Reads gateway.conf
 * (cn_config_cli: --config, --set, CAIRN_* environment, --dump-config,
 * --help) and runs the server until SIGINT/SIGTERM. --list-operations
 * prints the table of S3 operations (s3_ops.c) as markdown. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "read_ahead.h"
#include "s3_ops.h"
#include "server.h"

#include "cn/hlc.h"
#include "cn/log.h"

int main(int argc, char **argv)
{
    struct gw_config cfg;
    char err[CN_ERR_LEN];
    if (argc == 2 && strcmp(argv[1], "--list-operations") == 0) {
        gw_s3_ops_write_markdown(stdout);
        return 0;
    }
    int rc = cn_config_cli(gw_config_table, &cfg, "cairn-gateway", "CAIRN_", argc, argv, err);
    if (rc == CN_DONE) {
        cn_config_fini(gw_config_table, &cfg);
        return 0;
    }
    if (rc != CN_OK) {
        fprintf(stderr, "cairn-gateway: %s\n", err);
        return 2;
    }
    cn_log_init("cairn-gateway", cfg.log_level);
    if (gw_config_check(&cfg, err) != CN_OK) {
        fprintf(stderr, "cairn-gateway: %s\n", err);
        cn_config_fini(gw_config_table, &cfg);
        return 2;
    }
    /* Object buffers (chunks, slices, socket reads) are 0.5-5 MiB. glibc
     * raises its mmap threshold each time such a block is freed, after which
     * they come from the heap and freed ones stay resident: the RSS after one
     * large PUT would stay at its peak. A fixed threshold keeps them mmapped
     * and returned on free (docs/gateway.md, memory bound). */
    /* ... except slice buffers: a GET slice (reading_chunked_obj_len, or up
     * to GW_READ_AHEAD_MAX_SLICE with auto) plus ZeroMQ's frame header must
     * stay under the threshold, or each slice is received into fresh
     * mmapped pages (2 MiB slices: 245,000 page faults per GB served, the
     * gateway's CPU per GB doubled). Above 32 MiB glibc refuses it. */
    uint64_t slice_max = cfg.lo_read_len > 0 ? (uint64_t)cfg.lo_read_len : GW_READ_AHEAD_MAX_SLICE;
    mallopt(M_MMAP_THRESHOLD,
            (int)CN_MIN(CN_MAX(1024 * 1024, slice_max + 64 * 1024), 32 * 1024 * 1024));
    if (cn_hlc_default()->offset_us != 0)
        cn_warn("CAIRN_TEST_CLOCK_OFFSET_US = %lld: version clock shifted (test only)",
                (long long)cn_hlc_default()->offset_us);
    /* Slice buffers (at most reading_chunked_obj_len, below that threshold)
     * are allocated by ZeroMQ's I/O thread for each reply frame and freed
     * here when sent; glibc returned every freed one to the kernel (trim
     * above 128 KiB), so each slice was received into fresh pages: page
     * faults and clearing in the receive copy, ~9 % of the gateway's CPU
     * on a 1 GiB GET. Keeping up to the read-ahead budget of freed memory
     * lets the next slices reuse those pages; the budget bounds the slices
     * alive at once, so the memory kept never exceeds it (docs/large-objects.md). */
    mallopt(M_TRIM_THRESHOLD, (int)CN_MIN(cfg.lo_read_ahead_budget, (int64_t)INT32_MAX));
    struct gw_server *s = gw_server_new(&cfg, err);
    if (s == NULL) {
        cn_error("%s", err);
        cn_config_fini(gw_config_table, &cfg);
        return 1;
    }
    gw_server_run(s);
    gw_server_free(s);
    cn_config_fini(gw_config_table, &cfg);
    return 0;
}
