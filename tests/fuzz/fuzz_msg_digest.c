/* Fuzz target: the DIGEST message as a node and a repair client see it. The
 * first input byte picks request or reply; the rest is a header frame, which
 * goes through msg_decode() (its msgpack pre-walk, msg_msgpack_bounded(),
 * first). What decodes as a DIGEST has its packed fields unpacked as the
 * node (arcs) and cairn-admin (sums) do, and its range split and walked as
 * the node does; the bounds must never decrease. */
#include <stdint.h>
#include <string.h>

#include "msg/digest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fuzz_digest_cmp(const uint8_t *a, uint32_t al, const uint8_t *b, uint32_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c != 0 ? c : (al < bl ? -1 : al > bl);
}

static void fuzz_digest_split(const struct msg *m)
{
    static struct msg_digest_split sp;
    static uint8_t b1[4096 + 8], b2[4096 + 8];
    if (m->fanout < 1 || m->fanout > MSG_DIGEST_MAX_FANOUT)
        return;
    const uint8_t *a = MSG_HAS(m, MSG_F_AFTER) ? m->after.ptr : (const uint8_t *)"";
    uint32_t al = MSG_HAS(m, MSG_F_AFTER) ? m->after.len : 0;
    int has_u = MSG_HAS(m, MSG_F_UPTO);
    if (has_u && fuzz_digest_cmp(m->upto.ptr, m->upto.len, a, al) <= 0)
        return;   /* the node refuses it */
    msg_digest_split_init(&sp, a, al, has_u ? m->upto.ptr : NULL, has_u ? m->upto.len : 0, has_u,
                          m->fanout);
    for (uint32_t i = 1; i + 1 < m->fanout; i++) {
        uint32_t l1 = msg_digest_split_bound(&sp, i, b1);
        uint32_t l2 = msg_digest_split_bound(&sp, i + 1, b2);
        if (fuzz_digest_cmp(b1, l1, b2, l2) > 0)
            __builtin_trap();
    }
    if (MSG_HAS(m, MSG_F_LO) && m->lo.len > 0)
        (void)msg_digest_split_index(&sp, 0, m->lo.ptr, m->lo.len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct msg_limits lim;
    struct msg m;
    char err[CN_ERR_LEN];
    static struct msg_digest_sum sums[MSG_DIGEST_MAX_FANOUT];
    static struct msg_digest_arc arcs[MSG_DIGEST_MAX_ARCS];
    uint32_t n = 0;
    if (size < 1)
        return 0;
    msg_limits_default(&lim);
    int is_reply = data[0] & 1;
    if (msg_decode(&m, is_reply, data + 1, size - 1, NULL, 0, &lim, err) == CN_OK &&
        m.op == MSG_OP_DIGEST) {
        if (MSG_HAS(&m, MSG_F_SUMS) &&
            msg_digest_sums_unpack(&m.sums, sums, MSG_DIGEST_MAX_FANOUT, &n) == CN_OK &&
            n > MSG_DIGEST_MAX_FANOUT)
            __builtin_trap();
        if (MSG_HAS(&m, MSG_F_ARCS) &&
            msg_digest_arcs_unpack(&m.arcs, arcs, MSG_DIGEST_MAX_ARCS, &n) == CN_OK) {
            for (uint32_t i = 1; i < n; i++)
                if (arcs[i].first <= arcs[i - 1].last)
                    __builtin_trap();
            if (n > 0 && !msg_digest_arcs_contain(arcs, n, arcs[n - 1].last))
                __builtin_trap();
        }
        if (!is_reply)
            fuzz_digest_split(&m);
        if (MSG_HAS(&m, MSG_F_LO) && is_reply) {
            static struct msg_digest_split sp;
            msg_digest_split_init(&sp, m.lo.ptr, m.lo.len, NULL, 0, 0, 16);
        }
    }
    msg_release(&m);
    return 0;
}
