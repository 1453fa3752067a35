/* Admission of client connections: a process-wide cap on open connections
 * (http.max_connections) counted across the worker threads, and a back-off
 * when accept() fails (EMFILE/ENFILE at the fd limit) instead of a busy loop.
 * A worker that stops accepting leaves new connections in the kernel's listen
 * backlog; it starts again when a connection closes or the back-off ends. */
#ifndef GW_ACCEPT_H
#define GW_ACCEPT_H

#include <stdint.h>

#include "cn/rc.h"

struct gw_accept;
struct gw_http_loop;

/* Pause after a failed accept() (nginx and redis do the same). */
#define GW_ACCEPT_BACKOFF_MS 100
/* The least a derived cap aims for: thousands of slow readers are normal. */
#define GW_ACCEPT_MIN_DERIVED 4096

/* File descriptors kept back for everything but clients: the loops, the
 * ZeroMQ sockets to each node from each worker (with room to reconnect),
 * the log and a margin. */
uint64_t gw_accept_reserve(uint32_t n_workers, uint32_t n_nodes);

/* The cap http.max_connections = 0 stands for, under a soft fd limit of
 * nofile: nofile - reserve, or nofile / 2 when the reserve would take more
 * than half (a tiny limit still serves someone; accept() errors back off). */
uint64_t gw_accept_derive_max(uint64_t nofile, uint64_t reserve);

/* Raises the soft RLIMIT_NOFILE toward want (never past the hard limit,
 * never lowers it) and returns the soft limit in force afterwards; *hard
 * gets the hard limit. Returns 0 when the limit cannot be read. */
uint64_t gw_accept_raise_nofile(uint64_t want, uint64_t *hard);

/* A cap of max open connections shared by n_workers workers. Freed with
 * gw_accept_free, after the workers' loops have ended. */
struct gw_accept *gw_accept_new(uint64_t max, uint32_t n_workers);
void gw_accept_free(struct gw_accept *a);
uint64_t gw_accept_max(const struct gw_accept *a);
/* Open connections now, all workers (a glance: may be stale at once). */
uint64_t gw_accept_open(const struct gw_accept *a);

/* Attaches worker w (its listener is bound, its loop not yet running):
 * sets the listener's error callback and w's events. Call once per worker
 * before any loop runs. Returns CN_OK or CN_ERR with err. */
int gw_accept_worker_init(struct gw_accept *a, struct gw_http_loop *w, char err[CN_ERR_LEN]);
/* Frees w's events (its loop has ended). */
void gw_accept_worker_fini(struct gw_http_loop *w);

/* From now on closes are not announced to other workers (teardown). */
void gw_accept_stop(struct gw_accept *a);

/* conn.c, on w's thread: a connection was taken over / has been closed. At
 * the cap every worker stops accepting; below it they start again. */
void gw_accept_opened(struct gw_http_loop *w);
void gw_accept_closed(struct gw_http_loop *w);

/* Brings w's listener in line with the cap, the back-off and draining
 * (its thread). gw_http_loop_drain calls it after freeing the listener. */
void gw_accept_sync(struct gw_http_loop *w);

#endif
