/* Encoder and decoder of protocol messages, driven by the tables of
 * schema.c. Decoding is strict and bounded: a pre-walk checks the msgpack
 * bytes before msgpack-c allocates anything, so no declared length or count
 * can make it allocate more than a small multiple of the frame's size. */
#include "msg/msg.h"

#include <string.h>

#include "schema.h"

void msg_limits_default(struct msg_limits *lim)
{
    lim->max_key_len = 2048;
    lim->max_meta_len = 64 * 1024;
    lim->max_payload_len = 64ull << 20;
    lim->max_list = 1000;
    lim->max_header_len = 4u << 20;
}

uint64_t msg_limits_max_frame(const struct msg_limits *lim)
{
    uint64_t biggest = lim->max_payload_len > lim->max_header_len ? lim->max_payload_len
                                                                  : lim->max_header_len;
    return biggest + MSG_FRAME_SLACK;
}

void msg_init_request(struct msg *m, enum msg_op op, uint64_t id)
{
    memset(m, 0, sizeof(*m));
    m->v = MSG_VERSION_MIN;
    m->id = id;
    m->op = op;
    m->present = (1ull << MSG_F_V) | (1ull << MSG_F_ID) | (1ull << MSG_F_OP);
}

void msg_init_reply(struct msg *m, const struct msg *req, enum msg_status st)
{
    memset(m, 0, sizeof(*m));
    m->v = MSG_VERSION_MIN;
    m->id = req->id;
    m->op = req->op;
    m->st = st;
    m->vmax = MSG_VERSION;
    m->present = (1ull << MSG_F_V) | (1ull << MSG_F_ID) | (1ull << MSG_F_OP) |
                 (1ull << MSG_F_ST) | (1ull << MSG_F_VMAX);
}

size_t msg_osize_fold(uint8_t *out, const uint8_t *etag, size_t etag_len, uint64_t osize)
{
    CN_ASSERT(etag_len <= MSG_OSIZE_ETAG_MAX);
    char digits[24];
    int n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)osize);
    CN_ASSERT(n > 0 && (size_t)n <= 20);
    if (etag_len > 0)
        memcpy(out, etag, etag_len);
    out[etag_len] = ' ';
    memcpy(out + etag_len + 1, digits, (size_t)n);
    return etag_len + 1 + (size_t)n;
}

void msg_osize_downgrade(struct msg *m, uint8_t *buf)
{
    if (MSG_HAS(m, MSG_F_OWNER)) {
        m->etag = m->owner;
        MSG_SET(m, MSG_F_ETAG);
        m->present &= ~(1ull << MSG_F_OWNER);
        m->owner = (struct msg_bytes){NULL, 0};
    }
    if (!MSG_HAS(m, MSG_F_OSIZE))
        return;
    size_t n = msg_osize_fold(buf, MSG_HAS(m, MSG_F_ETAG) ? m->etag.ptr : NULL,
                              MSG_HAS(m, MSG_F_ETAG) ? m->etag.len : 0, m->osize);
    m->etag = (struct msg_bytes){buf, (uint32_t)n};
    MSG_SET(m, MSG_F_ETAG);
    m->present &= ~(1ull << MSG_F_OSIZE);
    m->osize = 0;
}

static int msg_ents_have_osize(const struct msg *m)
{
    if (!MSG_HAS(m, MSG_F_ENTS))
        return 0;
    for (uint32_t i = 0; i < m->n_ents; i++)
        if (m->ents[i].has_osize || m->ents[i].has_owner)
            return 1;
    return 0;
}

uint32_t msg_version_needed(const struct msg *m, int is_reply)
{
    if (MSG_HAS(m, MSG_F_OSIZE) || MSG_HAS(m, MSG_F_OWNER) || msg_ents_have_osize(m))
        return 3;
    if (m->op == MSG_OP_LOCK || m->op == MSG_OP_UNLOCK || m->op == MSG_OP_HINT_ADD ||
        m->op == MSG_OP_HINT_TAKE || m->op == MSG_OP_PURGE || MSG_HAS(m, MSG_F_TOK) ||
        MSG_HAS(m, MSG_F_IFVER))
        return 2;
    if (is_reply && (m->st == MSG_ST_PRECONDITION || m->st == MSG_ST_LOCKED))
        return 2;
    return 1;
}

const char *msg_op_str(uint32_t op)
{
    const struct msg_op_desc *o = msg_schema_op(op);
    return o ? o->name : "?";
}

const char *msg_status_str(uint32_t st)
{
    for (const struct msg_status_desc *s = msg_statuses; s->name != NULL; s++)
        if (s->code == st)
            return s->name;
    return "?";
}

int msg_has_payload(uint32_t op, int is_reply)
{
    const struct msg_op_desc *o = msg_schema_op(op);
    if (o == NULL)
        return 0;
    return is_reply ? o->rep_payload : o->req_payload;
}

/* ---- pre-walk ---------------------------------------------------------- */

static uint64_t msg_be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

/* Walks one msgpack object spanning exactly buf[0..len). Every container's
 * declared count must fit in the bytes that remain (each element takes at
 * least one byte), so the objects msgpack-c will allocate number at most
 * len. Returns CN_OK or CN_INVAL. */
int msg_msgpack_bounded(const void *buf_, size_t len)
{
    const uint8_t *buf = buf_;
    size_t pos = 0;
    uint64_t pending = 1;
    while (pending > 0) {
        if (pos >= len)
            return CN_INVAL;
        uint8_t t = buf[pos++];
        uint64_t add = 0, skip = 0;
        int lenbytes = 0;
        pending--;
        if (t <= 0x7f || t >= 0xe0 || (t >= 0xc0 && t <= 0xc3)) {
            if (t == 0xc1)
                return CN_INVAL; /* never used */
            continue;
        }
        if (t >= 0x80 && t <= 0x8f) {
            add = 2u * (t & 0x0f);
        } else if (t >= 0x90 && t <= 0x9f) {
            add = t & 0x0f;
        } else if (t >= 0xa0 && t <= 0xbf) {
            skip = t & 0x1f;
        } else {
            switch (t) {
            case 0xc4: case 0xd9: lenbytes = 1; break;             /* bin8, str8 */
            case 0xc5: case 0xda: lenbytes = 2; break;             /* bin16, str16 */
            case 0xc6: case 0xdb: lenbytes = 4; break;             /* bin32, str32 */
            case 0xc7: lenbytes = 1; skip = 1; break;              /* ext8 */
            case 0xc8: lenbytes = 2; skip = 1; break;              /* ext16 */
            case 0xc9: lenbytes = 4; skip = 1; break;              /* ext32 */
            case 0xca: case 0xce: case 0xd2: skip = 4; break;
            case 0xcb: case 0xcf: case 0xd3: skip = 8; break;
            case 0xcc: case 0xd0: skip = 1; break;
            case 0xcd: case 0xd1: skip = 2; break;
            case 0xd4: skip = 2; break;                            /* fixext */
            case 0xd5: skip = 3; break;
            case 0xd6: skip = 5; break;
            case 0xd7: skip = 9; break;
            case 0xd8: skip = 17; break;
            case 0xdc: case 0xdd: case 0xde: case 0xdf: {          /* array, map */
                int n = (t == 0xdc || t == 0xde) ? 2 : 4;
                if (len - pos < (size_t)n)
                    return CN_INVAL;
                add = msg_be(buf + pos, n);
                pos += (size_t)n;
                if (t >= 0xde)
                    add *= 2;
                break;
            }
            default:
                return CN_INVAL;
            }
        }
        if (lenbytes > 0) {
            if (len - pos < (size_t)lenbytes)
                return CN_INVAL;
            skip += msg_be(buf + pos, lenbytes);
            pos += (size_t)lenbytes;
        }
        if (skip > len - pos)
            return CN_INVAL;
        pos += skip;
        if (add > len - pos || pending + add > len - pos)
            return CN_INVAL;
        pending += add;
    }
    return pos == len ? CN_OK : CN_INVAL;
}

/* ---- decoding ---------------------------------------------------------- */

static uint64_t msg_limit_of(const struct msg_field_desc *f, const struct msg_limits *lim)
{
    switch (f->limit) {
    case MSG_LIM_KEY: return lim->max_key_len;
    case MSG_LIM_META: return lim->max_meta_len;
    case MSG_LIM_LIST: return lim->max_list;
    case MSG_LIM_FIXED: return f->max;
    case MSG_LIM_NONE: return f->max;
    }
    return 0;
}

static void msg_store_uint(void *field, uint64_t max, uint64_t v)
{
    if (max <= UINT32_MAX)
        *(uint32_t *)field = (uint32_t)v;
    else
        *(uint64_t *)field = v;
}

static int msg_bytes_of(const msgpack_object *o, struct msg_bytes *out)
{
    if (o->type == MSGPACK_OBJECT_BIN) {
        out->ptr = (const uint8_t *)o->via.bin.ptr;
        out->len = o->via.bin.size;
        return CN_OK;
    }
    if (o->type == MSGPACK_OBJECT_STR) {
        out->ptr = (const uint8_t *)o->via.str.ptr;
        out->len = o->via.str.size;
        return CN_OK;
    }
    return CN_INVAL;
}

static int msg_decode_value(struct msg *m, const struct msg_field_desc *f, void *field,
                            const msgpack_object *o, const struct msg_limits *lim,
                            char err[CN_ERR_LEN]);

static int msg_decode_entries(struct msg *m, const msgpack_object *o,
                              const struct msg_limits *lim, char err[CN_ERR_LEN])
{
    if (o->type != MSGPACK_OBJECT_ARRAY) {
        snprintf(err, CN_ERR_LEN, "field 'ents' must be an array");
        return CN_INVAL;
    }
    uint32_t n = o->via.array.size;
    if (n > lim->max_list) {
        snprintf(err, CN_ERR_LEN, "field 'ents' has %u entries, over the limit %u", n,
                 lim->max_list);
        return CN_TOOBIG;
    }
    m->ents = n ? msgpack_zone_malloc(m->unpacked_.zone, n * sizeof(struct msg_entry)) : NULL;
    if (n && m->ents == NULL) {
        snprintf(err, CN_ERR_LEN, "out of memory");
        return CN_INVAL;
    }
    m->n_ents = n;
    for (uint32_t i = 0; i < n; i++) {
        const msgpack_object *e = &o->via.array.ptr[i];
        struct msg_entry *ent = &m->ents[i];
        memset(ent, 0, sizeof(*ent));
        if (e->type != MSGPACK_OBJECT_MAP) {
            snprintf(err, CN_ERR_LEN, "ents[%u] must be a map", i);
            return CN_INVAL;
        }
        int have_key = 0;
        for (uint32_t j = 0; j < e->via.map.size; j++) {
            const msgpack_object_kv *kv = &e->via.map.ptr[j];
            if (kv->key.type != MSGPACK_OBJECT_STR)
                continue;
            for (const struct msg_field_desc *f = msg_entry_fields; f->key != NULL; f++) {
                if (strlen(f->key) != kv->key.via.str.size ||
                    memcmp(f->key, kv->key.via.str.ptr, kv->key.via.str.size) != 0)
                    continue;
                int rc = msg_decode_value(m, f, (char *)ent + f->offset, &kv->val, lim, err);
                if (rc != CN_OK)
                    return rc;
                if (f->has_offset != 0)
                    *(uint32_t *)((char *)ent + f->has_offset) = 1;
                have_key |= f->offset == offsetof(struct msg_entry, key);
            }
        }
        if (!have_key) {
            snprintf(err, CN_ERR_LEN, "ents[%u] has no key", i);
            return CN_INVAL;
        }
    }
    return CN_OK;
}

static int msg_decode_stats(struct msg *m, const msgpack_object *o, char err[CN_ERR_LEN])
{
    if (o->type != MSGPACK_OBJECT_MAP) {
        snprintf(err, CN_ERR_LEN, "field 'stats' must be a map");
        return CN_INVAL;
    }
    uint32_t n = o->via.map.size;
    if (n > msg_fields[MSG_F_STATS].max) {
        snprintf(err, CN_ERR_LEN, "field 'stats' has too many counters (%u)", n);
        return CN_TOOBIG;
    }
    m->stats = n ? msgpack_zone_malloc(m->unpacked_.zone, n * sizeof(struct msg_stat)) : NULL;
    if (n && m->stats == NULL) {
        snprintf(err, CN_ERR_LEN, "out of memory");
        return CN_INVAL;
    }
    m->n_stats = n;
    for (uint32_t i = 0; i < n; i++) {
        const msgpack_object_kv *kv = &o->via.map.ptr[i];
        if (msg_bytes_of(&kv->key, &m->stats[i].name) != CN_OK ||
            m->stats[i].name.len > 256 || kv->val.type != MSGPACK_OBJECT_POSITIVE_INTEGER) {
            snprintf(err, CN_ERR_LEN, "stats entry %u must be str -> unsigned integer", i);
            return CN_INVAL;
        }
        m->stats[i].value = kv->val.via.u64;
    }
    return CN_OK;
}

/* Checks the type and limit of one value and stores it at `field`. */
static int msg_decode_value(struct msg *m, const struct msg_field_desc *f, void *field,
                            const msgpack_object *o, const struct msg_limits *lim,
                            char err[CN_ERR_LEN])
{
    uint64_t max = msg_limit_of(f, lim);
    switch (f->type) {
    case MSG_T_UINT:
        if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER) {
            snprintf(err, CN_ERR_LEN, "field '%s' must be an unsigned integer", f->key);
            return CN_INVAL;
        }
        if (o->via.u64 > max) {
            snprintf(err, CN_ERR_LEN, "field '%s' is %llu, over the limit %llu", f->key,
                     (unsigned long long)o->via.u64, (unsigned long long)max);
            return f->limit == MSG_LIM_NONE ? CN_INVAL : CN_TOOBIG;
        }
        if (f->limit == MSG_LIM_LIST && o->via.u64 == 0) {
            snprintf(err, CN_ERR_LEN, "field '%s' must be at least 1", f->key);
            return CN_INVAL;
        }
        msg_store_uint(field, f->limit == MSG_LIM_LIST ? UINT32_MAX : f->max, o->via.u64);
        return CN_OK;
    case MSG_T_BOOL:
        if (o->type != MSGPACK_OBJECT_BOOLEAN) {
            snprintf(err, CN_ERR_LEN, "field '%s' must be a boolean", f->key);
            return CN_INVAL;
        }
        *(uint32_t *)field = o->via.boolean ? 1 : 0;
        return CN_OK;
    case MSG_T_BIN:
    case MSG_T_STR:
        if (msg_bytes_of(o, field) != CN_OK) {
            snprintf(err, CN_ERR_LEN, "field '%s' must be bin or str", f->key);
            return CN_INVAL;
        }
        if (((struct msg_bytes *)field)->len > max) {
            snprintf(err, CN_ERR_LEN, "field '%s' is %u bytes, over the limit %llu", f->key,
                     ((struct msg_bytes *)field)->len, (unsigned long long)max);
            return CN_TOOBIG;
        }
        return CN_OK;
    case MSG_T_ENTS:
        return msg_decode_entries(m, o, lim, err);
    case MSG_T_STATS:
        return msg_decode_stats(m, o, err);
    }
    return CN_INVAL;
}

static int msg_uses(const struct msg_use *u, enum msg_field f, int *required)
{
    for (; u->field != MSG_F_MAX_; u++) {
        if (u->field == f) {
            *required = u->required;
            return 1;
        }
    }
    return 0;
}

static int msg_is_header_field(enum msg_field f, int is_reply)
{
    return f == MSG_F_V || f == MSG_F_ID || f == MSG_F_OP ||
           (is_reply && (f == MSG_F_ST || f == MSG_F_ERR || f == MSG_F_VMAX));
}

/* Sets m->st to what a reply to a failed decode should carry and returns rc. */
static int msg_decode_fail(struct msg *m, int rc)
{
    m->st = rc == CN_TOOBIG ? MSG_ST_TOO_LARGE : MSG_ST_BAD_REQUEST;
    return rc;
}

static int msg_decode_fields(struct msg *m, const msgpack_object *root,
                             const struct msg_limits *lim, char err[CN_ERR_LEN])
{
    for (uint32_t i = 0; i < root->via.map.size; i++) {
        const msgpack_object_kv *kv = &root->via.map.ptr[i];
        if (kv->key.type != MSGPACK_OBJECT_STR) {
            snprintf(err, CN_ERR_LEN, "map keys must be strings");
            return CN_INVAL;
        }
        const struct msg_field_desc *f = NULL;
        for (int j = 0; j < MSG_F_MAX_; j++) {
            if (strlen(msg_fields[j].key) == kv->key.via.str.size &&
                memcmp(msg_fields[j].key, kv->key.via.str.ptr, kv->key.via.str.size) == 0) {
                f = &msg_fields[j];
                break;
            }
        }
        if (f == NULL)
            continue; /* unknown keys are ignored: forward compatibility */
        if (MSG_HAS(m, f->id)) {
            snprintf(err, CN_ERR_LEN, "field '%s' appears twice", f->key);
            return CN_INVAL;
        }
        int rc = msg_decode_value(m, f, (char *)m + f->offset, &kv->val, lim, err);
        if (rc != CN_OK)
            return rc;
        MSG_SET(m, f->id);
    }
    return CN_OK;
}

/* Checks that the fields present fit the op: each allowed, each required
 * one there (reply fields are required only in OK replies). */
static int msg_check_fields(const struct msg *m, int is_reply, const struct msg_op_desc *o,
                            char err[CN_ERR_LEN])
{
    const struct msg_use *uses = is_reply ? o->rep : o->req;
    for (int f = 0; f < MSG_F_MAX_; f++) {
        int required = 0;
        if (msg_is_header_field((enum msg_field)f, is_reply))
            continue;
        if (!msg_uses(uses, (enum msg_field)f, &required)) {
            if (MSG_HAS(m, f)) {
                snprintf(err, CN_ERR_LEN, "field '%s' is not part of a %s %s",
                         msg_fields[f].key, o->name, is_reply ? "reply" : "request");
                return CN_INVAL;
            }
            continue;
        }
        if (required && !MSG_HAS(m, f) && (!is_reply || m->st == MSG_ST_OK)) {
            snprintf(err, CN_ERR_LEN, "%s %s lacks field '%s'", o->name,
                     is_reply ? "reply" : "request", msg_fields[f].key);
            return CN_INVAL;
        }
    }
    return CN_OK;
}

int msg_decode(struct msg *m, int is_reply, const void *hdr, size_t hdr_len,
               const void *payload, size_t payload_len, const struct msg_limits *lim,
               char err[CN_ERR_LEN])
{
    memset(m, 0, sizeof(*m));
    msgpack_unpacked_init(&m->unpacked_);
    m->decoded_ = 1;
    err[0] = '\0';

    if (hdr_len > lim->max_header_len) {
        snprintf(err, CN_ERR_LEN, "header frame of %zu bytes is over the limit %u", hdr_len,
                 lim->max_header_len);
        return msg_decode_fail(m, CN_TOOBIG);
    }
    if (msg_msgpack_bounded(hdr, hdr_len) != CN_OK) {
        snprintf(err, CN_ERR_LEN, "header frame is not one well-formed msgpack object");
        return msg_decode_fail(m, CN_INVAL);
    }
    size_t off = 0;
    if (msgpack_unpack_next(&m->unpacked_, hdr, hdr_len, &off) != MSGPACK_UNPACK_SUCCESS ||
        off != hdr_len) {
        snprintf(err, CN_ERR_LEN, "header frame is not valid msgpack");
        return msg_decode_fail(m, CN_INVAL);
    }
    const msgpack_object *root = &m->unpacked_.data;
    if (root->type != MSGPACK_OBJECT_MAP) {
        snprintf(err, CN_ERR_LEN, "header must be a msgpack map");
        return msg_decode_fail(m, CN_INVAL);
    }
    int rc = msg_decode_fields(m, root, lim, err);
    if (rc != CN_OK)
        return msg_decode_fail(m, rc);
    if (!MSG_HAS(m, MSG_F_V) || !MSG_HAS(m, MSG_F_ID) || !MSG_HAS(m, MSG_F_OP) ||
        (is_reply && !MSG_HAS(m, MSG_F_ST))) {
        snprintf(err, CN_ERR_LEN, "header lacks one of v, id, op%s", is_reply ? ", st" : "");
        return msg_decode_fail(m, CN_INVAL);
    }
    if (m->v < MSG_VERSION_MIN || m->v > MSG_VERSION) {
        snprintf(err, CN_ERR_LEN, "protocol version %u is not supported (want %d to %d)", m->v,
                 MSG_VERSION_MIN, MSG_VERSION);
        m->st = MSG_ST_BAD_VERSION;
        return CN_INVAL;
    }
    if (is_reply && m->op == 0 && m->st != MSG_ST_OK && payload == NULL)
        return CN_OK; /* the answer to a request whose op could not be read */
    const struct msg_op_desc *o = msg_schema_op(m->op);
    if (o == NULL) {
        snprintf(err, CN_ERR_LEN, "unknown op %u", m->op);
        return msg_decode_fail(m, CN_INVAL);
    }
    if ((rc = msg_check_fields(m, is_reply, o, err)) != CN_OK)
        return msg_decode_fail(m, rc);
    int want_payload = is_reply ? (o->rep_payload && m->st == MSG_ST_OK) : o->req_payload;
    if (want_payload != (payload != NULL)) {
        snprintf(err, CN_ERR_LEN, "%s %s %s a payload frame", o->name,
                 is_reply ? "reply" : "request", want_payload ? "needs" : "must not have");
        return msg_decode_fail(m, CN_INVAL);
    }
    if (payload != NULL && payload_len > lim->max_payload_len) {
        snprintf(err, CN_ERR_LEN, "payload of %zu bytes is over the limit %llu", payload_len,
                 (unsigned long long)lim->max_payload_len);
        return msg_decode_fail(m, CN_TOOBIG);
    }
    m->payload.ptr = payload;
    m->payload.len = (uint32_t)payload_len;
    if (payload_len > UINT32_MAX) {
        snprintf(err, CN_ERR_LEN, "payload over 4 GiB");
        return msg_decode_fail(m, CN_TOOBIG);
    }
    return CN_OK;
}

void msg_release(struct msg *m)
{
    if (m->decoded_) {
        msgpack_unpacked_destroy(&m->unpacked_);
        m->decoded_ = 0;
    }
}

/* ---- encoding ---------------------------------------------------------- */

static void msg_pack_key(msgpack_packer *pk, const char *key)
{
    size_t n = strlen(key);
    msgpack_pack_str(pk, n);
    msgpack_pack_str_body(pk, key, n);
}

static void msg_pack_bytes(msgpack_packer *pk, const struct msg_bytes *b, int as_str)
{
    if (as_str) {
        msgpack_pack_str(pk, b->len);
        msgpack_pack_str_body(pk, b->ptr, b->len);
    } else {
        msgpack_pack_bin(pk, b->len);
        msgpack_pack_bin_body(pk, b->ptr, b->len);
    }
}

/* Whether entry e carries field ef (an optional one only when its flag is set). */
static int msg_entry_has(const struct msg_entry *e, const struct msg_field_desc *ef)
{
    return ef->has_offset == 0 || *(const uint32_t *)((const char *)e + ef->has_offset) != 0;
}

static void msg_pack_value(msgpack_packer *pk, const struct msg_field_desc *f,
                           const void *field, const struct msg *m)
{
    switch (f->type) {
    case MSG_T_UINT:
        if (f->limit == MSG_LIM_LIST || f->max <= UINT32_MAX)
            msgpack_pack_uint64(pk, *(const uint32_t *)field);
        else
            msgpack_pack_uint64(pk, *(const uint64_t *)field);
        break;
    case MSG_T_BOOL:
        if (*(const uint32_t *)field)
            msgpack_pack_true(pk);
        else
            msgpack_pack_false(pk);
        break;
    case MSG_T_BIN:
    case MSG_T_STR:
        msg_pack_bytes(pk, field, f->type == MSG_T_STR);
        break;
    case MSG_T_ENTS:
        msgpack_pack_array(pk, m->n_ents);
        for (uint32_t i = 0; i < m->n_ents; i++) {
            const struct msg_entry *e = &m->ents[i];
            size_t n = 0;
            for (const struct msg_field_desc *ef = msg_entry_fields; ef->key != NULL; ef++)
                n += msg_entry_has(e, ef);
            msgpack_pack_map(pk, n);
            for (const struct msg_field_desc *ef = msg_entry_fields; ef->key != NULL; ef++) {
                if (!msg_entry_has(e, ef))
                    continue;
                msg_pack_key(pk, ef->key);
                msg_pack_value(pk, ef, (const char *)e + ef->offset, m);
            }
        }
        break;
    case MSG_T_STATS:
        msgpack_pack_map(pk, m->n_stats);
        for (uint32_t i = 0; i < m->n_stats; i++) {
            msg_pack_bytes(pk, &m->stats[i].name, 1);
            msgpack_pack_uint64(pk, m->stats[i].value);
        }
        break;
    }
}

int msg_encode(const struct msg *m, int is_reply, msgpack_sbuffer *out, char err[CN_ERR_LEN])
{
    static const struct msg_use none[] = {{MSG_F_MAX_, 0}};
    const struct msg_op_desc *o = msg_schema_op(m->op);
    if (o == NULL && !(is_reply && m->op == 0 && m->st != MSG_ST_OK)) {
        snprintf(err, CN_ERR_LEN, "unknown op %u", m->op);
        return CN_INVAL;
    }
    const struct msg_use *uses = o == NULL ? none : is_reply ? o->rep : o->req;
    uint64_t write = (1ull << MSG_F_V) | (1ull << MSG_F_ID) | (1ull << MSG_F_OP);
    if (is_reply) {
        write |= 1ull << MSG_F_ST;
        if (MSG_HAS(m, MSG_F_ERR))
            write |= 1ull << MSG_F_ERR;
        if (MSG_HAS(m, MSG_F_VMAX))
            write |= 1ull << MSG_F_VMAX;
    }
    for (const struct msg_use *u = uses; u->field != MSG_F_MAX_; u++) {
        if (MSG_HAS(m, u->field))
            write |= 1ull << u->field;
        else if (u->required && (!is_reply || m->st == MSG_ST_OK)) {
            snprintf(err, CN_ERR_LEN, "%s %s lacks field '%s'", o->name,
                     is_reply ? "reply" : "request", msg_fields[u->field].key);
            return CN_INVAL;
        }
    }
    msgpack_packer pk;
    msgpack_packer_init(&pk, out, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, (size_t)__builtin_popcountll(write));
    for (int f = 0; f < MSG_F_MAX_; f++) {
        if (!((write >> f) & 1))
            continue;
        msg_pack_key(&pk, msg_fields[f].key);
        if (f == MSG_F_V) {
            /* the lowest version that has what m uses, or the one the
             * sender asked for (a request's reply form), never above ours */
            uint32_t v = msg_version_needed(m, is_reply);
            if (m->v > v)
                v = m->v > MSG_VERSION ? MSG_VERSION : m->v;
            msgpack_pack_uint64(&pk, v);
        }
        else
            msg_pack_value(&pk, &msg_fields[f], (const char *)m + msg_fields[f].offset, m);
    }
    return CN_OK;
}

/* ---- documentation ----------------------------------------------------- */

static const char *msg_type_doc(const struct msg_field_desc *f)
{
    static const char *const names[] = {"uint", "bool", "bin", "str", "array of maps", "map"};
    return names[f->type];
}

static void msg_limit_doc(const struct msg_field_desc *f, char *out, size_t n)
{
    switch (f->limit) {
    case MSG_LIM_KEY: snprintf(out, n, "≤ max_key_len bytes"); break;
    case MSG_LIM_META: snprintf(out, n, "≤ max_meta_len bytes"); break;
    case MSG_LIM_LIST: snprintf(out, n, "≤ max_list"); break;
    case MSG_LIM_FIXED:
        snprintf(out, n, "≤ %llu %s", (unsigned long long)f->max,
                 f->type == MSG_T_STATS ? "counters" : "bytes");
        break;
    case MSG_LIM_NONE:
        snprintf(out, n, f->type == MSG_T_BOOL ? "" : f->max <= UINT32_MAX ? "32-bit" : "64-bit");
        break;
    }
}

static void msg_uses_doc(FILE *out, const struct msg_use *u)
{
    int first = 1;
    for (; u->field != MSG_F_MAX_; u++) {
        fprintf(out, "%s`%s`%s", first ? "" : ", ", msg_fields[u->field].key,
                u->required ? "" : "?");
        first = 0;
    }
    if (first)
        fprintf(out, "—");
}

void msg_schema_write_markdown(FILE *out)
{
    char lim[64];
    fprintf(out, "### Fields\n\n| key | type | limit | meaning |\n|---|---|---|---|\n");
    for (int i = 0; i < MSG_F_MAX_; i++) {
        msg_limit_doc(&msg_fields[i], lim, sizeof(lim));
        fprintf(out, "| `%s` | %s | %s | %s |\n", msg_fields[i].key, msg_type_doc(&msg_fields[i]),
                lim, msg_fields[i].doc);
    }
    fprintf(out, "\n### Entries (elements of `ents`)\n\n| key | type | limit | meaning |\n"
                 "|---|---|---|---|\n");
    for (const struct msg_field_desc *f = msg_entry_fields; f->key != NULL; f++) {
        msg_limit_doc(f, lim, sizeof(lim));
        fprintf(out, "| `%s` | %s | %s | %s |\n", f->key, msg_type_doc(f), lim, f->doc);
    }
    fprintf(out, "\n### Operations\n\nEvery request carries `v`, `id`, `op`; every reply `v`, `id`, "
                 "`op`, `st` and, on error, usually `err`. `?` marks an optional field. Reply "
                 "fields are required only when `st` is 0 (OK).\n\n"
                 "| op | name | request fields | request payload | reply fields | reply payload (OK) | "
                 "meaning |\n|---|---|---|---|---|---|---|\n");
    for (const struct msg_op_desc *o = msg_ops; o->name != NULL; o++) {
        fprintf(out, "| %u | %s | ", o->code, o->name);
        msg_uses_doc(out, o->req);
        fprintf(out, " | %s | ", o->req_payload ? "yes" : "no");
        msg_uses_doc(out, o->rep);
        fprintf(out, " | %s | %s |\n", o->rep_payload ? "yes" : "no", o->doc);
    }
    fprintf(out, "\n### Status codes (`st`)\n\n| st | name | meaning |\n|---|---|---|\n");
    for (const struct msg_status_desc *s = msg_statuses; s->name != NULL; s++)
        fprintf(out, "| %u | %s | %s |\n", s->code, s->name, s->doc);
}
