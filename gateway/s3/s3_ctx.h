/* What the S3 handlers of one worker thread work with: the replicated
 * store, the large-object layer's environment, the owner cache, the SigV4
 * verifier, the metrics, and the s3.* settings they need, copied in when
 * the worker is assembled (server.c). Every request points at its worker's
 * (r->s3): handlers reach their dependencies through this typed context,
 * never through the worker. */
#ifndef GW_S3_CTX_H
#define GW_S3_CTX_H

#include <stddef.h>
#include <stdint.h>

#include "lo_env.h"

struct gw_store;
struct gw_lo_reclaim;
struct gw_bucket_owner_cache;
struct gw_sigv4;
struct gw_sigv2;
struct gw_s3_metrics;
struct gw_access_log;
struct gw_s3_status_info;
struct gw_cluster;
struct gw_credentials;

struct gw_s3_opts {
    const char *region;          /* s3.region */
    const char *domain;          /* s3.domain: virtual-host addressing; NULL or "": off */
    size_t max_key_len;          /* s3.max_key_len */
    uint32_t max_keys;           /* s3.max_keys: the most a listing page holds */
    int default_object_ownership;/* s3.default_object_ownership (access.h) */
    uint64_t put_limit;          /* one PUT or copy: min(s3.max_object_size, chunks x chunk) */
    uint64_t part_limit;         /* one part: the same, and S3's 5 GiB */
};

struct gw_s3_ctx {
    struct gw_store *store;
    struct gw_lo_reclaim *reclaim;
    struct gw_bucket_owner_cache *owners;   /* bucket -> owner (bucket_owner.c) */
    struct gw_sigv4 *sigv4;
    struct gw_sigv2 *sigv2;                 /* NULL: s3.sigv2 = false */
    const struct gw_credentials *creds;     /* who may sign (POST object forms) */
    struct gw_s3_metrics *metrics;          /* NULL: not counted */
    struct gw_access_log *access;           /* the access log (access_log.h); NULL: none */
    const struct gw_s3_status_info *status; /* GET /_cairn/status (s3_status.h) */
    const struct gw_cluster *cluster;       /* readiness (GET /_cairn/ready) */
    const int *draining;                    /* this thread's HTTP loop is stopping */
    struct gw_lo_env lo;
    struct gw_s3_opts opts;
};

#endif
