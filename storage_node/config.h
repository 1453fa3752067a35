/* The storage node's settings: one descriptor table (config.c) gives the
 * defaults, the `key = value` file, CAIRN_* environment overrides, --help and
 * --dump-config. */
#ifndef SN_CONFIG_H
#define SN_CONFIG_H

#include <stdint.h>

#include "cn/config.h"

struct sn_config {
    char *listen;
    char *data_dir;
    char *node_id;
    int64_t io_threads;
    int64_t scrub_threads;
    int sync_mode;                 /* enum sn_sync_mode */
    int64_t sync_interval_ms;
    int64_t max_container_len;
    int read_mmap;
    int64_t dead_ratio_pct;
    int64_t compaction_interval_ms;
    int64_t compaction_check_ms;
    int64_t compaction_min_dead;
    int64_t compaction_max_rate;
    int64_t tombstone_gc_after_ms;
    int64_t max_key_len;
    int64_t max_meta_len;
    int64_t max_record_len;
    int64_t max_list;
    int64_t max_digest_scan;
    int64_t max_inflight;
    int64_t inline_max;
    char *cpu_affinity;            /* CPU list, "" = any (cn/affinity.h) */
    int64_t max_batch;
    int64_t index_cache;
    int64_t handoff_max_hints;
    int64_t handoff_max_hint_bytes;
    char *metrics_listen;
    int64_t metrics_port;          /* 0: no metrics endpoint */
    int log_level;                 /* enum cn_log_level */
    int auth;                      /* enum sn_config_auth */
    char *curve_secret_key_file;
    char *curve_allowed_clients_file;
};

enum sn_config_auth { SN_AUTH_NONE, SN_AUTH_CURVE };

extern const struct cn_config_desc sn_config_table[];

/* Cross-key checks after loading (each setting alone is range-checked by the
 * table). Returns CN_OK or CN_INVAL with err naming the keys. */
int sn_config_check(const struct sn_config *c, char err[CN_ERR_LEN]);

#endif
