/* cairn-admin bucket list|info|create|delete (docs/operations.md
 * "Buckets"): the operator's view of the bucket records ("b/" NAME, whose
 * etag is the owner account id and whose meta is gateway/s3/bucket_meta.h),
 * read and written on the nodes directly as the gateways place them. */
#ifndef ADM_BUCKETS_H
#define ADM_BUCKETS_H

#include "keys.h"

/* Each returns the exit status: 0 done, 1 failed (printed on stderr), 2 usage. */
int adm_buckets_list(const struct adm_keys_opts *o);
int adm_buckets_info(const struct adm_keys_opts *o, const char *bucket);
/* A bucket owned by account (id or name, which must exist), in region, as
 * a CreateBucket without headers makes it; refused when the name is taken. */
int adm_buckets_create(const struct adm_keys_opts *o, const char *bucket, const char *account,
                       const char *region);
/* Refused while the bucket holds an object or a version (as DeleteBucket). */
int adm_buckets_delete(const struct adm_keys_opts *o, const char *bucket);

#endif
