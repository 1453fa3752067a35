/* Fuzzes SigV4: the Authorization header and presigned-query parsers, the
 * canonical request and a full verification. Input: lines "METHOD", "path",
 * "query", then "name:value" header lines; the clock is the AWS examples'. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "cn/rc.h"
#include "credentials.h"
#include "sigv4.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_HEADERS 32

static struct gw_credentials *fuzz_creds;

static void fuzz_sigv4_init(void)
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
    fuzz_sigv4_init();
    const char *p = (const char *)data, *end = p + size;
    struct gw_sigv4_header h[FUZZ_MAX_HEADERS];
    struct gw_sigv4_request req;
    memset(&req, 0, sizeof(req));
    req.method = fuzz_line(&p, end, &req.method_len);
    req.path = fuzz_line(&p, end, &req.path_len);
    req.query = fuzz_line(&p, end, &req.query_len);
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
    req.now = 1369353600;

    struct gw_sigv4_result res;
    struct gw_sigv4_auth *auth = malloc(sizeof(*auth));
    /* the parsers on their own */
    for (size_t i = 0; i < n; i++) {
        int rc = gw_sigv4_parse_authorization(h[i].value, h[i].value_len, auth, &res);
        if (rc == CN_OK)
            CN_ASSERT(auth->n_signed >= 1 && strlen(auth->signature) == GW_SIGV4_SIG_HEX);
    }
    if (gw_sigv4_parse_query(req.query, req.query_len, auth, &res) == CN_OK)
        CN_ASSERT(auth->expires >= 1 && auth->expires <= GW_SIGV4_MAX_EXPIRES_S);
    /* canonicalisation under a fixed set of signed headers */
    static const char fixed[] =
        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
        "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature="
        "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41";
    CN_ASSERT(gw_sigv4_parse_authorization(fixed, sizeof(fixed) - 1, auth, &res) == CN_OK);
    struct evbuffer *b = evbuffer_new();
    gw_sigv4_canonical_request(&req, auth, "UNSIGNED-PAYLOAD", 16, b);
    evbuffer_free(b);
    free(auth);
    /* the whole verification */
    struct gw_sigv4_config cfg = {.creds = fuzz_creds};
    struct gw_sigv4 *v = gw_sigv4_new(&cfg);
    int rc = gw_sigv4_verify(v, &req, &res);
    CN_ASSERT(rc == CN_OK || rc == CN_NOTFOUND || rc == CN_INVAL);
    CN_ASSERT((rc == CN_OK) == (res.err == GW_S3_OK));
    CN_ASSERT(rc != CN_OK || res.cred != NULL);
    gw_sigv4_free(v);
    return 0;
}
