/* One client connection: a bufferevent, the incremental head parser, body
 * framing (Content-Length or chunked), per-phase timeouts (keep-alive idle,
 * head deadline, body/write idle) and the request being served. Connections
 * are closed by marking them and reaping them from the loop, never inside
 * their own callback stack; their memory lives until the last hold on the
 * request is released. Private to the HTTP layer (http_req.c shares it). */
#ifndef GW_CONN_H
#define GW_CONN_H

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <openssl/ssl.h>

#include "http_chunked.h"
#include "http_parser.h"
#include "http_req.h"

struct gw_http_loop;

enum gw_conn_state {
    GW_CONN_IDLE,     /* keep-alive: waiting for the first byte of a request */
    GW_CONN_HEAD,     /* reading a request head */
    GW_CONN_HANDLER,  /* a handler owns the request (body, storage, response) */
    GW_CONN_CLOSING,  /* marked: the loop will reap it */
};

enum gw_conn_body {
    GW_CONN_BODY_NONE,
    GW_CONN_BODY_LENGTH,
    GW_CONN_BODY_CHUNKED,
};

struct gw_conn {
    struct gw_http_loop *loop;
    struct bufferevent *bev;
    struct event *kick;   /* deferred work: drive the state machine or reap */
    struct event *timer;  /* keep-alive idle or head deadline */
    struct gw_http_parser parser;
    enum gw_conn_state state;
    int refs;             /* 1 for the open connection + holds of the request */
    int dead;             /* socket closed; memory waits for the holds */
    int close_after_write;
    int tls;              /* bev is a TLS bufferevent (the HTTPS listener's) */
    int lingering;        /* response sent, write side shut: draining input */
    uint64_t lingered;
    int reading_body;     /* a handler asked for the body */
    int continue_sent;
    enum gw_conn_body body_mode;
    uint64_t body_left;
    struct gw_http_chunked chunked;
    struct evbuffer *sink; /* discards HEAD bodies */
    struct gw_http_req *req; /* the application's (app.req_new), reused per request */
    struct gw_conn *prev, *next;   /* the worker's open connections */
};

/* Closes c now if it is between requests; otherwise makes its current
 * response the last (Connection: close). For a graceful stop. */
void gw_conn_close_when_idle(struct gw_conn *c);

/* Closes every connection of w still open, at once (its loop has ended:
 * the stop's deadline passed). One that a storage reply still holds is freed
 * with that hold, if ever. */
void gw_conn_close_all(struct gw_http_loop *l);

/* Takes over an accepted socket; with ssl (a fresh server-side SSL, owned
 * from here on) it speaks TLS, the handshake first. On failure closes fd. */
void gw_conn_accept(struct gw_http_loop *l, evutil_socket_t fd, SSL *ssl);

/* Marks c to close; the loop reaps it. Safe from any of c's callbacks. */
void gw_conn_close(struct gw_conn *c);
/* Schedules a run of the state machine from the loop. */
void gw_conn_kick(struct gw_conn *c);
/* Called by gw_http_req_body_read(): the application wants the body. */
void gw_conn_body_start(struct gw_conn *c);
/* Called by gw_http_req_reply_end(): moves to the next request or closes. */
void gw_conn_request_done(struct gw_conn *c);
/* Drops one reference; frees c when it was the last. */
void gw_conn_unref(struct gw_conn *c);

#endif
