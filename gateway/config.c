/* The gateway's settings table: every key, its default, bounds and meaning.
 * docs/config.md is generated from it (cairn-gateway --help). */
#include "config.h"

#include <stddef.h>
#include <stdio.h>

#define GW_OFF(f) offsetof(struct gw_config, f)
#define GW_KIB 1024LL
#define GW_MIB (1024LL * 1024)
#define GW_GIB (1024LL * 1024 * 1024)

static const char *const gw_config_log_levels[] = {"debug", "info", "warn", "error", NULL};
static const char *const gw_config_ownerships[] = {"ObjectWriter", "BucketOwnerPreferred",
                                                      "BucketOwnerEnforced", NULL};
static const char *const gw_config_auths[] = {"none", "curve", NULL};
static const char *const gw_config_log_formats[] = {"text", "json", NULL};
static const char *const gw_config_auto[] = {"auto", NULL}; /* stored as 0 */

const struct cn_config_desc gw_config_table[] = {
    {"http.port", CN_CONF_INT, GW_OFF(http_port), "8080", 0, 65535, NULL,
     "TCP port of the S3 HTTP listener (0 = any free port, logged at start)"},
    {"http.listen", CN_CONF_STRING, GW_OFF(http_listen), "0.0.0.0", 0, 0, NULL,
     "IPv4 address the HTTP listener binds"},
    {"http.threads", CN_CONF_INT, GW_OFF(http_threads), "0", 0, 256, NULL,
     "event-loop threads, each with its own SO_REUSEPORT listener (0 = one per core)"},
    {"http.keepalive_timeout", CN_CONF_MSEC, GW_OFF(http_keepalive_timeout_ms), "60s", 100,
     3600000, NULL, "an idle keep-alive connection is closed after this long"},
    {"http.shutdown_timeout", CN_CONF_MSEC, GW_OFF(http_shutdown_timeout_ms), "30s", 0, 3600000,
     NULL,
     "on SIGTERM/SIGINT: stop accepting, close idle connections, let requests in progress "
     "finish for at most this long, then exit"},
    {"http.header_timeout", CN_CONF_MSEC, GW_OFF(http_header_timeout_ms), "15s", 100, 3600000,
     NULL, "a request head must be complete this long after its first byte (slowloris)"},
    {"http.body_idle_timeout", CN_CONF_MSEC, GW_OFF(http_body_idle_timeout_ms), "30s", 100,
     3600000, NULL,
     "a request or response body that makes no progress this long is cut (idle, not total)"},
    {"http.max_request_line", CN_CONF_SIZE, GW_OFF(http_max_request_line), "16K", 256,
     1024 * GW_KIB, NULL, "longest request line (method, target, version); longer gets 414"},
    {"http.max_headers", CN_CONF_INT, GW_OFF(http_max_headers), "100", 8, 10000, NULL,
     "most header fields in a request; more gets 400 RequestHeaderSectionTooLarge"},
    {"http.max_header_bytes", CN_CONF_SIZE, GW_OFF(http_max_header_bytes), "16K", 1024,
     1024 * GW_KIB, NULL, "largest request head (request line + headers)"},
    {"http.output_high_water", CN_CONF_SIZE, GW_OFF(http_output_high_water), "4M", 64 * GW_KIB,
     1024 * GW_MIB, NULL,
     "bytes queued toward a client above which the gateway stops fetching for it"},
    {"http.body_buffer", CN_CONF_SIZE, GW_OFF(http_body_buffer), "1M", 16 * GW_KIB, 256 * GW_MIB,
     NULL, "request-body bytes read ahead of the storage side before reading pauses"},
    {"http.read_size", CN_CONF_SIZE, GW_OFF(http_read_size), "1M", 4 * GW_KIB, 64 * GW_MIB, NULL,
     "most bytes read from a client socket per wakeup (plain-HTTP bodies in reads of up to "
     "256K; PUT bodies: small reads spend the time polling; see docs/large-objects.md)"},
    {"http.max_connections", CN_CONF_INT, GW_OFF(http_max_connections), "0", 0, 100000000, NULL,
     "most client connections open at once, all threads together; at the cap the gateway "
     "stops accepting (new connections wait in the kernel's listen backlog) until one closes. "
     "0 = from the fd limit: RLIMIT_NOFILE (raised toward 4096 + the reserve where the hard "
     "limit allows) minus a reserve for storage sockets, files and logs"},
    {"http.tls_port", CN_CONF_INT, GW_OFF(http_tls_port), "0", 0, 65535, NULL,
     "TCP port of the HTTPS listener (same address and threads as http.port, TLS 1.2 and "
     "up); 0: off. Needs http.tls_cert_file and http.tls_key_file; SIGHUP reloads both"},
    {"http.tls_cert_file", CN_CONF_STRING, GW_OFF(http_tls_cert_file), "", 0, 0, NULL,
     "http.tls_port: PEM file of the server certificate, followed by its intermediate CA "
     "certificates"},
    {"http.tls_key_file", CN_CONF_STRING, GW_OFF(http_tls_key_file), "", 0, 0, NULL,
     "http.tls_port: PEM file of the certificate's private key (keep it mode 0600)"},
    {"storage.nodes", CN_CONF_STRING, GW_OFF(storage_nodes), "tcp://127.0.0.1:7001", 0, 0, NULL,
     "comma-separated ZeroMQ endpoints of the storage nodes (the ring's members)"},
    {"storage.request_timeout", CN_CONF_MSEC, GW_OFF(storage_request_timeout_ms), "10s", 10,
     3600000, NULL, "one request to a storage node fails after this long without a reply"},
    {"ring.vnodes", CN_CONF_INT, GW_OFF(ring_vnodes), "168", 1, 4096, NULL,
     "virtual nodes per storage node on the consistent-hash ring"},
    {"consistency.num_of_replicas", CN_CONF_INT, GW_OFF(consistency_replicas), "0", 0, 16, NULL,
     "copies of each record (N); 0 = min(3, number of nodes)"},
    {"consistency.write", CN_CONF_INT, GW_OFF(consistency_write), "0", 0, 16, NULL,
     "acks a write needs (W); 0 = 2, or 1 when N is 1"},
    {"consistency.read", CN_CONF_INT, GW_OFF(consistency_read), "0", 0, 16, NULL,
     "replicas a read compares (R; > 1 returns the newest and repairs the stale ones it asked); "
     "0 = N - min(W, D) + 1, so reads see every acknowledged write and delete (2 for N=3)"},
    {"consistency.delete", CN_CONF_INT, GW_OFF(consistency_delete), "0", 0, 16, NULL,
     "acks a delete (tombstone) needs (D); 0 = 2, or 1 when N is 1"},
    {"cluster.file", CN_CONF_STRING, GW_OFF(cluster_file), "", 0, 0, NULL,
     "cluster description (`node ID ADDRESS [weight=N] [zone=Z]` lines, docs/cluster.md); "
     "empty = storage.nodes"},
    {"cluster.map_refresh", CN_CONF_MSEC, GW_OFF(cluster_map_refresh_ms), "2s", 0, 3600000, NULL,
     "how often the cluster map kept on the nodes (s/cluster, docs/cluster.md) is read; 0 = "
     "never: the file or storage.nodes stays the ring"},
    {"storage.probe_interval", CN_CONF_MSEC, GW_OFF(storage_probe_interval_ms), "1s", 10,
     600000, NULL, "a node marked down (no reply within storage.request_timeout) is pinged "
     "this often until it answers"},
    {"handoff.max_hints", CN_CONF_INT, GW_OFF(handoff_max_hints), "1000000", 0, 1000000000,
     NULL, "unused since hints are kept by the storage nodes (their handoff.max_hints, "
     "docs/cluster.md); still accepted so that older files load"},
    {"handoff.replay_interval", CN_CONF_MSEC, GW_OFF(handoff_replay_interval_ms), "200ms", 10,
     600000, NULL, "how often the gateway asks each storage node for the hints it keeps and "
     "replays those of nodes that are up (one thread per gateway)"},
    {"storage.auth", CN_CONF_ENUM, GW_OFF(storage_auth), "none", 0, 0, gw_config_auths,
     "how the gateway proves itself to the storage nodes: curve (ZeroMQ CURVE with the keys "
     "below; the nodes' auth = curve) or none (docs/security.md)"},
    {"storage.curve_secret_key_file", CN_CONF_STRING, GW_OFF(storage_curve_secret_key_file),
     "", 0, 0, NULL, "storage.auth = curve: the gateway's secret key (Z85, mode 0600); its "
     "public key goes on the nodes' allow-list"},
    {"storage.curve_server_key_file", CN_CONF_STRING, GW_OFF(storage_curve_server_key_file),
     "", 0, 0, NULL, "storage.auth = curve: the nodes' public key (one cluster key pair for "
     "every node)"},
    {"s3.region", CN_CONF_STRING, GW_OFF(s3_region), "us-east-1", 0, 0, NULL,
     "region in SigV4 scopes and GetBucketLocation"},
    {"s3.domain", CN_CONF_STRING, GW_OFF(s3_domain), "", 0, 0, NULL,
     "virtual-host domain: Host bucket.DOMAIN addresses bucket (empty = path style only)"},
    {"s3.credentials_file", CN_CONF_STRING, GW_OFF(s3_credentials), "", 0, 0, NULL,
     "file of `access_key secret_key owner_id display_name` lines (required)"},
    {"s3.master_key_file", CN_CONF_STRING, GW_OFF(s3_master_key_file), "", 0, 0, NULL,
     "cluster master key (32 bytes, hex or base64) opening the keys kept in the cluster "
     "(empty = only the credentials file's keys)"},
    {"s3.keys_refresh", CN_CONF_MSEC, GW_OFF(s3_keys_refresh_ms), "2s", 100, 3600000, NULL,
     "how often the keys kept in the cluster are listed (a new or deleted key takes effect "
     "within this plus storage.request_timeout)"},
    {"s3.keys_max", CN_CONF_INT, GW_OFF(s3_keys_max), "100000", 1, 1000000, NULL,
     "most keys from the cluster held (about 1.2 KiB each at most, 5.5 KiB for a key "
     "restricted to 32 buckets); past it the rest are refused"},
    {"s3.max_key_len", CN_CONF_INT, GW_OFF(s3_max_key_len), "1024", 1, 1024, NULL,
     "longest object key in bytes; longer gets KeyTooLongError"},
    {"s3.max_object_size", CN_CONF_SIZE, GW_OFF(s3_max_object_size), "5G", 0, 5 * 1024 * GW_GIB,
     NULL, "largest single PUT; larger gets EntityTooLarge"},
    {"s3.max_keys", CN_CONF_INT, GW_OFF(s3_max_keys), "1000", 1, 10000, NULL,
     "largest page of a listing (max-keys is capped to it)"},
    {"s3.bucket_owner_ttl", CN_CONF_MSEC, GW_OFF(s3_bucket_owner_ttl_ms), "5s", 0, 3600000,
     NULL,
     "how long a worker trusts a bucket's access config it looked up (owner, ACL, policy, "
     "ownership, public access block): the bound within which a change made through another "
     "worker or gateway is in force (docs/security.md); 0 = look it up on every request"},
    {"s3.default_object_ownership", CN_CONF_ENUM, GW_OFF(s3_default_object_ownership),
     "ObjectWriter", 0, 0, gw_config_ownerships,
     "Object Ownership of new buckets (CreateBucket without x-amz-object-ownership): "
     "ObjectWriter (ACLs enabled, no public access block, as Ceph RGW and MinIO), "
     "BucketOwnerPreferred, or BucketOwnerEnforced (AWS's defaults since 2023: ACLs disabled "
     "and all four public access block flags on)"},
    {"s3.clock_skew", CN_CONF_MSEC, GW_OFF(s3_clock_skew_ms), "15m", 1000, 86400000, NULL,
     "signed requests further than this from the gateway's clock get RequestTimeTooSkewed"},
    {"s3.sigv2", CN_CONF_BOOL, GW_OFF(s3_sigv2), "true", 0, 0, NULL,
     "accept AWS Signature Version 2 (\"AWS AKID:signature\" headers, AWSAccessKeyId "
     "presigned URLs, V2-signed POST forms); false: refused as S3 refuses an unsupported "
     "mechanism (InvalidRequest, use AWS4-HMAC-SHA256)"},
    {"large_object.threshold_of_chunk_len", CN_CONF_SIZE, GW_OFF(lo_threshold), "5M", 64 * GW_KIB,
     1024 * GW_MIB, NULL,
     "objects smaller than this are one record; a PUT body at or above it is cut into chunks"},
    {"large_object.chunked_obj_len", CN_CONF_SIZE, GW_OFF(lo_chunk_len), "5M", 64 * GW_KIB,
     1024 * GW_MIB, NULL, "length of each chunk of a large object (and of a multipart part)"},
    {"large_object.reading_chunked_obj_len", CN_CONF_SIZE, GW_OFF(lo_read_len), "auto",
     4 * GW_KIB, 1024 * GW_MIB, gw_config_auto,
     "GET slice length: a large-object GET asks the nodes for slices of at most this many "
     "bytes, never crossing a chunk (LeoFS used this name for the PUT socket read size; "
     "that is http.read_size here). Must not exceed chunked_obj_len. auto: each stream "
     "starts at 512K and tunes it within [128K, 2M], lengthening its slices before it deepens "
     "its read-ahead (docs/large-objects.md)"},
    {"large_object.read_prefetch", CN_CONF_INT, GW_OFF(lo_read_prefetch), "auto", 1, 256,
     gw_config_auto,
     "slice requests in flight per large-object GET (read-ahead depth). auto: each stream "
     "starts at 2 and grows (up to 16, depth x slice at most 4M) while "
     "its client waits and the nodes are idle, once its slices can grow no longer (auto "
     "slices reach 2M first: a fast stream settles at 2 x 2M); shrinks while its client is "
     "the bottleneck. A stream holds at most (depth + 1) x slice (6M)"},
    {"large_object.read_ahead_budget", CN_CONF_SIZE, GW_OFF(lo_read_ahead_budget), "256M",
     1 * GW_MIB, 1024 * GW_GIB, NULL,
     "bytes of slices all large-object GETs of the gateway hold together (in flight, waiting "
     "to be written in order, queued toward clients), shared evenly by the http.threads; "
     "when short, streams read ahead less and in shorter slices, and a new GET waits before "
     "its headers (docs/large-objects.md)"},
    {"large_object.read_queue_timeout", CN_CONF_MSEC, GW_OFF(lo_read_queue_timeout_ms), "30s",
     1, 3600000, NULL,
     "a large-object GET that finds no room in read_ahead_budget waits (FIFO, before its "
     "headers) at most this long, then gets 503 SlowDown"},
    {"large_object.read_retries", CN_CONF_INT, GW_OFF(lo_read_retries), "5", 0, 100, NULL,
     "a slice that timed out or could not be sent on every replica is asked again this many "
     "times (backing off) before the GET, whose headers went out, is cut short"},
    {"large_object.read_retry_backoff", CN_CONF_MSEC, GW_OFF(lo_read_retry_backoff_ms),
     "100ms", 1, 60000, NULL,
     "the wait before a slice is asked again; it doubles with each retry, up to 5s"},
    {"large_object.max_chunked_objs", CN_CONF_INT, GW_OFF(lo_max_chunks), "1000", 1, 100000, NULL,
     "most chunks one object may have: max_chunked_objs x chunked_obj_len bounds a single PUT "
     "(EntityTooLarge beyond) and a multipart part"},
    {"large_object.write_inflight", CN_CONF_INT, GW_OFF(lo_write_inflight), "2", 1, 64, NULL,
     "chunks of one PUT being written to the nodes at once (PUT memory: about "
     "(write_inflight + 1) x chunked_obj_len)"},
    {"large_object.reclaim_delay", CN_CONF_MSEC, GW_OFF(lo_reclaim_delay_ms), "60s", 0, 86400000,
     NULL, "chunks of an overwritten or deleted large object are deleted this long after the "
     "overwrite, so GETs that began before it can finish"},
    {"lifecycle.enabled", CN_CONF_BOOL, GW_OFF(lifecycle_enabled), "true", 0, 0, NULL,
     "run the lifecycle worker (expiration, abort of incomplete multipart uploads); every "
     "gateway may, one at a time holds the lease in the cluster (docs/operations.md)"},
    {"lifecycle.day_length", CN_CONF_MSEC, GW_OFF(lifecycle_day_length_ms), "24h", 1000,
     315360000000, NULL,
     "the length of a lifecycle \"day\": Days count in it and due times round up to its "
     "boundaries (midnight UTC for 24h); shorter only for tests"},
    {"lifecycle.interval", CN_CONF_MSEC, GW_OFF(lifecycle_interval_ms), "1h", 100, 86400000,
     NULL, "a lifecycle scan of every bucket starts this long after the last one began"},
    {"lifecycle.lease_time", CN_CONF_MSEC, GW_OFF(lifecycle_lease_time_ms), "60s", 300,
     3600000, NULL, "how long the lifecycle lease holds without renewal (renewed every third "
     "of it); a stopped holder's lease is taken over after it"},
    {"lifecycle.max_deletes_per_sec", CN_CONF_INT, GW_OFF(lifecycle_max_deletes_per_sec), "100",
     1, 1000000, NULL, "the most object, part and upload deletes the lifecycle worker starts "
     "per second (one at a time), so foreground requests keep the nodes"},
    {"collector.interval", CN_CONF_MSEC, GW_OFF(collector_interval_ms), "1h", 0, 86400000,
     NULL, "a chunk collector scan (orphaned chunks of failed or replaced large writes) starts "
     "this long after the last one began; 0: no collector on this gateway (docs/large-objects.md)"},
    {"collector.grace", CN_CONF_MSEC, GW_OFF(collector_grace_ms), "1h", 1000, 315360000000, NULL,
     "a chunk no parent names is deleted only once its write (and any change of its object) is "
     "this old: longer than any large PUT's pause between chunks and than large_object.reclaim_delay"},
    {"collector.lease_time", CN_CONF_MSEC, GW_OFF(collector_lease_time_ms), "60s", 300, 3600000,
     NULL, "how long the collector lease holds without renewal (renewed every third of it); a "
     "stopped holder's lease is taken over after it, and its scan resumes at the cursor"},
    {"collector.max_rate", CN_CONF_INT, GW_OFF(collector_max_rate), "200", 1, 1000000, NULL,
     "the most chunk deletes the collector starts per second (one at a time)"},
    {"rebalance.enabled", CN_CONF_BOOL, GW_OFF(rebalance_enabled), "true", 0, 0, NULL,
     "run the rebalance worker: after a cluster map change, copy each key to its new replicas "
     "and purge the copies old owners keep; one gateway at a time holds the lease in the "
     "cluster (docs/cluster.md)"},
    {"rebalance.interval", CN_CONF_MSEC, GW_OFF(rebalance_interval_ms), "5s", 100, 3600000,
     NULL, "how often an idle rebalance worker checks the map version against the one last "
     "rebalanced"},
    {"rebalance.lease_time", CN_CONF_MSEC, GW_OFF(rebalance_lease_time_ms), "30s", 300,
     3600000, NULL, "how long the rebalance lease holds without renewal (renewed every third "
     "of it); a stopped holder's walk is resumed from its cursor after it"},
    {"rebalance.inflight", CN_CONF_INT, GW_OFF(rebalance_inflight), "8", 1, 256, NULL,
     "key repairs the rebalance worker runs at once (memory: one record's data each)"},
    {"rebalance.throttle", CN_CONF_SIZE, GW_OFF(rebalance_throttle), "0", 0,
     (int64_t)1 << 40, NULL, "bytes per second the rebalance worker copies when no throttle "
     "is set in the cluster (`cairn-admin rebalance throttle`, which wins); 0: no limit"},
    {"rebalance.purge", CN_CONF_BOOL, GW_OFF(rebalance_purge), "true", 0, 0, NULL,
     "remove (PURGE) a key's copies on nodes that no longer own it once its owners hold its "
     "newest version"},
    {"metrics.listen", CN_CONF_STRING, GW_OFF(metrics_listen), "127.0.0.1", 0, 0, NULL,
     "address the metrics endpoint (GET /metrics, Prometheus text) binds; its own listener, "
     "never the S3 port"},
    {"metrics.port", CN_CONF_INT, GW_OFF(metrics_port), "0", 0, 65535, NULL,
     "TCP port of the metrics endpoint; 0: off (nothing is counted)"},
    {"log.level", CN_CONF_ENUM, GW_OFF(log_level), "info", 0, 0, gw_config_log_levels,
     "least severe log level written (debug, info, warn, error)"},
    {"log.access_file", CN_CONF_STRING, GW_OFF(log_access_file), "", 0, 0, NULL,
     "file of the access log (one line per request, docs/operations.md), reopened on SIGHUP "
     "for logrotate; empty: the lines go to the gateway's log, at level info"},
    {"log.format", CN_CONF_ENUM, GW_OFF(log_format), "text", 0, 0, gw_config_log_formats,
     "format of the access lines: text (space-separated fields) or json (one object a line)"},
    {"log.access_buffer", CN_CONF_SIZE, GW_OFF(log_access_buffer), "1M", 64 * GW_KIB,
     1024 * GW_MIB, NULL,
     "access lines waiting for the disk; when the file is slower than the requests, lines past "
     "this are dropped and counted (cairn_gateway_access_log_dropped_lines_total). Memory: 2 x "
     "this"},
    CN_CONFIG_END,
};

int gw_config_check(const struct gw_config *cfg, char err[CN_ERR_LEN])
{
    const int64_t quorums[] = {cfg->consistency_write, cfg->consistency_read,
                               cfg->consistency_delete};
    static const char *const names[] = {"write", "read", "delete"};
    for (size_t i = 0; i < CN_ARRAY_LEN(quorums); i++) {
        if (cfg->consistency_replicas > 0 && quorums[i] > cfg->consistency_replicas) {
            snprintf(err, CN_ERR_LEN, "consistency.%s (%lld) is above "
                     "consistency.num_of_replicas (%lld)", names[i], (long long)quorums[i],
                     (long long)cfg->consistency_replicas);
            return CN_INVAL;
        }
    }
    if (cfg->http_max_request_line > cfg->http_max_header_bytes) {
        snprintf(err, CN_ERR_LEN, "http.max_request_line is above http.max_header_bytes");
        return CN_INVAL;
    }
    if (cfg->lo_read_len > 0 && cfg->lo_read_len > cfg->lo_chunk_len) {
        snprintf(err, CN_ERR_LEN, "large_object.reading_chunked_obj_len (%lld) is above "
                 "large_object.chunked_obj_len (%lld): a slice never crosses a chunk",
                 (long long)cfg->lo_read_len, (long long)cfg->lo_chunk_len);
        return CN_INVAL;
    }
    if (cfg->http_tls_port > 0 &&
        (cfg->http_tls_cert_file == NULL || cfg->http_tls_cert_file[0] == '\0' ||
         cfg->http_tls_key_file == NULL || cfg->http_tls_key_file[0] == '\0')) {
        snprintf(err, CN_ERR_LEN, "http.tls_port is set: http.tls_cert_file and "
                 "http.tls_key_file are required");
        return CN_INVAL;
    }
    if (cfg->http_tls_port > 0 && cfg->http_tls_port == cfg->http_port) {
        snprintf(err, CN_ERR_LEN, "http.tls_port and http.port are both %lld",
                 (long long)cfg->http_port);
        return CN_INVAL;
    }
    if (cfg->lifecycle_enabled &&
        cfg->lifecycle_lease_time_ms <= cfg->storage_request_timeout_ms + 500) {
        snprintf(err, CN_ERR_LEN, "lifecycle.lease_time (%lld ms) must be above "
                 "storage.request_timeout + 500 ms: a claim of the lease is read back after that",
                 (long long)cfg->lifecycle_lease_time_ms);
        return CN_INVAL;
    }
    if (cfg->collector_interval_ms > 0 &&
        cfg->collector_lease_time_ms <= cfg->storage_request_timeout_ms + 500) {
        snprintf(err, CN_ERR_LEN, "collector.lease_time (%lld ms) must be above "
                 "storage.request_timeout + 500 ms: a claim of the lease is read back after that",
                 (long long)cfg->collector_lease_time_ms);
        return CN_INVAL;
    }
    if (cfg->collector_interval_ms > 0 && cfg->collector_grace_ms < cfg->lo_reclaim_delay_ms) {
        snprintf(err, CN_ERR_LEN, "collector.grace (%lld ms) must be at least "
                 "large_object.reclaim_delay (%lld ms): the collector must leave a replaced "
                 "object's chunks to its readers as long as the reclaim does",
                 (long long)cfg->collector_grace_ms, (long long)cfg->lo_reclaim_delay_ms);
        return CN_INVAL;
    }
    if (cfg->rebalance_enabled &&
        cfg->rebalance_lease_time_ms <= cfg->storage_request_timeout_ms + 500) {
        snprintf(err, CN_ERR_LEN, "rebalance.lease_time (%lld ms) must be above "
                 "storage.request_timeout + 500 ms: a claim of the lease is read back after that",
                 (long long)cfg->rebalance_lease_time_ms);
        return CN_INVAL;
    }
    if (cfg->s3_credentials == NULL || cfg->s3_credentials[0] == '\0') {
        snprintf(err, CN_ERR_LEN, "s3.credentials_file is required (anonymous access is refused)");
        return CN_INVAL;
    }
    return CN_OK;
}
