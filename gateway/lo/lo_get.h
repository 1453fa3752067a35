/* The large-object GET: the read pipeline (read_pipeline.h) wired to the
 * worker's store (chunk slices read with gw_store_get_immutable) and its
 * large_object.* settings (lo_env.h), writing to a sink its owner hands in
 * (an S3 request's response: s3/s3_get_sink.h). It knows no request. The
 * handler that owns it keeps it in its state, frees it with that state, and
 * routes the response's drain to gw_lo_get_drained(). */
#ifndef GW_LO_GET_H
#define GW_LO_GET_H

#include <stddef.h>
#include <stdint.h>

#include "lo_env.h"
#include "lo_map.h"
#include "read_pipeline.h"

struct gw_lo_get;

/* Creates the GET of bytes [first, first+len) of the object record okey
 * over map (moved in: map is zeroed), with lo's store and settings (lo
 * outlives the GET), writing to sink (copied in; its context outlives the
 * GET). The sink's admit() sends the headers once the read-ahead budget
 * lets the GET in. The caller stores the result in its state, then calls
 * gw_lo_get_start(). */
struct gw_lo_get *gw_lo_get_new(const struct gw_lo_env *lo,
                                const struct gw_read_pipeline_sink *sink, const char *okey,
                                size_t okey_len, struct gw_lo_map *map, uint64_t first,
                                uint64_t len);

/* Waits for the read-ahead budget (the sink's refuse() after
 * large_object.read_queue_timeout), then admit() and streams; ends in the
 * sink's end(), or in abort() when a slice cannot be read. */
void gw_lo_get_start(struct gw_lo_get *g);

/* The sink's output drained: streaming resumes. */
void gw_lo_get_drained(struct gw_lo_get *g);

/* Frees g (with its owner's state: no slice is in flight then, each holds
 * the owner through the sink). NULL is a no-op. */
void gw_lo_get_free(struct gw_lo_get *g);

#endif
