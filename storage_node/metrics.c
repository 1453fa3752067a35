/* The node's series on a cn_metrics registry (see metrics.h). Counters of
 * requests, bytes, batches, syncs and scrub/compaction work are counted on
 * the thread doing the work; the store's accounting, disk usage and queue
 * depths are read at scrape time by sn_metrics_collect. */
#include "metrics.h"

#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>

#include "cn/alloc.h"
#include "cn/metrics.h"
#include "cn/time.h"
#include "msg/msg.h"
#include "hint.h"
#include "server.h"
#include "store.h"

#define SN_METRICS_NS "cairn_storage_"

/* Scrape-time values of sn_store_stats / sn_server_stats / statvfs. */
enum sn_metrics_src {
    SN_SRC_OBJECTS, SN_SRC_TOMBSTONES, SN_SRC_LIVE, SN_SRC_DEAD, SN_SRC_USED, SN_SRC_CONTAINERS,
    SN_SRC_FS_SIZE, SN_SRC_FS_AVAIL, SN_SRC_INFLIGHT, SN_SRC_IO_QUEUE, SN_SRC_WRITE_QUEUE,
    SN_SRC_MEM, SN_SRC_PUTS, SN_SRC_DELETES, SN_SRC_STALE, SN_SRC_CORRUPT_READ,
    SN_SRC_CORRUPT_SCRUB, SN_SRC_SCRUBS, SN_SRC_COMPACTIONS, SN_SRC_RECLAIMED_CONTAINERS,
    SN_SRC_RECLAIMED_BYTES, SN_SRC_RELOCATIONS, SN_SRC_PURGED, SN_SRC_RECOVERED,
    SN_SRC_TORN_TAILS, SN_SRC_AUTO_COMPACTIONS, SN_SRC_COMPACT_THROTTLE, SN_SRC_HINTS,
    SN_SRC_HINT_BYTES, SN_SRC_HINTS_ADDED, SN_SRC_HINTS_REFUSED, SN_SRC_HINTS_REMOVED,
    SN_SRC_MAX_
};

struct sn_metrics {
    struct cn_metrics *reg;
    char *data_dir;
    struct sn_store *store;
    struct sn_server *srv;
    uint32_t requests[MSG_OP_MAX_], duration[MSG_OP_MAX_];
    uint8_t has_op[MSG_OP_MAX_];   /* ops of the schema (numbers may have gaps) */
    uint32_t responses[MSG_ST_MAX_];
    uint32_t bytes_in, bytes_out;
    uint32_t batch_writes, batch_bytes, fsync;
    uint32_t scrub_running, scrub_records, scrub_bytes;
    uint32_t comp_running, comp_total, comp_done, comp_bytes;
    uint64_t comp_done_n;   /* admin thread only: one compaction at a time */
    uint32_t src[SN_SRC_MAX_];
};

/* Latency bounds in microseconds: 50 µs .. 10 s. */
static const uint64_t sn_metrics_lat_bounds[] = {
    50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000,
    100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000};
/* Writes per group commit: powers of two up to the largest max_batch. */
static const uint64_t sn_metrics_batch_bounds[] = {
    1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096, 16384, 65536};
/* Bytes per group commit: 4 KiB .. 256 MiB by fours. */
static const uint64_t sn_metrics_size_bounds[] = {
    4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864, 268435456};

/* Scrape-time series: name, help, type (0 counter, 1 gauge), label. */
static const struct {
    const char *name, *help;
    int gauge;
    const char *label, *value;
    int unit_exp;   /* the value is 10^unit_exp of the unit (µs: -6) */
} sn_metrics_src_desc[SN_SRC_MAX_] = {
    [SN_SRC_OBJECTS] = {"objects", "Live objects: index entries that are not tombstones.", 1},
    [SN_SRC_TOMBSTONES] = {"tombstones", "Index entries that are tombstones.", 1},
    [SN_SRC_LIVE] = {"live_bytes", "Bytes of the records the index points at (tombstones included).", 1},
    [SN_SRC_DEAD] = {"dead_bytes", "Bytes of overwritten and deleted records not yet compacted away.", 1},
    [SN_SRC_USED] = {"container_bytes", "Bytes of all container files (live + dead).", 1},
    [SN_SRC_CONTAINERS] = {"containers", "Container files.", 1},
    [SN_SRC_FS_SIZE] = {"filesystem_size_bytes", "Size of the filesystem holding data_dir.", 1},
    [SN_SRC_FS_AVAIL] = {"filesystem_avail_bytes", "Bytes available to the node on the filesystem holding data_dir.", 1},
    [SN_SRC_INFLIGHT] = {"inflight_requests", "Requests accepted and not yet answered.", 1},
    [SN_SRC_IO_QUEUE] = {"io_queue_depth", "Requests waiting for an I/O (or admin) thread.", 1},
    [SN_SRC_WRITE_QUEUE] = {"write_queue_depth", "Writes waiting for the group-commit writer.", 1},
    [SN_SRC_MEM] = {"allocated_bytes", "Bytes allocated through cn_malloc.", 1},
    [SN_SRC_PUTS] = {"stored_writes_total", "Writes the writer completed, by kind (applied or stale).", 0, "op", "put"},
    [SN_SRC_DELETES] = {"stored_writes_total", "Writes the writer completed, by kind (applied or stale).", 0, "op", "delete"},
    [SN_SRC_STALE] = {"stale_writes_total", "PUTs and DELETEs not applied because the key held a newer version.", 0},
    [SN_SRC_CORRUPT_READ] = {"corrupt_records_total", "Corrupt records found, by what found them.", 0, "found_by", "read"},
    [SN_SRC_CORRUPT_SCRUB] = {"corrupt_records_total", "Corrupt records found, by what found them.", 0, "found_by", "scrub"},
    [SN_SRC_SCRUBS] = {"scrubs_total", "Scrubs finished.", 0},
    [SN_SRC_COMPACTIONS] = {"compactions_total", "Compaction runs finished.", 0},
    [SN_SRC_RECLAIMED_CONTAINERS] = {"compaction_reclaimed_containers_total", "Containers compaction removed.", 0},
    [SN_SRC_RECLAIMED_BYTES] = {"compaction_reclaimed_bytes_total", "Container bytes compaction removed.", 0},
    [SN_SRC_RELOCATIONS] = {"compaction_relocated_records_total", "Live records compaction copied forward.", 0},
    [SN_SRC_PURGED] = {"compaction_purged_tombstones_total", "Tombstones compaction dropped from the index.", 0},
    [SN_SRC_RECOVERED] = {"recovered_records", "Records indexed by recovery when the store was opened.", 1},
    [SN_SRC_TORN_TAILS] = {"torn_tails", "Torn container tails cut by recovery when the store was opened.", 1},
    [SN_SRC_AUTO_COMPACTIONS] = {"compaction_auto_runs_total", "Compaction runs the node started by itself (dead space over the threshold).", 0},
    [SN_SRC_COMPACT_THROTTLE] = {"compaction_throttle_seconds_total", "Time automatic compaction waited to stay under compaction.max_rate.", 0, NULL, NULL, -6},
    [SN_SRC_HINTS] = {"hints", "Hints this node keeps for peers that missed writes (hinted handoff).", 1},
    [SN_SRC_HINT_BYTES] = {"hint_bytes", "Bytes of those hints (bounded by handoff.max_hint_bytes).", 1},
    [SN_SRC_HINTS_ADDED] = {"hints_stored_total", "New hints kept for peers (HINT_ADD).", 0},
    [SN_SRC_HINTS_REFUSED] = {"hints_dropped_total", "New hints refused because the hint store was full (handoff.max_hints, handoff.max_hint_bytes).", 0},
    [SN_SRC_HINTS_REMOVED] = {"hints_replayed_total", "Hints dropped after a gateway replayed them to their peer (HINT_TAKE).", 0},
};

static void sn_metrics_lower(const char *s, char *out, size_t n)
{
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++)
        out[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
    out[i] = '\0';
}

static void sn_metrics_register_requests(struct sn_metrics *m)
{
    for (uint32_t op = 1; op < MSG_OP_MAX_; op++) {
        const char *l[] = {"op", msg_op_str(op), NULL};
        m->has_op[op] = strcmp(l[1], "?") != 0;
        if (!m->has_op[op])
            continue;
        m->requests[op] = cn_metrics_counter(m->reg, SN_METRICS_NS "requests_total",
                                             "Requests answered, by op.", 0, l);
    }
    for (uint32_t op = 1; op < MSG_OP_MAX_; op++) {
        const char *l[] = {"op", msg_op_str(op), NULL};
        if (!m->has_op[op])
            continue;
        m->duration[op] = cn_metrics_histogram(
            m->reg, SN_METRICS_NS "request_duration_seconds",
            "Time from a request's arrival to its reply being queued, by op.", -6, l,
            sn_metrics_lat_bounds, CN_ARRAY_LEN(sn_metrics_lat_bounds));
    }
    for (uint32_t st = 0; st < MSG_ST_MAX_; st++) {
        char name[32];
        sn_metrics_lower(msg_status_str(st), name, sizeof(name));
        const char *l[] = {"status", name, NULL};
        m->responses[st] = cn_metrics_counter(
            m->reg, SN_METRICS_NS "responses_total",
            "Replies by status (every status but ok is an error of some kind).", 0, l);
    }
    m->bytes_in = cn_metrics_counter(m->reg, SN_METRICS_NS "received_payload_bytes_total",
                                     "Payload bytes of the requests answered (PUT data).", 0,
                                     NULL);
    m->bytes_out = cn_metrics_counter(m->reg, SN_METRICS_NS "sent_payload_bytes_total",
                                      "Payload bytes of the replies (GET data).", 0, NULL);
}

static void sn_metrics_register_work(struct sn_metrics *m)
{
    struct cn_metrics *r = m->reg;
    m->batch_writes = cn_metrics_histogram(r, SN_METRICS_NS "group_commit_writes",
                                           "Writes per group commit of the writer.", 0, NULL,
                                           sn_metrics_batch_bounds,
                                           CN_ARRAY_LEN(sn_metrics_batch_bounds));
    m->batch_bytes = cn_metrics_histogram(r, SN_METRICS_NS "group_commit_bytes",
                                          "Bytes appended per group commit.", 0, NULL,
                                          sn_metrics_size_bounds,
                                          CN_ARRAY_LEN(sn_metrics_size_bounds));
    m->fsync = cn_metrics_histogram(r, SN_METRICS_NS "fsync_duration_seconds",
                                    "Time of one round of fdatasync of the containers.", -6,
                                    NULL, sn_metrics_lat_bounds,
                                    CN_ARRAY_LEN(sn_metrics_lat_bounds));
    m->scrub_running = cn_metrics_gauge(r, SN_METRICS_NS "scrub_running",
                                        "1 while a scrub runs.", 0, NULL);
    m->scrub_records = cn_metrics_counter(r, SN_METRICS_NS "scrub_records_total",
                                          "Records scrubs have verified.", 0, NULL);
    m->scrub_bytes = cn_metrics_counter(r, SN_METRICS_NS "scrub_bytes_total",
                                        "Data bytes scrubs have read and verified.", 0, NULL);
    m->comp_running = cn_metrics_gauge(r, SN_METRICS_NS "compaction_running",
                                       "1 while a compaction runs.", 0, NULL);
    m->comp_total = cn_metrics_gauge(r, SN_METRICS_NS "compaction_candidate_containers",
                                     "Containers the current (or last) compaction set out to compact.",
                                     0, NULL);
    m->comp_done = cn_metrics_gauge(r, SN_METRICS_NS "compaction_done_containers",
                                    "Of those, the containers it has finished.", 0, NULL);
    m->comp_bytes = cn_metrics_counter(r, SN_METRICS_NS "compaction_moved_bytes_total",
                                       "Record bytes compaction copied forward.", 0, NULL);
}

/* The collect callback: reads the store, the server and the filesystem. */
static void sn_metrics_collect(struct cn_metrics *r, void *arg)
{
    struct sn_metrics *m = arg;
    uint64_t v[SN_SRC_MAX_] = {0};
    if (m->store != NULL) {
        struct sn_store_stats s;
        sn_store_stats(m->store, &s);
        v[SN_SRC_OBJECTS] = s.records;
        v[SN_SRC_TOMBSTONES] = s.tombstones;
        v[SN_SRC_LIVE] = s.bytes_live;
        v[SN_SRC_DEAD] = s.bytes_dead;
        v[SN_SRC_USED] = s.bytes_total;
        v[SN_SRC_CONTAINERS] = s.containers;
        v[SN_SRC_WRITE_QUEUE] = s.queue_depth;
        v[SN_SRC_PUTS] = s.puts;
        v[SN_SRC_DELETES] = s.deletes;
        v[SN_SRC_STALE] = s.stale_writes;
        v[SN_SRC_CORRUPT_READ] = s.corrupt_reads;
        v[SN_SRC_CORRUPT_SCRUB] = s.scrub_corrupt;
        v[SN_SRC_SCRUBS] = s.scrubs;
        v[SN_SRC_COMPACTIONS] = s.compactions;
        v[SN_SRC_RECLAIMED_CONTAINERS] = s.containers_reclaimed;
        v[SN_SRC_RECLAIMED_BYTES] = s.bytes_reclaimed;
        v[SN_SRC_RELOCATIONS] = s.relocations;
        v[SN_SRC_PURGED] = s.tombstones_purged;
        v[SN_SRC_RECOVERED] = s.recovered_records;
        v[SN_SRC_TORN_TAILS] = s.torn_tails;
        v[SN_SRC_AUTO_COMPACTIONS] = s.auto_compactions;
        v[SN_SRC_COMPACT_THROTTLE] = s.compact_throttle_us;
    }
    if (m->srv != NULL) {
        struct sn_server_stats f;
        sn_server_stats(m->srv, &f);
        v[SN_SRC_INFLIGHT] = f.inflight;
        v[SN_SRC_IO_QUEUE] = f.queued;
        struct sn_hints *hints = sn_server_opts(m->srv)->hints;
        if (hints != NULL) {
            struct sn_hint_stats hs;
            sn_hints_stats(hints, &hs);
            v[SN_SRC_HINTS] = hs.held;
            v[SN_SRC_HINT_BYTES] = hs.bytes;
            v[SN_SRC_HINTS_ADDED] = hs.added;
            v[SN_SRC_HINTS_REFUSED] = hs.refused;
            v[SN_SRC_HINTS_REMOVED] = hs.removed;
        }
    }
    struct statvfs fs;
    if (statvfs(m->data_dir, &fs) == 0) {
        v[SN_SRC_FS_SIZE] = (uint64_t)fs.f_blocks * fs.f_frsize;
        v[SN_SRC_FS_AVAIL] = (uint64_t)fs.f_bavail * fs.f_frsize;
    }
    v[SN_SRC_MEM] = cn_alloc_used();
    for (int i = 0; i < SN_SRC_MAX_; i++)
        cn_metrics_set(r, m->src[i], (int64_t)v[i]);
}

static void sn_metrics_register_src(struct sn_metrics *m)
{
    for (int i = 0; i < SN_SRC_MAX_; i++) {
        char name[128];
        snprintf(name, sizeof(name), SN_METRICS_NS "%s", sn_metrics_src_desc[i].name);
        const char *l[] = {sn_metrics_src_desc[i].label, sn_metrics_src_desc[i].value, NULL};
        const char *const *labels = sn_metrics_src_desc[i].label ? l : NULL;
        int ue = sn_metrics_src_desc[i].unit_exp;
        m->src[i] = sn_metrics_src_desc[i].gauge
                        ? cn_metrics_gauge(m->reg, name, sn_metrics_src_desc[i].help, ue, labels)
                        : cn_metrics_counter(m->reg, name, sn_metrics_src_desc[i].help, ue, labels);
    }
    cn_metrics_on_collect(m->reg, sn_metrics_collect, m);
}

struct sn_metrics *sn_metrics_new(const char *data_dir)
{
    struct sn_metrics *m = cn_calloc(1, sizeof(*m));
    m->reg = cn_metrics_new();
    m->data_dir = cn_strdup(data_dir);
    sn_metrics_register_requests(m);
    sn_metrics_register_work(m);
    sn_metrics_register_src(m);
    return m;
}

void sn_metrics_free(struct sn_metrics *m)
{
    if (m == NULL)
        return;
    cn_metrics_free(m->reg);
    cn_free(m->data_dir);
    cn_free(m);
}

void sn_metrics_attach(struct sn_metrics *m, struct sn_store *store, struct sn_server *srv)
{
    m->store = store;
    m->srv = srv;
}

void sn_metrics_request_done(struct sn_metrics *m, uint32_t op, uint32_t st, uint64_t t0_us,
                             uint64_t in_bytes, uint64_t out_bytes)
{
    if (m == NULL)
        return;
    if (st < MSG_ST_MAX_)
        cn_metrics_add(m->reg, m->responses[st], 1);
    if (op == 0 || op >= MSG_OP_MAX_ || !m->has_op[op])
        return;   /* undecodable: only its status is counted */
    cn_metrics_add(m->reg, m->requests[op], 1);
    if (t0_us != 0)
        cn_metrics_observe(m->reg, m->duration[op], cn_time_mono_us() - t0_us);
    if (in_bytes)
        cn_metrics_add(m->reg, m->bytes_in, in_bytes);
    if (out_bytes)
        cn_metrics_add(m->reg, m->bytes_out, out_bytes);
}

void sn_metrics_batch(struct sn_metrics *m, uint32_t n, uint64_t bytes)
{
    if (m == NULL)
        return;
    cn_metrics_observe(m->reg, m->batch_writes, n);
    cn_metrics_observe(m->reg, m->batch_bytes, bytes);
}

void sn_metrics_fsync(struct sn_metrics *m, uint64_t us)
{
    if (m != NULL)
        cn_metrics_observe(m->reg, m->fsync, us);
}

void sn_metrics_scrub_running(struct sn_metrics *m, int running)
{
    if (m != NULL)
        cn_metrics_set(m->reg, m->scrub_running, running);
}

void sn_metrics_scrub_progress(struct sn_metrics *m, uint64_t records, uint64_t bytes)
{
    if (m == NULL)
        return;
    if (records)
        cn_metrics_add(m->reg, m->scrub_records, records);
    if (bytes)
        cn_metrics_add(m->reg, m->scrub_bytes, bytes);
}

void sn_metrics_compaction_start(struct sn_metrics *m, uint64_t total)
{
    if (m == NULL)
        return;
    m->comp_done_n = 0;
    cn_metrics_set(m->reg, m->comp_done, 0);
    cn_metrics_set(m->reg, m->comp_total, (int64_t)total);
    cn_metrics_set(m->reg, m->comp_running, 1);
}

void sn_metrics_compaction_container_done(struct sn_metrics *m)
{
    if (m != NULL)
        cn_metrics_set(m->reg, m->comp_done, (int64_t)++m->comp_done_n);
}

void sn_metrics_compaction_moved(struct sn_metrics *m, uint64_t bytes)
{
    if (m != NULL && bytes != 0)
        cn_metrics_add(m->reg, m->comp_bytes, bytes);
}

void sn_metrics_compaction_end(struct sn_metrics *m)
{
    if (m != NULL)
        cn_metrics_set(m->reg, m->comp_running, 0);
}

struct cn_metrics *sn_metrics_registry(struct sn_metrics *m)
{
    return m->reg;
}

void sn_metrics_render(struct sn_metrics *m, char **out, size_t *len)
{
    cn_metrics_render(m->reg, out, len);
}
