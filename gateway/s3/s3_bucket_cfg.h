/* The PUT / GET / DELETE of a named bucket configuration (?tagging,
 * ?lifecycle, ?cors, ?policy, ?ownershipControls, ?publicAccessBlock), once
 * for all of them: each kind says how a request body becomes the stored
 * value and how the stored value becomes the GET answer; reading, the owner
 * check, the body limit and the read-check-write of the bucket record are
 * s3_bucket.c's (gw_s3_bucket_cfg_read/write). */
#ifndef GW_S3_BUCKET_CFG_H
#define GW_S3_BUCKET_CFG_H

#include <stddef.h>

#include <event2/buffer.h>

#include "request.h"
#include "s3_error.h"

#define GW_S3_CFG_WHY_MAX 256

enum {
    GW_S3_CFG_MD5 = 1u << 0,       /* PUT needs Content-MD5 or an x-amz-checksum-* */
    GW_S3_CFG_ACCESS = 1u << 1,    /* an access input: drop the worker's cached one on a write */
    GW_S3_CFG_JSON = 1u << 2,      /* GET answers application/json, not XML */
};

struct gw_s3_cfg_kind {
    const char *name;           /* the configuration's name in the bucket record */
    unsigned flags;             /* GW_S3_CFG_* */
    size_t max_bytes;           /* of a PUT body */
    enum gw_s3_err too_big;     /* a longer body: this error (GW_S3_OK: MaxMessageLengthExceeded) */
    const char *too_big_why;    /* and its message, or NULL */
    int put_status;             /* 200 or 204 */
    enum gw_s3_err missing;     /* GET when none is set */
    /* The value to store for the PUT body body[len] (checked): GW_S3_OK and
     * *value (cn_malloc'd, taken; NULL removes the configuration, as an
     * empty TagSet does), or the error to answer and why (a message, or "" for none). */
    enum gw_s3_err (*encode)(struct gw_req *r, const char *body, size_t len, char **value,
                             size_t *value_len, char why[GW_S3_CFG_WHY_MAX]);
    /* Appends the GET answer for the stored value[len] to doc: GW_S3_OK,
     * or the error to answer (missing for a value that means none). */
    enum gw_s3_err (*render)(struct gw_req *r, const char *value, size_t len,
                             struct evbuffer *doc);
};

/* The handlers: each ends in a reply or an error. DELETE answers 204 whether
 * or not the configuration was set, as S3. */
void gw_s3_cfg_put(struct gw_req *r, const struct gw_s3_cfg_kind *kind);
void gw_s3_cfg_get(struct gw_req *r, const struct gw_s3_cfg_kind *kind);
void gw_s3_cfg_delete(struct gw_req *r, const struct gw_s3_cfg_kind *kind);

#endif
