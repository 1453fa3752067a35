/* Fuzzes SigV2: the Authorization header and presigned-query parsers, the
 * StringToSign and a full verification. Input: lines "METHOD", "path",
 * "query", "virtual-host bucket" (empty: path style), then "name:value"
 * header lines; the clock is the AWS examples' (27 Mar 2007). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "cn/rc.h"
#include "credentials.h"
#include "sigv2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_HEADERS 32

static struct gw_credentials *fuzz_creds;

static void fuzz_sigv2_init(void)
{
    static const char text[] =
        "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY owner Example\n";
    char err[CN_ERR_LEN];
    if (fuzz_creds == NULL)
        CN_ASSERT(gw_credentials_load_buf(text, sizeof(text) - 1, "fuzz", &fuzz_creds, err) ==
                  CN_OK);
}

/* The next '\n'-terminated piece of [*p, end). */
static const char *fuzz_line(const char **p, const char *end, size_t *len)
{
    const char *s = *p;
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    const char *e = nl != NULL ? nl : end;
    *len = (size_t)(e - s);
    *p = nl != NULL ? nl + 1 : end;
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_sigv2_init();
    const char *p = (const char *)data, *end = p + size;
    struct gw_sigv4_header h[FUZZ_MAX_HEADERS];
    struct gw_sigv4_request req;
    memset(&req, 0, sizeof(req));
    size_t vbn;
    req.method = fuzz_line(&p, end, &req.method_len);
    req.path = fuzz_line(&p, end, &req.path_len);
    req.query = fuzz_line(&p, end, &req.query_len);
    const char *vb = fuzz_line(&p, end, &vbn);
    size_t n = 0;
    while (p < end && n < FUZZ_MAX_HEADERS) {
        size_t len;
        const char *l = fuzz_line(&p, end, &len);
        const char *colon = memchr(l, ':', len);
        if (colon == NULL)
            continue;
        h[n].name = l;
        h[n].name_len = (size_t)(colon - l);
        h[n].value = colon + 1;
        h[n].value_len = len - h[n].name_len - 1;
        n++;
    }
    req.headers = h;
    req.n_headers = n;
    req.now = 1175024202;

    struct gw_sigv4_result res;
    struct gw_sigv2_auth auth;
    /* the parsers on their own */
    for (size_t i = 0; i < n; i++) {
        if (gw_sigv2_parse_authorization(h[i].value, h[i].value_len, &auth, &res) == CN_OK)
            CN_ASSERT(auth.access_key_len >= 1 && auth.signature_len >= 1 &&
                      auth.signature_len <= GW_SIGV2_SIG_MAX);
    }
    if (gw_sigv2_parse_query(req.query, req.query_len, &auth, &res) == CN_OK)
        CN_ASSERT(auth.presigned && auth.access_key_len >= 1 && auth.expires >= 0 &&
                  strlen(auth.expires_str) >= 1);
    /* the StringToSign in both forms */
    struct evbuffer *b = evbuffer_new();
    int rc = gw_sigv2_string_to_sign(&req, vbn > 0 ? vb : NULL, vbn, NULL, 0, b);
    CN_ASSERT(rc == CN_OK || rc == CN_INVAL || rc == CN_TOOBIG);
    evbuffer_drain(b, evbuffer_get_length(b));
    gw_sigv2_string_to_sign(&req, NULL, 0, "1175139620", 10, b);
    evbuffer_free(b);
    (void)gw_sigv2_detect(&req);
    /* the whole verification */
    struct gw_sigv2_config cfg = {.creds = fuzz_creds};
    struct gw_sigv2 *v = gw_sigv2_new(&cfg);
    rc = gw_sigv2_verify(v, &req, vbn > 0 ? vb : NULL, vbn, &res);
    CN_ASSERT(rc == CN_OK || rc == CN_INVAL);
    CN_ASSERT((rc == CN_OK) == (res.err == GW_S3_OK));
    CN_ASSERT(rc != CN_OK || res.cred != NULL);
    gw_sigv2_free(v);
    return 0;
}
