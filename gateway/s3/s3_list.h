/* ListObjects (v1) and ListObjectsV2: prefix, delimiter with
 * CommonPrefixes, max-keys, marker / continuation-token / start-after,
 * fetch-owner, encoding-type=url, merged from every storage node as sorted
 * pages (gw_store_list). */
#ifndef GW_S3_LIST_H
#define GW_S3_LIST_H

#include "request.h"

/* GET /bucket (list-type=2 selects v2). */
void gw_s3_list_objects(struct gw_req *r);

#endif
