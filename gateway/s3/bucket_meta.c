/* Bucket-record meta (bucket_meta.h): a msgpack map written with the
 * packer, read back with msgpack's object API and every field checked, so a
 * record from a newer or broken writer is refused rather than half read. */
#include "bucket_meta.h"

#include <string.h>

#include <msgpack.h>

#include "msg/msg.h"
#include <openssl/rand.h>

#include "cn/alloc.h"
#include "cn/hlc.h"

struct gw_bucket_incarnation gw_bucket_incarnation_new(void)
{
    struct gw_bucket_incarnation inc = {.created_us = cn_hlc_now(cn_hlc_default())};
    unsigned char b[8];
    if (RAND_bytes(b, sizeof(b)) != 1)   /* the clock alone still tells incarnations apart */
        memset(b, 0, sizeof(b));
    memcpy(&inc.rnd, b, sizeof(b));
    return inc;
}

int gw_bucket_incarnation_eq(const struct gw_bucket_incarnation *a,
                             const struct gw_bucket_incarnation *b)
{
    return a->created_us == b->created_us && a->rnd == b->rnd;
}

/* ---- field checks ----------------------------------------------------- */

/* A region: [a-z0-9-], at most GW_BUCKET_META_REGION_MAX bytes. */
static int gw_bucket_meta_region_ok(const char *s, size_t n)
{
    if (n > GW_BUCKET_META_REGION_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return 0;
    return 1;
}

/* An owner id: 1..GW_BUCKET_META_OWNER_MAX visible ASCII bytes. */
static int gw_bucket_meta_owner_ok(const char *s, size_t n)
{
    if (n == 0 || n > GW_BUCKET_META_OWNER_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < 0x21 || s[i] > 0x7e)
            return 0;
    return 1;
}

/* A configuration name: 1..GW_BUCKET_META_NAME_MAX of [a-zA-Z0-9-]. */
static int gw_bucket_meta_name_ok(const char *s, size_t n)
{
    if (n == 0 || n > GW_BUCKET_META_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return 0;
    return 1;
}

static int gw_bucket_meta_key_is(const msgpack_object *k, const char *name)
{
    size_t n = strlen(name);
    return k->via.str.size == n && memcmp(k->via.str.ptr, name, n) == 0;
}

/* ---- decode ----------------------------------------------------------- */

/* Reads "inc": [created_us, rnd]. */
static int gw_bucket_meta_decode_inc(struct gw_bucket_meta *m, const msgpack_object *o)
{
    if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size != 2 ||
        o->via.array.ptr[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
        o->via.array.ptr[1].type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return CN_INVAL;
    m->inc.created_us = o->via.array.ptr[0].via.u64;
    m->inc.rnd = o->via.array.ptr[1].via.u64;
    return CN_OK;
}

/* Reads "cfg": {name: bin}; names valid and unique. */
static int gw_bucket_meta_decode_cfg(struct gw_bucket_meta *m, const msgpack_object *o)
{
    if (o->type != MSGPACK_OBJECT_MAP || o->via.map.size > GW_BUCKET_META_MAX_CONFIGS)
        return CN_INVAL;
    for (uint32_t i = 0; i < o->via.map.size; i++) {
        const msgpack_object_kv *kv = &o->via.map.ptr[i];
        if (kv->key.type != MSGPACK_OBJECT_STR || kv->val.type != MSGPACK_OBJECT_BIN ||
            !gw_bucket_meta_name_ok(kv->key.via.str.ptr, kv->key.via.str.size))
            return CN_INVAL;
        for (size_t j = 0; j < m->n_configs; j++)
            if (m->configs[j].name_len == kv->key.via.str.size &&
                memcmp(m->configs[j].name, kv->key.via.str.ptr, kv->key.via.str.size) == 0)
                return CN_INVAL;
        m->configs[m->n_configs++] = (struct gw_bucket_meta_config){
            kv->key.via.str.ptr, kv->key.via.str.size, kv->val.via.bin.ptr, kv->val.via.bin.size};
    }
    return CN_OK;
}

/* One key of the root map; *seen has one bit per key, so each is read once. */
static int gw_bucket_meta_decode_field(struct gw_bucket_meta *m, const msgpack_object_kv *kv,
                                       unsigned *seen)
{
    static const char *const keys[] = {"v", "region", "owner", "inc", "cfg"};
    if (kv->key.type != MSGPACK_OBJECT_STR)
        return CN_INVAL;
    unsigned i = 0;
    while (i < CN_ARRAY_LEN(keys) && !gw_bucket_meta_key_is(&kv->key, keys[i]))
        i++;
    if (i == CN_ARRAY_LEN(keys) || (*seen & (1u << i)))
        return CN_INVAL;
    *seen |= 1u << i;
    const msgpack_object *v = &kv->val;
    switch (i) {
    case 0:
        return v->type == MSGPACK_OBJECT_POSITIVE_INTEGER && v->via.u64 == GW_BUCKET_META_VERSION
                   ? CN_OK
                   : CN_INVAL;
    case 1:
    case 2:
        if (v->type != MSGPACK_OBJECT_STR)
            return CN_INVAL;
        if (i == 1) {
            m->region = v->via.str.ptr;
            m->region_len = v->via.str.size;
            return m->region_len > 0 && gw_bucket_meta_region_ok(m->region, m->region_len)
                       ? CN_OK
                       : CN_INVAL;
        }
        m->owner = v->via.str.ptr;
        m->owner_len = v->via.str.size;
        return gw_bucket_meta_owner_ok(m->owner, m->owner_len) ? CN_OK : CN_INVAL;
    case 3:
        return gw_bucket_meta_decode_inc(m, v);
    default:
        return gw_bucket_meta_decode_cfg(m, v);
    }
}

/* The map form; m is zeroed by the caller. */
static int gw_bucket_meta_decode_map(struct gw_bucket_meta *m, const void *meta, size_t len)
{
    /* str and bin objects point into meta; only the map and array cells
     * live in the zone, which goes before returning */
    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    int rc = CN_INVAL;
    unsigned seen = 0;
    if (msg_msgpack_bounded(meta, len) == CN_OK &&
        msgpack_unpack_next(&up, meta, len, &off) == MSGPACK_UNPACK_SUCCESS && off == len &&
        up.data.type == MSGPACK_OBJECT_MAP) {
        rc = CN_OK;
        for (uint32_t i = 0; i < up.data.via.map.size && rc == CN_OK; i++)
            rc = gw_bucket_meta_decode_field(m, &up.data.via.map.ptr[i], &seen);
        if (rc == CN_OK && seen != 0x1fu)
            rc = CN_INVAL;   /* a key is missing */
    }
    msgpack_unpacked_destroy(&up);
    return rc;
}

int gw_bucket_meta_decode(struct gw_bucket_meta *m, const void *meta, size_t meta_len,
                          const char *etag, size_t etag_len)
{
    memset(m, 0, sizeof(*m));
    int rc = CN_INVAL;
    if (!gw_bucket_meta_owner_ok(etag, etag_len)) {
        rc = CN_INVAL;
    } else if (gw_bucket_meta_region_ok(meta, meta_len)) {
        /* a region holds no byte that starts a msgpack map (0x80 and up) */
        m->region = meta_len > 0 ? meta : "";
        m->region_len = meta_len;
        m->owner = etag;
        m->owner_len = etag_len;
        m->legacy = 1;
        rc = CN_OK;
    } else if (meta_len <= GW_BUCKET_META_MAX_LEN) {
        rc = gw_bucket_meta_decode_map(m, meta, meta_len);
        if (rc == CN_OK && (m->owner_len != etag_len || memcmp(m->owner, etag, etag_len) != 0))
            rc = CN_INVAL;   /* etag and meta are written together: one is not ours */
    }
    if (rc != CN_OK)
        memset(m, 0, sizeof(*m));
    return rc;
}

/* ---- encode ----------------------------------------------------------- */

static void gw_bucket_meta_pack_str(msgpack_packer *pk, const char *s, size_t n)
{
    msgpack_pack_str(pk, n);
    msgpack_pack_str_body(pk, s, n);
}

int gw_bucket_meta_encode(const struct gw_bucket_meta *m, char **out, size_t *len)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 5);
    gw_bucket_meta_pack_str(&pk, "v", 1);
    msgpack_pack_uint64(&pk, GW_BUCKET_META_VERSION);
    gw_bucket_meta_pack_str(&pk, "region", 6);
    gw_bucket_meta_pack_str(&pk, m->region, m->region_len);
    gw_bucket_meta_pack_str(&pk, "owner", 5);
    gw_bucket_meta_pack_str(&pk, m->owner, m->owner_len);
    gw_bucket_meta_pack_str(&pk, "inc", 3);
    msgpack_pack_array(&pk, 2);
    msgpack_pack_uint64(&pk, m->inc.created_us);
    msgpack_pack_uint64(&pk, m->inc.rnd);
    gw_bucket_meta_pack_str(&pk, "cfg", 3);
    msgpack_pack_map(&pk, m->n_configs);
    for (size_t i = 0; i < m->n_configs; i++) {
        gw_bucket_meta_pack_str(&pk, m->configs[i].name, m->configs[i].name_len);
        msgpack_pack_bin(&pk, m->configs[i].value_len);
        msgpack_pack_bin_body(&pk, m->configs[i].value, m->configs[i].value_len);
    }
    int rc = CN_OK;
    *out = NULL;
    *len = 0;
    if (sb.size > GW_BUCKET_META_MAX_LEN) {
        rc = CN_TOOBIG;
    } else {
        *out = cn_memdup(sb.data, sb.size);
        *len = sb.size;
    }
    msgpack_sbuffer_destroy(&sb);
    return rc;
}

/* ---- configurations --------------------------------------------------- */

const struct gw_bucket_meta_config *gw_bucket_meta_config(const struct gw_bucket_meta *m,
                                                          const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < m->n_configs; i++)
        if (m->configs[i].name_len == n && memcmp(m->configs[i].name, name, n) == 0)
            return &m->configs[i];
    return NULL;
}

int gw_bucket_meta_set_config(struct gw_bucket_meta *m, const char *name, const void *value,
                              size_t value_len)
{
    struct gw_bucket_meta_config *c =
        (struct gw_bucket_meta_config *)gw_bucket_meta_config(m, name);
    if (value == NULL) {
        if (c != NULL)
            *c = m->configs[--m->n_configs];
        return CN_OK;
    }
    if (c == NULL) {
        if (m->n_configs == GW_BUCKET_META_MAX_CONFIGS)
            return CN_TOOBIG;
        c = &m->configs[m->n_configs++];
        c->name = name;
        c->name_len = strlen(name);
    }
    c->value = value;
    c->value_len = value_len;
    return CN_OK;
}

const char *gw_bucket_meta_record_owner(const struct msg *rec, size_t *len)
{
    const struct msg_bytes *b = MSG_HAS(rec, MSG_F_OWNER) ? &rec->owner
                              : MSG_HAS(rec, MSG_F_ETAG) ? &rec->etag : NULL;
    *len = b != NULL ? b->len : 0;
    return b != NULL && b->len > 0 ? (const char *)b->ptr : "";
}

int gw_bucket_meta_decode_record(struct gw_bucket_meta *m, const struct msg *rec)
{
    size_t olen;
    const char *owner = gw_bucket_meta_record_owner(rec, &olen);
    return gw_bucket_meta_decode(m, rec->meta.ptr, rec->meta.len, owner, olen);
}
