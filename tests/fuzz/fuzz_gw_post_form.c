/* Fuzzes POST object's form parser and policy check. Input: line 1 a
 * Content-Type value (its boundary), line 2 a policy document (JSON, the
 * target base64-encodes it), line 3 one byte-count digit (the feed's piece
 * size), then the body. The body is fed in pieces; the fields it yields and
 * the policy are checked against each other as the handler does. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checksum.h"
#include "cn/rc.h"
#include "post_form.h"
#include "post_policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *fuzz_line(const char **p, const char *end, size_t *len)
{
    const char *s = *p;
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    const char *e = nl != NULL ? nl : end;
    *len = (size_t)(e - s);
    *p = nl != NULL ? nl + 1 : end;
    return s;
}

static int fuzz_sink(void *arg, const char *d, size_t n)
{
    (void)d;
    *(uint64_t *)arg += n;
    return CN_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data, *end = p + size;
    size_t ctl, pl, sl;
    const char *ct = fuzz_line(&p, end, &ctl);
    const char *pol = fuzz_line(&p, end, &pl);
    const char *step_s = fuzz_line(&p, end, &sl);
    size_t step = sl > 0 && step_s[0] >= '1' && step_s[0] <= '9' ? (size_t)(step_s[0] - '0') : 64;
    char b[GW_POST_FORM_BOUNDARY_MAX + 1];
    size_t blen;
    if (gw_post_form_boundary(ct, ctl, b, &blen) != CN_OK)
        return 0;
    CN_ASSERT(blen >= 1 && blen <= GW_POST_FORM_BOUNDARY_MAX);
    struct gw_post_form *f = gw_post_form_new(b, blen);
    gw_post_form_set_range(f, 0, 1u << 20);
    uint64_t got = 0;
    int rc = CN_AGAIN, fields = 0;
    while (p < end) {
        size_t n = CN_MIN(step, (size_t)(end - p)), used = 0;
        enum gw_s3_err err = GW_S3_OK;
        rc = gw_post_form_feed(f, p, n, &used, fuzz_sink, &got, &err);
        CN_ASSERT(used <= n);
        p += used;
        if (rc == CN_OK)
            fields = 1;
        else if (rc != CN_AGAIN && rc != CN_DONE) {
            CN_ASSERT(err != GW_S3_OK);
            break;
        }
        if (rc == CN_DONE)
            break;
    }
    CN_ASSERT(got == gw_post_form_file_bytes(f) && got <= size);
    enum gw_s3_err ferr = GW_S3_OK;
    if (gw_post_form_finish(f, &ferr) == CN_OK)
        CN_ASSERT(fields && rc == CN_DONE);
    if (fields && pl < 4096) {
        char *b64 = malloc(4 * (pl / 3 + 1) + 1);
        size_t n64 = gw_checksum_base64_encode(pol, pl, b64);
        struct gw_post_policy_input in = {.bucket = "bucket", .bucket_len = 6, .form = f,
                                          .now = 1700000000};
        uint64_t min, max;
        char why[CN_ERR_LEN];
        if (gw_post_policy_check(b64, n64, &in, &min, &max, why) == GW_S3_OK)
            CN_ASSERT(min <= max);
        free(b64);
    }
    gw_post_form_free(f);
    return 0;
}
