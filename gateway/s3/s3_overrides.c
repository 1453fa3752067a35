/* response-* overrides of GetObject, checked once (see s3_overrides.h). */
#include "s3_overrides.h"

#include <string.h>

#include "http_req.h"
#include "request.h"

static const struct {
    const char *param;
    const char *meta;
    const char *header;
} gw_s3_overrides_table[GW_S3_OVR_N] = {
    [GW_S3_OVR_CONTENT_TYPE] = {"response-content-type", "content-type", "Content-Type"},
    [GW_S3_OVR_CONTENT_LANGUAGE] = {"response-content-language", "content-language",
                                    "Content-Language"},
    [GW_S3_OVR_EXPIRES] = {"response-expires", "expires", "Expires"},
    [GW_S3_OVR_CACHE_CONTROL] = {"response-cache-control", "cache-control", "Cache-Control"},
    [GW_S3_OVR_CONTENT_DISPOSITION] = {"response-content-disposition", "content-disposition",
                                       "Content-Disposition"},
    [GW_S3_OVR_CONTENT_ENCODING] = {"response-content-encoding", "content-encoding",
                                    "Content-Encoding"},
};

enum gw_s3_err gw_s3_overrides_parse(const struct gw_req_param *params, size_t n,
                                     struct gw_s3_overrides *o, const char **why)
{
    memset(o, 0, sizeof(*o));
    for (size_t i = 0; i < n; i++) {
        const struct gw_req_param *p = &params[i];
        if (p->name_len < 9 || memcmp(p->name, "response-", 9) != 0)
            continue;
        for (int k = 0; k < GW_S3_OVR_N; k++) {
            if (strlen(gw_s3_overrides_table[k].param) != p->name_len ||
                memcmp(gw_s3_overrides_table[k].param, p->name, p->name_len) != 0)
                continue;
            if (!gw_http_field_value_ok(p->value, p->value_len)) {
                *why = "Response header overrides may not hold control characters.";
                return GW_S3_INVALID_ARGUMENT;
            }
            o->value[k] = p->value;
            o->len[k] = p->value_len;
        }
    }
    return GW_S3_OK;
}

const char *gw_s3_overrides_meta_name(enum gw_s3_override i)
{
    return gw_s3_overrides_table[i].meta;
}

const char *gw_s3_overrides_header_name(enum gw_s3_override i)
{
    return gw_s3_overrides_table[i].header;
}
