/* The large-object GET as a request sees it: the read pipeline
 * (read_pipeline.h) wired to the worker's store (chunk slices read with
 * gw_store_get_immutable) and to the request's response (body, drain,
 * end, abort, holds). The handler that owns it keeps it in its state,
 * frees it with that state, and routes the request's drain callback to
 * gw_lo_get_drained(). */
#ifndef GW_LO_GET_H
#define GW_LO_GET_H

#include <stddef.h>
#include <stdint.h>

#include "lo_map.h"
#include "request.h"

struct gw_lo_get;

/* Creates the GET of bytes [first, first+len) of the object record okey
 * over map (moved in: map is zeroed), with the worker's settings. on_drain
 * is the handler's drain callback: it finds this in its state and calls
 * gw_lo_get_drained(). The caller has built the response headers
 * (gw_req_reply_start and headers) but not sent them: they go out with
 * Content-Length len once the worker's read-ahead budget lets the GET in.
 * It stores the result in its handler state, then calls gw_lo_get_start(). */
struct gw_lo_get *gw_lo_get_new(struct gw_req *r, const char *okey, size_t okey_len,
                                struct gw_lo_map *map, uint64_t first, uint64_t len,
                                gw_req_cb on_drain);

/* Waits for the read-ahead budget (503 SlowDown after
 * large_object.read_queue_timeout), sends the headers and streams; the
 * response ends in gw_req_reply_end(), or in gw_req_abort() when a slice
 * cannot be read (logged). */
void gw_lo_get_start(struct gw_lo_get *g);

/* The request's output drained: streaming resumes. */
void gw_lo_get_drained(struct gw_lo_get *g);

/* Frees g (from the handler state's free function: no slice is in flight then, each
 * holds the request). NULL is a no-op. */
void gw_lo_get_free(struct gw_lo_get *g);

#endif
