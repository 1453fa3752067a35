/* Account records (account_record.h): msgpack written with the packer and
 * read back with the object API after msg_msgpack_bounded(). */
#include "account_record.h"

#include <stdio.h>
#include <string.h>

#include <msgpack.h>
#include <openssl/rand.h>

#include "cn/alloc.h"
#include "msg/msg.h"

#define GW_ACCOUNT_RECORD_VERSION 1

int gw_account_id_ok(const char *s, size_t n)
{
    if (n != GW_ACCOUNT_ID_LEN)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

int gw_account_name_ok(const char *s, size_t n)
{
    if (n < 1 || n > GW_ACCOUNT_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

static int gw_account_state_ok(const char *s, size_t n)
{
    return n == 6 && memcmp(s, "active", 6) == 0;
}

int gw_account_id_new(char id[GW_ACCOUNT_ID_LEN + 1])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char b[GW_ACCOUNT_ID_LEN / 2];
    if (RAND_bytes(b, sizeof(b)) != 1)
        return CN_ERR;
    for (size_t i = 0; i < sizeof(b); i++) {
        id[2 * i] = hex[b[i] >> 4];
        id[2 * i + 1] = hex[b[i] & 15];
    }
    id[GW_ACCOUNT_ID_LEN] = '\0';
    return CN_OK;
}

int gw_account_record_encode(const struct gw_account_record *a, char **out, size_t *len,
                             char err[CN_ERR_LEN])
{
    *out = NULL;
    *len = 0;
    size_t il = strlen(a->id), nl = strlen(a->name), sl = strlen(a->state);
    if (!gw_account_id_ok(a->id, il) || !gw_account_name_ok(a->name, nl) ||
        !gw_account_state_ok(a->state, sl)) {
        snprintf(err, CN_ERR_LEN, "a field of the account breaks its rule (docs/operations.md)");
        return CN_INVAL;
    }
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 5);
    msgpack_pack_str_with_body(&pk, "v", 1);
    msgpack_pack_uint32(&pk, GW_ACCOUNT_RECORD_VERSION);
    msgpack_pack_str_with_body(&pk, "id", 2);
    msgpack_pack_str_with_body(&pk, a->id, il);
    msgpack_pack_str_with_body(&pk, "name", 4);
    msgpack_pack_str_with_body(&pk, a->name, nl);
    msgpack_pack_str_with_body(&pk, "created_us", 10);
    msgpack_pack_uint64(&pk, a->created_us);
    msgpack_pack_str_with_body(&pk, "state", 5);
    msgpack_pack_str_with_body(&pk, a->state, sl);
    *out = cn_memdup(sb.data, sb.size);
    *len = sb.size;
    msgpack_sbuffer_destroy(&sb);
    return CN_OK;
}

static int gw_account_key_is(const msgpack_object *k, const char *name)
{
    size_t n = strlen(name);
    return k->via.str.size == n && memcmp(k->via.str.ptr, name, n) == 0;
}

/* A str value into dst (cap bytes with the NUL) when ok() holds. */
static int gw_account_take_str(const msgpack_object *v, char *dst, size_t cap,
                               int (*ok)(const char *, size_t))
{
    if (v->type != MSGPACK_OBJECT_STR || v->via.str.size >= cap ||
        !ok(v->via.str.ptr, v->via.str.size))
        return CN_CORRUPT;
    memcpy(dst, v->via.str.ptr, v->via.str.size);
    dst[v->via.str.size] = '\0';
    return CN_OK;
}

/* One field of the map; seen gets its bit. Unknown keys are skipped. */
static int gw_account_decode_field(struct gw_account_record *a, const msgpack_object_kv *kv,
                                   unsigned *seen)
{
    const msgpack_object *key = &kv->key, *v = &kv->val;
    if (key->type != MSGPACK_OBJECT_STR)
        return CN_CORRUPT;
    if (gw_account_key_is(key, "v")) {
        *seen |= 1u;
        return v->type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
                       v->via.u64 == GW_ACCOUNT_RECORD_VERSION ? CN_OK : CN_CORRUPT;
    }
    if (gw_account_key_is(key, "id")) {
        *seen |= 2u;
        return gw_account_take_str(v, a->id, sizeof(a->id), gw_account_id_ok);
    }
    if (gw_account_key_is(key, "name")) {
        *seen |= 4u;
        return gw_account_take_str(v, a->name, sizeof(a->name), gw_account_name_ok);
    }
    if (gw_account_key_is(key, "created_us")) {
        *seen |= 8u;
        if (v->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
            return CN_CORRUPT;
        a->created_us = v->via.u64;
        return CN_OK;
    }
    if (gw_account_key_is(key, "state")) {
        *seen |= 16u;
        return gw_account_take_str(v, a->state, sizeof(a->state), gw_account_state_ok);
    }
    return CN_OK;
}

int gw_account_record_decode(struct gw_account_record *a, const void *data, size_t len,
                             const char *id, size_t id_len, char err[CN_ERR_LEN])
{
    memset(a, 0, sizeof(*a));
    if (len == 0 || len > GW_ACCOUNT_RECORD_MAX || msg_msgpack_bounded(data, len) != CN_OK) {
        snprintf(err, CN_ERR_LEN, "account record: %zu bytes, not bounded msgpack", len);
        return CN_CORRUPT;
    }
    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    int rc = CN_CORRUPT;
    unsigned seen = 0;
    if (msgpack_unpack_next(&up, data, len, &off) == MSGPACK_UNPACK_SUCCESS && off == len &&
        up.data.type == MSGPACK_OBJECT_MAP) {
        rc = CN_OK;
        for (uint32_t i = 0; i < up.data.via.map.size && rc == CN_OK; i++)
            rc = gw_account_decode_field(a, &up.data.via.map.ptr[i], &seen);
    }
    msgpack_unpacked_destroy(&up);
    if (rc == CN_OK && (seen != 31u || strlen(a->id) != id_len || memcmp(a->id, id, id_len) != 0))
        rc = CN_CORRUPT;
    if (rc != CN_OK) {
        memset(a, 0, sizeof(*a));
        snprintf(err, CN_ERR_LEN, "account record: a field is missing, malformed or names "
                 "another account");
    }
    return rc;
}
