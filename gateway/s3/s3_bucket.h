/* Bucket operations: ListBuckets, CreateBucket, HeadBucket, DeleteBucket,
 * GetBucketLocation, and the bucket-exists check object handlers run first. */
#ifndef GW_S3_BUCKET_H
#define GW_S3_BUCKET_H

#include "bucket_meta.h"
#include "request.h"

void gw_s3_bucket_list_all(struct gw_req *r);
void gw_s3_bucket_create(struct gw_req *r);
void gw_s3_bucket_head(struct gw_req *r);
void gw_s3_bucket_delete(struct gw_req *r);
void gw_s3_bucket_location(struct gw_req *r);

/* GET of a bucket configuration the gateway never has (?versioning, ?policy,
 * ?lifecycle, ?tagging, ?encryption, ...; the rows of s3_ops.c that
 * name it, whose param is the sub-resource): answers what S3 answers for a
 * bucket without one (an empty VersioningConfiguration, or
 * NoSuchBucketPolicy, NoSuchLifecycleConfiguration, ...) once the bucket is known
 * to exist. */
void gw_s3_bucket_config_get(struct gw_req *r);

/* A named configuration of r->bucket (bucket_meta.h) being read or changed:
 * r's state (GW_REQ_STATE(r, gw_s3_bucket_cfg)) from gw_s3_bucket_cfg_read()
 * until the request ends. */
struct gw_s3_cfg_kind;

struct gw_s3_bucket_cfg {
    struct gw_hstate hs;
    const char *name;                   /* "cors", ... (a literal) */
    const struct gw_s3_cfg_kind *kind;  /* s3_bucket_cfg.h's handlers; NULL for others */
    struct gw_bucket_incarnation inc;   /* of the record first read */
    char *value;                        /* a copy of the configuration, NULL: none */
    size_t value_len;
    char *new_value;                    /* what gw_s3_bucket_cfg_write() sets; NULL: removes */
    size_t new_len;
    gw_req_cb next;
};
extern const struct gw_hstate_type gw_s3_bucket_cfg_hstate;

/* Reads r->bucket's record (quorum), checks that r's credential owns it,
 * and gives r its state, a struct gw_s3_bucket_cfg, with its incarnation and a copy
 * of configuration name; then next(r). Answers NoSuchBucket, AccessDenied,
 * ServiceUnavailable or InternalError (a record it cannot read) itself. */
void gw_s3_bucket_cfg_read(struct gw_req *r, const char *name, gw_req_cb next);
/* The same for kind's configuration, kept in the state's kind. */
void gw_s3_bucket_cfg_read_kind(struct gw_req *r, const struct gw_s3_cfg_kind *kind,
                                gw_req_cb next);

/* After gw_s3_bucket_cfg_read(): sets the configuration to value[len]
 * (taken: freed with r's state; NULL removes it), by reading the record again
 * (quorum), refusing with NoSuchBucket when it is gone or another
 * incarnation (deleted and created again since the first read), and writing
 * it back, in the map form, at ts = max(now, its ts + 1) so it is newer
 * than what it was made from; then next(r). There is no compare-and-set on
 * the nodes: a delete and re-create between that second read and the write
 * could still be overwritten (docs/gateway.md). */
void gw_s3_bucket_cfg_write(struct gw_req *r, char *value, size_t len, gw_req_cb next);

/* Checks that r->bucket exists, then calls next(r); answers NoSuchBucket
 * (or ServiceUnavailable) itself otherwise. */
void gw_s3_bucket_require(struct gw_req *r, gw_req_cb next);

#endif
