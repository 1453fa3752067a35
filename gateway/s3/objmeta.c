/* Object-record meta as a small msgpack map. Decoding walks the raw bytes
 * with msgpack's zone-free object API and checks every type. */
#include "objmeta.h"

#include <string.h>
#include <strings.h>

#include <msgpack.h>

#include "msg/msg.h"

#include "cn/alloc.h"

int gw_objmeta_add(struct gw_objmeta *m, const char *name, size_t name_len, const char *value,
                   size_t value_len)
{
    if (m->n >= GW_OBJMETA_MAX_HEADERS)
        return CN_TOOBIG;
    m->h[m->n++] = (struct gw_objmeta_header){name, name_len, value, value_len};
    return CN_OK;
}

void gw_objmeta_encode(const struct gw_objmeta *m, char **out, size_t *len)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 1);
    msgpack_pack_str(&pk, 1);
    msgpack_pack_str_body(&pk, "h", 1);
    msgpack_pack_array(&pk, m->n);
    for (size_t i = 0; i < m->n; i++) {
        msgpack_pack_array(&pk, 2);
        msgpack_pack_str(&pk, m->h[i].name_len);
        msgpack_pack_str_body(&pk, m->h[i].name, m->h[i].name_len);
        msgpack_pack_str(&pk, m->h[i].value_len);
        msgpack_pack_str_body(&pk, m->h[i].value, m->h[i].value_len);
    }
    *out = cn_memdup(sb.data, sb.size);
    *len = sb.size;
    msgpack_sbuffer_destroy(&sb);
}

/* Reads the "h" array. */
static int gw_objmeta_decode_headers(struct gw_objmeta *m, const msgpack_object *arr)
{
    if (arr->type != MSGPACK_OBJECT_ARRAY)
        return CN_INVAL;
    for (uint32_t i = 0; i < arr->via.array.size; i++) {
        const msgpack_object *pair = &arr->via.array.ptr[i];
        if (pair->type != MSGPACK_OBJECT_ARRAY || pair->via.array.size != 2 ||
            pair->via.array.ptr[0].type != MSGPACK_OBJECT_STR ||
            pair->via.array.ptr[1].type != MSGPACK_OBJECT_STR)
            return CN_INVAL;
        const msgpack_object_str *n = &pair->via.array.ptr[0].via.str;
        const msgpack_object_str *v = &pair->via.array.ptr[1].via.str;
        if (gw_objmeta_add(m, n->ptr, n->size, v->ptr, v->size) != CN_OK)
            return CN_INVAL;
    }
    return CN_OK;
}

int gw_objmeta_decode(struct gw_objmeta *m, const void *bytes, size_t len)
{
    m->n = 0;
    if (len == 0)
        return CN_OK;
    /* msgpack_unpack_next() leaves str objects pointing into `bytes`, so
     * only the arrays live in the zone, which is freed before returning */
    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    int rc = CN_OK;
    size_t off = 0;
    if (msg_msgpack_bounded(bytes, len) != CN_OK ||
        msgpack_unpack_next(&up, bytes, len, &off) != MSGPACK_UNPACK_SUCCESS || off != len ||
        up.data.type != MSGPACK_OBJECT_MAP) {
        msgpack_unpacked_destroy(&up);
        return CN_INVAL;
    }
    for (uint32_t i = 0; i < up.data.via.map.size; i++) {
        const msgpack_object_kv *kv = &up.data.via.map.ptr[i];
        if (kv->key.type != MSGPACK_OBJECT_STR)
            continue;
        if (kv->key.via.str.size == 1 && kv->key.via.str.ptr[0] == 'h' &&
            gw_objmeta_decode_headers(m, &kv->val) != CN_OK) {
            m->n = 0;
            rc = CN_INVAL;
            break;
        }
    }
    msgpack_unpacked_destroy(&up);
    return rc;
}

const struct gw_objmeta_header *gw_objmeta_find(const struct gw_objmeta *m, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < m->n; i++)
        if (m->h[i].name_len == n && strncasecmp(m->h[i].name, name, n) == 0)
            return &m->h[i];
    return NULL;
}

int gw_objmeta_is_internal(const struct gw_objmeta_header *h)
{
    return h->name_len > 0 && h->name[0] == ':';
}

int gw_objmeta_replace(const void *in, size_t in_len, const char *name, const char *value,
                       size_t value_len, char **out, size_t *out_len)
{
    struct gw_objmeta old, m = {.n = 0};
    if (gw_objmeta_decode(&old, in, in_len) != CN_OK)
        old.n = 0;
    size_t nl = strlen(name);
    for (size_t i = 0; i < old.n; i++) {
        const struct gw_objmeta_header *h = &old.h[i];
        if (h->name_len == nl && strncasecmp(h->name, name, nl) == 0)
            continue;
        gw_objmeta_add(&m, h->name, h->name_len, h->value, h->value_len);
    }
    if (value != NULL && gw_objmeta_add(&m, name, nl, value, value_len) != CN_OK)
        return CN_TOOBIG;
    gw_objmeta_encode(&m, out, out_len);
    return CN_OK;
}
