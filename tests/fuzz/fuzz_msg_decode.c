/* Fuzz target: a storage node's view of a frame. The first input byte picks
 * request/reply and whether a payload frame follows; the rest is the header.
 * Every input must decode or be refused without a leak or a fault, and what
 * decodes must encode again and decode to the same osize and owner
 * (protocol version 3: fields, and optional keys of LIST entries). */
#include <stdint.h>
#include <string.h>

#include "msg/msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct msg_limits lim;
    struct msg m;
    char err[CN_ERR_LEN];
    if (size < 1)
        return 0;
    msg_limits_default(&lim);
    int is_reply = data[0] & 1;
    const void *payload = (data[0] & 2) ? "payload" : NULL;
    if (msg_decode(&m, is_reply, data + 1, size - 1, payload, payload ? 7 : 0, &lim, err) == CN_OK) {
        msgpack_sbuffer sb;
        msgpack_sbuffer_init(&sb);
        if (msg_encode(&m, is_reply, &sb, err) != CN_OK)
            __builtin_trap(); /* anything that decodes must encode */
        struct msg d;
        if (msg_decode(&d, is_reply, sb.data, sb.size, payload, payload ? 7 : 0, &lim, err) !=
            CN_OK)
            __builtin_trap(); /* ... and what it encodes must decode */
        /* (the answer to an unreadable request, op 0, is encoded as its
         * header alone: nothing else to compare) */
        int fields = m.op != 0;
        if (fields && (MSG_HAS(&d, MSG_F_OSIZE) != MSG_HAS(&m, MSG_F_OSIZE) ||
                       (MSG_HAS(&m, MSG_F_OSIZE) && d.osize != m.osize) || d.n_ents != m.n_ents))
            __builtin_trap();
        for (uint32_t i = 0; fields && i < m.n_ents; i++)
            if (d.ents[i].has_osize != m.ents[i].has_osize ||
                (m.ents[i].has_osize && d.ents[i].osize != m.ents[i].osize) ||
                d.ents[i].has_owner != m.ents[i].has_owner ||
                (m.ents[i].has_owner && d.ents[i].owner.len != m.ents[i].owner.len))
                __builtin_trap();
        if (fields && MSG_HAS(&d, MSG_F_OWNER) != MSG_HAS(&m, MSG_F_OWNER))
            __builtin_trap();
        if ((MSG_HAS(&m, MSG_F_OSIZE) || MSG_HAS(&m, MSG_F_OWNER) || d.v < m.v) && d.v < 3)
            __builtin_trap(); /* osize goes out as version 3, and no version goes down */
        msg_release(&d);
        msgpack_sbuffer_destroy(&sb);
    }
    msg_release(&m);
    return 0;
}
