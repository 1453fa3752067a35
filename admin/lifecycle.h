/* cairn-admin lifecycle status: reads the lifecycle worker's system record
 * ("s/lifecycle", written by the gateway holding the lease:
 * gateway/s3/lifecycle_run.h) from every node, takes the newest copy, and
 * prints the lease and what the last scan did and when the next is due. */
#ifndef ADM_LIFECYCLE_H
#define ADM_LIFECYCLE_H

#include "cn/cluster.h"
#include "msg/curve.h"

/* Prints the status; returns 0 when some node answered (with the record or
 * without it: "no scan yet"), 1 when none did. json: one JSON object
 * {"command", "answered", "down": [{"address", "error"}], "record": {...} |
 * null} with the record's fields as they are (times in us). */
int adm_lifecycle_status(const struct cn_cluster *cl, int timeout_ms,
                         const struct msg_curve_client *curve, int json);

/* The same for any worker's leased system record (key, e.g. "s/collector",
 * written by gateway/s3/collector.c), printed under name ("collector"):
 * `cairn-admin collector status`. */
int adm_system_record_status(const struct cn_cluster *cl, int timeout_ms,
                             const struct msg_curve_client *curve, int json, const char *key,
                             const char *name);

#endif
