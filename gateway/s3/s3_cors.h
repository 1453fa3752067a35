/* CORS over the bucket's stored rules (cors.h): PutBucketCors,
 * GetBucketCors, DeleteBucketCors, the unauthenticated OPTIONS preflight
 * browsers send, and the Access-Control-* headers of actual requests that
 * carry an Origin. */
#ifndef GW_S3_CORS_H
#define GW_S3_CORS_H

#include "request.h"

/* Handlers of the rows of s3_ops.c; each must end in gw_req_reply_end() or
 * gw_req_error(). The preflight runs without SigV4 (the router lets only it
 * through so). */
void gw_s3_cors_put(struct gw_req *r);
void gw_s3_cors_get(struct gw_req *r);
void gw_s3_cors_delete(struct gw_req *r);
void gw_s3_cors_preflight(struct gw_req *r);

/* The response headers an actual request earned (r->cors). */
struct gw_s3_cors_headers;

/* 1 when r (authenticated, on a bucket) carries an Origin header, so its
 * response may need CORS headers: the router then calls
 * gw_s3_cors_lookup() before the handler. Costs one header lookup. */
int gw_s3_cors_wanted(const struct gw_req *r);

/* Reads r->bucket's CORS rules and, when one allows r's origin and method,
 * keeps the headers to send in r->cors; then next(r). A failed lookup only
 * leaves the headers out. */
void gw_s3_cors_lookup(struct gw_req *r, gw_req_cb next);

/* Adds r->cors's headers to the response being started (request.c calls
 * it from gw_req_reply_start()). */
void gw_s3_cors_reply_headers(struct gw_req *r);

void gw_s3_cors_headers_free(struct gw_s3_cors_headers *h);

#endif
