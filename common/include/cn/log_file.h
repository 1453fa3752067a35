/* A file of log lines written by a thread of its own through a bounded
 * buffer (the gateway's access log): callers on the request path copy a
 * line into the buffer under a short lock and never wait for the disk; a
 * line that does not fit (the file is slower than the lines come) is
 * dropped and counted, so memory stays at 2 x cap bytes (the buffer being
 * filled and the one being written) whatever the disk does. The file is
 * reopened on request (SIGHUP after logrotate moved it). */
#ifndef CN_LOG_FILE_H
#define CN_LOG_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "cn/rc.h"

struct cn_log_file;

/* Opens path for appending (created 0640 when missing) and starts the
 * writer thread; path NULL or "" writes to stderr instead (never reopened).
 * cap is the buffer's size in bytes (>= 4096). CN_OK and *out, or CN_IO
 * with err naming the file; *out is then NULL. Free with
 * cn_log_file_free(). */
int cn_log_file_new(const char *path, size_t cap, struct cn_log_file **out,
                    char err[CN_ERR_LEN]);

/* Writes what is buffered, stops the thread, closes the file. NULL is ok. */
void cn_log_file_free(struct cn_log_file *f);

/* Queues one line of len bytes (the caller ends it with '\n'). Any thread;
 * never blocks on I/O. CN_OK, or CN_AGAIN when the buffer is full (the
 * line is dropped and counted). */
int cn_log_file_write(struct cn_log_file *f, const char *line, size_t len);

/* Opens the path again (after logrotate moved the file away) and hands the
 * new descriptor to the writer: lines from the next batch on go to the new
 * file. CN_OK (also for stderr: nothing to do), or CN_IO with err when the
 * file cannot be opened (the old one stays in use). Any thread. */
int cn_log_file_reopen(struct cn_log_file *f, char err[CN_ERR_LEN]);

/* Waits until every line queued before the call was written (or dropped).
 * For tests and for a clean stop. */
void cn_log_file_flush(struct cn_log_file *f);

struct cn_log_file_stats {
    uint64_t lines;     /* written */
    uint64_t dropped;   /* not written: the buffer was full, or write() failed */
    uint64_t reopens;
};
void cn_log_file_stats(struct cn_log_file *f, struct cn_log_file_stats *st);

#endif
