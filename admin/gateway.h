/* cairn-admin's client of a gateway's GET /_cairn/status: one plain-HTTP
 * request signed with SigV4 (an admin key: admin=true in the gateway's
 * credentials file), the JSON document back. */
#ifndef ADM_GATEWAY_H
#define ADM_GATEWAY_H

#include <stddef.h>

#include "cn/rc.h"

struct adm_gateway_key {
    const char *access_key;
    const char *secret_key;
    const char *region;
};

#define ADM_GATEWAY_MAX_BODY (4u << 20)

/* GETs url + "/_cairn/status" (url is http://HOST[:PORT], optionally with a
 * trailing '/'; HOST a name or IPv4 address) within timeout_ms. CN_OK with
 * *status the HTTP status and *body (malloc'd, NUL-terminated, the caller
 * frees it) the response body; or an error with err (bad URL, connect,
 * timeout, a reply that is not HTTP or over ADM_GATEWAY_MAX_BODY). */
int adm_gateway_status(const char *url, const struct adm_gateway_key *key, int timeout_ms,
                       int *status, char **body, char err[CN_ERR_LEN]);

#endif
