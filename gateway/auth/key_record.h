/* Access keys kept in the cluster (docs/gateway.md, docs/security.md): one
 * system record per key, "s/keys/" AKID, whose data is a msgpack map with
 * the owner account, a display name, the creation time and the secret
 * sealed with AES-256-GCM under the cluster master key (a random 96-bit
 * nonce per record; the AAD binds the AKID and the owner, so a node cannot
 * move a sealed secret to another key or account). Revocation is the
 * record's tombstone. Nodes store only ciphertext; gateways and
 * cairn-admin hold the master key (s3.master_key_file). This module is the
 * codec and the cryptography, shared by the gateway and cairn-admin; it
 * does no I/O except gw_key_master_load().
 *
 * A restricted key (Garage's per-key permissions, `cairn-admin key allow`)
 * is a version 2 record: it adds "create_bucket" (bool) and "allow" (an
 * array of [bucket, rights] in ascending bucket order, at most
 * GW_KEY_ALLOW_MAX), and its AAD covers them too, so a node cannot widen a
 * key by editing its list. A gateway that knows only version 1 refuses a
 * version 2 record (the key fails closed there, never open). */
#ifndef GW_KEY_RECORD_H
#define GW_KEY_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "cn/rc.h"

#define GW_KEY_PREFIX "s/keys/"
#define GW_KEY_PREFIX_LEN 7
#define GW_KEY_MASTER_LEN 32
#define GW_KEY_AKID_LEN 20        /* what key create makes: "AKIA" + 16 [A-Z0-9] */
#define GW_KEY_SECRET_LEN 40      /* what key create makes: 40 of [A-Za-z0-9+/] */
#define GW_KEY_AKID_MAX 128       /* what a record may name (credentials.h's rule) */
#define GW_KEY_SECRET_MAX 128
#define GW_KEY_OWNER_MAX 64
#define GW_KEY_NAME_MAX 64
#define GW_KEY_NONCE_LEN 12
#define GW_KEY_TAG_LEN 16
/* The largest record data accepted: the fields above with msgpack's framing
 * fit in well under this; anything longer is refused unread. */
#define GW_KEY_RECORD_MAX 4096

/* Per-key restrictions: the rights a key keeps on a listed bucket. */
#define GW_KEY_ALLOW_MAX 32
#define GW_KEY_BUCKET_MAX 63
#define GW_KEY_RIGHT_READ 1u    /* GET/HEAD objects, list, location, versioning */
#define GW_KEY_RIGHT_WRITE 2u   /* PUT/DELETE objects, multipart, object tags */
#define GW_KEY_RIGHT_OWNER 4u   /* every other bucket operation (ACLs, policy, config, delete) */
#define GW_KEY_RIGHTS_ALL 7u

struct gw_key_allow {
    char bucket[GW_KEY_BUCKET_MAX + 1];   /* NUL-terminated */
    unsigned char bucket_len;
    unsigned char rights;                 /* GW_KEY_RIGHT_*, at least one */
};

/* What a restricted key may still do (its account's rights are the ceiling:
 * access.c decides both and takes the narrower). Sorted by bucket, no
 * duplicate; n may be 0 (the key may touch no bucket). About 2.1 KiB. */
struct gw_key_limits {
    int create_bucket;                    /* may CreateBucket */
    uint32_t n;
    struct gw_key_allow v[GW_KEY_ALLOW_MAX];
};

/* One key. Strings are NUL-terminated copies. After gw_key_record_decode()
 * the secret is still sealed (sealed/nonce/tag hold it and secret_len is
 * 0); gw_key_record_open() fills secret. Wipe with gw_key_record_wipe(). */
struct gw_key_record {
    char akid[GW_KEY_AKID_MAX + 1];
    size_t akid_len;
    char owner[GW_KEY_OWNER_MAX + 1];
    char name[GW_KEY_NAME_MAX + 1];
    uint64_t created_us;
    char secret[GW_KEY_SECRET_MAX + 1];
    size_t secret_len;
    unsigned char nonce[GW_KEY_NONCE_LEN];
    unsigned char tag[GW_KEY_TAG_LEN];
    unsigned char sealed[GW_KEY_SECRET_MAX];
    size_t sealed_len;
    int restricted;                       /* limits apply (a version 2 record) */
    struct gw_key_limits limits;
};

/* Reads the master key file: 64 hex digits or 44 characters of base64
 * (32 bytes), surrounding white space ignored. CN_OK, or CN_IO / CN_INVAL
 * with err (naming the file, never its bytes); key is wiped on error. */
int gw_key_master_load(const char *path, unsigned char key[GW_KEY_MASTER_LEN],
                       char err[CN_ERR_LEN]);

/* Makes a new AKID (GW_KEY_AKID_LEN chars + NUL) and secret
 * (GW_KEY_SECRET_LEN chars + NUL) from RAND_bytes. CN_OK or CN_ERR. */
int gw_key_generate(char akid[GW_KEY_AKID_LEN + 1], char secret[GW_KEY_SECRET_LEN + 1]);

/* Whether the fields follow credentials.h's rules (the same characters a
 * file key may use), so a cluster key is always a valid credential. */
int gw_key_akid_ok(const char *s, size_t n);
int gw_key_owner_ok(const char *s, size_t n);
int gw_key_name_ok(const char *s, size_t n);
int gw_key_secret_ok(const char *s, size_t n);

/* Whether s[n] may name a bucket in an allow list: S3's bucket name rule
 * (3..63 of [a-z0-9.-], starting and ending with a letter or digit). */
int gw_key_bucket_ok(const char *s, size_t n);

/* The entry of bucket[blen] in l, or NULL (exact bytes: a name in another
 * case or encoding is another name). */
const struct gw_key_allow *gw_key_limits_find(const struct gw_key_limits *l, const char *bucket,
                                              size_t blen);
/* Sets bucket's rights in l (rights 0 removes it), keeping l sorted. CN_OK,
 * CN_INVAL (a bad name or rights), CN_TOOBIG (GW_KEY_ALLOW_MAX buckets already). */
int gw_key_limits_set(struct gw_key_limits *l, const char *bucket, size_t blen, unsigned rights);

/* Seals k's secret under mk and encodes the record's data. *out is cn_malloc'd
 * (the caller frees it). CN_OK, or CN_INVAL (a field breaks its rule) /
 * CN_ERR (OpenSSL failed) with err; *out is then NULL. */
int gw_key_record_seal(const struct gw_key_record *k, const unsigned char mk[GW_KEY_MASTER_LEN],
                       char **out, size_t *len, char err[CN_ERR_LEN]);

/* Parses a record's data (outside input: length, msgpack bounds, every
 * field's type and rule checked; unknown fields are skipped) for the key
 * akid (the part of the storage key after the prefix, which the record must
 * repeat). Fills k with the secret still sealed. CN_OK or CN_CORRUPT with err. */
int gw_key_record_decode(struct gw_key_record *k, const void *data, size_t len,
                         const char *akid, size_t akid_len, char err[CN_ERR_LEN]);

/* Opens k's sealed secret with mk into k->secret. CN_OK, or CN_CORRUPT
 * (the tag does not verify: a wrong master key or changed bytes; or the
 * opened secret breaks its rule) with err; k->secret is then empty. */
int gw_key_record_open(struct gw_key_record *k, const unsigned char mk[GW_KEY_MASTER_LEN],
                       char err[CN_ERR_LEN]);

/* Wipes the secret and sealed bytes of k. */
void gw_key_record_wipe(struct gw_key_record *k);

#endif
