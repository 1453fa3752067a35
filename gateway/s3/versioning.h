/* S3 object versioning, the pure part: the bucket's state as stored in its
 * "versioning" configuration (bucket_meta.h), the body of
 * PutBucketVersioning, version ids and the storage keys of versions
 * (docs/gateway.md, "Versioning"). No I/O: s3_versions.c does the requests.
 *
 * Version key: "v/" bucket "/" key NUL suffix, where suffix is the version
 * id (32 lower-case hex: 16 of ~ts, then 16 random) or, for the null
 * version, 16 hex of ~ts then "null". ~ts makes the node's byte order list
 * the versions of one key newest first; NUL never occurs in a key, so the
 * versions of "a" sort before any key that starts with "a/". */
#ifndef GW_VERSIONING_H
#define GW_VERSIONING_H

#include <stddef.h>
#include <stdint.h>

#include "s3_error.h"

enum gw_versioning_state {
    GW_VERSIONING_OFF = 0,      /* never enabled: objects are the null version, alone */
    GW_VERSIONING_ENABLED,
    GW_VERSIONING_SUSPENDED,
};

/* The bucket_meta.h configuration that holds the state ("Enabled" or
 * "Suspended"; absent: never enabled). */
#define GW_VERSIONING_CFG "versioning"

#define GW_VERSIONING_ID_LEN 32          /* a version id, not counting "null" */
#define GW_VERSIONING_ID_MAX 33          /* with its NUL */
/* "v/" + 63 + "/" + 1024 + NUL + 32 */
#define GW_VERSIONING_KEY_MAX (2 + 63 + 1 + 1024 + 1 + GW_VERSIONING_ID_LEN)
#define GW_VERSIONING_XML_MAX_BYTES 4096

/* The state a stored configuration value[len] (NULL: none) stands for;
 * anything else is taken as OFF. */
enum gw_versioning_state gw_versioning_state_of(const void *value, size_t len);
/* The stored form of a state ("Enabled", "Suspended"; NULL for OFF). */
const char *gw_versioning_state_str(enum gw_versioning_state s);

/* Parses a PutBucketVersioning body: <VersioningConfiguration><Status>
 * Enabled|Suspended</Status>[<MfaDelete>Disabled|Enabled</MfaDelete>]
 * </VersioningConfiguration>. An absent Status leaves *state OFF (the
 * caller keeps what is set). Errors: MalformedXML (bad XML, wrong root, a
 * Status or MfaDelete of another value, an element twice),
 * MaxMessageLengthExceeded; MfaDelete Enabled is NotImplemented (cairn has
 * no MFA devices; S3 asks for the x-amz-mfa header it could never check).
 * Returns GW_S3_OK or the error. */
enum gw_s3_err gw_versioning_parse_xml(const char *body, size_t len,
                                       enum gw_versioning_state *state);

/* A new version id for a version written at ts: ~ts and 64 random bits as
 * 32 lower-case hex, NUL-terminated into out. */
void gw_versioning_id_new(uint64_t ts, char out[GW_VERSIONING_ID_MAX]);

/* Checks a versionId from outside (query string, x-amz-copy-source):
 * exactly "null" (returns 1), or exactly GW_VERSIONING_ID_LEN lower-case hex
 * (returns 2). Anything else (other lengths, upper case, NUL): 0. */
int gw_versioning_id_check(const char *id, size_t len);

/* The ts a (checked, non-null) version id was made for. */
uint64_t gw_versioning_id_ts(const char *id);

/* The prefix of every version of bucket/key: "v/" bucket "/" key NUL.
 * Writes into out (GW_VERSIONING_KEY_MAX) and returns the length. */
size_t gw_versioning_key_prefix(char *out, const char *bucket, size_t bucket_len,
                                const char *key, size_t key_len);
/* The prefix of the versions of a bucket: "v/" bucket "/". */
size_t gw_versioning_bucket_prefix(char *out, const char *bucket, size_t bucket_len);
/* The key of a version: id a checked id, or "null" with ts (the null
 * version's time). */
size_t gw_versioning_key(char *out, const char *bucket, size_t bucket_len, const char *key,
                         size_t key_len, const char *id, uint64_t ts);

/* Splits a stored version key k[len] that begins with prefix_len bytes of
 * "v/" bucket "/": *key, *key_len: the object key; id: the version id
 * ("null" for the null version, NUL-terminated); *ts the version's time.
 * Returns 0, or -1 when k is not a version key this gateway wrote. */
int gw_versioning_key_split(const char *k, size_t len, size_t prefix_len, const char **key,
                            size_t *key_len, char id[GW_VERSIONING_ID_MAX], uint64_t *ts);

/* The gateway's own object-meta entry (objmeta.h) that holds the id of
 * the version a record is. */
#define GW_VERSIONING_META ":vid"

/* The etag field of a delete marker's record: empty (every object has an
 * MD5 etag, so no object record has an empty one). */
#define GW_VERSIONING_DM_ETAG ""

#endif
