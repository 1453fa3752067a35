/* The HTTP side of one event-loop thread: its listeners (SO_REUSEPORT, so
 * every thread binds the same addresses; plain HTTP and, when set up,
 * HTTPS over the same connection code), its open connections, the graceful
 * drain, and the callbacks of the application that answers the requests
 * (struct gw_http_app). The HTTP layer (this folder) calls the application
 * only through those callbacks, so nothing here knows of S3. */
#ifndef GW_HTTP_LOOP_H
#define GW_HTTP_LOOP_H

#include <stdint.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "http_parser.h"
#include "http_req.h"

#include "cn/rc.h"

struct gw_accept;
struct gw_conn;
struct gw_http_tls;

/* The settings the HTTP layer works with (from the http.* settings). */
struct gw_http_opts {
    int64_t header_timeout_ms;     /* a request head, from its first byte */
    int64_t keepalive_timeout_ms;  /* idle between requests */
    int64_t body_idle_timeout_ms;  /* no body or response progress */
    int64_t shutdown_timeout_ms;   /* a drain's deadline */
    uint64_t body_buffer;          /* request body bytes buffered before reading pauses */
    uint64_t output_high_water;    /* response bytes buffered before producers pause */
    uint64_t read_size;            /* bytes read per socket read */
    struct gw_http_limits limits;  /* request head limits */
};

/* What the application supplies. Every callback gets the request it made
 * with req_new (embedded in its own request struct). */
struct gw_http_app {
    /* one request struct per connection, reused for each of its requests;
     * the body and hdrs buffers are the HTTP layer's */
    struct gw_http_req *(*req_new)(void *arg);
    void (*req_free)(struct gw_http_req *x);
    /* a request is over: free the application's per-request state */
    void (*req_clear)(struct gw_http_req *x);
    /* a complete head: must end in reply_end or abort, now or later */
    void (*dispatch)(struct gw_http_req *x);
    /* a head that cannot be served (fail says why): answer it with status
     * (ending in reply_end); the connection is closed after it */
    void (*head_failed)(struct gw_http_req *x, enum gw_http_fail fail, int status,
                        const char *reason);
    /* the body stalled past body_idle_timeout while no on_body was set:
     * answer it (ending in reply_end) */
    void (*body_timeout)(struct gw_http_req *x);
    /* a response ended (called from reply_end, before the next request) */
    void (*done)(struct gw_http_req *x);
    void *arg;
};

struct gw_http_loop {
    struct event_base *base;
    struct gw_http_opts opts;
    struct gw_http_app app;
    uint32_t index;              /* this thread's number (request ids, logs) */
    uint64_t id_prefix;          /* random per process: request ids' top 24 bits */
    uint64_t next_req;           /* request counter of this thread */
    struct evconnlistener *listener;
    struct evconnlistener *tls_listener;  /* HTTPS; NULL: none */
    struct gw_http_tls *tls;     /* its certificate (the process's; not owned) */
    uint64_t n_conns;            /* open connections */
    uint64_t n_conn_mem;         /* connections not yet freed (open, or closed with holds) */
    struct gw_conn *conns;       /* the open ones, linked through prev/next */
    int draining;                /* stopping: no accepts, close each connection when idle */
    struct event *drain_deadline;
    struct gw_accept *accept;    /* the process's connection cap (accept.c) */
    struct event *accept_wake;   /* any thread: re-check the cap on this loop */
    struct event *accept_retry;  /* end of the back-off after a failed accept() */
    int accept_on;               /* the listener is enabled */
    int accept_backoff;          /* accept() failed a moment ago: paused */
};

/* Sets up l over base (embedded: no allocation). */
void gw_http_loop_init(struct gw_http_loop *l, struct event_base *base,
                       const struct gw_http_opts *opts, const struct gw_http_app *app,
                       uint32_t index, uint64_t id_prefix);
/* Binds the listener to addr:*port (IPv4; *port 0 picks one and is set to
 * it). CN_OK, or CN_IO with err (a bad address too). */
int gw_http_loop_listen(struct gw_http_loop *l, const char *addr, int *port,
                        char err[CN_ERR_LEN]);
/* Binds the HTTPS listener to addr:*port like gw_http_loop_listen; its
 * connections speak TLS with tls's current certificate. tls is shared by
 * the threads and must outlive l. CN_OK, or CN_IO with err (a bad address too). */
int gw_http_loop_listen_tls(struct gw_http_loop *l, const char *addr, int *port,
                            struct gw_http_tls *tls, char err[CN_ERR_LEN]);
/* Starts the graceful stop (l's thread): stop accepting, close idle
 * connections, close the others after their current response, and end the
 * loop when every connection is gone or after opts.shutdown_timeout. */
void gw_http_loop_drain(struct gw_http_loop *l);
/* Ends the loop of a draining l once nothing is left (conn.c calls it). */
void gw_http_loop_drain_check(struct gw_http_loop *l);
/* Closes every connection and the listener (the loop has ended); one that
 * a pending callback still holds is freed with that hold, if ever. */
void gw_http_loop_fini(struct gw_http_loop *l);
/* A new request id: unique per process run (start time, thread, counter). */
uint64_t gw_http_loop_next_request_id(struct gw_http_loop *l);

#endif
