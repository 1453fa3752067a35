/* Shared answers of S3 handlers to failed store operations (s3_reply.h). */
#include "s3_reply.h"

#include "s3_error.h"

void gw_s3_reply_store_error(struct gw_req *r, int rc, const char *err)
{
    gw_req_error(r, gw_s3_error_from_store(rc), err);
}
