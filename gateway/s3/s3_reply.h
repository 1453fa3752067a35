/* Answers S3 handlers share when a store operation failed: the status of a
 * store result (struct gw_store_result, gw_store_list_result, or a status a
 * large-object step passed on) becomes the S3 error gw_s3_error_from_store()
 * names, and the result's err text the <Message>. Between the handlers and
 * request.c. */
#ifndef GW_S3_REPLY_H
#define GW_S3_REPLY_H

#include "request.h"

/* Ends r with the S3 error for the store status rc (ServiceUnavailable or
 * InternalError) and err (NULL: the table's text) as the message. Call only
 * when rc != CN_OK. Like gw_req_error(), r is done after. */
void gw_s3_reply_store_error(struct gw_req *r, int rc, const char *err);

#endif
