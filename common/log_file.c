/* Log lines to a file through a bounded double buffer (cn/log_file.h). The
 * callers append to the filling buffer under the mutex (a memcpy); the
 * writer thread swaps it with the empty one and writes the batch outside
 * the lock, so a slow disk holds up the writer only. Woken by a batch's
 * first line, the writer lets the batch gather for 1 ms before it writes
 * (at most 1 ms later on disk; a full eighth of the buffer goes at once). */
#include "cn/log_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cn/alloc.h"

struct cn_log_file {
    pthread_mutex_t m;
    pthread_cond_t wake;     /* the writer: lines, a new fd, or stop */
    pthread_cond_t written;  /* flushers: a batch is done */
    char *buf;               /* being filled (under m) */
    size_t len, cap;
    char *spare;             /* the writer's, between batches */
    uint64_t queued;         /* lines ever queued (under m) */
    uint64_t handled;        /* of those, written or dropped by the writer */
    int pending_fd;          /* a reopened file for the writer; -1: none */
    int stop;
    int waiting;             /* the writer sleeps on wake */
    struct cn_log_file_stats st;
    char *path;              /* NULL: stderr */
    int fd;                  /* the writer thread's */
    pthread_t thread;
};

/* How long the writer lets lines gather after the first of a batch. */
#define CN_LOG_FILE_LINGER_US 1000

static int cn_log_file_open(const char *path, char err[CN_ERR_LEN])
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
    if (fd < 0)
        snprintf(err, CN_ERR_LEN, "cannot open %s: %s", path, strerror(errno));
    return fd;
}

/* Writes p[n] to fd whole, retrying short writes. 0, or -1 with the bytes
 * not written in *left. */
static int cn_log_file_write_all(int fd, const char *p, size_t n, size_t *left)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            *left = n;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    *left = 0;
    return 0;
}

static uint64_t cn_log_file_count_lines(const char *p, size_t n)
{
    uint64_t k = 0;
    for (const char *e = p + n; (p = memchr(p, '\n', (size_t)(e - p))) != NULL; p++)
        k++;
    return k;
}

/* Writes one batch. A regular file takes it in one write(); a pipe or a
 * terminal (stderr under a supervisor) gets pieces of at most PIPE_BUF cut
 * at line ends, so they never interleave with the daemon's own log lines.
 * Returns the lines that could not be written. */
static uint64_t cn_log_file_write_batch(int fd, const char *p, size_t n)
{
    struct stat sb;
    size_t piece = n;
    if (fstat(fd, &sb) == 0 && !S_ISREG(sb.st_mode))
        piece = PIPE_BUF;
    while (n > 0) {
        size_t k = n;
        if (k > piece) {
            size_t cut = 0; /* just past the last line end in the first piece */
            for (size_t i = piece; i > 0 && cut == 0; i--)
                if (p[i - 1] == '\n')
                    cut = i;
            if (cut == 0) { /* a line longer than a piece goes alone */
                const char *e = memchr(p + piece, '\n', n - piece);
                cut = e != NULL ? (size_t)(e - p) + 1 : n;
            }
            k = cut;
        }
        size_t left;
        if (cn_log_file_write_all(fd, p, k, &left) != 0)
            return cn_log_file_count_lines(p + (k - left), left + (n - k));
        p += k;
        n -= k;
    }
    return 0;
}

static void *cn_log_file_thread(void *arg)
{
    struct cn_log_file *f = arg;
    pthread_mutex_lock(&f->m);
    for (;;) {
        while (f->len == 0 && f->pending_fd < 0 && !f->stop) {
            f->waiting = 1;
            pthread_cond_wait(&f->wake, &f->m);
            f->waiting = 0;
        }
        if (f->len == 0 && f->pending_fd < 0)
            break; /* stop, and nothing left */
        if (f->len < f->cap / 8 && f->pending_fd < 0 && !f->stop) {
            /* woken by the first line of a batch: let more join it (appenders
             * do not signal while the writer is not waiting), so a busy
             * gateway's access log costs a wake-up and a write() per
             * CN_LOG_FILE_LINGER_US, not per request (gateway CPU per 4 KiB
             * GET 0.85x, bench/results/node-inline-reads-2vcpu.md) */
            pthread_mutex_unlock(&f->m);
            struct timespec ts = {0, CN_LOG_FILE_LINGER_US * 1000L};
            nanosleep(&ts, NULL);
            pthread_mutex_lock(&f->m);
        }
        char *batch = f->buf;
        size_t n = f->len;
        f->buf = f->spare;
        f->len = 0;
        uint64_t upto = f->queued;
        int nfd = f->pending_fd;
        f->pending_fd = -1;
        pthread_mutex_unlock(&f->m);
        if (nfd >= 0) {
            if (f->path != NULL)
                close(f->fd);
            f->fd = nfd;
        }
        uint64_t lines = cn_log_file_count_lines(batch, n);
        uint64_t lost = n > 0 ? cn_log_file_write_batch(f->fd, batch, n) : 0;
        pthread_mutex_lock(&f->m);
        f->spare = batch;
        f->st.lines += lines - lost;
        f->st.dropped += lost;
        f->handled = upto;
        pthread_cond_broadcast(&f->written);
    }
    pthread_mutex_unlock(&f->m);
    return NULL;
}

int cn_log_file_new(const char *path, size_t cap, struct cn_log_file **out,
                    char err[CN_ERR_LEN])
{
    *out = NULL;
    CN_ASSERT(cap >= 4096);
    int fd = STDERR_FILENO;
    if (path != NULL && path[0] != '\0' && (fd = cn_log_file_open(path, err)) < 0)
        return CN_IO;
    struct cn_log_file *f = cn_calloc(1, sizeof(*f));
    pthread_mutex_init(&f->m, NULL);
    pthread_cond_init(&f->wake, NULL);
    pthread_cond_init(&f->written, NULL);
    f->cap = cap;
    f->buf = cn_malloc(cap);
    f->spare = cn_malloc(cap);
    f->pending_fd = -1;
    f->fd = fd;
    f->path = fd != STDERR_FILENO ? cn_strdup(path) : NULL;
    if (pthread_create(&f->thread, NULL, cn_log_file_thread, f) != 0) {
        snprintf(err, CN_ERR_LEN, "cannot start the log writer thread");
        f->stop = 1;
        f->thread = pthread_self();
        cn_log_file_free(f);
        return CN_IO;
    }
    *out = f;
    return CN_OK;
}

void cn_log_file_free(struct cn_log_file *f)
{
    if (f == NULL)
        return;
    pthread_mutex_lock(&f->m);
    f->stop = 1;
    pthread_cond_signal(&f->wake);
    pthread_mutex_unlock(&f->m);
    if (!pthread_equal(f->thread, pthread_self()))
        pthread_join(f->thread, NULL);
    if (f->pending_fd >= 0)
        close(f->pending_fd);
    if (f->path != NULL)
        close(f->fd);
    pthread_cond_destroy(&f->wake);
    pthread_cond_destroy(&f->written);
    pthread_mutex_destroy(&f->m);
    cn_free(f->buf);
    cn_free(f->spare);
    cn_free(f->path);
    cn_free(f);
}

int cn_log_file_write(struct cn_log_file *f, const char *line, size_t len)
{
    pthread_mutex_lock(&f->m);
    if (len > f->cap - f->len) {
        f->st.dropped++;
        pthread_mutex_unlock(&f->m);
        return CN_AGAIN;
    }
    memcpy(f->buf + f->len, line, len);
    f->len += len;
    f->queued++;
    if (f->waiting)
        pthread_cond_signal(&f->wake);
    pthread_mutex_unlock(&f->m);
    return CN_OK;
}

int cn_log_file_reopen(struct cn_log_file *f, char err[CN_ERR_LEN])
{
    if (f->path == NULL)
        return CN_OK;
    int fd = cn_log_file_open(f->path, err);
    if (fd < 0)
        return CN_IO;
    pthread_mutex_lock(&f->m);
    if (f->pending_fd >= 0)
        close(f->pending_fd); /* two reopens before the writer woke: the newer wins */
    f->pending_fd = fd;
    f->st.reopens++;
    pthread_cond_signal(&f->wake);
    pthread_mutex_unlock(&f->m);
    return CN_OK;
}

void cn_log_file_flush(struct cn_log_file *f)
{
    pthread_mutex_lock(&f->m);
    uint64_t upto = f->queued;
    while (f->handled < upto)
        pthread_cond_wait(&f->written, &f->m);
    pthread_mutex_unlock(&f->m);
}

void cn_log_file_stats(struct cn_log_file *f, struct cn_log_file_stats *st)
{
    pthread_mutex_lock(&f->m);
    *st = f->st;
    pthread_mutex_unlock(&f->m);
}
