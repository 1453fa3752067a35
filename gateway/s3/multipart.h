/* S3 multipart upload: CreateMultipartUpload, UploadPart, UploadPartCopy,
 * CompleteMultipartUpload, AbortMultipartUpload, ListParts and
 * ListMultipartUploads.
 *
 * Records (docs/gateway.md):
 *   "u/" bucket "/" key NUL upload_id              the upload (meta = the
 *                                                  object's stored headers)
 *   "p/" bucket "/" key NUL upload_id "/" %05u     one part; etag field
 *                                                  "<md5> <size> <ver> <chunk_len>"
 * A part's bytes are chunks named by the UploadPart's version id, exactly
 * like a large object's (lo_map.h), so Complete writes a parent whose chunk
 * map lists the parts' segments in order: no byte is copied. Re-uploading a
 * part number replaces the part record; the old part's chunks are
 * reclaimed. The upload id is 16 hex digits. */
#ifndef GW_MULTIPART_H
#define GW_MULTIPART_H

#include "request.h"

/* POST /bucket/key?uploads */
void gw_multipart_create(struct gw_req *r);
/* PUT /bucket/key?partNumber=N&uploadId=U (with x-amz-copy-source: copy) */
void gw_multipart_upload_part(struct gw_req *r);
/* POST /bucket/key?uploadId=U */
void gw_multipart_complete(struct gw_req *r);
/* DELETE /bucket/key?uploadId=U */
void gw_multipart_abort(struct gw_req *r);
/* GET /bucket/key?uploadId=U */
void gw_multipart_list_parts(struct gw_req *r);
/* GET /bucket?uploads */
void gw_multipart_list_uploads(struct gw_req *r);

struct gw_lo_seg;

/* The chunks a part record's etag field (NUL-terminated, as a listing
 * gives it) names: CN_OK with *seg, or CN_INVAL. For the lifecycle worker
 * (lifecycle_run.c), which aborts uploads without a request. */
int gw_multipart_part_seg(const char *etag, struct gw_lo_seg *seg);

#endif
