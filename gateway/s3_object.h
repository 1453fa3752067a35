/* Object operations on single-record objects: PutObject, GetObject,
 * HeadObject, DeleteObject, CopyObject. Objects larger than
 * large_object.threshold_of_chunk_len are refused with EntityTooLarge until
 * the large-object path lands. */
#ifndef GW_S3_OBJECT_H
#define GW_S3_OBJECT_H

#include "request.h"

void gw_s3_object_put(struct gw_req *r);
/* GET and HEAD. */
void gw_s3_object_get(struct gw_req *r);
void gw_s3_object_delete(struct gw_req *r);
void gw_s3_object_copy(struct gw_req *r);

#endif
