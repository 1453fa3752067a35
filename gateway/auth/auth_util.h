/* Small pieces both request signers' verifiers use (sigv4.c, sigv2.c): the
 * refusal with its S3 error and message, header lookup, and the walk over a
 * raw query string. */
#ifndef GW_AUTH_UTIL_H
#define GW_AUTH_UTIL_H

#include <stddef.h>

#include "sigv4.h"

/* Fills res with err and a printf message (truncated to its buffer);
 * returns CN_INVAL, so a check can `return gw_auth_fail(...)`. */
__attribute__((format(printf, 3, 4)))
int gw_auth_fail(struct gw_sigv4_result *res, enum gw_s3_err err, const char *fmt, ...);

/* a[0..an) equals the string b, ignoring ASCII case. */
int gw_auth_ieq(const char *a, size_t an, const char *b);

/* The first request header named name (case-insensitive), or NULL. */
const struct gw_sigv4_header *gw_auth_header(const struct gw_sigv4_request *req,
                                             const char *name);

/* Calls fn for every name=value piece of a raw query (as sent, still
 * percent-encoded; empty pieces skipped); has_eq says whether the piece had
 * an '='. Stops at, and returns, the first result other than CN_OK. */
typedef int (*gw_auth_param_cb)(void *arg, const char *name, size_t nn, const char *value,
                                size_t vn, int has_eq);
int gw_auth_each_param(const char *q, size_t len, gw_auth_param_cb fn, void *arg);

#endif
