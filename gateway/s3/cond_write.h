/* Conditional writes: If-Match / If-None-Match on PutObject and
 * CompleteMultipartUpload, atomic across gateways. The handler reads the
 * record the write replaces (as it does anyway), gw_cond_write_check()
 * decides the S3 answer against it (412 / 404) and arms the write, and
 * gw_cond_write_put() then takes the key's lease on its replicas (LOCK,
 * proto/PROTOCOL.md: each node grants it only if its live record is still
 * the one that was read, one writer at a time) before the record is written
 * under the lease. docs/s3-compat.md ("Conditional writes") says what is
 * guaranteed with N replicas and a write quorum W. */
#ifndef GW_COND_WRITE_H
#define GW_COND_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "request.h"
#include "s3_error.h"
#include "store.h"

struct event;

/* Embedded in a handler's state (zeroed); gw_cond_write_fini() releases it. */
struct gw_cond_write {
    int armed;                 /* the request has a condition: the write takes the lease */
    int has_ifver;             /* the condition holds for the record of version ifver */
    uint64_t ifver;
    uint64_t tok;              /* random per request: two gateways never share one */
    uint32_t attempts;         /* LOCK rounds so far */
    struct gw_req *r;
    struct gw_store_record rec; /* what gw_cond_write_put() writes (its bytes: the caller's) */
    struct gw_blob *blob;      /* one reference while the lease is being taken */
    gw_store_cb cb;
    struct event *timer;       /* the pause before another LOCK round */
    uint32_t granted[GW_STORE_MAX_REPLICAS];
    uint32_t n_granted;
};

/* Does an If-Match / If-None-Match list match etag (hex, unquoted)? "*"
 * matches any; W/ prefixes and quotes are ignored. */
int gw_cond_write_etag_in(const char *list, size_t len, const char *etag, size_t elen);

/* Decides r's If-Match / If-None-Match against the record the write
 * replaces (cur: a HEAD or GET reply's message; NULL: none): If-Match with
 * no object answers NoSuchKey, with no ETag matching PreconditionFailed;
 * If-None-Match ("*" or ETags) matching the object PreconditionFailed.
 * GW_S3_OK: write; cw is armed when r has either header. */
enum gw_s3_err gw_cond_write_check(struct gw_cond_write *cw, const struct gw_req *r,
                                   const struct msg *cur);

/* Writes rec with data through gw_store_put() (cb as there), the caller
 * holding r (gw_req_hold). When cw is armed, the lease is taken first and
 * rec is written under it; if it cannot be, the request is answered here
 * (PreconditionFailed when a replica's record changed, ConditionalRequest
 * Conflict when other writers kept the lease through every retry,
 * ServiceUnavailable when too few replicas answered), r's hold is dropped
 * and cb is never called. rec's fields must stay valid until cb runs. */
void gw_cond_write_put(struct gw_cond_write *cw, struct gw_req *r,
                       const struct gw_store_record *rec, struct gw_blob *data, gw_store_cb cb);

void gw_cond_write_fini(struct gw_cond_write *cw);

#endif
