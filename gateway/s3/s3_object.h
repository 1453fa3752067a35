/* Object operations: PutObject (single records, and chunked objects from
 * large_object.threshold_of_chunk_len up), GetObject and HeadObject (with
 * Range and partNumber), DeleteObject, CopyObject (chunked sources are copied chunk by chunk). */
#ifndef GW_S3_OBJECT_H
#define GW_S3_OBJECT_H

#include <stddef.h>

#include "request.h"

void gw_s3_object_put(struct gw_req *r);
/* GET and HEAD. */
void gw_s3_object_get(struct gw_req *r);
void gw_s3_object_delete(struct gw_req *r);
void gw_s3_object_copy(struct gw_req *r);
/* PutObject of POST object's file (s3_post.c, r->post set, r->key the
 * form's key): streamed through the form parser, of unknown length, with
 * the form's answer. The caller made the checks. */
void gw_s3_object_put_form(struct gw_req *r);

/* The stored headers of a new object from r's request headers (Content-Type,
 * x-amz-meta-*, ...) as an objmeta; *meta is cn_malloc'd (caller frees).
 * GW_S3_OK or MetadataTooLarge (then *meta is NULL). */
enum gw_s3_err gw_s3_object_request_meta(struct gw_req *r, char **meta, size_t *len);

#endif
