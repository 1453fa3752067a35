/* The access log: one line per request, written by request.c when the
 * response ends (or the request is cut short), to log.access_file through a
 * bounded buffer (cn/log_file.h) or, without a file, to the gateway's log.
 * Two formats (log.format): space-separated text and one JSON object per
 * line; both carry the same fields (docs/operations.md lists them). No
 * field holds a signature, secret or session token: the request target is
 * the redacted one (gw_req_log_target), the account is the access key id. */
#ifndef GW_ACCESS_LOG_H
#define GW_ACCESS_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "cn/rc.h"

enum gw_access_log_format { GW_ACCESS_LOG_TEXT = 0, GW_ACCESS_LOG_JSON = 1 };

/* One request as its access line shows it. Strings are len bytes (any
 * bytes: the formatter escapes them); NULL or len 0 prints as "-". */
struct gw_access_log_entry {
    uint64_t time_us;            /* wall clock at the request's first byte */
    const char *client;          /* "ADDR:PORT" */
    const char *account;         /* access key id; NULL: anonymous or refused */
    size_t account_len;
    const char *op;              /* AWS API name; NULL: refused before routing */
    const char *bucket;
    size_t bucket_len;
    const char *key;             /* decoded object key */
    size_t key_len;
    const char *method;          /* request line, target redacted */
    size_t method_len;
    const char *target;
    size_t target_len;
    int status;                  /* 0: no response was started */
    const char *error;           /* S3 error code; NULL: none */
    uint64_t bytes_in, bytes_out;
    uint64_t ttfb_us;            /* first byte in to response head out; 0: none sent */
    uint64_t total_us;
    const char *request_id;      /* the x-amz-request-id */
    int aborted;                 /* the response did not end normally */
};

/* The longest line gw_access_log_format writes: every string field escaped
 * at its worst (6 bytes a byte) within the request's own bounds (a key of at
 * most 1024 bytes, a target cut at GW_REQ_LOG_TARGET_MAX); a line that
 * would still be longer has its key and target cut. */
#define GW_ACCESS_LOG_LINE_MAX (24 * 1024)

/* Formats e as one line ending in '\n' into out[cap] (cap >= 1024).
 * Returns its length. Never fails: an overlong field is cut, and the line
 * stays well-formed (valid JSON for the JSON format). */
size_t gw_access_log_format(const struct gw_access_log_entry *e, enum gw_access_log_format fmt,
                            char *out, size_t cap);

/* RFC 3339 UTC time with milliseconds, "2006-01-02T15:04:05.000Z" (24
 * bytes and a NUL) from microseconds since the epoch. */
void gw_access_log_time(uint64_t us, char out[25]);

/* ---- the destination ------------------------------------------------- */

struct gw_access_log;

/* Opens log.access_file (path; NULL or "" is the gateway's log, stderr)
 * with a buffer of buffer bytes (log.access_buffer) and format fmt. CN_OK
 * and *out, or CN_IO with err; free with gw_access_log_free() after every
 * thread that writes has stopped. */
int gw_access_log_new(const char *path, enum gw_access_log_format fmt, size_t buffer,
                      struct gw_access_log **out, char err[CN_ERR_LEN]);
void gw_access_log_free(struct gw_access_log *a);

/* 1 when lines are wanted now: always with a file of their own; into the
 * gateway's log only while log.level lets info lines through. */
int gw_access_log_wanted(const struct gw_access_log *a);

/* Formats e and queues its line; never waits for the disk (a full buffer
 * drops the line and counts it). Any thread. */
void gw_access_log_write(struct gw_access_log *a, const struct gw_access_log_entry *e);

/* SIGHUP: reopens the file (logrotate moved it). CN_OK, or CN_IO with err
 * (the old file stays in use). */
int gw_access_log_reopen(struct gw_access_log *a, char err[CN_ERR_LEN]);

/* Lines dropped so far (the buffer was full, or the write failed). */
uint64_t gw_access_log_dropped(struct gw_access_log *a);

/* Waits until the lines queued so far are written (tests, the stop). */
void gw_access_log_flush(struct gw_access_log *a);

#endif
