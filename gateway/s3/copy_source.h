/* x-amz-copy-source, parsed exactly once. The router decodes the header into
 * a gw_copy_source before any access decision; the owner check reads its
 * bucket and CopyObject / UploadPartCopy read its bucket and key, so what is
 * checked is what is copied (no handler looks at the raw header).
 *
 * Syntax (S3): [/]bucket/key[?versionId=ID], the bucket and key URL-encoded.
 * The query is cut at the first literal '?' before decoding (an encoded %3F
 * is a key byte), then the path is percent-decoded once ('+' stays '+'), one
 * leading '/' is dropped and the path is split at its first '/'. */
#ifndef GW_COPY_SOURCE_H
#define GW_COPY_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "s3_error.h"

#define GW_COPY_SOURCE_BUCKET_MAX 63
#define GW_COPY_SOURCE_VERSION_MAX 1024

struct gw_copy_source {
    char bucket[GW_COPY_SOURCE_BUCKET_MAX + 1]; /* decoded, a valid bucket name */
    size_t bucket_len;
    char *key;               /* decoded, NUL-terminated, into buf */
    size_t key_len;
    char *version_id;        /* decoded, NUL-terminated; NULL: none given */
    size_t version_id_len;
    char *buf;               /* owns key and version_id */
};

/* Parses the header value v[len]. On GW_S3_OK fills cs (release with
 * gw_copy_source_fini()); otherwise cs holds nothing to release and *why is
 * S3's message for the error (InvalidArgument). max_key_len bounds the
 * decoded key (s3.max_key_len). */
enum gw_s3_err gw_copy_source_parse(const char *v, size_t len, size_t max_key_len,
                                    struct gw_copy_source *cs, const char **why);
void gw_copy_source_fini(struct gw_copy_source *cs);

/* 1 when cs names no version or the version "null", else 0 (UploadPartCopy
 * takes no other; CopyObject reads any version, s3_versions.h). */
int gw_copy_source_version_is_null(const struct gw_copy_source *cs);

/* x-amz-copy-source-range of UploadPartCopy (v[len], not NUL-terminated)
 * against a source of size bytes. S3 takes exactly "bytes=first-last",
 * zero-based and inclusive, first <= last (no suffix, open-ended or
 * multiple ranges, unlike Range): anything else is InvalidArgument (*why:
 * S3's message); a well-formed range that does not lie inside the source
 * (last >= size) is InvalidRange. Never clamped: a copy is of exactly the
 * bytes asked for or fails. GW_S3_OK fills *first and *last. */
enum gw_s3_err gw_copy_source_range_parse(const char *v, size_t len, uint64_t size,
                                          uint64_t *first, uint64_t *last, const char **why);

#endif
