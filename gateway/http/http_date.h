/* The HTTP date of Date and Last-Modified headers (RFC 9110 5.6.7). */
#ifndef GW_HTTP_DATE_H
#define GW_HTTP_DATE_H

#include <time.h>

/* "Sun, 06 Nov 1994 08:49:37 GMT" (IMF-fixdate), 29 chars + NUL. */
#define GW_HTTP_DATE_LEN 30

/* Formats t (seconds since the epoch, UTC) into out. */
void gw_http_date_format(time_t t, char out[GW_HTTP_DATE_LEN]);

#endif
