/* CURVE key files of the cluster's transport security (docs/security.md):
 * a node's or a client's secret key, the nodes' public key, and a node's
 * allow-list of client public keys. Pure text handling, no ZeroMQ: the
 * sockets are configured by proto/ (msg/curve.h) and the node's ZAP handler.
 *
 * File format, for every kind: lines of text; blank lines are skipped; a
 * line's first whitespace-separated token is a key when it is 40 Z85
 * characters (a 32-byte key), and the rest of the line is a free label
 * ("KEY gateway-1"); a line whose token is not a key and starts with '#' is
 * a comment (so "#KEY" comments a key out: 41 characters are no key). Any
 * other line is an error naming the line. A key file holds exactly one key;
 * an allow-list any number (none: every client is refused). */
#ifndef CN_CURVE_KEY_H
#define CN_CURVE_KEY_H

#include <stddef.h>

#include "cn/rc.h"

#define CN_CURVE_KEY_LEN 40 /* Z85 characters of a 32-byte key */

/* A key as NUL-terminated Z85 text (what zmq_setsockopt takes). */
struct cn_curve_key {
    char z85[CN_CURVE_KEY_LEN + 1];
};

/* 1 when s[0..len) is one Z85-encoded 32-byte key, else 0. */
int cn_curve_key_valid(const char *s, size_t len);

/* Parses the text of a key file (exactly one key). Returns CN_OK with *out
 * set, or CN_INVAL with err naming origin and the line; *out is then
 * unchanged. */
int cn_curve_key_parse(const char *buf, size_t len, const char *origin,
                       struct cn_curve_key *out, char err[CN_ERR_LEN]);

/* Loads a key file. secret: the file holds a secret key and must not be
 * readable, writable or executable by group or others (CN_INVAL: "chmod 600"
 * in err). Returns CN_OK, CN_IO (missing, unreadable), CN_TOOBIG or CN_INVAL
 * with err naming the path; *out is unchanged on error. */
int cn_curve_key_load(const char *path, int secret, struct cn_curve_key *out,
                      char err[CN_ERR_LEN]);

/* Writes key to a new file at path (an existing file is an error: CN_IO
 * with EEXIST in err, the file untouched), mode 0600 when secret, else
 * 0644. On error a partly written file is removed. */
int cn_curve_key_write(const char *path, const struct cn_curve_key *key, int secret,
                       char err[CN_ERR_LEN]);

/* An allow-list: a set of public keys, immutable once loaded. */
struct cn_curve_keyset;

/* Parses the text of an allow-list. Returns CN_OK and a new set in *out
 * (free with cn_curve_keyset_free()), or CN_INVAL with err naming origin and
 * the line, *out NULL. Duplicates are kept once. */
int cn_curve_keyset_parse(const char *buf, size_t len, const char *origin,
                          struct cn_curve_keyset **out, char err[CN_ERR_LEN]);

/* Loads an allow-list file; as cn_curve_keyset_parse(), plus CN_IO and
 * CN_TOOBIG (over 16 MiB). */
int cn_curve_keyset_load(const char *path, struct cn_curve_keyset **out,
                         char err[CN_ERR_LEN]);

/* 1 when the set holds the key z85[0..len), else 0. s may be NULL (empty). */
int cn_curve_keyset_has(const struct cn_curve_keyset *s, const char *z85, size_t len);

size_t cn_curve_keyset_count(const struct cn_curve_keyset *s);
void cn_curve_keyset_free(struct cn_curve_keyset *s);

#endif
