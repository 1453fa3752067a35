/* Keys kept in the cluster, followed by a gateway (docs/operations.md): on
 * one worker's loop, every interval it lists "s/keys/" (key_record.h),
 * reads the records it has not seen at their current version, opens their
 * secrets with the master key and, when the set changed, hands a new
 * credentials table (the file's keys plus the cluster's; the file wins a
 * conflict) to publish(), which swaps it into every worker. A record that
 * does not parse or open is left out with a warning (once per version); a
 * listing that fails keeps the last set. At most max_keys keys are held:
 * past that, the rest of the listing is left out with a warning. */
#ifndef GW_KEY_SYNC_H
#define GW_KEY_SYNC_H

#include <stdint.h>

#include <event2/event.h>

#include "credentials.h"
#include "key_record.h"

struct gw_store;
struct gw_key_sync;
struct cn_metrics;

struct gw_key_sync_opts {
    int64_t interval_ms;                          /* s3.keys_refresh */
    uint32_t max_keys;                            /* s3.keys_max */
    unsigned char master_key[GW_KEY_MASTER_LEN];  /* copied, wiped at free */
    const struct gw_credentials *file;            /* held by the sync */
    struct cn_metrics *reg;     /* NULL: no metrics; else the cairn_gateway_keys_* series */
};

/* Called on the sync's loop with a new table; it takes the reference. */
typedef void (*gw_key_sync_publish_cb)(struct gw_credentials *table, void *arg);

/* Starts following on base through store (both outlive the sync); the first
 * round runs at once. */
struct gw_key_sync *gw_key_sync_new(struct event_base *base, struct gw_store *store,
                                    const struct gw_key_sync_opts *o,
                                    gw_key_sync_publish_cb publish, void *arg);
/* Stops the timer; store callbacks still to come do nothing. Call before the
 * storage client is freed (which fails what is in flight). */
void gw_key_sync_close(struct gw_key_sync *ks);
/* Frees the sync after gw_key_sync_close() and the client's free. NULL ok. */
void gw_key_sync_free(struct gw_key_sync *ks);

/* Keys held now (cluster keys that opened). */
uint32_t gw_key_sync_count(const struct gw_key_sync *ks);

#endif
