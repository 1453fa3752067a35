/* The large-object GET: bytes [first, first+len) of an object are read as
 * slices of at most large_object.reading_chunked_obj_len that never cross a
 * chunk boundary, with up to large_object.read_prefetch slice requests in
 * flight to the nodes that hold them. Answers may come back in any order;
 * they are written to the client in order. No slice is requested while the
 * client's output buffer holds a slice length or more (or
 * http.output_high_water, if lower); requesting resumes from the
 * connection's drain callback. Each slice's CRC32C is verified (by
 * the store, which tries the next replica on an error, a timeout or a bad
 * checksum); when every replica failed, the response is cut short (the
 * connection is closed: the client sees fewer bytes than Content-Length)
 * and the log names the chunk and the reason.
 *
 * Memory per GET: read_prefetch slices in flight plus the output high-water
 * mark: about (read_prefetch + 1) x slice length with the defaults. */
#ifndef GW_READ_PIPELINE_H
#define GW_READ_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "lo_map.h"
#include "request.h"

struct gw_read_pipeline;

/* Creates the pipeline of r over map (moved in: map is zeroed) for the
 * object record okey; slice_len and prefetch come from the settings. The
 * caller has sent the response headers; it calls gw_read_pipeline_start()
 * next and frees the pipeline when the request ends (its h_free). */
struct gw_read_pipeline *gw_read_pipeline_new(struct gw_req *r, const char *okey,
                                              size_t okey_len, struct gw_lo_map *map,
                                              uint64_t first, uint64_t len);

/* Starts requesting slices; ends the response with gw_req_reply_end() when
 * the last byte is queued, or closes the connection on a failed slice. */
void gw_read_pipeline_start(struct gw_read_pipeline *p);

/* Frees p; its requests in flight hold the request, so this runs only when
 * none is (from the request's h_free). NULL is a no-op. */
void gw_read_pipeline_free(struct gw_read_pipeline *p);

#endif
