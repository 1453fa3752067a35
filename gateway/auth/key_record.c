/* Cluster key records (key_record.h): msgpack written with the packer and
 * read back with the object API after msg_msgpack_bounded(), every field
 * checked; the secret sealed with OpenSSL's AES-256-GCM. */
#include "key_record.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <msgpack.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "cn/alloc.h"
#include "cn/hex.h"
#include "msg/msg.h"

#define GW_KEY_RECORD_VERSION 1
#define GW_KEY_RECORD_VERSION_LIMITS 2   /* a restricted key: "allow", "create_bucket" */
/* The AAD's room: label, AKID, owner, then a restricted key's limits. */
#define GW_KEY_AAD_MAX (16 + 2 + GW_KEY_AKID_MAX + GW_KEY_OWNER_MAX + 2 + \
                        GW_KEY_ALLOW_MAX * (GW_KEY_BUCKET_MAX + 2))

/* ---- field rules (credentials.c's) ------------------------------------- */

static int gw_key_chars(const char *s, size_t n, size_t min, size_t max, int (*ok)(char))
{
    if (n < min || n > max)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!ok(s[i]))
            return 0;
    return 1;
}

static int gw_key_akid_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-' || c == '+' || c == '/' || c == '=';
}

static int gw_key_owner_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
}

static int gw_key_secret_char(char c)
{
    return c > ' ' && c < 0x7f;
}

static int gw_key_name_char(char c)
{
    return (unsigned char)c >= ' ' && c != 0x7f;
}

int gw_key_akid_ok(const char *s, size_t n)
{
    return gw_key_chars(s, n, 3, GW_KEY_AKID_MAX, gw_key_akid_char);
}

int gw_key_owner_ok(const char *s, size_t n)
{
    return gw_key_chars(s, n, 1, GW_KEY_OWNER_MAX, gw_key_owner_char);
}

int gw_key_name_ok(const char *s, size_t n)
{
    /* a trailing blank would be trimmed by the file format: refuse it here too */
    return gw_key_chars(s, n, 1, GW_KEY_NAME_MAX, gw_key_name_char) && s[0] != ' ' &&
           s[n - 1] != ' ';
}

int gw_key_secret_ok(const char *s, size_t n)
{
    return gw_key_chars(s, n, 1, GW_KEY_SECRET_MAX, gw_key_secret_char);
}

int gw_key_bucket_ok(const char *s, size_t n)
{
    if (n < 3 || n > GW_KEY_BUCKET_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && !((c == '.' || c == '-') && i > 0 && i + 1 < n))
            return 0;
    }
    return 1;
}

static int gw_key_bucket_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    int r = memcmp(a, b, an < bn ? an : bn);
    return r != 0 ? r : (an > bn) - (an < bn);
}

const struct gw_key_allow *gw_key_limits_find(const struct gw_key_limits *l, const char *bucket,
                                              size_t blen)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = gw_key_bucket_cmp(bucket, blen, l->v[mid].bucket, l->v[mid].bucket_len);
        if (r == 0)
            return &l->v[mid];
        if (r < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

int gw_key_limits_set(struct gw_key_limits *l, const char *bucket, size_t blen, unsigned rights)
{
    if (!gw_key_bucket_ok(bucket, blen) || (rights & ~GW_KEY_RIGHTS_ALL) != 0)
        return CN_INVAL;
    uint32_t i = 0;
    while (i < l->n && gw_key_bucket_cmp(l->v[i].bucket, l->v[i].bucket_len, bucket, blen) < 0)
        i++;
    int here = i < l->n && l->v[i].bucket_len == blen && memcmp(l->v[i].bucket, bucket, blen) == 0;
    if (rights == 0) {
        if (here) {
            memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(l->v[0]));
            l->n--;
        }
        return CN_OK;
    }
    if (!here) {
        if (l->n == GW_KEY_ALLOW_MAX)
            return CN_TOOBIG;
        memmove(&l->v[i + 1], &l->v[i], (l->n - i) * sizeof(l->v[0]));
        l->n++;
        memset(&l->v[i], 0, sizeof(l->v[i]));
        memcpy(l->v[i].bucket, bucket, blen);
        l->v[i].bucket_len = (unsigned char)blen;
    }
    l->v[i].rights = (unsigned char)rights;
    return CN_OK;
}

/* ---- master key --------------------------------------------------------- */

static int gw_key_b64_val(int c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

/* 44 chars of base64 (one '=' of padding) into 32 bytes; CN_OK or CN_INVAL. */
static int gw_key_b64_32(const char *s, size_t n, unsigned char out[32])
{
    if (n != 44 || s[43] != '=')
        return CN_INVAL;
    uint32_t acc = 0;
    int bits = 0;
    size_t o = 0;
    for (size_t i = 0; i < 43; i++) {
        int v = gw_key_b64_val((unsigned char)s[i]);
        if (v < 0)
            return CN_INVAL;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o < 32)
                out[o++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    return o == 32 && acc == 0 ? CN_OK : CN_INVAL;
}

int gw_key_master_load(const char *path, unsigned char key[GW_KEY_MASTER_LEN],
                       char err[CN_ERR_LEN])
{
    char buf[256];
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, CN_ERR_LEN, "master key file %s: %s", path, strerror(errno));
        return CN_IO;
    }
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    const char *p = buf, *e = buf + n;
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
        e--;
    size_t len = (size_t)(e - p);
    int rc = CN_INVAL;
    if (n < sizeof(buf) && len == 2 * GW_KEY_MASTER_LEN && cn_hex_is(p, len))
        rc = cn_hex_decode(p, len, key, GW_KEY_MASTER_LEN) == CN_OK ? CN_OK : CN_INVAL;
    else if (n < sizeof(buf))
        rc = gw_key_b64_32(p, len, key);
    OPENSSL_cleanse(buf, sizeof(buf));
    if (rc != CN_OK) {
        OPENSSL_cleanse(key, GW_KEY_MASTER_LEN);
        snprintf(err, CN_ERR_LEN, "master key file %s: want 32 bytes as 64 hex digits or "
                 "44 characters of base64", path);
    }
    return rc;
}

/* ---- generation ---------------------------------------------------------- */

/* n characters of alphabet (size m <= 64) without bias: bytes at or above
 * the largest multiple of m are drawn again. */
static int gw_key_random_chars(char *out, size_t n, const char *alphabet, unsigned m)
{
    unsigned limit = 256 - 256 % m;
    size_t o = 0;
    while (o < n) {
        unsigned char b[64];
        if (RAND_bytes(b, sizeof(b)) != 1)
            return CN_ERR;
        for (size_t i = 0; i < sizeof(b) && o < n; i++)
            if (b[i] < limit)
                out[o++] = alphabet[b[i] % m];
        OPENSSL_cleanse(b, sizeof(b));
    }
    return CN_OK;
}

int gw_key_generate(char akid[GW_KEY_AKID_LEN + 1], char secret[GW_KEY_SECRET_LEN + 1])
{
    static const char upper[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    memcpy(akid, "AKIA", 4);
    if (gw_key_random_chars(akid + 4, GW_KEY_AKID_LEN - 4, upper, 36) != CN_OK ||
        gw_key_random_chars(secret, GW_KEY_SECRET_LEN, b64, 64) != CN_OK)
        return CN_ERR;
    akid[GW_KEY_AKID_LEN] = '\0';
    secret[GW_KEY_SECRET_LEN] = '\0';
    return CN_OK;
}

/* ---- AES-256-GCM ---------------------------------------------------------- */

/* The AAD: a label, the AKID and the owner, each length-prefixed; for a
 * restricted key ("cairn-key-v2") then the create flag, the count and each
 * allowed bucket (length-prefixed) with its rights, in the list's order. */
static size_t gw_key_aad(const struct gw_key_record *k, unsigned char *out)
{
    const char *label = k->restricted ? "cairn-key-v2" : "cairn-key-v1";
    size_t n = 0, ol = strlen(k->owner);
    memcpy(out, label, 12);
    n += 12;
    out[n++] = (unsigned char)k->akid_len;
    memcpy(out + n, k->akid, k->akid_len);
    n += k->akid_len;
    out[n++] = (unsigned char)ol;
    memcpy(out + n, k->owner, ol);
    n += ol;
    if (!k->restricted)
        return n;
    out[n++] = (unsigned char)(k->limits.create_bucket != 0);
    out[n++] = (unsigned char)k->limits.n;
    for (uint32_t i = 0; i < k->limits.n; i++) {
        const struct gw_key_allow *a = &k->limits.v[i];
        out[n++] = a->bucket_len;
        memcpy(out + n, a->bucket, a->bucket_len);
        n += a->bucket_len;
        out[n++] = a->rights;
    }
    return n;
}

/* enc 1: seals in (n bytes) into out and fills tag; enc 0: opens in into
 * out with tag. CN_OK or CN_CORRUPT (open: the tag does not verify) / CN_ERR. */
static int gw_key_gcm(int enc, const struct gw_key_record *k, const unsigned char mk[32],
                      const unsigned char *in, size_t n, unsigned char *out,
                      unsigned char tag[GW_KEY_TAG_LEN])
{
    unsigned char aad[GW_KEY_AAD_MAX];
    size_t aad_len = gw_key_aad(k, aad);
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int len = 0, ok = c != NULL &&
        EVP_CipherInit_ex(c, EVP_aes_256_gcm(), NULL, NULL, NULL, enc) == 1 &&
        EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, GW_KEY_NONCE_LEN, NULL) == 1 &&
        EVP_CipherInit_ex(c, NULL, NULL, mk, k->nonce, enc) == 1 &&
        EVP_CipherUpdate(c, NULL, &len, aad, (int)aad_len) == 1 &&
        EVP_CipherUpdate(c, out, &len, in, (int)n) == 1 && (size_t)len == n;
    if (ok && !enc)
        ok = EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, GW_KEY_TAG_LEN, tag) == 1;
    int rc = CN_ERR;
    if (ok) {
        int fin = EVP_CipherFinal_ex(c, out + len, &len);
        if (enc)
            rc = fin == 1 && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, GW_KEY_TAG_LEN,
                                                 tag) == 1 ? CN_OK : CN_ERR;
        else
            rc = fin == 1 ? CN_OK : CN_CORRUPT;
    }
    EVP_CIPHER_CTX_free(c);
    return rc;
}

/* ---- encode ---------------------------------------------------------------- */

static void gw_key_pack_str(msgpack_packer *pk, const char *k, const char *v, size_t n)
{
    msgpack_pack_str_with_body(pk, k, strlen(k));
    msgpack_pack_str_with_body(pk, v, n);
}

static void gw_key_pack_bin(msgpack_packer *pk, const char *k, const void *v, size_t n)
{
    msgpack_pack_str_with_body(pk, k, strlen(k));
    msgpack_pack_bin_with_body(pk, v, n);
}

/* Whether l keeps its invariants: n in bounds, names valid and ascending,
 * rights 1..7. */
static int gw_key_limits_ok(const struct gw_key_limits *l)
{
    if (l->n > GW_KEY_ALLOW_MAX)
        return 0;
    for (uint32_t i = 0; i < l->n; i++) {
        const struct gw_key_allow *a = &l->v[i];
        if (a->bucket_len > GW_KEY_BUCKET_MAX || !gw_key_bucket_ok(a->bucket, a->bucket_len) ||
            a->rights == 0 || (a->rights & ~GW_KEY_RIGHTS_ALL) != 0)
            return 0;
        if (i > 0 && gw_key_bucket_cmp(l->v[i - 1].bucket, l->v[i - 1].bucket_len, a->bucket,
                                       a->bucket_len) >= 0)
            return 0;
    }
    return 1;
}

int gw_key_record_seal(const struct gw_key_record *k, const unsigned char mk[GW_KEY_MASTER_LEN],
                       char **out, size_t *len, char err[CN_ERR_LEN])
{
    *out = NULL;
    *len = 0;
    if (k->akid_len != strlen(k->akid) || !gw_key_akid_ok(k->akid, k->akid_len) ||
        !gw_key_owner_ok(k->owner, strlen(k->owner)) ||
        !gw_key_name_ok(k->name, strlen(k->name)) ||
        !gw_key_secret_ok(k->secret, k->secret_len) ||
        (k->restricted && !gw_key_limits_ok(&k->limits))) {
        snprintf(err, CN_ERR_LEN, "a field of the key breaks its rule (docs/operations.md)");
        return CN_INVAL;
    }
    struct gw_key_record s = *k;
    unsigned char ct[GW_KEY_SECRET_MAX];
    int rc = RAND_bytes(s.nonce, sizeof(s.nonce)) == 1 ? CN_OK : CN_ERR;
    if (rc == CN_OK)
        rc = gw_key_gcm(1, &s, mk, (const unsigned char *)k->secret, k->secret_len, ct, s.tag);
    gw_key_record_wipe(&s);
    if (rc != CN_OK) {
        snprintf(err, CN_ERR_LEN, "AES-256-GCM sealing failed");
        OPENSSL_cleanse(ct, sizeof(ct));
        return CN_ERR;
    }
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, k->restricted ? 10 : 8);
    msgpack_pack_str_with_body(&pk, "v", 1);
    msgpack_pack_uint32(&pk, k->restricted ? GW_KEY_RECORD_VERSION_LIMITS
                                           : GW_KEY_RECORD_VERSION);
    gw_key_pack_str(&pk, "akid", k->akid, k->akid_len);
    gw_key_pack_str(&pk, "owner", k->owner, strlen(k->owner));
    gw_key_pack_str(&pk, "name", k->name, strlen(k->name));
    msgpack_pack_str_with_body(&pk, "created_us", 10);
    msgpack_pack_uint64(&pk, k->created_us);
    gw_key_pack_bin(&pk, "nonce", s.nonce, GW_KEY_NONCE_LEN);
    gw_key_pack_bin(&pk, "tag", s.tag, GW_KEY_TAG_LEN);
    gw_key_pack_bin(&pk, "sealed", ct, k->secret_len);
    OPENSSL_cleanse(ct, sizeof(ct));
    if (k->restricted) {
        msgpack_pack_str_with_body(&pk, "create_bucket", 13);
        if (k->limits.create_bucket)
            msgpack_pack_true(&pk);
        else
            msgpack_pack_false(&pk);
        msgpack_pack_str_with_body(&pk, "allow", 5);
        msgpack_pack_array(&pk, k->limits.n);
        for (uint32_t i = 0; i < k->limits.n; i++) {
            msgpack_pack_array(&pk, 2);
            msgpack_pack_str_with_body(&pk, k->limits.v[i].bucket, k->limits.v[i].bucket_len);
            msgpack_pack_uint32(&pk, k->limits.v[i].rights);
        }
    }
    *out = cn_memdup(sb.data, sb.size);
    *len = sb.size;
    msgpack_sbuffer_destroy(&sb);
    return CN_OK;
}

/* ---- decode ---------------------------------------------------------------- */

static int gw_key_key_is(const msgpack_object *k, const char *name)
{
    size_t n = strlen(name);
    return k->via.str.size == n && memcmp(k->via.str.ptr, name, n) == 0;
}

/* A str value into dst (cap bytes with the NUL) when ok() holds. */
static int gw_key_take_str(const msgpack_object *v, char *dst, size_t cap,
                           int (*ok)(const char *, size_t))
{
    if (v->type != MSGPACK_OBJECT_STR || v->via.str.size >= cap ||
        !ok(v->via.str.ptr, v->via.str.size))
        return CN_CORRUPT;
    memcpy(dst, v->via.str.ptr, v->via.str.size);
    dst[v->via.str.size] = '\0';
    return CN_OK;
}

/* A bin value of length min..max into dst. */
static int gw_key_take_bin(const msgpack_object *v, unsigned char *dst, size_t min, size_t max,
                           size_t *n)
{
    if (v->type != MSGPACK_OBJECT_BIN || v->via.bin.size < min || v->via.bin.size > max)
        return CN_CORRUPT;
    memcpy(dst, v->via.bin.ptr, v->via.bin.size);
    if (n != NULL)
        *n = v->via.bin.size;
    return CN_OK;
}

#define GW_KEY_SEEN_ALL 0xffu
#define GW_KEY_SEEN_CREATE 0x100u
#define GW_KEY_SEEN_ALLOW 0x200u

/* "allow": an array of [bucket, rights], buckets ascending. */
static int gw_key_take_allow(const msgpack_object *v, struct gw_key_limits *l)
{
    if (v->type != MSGPACK_OBJECT_ARRAY || v->via.array.size > GW_KEY_ALLOW_MAX)
        return CN_CORRUPT;
    l->n = 0;
    for (uint32_t i = 0; i < v->via.array.size; i++) {
        const msgpack_object *e = &v->via.array.ptr[i];
        if (e->type != MSGPACK_OBJECT_ARRAY || e->via.array.size != 2)
            return CN_CORRUPT;
        const msgpack_object *b = &e->via.array.ptr[0], *r = &e->via.array.ptr[1];
        if (b->type != MSGPACK_OBJECT_STR || b->via.str.size > GW_KEY_BUCKET_MAX ||
            !gw_key_bucket_ok(b->via.str.ptr, b->via.str.size) ||
            r->type != MSGPACK_OBJECT_POSITIVE_INTEGER || r->via.u64 == 0 ||
            r->via.u64 > GW_KEY_RIGHTS_ALL)
            return CN_CORRUPT;
        struct gw_key_allow *a = &l->v[l->n];
        if (l->n > 0 && gw_key_bucket_cmp(l->v[l->n - 1].bucket, l->v[l->n - 1].bucket_len,
                                          b->via.str.ptr, b->via.str.size) >= 0)
            return CN_CORRUPT;   /* unsorted or a duplicate */
        memset(a, 0, sizeof(*a));
        memcpy(a->bucket, b->via.str.ptr, b->via.str.size);
        a->bucket_len = (unsigned char)b->via.str.size;
        a->rights = (unsigned char)r->via.u64;
        l->n++;
    }
    return CN_OK;
}

/* One field of the map; seen gets its bit. Unknown keys are skipped. */
static int gw_key_decode_field(struct gw_key_record *k, const msgpack_object_kv *kv,
                               unsigned *seen)
{
    const msgpack_object *key = &kv->key, *v = &kv->val;
    if (key->type != MSGPACK_OBJECT_STR)
        return CN_CORRUPT;
    if (gw_key_key_is(key, "v")) {
        *seen |= 1u;
        if (v->type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
            (v->via.u64 != GW_KEY_RECORD_VERSION && v->via.u64 != GW_KEY_RECORD_VERSION_LIMITS))
            return CN_CORRUPT;
        k->restricted = v->via.u64 == GW_KEY_RECORD_VERSION_LIMITS;
        return CN_OK;
    }
    if (gw_key_key_is(key, "create_bucket")) {
        *seen |= GW_KEY_SEEN_CREATE;
        if (v->type != MSGPACK_OBJECT_BOOLEAN)
            return CN_CORRUPT;
        k->limits.create_bucket = v->via.boolean;
        return CN_OK;
    }
    if (gw_key_key_is(key, "allow")) {
        *seen |= GW_KEY_SEEN_ALLOW;
        return gw_key_take_allow(v, &k->limits);
    }
    if (gw_key_key_is(key, "akid")) {
        *seen |= 2u;
        return gw_key_take_str(v, k->akid, sizeof(k->akid), gw_key_akid_ok);
    }
    if (gw_key_key_is(key, "owner")) {
        *seen |= 4u;
        return gw_key_take_str(v, k->owner, sizeof(k->owner), gw_key_owner_ok);
    }
    if (gw_key_key_is(key, "name")) {
        *seen |= 8u;
        return gw_key_take_str(v, k->name, sizeof(k->name), gw_key_name_ok);
    }
    if (gw_key_key_is(key, "created_us")) {
        *seen |= 16u;
        if (v->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
            return CN_CORRUPT;
        k->created_us = v->via.u64;
        return CN_OK;
    }
    if (gw_key_key_is(key, "nonce")) {
        *seen |= 32u;
        return gw_key_take_bin(v, k->nonce, GW_KEY_NONCE_LEN, GW_KEY_NONCE_LEN, NULL);
    }
    if (gw_key_key_is(key, "tag")) {
        *seen |= 64u;
        return gw_key_take_bin(v, k->tag, GW_KEY_TAG_LEN, GW_KEY_TAG_LEN, NULL);
    }
    if (gw_key_key_is(key, "sealed")) {
        *seen |= 128u;
        return gw_key_take_bin(v, k->sealed, 1, GW_KEY_SECRET_MAX, &k->sealed_len);
    }
    return CN_OK;
}

int gw_key_record_decode(struct gw_key_record *k, const void *data, size_t len,
                         const char *akid, size_t akid_len, char err[CN_ERR_LEN])
{
    memset(k, 0, sizeof(*k));
    if (len == 0 || len > GW_KEY_RECORD_MAX || msg_msgpack_bounded(data, len) != CN_OK) {
        snprintf(err, CN_ERR_LEN, "key record: %zu bytes, not bounded msgpack", len);
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
            rc = gw_key_decode_field(k, &up.data.via.map.ptr[i], &seen);
    }
    msgpack_unpacked_destroy(&up);
    /* a version 2 record has both limit fields, a version 1 record neither */
    unsigned want = GW_KEY_SEEN_ALL | (k->restricted ? GW_KEY_SEEN_CREATE | GW_KEY_SEEN_ALLOW : 0);
    if (rc == CN_OK && seen != want)
        rc = CN_CORRUPT;
    k->akid_len = strlen(k->akid);
    if (rc == CN_OK && (k->akid_len != akid_len || memcmp(k->akid, akid, akid_len) != 0))
        rc = CN_CORRUPT;
    if (rc != CN_OK) {
        gw_key_record_wipe(k);
        snprintf(err, CN_ERR_LEN, "key record: a field is missing, malformed or names "
                 "another key");
    }
    return rc;
}

int gw_key_record_open(struct gw_key_record *k, const unsigned char mk[GW_KEY_MASTER_LEN],
                       char err[CN_ERR_LEN])
{
    k->secret_len = 0;
    int rc = gw_key_gcm(0, k, mk, k->sealed, k->sealed_len, (unsigned char *)k->secret, k->tag);
    if (rc == CN_OK && !gw_key_secret_ok(k->secret, k->sealed_len))
        rc = CN_CORRUPT;
    if (rc != CN_OK) {
        OPENSSL_cleanse(k->secret, sizeof(k->secret));
        snprintf(err, CN_ERR_LEN, "key %s: the secret does not open under this master key "
                 "(another master key, or changed bytes)", k->akid);
        return CN_CORRUPT;
    }
    k->secret_len = k->sealed_len;
    k->secret[k->secret_len] = '\0';
    return CN_OK;
}

void gw_key_record_wipe(struct gw_key_record *k)
{
    OPENSSL_cleanse(k->secret, sizeof(k->secret));
    OPENSSL_cleanse(k->sealed, sizeof(k->sealed));
    k->secret_len = 0;
}
