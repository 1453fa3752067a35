/* GET /_cairn/status: the gateway's view for operators, as JSON (docs/
 * operations.md): version and uptime, readiness, the ring (digest, vnodes,
 * quorums), each storage node (up/down and since when, transitions, hint
 * queue) and the settings that differ from their defaults. Only for a
 * request signed (SigV4) by a key with the admin=true attribute of the
 * credentials file (credentials.h); the access decision (access.h,
 * GW_ACCESS_ACTION_STATUS) is that one decision. cairn-admin status reads it. */
#ifndef GW_S3_STATUS_H
#define GW_S3_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

struct gw_req;
struct gw_sigv4_result;

/* What the process knows at start and the status shows (server.c fills
 * it once; it is read-only afterwards). */
struct gw_s3_status_info {
    uint64_t started_us;       /* wall clock at start */
    uint64_t started_mono_us;  /* the same moment, monotonic */
    uint32_t threads;
    uint32_t vnodes;           /* ring.vnodes */
    char ring_digest[9];       /* CRC32C of the ring's inputs, hex */
    char *settings_json;       /* {"key": "value", ...} of settings not at their default */
};

/* Answers r (a GET of /_cairn/status the access decision allowed)
 * with the status document. Ends in gw_req_reply_end. */
void gw_s3_status_reply(struct gw_req *r);

/* Appends s[n] as a JSON string (quotes included) to b: quote, backslash
 * and control bytes escaped, bytes >= 0x80 as \u00XX (settings and node
 * names are ASCII in practice; the output stays valid JSON whatever). */
void gw_s3_status_json_str(struct evbuffer *b, const char *s, size_t n);

#endif
