/* Hexadecimal digits: encoding bytes as text (digests, ETags, signatures,
 * escapes in log lines and URIs) and reading them back. Encoders say which
 * case they write, because some formats fix it (SigV4 signatures and ETags
 * are lower case, percent-encoding is upper case); readers say which case
 * they accept. */
#ifndef CN_HEX_H
#define CN_HEX_H

#include <stddef.h>

/* The value (0..15) of one hex digit, 0-9 a-f A-F; -1 for anything else,
 * EOF (-1) included. */
int cn_hex_val(int c);
/* The same, accepting only lower-case digits (0-9 a-f). */
int cn_hex_val_lower(int c);

/* Whether all n chars of s are hex digits (either case; 1 when n is 0). */
int cn_hex_is(const char *s, size_t n);
/* Whether all n chars of s are lower-case hex digits (1 when n is 0). */
int cn_hex_is_lower(const char *s, size_t n);

/* Writes the two lower-case digits of b to out[0..1]; no NUL. */
void cn_hex_byte(unsigned char b, char out[2]);
/* Writes the two upper-case digits of b to out[0..1]; no NUL. */
void cn_hex_byte_upper(unsigned char b, char out[2]);

/* Writes the 2n lower-case digits of in[0..n) and a NUL: out holds 2n+1. */
void cn_hex_encode(const void *in, size_t n, char *out);

/* Reads len digits (either case) into len/2 bytes at out. CN_OK; CN_INVAL
 * when len is odd or a char is not a digit; CN_TOOBIG when len/2 > cap.
 * On error out may hold some bytes. */
int cn_hex_decode(const char *hex, size_t len, void *out, size_t cap);

#endif
