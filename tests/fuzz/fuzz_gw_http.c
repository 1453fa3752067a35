/* Fuzz target: the HTTP request-head parser and the chunked body decoder.
 * The input is fed in two pieces (split at a point taken from the first
 * byte) to exercise resumption; whatever follows a complete head goes
 * through the chunked decoder. */
#include <stdint.h>
#include <string.h>

#include <event2/buffer.h>

#include "http_chunked.h"
#include "http_parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t split = data[0] % (size + 1);
    const char *in = (const char *)data + 1;
    size -= 1;
    split = CN_MIN(split, size);
    struct gw_http_limits lim = {.max_request_line = 512, .max_headers = 16,
                                 .max_head_bytes = 1024};
    struct gw_http_parser p;
    gw_http_parser_init(&p, &lim);
    size_t used = 0, used2 = 0;
    int rc = gw_http_parser_feed(&p, in, split, &used);
    if (rc == CN_AGAIN)
        rc = gw_http_parser_feed(&p, in + split, size - split, &used2);
    if (rc == CN_OK) {
        CN_ASSERT(p.method_len > 0 && p.path_len <= p.target_len);
        for (uint32_t i = 0; i < p.n_headers; i++)
            CN_ASSERT(strlen(p.headers[i].name) == p.headers[i].name_len);
        size_t consumed = rc == CN_OK && used2 == 0 ? used : split + used2;
        struct evbuffer *src = evbuffer_new(), *dst = evbuffer_new();
        evbuffer_add(src, in + consumed, size - consumed);
        struct gw_http_chunked c;
        gw_http_chunked_init(&c);
        int crc;
        do {
            crc = gw_http_chunked_decode(&c, src, dst, 7);
            evbuffer_drain(dst, evbuffer_get_length(dst));
        } while (crc == CN_AGAIN && evbuffer_get_length(src) > 0 && c.state == 2);
        evbuffer_free(src);
        evbuffer_free(dst);
    }
    gw_http_parser_fini(&p);
    return 0;
}
