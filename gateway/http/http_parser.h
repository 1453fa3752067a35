/* Incremental HTTP/1.1 request-head parser. The connection feeds it whatever
 * bytes arrived; it keeps its state in struct gw_http_parser, copies the head
 * into its own bounded buffer and answers CN_AGAIN until the blank line that
 * ends the head. Limits: request line length, header count, total head bytes.
 * Lines end in CRLF only (a bare LF or CR is refused: RFC 9112 allows either
 * choice, and the lenient one is what request smuggling feeds on). HTTP/1.1
 * requests must carry exactly one Host header.
 * Bodies are not its business (see http_chunked.h and conn.c). */
#ifndef GW_HTTP_PARSER_H
#define GW_HTTP_PARSER_H

#include <stddef.h>
#include <stdint.h>

#include "cn/rc.h"

struct gw_http_limits {
    uint32_t max_request_line; /* bytes of "METHOD target HTTP/1.1" */
    uint32_t max_headers;      /* number of header fields */
    uint32_t max_head_bytes;   /* request line + all headers */
};

/* Defaults: request line 16K, 128 headers, head 64K. */
void gw_http_limits_default(struct gw_http_limits *lim);

/* One header field; name and value point into the parser's buffer and are
 * NUL-terminated there (value without surrounding blanks). */
struct gw_http_header {
    const char *name;
    uint32_t name_len;
    const char *value;
    uint32_t value_len;
};

/* What the parser reports when it fails: the HTTP status the connection should
 * answer with (400, 414, 431, 501, 505) and a short reason. */
enum gw_http_fail {
    GW_HTTP_FAIL_NONE = 0,
    GW_HTTP_FAIL_BAD_REQUEST,      /* malformed syntax */
    GW_HTTP_FAIL_URI_TOO_LONG,     /* request line over the limit */
    GW_HTTP_FAIL_HEADERS_TOO_LARGE,/* too many headers or too many head bytes */
    GW_HTTP_FAIL_BAD_VERSION,      /* not HTTP/1.x */
    GW_HTTP_FAIL_BAD_FRAMING,      /* conflicting/invalid Content-Length or TE */
    GW_HTTP_FAIL_BAD_HOST,         /* HTTP/1.1 without Host, or Host twice */
};

struct gw_http_parser {
    /* limits and buffer (the head is copied here, NULs inserted) */
    struct gw_http_limits lim;
    char *buf;
    uint32_t len;

    /* resumable state */
    int state;
    uint32_t line_start;   /* offset of the current line in buf */
    uint32_t mark;         /* offset of the token being read */

    /* results, valid once gw_http_parser_feed() returned CN_OK */
    const char *method;    /* e.g. "GET" */
    uint32_t method_len;
    const char *target;    /* raw request target, e.g. "/b/k%20x?uploads" */
    uint32_t target_len;
    const char *path;      /* raw path part of target (before '?') */
    uint32_t path_len;
    const char *query;     /* raw query after '?' ("" when none) */
    uint32_t query_len;
    int version_minor;     /* 0 or 1 */
    struct gw_http_header *headers;
    uint32_t n_headers;

    /* framing derived from the headers */
    int64_t content_length;  /* -1 when absent */
    int chunked;             /* Transfer-Encoding: chunked */
    int keep_alive;          /* after this request */
    int expect_continue;     /* Expect: 100-continue */

    enum gw_http_fail fail;
    const char *fail_reason;

    /* offsets of name/value, resolved into headers[] at the end */
    uint32_t *hdr_off_;
};

/* Allocates the buffer for lim (NULL = defaults). Free with _fini(). */
void gw_http_parser_init(struct gw_http_parser *p, const struct gw_http_limits *lim);
void gw_http_parser_fini(struct gw_http_parser *p);
/* Forgets the previous request; keeps the buffer (keep-alive). */
void gw_http_parser_reset(struct gw_http_parser *p);

/* Feeds len bytes. Sets *used to how many bytes were consumed (everything up
 * to and including the blank line when the head completes, else all of len).
 * Returns CN_AGAIN (head incomplete), CN_OK (head complete, results valid),
 * or CN_INVAL / CN_TOOBIG with p->fail and p->fail_reason set; after an error
 * the parser stays failed until reset. */
int gw_http_parser_feed(struct gw_http_parser *p, const char *data, size_t len, size_t *used);

/* Returns the first header named name (case-insensitive), or NULL. */
const struct gw_http_header *gw_http_parser_header(const struct gw_http_parser *p,
                                                   const char *name);

/* The HTTP status code and reason phrase for a parse failure. */
int gw_http_fail_status(enum gw_http_fail f);

/* Case-insensitive compare of a counted string with a C string. */
int gw_http_token_eq(const char *s, size_t len, const char *lit);

#endif
