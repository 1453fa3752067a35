/* One HTTP/1.1 request/response exchange on a connection, as the HTTP layer
 * knows it: the parsed head, the request body as a stream, and the writer of
 * the response. It knows nothing of S3: the application embeds it in its own
 * request (gateway/s3/request.h) and gets it back in the callbacks of
 * struct gw_http_app (http_loop.h). A request lives inside its connection;
 * the application keeps it alive across asynchronous calls with
 * gw_http_req_hold()/gw_http_req_release().
 *
 * Every dispatched request must end in gw_http_req_reply_end() or
 * gw_http_req_abort() exactly once. */
#ifndef GW_HTTP_REQ_H
#define GW_HTTP_REQ_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "http_parser.h"

struct gw_conn;
struct gw_http_req;

typedef void (*gw_http_req_cb)(struct gw_http_req *x);

struct gw_http_req {
    struct gw_conn *conn;
    const struct gw_http_parser *http; /* the head; NULL when it could not be parsed */
    uint64_t id;
    char id_str[17];                   /* id as 16 upper-case hex digits */
    uint64_t start_us;
    uint64_t first_byte_us;            /* the response head was queued; 0: not yet */
    int aborted;                       /* ended without reply_end: done() ran at cleanup */
    char peer[56];                     /* the client, "ADDR:PORT"; "-" when unknown
                                          (one connection's, set when it is accepted) */

    /* request body, decoded from its HTTP framing */
    struct evbuffer *body;
    int body_done;             /* the last byte is in body (or there was none) */
    int body_failed;           /* broken framing or the client went away */
    int body_bad_framing;      /* body_failed because the chunked framing is broken */
    uint64_t body_total;       /* bytes delivered so far */
    gw_http_req_cb on_body;

    /* response */
    struct evbuffer *hdrs;     /* header lines being built */
    int status;
    int headers_sent;
    int finished;
    int head_only;             /* HEAD: no body bytes reach the client */
    int close_after;           /* Connection: close */
    uint64_t reply_length;     /* the body length announced (0 for HEAD and 304) */
    gw_http_req_cb on_drain;
};

/* ---- lifetime -------------------------------------------------------- */

/* Keeps the request's memory alive across an asynchronous call. */
void gw_http_req_hold(struct gw_http_req *x);
/* Drops a hold. Returns 1 if the request can go on, 0 if the client is gone
 * (then the caller must not touch x again; its memory may be freed). */
int gw_http_req_release(struct gw_http_req *x);

/* 1 when x arrived on the HTTPS listener. */
int gw_http_req_is_tls(const struct gw_http_req *x);

/* The client's address (getpeername of the connection) into *ss: CN_OK,
 * or CN_ERR when the socket is gone or has none. */
struct sockaddr_storage;
int gw_http_req_peer(const struct gw_http_req *x, struct sockaddr_storage *ss);

/* ---- the body -------------------------------------------------------- */

/* Starts (or keeps) reading the body: sends 100 Continue when the client
 * waits for it, then calls on_body (from the loop) whenever bytes were added
 * to x->body, when it starts (or is kicked) with bytes waiting there, or body_done / body_failed became true. Reading pauses while
 * x->body holds the loop's body_buffer bytes: drain it, then call
 * gw_http_req_body_consumed(). */
void gw_http_req_body_read(struct gw_http_req *x, gw_http_req_cb on_body);
void gw_http_req_body_consumed(struct gw_http_req *x);

/* ---- the response ---------------------------------------------------- */

/* Starts a response: status line plus Date and Server. */
void gw_http_req_reply_start(struct gw_http_req *x, int status);
/* Adds a header line; value is len bytes (copied). Every response header
 * goes through here: a name that is not an HTTP token or a value holding a
 * control byte (CR, LF, NUL, ...) is never written (logged and dropped), so
 * nothing a client or a stored record supplies can end a header line. */
void gw_http_req_reply_header(struct gw_http_req *x, const char *name, const char *value,
                              size_t len);
/* Sends the headers with Content-Length: length and Connection. */
void gw_http_req_reply_send_headers(struct gw_http_req *x, uint64_t length);
/* Where body bytes go (the connection's output; a sink for HEAD). */
struct evbuffer *gw_http_req_reply_body(struct gw_http_req *x);
/* 1 when the client's output buffer is above the loop's output_high_water:
 * stop producing and set on_drain (called once it drains below half). */
int gw_http_req_output_full(const struct gw_http_req *x);
/* Bytes the kernel holds for the client and has not sent yet (the socket's
 * unsent queue, SIOCOUTQNSD): output the client is slow to take that the
 * connection's own buffer no longer shows. 0 when unknown or gone. */
uint64_t gw_http_req_kernel_unsent(const struct gw_http_req *x);
void gw_http_req_on_drain(struct gw_http_req *x, gw_http_req_cb cb);
/* Ends the response: the application's done callback runs (the access
 * line), then the connection moves to the next request (or closes). */
void gw_http_req_reply_end(struct gw_http_req *x);
/* Cuts a response short: the connection is closed (the client sees fewer
 * bytes than announced). Callbacks still pending see
 * gw_http_req_release() return 0 once the loop reaped it. */
void gw_http_req_abort(struct gw_http_req *x);

/* 1 when name is a non-empty HTTP token (RFC 9110 5.6.2). */
int gw_http_field_name_ok(const char *name);
/* 1 when v[len] may stand as an HTTP field value (RFC 9110 5.5: HTAB, SP,
 * visible ASCII and obs-text; no CR, LF, NUL or other control byte). */
int gw_http_field_value_ok(const char *v, size_t len);

#endif
