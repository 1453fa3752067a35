/* One S3 request as the handlers see it: the HTTP exchange underneath
 * (struct gw_http_req, embedded: the head, the body stream, the response
 * writer), the S3 target (bucket, decoded key, query parameters), who signed
 * it, and the handler's state. The S3 layer is the HTTP layer's application
 * (gw_req_app_init): the HTTP layer makes one gw_req per connection through
 * it and hands each complete head to gw_s3_router_dispatch().
 * Handlers keep a request alive across storage calls with
 * gw_req_hold()/gw_req_release().
 *
 * Every handler must end in gw_req_reply_end() or gw_req_error() exactly
 * once, and only when none of its own callbacks is pending. */
#ifndef GW_REQUEST_H
#define GW_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "copy_source.h"
#include "hstate.h"
#include "http_parser.h"
#include "http_req.h"
#include "s3_error.h"
#include "s3_ctx.h"
#include "s3_overrides.h"
#include "sigv4.h"

struct gw_req;
struct gw_s3_op;
struct gw_s3_cors_headers;
struct gw_access_config;
struct gw_s3_post;
struct gw_s3_versions;
struct gw_s3_body;

typedef void (*gw_req_cb)(struct gw_req *r);

/* A query parameter, percent-decoded; value "" when it had none. */
struct gw_req_param {
    char *name;
    size_t name_len;
    char *value;
    size_t value_len;
    int has_value;
};

struct gw_req {
    struct gw_http_req hr;     /* the HTTP exchange (http_req.h) */
    struct gw_s3_ctx *s3;      /* the worker's: store, settings, caches (s3_ctx.h) */
    /* copied from hr when the head is dispatched: read-only facts of the
     * request that every handler and log line uses */
    const struct gw_http_parser *http; /* the head; valid until the request ends */
    uint64_t id;
    int dispatched;            /* counted as in flight (s3_metrics.c) */
    enum gw_s3_err err;        /* the S3 error answered (the access line); GW_S3_OK: none */

    /* S3 target, filled by the router */
    char bucket[64];
    size_t bucket_len;
    char *key;                 /* decoded, heap, NUL-terminated; NULL: none */
    size_t key_len;
    struct gw_req_param *params;
    size_t n_params;
    const struct gw_s3_op *op; /* the operation the router matched (s3_ops.h), or NULL */
    struct gw_sigv4_result auth;
    /* the credentials table auth.cred points into, held for the request's
     * life (key_sync.h swaps the worker's table meanwhile); NULL before auth */
    struct gw_credentials *creds_held;
    /* records written up to this wall-clock time (us) are known to be in the
     * bucket whose owner was checked (bucket_owner.h); UINT64_MAX when the
     * check read the bucket record itself */
    uint64_t owner_known_until_us;
    /* the access decision (access.h): an unsigned request (auth.cred is then
     * gw_access_anonymous), the bucket's access config the router decided on
     * (a reference), and an object-ACL check it left to the handler that
     * reads the object (gw_access_object_allows) */
    int anonymous;
    struct gw_access_config *access_cfg;
    int access_need_object;
    int access_cfg_fresh;      /* access_cfg was read from the record, not the cache */
    /* the same for a copy's source (s3:GetObject on it): its bucket's config,
     * and whether only the source object's ACL could allow the read */
    struct gw_access_config *access_src_cfg;
    int access_need_source;
    int access_src_cfg_fresh;
    /* the ACL a write asks for (x-amz-acl / x-amz-grant-*), checked and
     * encoded once by the router (s3_subres.h); NULL: none to store */
    char *acl_text;
    size_t acl_text_len;
    /* x-amz-copy-source of a PUT to a key, parsed once by the router: the
     * owner check and the copy handlers use this, never the raw header */
    struct gw_copy_source copy_src;
    int has_copy_src;
    /* response-* overrides of a GET, checked once by the router */
    struct gw_s3_overrides ovr;
    /* the Access-Control-* headers every response of r carries (s3_cors.h):
     * looked up once (cors_checked) when r has an Origin; NULL: none */
    struct gw_s3_cors_headers *cors;
    int cors_checked;

    /* POST object (s3_post.h): its form once the fields before the file
     * passed their checks; the body reader decodes the body through it and
     * PutObject takes the object's headers and its answer from it. NULL for
     * every other request; freed with the request. */
    struct gw_s3_post *post;

    /* callbacks of the body and of the output's drain (gw_req_body_read,
     * gw_req_on_drain), called through the HTTP layer's */
    gw_req_cb on_body;
    gw_req_cb on_drain;

    /* the handler's own state (hstate.h): its struct embeds the header,
     * found again with GW_REQ_STATE(), freed through its type when the
     * request ends */
    struct gw_hstate *state;
    gw_req_cb then;            /* a continuation parked across one call */
    struct gw_s3_body *bs;     /* the body reader's state (s3_body.h), freed with r */

    /* versioning (s3_versions.h): the bucket's state as
     * gw_s3_bucket_require() last read it (versioning.h), the headers every
     * response of r carries from the moment they are set (x-amz-version-id
     * when version_id[0], x-amz-delete-marker: true), and the versioning
     * steps' own state (s3_versions.h), freed when the request ends */
    int versioning;
    char version_id[33];
    char copy_source_version_id[33];   /* x-amz-copy-source-version-id when set */
    int delete_marker;
    struct gw_s3_versions *vs;
};

/* The S3 request an HTTP exchange belongs to. */
static inline struct gw_req *gw_req_of(struct gw_http_req *x)
{
    return (struct gw_req *)(void *)((char *)x - offsetof(struct gw_req, hr));
}

/* Fills app with the S3 layer's callbacks for an HTTP loop whose requests
 * use ctx (a worker's: it outlives the loop's connections). */
struct gw_http_app;
void gw_req_app_init(struct gw_http_app *app, struct gw_s3_ctx *ctx);

/* ---- lifetime -------------------------------------------------------- */

/* Keeps the request's memory alive across an asynchronous call. */
void gw_req_hold(struct gw_req *r);
/* Drops a hold. Returns 1 if the request can go on, 0 if the client is gone
 * (then the caller must not touch r again; its memory may be freed). */
int gw_req_release(struct gw_req *r);

/* ---- the handler's state --------------------------------------------- */

/* r's handler state as a struct T * (checked: hstate.h), NULL if none. */
#define GW_REQ_STATE(r, T) GW_HSTATE((r)->state, T)

/* Gives r the handler state hs, of type t (hs is the header of a heap
 * struct: freed through t when the request ends). r must have none. */
void gw_req_state_set(struct gw_req *r, struct gw_hstate *hs, const struct gw_hstate_type *t);
/* Frees r's handler state now (a handler handing r to another's steps,
 * which keep their own); r has none after it. */
void gw_req_state_drop(struct gw_req *r);

/* ---- the head -------------------------------------------------------- */

/* A header's value (NUL-terminated) or NULL; *len its length. */
const char *gw_req_header(const struct gw_req *r, const char *name, size_t *len);
/* A query parameter or NULL. */
const struct gw_req_param *gw_req_param(const struct gw_req *r, const char *name);

/* ---- logging --------------------------------------------------------- */

#define GW_REQ_LOG_TARGET_MAX 2048

/* The request target of h as log lines show it, into out[cap] (NUL-
 * terminated, cut with "..." past cap): the value of every query parameter
 * that carries a credential's proof (X-Amz-Signature, SigV2's Signature,
 * X-Amz-Security-Token; names compared case-insensitively and percent-
 * decoded, as the verifier reads them) is replaced by REDACTED. Every log
 * line that names a target goes through here. Returns the length. */
size_t gw_req_log_target(const struct gw_http_parser *h, char *out, size_t cap);

/* ---- the body -------------------------------------------------------- */

/* Starts (or keeps) reading the body: sends 100 Continue when the client
 * waits for it, then calls on_body (from the loop) whenever bytes were added
 * to r->hr.body, when it starts (or is kicked) with bytes waiting there, or hr.body_done / hr.body_failed became true. Reading pauses
 * while r->hr.body holds http.body_buffer bytes: drain it, then call
 * gw_req_body_consumed(). */
void gw_req_body_read(struct gw_req *r, gw_req_cb on_body);
void gw_req_body_consumed(struct gw_req *r);

/* ---- the response ---------------------------------------------------- */

/* Starts a response: status line plus Date, Server (the HTTP layer's),
 * x-amz-request-id and x-amz-id-2. */
void gw_req_reply_start(struct gw_req *r, int status);
/* Adds a header line; value is len bytes (copied). Every response header
 * goes through gw_http_req_reply_header(), which never writes a name that
 * is not an HTTP token or a value holding a control byte. */
void gw_req_reply_header(struct gw_req *r, const char *name, const char *value, size_t len);
void gw_req_reply_headerf(struct gw_req *r, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sends the headers with Content-Length: length and Connection. */
void gw_req_reply_send_headers(struct gw_req *r, uint64_t length);
/* Where body bytes go (the connection's output; a sink for HEAD). */
struct evbuffer *gw_req_reply_body(struct gw_req *r);
/* 1 when the client's output buffer is above http.output_high_water: stop
 * producing and set on_drain (called once it drains below half). */
int gw_req_output_full(const struct gw_req *r);
/* Bytes the kernel still holds unsent for the client (gw_http_req_kernel_unsent). */
uint64_t gw_req_kernel_unsent(const struct gw_req *r);
void gw_req_on_drain(struct gw_req *r, gw_req_cb cb);
/* Ends the response; the connection moves to the next request (or closes). */
void gw_req_reply_end(struct gw_req *r);

/* Cuts a response short (after its headers went out, when the body cannot
 * be completed): the connection is closed, so the client sees fewer bytes
 * than announced, as S3 does. The request is over for the handler: callbacks
 * still pending see gw_req_release() return 0 once the loop reaped it. */
void gw_req_abort(struct gw_req *r);

/* Sends a whole response of status with no body (204 No Content, an
 * empty 200), then ends it. */
void gw_req_reply_empty(struct gw_req *r, int status);

/* Sends a whole response with body doc (moved out of doc) and Content-Type
 * application/xml, then ends it. */
void gw_req_reply_xml(struct gw_req *r, int status, struct evbuffer *doc);
/* The same with Content-Type type (a C string). */
void gw_req_reply_doc(struct gw_req *r, int status, const char *type, struct evbuffer *doc);

/* Answers an S3 error document for err (message NULL: the table's text),
 * naming the bucket and key when set, and ends the request. When the request
 * body was not read to its end, the connection is closed after it. */
void gw_req_error(struct gw_req *r, enum gw_s3_err err, const char *message);

/* The same with one more response header (name NULL: none), such as the
 * Content-Range: bytes STAR/size that a 416 carries (RFC 9110 15.5.17). */
void gw_req_error_header(struct gw_req *r, enum gw_s3_err err, const char *message,
                         const char *name, const char *value, size_t len);

#endif
