/* Fuzz target: hinted handoff's decoders on a storage node. The first input
 * byte picks what the rest is: bit 1 clear, a HINT_ADD / HINT_TAKE header
 * frame (bit 0: request or reply) through msg_decode(), whose fields then
 * go where the node puts them (a HINT_ADD's node and key into a hint key,
 * parsed back; a HINT_TAKE's `ents`, the keys of hints to drop); bit 1 set,
 * a raw index entry of the hint keyspace (key, then a 24-byte value), as
 * the node reads them back at open and in listings. */
#include <stdint.h>
#include <string.h>

#include "hint.h"
#include "msg/msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t fuzz_hint_buf[SN_HINT_KEY_MAX];

/* Encodes (target, key) as the node would and checks the parse gives them back. */
static void fuzz_hint_roundtrip(const struct msg_bytes *target, const struct msg_bytes *key)
{
    if (target->len < 1 || target->len > SN_HINT_MAX_TARGET || key->len < 1 ||
        key->len > SN_RECORD_MAX_KEY)
        return;   /* the node refuses these (BAD_REQUEST) */
    size_t n = sn_hint_key_encode(fuzz_hint_buf, target->ptr, target->len, key->ptr, key->len);
    const uint8_t *t, *k;
    uint32_t tl, kl;
    if (sn_hint_key_parse(fuzz_hint_buf, n, &t, &tl, &k, &kl) != CN_OK || tl != target->len ||
        kl != key->len || memcmp(t, target->ptr, tl) != 0 || memcmp(k, key->ptr, kl) != 0)
        __builtin_trap();
}

static void fuzz_hint_msg(const uint8_t *data, size_t size, int is_reply)
{
    struct msg_limits lim;
    struct msg m;
    char err[CN_ERR_LEN];
    msg_limits_default(&lim);
    if (msg_decode(&m, is_reply, data, size, NULL, 0, &lim, err) == CN_OK &&
        (m.op == MSG_OP_HINT_ADD || m.op == MSG_OP_HINT_TAKE)) {
        if (msg_version_needed(&m, is_reply) != 2)
            __builtin_trap();
        if (MSG_HAS(&m, MSG_F_NODE) && MSG_HAS(&m, MSG_F_KEY))
            fuzz_hint_roundtrip(&m.node, &m.key);
        for (uint32_t i = 0; i < m.n_ents && MSG_HAS(&m, MSG_F_NODE); i++)
            fuzz_hint_roundtrip(&m.node, &m.ents[i].key);
        for (uint32_t i = 0; i < m.n_stats; i++)
            if (m.stats[i].name.len > 256)
                __builtin_trap();
    }
    msg_release(&m);
}

static void fuzz_hint_raw(const uint8_t *data, size_t size)
{
    const uint8_t *t, *k;
    uint32_t tl, kl;
    uint64_t ts, ver, added;
    if (size < SN_HINT_VAL_LEN)
        return;
    size_t klen = size - SN_HINT_VAL_LEN;
    if (sn_hint_key_parse(data, klen, &t, &tl, &k, &kl) == CN_OK) {
        if (tl < 1 || t + tl != k || k + kl != data + klen)
            __builtin_trap();
        size_t n = sn_hint_key_encode(fuzz_hint_buf, t, tl, k, kl);
        if (n != klen || memcmp(fuzz_hint_buf, data, n) != 0)
            __builtin_trap();
    }
    (void)sn_hint_val_parse(data + klen, SN_HINT_VAL_LEN, &ts, &ver, &added);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 2)
        fuzz_hint_raw(data + 1, size - 1);
    else
        fuzz_hint_msg(data + 1, size - 1, data[0] & 1);
    return 0;
}
