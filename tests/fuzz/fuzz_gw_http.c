/* Fuzz target: the HTTP request-head parser and the chunked body decoder.
 * The input is fed in two pieces (split at a point taken from the first
 * byte) and, separately, one byte at a time: both feeds must reach the same
 * verdict, consume the same bytes and produce the same head (the parser is
 * resumable at any byte). Whatever follows a complete head goes through the
 * chunked decoder, once in one piece with a small output cap and once a byte
 * at a time; both must decode the same data with the same verdict. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "http_chunked.h"
#include "http_parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Feeds in[0..size) in two pieces (split) or byte by byte (split == SIZE_MAX).
 * Returns the verdict; *consumed is the bytes of in taken by the head. */
static int fuzz_gw_http_feed(struct gw_http_parser *p, const char *in, size_t size, size_t split,
                             size_t *consumed)
{
    size_t used = 0;
    int rc = CN_AGAIN;
    if (split != SIZE_MAX) {
        rc = gw_http_parser_feed(p, in, split, &used);
        *consumed = used;
        if (rc == CN_AGAIN) {
            rc = gw_http_parser_feed(p, in + split, size - split, &used);
            *consumed = split + used;
        }
        return rc;
    }
    *consumed = 0;
    for (size_t i = 0; i < size && rc == CN_AGAIN; i++) {
        rc = gw_http_parser_feed(p, in + i, 1, &used);
        *consumed = i + used;
    }
    return rc;
}

/* Both parsers saw the same head. */
static void fuzz_gw_http_same_head(const struct gw_http_parser *a, const struct gw_http_parser *b)
{
    CN_ASSERT(a->method_len > 0 && a->path_len <= a->target_len);
    CN_ASSERT(a->method_len == b->method_len && memcmp(a->method, b->method, a->method_len) == 0);
    CN_ASSERT(a->target_len == b->target_len && memcmp(a->target, b->target, a->target_len) == 0);
    CN_ASSERT(a->path_len == b->path_len && a->query_len == b->query_len);
    CN_ASSERT(a->n_headers == b->n_headers && a->n_headers <= a->lim.max_headers);
    for (uint32_t i = 0; i < a->n_headers; i++) {
        const struct gw_http_header *x = &a->headers[i], *y = &b->headers[i];
        CN_ASSERT(strlen(x->name) == x->name_len && strlen(x->value) == x->value_len);
        CN_ASSERT(x->name_len == y->name_len && memcmp(x->name, y->name, x->name_len) == 0);
        CN_ASSERT(x->value_len == y->value_len && memcmp(x->value, y->value, x->value_len) == 0);
    }
    CN_ASSERT(a->content_length == b->content_length && a->chunked == b->chunked);
    CN_ASSERT(a->keep_alive == b->keep_alive && a->expect_continue == b->expect_continue);
    CN_ASSERT(!(a->chunked && a->content_length >= 0));
}

/* Decodes body; step 0: all at once with output cap 7, else step bytes at a
 * time with no cap. Returns the verdict; the data goes to out. */
static int fuzz_gw_http_chunked(const char *body, size_t len, size_t step, struct evbuffer *out)
{
    struct evbuffer *src = evbuffer_new();
    struct gw_http_chunked c;
    gw_http_chunked_init(&c);
    int rc = CN_AGAIN;
    size_t fed = 0;
    if (step == 0) {
        evbuffer_add(src, body, len);
        fed = len;
    }
    for (;;) {
        if (step != 0 && fed < len && evbuffer_get_length(src) == 0) {
            evbuffer_add(src, body + fed, CN_MIN(step, len - fed));
            fed += CN_MIN(step, len - fed);
        }
        size_t before = evbuffer_get_length(src);
        rc = gw_http_chunked_decode(&c, src, out, step == 0 ? 7 : SIZE_MAX);
        if (rc != CN_AGAIN)
            break;
        /* moving data leaves src + out unchanged: progress is src shrinking */
        size_t left = evbuffer_get_length(src);
        if (fed == len && (left == 0 || left == before))
            break;
    }
    CN_ASSERT(c.total == evbuffer_get_length(out));
    evbuffer_free(src);
    return rc;
}

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
    struct gw_http_parser p, q;
    gw_http_parser_init(&p, &lim);
    gw_http_parser_init(&q, &lim);
    size_t consumed, consumed1;
    int rc = fuzz_gw_http_feed(&p, in, size, split, &consumed);
    int rc1 = fuzz_gw_http_feed(&q, in, size, SIZE_MAX, &consumed1);
    CN_ASSERT(rc == rc1);
    CN_ASSERT(rc == CN_AGAIN || consumed == consumed1);
    CN_ASSERT(rc != CN_AGAIN || consumed == size);
    if (rc != CN_OK && rc != CN_AGAIN)
        CN_ASSERT(p.fail == q.fail && p.fail != GW_HTTP_FAIL_NONE);
    if (rc == CN_OK) {
        fuzz_gw_http_same_head(&p, &q);
        struct evbuffer *a = evbuffer_new(), *b = evbuffer_new();
        int ca = fuzz_gw_http_chunked(in + consumed, size - consumed, 0, a);
        int cb = fuzz_gw_http_chunked(in + consumed, size - consumed, 1, b);
        CN_ASSERT(ca == cb);
        size_t na = evbuffer_get_length(a);
        CN_ASSERT(na == evbuffer_get_length(b));
        if (na > 0)
            CN_ASSERT(memcmp(evbuffer_pullup(a, -1), evbuffer_pullup(b, -1), na) == 0);
        evbuffer_free(a);
        evbuffer_free(b);
    }
    gw_http_parser_fini(&p);
    gw_http_parser_fini(&q);
    return 0;
}
