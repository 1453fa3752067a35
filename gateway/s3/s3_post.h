/* POST object (AWS "POST Object", "Browser-Based Uploads Using POST"): a
 * multipart/form-data upload to POST /bucket (path style or virtual host).
 * The router runs it without a signature check (the form carries it): the
 * handler reads the fields before the file (post_form.c), authenticates
 * the policy's signature (SigV4: x-amz-algorithm, x-amz-credential,
 * x-amz-date, x-amz-signature; or SigV2: AWSAccessKeyId, signature),
 * checks the policy (post_policy.c) and the access decision ("may this
 * principal PutObject to bucket/key"), then hands the rest of the body to
 * PutObject's streaming path: the body reader passes it through the form
 * parser (s3_body.c), so only the file's bytes are stored, chunked as any
 * large PUT, never held whole. The answer is success_action_redirect (303),
 * success_action_status 200/201 (PostResponse XML)/204 (the default). */
#ifndef GW_S3_POST_H
#define GW_S3_POST_H

#include <stddef.h>

#include "http_parser.h"
#include "post_form.h"
#include "request.h"

struct gw_s3_post;

/* The PostObject handler (s3_ops.c). Ends in gw_req_error() or, through
 * PutObject, in gw_s3_post_reply(). */
void gw_s3_post_object(struct gw_req *r);

/* For the body reader: the form parser the body passes through. */
struct gw_post_form *gw_s3_post_form(struct gw_s3_post *p);
/* For PutObject: the fields that stand in for request headers when the
 * object's metadata is built (Content-Type, Cache-Control, x-amz-meta-*,
 * ...), *n of them. */
const struct gw_http_header *gw_s3_post_headers(const struct gw_s3_post *p, uint32_t *n);
/* For PutObject, once the object is stored: the POST's answer (ETag etag,
 * lower-case hex). Ends the request. */
void gw_s3_post_reply(struct gw_req *r, const char *etag);
/* Frees p (NULL ok); the request's cleanup calls it. */
void gw_s3_post_free(struct gw_s3_post *p);

#endif
