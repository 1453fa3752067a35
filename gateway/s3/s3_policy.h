/* The bucket access configurations other than ACLs: PUT/GET/DELETE ?policy,
 * GET ?policyStatus, PUT/GET/DELETE ?ownershipControls and
 * ?publicAccessBlock. Each is a named configuration of the bucket record
 * (bucket_meta.h; access.h names them), written with
 * gw_s3_bucket_cfg_write() and read back by the access decision through
 * the owner cache (bucket_owner.h), so a change is in force on this worker
 * at once and on every other within s3.bucket_owner_ttl. */
#ifndef GW_S3_POLICY_H
#define GW_S3_POLICY_H

#include "request.h"

/* The handlers of the rows of s3_ops.c that name these sub-resources. */
void gw_s3_policy_get(struct gw_req *r);
void gw_s3_policy_put(struct gw_req *r);
void gw_s3_policy_delete(struct gw_req *r);
void gw_s3_policy_status_get(struct gw_req *r);
void gw_s3_policy_ownership_get(struct gw_req *r);
void gw_s3_policy_ownership_put(struct gw_req *r);
void gw_s3_policy_ownership_delete(struct gw_req *r);
void gw_s3_policy_pab_get(struct gw_req *r);
void gw_s3_policy_pab_put(struct gw_req *r);
void gw_s3_policy_pab_delete(struct gw_req *r);

#endif
