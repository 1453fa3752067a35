/* Fuzzes the aws-chunked decoder. Byte 0 picks the mode (and whether a
 * CRC32C trailer is announced), byte 1 the piece size the rest is fed in;
 * signed modes use the AWS example's signing context, so the documented
 * bodies in the seeds decode to the end. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "aws_chunked.h"
#include "cn/rc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fuzz_sink(void *arg, const char *p, size_t n)
{
    uint64_t *total = arg;
    (void)p;
    *total += n;
    return CN_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const seeds[] = {
        "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9",
        "106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e"};
    static const char secret[] = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    if (size < 2)
        return 0;
    static const enum gw_sigv4_payload modes[3] = {GW_SIGV4_PAYLOAD_STREAMING,
        GW_SIGV4_PAYLOAD_STREAMING_TRAILER, GW_SIGV4_PAYLOAD_STREAMING_UNSIGNED_TRAILER};
    struct gw_sigv4_result auth;
    memset(&auth, 0, sizeof(auth));
    gw_sigv4_signing_key(secret, sizeof(secret) - 1, "20130524", "us-east-1", 9,
                         auth.signing_key);
    strcpy(auth.signature, seeds[data[0] % 3 == 1]);
    strcpy(auth.amz_date, "20130524T000000Z");
    strcpy(auth.scope, "20130524/us-east-1/s3/aws4_request");
    struct gw_aws_chunked_config cfg = {
        .mode = modes[data[0] % 3], .auth = &auth,
        .decoded_length = (data[0] & 8) ? 66560 : -1,
        .trailer_names = (data[0] & 4) ? "x-amz-checksum-crc32c" : NULL,
        .trailer_names_len = (data[0] & 4) ? 21 : 0,
        .max_chunk_size = (data[0] & 16) ? 1024 : 0,
        .min_chunk_size = (data[0] & 32) ? 8192 : 0,
    };
    enum gw_s3_err err;
    struct gw_aws_chunked *d = gw_aws_chunked_new(&cfg, &err);
    CN_ASSERT(d != NULL);
    size_t step = (size_t)data[1] * 8 + 1, pos = 2;
    uint64_t total = 0;
    int rc = CN_AGAIN;
    while (pos < size && rc == CN_AGAIN) {
        size_t n = step < size - pos ? step : size - pos, used = 0;
        rc = gw_aws_chunked_feed(d, (const char *)data + pos, n, &used, fuzz_sink, &total, &err);
        CN_ASSERT(used <= n && (rc != CN_AGAIN || used == n));
        pos += used;
    }
    if (rc == CN_AGAIN)
        rc = gw_aws_chunked_finish(d, &err);
    CN_ASSERT(rc == CN_DONE || rc == CN_INVAL || rc == CN_TOOBIG || rc == CN_CORRUPT);
    CN_ASSERT((rc == CN_DONE) == (err == GW_S3_OK));
    CN_ASSERT(total == gw_aws_chunked_decoded_bytes(d));
    CN_ASSERT(rc != CN_DONE || cfg.decoded_length < 0 || total == 66560);
    gw_aws_chunked_free(d);
    return 0;
}
