/* Accounts kept in the cluster (docs/operations.md "Accounts"): one system
 * record per account, "s/accounts/" ID, whose data is a msgpack map {"v": 1,
 * "id", "name", "created_us", "state"}. An account is the owner id that
 * buckets, ACLs, grants and policies name; its keys (key_record.h) carry
 * the id as their owner, so a gateway learns an account through its keys.
 * The id is AWS's canonical-user form: 64 lowercase hex digits, random.
 * This module is the codec, shared by cairn-admin and the fuzz target; it
 * does no I/O. */
#ifndef GW_ACCOUNT_RECORD_H
#define GW_ACCOUNT_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "cn/rc.h"

#define GW_ACCOUNT_PREFIX "s/accounts/"
#define GW_ACCOUNT_PREFIX_LEN 11
#define GW_ACCOUNT_ID_LEN 64
#define GW_ACCOUNT_NAME_MAX 64
/* The largest record data accepted (the fields fit in well under it). */
#define GW_ACCOUNT_RECORD_MAX 512

/* One account; strings NUL-terminated. */
struct gw_account_record {
    char id[GW_ACCOUNT_ID_LEN + 1];
    char name[GW_ACCOUNT_NAME_MAX + 1];
    uint64_t created_us;
    char state[16];                 /* "active" (the one state today) */
};

/* A new random id (GW_ACCOUNT_ID_LEN hex digits + NUL). CN_OK or CN_ERR. */
int gw_account_id_new(char id[GW_ACCOUNT_ID_LEN + 1]);
/* Whether s[n] is an account id (64 of [0-9a-f]). */
int gw_account_id_ok(const char *s, size_t n);
/* Whether s[n] may name an account: 1..64 of [A-Za-z0-9._-] (as an owner
 * id, so a name is never ambiguous with a field separator anywhere). */
int gw_account_name_ok(const char *s, size_t n);

/* Encodes a's record data into *out (cn_malloc'd; the caller frees).
 * CN_OK, or CN_INVAL with err when a field breaks its rule (*out NULL). */
int gw_account_record_encode(const struct gw_account_record *a, char **out, size_t *len,
                             char err[CN_ERR_LEN]);

/* Parses a record's data (outside input: length, msgpack bounds, every
 * field's type and rule checked; unknown fields skipped) for the account id
 * (the part of the storage key after the prefix, which the record must
 * repeat). CN_OK or CN_CORRUPT with err (a zeroed). */
int gw_account_record_decode(struct gw_account_record *a, const void *data, size_t len,
                             const char *id, size_t id_len, char err[CN_ERR_LEN]);

#endif
