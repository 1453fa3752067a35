/* The response-* query parameters of GetObject (response-content-type,
 * -content-language, -expires, -cache-control, -content-disposition,
 * -content-encoding): a presigned download may name the headers its answer
 * carries. They are parsed once by the router, and a value that could not be
 * a header value (a control character: CR, LF, NUL, ...) is refused there
 * with 400 InvalidArgument, so no caller-chosen byte can end a header line. */
#ifndef GW_S3_OVERRIDES_H
#define GW_S3_OVERRIDES_H

#include <stddef.h>

#include "s3_error.h"

struct gw_req_param;

enum gw_s3_override {
    GW_S3_OVR_CONTENT_TYPE,
    GW_S3_OVR_CONTENT_LANGUAGE,
    GW_S3_OVR_EXPIRES,
    GW_S3_OVR_CACHE_CONTROL,
    GW_S3_OVR_CONTENT_DISPOSITION,
    GW_S3_OVR_CONTENT_ENCODING,
    GW_S3_OVR_N
};

/* Which overrides a request gave: value[i] NULL when not given; the values
 * point into the request's parameters (they live as long as the request). */
struct gw_s3_overrides {
    const char *value[GW_S3_OVR_N];
    size_t len[GW_S3_OVR_N];
};

/* Fills o from the n decoded query parameters. GW_S3_OK, or
 * GW_S3_INVALID_ARGUMENT with *why when a value holds a byte that no header
 * value may hold; o is then partly filled and must not be used. */
enum gw_s3_err gw_s3_overrides_parse(const struct gw_req_param *params, size_t n,
                                     struct gw_s3_overrides *o, const char **why);

/* The lower-case stored-metadata name of override i ("content-type") and
 * the header name it is written as ("Content-Type"). */
const char *gw_s3_overrides_meta_name(enum gw_s3_override i);
const char *gw_s3_overrides_header_name(enum gw_s3_override i);

#endif
