/* The ROUTER loop, the I/O thread pool and the reply path (see server.h). */
#include "server.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cn/alloc.h"
#include "cn/log.h"
#include "cn/time.h"
#include "msg/curve.h"

#include "lease.h"
#include "zap.h"

/* A job queue served by a set of threads. */
struct sn_server_queue {
    pthread_mutex_t m;
    pthread_cond_t c;
    struct sn_job *head, *tail;
    atomic_uint_fast64_t len;         /* jobs queued (changed under m) */
    int stopping;
    pthread_t *threads;
    uint32_t n_threads;
};

/* A reply ready to go out on the socket. */
struct sn_server_out {
    zmq_msg_t rid, hdr, payload;
    int delim, has_payload;
    struct sn_server_out *next;
};

struct sn_server {
    struct sn_server_opts o;
    struct sn_store *store;
    void *zctx, *router;
    int efd;                          /* replies queued / stop asked */
    atomic_int stop;
    atomic_int reload;                /* SIGHUP: re-read the allow-list */
    struct sn_zap *zap;               /* auth = curve; NULL: none */
    void *monitor;                    /* PAIR: the ROUTER's accepted connections */
    struct sn_server_queue io, admin;
    pthread_mutex_t out_m;
    struct sn_server_out *out_head, *out_tail;
    atomic_uint_fast64_t inflight, busy, bad_requests, ops[MSG_OP_MAX_];
    atomic_uint_fast64_t inline_reads, inline_pauses, inline_writes;
    uint64_t inline_off_until_us;     /* socket thread: no inline reads before this */
    uint64_t next_compact_us;
    struct sn_lease_table *leases;    /* conditional-write leases (lease.h) */
};

static void sn_server_wake(struct sn_server *srv)
{
    uint64_t one = 1;
    ssize_t n = write(srv->efd, &one, sizeof(one));
    (void)n;
}

/* ---- job queues ---- */

static void *sn_server_queue_main(void *arg)
{
    struct sn_server_queue *q = arg;
    pthread_mutex_lock(&q->m);
    for (;;) {
        while (q->head == NULL && !q->stopping)
            pthread_cond_wait(&q->c, &q->m);
        if (q->head == NULL)
            break;
        struct sn_job *j = q->head;
        q->head = j->next;
        if (q->head == NULL)
            q->tail = NULL;
        atomic_fetch_sub_explicit(&q->len, 1, memory_order_relaxed);
        pthread_mutex_unlock(&q->m);
        sn_handler_run(j);
        pthread_mutex_lock(&q->m);
    }
    pthread_mutex_unlock(&q->m);
    return NULL;
}

static int sn_server_queue_start(struct sn_server_queue *q, uint32_t n, char err[CN_ERR_LEN])
{
    pthread_mutex_init(&q->m, NULL);
    pthread_cond_init(&q->c, NULL);
    q->threads = cn_calloc(n, sizeof(*q->threads));
    for (; q->n_threads < n; q->n_threads++)
        if (pthread_create(&q->threads[q->n_threads], NULL, sn_server_queue_main, q) != 0) {
            snprintf(err, CN_ERR_LEN, "cannot start threads");
            return CN_ERR;
        }
    return CN_OK;
}

static void sn_server_queue_push(struct sn_server_queue *q, struct sn_job *j)
{
    j->next = NULL;
    pthread_mutex_lock(&q->m);
    if (q->tail)
        q->tail->next = j;
    else
        q->head = j;
    q->tail = j;
    atomic_fetch_add_explicit(&q->len, 1, memory_order_relaxed);
    pthread_cond_signal(&q->c);
    pthread_mutex_unlock(&q->m);
}

static void sn_server_queue_stop(struct sn_server_queue *q)
{
    if (q->threads == NULL)
        return;
    pthread_mutex_lock(&q->m);
    q->stopping = 1;
    pthread_cond_broadcast(&q->c);
    pthread_mutex_unlock(&q->m);
    for (uint32_t i = 0; i < q->n_threads; i++)
        pthread_join(q->threads[i], NULL);
    cn_free(q->threads);
    q->threads = NULL;
    pthread_mutex_destroy(&q->m);
    pthread_cond_destroy(&q->c);
}

/* ---- replies ---- */

static void sn_server_free_malloc(void *data, void *hint)
{
    (void)data;
    free(hint);
}

/* What keeps a payload alive until ZeroMQ has sent it. */
struct sn_server_pin {
    void (*release)(void *owner);
    void *owner;
};

static void sn_server_free_pin(void *data, void *hint)
{
    struct sn_server_pin *p = hint;
    (void)data;
    p->release(p->owner);
    cn_free(p);
}

static void sn_server_job_free(struct sn_job *j)
{
    msg_release(&j->req);
    sn_wreq_fini(&j->w);
    zmq_msg_close(&j->rid);
    zmq_msg_close(&j->hdr);
    if (j->has_payload)
        zmq_msg_close(&j->payload);
    cn_free(j);
}

/* Sends one reply on the socket (socket thread only). */
static void sn_server_send_out(struct sn_server *srv, struct sn_server_out *o)
{
    int more = ZMQ_SNDMORE;
    if (zmq_msg_size(&o->rid) == 0) {
        zmq_msg_close(&o->rid);
        zmq_msg_close(&o->hdr);
        if (o->has_payload)
            zmq_msg_close(&o->payload);
        cn_free(o);
        return;
    }
    if (zmq_msg_send(&o->rid, srv->router, more) < 0)
        zmq_msg_close(&o->rid);
    if (o->delim)
        zmq_send(srv->router, "", 0, more);
    if (zmq_msg_send(&o->hdr, srv->router, o->has_payload ? more : 0) < 0)
        zmq_msg_close(&o->hdr);
    if (o->has_payload && zmq_msg_send(&o->payload, srv->router, 0) < 0)
        zmq_msg_close(&o->payload);
    cn_free(o);
}

void sn_server_reply(struct sn_job *job, struct msg *rep, void *payload_owner,
                     const void *payload, size_t payload_len)
{
    sn_server_reply_pinned(job, rep, payload, payload_len, cn_free, payload_owner);
}

void sn_server_reply_pinned(struct sn_job *job, struct msg *rep, const void *payload,
                            size_t payload_len, void (*release)(void *owner), void *owner)
{
    struct sn_server *srv = job->srv;
    struct sn_server_out *o = cn_calloc(1, sizeof(*o));
    msgpack_sbuffer sb;
    char err[CN_ERR_LEN];
    uint32_t st = rep->st;
    msgpack_sbuffer_init(&sb);
    if (msg_encode(rep, 1, &sb, err) != CN_OK) {
        CN_LOGR(CN_LOG_ERROR, job->req.id, "cannot encode %s reply: %s", msg_op_str(rep->op), err);
        msgpack_sbuffer_clear(&sb);
        struct msg e;
        msg_init_reply(&e, &job->req, MSG_ST_INTERNAL);
        e.op = 0;
        CN_ASSERT(msg_encode(&e, 1, &sb, err) == CN_OK);
        payload = NULL;
        st = MSG_ST_INTERNAL;
    }
    sn_metrics_request_done(srv->o.metrics, job->req.op, st, job->t0_us,
                            job->has_payload ? zmq_msg_size(&job->payload) : 0,
                            payload != NULL ? payload_len : 0);
    zmq_msg_init(&o->rid);
    zmq_msg_move(&o->rid, &job->rid);
    o->delim = job->delim;
    if (sb.size == 0 || zmq_msg_init_data(&o->hdr, sb.data, sb.size, sn_server_free_malloc, sb.data) != 0)
        CN_ASSERT(0 && "zmq_msg_init_data");
    if (payload != NULL) {
        o->has_payload = 1;
        if (owner != NULL && payload_len > 0) {
            struct sn_server_pin *pin = cn_malloc(sizeof(*pin));
            *pin = (struct sn_server_pin){release, owner};
            zmq_msg_init_data(&o->payload, (void *)(uintptr_t)payload, payload_len,
                              sn_server_free_pin, pin);
            owner = NULL;
        } else {
            zmq_msg_init_size(&o->payload, payload_len);
            memcpy(zmq_msg_data(&o->payload), payload, payload_len);
        }
    }
    if (owner != NULL)
        release(owner);
    int direct = job->on_socket_thread;
    sn_server_job_free(job);
    if (direct) {   /* the socket thread itself: no queue, no wake-up */
        sn_server_send_out(srv, o);
        atomic_fetch_sub(&srv->inflight, 1);
        return;
    }
    pthread_mutex_lock(&srv->out_m);
    if (srv->out_tail)
        srv->out_tail->next = o;
    else
        srv->out_head = o;
    srv->out_tail = o;
    pthread_mutex_unlock(&srv->out_m);
    sn_server_wake(srv);
}

void sn_server_reply_error(struct sn_job *job, enum msg_status st, const char *err)
{
    struct msg rep;
    msg_init_reply(&rep, &job->req, st);
    if (strcmp(msg_op_str(rep.op), "?") == 0)
        rep.op = 0;   /* an op the schema does not know cannot be echoed */
    if (err != NULL && err[0] != '\0') {
        rep.err.ptr = (const uint8_t *)err;
        rep.err.len = (uint32_t)CN_MIN(strlen(err), 1024u);
        MSG_SET(&rep, MSG_F_ERR);
    }
    sn_server_reply(job, &rep, NULL, NULL, 0);
}

/* Sends every queued reply (socket thread). */
static void sn_server_drain_out(struct sn_server *srv)
{
    uint64_t cnt;
    ssize_t r = read(srv->efd, &cnt, sizeof(cnt));
    (void)r;
    pthread_mutex_lock(&srv->out_m);
    struct sn_server_out *o = srv->out_head;
    srv->out_head = srv->out_tail = NULL;
    pthread_mutex_unlock(&srv->out_m);
    while (o != NULL) {
        struct sn_server_out *next = o->next;
        sn_server_send_out(srv, o);
        atomic_fetch_sub(&srv->inflight, 1);
        o = next;
    }
}

/* ---- receiving ---- */

static enum msg_status sn_server_decode_status(int rc, const struct msg *m)
{
    if (m->st == MSG_ST_BAD_VERSION)
        return MSG_ST_BAD_VERSION;
    return rc == CN_TOOBIG ? MSG_ST_TOO_LARGE : MSG_ST_BAD_REQUEST;
}

/* Reads the frames of one request into j. Returns CN_OK, CN_AGAIN when
 * nothing was waiting, or CN_INVAL for a message of the wrong shape (err). */
static int sn_server_recv_frames(struct sn_server *srv, struct sn_job *j, char err[CN_ERR_LEN])
{
    zmq_msg_t f[4];
    int n = 0, more = 1, rc = CN_OK;
    if (zmq_msg_init(&f[0]) != 0 || zmq_msg_recv(&f[0], srv->router, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&f[0]);
        return CN_AGAIN;
    }
    n = 1;
    more = zmq_msg_more(&f[0]);
    while (more) {
        zmq_msg_t extra;
        zmq_msg_t *dst = n < 4 ? &f[n] : &extra;
        zmq_msg_init(dst);
        zmq_msg_recv(dst, srv->router, 0);
        more = zmq_msg_more(dst);
        if (n < 4)
            n++;
        else {
            zmq_msg_close(dst);
            rc = CN_INVAL;
        }
    }
    zmq_msg_init(&j->rid);
    zmq_msg_move(&j->rid, &f[0]);
    zmq_msg_init(&j->hdr);
    int i = 1;
    if (i < n && zmq_msg_size(&f[i]) == 0 && n > 2) {
        j->delim = 1;
        i++;
    }
    if (i < n)
        zmq_msg_move(&j->hdr, &f[i++]);
    else
        rc = CN_INVAL;
    if (i < n) {
        zmq_msg_init(&j->payload);
        zmq_msg_move(&j->payload, &f[i++]);
        j->has_payload = 1;
    }
    if (i < n)
        rc = CN_INVAL;
    for (int k = 0; k < n; k++)
        zmq_msg_close(&f[k]);
    if (rc != CN_OK)
        snprintf(err, CN_ERR_LEN, "a request is: [empty delimiter,] header[, payload]");
    return rc;
}

static int sn_server_is_admin(uint32_t op)
{
    return op == MSG_OP_SCRUB || op == MSG_OP_COMPACT;
}

/* auth = curve: whether the key that opened j's connection is still on the
 * allow-list (a reload may have revoked it since the handshake). A request
 * of a revoked key is dropped without a reply, as the handshake of one would
 * be refused: its sender sees a timeout. */
static int sn_server_peer_allowed(struct sn_server *srv, struct sn_job *j)
{
    const char *uid = zmq_msg_gets(&j->hdr, "User-Id");
    if (uid == NULL)
        uid = zmq_msg_gets(&j->rid, "User-Id");
    if (sn_zap_allowed(srv->zap, uid))
        return 1;
    cn_warn("request from revoked client key %s dropped", uid != NULL ? uid : "(none)");
    return 0;
}

/* A read the socket thread did itself that went to the disk after all
 * (the index lookup: LevelDB cannot be asked not to wait) and took longer
 * than SN_SERVER_INLINE_WAITED_US turns inline reads off for
 * SN_SERVER_INLINE_PAUSE_US: while the index is cold, every read goes to
 * the I/O threads, which wait in parallel. (A read that finds its record
 * not cached starts the kernel's readahead without waiting for it: disk
 * reads counted, but quick; it is not a reason to stop.) */
#define SN_SERVER_INLINE_WAITED_US 200
#define SN_SERVER_INLINE_PAUSE_US 1000000

/* Block reads and major page faults of the calling thread so far. */
static uint64_t sn_server_thread_disk_reads(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        return 0;
    return (uint64_t)ru.ru_inblock + (uint64_t)ru.ru_majflt;
}

/* A small GET or HEAD whose record is in the page cache is answered here,
 * on the socket thread, with its reply sent at once: two thread hand-offs
 * and a wake-up less than through the I/O pool (the nodes' CPU per 4 KiB
 * GET 0.71x, bench/results/node-inline-reads-2vcpu.md). A small PUT or a
 * DELETE is prepared here (its block CRCs: microseconds) and handed to the
 * writer straight away; its reply still comes from the writer's thread,
 * through the queue. Returns 1 when j was taken. */
static int sn_server_try_inline(struct sn_server *srv, struct sn_job *j)
{
    uint32_t op = j->req.op;
    if (srv->o.inline_max == 0)
        return 0;
    if ((op == MSG_OP_PUT && j->req.payload.len <= srv->o.inline_max) ||
        op == MSG_OP_DELETE) {
        atomic_fetch_add(&srv->inline_writes, 1);
        sn_handler_run(j);
        return 1;
    }
    if (op != MSG_OP_GET && op != MSG_OP_HEAD)
        return 0;
    if (srv->inline_off_until_us != 0 && cn_time_mono_us() < srv->inline_off_until_us)
        return 0;
    srv->inline_off_until_us = 0;
    uint64_t io0 = sn_server_thread_disk_reads(), t0 = cn_time_mono_us();
    j->on_socket_thread = 1;
    int rc = sn_handler_read_inline(j, srv->o.inline_max);   /* may free j */
    if (cn_time_mono_us() - t0 > SN_SERVER_INLINE_WAITED_US &&
        sn_server_thread_disk_reads() != io0) {
        srv->inline_off_until_us = cn_time_mono_us() + SN_SERVER_INLINE_PAUSE_US;
        atomic_fetch_add(&srv->inline_pauses, 1);
        CN_LOG(CN_LOG_DEBUG, "an inline read went to the disk: reads go to the I/O threads "
                             "for 1 s");
    }
    if (rc == CN_OK) {
        atomic_fetch_add(&srv->inline_reads, 1);
        return 1;
    }
    j->on_socket_thread = 0;
    return 0;
}

/* Takes one request off the socket and dispatches it. CN_AGAIN when there
 * was none. */
static int sn_server_accept_one(struct sn_server *srv)
{
    struct sn_job *j = cn_calloc(1, sizeof(*j));
    char err[CN_ERR_LEN] = "";
    static const uint8_t empty;
    j->srv = srv;
    j->t0_us = cn_time_mono_us();
    int rc = sn_server_recv_frames(srv, j, err);
    if (rc == CN_AGAIN) {
        cn_free(j);
        return CN_AGAIN;
    }
    if (srv->zap != NULL && !sn_server_peer_allowed(srv, j)) {
        sn_server_job_free(j);
        return CN_OK;
    }
    atomic_fetch_add(&srv->inflight, 1);
    if (rc == CN_OK) {
        const void *p = NULL;
        if (j->has_payload)
            p = zmq_msg_size(&j->payload) ? zmq_msg_data(&j->payload) : &empty;
        rc = msg_decode(&j->req, 0, zmq_msg_data(&j->hdr), zmq_msg_size(&j->hdr), p,
                        j->has_payload ? zmq_msg_size(&j->payload) : 0, &srv->o.limits, err);
    }
    if (rc != CN_OK) {
        atomic_fetch_add(&srv->bad_requests, 1);
        CN_LOGR(CN_LOG_DEBUG, j->req.id, "bad request: %s", err);
        sn_server_reply_error(j, sn_server_decode_status(rc, &j->req), err);
        return CN_OK;
    }
    if (atomic_load(&srv->inflight) > srv->o.max_inflight) {
        atomic_fetch_add(&srv->busy, 1);
        sn_server_reply_error(j, MSG_ST_BUSY, "too many requests in flight");
        return CN_OK;
    }
    atomic_fetch_add(&srv->ops[j->req.op], 1);
    if (sn_server_try_inline(srv, j))
        return CN_OK;
    sn_server_queue_push(sn_server_is_admin(j->req.op) ? &srv->admin : &srv->io, j);
    return CN_OK;
}

/* ---- the loop ---- */

struct sn_store *sn_server_store(struct sn_server *srv)
{
    return srv->store;
}

struct sn_lease_table *sn_server_leases(struct sn_server *srv)
{
    return srv->leases;
}

const struct sn_server_opts *sn_server_opts(struct sn_server *srv)
{
    return &srv->o;
}

void sn_server_stats(struct sn_server *srv, struct sn_server_stats *st)
{
    st->inflight = atomic_load(&srv->inflight);
    st->busy = atomic_load(&srv->busy);
    st->bad_requests = atomic_load(&srv->bad_requests);
    for (int i = 0; i < MSG_OP_MAX_; i++)
        st->ops[i] = atomic_load(&srv->ops[i]);
    st->inline_reads = atomic_load(&srv->inline_reads);
    st->inline_pauses = atomic_load(&srv->inline_pauses);
    st->inline_writes = atomic_load(&srv->inline_writes);
    st->queued = atomic_load_explicit(&srv->io.len, memory_order_relaxed) +
                 atomic_load_explicit(&srv->admin.len, memory_order_relaxed);
}


/* Binds the router. An ipc:// endpoint's socket file is made with mode 0600
 * (umask 077 while libzmq creates it, which it does in this thread, then a
 * chmod for certainty): only processes of the node's own user can connect,
 * which is what makes auth = none acceptable on a Unix socket
 * (docs/security.md). An abstract socket (ipc://@name) has no file. */
static int sn_server_bind(void *router, const char *endpoint)
{
    const char *path = strncmp(endpoint, "ipc://", 6) == 0 ? endpoint + 6 : NULL;
    if (path == NULL || path[0] == '@')
        return zmq_bind(router, endpoint);
    mode_t old = umask(077);
    int rc = zmq_bind(router, endpoint);
    umask(old);
    if (rc == 0 && chmod(path, 0600) != 0)
        cn_warn("chmod 0600 %s: %s", path, strerror(errno));
    return rc;
}

#define SN_SERVER_SNDBUF (4 << 20) /* bytes: each connection's send buffer (the
                                     * kernel caps it at net.core.wmem_max) */

int sn_server_new(const struct sn_server_opts *opts, struct sn_store *store,
                  struct sn_server **out, char err[CN_ERR_LEN])
{
    struct sn_server *srv = cn_calloc(1, sizeof(*srv));
    srv->o = *opts;
    srv->store = store;
    srv->leases = sn_lease_table_new();
    srv->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    pthread_mutex_init(&srv->out_m, NULL);
    srv->zctx = zmq_ctx_new();
    srv->router = zmq_socket(srv->zctx, ZMQ_ROUTER);
    int hwm = (int)CN_MAX(1000u, 2 * opts->max_inflight), zero = 0;
    /* libzmq allocates a frame whole once it has read its length: without
     * a bound one client makes the node allocate as much as it claims */
    int64_t max_frame = (int64_t)msg_limits_max_frame(&opts->limits);
    zmq_setsockopt(srv->router, ZMQ_MAXMSGSIZE, &max_frame, sizeof(max_frame));
    zmq_setsockopt(srv->router, ZMQ_SNDHWM, &hwm, sizeof(hwm));
    zmq_setsockopt(srv->router, ZMQ_RCVHWM, &hwm, sizeof(hwm));
    zmq_setsockopt(srv->router, ZMQ_LINGER, &zero, sizeof(zero));
    /* a GET slice (512 KiB to 2 MiB) leaves in one write: with the
     * default send buffer (208 KiB on a Unix socket) ZeroMQ's I/O thread
     * wakes three or more times per slice, and so does the gateway's on
     * the other side. libzmq applies ZMQ_SNDBUF to TCP connections only;
     * ipc:// ones get it from the monitor (sn_server_on_accepted). */
    int sndbuf = SN_SERVER_SNDBUF;
    zmq_setsockopt(srv->router, ZMQ_SNDBUF, &sndbuf, sizeof(sndbuf));
    if (zmq_socket_monitor(srv->router, "inproc://sn-server-accepted", ZMQ_EVENT_ACCEPTED) == 0) {
        srv->monitor = zmq_socket(srv->zctx, ZMQ_PAIR);
        zmq_setsockopt(srv->monitor, ZMQ_LINGER, &zero, sizeof(zero));
        if (zmq_connect(srv->monitor, "inproc://sn-server-accepted") != 0) {
            zmq_close(srv->monitor);
            srv->monitor = NULL;
        }
    }
    if (opts->curve_secret != NULL &&
        (sn_zap_new(srv->zctx, opts->curve_allowed_clients_file, &srv->zap, err) != CN_OK ||
         msg_curve_server_apply(srv->router, opts->curve_secret, "cairn", err) != CN_OK)) {
        sn_server_free(srv);
        return CN_INVAL;
    }
    if (srv->efd < 0 || sn_server_bind(srv->router, opts->listen) != 0) {
        snprintf(err, CN_ERR_LEN, "bind %s: %s", opts->listen,
                 srv->efd < 0 ? strerror(errno) : zmq_strerror(zmq_errno()));
        sn_server_free(srv);
        return CN_IO;
    }
    if (sn_server_queue_start(&srv->io, opts->io_threads, err) != CN_OK ||
        sn_server_queue_start(&srv->admin, 1, err) != CN_OK) {
        sn_server_free(srv);
        return CN_ERR;
    }
    if (opts->compaction_interval_ms > 0)
        srv->next_compact_us = cn_time_mono_us() + opts->compaction_interval_ms * 1000;
    *out = srv;
    return CN_OK;
}

void sn_server_stop(struct sn_server *srv)
{
    atomic_store(&srv->stop, 1);
    sn_compact_abort(srv->store);
    sn_server_wake(srv);
}

void sn_server_reload(struct sn_server *srv)
{
    atomic_store(&srv->reload, 1);
    sn_server_wake(srv);
}

/* Serves a reload asked by sn_server_reload() (socket thread). */
static void sn_server_do_reload(struct sn_server *srv)
{
    char err[CN_ERR_LEN];
    if (!atomic_exchange(&srv->reload, 0))
        return;
    if (srv->zap == NULL) {
        cn_info("reload: auth = none, no allow-list to reload");
        return;
    }
    if (sn_zap_reload(srv->zap, err) != CN_OK)
        cn_error("reload: keeping the old allow-list: %s", err);
    else
        cn_info("reload: %zu client keys allowed (%s)", sn_zap_allowed_count(srv->zap),
                srv->o.curve_allowed_clients_file);
}

/* Every compaction check period, queues an internal automatic COMPACT when
 * a container is worth compacting and none is queued or running already
 * (sn_compact_auto_claim). */
static void sn_server_auto_compact(struct sn_server *srv)
{
    if (srv->next_compact_us == 0 || cn_time_mono_us() < srv->next_compact_us)
        return;
    srv->next_compact_us = cn_time_mono_us() + srv->o.compaction_interval_ms * 1000;
    if (!sn_compact_auto_claim(srv->store))
        return;
    /* the work is the admin thread's: hand it a job without a peer (an
     * empty routing id), whose reply is dropped */
    struct sn_job *j = cn_calloc(1, sizeof(*j));
    j->srv = srv;
    zmq_msg_init(&j->rid);
    zmq_msg_init(&j->hdr);
    msg_init_request(&j->req, MSG_OP_COMPACT, 0);
    j->auto_compact = 1;
    atomic_fetch_add(&srv->inflight, 1);
    sn_server_queue_push(&srv->admin, j);
}

/* The monitor's events: each connection the ROUTER accepted gets the
 * large send buffer. The event carries the connection's fd; should that
 * connection be gone and the number reused by the time this runs, the
 * option lands on another socket of this node (harmless: a larger send
 * buffer) or fails on a file (ENOTSOCK, ignored). */
static void sn_server_on_accepted(struct sn_server *srv)
{
    for (int k = 0; k < 64; k++) {
        zmq_msg_t ev, addr;
        zmq_msg_init(&ev);
        if (zmq_msg_recv(&ev, srv->monitor, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&ev);
            return;
        }
        int more = zmq_msg_more(&ev);
        while (more) {   /* the endpoint frame */
            zmq_msg_init(&addr);
            zmq_msg_recv(&addr, srv->monitor, 0);
            more = zmq_msg_more(&addr);
            zmq_msg_close(&addr);
        }
        uint16_t what;
        uint32_t fd;
        if (zmq_msg_size(&ev) >= 6) {
            memcpy(&what, zmq_msg_data(&ev), 2);
            memcpy(&fd, (const uint8_t *)zmq_msg_data(&ev) + 2, 4);
            int sndbuf = SN_SERVER_SNDBUF;
            if (what == ZMQ_EVENT_ACCEPTED)
                (void)setsockopt((int)fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
        }
        zmq_msg_close(&ev);
    }
}

int sn_server_run(struct sn_server *srv, uint64_t drain_ms)
{
    zmq_pollitem_t items[4] = {{srv->router, 0, ZMQ_POLLIN, 0},
                               {NULL, srv->efd, ZMQ_POLLIN, 0},
                               {srv->monitor, -1, srv->monitor != NULL ? ZMQ_POLLIN : 0, 0},
                               {srv->zap != NULL ? sn_zap_socket(srv->zap) : NULL, 0,
                                ZMQ_POLLIN, 0}};
    int n_items = srv->zap != NULL ? 4 : 3;
    uint64_t drain_until = 0;
    for (;;) {
        int stopping = atomic_load(&srv->stop);
        if (stopping && drain_until == 0)
            drain_until = cn_time_mono_us() + drain_ms * 1000;
        if (stopping && (atomic_load(&srv->inflight) == 0 || cn_time_mono_us() > drain_until))
            break;
        items[0].events = stopping ? 0 : ZMQ_POLLIN;
        int n = zmq_poll(items, n_items, 1000);
        if (n < 0 && zmq_errno() != EINTR)
            return CN_ERR;
        if (items[1].revents & ZMQ_POLLIN) {
            sn_server_do_reload(srv);
            sn_server_drain_out(srv);
        }
        /* handshakes wait on these answers: before the requests */
        if (srv->zap != NULL && (items[3].revents & ZMQ_POLLIN))
            sn_zap_serve(srv->zap);
        if (items[2].revents & ZMQ_POLLIN)
            sn_server_on_accepted(srv);
        /* a per-wakeup cap keeps replies flowing under a flood of requests */
        for (int k = 0; k < 256 && !stopping; k++)
            if (sn_server_accept_one(srv) == CN_AGAIN)
                break;
        if (!stopping)
            sn_server_auto_compact(srv);
    }
    return CN_OK;
}

void sn_server_free(struct sn_server *srv)
{
    if (srv == NULL)
        return;
    sn_server_queue_stop(&srv->io);
    sn_server_queue_stop(&srv->admin);
    /* replies produced while stopping are dropped with the socket */
    struct sn_server_out *o = srv->out_head;
    while (o != NULL) {
        struct sn_server_out *next = o->next;
        zmq_msg_close(&o->rid);
        zmq_msg_close(&o->hdr);
        if (o->has_payload)
            zmq_msg_close(&o->payload);
        cn_free(o);
        o = next;
    }
    if (srv->router) {
        /* requests that arrived after the stop are dropped (their senders
         * time out); taking them off the socket first frees them here rather
         * than leaving them to the pipes' teardown in zmq_ctx_term, after
         * which LeakSanitizer now and then reported libzmq allocations */
        for (;;) {
            zmq_msg_t m;
            zmq_msg_init(&m);
            int rc = zmq_msg_recv(&m, srv->router, ZMQ_DONTWAIT);
            zmq_msg_close(&m);
            if (rc < 0)
                break;
        }
        zmq_close(srv->router);
    }
    if (srv->monitor != NULL) {
        sn_server_on_accepted(srv);   /* events left in the pipe: freed here */
        zmq_close(srv->monitor);
    }
    /* handshakes still waiting for the ZAP handler's answer are answered
     * too, for the same reason: left in the inproc pipe they are freed only
     * by zmq_ctx_term's teardown */
    if (srv->zap != NULL)
        sn_zap_serve(srv->zap);
    sn_zap_free(srv->zap);
    if (srv->zctx)
        zmq_ctx_term(srv->zctx);
    if (srv->efd >= 0)
        close(srv->efd);
    pthread_mutex_destroy(&srv->out_m);
    sn_lease_table_free(srv->leases);
    cn_free(srv);
}
