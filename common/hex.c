/* Hexadecimal encoding and decoding (cn/hex.h), the one copy the storage
 * node, the gateway and the load driver share. */
#include "cn/hex.h"

#include "cn/rc.h"

static const char cn_hex_digits_lower[] = "0123456789abcdef";
static const char cn_hex_digits_upper[] = "0123456789ABCDEF";

int cn_hex_val(int c)
{
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return cn_hex_val_lower(c);
}

int cn_hex_val_lower(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int cn_hex_is(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cn_hex_val((unsigned char)s[i]) < 0)
            return 0;
    return 1;
}

int cn_hex_is_lower(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cn_hex_val_lower((unsigned char)s[i]) < 0)
            return 0;
    return 1;
}

void cn_hex_byte(unsigned char b, char out[2])
{
    out[0] = cn_hex_digits_lower[b >> 4];
    out[1] = cn_hex_digits_lower[b & 15];
}

void cn_hex_byte_upper(unsigned char b, char out[2])
{
    out[0] = cn_hex_digits_upper[b >> 4];
    out[1] = cn_hex_digits_upper[b & 15];
}

void cn_hex_encode(const void *in, size_t n, char *out)
{
    const unsigned char *b = in;
    for (size_t i = 0; i < n; i++)
        cn_hex_byte(b[i], out + 2 * i);
    out[2 * n] = '\0';
}

int cn_hex_decode(const char *hex, size_t len, void *out, size_t cap)
{
    unsigned char *o = out;
    if (len % 2 != 0)
        return CN_INVAL;
    if (len / 2 > cap)
        return CN_TOOBIG;
    for (size_t i = 0; i < len / 2; i++) {
        int hi = cn_hex_val((unsigned char)hex[2 * i]);
        int lo = cn_hex_val((unsigned char)hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return CN_INVAL;
        o[i] = (unsigned char)(hi << 4 | lo);
    }
    return CN_OK;
}
