/* The storage node's metrics (docs/operations.md lists them): the series
 * registered on a cn_metrics registry, the calls that count where the work
 * happens (reply path, writer, scrub, compaction), and the gauges computed at
 * scrape time from the store and the server. Every sn_metrics_* recording
 * call takes NULL (metrics off) and then does nothing. */
#ifndef SN_METRICS_H
#define SN_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct sn_metrics;
struct sn_store;
struct sn_server;

/* Registers every series. data_dir (copied) is where disk usage is measured.
 * Aborts on OOM; free with sn_metrics_free() after the threads that record
 * have stopped. */
struct sn_metrics *sn_metrics_new(const char *data_dir);
void sn_metrics_free(struct sn_metrics *m);

/* Where the scrape-time gauges come from; either may be NULL (not shown as
 * 0 but left at 0). Call before the node serves. */
void sn_metrics_attach(struct sn_metrics *m, struct sn_store *store, struct sn_server *srv);

/* A reply to a request of op (a MSG_OP_*, or 0/unknown for an undecodable
 * one) with status st leaves, t0_us (monotonic) after it arrived, having
 * received in_bytes and sending out_bytes of payload. Any thread. */
void sn_metrics_request_done(struct sn_metrics *m, uint32_t op, uint32_t st, uint64_t t0_us,
                             uint64_t in_bytes, uint64_t out_bytes);

/* The writer committed a batch of n writes, bytes appended. */
void sn_metrics_batch(struct sn_metrics *m, uint32_t n, uint64_t bytes);
/* One round of fdatasync of the containers took us microseconds. */
void sn_metrics_fsync(struct sn_metrics *m, uint64_t us);

/* Scrub progress: a scrub starts / ends; bytes and records verified. */
void sn_metrics_scrub_running(struct sn_metrics *m, int running);
void sn_metrics_scrub_progress(struct sn_metrics *m, uint64_t records, uint64_t bytes);

/* Compaction progress: a run starts with `total` candidate containers
 * (running), then each container is done; bytes copied forward. */
void sn_metrics_compaction_start(struct sn_metrics *m, uint64_t total);
void sn_metrics_compaction_container_done(struct sn_metrics *m);
void sn_metrics_compaction_moved(struct sn_metrics *m, uint64_t bytes);
void sn_metrics_compaction_end(struct sn_metrics *m);

/* Runs the scrape: *out (cn_malloc'd, *len bytes) is Prometheus text. */
void sn_metrics_render(struct sn_metrics *m, char **out, size_t *len);

/* The registry underneath (what cn_metrics_http serves). */
struct cn_metrics *sn_metrics_registry(struct sn_metrics *m);

#endif
