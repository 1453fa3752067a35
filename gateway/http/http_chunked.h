/* Decoder of HTTP/1.1 `Transfer-Encoding: chunked` request bodies. It moves
 * the data bytes from the connection's input evbuffer to a destination
 * evbuffer without copying (evbuffer_remove_buffer) and keeps its framing
 * state in a struct, so it resumes wherever the bytes ran out. Chunk
 * extensions are skipped, trailers are read and dropped. */
#ifndef GW_HTTP_CHUNKED_H
#define GW_HTTP_CHUNKED_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "cn/rc.h"

struct gw_http_chunked {
    int state;
    uint64_t remaining;   /* data bytes left in the current chunk */
    uint32_t line_bytes;  /* bytes of the current size/extension/trailer line */
    uint32_t n_digits;
    uint64_t total;       /* data bytes decoded so far */
};

void gw_http_chunked_init(struct gw_http_chunked *c);

/* Decodes from src (consumed as it goes) into dst, moving at most max_out
 * data bytes. Returns CN_AGAIN when src ran out or max_out was reached,
 * CN_DONE once the last chunk and the trailers are consumed (bytes after them
 * stay in src: the next request), CN_INVAL on bad framing (the connection
 * must be closed after answering 400). */
int gw_http_chunked_decode(struct gw_http_chunked *c, struct evbuffer *src,
                           struct evbuffer *dst, size_t max_out);

#endif
