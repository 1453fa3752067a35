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
struct gw_bucket_owner_cache;
struct gw_accept;
struct gw_conn;

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
    struct gw_bucket_owner_cache *owners;   /* bucket -> owner (bucket_owner.c) */
    const struct gw_config *cfg;
    const struct gw_credentials *creds;
    struct gw_http_limits http_limits;
    pthread_t thread;
    uint64_t next_req;   /* request counter of this thread */
    uint64_t n_conns;    /* open connections */
    uint64_t n_conn_mem; /* connections not yet freed (open, or closed with holds) */
    struct gw_conn *conns;   /* the open ones, linked through prev/next */
    int draining;        /* shutting down: no accepts, close each connection when idle */
    struct event *drain_deadline;
    struct gw_accept *accept;    /* the process's connection cap (accept.c) */
    struct event *accept_wake;   /* any thread: re-check the cap on this loop */
    struct event *accept_retry;  /* end of the back-off after a failed accept() */
    int accept_on;               /* the listener is enabled */
    int accept_backoff;          /* accept() failed a moment ago: paused */
};

/* Starts the worker's graceful stop (its own thread): stop accepting, close
 * idle connections, close the others after their current response, and end
 * the loop when every connection is gone or after http.shutdown_timeout. */
void gw_worker_drain(struct gw_worker *w);
/* Ends the loop of a draining worker once nothing is left (conn.c calls it). */
void gw_worker_drain_check(struct gw_worker *w);

/* A new request id: unique per process run (start time, thread, counter). */
uint64_t gw_worker_next_request_id(struct gw_worker *w);

#endif
