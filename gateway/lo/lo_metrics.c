/* Large-object metrics (lo_metrics.h): a table of series registered once,
 * recorded through cn/metrics' per-thread shards. */
#include "lo_metrics.h"

#include "cn/metrics.h"

static struct {
    struct cn_metrics *reg;   /* NULL: not counting */
    uint32_t id[GW_LO_M_COUNT];
    uint32_t depth;
} gw_lo_metrics;

static const struct {
    const char *name;
    int gauge;
    const char *help;
} gw_lo_metrics_table[GW_LO_M_COUNT] = {
    [GW_LO_M_GETS_IN_FLIGHT] = {"cairn_gateway_lo_gets_in_flight", 1,
                                "Large-object GETs streaming slices to their clients"},
    [GW_LO_M_SLICES] = {"cairn_gateway_lo_slices_total", 0,
                        "Slice reads large-object GETs requested from the storage nodes"},
    [GW_LO_M_SLICES_IN_FLIGHT] = {"cairn_gateway_lo_slices_in_flight", 1,
                                  "Slice reads requested and not answered yet"},
    [GW_LO_M_BACKPRESSURE_PAUSES] = {"cairn_gateway_lo_backpressure_pauses_total", 0,
                                     "Times a large-object GET stopped reading ahead because "
                                     "its client's output was full (resumed on drain)"},
    [GW_LO_M_GET_ABORTS] = {"cairn_gateway_lo_get_aborts_total", 0,
                            "Large-object GETs cut short: a slice failed on every replica"},
    [GW_LO_M_SLICE_REASKS] = {"cairn_gateway_lo_slice_reasks_total", 0,
                              "Slices a large-object GET asked again after a wait, every "
                              "replica having timed out or failed (large_object read retries)"},
    [GW_LO_M_PUT_CHUNKS] = {"cairn_gateway_lo_put_chunks_total", 0,
                            "Chunk writes of large-object PUTs and parts started"},
    [GW_LO_M_PUT_CHUNKS_IN_FLIGHT] = {"cairn_gateway_lo_put_chunks_in_flight", 1,
                                      "Chunk writes sent and not acknowledged yet"},
};

/* read-ahead depths: 1 .. 256 (large_object.read_prefetch's range) */
static const uint64_t gw_lo_metrics_depth_bounds[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 128,
                                                      256};

void gw_lo_metrics_register(struct cn_metrics *reg)
{
    for (int k = 0; k < GW_LO_M_COUNT; k++) {
        const char *name = gw_lo_metrics_table[k].name, *help = gw_lo_metrics_table[k].help;
        gw_lo_metrics.id[k] = gw_lo_metrics_table[k].gauge
                                  ? cn_metrics_gauge(reg, name, help, 0, NULL)
                                  : cn_metrics_counter(reg, name, help, 0, NULL);
    }
    gw_lo_metrics.depth = cn_metrics_histogram(
        reg, "cairn_gateway_lo_read_ahead_depth",
        "Slices of one large-object GET in flight when it requested another (itself included): "
        "the read-ahead depth reached", 0, NULL, gw_lo_metrics_depth_bounds,
        (uint32_t)(sizeof(gw_lo_metrics_depth_bounds) / sizeof(gw_lo_metrics_depth_bounds[0])));
    gw_lo_metrics.reg = reg;
}

void gw_lo_metrics_add(enum gw_lo_metric k, int64_t delta)
{
    if (gw_lo_metrics.reg == NULL)
        return;
    if (delta >= 0)
        cn_metrics_add(gw_lo_metrics.reg, gw_lo_metrics.id[k], (uint64_t)delta);
    else
        cn_metrics_sub(gw_lo_metrics.reg, gw_lo_metrics.id[k], (uint64_t)-delta);
}

void gw_lo_metrics_slice_requested(uint32_t depth)
{
    if (gw_lo_metrics.reg == NULL)
        return;
    cn_metrics_add(gw_lo_metrics.reg, gw_lo_metrics.id[GW_LO_M_SLICES], 1);
    cn_metrics_observe(gw_lo_metrics.reg, gw_lo_metrics.depth, depth);
}
