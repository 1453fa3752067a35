/* S3 object versioning over the store (docs/gateway.md, "Versioning"):
 * Put/GetBucketVersioning, the versioned write (every version also kept
 * under its version key, versioning.h), delete markers, version-specific
 * GET/HEAD/DELETE and ListObjectVersions. The latest version stays the
 * "o/" record, so a GET of the latest and plain listings cost what they
 * did. s3_object.c and multipart.c call in at their few decision points. */
#ifndef GW_S3_VERSIONS_H
#define GW_S3_VERSIONS_H

#include "request.h"
#include "store.h"

struct msg;

/* PutBucketVersioning / GetBucketVersioning (s3_ops.c). */
void gw_s3_versions_config_put(struct gw_req *r);
void gw_s3_versions_config_get(struct gw_req *r);

/* ListObjectVersions: for a bucket never versioned, ListObjects' own
 * listing (each object its null version); else the version keys. */
void gw_s3_versions_list(struct gw_req *r);

/* The versioning steps' state of one request (r->vs, made by the steps
 * below on first use): freed with the request. NULL is a no-op. */
struct gw_s3_versions;
void gw_s3_versions_free(struct gw_s3_versions *vs);

/* Writes rec (the object's "o/" record, rec->key; data borrowed, rec's
 * bytes copied) the way r's bucket asks (r->versioning, read by
 * gw_s3_bucket_require()): unversioned, just that write; else first keeps a
 * never-versioned latest as the null version (Enabled) or drops the old null
 * version (Suspended), then writes the new version's version record and the
 * "o/" record, and sets r->version_id. cb(res, arg) gets the "o/" write's
 * result (or the first failure's, with reply NULL), exactly once. The
 * caller holds r across the call, as for gw_store_put(). */
void gw_s3_versions_put(struct gw_req *r, const struct gw_store_record *rec,
                        struct gw_blob *data, gw_store_cb cb, void *arg);

/* The same for a write that must put its "o/" record itself (a
 * conditional write under its lease, cond_write.h): put(r, rec, data, cb)
 * writes the "o/" record and calls cb(res, r), or answers r itself and
 * never calls cb. Versioned, that record goes first and the version record
 * after it succeeded (so a write refused under the lease leaves no
 * version); a failure of that second write is logged and the write still
 * answered as done (the object is the latest; its id is not readable). */
typedef void (*gw_s3_versions_put_fn)(struct gw_req *r, const struct gw_store_record *rec,
                                      struct gw_blob *data, gw_store_cb cb);
void gw_s3_versions_put_with(struct gw_req *r, const struct gw_store_record *rec,
                             struct gw_blob *data, gw_store_cb cb, gw_s3_versions_put_fn put);

/* Whether an overwrite or delete in r's bucket must leave the replaced
 * record's chunks alone (they belong to a version that stays). */
int gw_s3_versions_keeps_chunks(const struct gw_req *r);

/* DeleteObject once the bucket is known (r->versioning set) when it has a
 * versionId or the bucket has versioning: a delete marker, or the removal
 * of one version (the previous one becoming the latest). Answers r. */
void gw_s3_versions_delete(struct gw_req *r);

/* One entry of DeleteObjects in a bucket with a versioning state (r->versioning
 * set): as DeleteObject for key[key_len] (borrowed until done) with the
 * version id[id_len] (NULL: none; else checked with gw_versioning_id_check()),
 * without answering r: done(r, rc, err, version id, delete marker?) gets the
 * result (rc CN_OK or the store's error). r's previous versioning state is
 * dropped. */
typedef void (*gw_s3_versions_done_cb)(struct gw_req *r, int rc, const char *err,
                                       const char *version_id, int delete_marker);
void gw_s3_versions_delete_key(struct gw_req *r, const char *key, size_t key_len,
                               const char *id, size_t id_len, gw_s3_versions_done_cb done);

/* GetObject/HeadObject with a versionId: finds the record of that version
 * and calls read(r, key, key_len) to read it (s3_object.c's path, which
 * calls gw_s3_versions_on_record() and gw_s3_versions_not_found()), or
 * answers r. */
typedef void (*gw_s3_versions_read_cb)(struct gw_req *r, const char *key, size_t key_len);
void gw_s3_versions_get(struct gw_req *r, gw_s3_versions_read_cb read);

/* The same for the version id (NUL-terminated, checked) named by the
 * caller rather than by the request. */
void gw_s3_versions_get_id(struct gw_req *r, const char *id, gw_s3_versions_read_cb read);

/* Called by GET/HEAD with the record read (latest or a version): sets
 * x-amz-version-id from it; answers a delete marker asked for by version
 * (405) or a null version that is not (404 NoSuchVersion) and returns 1;
 * else 0 and the caller answers. */
int gw_s3_versions_on_record(struct gw_req *r, const struct msg *m);

/* Called by GET/HEAD when the record is missing and the bucket exists
 * (r->versioning set): answers NoSuchVersion for a versionId, NoSuchKey
 * with x-amz-delete-marker when the latest version is a delete marker, and
 * returns 1; 0 when the caller answers NoSuchKey itself. */
int gw_s3_versions_not_found(struct gw_req *r);

/* CopyObject with x-amz-copy-source ...?versionId= (r->copy_src, checked
 * by the handler): finds the source version's record and calls read(r,
 * key, key_len), or answers r. */
void gw_s3_versions_copy_source(struct gw_req *r, gw_s3_versions_read_cb read);

/* Called by CopyObject with the source record read: sets
 * x-amz-copy-source-version-id; answers a delete marker named by version
 * (400 InvalidRequest, as S3) or a null version that is not (404
 * NoSuchVersion) and returns 1; else 0. */
int gw_s3_versions_on_copy_record(struct gw_req *r, const struct msg *m);

/* The IAM action an access decision asks for r: its operation's
 * (gw_s3_op_action()), or the version action S3 names when r carries a
 * versionId: s3:GetObjectVersion (GET/HEAD), s3:DeleteObjectVersion,
 * s3:GetObjectVersionTagging (and the other tagging ones),
 * s3:GetObjectVersionAcl, s3:PutObjectVersionAcl. Never NULL. */
const char *gw_s3_versions_action(const struct gw_req *r);

/* The same for a copy's source: s3:GetObjectVersion when
 * x-amz-copy-source names a version, else s3:GetObject. */
const char *gw_s3_versions_source_action(const struct gw_req *r);

#endif
