/* Object tagging: GetObjectTagging, PutObjectTagging, DeleteObjectTagging,
 * and the x-amz-tagging / x-amz-tagging-directive headers of the writes that
 * create an object (PutObject, CopyObject, CreateMultipartUpload). The tags
 * live in the object record's meta (objmeta.h, GW_OBJMETA_TAGS); a tagging
 * write rewrites that record, never the object's data or chunks. */
#ifndef GW_S3_TAGGING_H
#define GW_S3_TAGGING_H

#include <stddef.h>

#include "request.h"

/* The handlers of the ?tagging rows of s3_ops.c, called after
 * authentication and the bucket-owner check; each ends in a reply or an
 * error. GET: the stored TagSet (empty when none). PUT: the body's TagSet
 * replaces the tags, 200. DELETE: no tags afterwards, 204. NoSuchKey /
 * NoSuchBucket when the object or bucket does not exist. */
void gw_s3_tagging_get(struct gw_req *r);
void gw_s3_tagging_put(struct gw_req *r);
void gw_s3_tagging_delete(struct gw_req *r);

/* The tags r's x-amz-tagging asks for, encoded for the meta (tagset.h):
 * *enc is cn_malloc'd (caller frees), or NULL with *len 0 when the header
 * is absent or empty. Returns GW_S3_OK, or gw_tagset_parse_query()'s error
 * with S3's message in *why (then *enc is NULL). Handlers call it before
 * they read a body, so a bad header stores nothing. */
enum gw_s3_err gw_s3_tagging_request_tags(const struct gw_req *r, char **enc, size_t *len,
                                          const char **why);

/* Checks CopyObject's x-amz-tagging-directive (absent, COPY or REPLACE):
 * GW_S3_OK or InvalidArgument with *why. */
enum gw_s3_err gw_s3_tagging_directive_check(const struct gw_req *r, const char **why);

/* Gives a copy's destination meta (*meta, cn_malloc'd, replaced in place)
 * the tags x-amz-tagging-directive asks for: the source's (COPY, the
 * default: src_meta is the source record's meta) or the request's
 * x-amz-tagging (REPLACE). meta_replaced says *meta was built from the
 * request (x-amz-metadata-directive REPLACE, so it holds the request's
 * tags) rather than copied from the source (it holds the source's). Returns
 * GW_S3_OK or MetadataTooLarge (*meta unchanged). */
enum gw_s3_err gw_s3_tagging_copy_meta(const struct gw_req *r, int meta_replaced,
                                       const void *src_meta, size_t src_len, char **meta,
                                       size_t *meta_len);

#endif
