/* An S3 request's response as the sink of a large-object GET
 * (read_pipeline.h's struct gw_read_pipeline_sink): body bytes go to the
 * response, the output's drain is routed to the handler's callback, the
 * headers go out on admission, a refusal answers 503 SlowDown, a failed
 * slice cuts the response short, and each slice read holds the request.
 * The large-object layer (lo_get.h) sees only the sink, never the
 * request. */
#ifndef GW_S3_GET_SINK_H
#define GW_S3_GET_SINK_H

#include <stdint.h>

#include "read_pipeline.h"
#include "request.h"

/* The sink's context: it lives in the handler's state, as long as the GET. */
struct gw_s3_get_sink {
    struct gw_req *r;
    gw_req_cb on_drain;       /* the handler's: finds the GET, gw_lo_get_drained() */
    uint64_t len;             /* Content-Length, sent on admission */
};

/* Fills out with the sink of r's response, whose headers the handler built
 * (gw_req_reply_start and headers) but did not send: they go out with
 * Content-Length len when the GET is admitted. s is out's context. */
void gw_s3_get_sink_init(struct gw_s3_get_sink *s, struct gw_req *r, uint64_t len,
                         gw_req_cb on_drain, struct gw_read_pipeline_sink *out);

#endif
