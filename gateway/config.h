/* The gateway's settings: one descriptor table (config.c) drives the
 * gateway.conf file, CAIRN_* environment overrides, --help, --dump-config and
 * docs/config.md. */
#ifndef GW_CONFIG_H
#define GW_CONFIG_H

#include <stdint.h>

#include "cn/config.h"

struct gw_config {
    /* http */
    int64_t http_port;
    char *metrics_listen;
    int64_t metrics_port;
    char *http_listen;
    int64_t http_threads;
    int64_t http_keepalive_timeout_ms;
    int64_t http_shutdown_timeout_ms;
    int64_t http_header_timeout_ms;
    int64_t http_body_idle_timeout_ms;
    int64_t http_max_request_line;
    int64_t http_max_headers;
    int64_t http_max_header_bytes;
    int64_t http_output_high_water;
    int64_t http_body_buffer;
    int64_t http_read_size;
    int64_t http_max_connections;
    int64_t http_tls_port;
    char *http_tls_cert_file;
    char *http_tls_key_file;
    /* storage */
    char *storage_nodes;
    int64_t storage_request_timeout_ms;
    int64_t ring_vnodes;
    int64_t consistency_replicas;
    int64_t consistency_write;
    int64_t consistency_read;
    int64_t consistency_delete;
    char *cluster_file;
    int64_t cluster_map_refresh_ms;
    int64_t storage_probe_interval_ms;
    int64_t handoff_max_hints;
    int64_t handoff_replay_interval_ms;
    int storage_auth;               /* 0 none, 1 curve */
    char *storage_curve_secret_key_file;
    char *storage_curve_server_key_file;
    /* s3 */
    char *s3_region;
    char *s3_domain;
    char *s3_credentials;
    char *s3_master_key_file;
    int64_t s3_keys_refresh_ms;
    int64_t s3_keys_max;
    int64_t s3_max_key_len;
    int64_t s3_max_object_size;
    int64_t s3_max_keys;
    int64_t s3_clock_skew_ms;
    int64_t s3_bucket_owner_ttl_ms;
    int s3_default_object_ownership; /* enum gw_access_ownership order */
    int s3_sigv2;                   /* accept SigV2 (sigv2.c) */
    /* large objects */
    int64_t lo_threshold;
    int64_t lo_chunk_len;
    int64_t lo_read_len;
    int64_t lo_read_prefetch;
    int64_t lo_read_ahead_budget;
    int64_t lo_read_queue_timeout_ms;
    int64_t lo_read_retries;
    int64_t lo_read_retry_backoff_ms;
    int64_t lo_max_chunks;
    int64_t lo_write_inflight;
    int64_t lo_reclaim_delay_ms;
    /* the lifecycle worker (s3/lifecycle_run.h) */
    int lifecycle_enabled;
    int64_t lifecycle_day_length_ms;
    int64_t lifecycle_interval_ms;
    int64_t lifecycle_lease_time_ms;
    int64_t lifecycle_max_deletes_per_sec;
    /* the chunk collector (s3/collector.h) */
    int64_t collector_interval_ms;
    int64_t collector_grace_ms;
    int64_t collector_lease_time_ms;
    int64_t collector_max_rate;
    /* the rebalance worker (cluster/rebalance.h) */
    int rebalance_enabled;
    int64_t rebalance_interval_ms;
    int64_t rebalance_lease_time_ms;
    int64_t rebalance_inflight;
    int64_t rebalance_throttle;
    int rebalance_purge;
    /* logging */
    int log_level;
    char *log_access_file;
    int log_format;                 /* 0 text, 1 json (gw_access_log_format) */
    int64_t log_access_buffer;
};

/* The descriptor table (CN_CONFIG_END-terminated). */
extern const struct cn_config_desc gw_config_table[];

/* Checks the relations between keys that single-key bounds cannot (e.g. a
 * write quorum above the replica count). Returns CN_OK or CN_INVAL with err. */
int gw_config_check(const struct gw_config *cfg, char err[CN_ERR_LEN]);

#endif
