/* What one event-loop thread owns and every request on it uses: the loop,
 * its HTTP side (http_loop.h: listener, connections, drain), the storage
 * client and store, the SigV4 verifier, and read-only pointers to the
 * process-wide settings, ring and credentials. Assembled by server.c. */
#ifndef GW_WORKER_H
#define GW_WORKER_H

#include <pthread.h>
#include <stdint.h>

#include <event2/event.h>

#include "config.h"
#include "credentials.h"
#include "http_loop.h"
#include "s3_ctx.h"
#include "sigv4.h"
#include "storage_client.h"
#include "store.h"

struct gw_lo_reclaim;
struct gw_bucket_owner_cache;
struct gw_s3_metrics;

struct gw_server;

struct gw_worker {
    struct gw_server *server;
    uint32_t index;
    struct event_base *base;
    struct gw_http_loop http;        /* the HTTP layer of this thread */
    struct gw_storage_client *client;
    /* what the S3 layer's requests on this thread use: the store, the chunk
     * reclaimer, the owner cache, the SigV4 verifier, the metrics and the
     * settings (s3_ctx.h); it owns none of them: server.c frees them */
    struct gw_s3_ctx s3;
    const struct gw_config *cfg;
    const struct gw_credentials *creds;
    pthread_t thread;
};

#endif
