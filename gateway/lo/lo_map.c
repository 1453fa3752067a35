/* Chunk maps: encoding, strict decoding, slicing and chunk keys (lo_map.h).
 * The encoded map is {"sz": size, "mp": bool, "s": [[ver, size, chunk_len],
 * ...]}. */
#include "lo_map.h"

#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <msgpack.h>

#include "msg/msg.h"

#include "store.h"

#include "cn/alloc.h"

uint32_t gw_lo_seg_chunks(const struct gw_lo_seg *s)
{
    return (uint32_t)((s->size + s->chunk_len - 1) / s->chunk_len);
}

uint64_t gw_lo_seg_chunk_size(const struct gw_lo_seg *s, uint32_t idx)
{
    uint64_t start = (uint64_t)idx * s->chunk_len;
    return start >= s->size ? 0 : CN_MIN((uint64_t)s->chunk_len, s->size - start);
}

int gw_lo_map_init(struct gw_lo_map *m, const struct gw_lo_seg *segs, uint32_t n, int multipart)
{
    if (n == 0 || n > GW_LO_MAX_SEGS)
        return CN_INVAL;
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (segs[i].chunk_len == 0 || segs[i].size > UINT64_MAX / 2 - total)
            return CN_INVAL;
        /* chunk indices are 32-bit */
        if (segs[i].size / segs[i].chunk_len >= UINT32_MAX)
            return CN_INVAL;
        total += segs[i].size;
    }
    m->segs = cn_memdup(segs, n * sizeof(*segs));
    m->starts = cn_malloc(n * sizeof(*m->starts));
    m->n_segs = n;
    m->multipart = multipart;
    uint64_t pos = 0;
    for (uint32_t i = 0; i < n; i++) {
        m->starts[i] = pos;
        pos += segs[i].size;
    }
    m->size = total;
    return CN_OK;
}

void gw_lo_map_fini(struct gw_lo_map *m)
{
    cn_free(m->segs);
    cn_free(m->starts);
    memset(m, 0, sizeof(*m));
}

void gw_lo_map_encode(const struct gw_lo_map *m, char **out, size_t *len)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 3);
    msgpack_pack_str(&pk, 2);
    msgpack_pack_str_body(&pk, "sz", 2);
    msgpack_pack_uint64(&pk, m->size);
    msgpack_pack_str(&pk, 2);
    msgpack_pack_str_body(&pk, "mp", 2);
    if (m->multipart)
        msgpack_pack_true(&pk);
    else
        msgpack_pack_false(&pk);
    msgpack_pack_str(&pk, 1);
    msgpack_pack_str_body(&pk, "s", 1);
    msgpack_pack_array(&pk, m->n_segs);
    for (uint32_t i = 0; i < m->n_segs; i++) {
        msgpack_pack_array(&pk, 3);
        msgpack_pack_uint64(&pk, m->segs[i].ver);
        msgpack_pack_uint64(&pk, m->segs[i].size);
        msgpack_pack_uint32(&pk, m->segs[i].chunk_len);
    }
    *out = cn_memdup(sb.data, sb.size);
    *len = sb.size;
    msgpack_sbuffer_destroy(&sb);
}

static int gw_lo_map_key_is(const msgpack_object *k, const char *name)
{
    size_t n = strlen(name);
    return k->type == MSGPACK_OBJECT_STR && k->via.str.size == n &&
           memcmp(k->via.str.ptr, name, n) == 0;
}

/* Reads the "s" array into a fresh segment array; NULL when malformed. */
static struct gw_lo_seg *gw_lo_map_decode_segs(const msgpack_object *a, uint32_t *n)
{
    if (a->type != MSGPACK_OBJECT_ARRAY || a->via.array.size == 0 ||
        a->via.array.size > GW_LO_MAX_SEGS)
        return NULL;
    *n = a->via.array.size;
    struct gw_lo_seg *segs = cn_calloc(*n, sizeof(*segs));
    for (uint32_t i = 0; i < *n; i++) {
        const msgpack_object *e = &a->via.array.ptr[i];
        if (e->type != MSGPACK_OBJECT_ARRAY || e->via.array.size != 3 ||
            e->via.array.ptr[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
            e->via.array.ptr[1].type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
            e->via.array.ptr[2].type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
            e->via.array.ptr[2].via.u64 == 0 || e->via.array.ptr[2].via.u64 > UINT32_MAX) {
            cn_free(segs);
            return NULL;
        }
        segs[i].ver = e->via.array.ptr[0].via.u64;
        segs[i].size = e->via.array.ptr[1].via.u64;
        segs[i].chunk_len = (uint32_t)e->via.array.ptr[2].via.u64;
    }
    return segs;
}

struct gw_blob *gw_lo_map_blob(const struct gw_lo_map *m)
{
    char *bytes;
    size_t len;
    gw_lo_map_encode(m, &bytes, &len);
    struct evbuffer *buf = evbuffer_new();
    evbuffer_add(buf, bytes, len);
    cn_free(bytes);
    return gw_blob_from_evbuffer(buf);
}

struct gw_blob *gw_lo_map_parent(const struct gw_lo_seg *segs, uint32_t n, int multipart,
                                 uint64_t *osize)
{
    struct gw_lo_map map;
    CN_ASSERT(gw_lo_map_init(&map, segs, n, multipart) == CN_OK);
    struct gw_blob *b = gw_lo_map_blob(&map);
    *osize = map.size;
    gw_lo_map_fini(&map);
    return b;
}

int gw_lo_map_decode(struct gw_lo_map *m, const void *bytes, size_t len)
{
    memset(m, 0, sizeof(*m));
    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    int rc = CN_INVAL;
    struct gw_lo_seg *segs = NULL;
    uint32_t n = 0;
    int have_size = 0, multipart = 0;
    uint64_t size = 0;
    if (msg_msgpack_bounded(bytes, len) != CN_OK ||
        msgpack_unpack_next(&up, bytes, len, &off) != MSGPACK_UNPACK_SUCCESS || off != len ||
        up.data.type != MSGPACK_OBJECT_MAP)
        goto out;
    for (uint32_t i = 0; i < up.data.via.map.size; i++) {
        const msgpack_object_kv *kv = &up.data.via.map.ptr[i];
        if (gw_lo_map_key_is(&kv->key, "sz")) {
            if (kv->val.type != MSGPACK_OBJECT_POSITIVE_INTEGER || have_size)
                goto out;
            size = kv->val.via.u64;
            have_size = 1;
        } else if (gw_lo_map_key_is(&kv->key, "mp")) {
            if (kv->val.type != MSGPACK_OBJECT_BOOLEAN)
                goto out;
            multipart = kv->val.via.boolean;
        } else if (gw_lo_map_key_is(&kv->key, "s")) {
            if (segs != NULL || (segs = gw_lo_map_decode_segs(&kv->val, &n)) == NULL)
                goto out;
        }
    }
    if (!have_size || segs == NULL || gw_lo_map_init(m, segs, n, multipart) != CN_OK)
        goto out;
    if (m->size != size) {
        gw_lo_map_fini(m);
        goto out;
    }
    rc = CN_OK;
out:
    cn_free(segs);
    msgpack_unpacked_destroy(&up);
    return rc;
}

/* Index of the segment holding object offset pos (binary search; empty
 * segments are skipped because their start equals the next one's). */
static uint32_t gw_lo_map_find_seg(const struct gw_lo_map *m, uint64_t pos)
{
    uint32_t lo = 0, hi = m->n_segs;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->starts[mid] <= pos)
            lo = mid;
        else
            hi = mid;
    }
    while (lo + 1 < m->n_segs && m->segs[lo].size == 0)
        lo++;
    return lo;
}

void gw_lo_map_slice(const struct gw_lo_map *m, uint64_t pos, uint64_t end, uint64_t max_len,
                     struct gw_lo_slice *out)
{
    CN_ASSERT(pos < end && end <= m->size && max_len > 0);
    uint32_t s = gw_lo_map_find_seg(m, pos);
    const struct gw_lo_seg *seg = &m->segs[s];
    uint64_t in_seg = pos - m->starts[s];
    CN_ASSERT(in_seg < seg->size);
    out->seg = s;
    out->chunk = (uint32_t)(in_seg / seg->chunk_len);
    out->off = in_seg % seg->chunk_len;
    out->chunk_size = gw_lo_seg_chunk_size(seg, out->chunk);
    uint64_t len = out->chunk_size - out->off;
    len = CN_MIN(len, end - pos);
    out->len = CN_MIN(len, max_len);
}

size_t gw_lo_map_chunk_key(char *out, const char *okey, size_t okey_len, uint64_t ver,
                           uint32_t idx)
{
    CN_ASSERT(okey_len >= 2 && okey_len <= GW_KEYS_MAX && okey[0] == 'o');
    out[0] = 'c';
    memcpy(out + 1, okey + 1, okey_len - 1);
    out[okey_len] = '\0';
    int n = snprintf(out + okey_len + 1, GW_LO_KEY_MAX - okey_len - 1, "%016llx/%08x",
                     (unsigned long long)ver, idx);
    return okey_len + 1 + (size_t)n;
}

int gw_lo_map_record_size(const char *etag, size_t etag_len, int has_osize, uint64_t osize,
                          size_t *tag_len, uint64_t *size)
{
    if (has_osize) {
        *tag_len = etag_len;
        *size = osize;
        return 1;
    }
    return gw_lo_map_etag_split(etag, etag_len, tag_len, size);
}

int gw_lo_map_reply_size(const struct msg *m, size_t *tag_len, uint64_t *size)
{
    const char *etag = MSG_HAS(m, MSG_F_ETAG) ? (const char *)m->etag.ptr : "";
    size_t len = MSG_HAS(m, MSG_F_ETAG) ? m->etag.len : 0;
    return gw_lo_map_record_size(etag, len, MSG_HAS(m, MSG_F_OSIZE), m->osize, tag_len, size);
}

int gw_lo_map_etag_split(const char *etag, size_t len, size_t *tag_len, uint64_t *size)
{
    *tag_len = len;
    const char *sp = memchr(etag, ' ', len);
    if (sp == NULL || sp == etag || sp + 1 == etag + len || etag + len - sp - 1 > 20)
        return 0;
    uint64_t v = 0;
    for (const char *p = sp + 1; p < etag + len; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    *tag_len = (size_t)(sp - etag);
    *size = v;
    return 1;
}
