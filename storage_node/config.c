/* The storage node's settings table (see config.h and docs/storage.md). */
#include "config.h"

#include <stddef.h>
#include <stdio.h>

#include "record.h"

static const char *const sn_config_sync_modes[] = {"none", "periodic", "writethrough", NULL};
static const char *const sn_config_log_levels[] = {"debug", "info", "warn", "error", NULL};
static const char *const sn_config_auths[] = {"none", "curve", NULL};

#define SN_OFF(f) offsetof(struct sn_config, f)

const struct cn_config_desc sn_config_table[] = {
    {"listen", CN_CONF_STRING, SN_OFF(listen), "tcp://127.0.0.1:7001", 0, 0, NULL,
     "ZeroMQ endpoint the ROUTER socket binds: tcp://HOST:PORT, or ipc://PATH for gateways on this host (made mode 0600: only this user may connect)"},
    {"data_dir", CN_CONF_STRING, SN_OFF(data_dir), "./data", 0, 0, NULL,
     "directory of the containers/ and index/ of this node"},
    {"node_id", CN_CONF_STRING, SN_OFF(node_id), "storage_0", 0, 0, NULL,
     "the node's name in replies (PING, STATS)"},
    {"io_threads", CN_CONF_INT, SN_OFF(io_threads), "8", 1, 256, NULL,
     "threads doing disk reads and request work"},
    {"scrub_threads", CN_CONF_INT, SN_OFF(scrub_threads), "2", 1, 256, NULL,
     "reader/checksum threads of a scrub"},
    {"obj_containers.sync_mode", CN_CONF_ENUM, SN_OFF(sync_mode), "writethrough", 0, 0,
     sn_config_sync_modes,
     "none: never fdatasync; periodic: every sync_interval; writethrough: before each reply"},
    {"obj_containers.sync_interval", CN_CONF_MSEC, SN_OFF(sync_interval_ms), "1s", 1, 3600000,
     NULL, "fdatasync period of the periodic sync_mode"},
    {"obj_containers.max_container_len", CN_CONF_SIZE, SN_OFF(max_container_len), "1G",
     1 << 20, 1ll << 40, NULL, "a container file rolls over past this size"},
    {"obj_containers.read_mmap", CN_CONF_BOOL, SN_OFF(read_mmap), "true", 0, 0, NULL,
     "serve record data from a read-only mapping of the container (one copy fewer per byte) "
     "instead of pread"},
    {"compaction.dead_ratio", CN_CONF_INT, SN_OFF(dead_ratio_pct), "50", 1, 100, NULL,
     "percent of dead bytes at which a container is compacted"},
    {"compaction.interval", CN_CONF_MSEC, SN_OFF(compaction_interval_ms), "0", 0,
     86400000ll * 30, NULL, "older name of compaction.check_interval: when not 0 it is used "
     "instead (0: use compaction.check_interval)"},
    {"compaction.check_interval", CN_CONF_MSEC, SN_OFF(compaction_check_ms), "10s", 0,
     86400000ll * 30, NULL, "how often the node looks for containers to compact by itself "
     "(dead_ratio and min_dead_bytes); 0: only on COMPACT"},
    {"compaction.min_dead_bytes", CN_CONF_SIZE, SN_OFF(compaction_min_dead), "1M", 0,
     1ll << 40, NULL, "automatic compaction takes a container only with at least this many "
     "dead bytes (and dead_ratio)"},
    {"compaction.max_rate", CN_CONF_SIZE, SN_OFF(compaction_max_rate), "32M", 0, 1ll << 40,
     NULL, "automatic compaction copies at most this many record bytes per second "
     "(0: no limit); a COMPACT request is not limited"},
    {"compaction.tombstone_gc_after", CN_CONF_MSEC, SN_OFF(tombstone_gc_after_ms), "240h", 0,
     86400000ll * 3650, NULL,
     "compaction drops tombstones older than this (0: keep them forever); "
     "repair a replica that was down within it"},
    {"max_key_len", CN_CONF_SIZE, SN_OFF(max_key_len), "2048", 1, SN_RECORD_MAX_KEY, NULL,
     "longest key accepted"},
    {"max_meta_len", CN_CONF_SIZE, SN_OFF(max_meta_len), "64K", 0, SN_RECORD_MAX_META, NULL,
     "longest meta accepted"},
    {"max_record_len", CN_CONF_SIZE, SN_OFF(max_record_len), "64M", 0, 1ll << 30, NULL,
     "largest record (PUT payload) accepted"},
    {"max_list", CN_CONF_INT, SN_OFF(max_list), "1000", 1, 100000, NULL,
     "most entries of a LIST reply"},
    {"max_digest_scan", CN_CONF_INT, SN_OFF(max_digest_scan), "100000", 16, 10000000, NULL,
     "most index entries one DIGEST request reads (about 0.1 s of one I/O thread per 100000)"},
    {"inline_max", CN_CONF_SIZE, SN_OFF(inline_max), "64K", 0, 256 * 1024, NULL,
     "GET/HEAD of cached records with at most this many bytes of data are answered by the socket thread itself, and PUTs of at most this many bytes (and DELETEs) handed by it to the writer, not through an I/O thread (0: never)"},
    {"cpu_affinity", CN_CONF_STRING, SN_OFF(cpu_affinity), "", 0, 0, NULL,
     "CPUs the node's threads run on, as a CPU list (0-3,8: what taskset -c takes); empty: "
     "any CPU. For several daemons on few cores: a node's threads hand each request to "
     "each other, and waking a thread on the same CPU costs less than on another "
     "(cairn-local pins its nodes; docs/storage.md \"CPU affinity\")"},
    {"max_inflight", CN_CONF_INT, SN_OFF(max_inflight), "1024", 1, 1000000, NULL,
     "requests accepted but not yet answered; past it the node answers BUSY"},
    {"group_commit.max_batch", CN_CONF_INT, SN_OFF(max_batch), "512", 1, 65536, NULL,
     "most writes the writer commits with one sync"},
    {"index.cache_size", CN_CONF_SIZE, SN_OFF(index_cache), "8M", 0, 1ll << 40, NULL,
     "LevelDB block cache"},
    {"handoff.max_hints", CN_CONF_INT, SN_OFF(handoff_max_hints), "1000000", 0, 1000000000,
     NULL, "most hints this node keeps for peers that missed writes (hinted handoff, all peers "
     "together); when full, new hints are refused (the oldest are kept) and counted, and "
     "cairn-admin repair catches those writes up"},
    {"handoff.max_hint_bytes", CN_CONF_SIZE, SN_OFF(handoff_max_hint_bytes), "256M", 0,
     1ll << 40, NULL, "most bytes of hints kept (key bytes + 26 + the peer's id each); "
     "when full, as handoff.max_hints"},
    {"metrics.listen", CN_CONF_STRING, SN_OFF(metrics_listen), "127.0.0.1", 0, 0, NULL,
     "address the metrics endpoint (GET /metrics, Prometheus text) binds"},
    {"metrics.port", CN_CONF_INT, SN_OFF(metrics_port), "0", 0, 65535, NULL,
     "TCP port of the metrics endpoint; 0: off (nothing is counted)"},
    {"log_level", CN_CONF_ENUM, SN_OFF(log_level), "info", 0, 0, sn_config_log_levels,
     "debug, info, warn or error"},
    {"auth", CN_CONF_ENUM, SN_OFF(auth), "none", 0, 0, sn_config_auths,
     "who may connect: curve (ZeroMQ CURVE: only client keys of the allow-list; "
     "docs/security.md) or none (anyone who reaches listen: warned at start)"},
    {"security.curve_secret_key_file", CN_CONF_STRING, SN_OFF(curve_secret_key_file), "", 0,
     0, NULL, "auth = curve: the node's secret key (Z85, mode 0600; cairn-admin keygen); "
     "clients need its public key"},
    {"security.curve_allowed_clients_file", CN_CONF_STRING, SN_OFF(curve_allowed_clients_file),
     "", 0, 0, NULL, "auth = curve: client public keys allowed to connect, one per line "
     "(# comments); SIGHUP re-reads it"},
    CN_CONFIG_END,
};

int sn_config_check(const struct sn_config *c, char err[CN_ERR_LEN])
{
    if (c->listen[0] == '\0' || c->data_dir[0] == '\0' || c->node_id[0] == '\0') {
        snprintf(err, CN_ERR_LEN, "listen, data_dir and node_id must not be empty");
        return CN_INVAL;
    }
    if (c->auth == SN_AUTH_CURVE &&
        (c->curve_secret_key_file[0] == '\0' || c->curve_allowed_clients_file[0] == '\0')) {
        snprintf(err, CN_ERR_LEN, "auth = curve needs security.curve_secret_key_file and "
                 "security.curve_allowed_clients_file");
        return CN_INVAL;
    }
    if (c->max_record_len > c->max_container_len) {
        snprintf(err, CN_ERR_LEN,
                 "max_record_len (%lld) is over obj_containers.max_container_len (%lld)",
                 (long long)c->max_record_len, (long long)c->max_container_len);
        return CN_INVAL;
    }
    return CN_OK;
}
