/* create_bucket: before the workers start, a run that writes sends one
 * signed PUT /BUCKET (path style; BUCKET is the first segment of
 * http_raw_path) so that a fresh endpoint needs no `aws s3 mb` first.
 * 200 (created) and 409 BucketAlreadyOwnedByYou (there already, ours) let
 * the run go on; any other answer stops it with the S3 error code. */
#ifndef BENCH_BUCKET_H
#define BENCH_BUCKET_H

#include <stddef.h>

#include "cn/rc.h"
#include "settings.h"

#define BENCH_BUCKET_NAME_MAX 64    /* S3 bucket names: 3..63 characters */

enum bench_bucket_verdict {
    BENCH_BUCKET_CREATED,           /* 200 */
    BENCH_BUCKET_EXISTS,            /* 409 BucketAlreadyOwnedByYou */
    BENCH_BUCKET_FAILED,            /* anything else: the run stops */
};

/* The bucket of a path-style http_raw_path: its first segment ("/b/pre"
 * -> "b"). CN_NOTFOUND when the path has none, CN_TOOBIG when the segment
 * does not fit in len. */
int bench_bucket_name(const char *path, char *name, size_t len);

/* 1 when this run creates its bucket first: create_bucket is on, a put has
 * a weight above 0 and http_raw_path names a bucket. */
int bench_bucket_wanted(const struct bench_settings *s);

/* The text of the first <tag>...</tag> in an S3 XML body of len bytes (no
 * NUL needed), truncated to outlen - 1. CN_NOTFOUND when absent. */
int bench_bucket_xml_text(const char *body, size_t len, const char *tag, char *out,
                          size_t outlen);

/* Judges the answer to PUT /BUCKET from its status and body. */
enum bench_bucket_verdict bench_bucket_judge(long status, const char *body, size_t len);

/* The CreateBucketConfiguration body for a region ("" for us-east-1, where
 * S3 wants none). CN_TOOBIG when it does not fit. */
int bench_bucket_config_body(const char *region, char *out, size_t outlen);

/* Sends the PUT to the first server (signed when credentials are set) and
 * judges it. CN_OK to go on; otherwise err says what the server answered:
 * "bucket 'b' at http://h:p/b: HTTP 403 AccessDenied: Access Denied". */
int bench_bucket_create(const struct bench_settings *s, enum bench_bucket_verdict *verdict,
                        char err[CN_ERR_LEN]);

#endif
