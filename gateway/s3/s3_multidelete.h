/* DeleteObjects: POST /bucket?delete with a <Delete> document; every key is
 * deleted in parallel and the DeleteResult lists each outcome (only errors in
 * quiet mode). */
#ifndef GW_S3_MULTIDELETE_H
#define GW_S3_MULTIDELETE_H

#include "request.h"

void gw_s3_multidelete(struct gw_req *r);

#endif
