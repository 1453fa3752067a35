/* Bucket and key rules, URI percent coding and the date formats of S3. */
#include "s3_names.h"

#include <stdio.h>
#include <string.h>

#include "cn/hex.h"
#include "cn/rc.h"

/* ---- buckets and keys ------------------------------------------------ */

static int gw_s3_names_has_prefix(const char *s, size_t len, const char *p)
{
    size_t n = strlen(p);
    return len >= n && memcmp(s, p, n) == 0;
}

static int gw_s3_names_has_suffix(const char *s, size_t len, const char *p)
{
    size_t n = strlen(p);
    return len >= n && memcmp(s + len - n, p, n) == 0;
}

/* 1 for four dot-separated groups of 1..3 digits (what S3 calls "formatted
 * as an IP address"; a value over 255 still counts, as in S3). */
static int gw_s3_names_is_ipv4(const char *s, size_t len)
{
    int groups = 1, digits = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (digits == 0)
                return 0;
            groups++;
            digits = 0;
        } else if (s[i] >= '0' && s[i] <= '9') {
            if (++digits > 3)
                return 0;
        } else {
            return 0;
        }
    }
    return groups == 4 && digits > 0;
}

static int gw_s3_names_bucket_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

static int gw_s3_names_alnum_lower(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

int gw_s3_names_bucket_check(const char *name, size_t len)
{
    static const char *const bad_prefix[] = {"xn--", "sthree-", "amzn-s3-demo-"};
    static const char *const bad_suffix[] = {"-s3alias", "--ol-s3", ".mrap", "--x-s3"};
    if (name == NULL || len < 3 || len > 63)
        return CN_INVAL;
    if (!gw_s3_names_alnum_lower(name[0]) || !gw_s3_names_alnum_lower(name[len - 1]))
        return CN_INVAL;
    for (size_t i = 0; i < len; i++) {
        if (!gw_s3_names_bucket_char(name[i]))
            return CN_INVAL;
        if (i > 0 && name[i] == '.' &&
            (name[i - 1] == '.' || name[i - 1] == '-'))
            return CN_INVAL;
        if (i > 0 && name[i] == '-' && name[i - 1] == '.')
            return CN_INVAL;
    }
    if (gw_s3_names_is_ipv4(name, len))
        return CN_INVAL;
    for (size_t i = 0; i < CN_ARRAY_LEN(bad_prefix); i++)
        if (gw_s3_names_has_prefix(name, len, bad_prefix[i]))
            return CN_INVAL;
    for (size_t i = 0; i < CN_ARRAY_LEN(bad_suffix); i++)
        if (gw_s3_names_has_suffix(name, len, bad_suffix[i]))
            return CN_INVAL;
    return CN_OK;
}

int gw_s3_names_utf8_valid(const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        uint32_t cp, min;
        if ((c & 0xe0) == 0xc0) {
            n = 2, cp = c & 0x1f, min = 0x80;
        } else if ((c & 0xf0) == 0xe0) {
            n = 3, cp = c & 0x0f, min = 0x800;
        } else if ((c & 0xf8) == 0xf0) {
            n = 4, cp = c & 0x07, min = 0x10000;
        } else {
            return 0;
        }
        if (len - i < n)
            return 0;
        for (size_t k = 1; k < n; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        i += n;
    }
    return 1;
}

int gw_s3_names_key_check(const char *key, size_t len, enum gw_s3_err *err)
{
    *err = GW_S3_OK;
    if (len == 0)
        *err = GW_S3_INVALID_ARGUMENT;
    else if (len > GW_S3_NAMES_KEY_MAX)
        *err = GW_S3_KEY_TOO_LONG;
    else if (memchr(key, '\0', len) != NULL || !gw_s3_names_utf8_valid(key, len))
        *err = GW_S3_INVALID_ARGUMENT;
    return *err == GW_S3_OK ? CN_OK : CN_INVAL;
}

int gw_s3_names_storage_class_ok(const char *v, size_t len)
{
    static const char *const classes[] = {
        "STANDARD", "REDUCED_REDUNDANCY", "STANDARD_IA", "ONEZONE_IA", "INTELLIGENT_TIERING",
        "GLACIER", "DEEP_ARCHIVE", "OUTPOSTS", "GLACIER_IR", "SNOW", "EXPRESS_ONEZONE",
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(classes); i++)
        if (strlen(classes[i]) == len && memcmp(classes[i], v, len) == 0)
            return 1;
    return 0;
}

/* ---- URI encoding ---------------------------------------------------- */

int gw_s3_names_uri_decode(const char *in, size_t len, char *out, size_t *out_len,
                           int plus_as_space)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        char c = in[i];
        if (c == '%') {
            if (len - i < 3)
                return CN_INVAL;
            int hi = cn_hex_val(in[i + 1]), lo = cn_hex_val(in[i + 2]);
            if (hi < 0 || lo < 0)
                return CN_INVAL;
            out[o++] = (char)(hi << 4 | lo);
            i += 2;
        } else {
            out[o++] = plus_as_space && c == '+' ? ' ' : c;
        }
    }
    *out_len = o;
    return CN_OK;
}

static int gw_s3_names_unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == '.' || c == '~';
}

size_t gw_s3_names_uri_encode(const char *in, size_t len, char *out, size_t cap,
                              int keep_slash)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        if (gw_s3_names_unreserved(c) || (keep_slash && c == '/')) {
            if (o < cap)
                out[o] = (char)c;
            o++;
            continue;
        }
        if (o + 3 <= cap) {
            out[o] = '%';
            cn_hex_byte_upper(c, out + o + 1); /* RFC 3986 2.1, as SigV4 signs it */
        }
        o += 3;
    }
    return o;
}

/* ---- dates ----------------------------------------------------------- */

static const char *const gw_s3_names_months[12] = {
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
static const char *const gw_s3_names_wdays[7] = {
    "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
static const char *const gw_s3_names_wdays_long[7] = {
    "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};

/* Writes v as exactly n decimal digits (v is reduced modulo 10^n). */
static char *gw_s3_names_put_digits(char *out, int v, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        out[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return out + n;
}

/* Reads exactly n digits at s[*pos]; CN_OK and *out, else CN_INVAL. */
static int gw_s3_names_digits(const char *s, size_t len, size_t *pos, int n, int *out)
{
    int v = 0;
    if (len - *pos < (size_t)n)
        return CN_INVAL;
    for (int i = 0; i < n; i++) {
        char c = s[*pos + (size_t)i];
        if (c < '0' || c > '9')
            return CN_INVAL;
        v = v * 10 + (c - '0');
    }
    *pos += (size_t)n;
    *out = v;
    return CN_OK;
}

/* Matches the literal lit at s[*pos]. */
static int gw_s3_names_lit(const char *s, size_t len, size_t *pos, const char *lit)
{
    size_t n = strlen(lit);
    if (len - *pos < n || memcmp(s + *pos, lit, n) != 0)
        return CN_INVAL;
    *pos += n;
    return CN_OK;
}

/* A three-letter month name at s[*pos]; *mon = 0..11. */
static int gw_s3_names_month(const char *s, size_t len, size_t *pos, int *mon)
{
    if (len - *pos < 3)
        return CN_INVAL;
    for (int m = 0; m < 12; m++) {
        if (memcmp(s + *pos, gw_s3_names_months[m], 3) == 0) {
            *mon = m;
            *pos += 3;
            return CN_OK;
        }
    }
    return CN_INVAL;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; Howard Hinnant's
 * days_from_civil), m 1..12. */
static int64_t gw_s3_names_days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Checks the fields and turns them into seconds since the epoch. */
static int gw_s3_names_mktime(int year, int mon0, int mday, int h, int mi, int sec, time_t *out)
{
    static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (year < 1970 || year > 9999 || mon0 < 0 || mon0 > 11 || mday < 1 ||
        mday > mdays[mon0] || h > 23 || mi > 59 || sec > 60)
        return CN_INVAL;
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (mon0 == 1 && mday == 29 && !leap)
        return CN_INVAL;
    if (sec == 60)
        sec = 59; /* a leap second reads as the second before it */
    int64_t days = gw_s3_names_days_from_civil(year, mon0 + 1, mday);
    *out = (time_t)(days * 86400 + h * 3600 + mi * 60 + sec);
    return CN_OK;
}

/* "HH:MM:SS" */
static int gw_s3_names_hms(const char *s, size_t len, size_t *pos, int *h, int *m, int *sec)
{
    if (gw_s3_names_digits(s, len, pos, 2, h) != CN_OK ||
        gw_s3_names_lit(s, len, pos, ":") != CN_OK ||
        gw_s3_names_digits(s, len, pos, 2, m) != CN_OK ||
        gw_s3_names_lit(s, len, pos, ":") != CN_OK ||
        gw_s3_names_digits(s, len, pos, 2, sec) != CN_OK)
        return CN_INVAL;
    return CN_OK;
}

/* "Sun, 06 Nov 1994 08:49:37 GMT" after the day name and ", ". */
static int gw_s3_names_parse_imf(const char *s, size_t len, size_t pos, time_t *out)
{
    int d, mon, y, h, mi, sec;
    if (gw_s3_names_digits(s, len, &pos, 2, &d) != CN_OK ||
        gw_s3_names_lit(s, len, &pos, " ") != CN_OK ||
        gw_s3_names_month(s, len, &pos, &mon) != CN_OK ||
        gw_s3_names_lit(s, len, &pos, " ") != CN_OK ||
        gw_s3_names_digits(s, len, &pos, 4, &y) != CN_OK ||
        gw_s3_names_lit(s, len, &pos, " ") != CN_OK ||
        gw_s3_names_hms(s, len, &pos, &h, &mi, &sec) != CN_OK ||
        gw_s3_names_lit(s, len, &pos, " GMT") != CN_OK || pos != len)
        return CN_INVAL;
    return gw_s3_names_mktime(y, mon, d, h, mi, sec, out);
}

/* "06-Nov-94 08:49:37 GMT" after "Sunday, ". */
static int gw_s3_names_parse_850(const char *s, size_t len, size_t pos, time_t *out)
{
    int d, mon, y, h, mi, sec;
    if (gw_s3_names_digits(s, len, &pos, 2, &d) != CN_OK ||
        gw_s3_names_lit(s, len, &pos, "-") != CN_OK ||
        gw_s3_names_month(s, len, &pos, &mon) != CN_OK ||
        gw_s3_names_lit(s, len, &pos, "-") != CN_OK ||
        gw_s3_names_digits(s, len, &pos, 2, &y) != CN_OK ||
        gw_s3_names_lit(s, len, &pos, " ") != CN_OK ||
        gw_s3_names_hms(s, len, &pos, &h, &mi, &sec) != CN_OK ||
        gw_s3_names_lit(s, len, &pos, " GMT") != CN_OK || pos != len)
        return CN_INVAL;
    y += y >= 70 ? 1900 : 2000;
    return gw_s3_names_mktime(y, mon, d, h, mi, sec, out);
}

/* "Nov  6 08:49:37 1994" after "Sun ". */
static int gw_s3_names_parse_asctime(const char *s, size_t len, size_t pos, time_t *out)
{
    int d, mon, y, h, mi, sec;
    if (gw_s3_names_month(s, len, &pos, &mon) != CN_OK ||
        gw_s3_names_lit(s, len, &pos, " ") != CN_OK)
        return CN_INVAL;
    if (pos < len && s[pos] == ' ') {
        pos++;
        if (gw_s3_names_digits(s, len, &pos, 1, &d) != CN_OK)
            return CN_INVAL;
    } else if (gw_s3_names_digits(s, len, &pos, 2, &d) != CN_OK) {
        return CN_INVAL;
    }
    if (gw_s3_names_lit(s, len, &pos, " ") != CN_OK ||
        gw_s3_names_hms(s, len, &pos, &h, &mi, &sec) != CN_OK ||
        gw_s3_names_lit(s, len, &pos, " ") != CN_OK ||
        gw_s3_names_digits(s, len, &pos, 4, &y) != CN_OK || pos != len)
        return CN_INVAL;
    return gw_s3_names_mktime(y, mon, d, h, mi, sec, out);
}

int gw_s3_names_http_date_parse(const char *s, size_t len, time_t *out)
{
    if (s == NULL)
        return CN_INVAL;
    for (int w = 0; w < 7; w++) {
        size_t pos = 0;
        if (gw_s3_names_lit(s, len, &pos, gw_s3_names_wdays_long[w]) == CN_OK &&
            gw_s3_names_lit(s, len, &pos, ", ") == CN_OK)
            return gw_s3_names_parse_850(s, len, pos, out);
        pos = 0;
        if (gw_s3_names_lit(s, len, &pos, gw_s3_names_wdays[w]) != CN_OK)
            continue;
        if (gw_s3_names_lit(s, len, &pos, ", ") == CN_OK)
            return gw_s3_names_parse_imf(s, len, pos, out);
        if (gw_s3_names_lit(s, len, &pos, " ") == CN_OK)
            return gw_s3_names_parse_asctime(s, len, pos, out);
        return CN_INVAL;
    }
    return CN_INVAL;
}

void gw_s3_names_iso8601_format(int64_t ms, char out[GW_S3_NAMES_ISO8601_LEN])
{
    if (ms < 0)
        ms = 0;
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char *p = out;
    p = gw_s3_names_put_digits(p, tm.tm_year + 1900, 4);
    *p++ = '-';
    p = gw_s3_names_put_digits(p, tm.tm_mon + 1, 2);
    *p++ = '-';
    p = gw_s3_names_put_digits(p, tm.tm_mday, 2);
    *p++ = 'T';
    p = gw_s3_names_put_digits(p, tm.tm_hour, 2);
    *p++ = ':';
    p = gw_s3_names_put_digits(p, tm.tm_min, 2);
    *p++ = ':';
    p = gw_s3_names_put_digits(p, tm.tm_sec, 2);
    *p++ = '.';
    p = gw_s3_names_put_digits(p, (int)(ms % 1000), 3);
    *p++ = 'Z';
    *p = '\0';
}

int gw_s3_names_iso8601_parse(const char *s, size_t len, int64_t *ms)
{
    size_t pos = 0;
    int y, mo, d, h, mi, sec, frac = 0;
    if (s == NULL || gw_s3_names_digits(s, len, &pos, 4, &y) != CN_OK ||
        gw_s3_names_lit(s, len, &pos, "-") != CN_OK ||
        gw_s3_names_digits(s, len, &pos, 2, &mo) != CN_OK ||
        gw_s3_names_lit(s, len, &pos, "-") != CN_OK ||
        gw_s3_names_digits(s, len, &pos, 2, &d) != CN_OK ||
        gw_s3_names_lit(s, len, &pos, "T") != CN_OK ||
        gw_s3_names_hms(s, len, &pos, &h, &mi, &sec) != CN_OK)
        return CN_INVAL;
    if (pos < len && s[pos] == '.') {
        pos++;
        if (gw_s3_names_digits(s, len, &pos, 3, &frac) != CN_OK)
            return CN_INVAL;
    }
    if (gw_s3_names_lit(s, len, &pos, "Z") != CN_OK || pos != len)
        return CN_INVAL;
    time_t t;
    if (gw_s3_names_mktime(y, mo - 1, d, h, mi, sec, &t) != CN_OK)
        return CN_INVAL;
    *ms = (int64_t)t * 1000 + frac;
    return CN_OK;
}

int gw_s3_names_amz_date_parse(const char *s, size_t len, time_t *out)
{
    size_t pos = 0;
    int y, mo, d, h, mi, sec;
    if (s == NULL || len != 16 || gw_s3_names_digits(s, len, &pos, 4, &y) != CN_OK ||
        gw_s3_names_digits(s, len, &pos, 2, &mo) != CN_OK ||
        gw_s3_names_digits(s, len, &pos, 2, &d) != CN_OK ||
        gw_s3_names_lit(s, len, &pos, "T") != CN_OK ||
        gw_s3_names_digits(s, len, &pos, 2, &h) != CN_OK ||
        gw_s3_names_digits(s, len, &pos, 2, &mi) != CN_OK ||
        gw_s3_names_digits(s, len, &pos, 2, &sec) != CN_OK ||
        gw_s3_names_lit(s, len, &pos, "Z") != CN_OK)
        return CN_INVAL;
    return gw_s3_names_mktime(y, mo - 1, d, h, mi, sec, out);
}
