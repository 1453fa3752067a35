/* Metrics for the daemons: counters, gauges and fixed-bucket histograms,
 * rendered in the Prometheus text exposition format (version 0.0.4).
 * Recording takes no lock and shares no cache line: each thread adds into
 * its own shard of slots (made on its first use, merged into the registry
 * when the thread exits); a scrape sums the shards. Values are unsigned
 * integers in a unit of 10^unit_exp (microseconds: -6), printed scaled, so
 * names follow Prometheus conventions (seconds, bytes, _total). */
#ifndef CN_METRICS_H
#define CN_METRICS_H

#include <stddef.h>
#include <stdint.h>

enum cn_metric_type { CN_METRIC_COUNTER, CN_METRIC_GAUGE, CN_METRIC_HISTOGRAM };

struct cn_metrics;

/* An empty registry; aborts on OOM. Free with cn_metrics_free() once no
 * thread records into it any more. */
struct cn_metrics *cn_metrics_new(void);
void cn_metrics_free(struct cn_metrics *m);

/* ---- registration: all of it before the first recording ---- */

/* Registers one series (one set of label values) of the family name and
 * returns its id for the recording calls. labels is NULL or a
 * NULL-terminated list of name, value pairs ({"op", "PUT", NULL}); values
 * may hold any bytes but NUL (they are escaped on output). The first series
 * of a name fixes the family's help text, type and unit; later ones must
 * agree. Histogram bounds are the bucket upper bounds (inclusive, strictly
 * increasing, in the recorded unit; +Inf is implied); at most
 * CN_METRICS_MAX_BOUNDS. A bad name, a mismatch with the family, or a
 * registration after recording started is a programming error: CN_ASSERT. */
#define CN_METRICS_MAX_BOUNDS 32
uint32_t cn_metrics_counter(struct cn_metrics *m, const char *name, const char *help,
                            int unit_exp, const char *const *labels);
uint32_t cn_metrics_gauge(struct cn_metrics *m, const char *name, const char *help,
                          int unit_exp, const char *const *labels);
uint32_t cn_metrics_histogram(struct cn_metrics *m, const char *name, const char *help,
                              int unit_exp, const char *const *labels, const uint64_t *bounds,
                              uint32_t n_bounds);

/* ---- recording: any thread, no lock ---- */

/* Adds n to a counter or gauge (gauges sum the deltas of all threads, so one
 * thread may add what another subtracts). */
void cn_metrics_add(struct cn_metrics *m, uint32_t id, uint64_t n);
void cn_metrics_sub(struct cn_metrics *m, uint32_t id, uint64_t n);

/* Counts value into its bucket of histogram id and into its _sum. */
void cn_metrics_observe(struct cn_metrics *m, uint32_t id, uint64_t value);

/* Sets the registry-wide value of a counter or gauge that is computed
 * rather than counted (a collect callback's job, or one owner thread's).
 * A series is either set or added to, not both. */
void cn_metrics_set(struct cn_metrics *m, uint32_t id, int64_t value);

/* ---- scraping ---- */

/* Called at the start of each render, on the rendering thread, to set the
 * computed series (cn_metrics_set). Register before recording starts. */
typedef void (*cn_metrics_collect_cb)(struct cn_metrics *m, void *arg);
void cn_metrics_on_collect(struct cn_metrics *m, cn_metrics_collect_cb cb, void *arg);

/* ---- series named later: any thread, before or after recording starts ---- */

/* Leaves series id out of the rendered page (its slots still count) until
 * cn_metrics_show(): for series registered ahead, whose label values are
 * known only later (a storage node a cluster map adds). */
void cn_metrics_hide(struct cn_metrics *m, uint32_t id);
/* Renders series id again, with labels (a list as at registration)
 * replacing its label values; NULL keeps them. The caller keeps the
 * family's series distinct (hide the series a new one replaces first). */
void cn_metrics_show(struct cn_metrics *m, uint32_t id, const char *const *labels);

/* Runs the collect callbacks and renders every family, in registration
 * order, as Prometheus text. *out (cn_malloc'd, NUL-terminated, *len bytes
 * before the NUL) is the caller's to cn_free. Never fails. */
void cn_metrics_render(struct cn_metrics *m, char **out, size_t *len);

/* The current merged value of a counter or gauge, or of a histogram's
 * count (for tests and for STATS-like uses). */
int64_t cn_metrics_value(struct cn_metrics *m, uint32_t id);

#endif
