/* HTTP dates (http_date.h). Written by hand rather than with strftime so
 * the locale can never change a day or month name. */
#include "http_date.h"

#include <string.h>

static char *gw_http_date_digits(char *out, int v, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        out[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return out + n;
}

void gw_http_date_format(time_t t, char out[GW_HTTP_DATE_LEN])
{
    static const char wdays[] = "SunMonTueWedThuFriSat";
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    struct tm tm;
    gmtime_r(&t, &tm);
    char *p = out;
    memcpy(p, wdays + 3 * tm.tm_wday, 3);
    p += 3;
    *p++ = ',';
    *p++ = ' ';
    p = gw_http_date_digits(p, tm.tm_mday, 2);
    *p++ = ' ';
    memcpy(p, months + 3 * tm.tm_mon, 3);
    p += 3;
    *p++ = ' ';
    p = gw_http_date_digits(p, tm.tm_year + 1900, 4);
    *p++ = ' ';
    p = gw_http_date_digits(p, tm.tm_hour, 2);
    *p++ = ':';
    p = gw_http_date_digits(p, tm.tm_min, 2);
    *p++ = ':';
    p = gw_http_date_digits(p, tm.tm_sec, 2);
    memcpy(p, " GMT", 5);
}
