/* The large-object pipelines' metrics (docs/operations.md): GET slices in
 * flight and requested, the read-ahead depth each slice request saw,
 * backpressure pauses (the client's output was full), GETs cut short, PUT
 * chunks in flight and written. Process-wide: registered once into the
 * gateway's registry before the workers start (server.c); the recording
 * calls are one cn_metrics_add into the calling thread's own shard, and do
 * nothing when metrics are off (metrics.port 0) or in unit tests. */
#ifndef GW_LO_METRICS_H
#define GW_LO_METRICS_H

#include <stdint.h>

struct cn_metrics;

enum gw_lo_metric {
    GW_LO_M_GETS_IN_FLIGHT,        /* gauge: large-object GETs streaming */
    GW_LO_M_SLICES,                /* counter: slice reads requested */
    GW_LO_M_SLICES_IN_FLIGHT,      /* gauge: slice reads not answered yet */
    GW_LO_M_BACKPRESSURE_PAUSES,   /* counter: a GET stopped reading ahead for its client */
    GW_LO_M_GET_ABORTS,            /* counter: GETs cut short (a slice failed everywhere) */
    GW_LO_M_SLICE_REASKS,          /* counter: slices asked again after a wait */
    GW_LO_M_PUT_CHUNKS,            /* counter: chunk writes started */
    GW_LO_M_PUT_CHUNKS_IN_FLIGHT,  /* gauge: chunk writes not acknowledged yet */
    GW_LO_M_COUNT
};

/* Registers the series in reg (before any recording; once per process). */
void gw_lo_metrics_register(struct cn_metrics *reg);

/* Adds delta (negative for a gauge going down) to metric k. */
void gw_lo_metrics_add(enum gw_lo_metric k, int64_t delta);

/* A slice was requested while depth slices of its GET were in its ring
 * (itself included): counts it and the read-ahead depth. (In flight is
 * counted per ask, retries included: GW_LO_M_SLICES_IN_FLIGHT.) */
void gw_lo_metrics_slice_requested(uint32_t depth);

#endif
