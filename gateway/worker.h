/* What one event-loop thread owns and every request on it uses: the loop,
 * the storage client and store, the SigV4 verifier, and read-only pointers to
 * the process-wide settings, ring and credentials. Defined by server.c. */
#ifndef GW_WORKER_H
#define GW_WORKER_H

#include <pthread.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "config.h"
#include "credentials.h"
#include "http_parser.h"
#include "sigv4.h"
#include "storage_client.h"
#include "store.h"

struct gw_lo_reclaim;

struct gw_server;

struct gw_worker {
    struct gw_server *server;
    uint32_t index;
    struct event_base *base;
    struct evconnlistener *listener;
    struct gw_storage_client *client;
    struct gw_store *store;
    struct gw_lo_reclaim *reclaim;   /* chunk deletes of large objects (lo_reclaim.c) */
    struct gw_sigv4 *sigv4;
    const struct gw_config *cfg;
    const struct gw_credentials *creds;
    struct gw_http_limits http_limits;
    pthread_t thread;
    uint64_t next_req;   /* request counter of this thread */
    uint64_t n_conns;    /* open connections */
};

/* A new request id: unique per process run (start time, thread, counter). */
uint64_t gw_worker_next_request_id(struct gw_worker *w);

#endif
