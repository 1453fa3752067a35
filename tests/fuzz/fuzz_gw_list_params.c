/* Fuzzes the listings' shared parameter parser (s3_list.h): the input is a
 * query string, split and percent-decoded as the router does, read as
 * ListObjects v1 ("marker"), ListObjectsV2 (no marker) and
 * ListObjectVersions ("key-marker", at most 1024 bytes) would. What it
 * accepts must hold the limits it promises. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_query.h"
#include "request.h"
#include "s3_ctx.h"
#include "s3_list.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fuzz_query fq;
    static struct gw_req r;
    static struct gw_s3_ctx ctx;
    fuzz_query_split(&fq, data, size);
    memset(&r, 0, sizeof(r));
    memset(&ctx, 0, sizeof(ctx));
    ctx.opts.max_keys = 1000;
    r.s3 = &ctx;
    r.params = fq.params;
    r.n_params = fq.n;
    static const char *const markers[] = {"marker", NULL, "key-marker"};
    static const size_t marker_max[] = {0, 0, 1024};
    for (size_t i = 0; i < 3; i++) {
        struct gw_s3_list_params p;
        if (gw_s3_list_params_parse(&r, markers[i], marker_max[i], &p) != GW_S3_OK)
            continue;
        if (p.max_keys > 1000)
            abort();
        if (p.prefix != NULL && p.prefix->value_len > 1024)
            abort();
        if (marker_max[i] > 0 && p.marker != NULL && p.marker->value_len > marker_max[i])
            abort();
        if (markers[i] == NULL && p.marker != NULL)
            abort();
        const struct gw_req_param *enc = gw_req_param(&r, "encoding-type");
        if (p.url != (enc != NULL) || (enc != NULL && strcmp(enc->value, "url") != 0))
            abort();
        int cp = gw_s3_list_params_marker_is_prefix(&p);
        if (cp && (p.delim == NULL || p.delim->value_len == 0 || p.marker == NULL))
            abort();
    }
    return 0;
}
