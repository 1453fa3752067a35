/* The S3 router: resolves the addressing (path style or virtual host),
 * validates the bucket name and key, parses the query, authenticates, and
 * calls the handler of the operation. */
#ifndef GW_S3_ROUTER_H
#define GW_S3_ROUTER_H

#include "request.h"

/* Takes a request whose head is complete. Must end, now or later, in
 * gw_req_reply_end() or gw_req_error(). */
void gw_s3_router_dispatch(struct gw_req *r);

#endif
