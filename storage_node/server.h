/* The storage node's network front: one ZeroMQ ROUTER socket served by one
 * thread, a pool of I/O threads that run requests (handler.c), an admin
 * thread for SCRUB and COMPACT, and a reply queue + eventfd that brings
 * answers from any thread back to the socket thread (ZeroMQ sockets are not
 * thread-safe). Requests are answered as they finish, in any order. */
#ifndef SN_SERVER_H
#define SN_SERVER_H

#include <stdint.h>
#include <zmq.h>

#include "cn/curve_key.h"
#include "cn/rc.h"
#include "msg/msg.h"
#include "metrics.h"
#include "store.h"

struct sn_server_opts {
    const char *listen;
    const char *node_id;
    uint32_t io_threads;
    uint32_t scrub_threads;
    uint32_t max_inflight;
    uint64_t inline_max;               /* GET/HEAD of up to this many bytes of cached
                                        * data are answered by the socket thread, PUTs
                                        * of up to this many bytes and DELETEs go from
                                        * it to the writer; 0: never */
    uint64_t compaction_interval_ms;   /* how often to look for containers worth an
                                        * automatic compaction; 0: never */
    struct msg_limits limits;
    uint32_t max_digest_scan;          /* index entries one DIGEST reads at most */
    struct sn_metrics *metrics;        /* NULL: not counted */
    struct sn_hints *hints;            /* hints kept for peers (hint.h); the caller's */
    /* auth = curve: the node's secret key and the allow-list file of client
     * keys (zap.h); NULL: auth = none, every peer is served */
    const struct cn_curve_key *curve_secret;
    const char *curve_allowed_clients_file;
};

struct sn_server;
struct sn_lease_table;

/* One request from arrival to reply. */
struct sn_job {
    struct sn_server *srv;
    zmq_msg_t rid;            /* the peer's routing id frame */
    int delim;                /* the peer sent (and gets back) an empty delimiter */
    zmq_msg_t hdr, payload;
    int has_payload;
    struct msg req;           /* decoded hdr (+ payload) */
    struct sn_wreq w;         /* PUT and DELETE */
    uint64_t t0_us;
    int auto_compact;         /* internal: an automatic compaction (no reply) */
    int on_socket_thread;     /* answered by the socket thread: the reply goes out at once */
    struct sn_job *next;
};

/* Binds opts->listen and starts the threads. */
int sn_server_new(const struct sn_server_opts *opts, struct sn_store *store,
                  struct sn_server **out, char err[CN_ERR_LEN]);

/* Serves until sn_server_stop(); then stops reading, waits (up to
 * drain_ms) for the requests in flight to be answered, and returns. */
int sn_server_run(struct sn_server *srv, uint64_t drain_ms);

/* Async-signal-safe: makes sn_server_run() return. */
void sn_server_stop(struct sn_server *srv);

/* Async-signal-safe: asks the loop to re-read the allow-list of client keys
 * (SIGHUP). A list that does not load is logged and the old one kept. */
void sn_server_reload(struct sn_server *srv);

/* Stops the threads and frees srv (the store is the caller's). */
void sn_server_free(struct sn_server *srv);

struct sn_store *sn_server_store(struct sn_server *srv);
/* The node's conditional-write leases (lease.h). */
struct sn_lease_table *sn_server_leases(struct sn_server *srv);
const struct sn_server_opts *sn_server_opts(struct sn_server *srv);

/* Sends the reply rep to job's peer (from any thread) and frees the job.
 * rep is encoded before this returns, so its bytes may be borrowed from the
 * job or the caller. payload_owner (cn_malloc'd, may be NULL) is freed once
 * ZeroMQ has sent the payload_len bytes at payload. */
void sn_server_reply(struct sn_job *job, struct msg *rep, void *payload_owner,
                     const void *payload, size_t payload_len);

/* sn_server_reply() for a payload kept alive by something other than a
 * cn_malloc'd block: release(owner) runs once ZeroMQ has sent it. */
void sn_server_reply_pinned(struct sn_job *job, struct msg *rep, const void *payload,
                            size_t payload_len, void (*release)(void *owner), void *owner);

/* Sends an error reply with status st and text err, and frees the job. */
void sn_server_reply_error(struct sn_job *job, enum msg_status st, const char *err);

/* Counters of the front for STATS. */
struct sn_server_stats {
    uint64_t inflight, busy, bad_requests, ops[MSG_OP_MAX_];
    uint64_t queued;          /* jobs waiting for an I/O or the admin thread */
    uint64_t inline_reads;    /* GET/HEAD answered by the socket thread itself */
    uint64_t inline_pauses;   /* times a slow one turned that off for a while */
    uint64_t inline_writes;   /* PUT/DELETE handed to the writer by the socket thread */
};
void sn_server_stats(struct sn_server *srv, struct sn_server_stats *st);

/* handler.c: runs a request on an I/O thread (or the admin thread for SCRUB
 * and COMPACT). Must end, now or later, in sn_server_reply*(). */
void sn_handler_run(struct sn_job *job);

/* handler.c: answers a GET or HEAD on the socket thread if that needs no
 * wait for the disk and at most max_data bytes of data
 * (sn_store_read_nowait); CN_WOULDBLOCK, with job untouched, otherwise. */
int sn_handler_read_inline(struct sn_job *job, uint64_t max_data);

#endif
