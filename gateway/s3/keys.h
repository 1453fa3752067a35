/* The storage key layout of the S3 namespace (docs/gateway.md):
 *   "b/" bucket                 bucket record (owner field = owner id, the etag before
 *                               protocol version 3; meta = bucket_meta.h)
 *   "o/" bucket "/" key         object record (etag = hex MD5, meta = objmeta)
 * Large objects add "c/..." chunk records (lo_map.h), multipart uploads
 * "u/..." upload and "p/..." part records (multipart.h), system records
 * "s/..." (s/lifecycle, s/collector, s/keys/AKID: auth/key_record.h); none shares the
 * "o/" prefix, so listings (which ask for "o/" bucket "/" prefix) never see
 * them. */
#ifndef GW_KEYS_H
#define GW_KEYS_H

#include <stddef.h>

/* Longest storage key: "o/" + 63 + "/" + 1024. */
#define GW_KEYS_MAX (2 + 63 + 1 + 1024)

/* Each writes the storage key into out (GW_KEYS_MAX bytes at least) and
 * returns its length. */
size_t gw_keys_bucket(char *out, const char *bucket, size_t bucket_len);
size_t gw_keys_object(char *out, const char *bucket, size_t bucket_len, const char *key,
                      size_t key_len);
/* The prefix of every object record of a bucket ("o/" bucket "/"). */
size_t gw_keys_object_prefix(char *out, const char *bucket, size_t bucket_len);

#endif
