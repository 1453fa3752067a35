/* The all-replica HEAD (store_probe.h): one HEAD per replica through the
 * store's client, the newest (ts, ver) kept, the callback when the last
 * reply (or its failure, which the client always reports) is in. */
#include "store_probe.h"

#include <string.h>

#include "store.h"

#include "msg/msg.h"

#include "cn/alloc.h"
#include "cn/hlc.h"
#include "cn/version.h"

struct gw_store_probe {
    gw_store_probe_cb cb;
    void *arg;
    uint32_t out;
    struct gw_store_probe_result r;
};

static void gw_store_probe_on_reply(struct gw_storage_reply *rep, void *arg)
{
    struct gw_store_probe *p = arg;
    int state = -1;
    if (rep->rc == CN_OK && rep->m.st == MSG_ST_OK)
        state = 1;
    else if (rep->rc == CN_OK && rep->m.st == MSG_ST_NOT_FOUND)
        state = (rep->m.flags & MSG_FLAG_TOMBSTONE) ? 2 : 0;
    if (state >= 0) {
        p->r.answered++;
        if (state != 0) {
            cn_hlc_observe(cn_hlc_default(), rep->m.ts);
            if (p->r.state == 0 || cn_version_newer(rep->m.ts, rep->m.ver, p->r.ts, p->r.ver)) {
                p->r.state = state;
                p->r.ts = rep->m.ts;
                p->r.ver = rep->m.ver;
                p->r.etag_len = state == 1 ? CN_MIN(rep->m.etag.len, sizeof(p->r.etag) - 1) : 0;
                memcpy(p->r.etag, rep->m.etag.ptr, p->r.etag_len);
                p->r.etag[p->r.etag_len] = '\0';
                p->r.has_osize = state == 1 && MSG_HAS(&rep->m, MSG_F_OSIZE);
                p->r.osize = p->r.has_osize ? rep->m.osize : 0;
            }
        }
    }
    if (--p->out == 0) {
        p->cb(&p->r, p->arg);
        cn_free(p);
    }
}

void gw_store_probe(struct gw_store *s, const void *key, size_t key_len, gw_store_probe_cb cb,
                    void *arg)
{
    uint32_t nodes[GW_STORE_MAX_REPLICAS];
    struct gw_store_probe *p = cn_calloc(1, sizeof(*p));
    p->cb = cb;
    p->arg = arg;
    /* during a map change the record may still be only on its previous
     * replicas: ask them too, or a collector would take a live parent for
     * a missing one */
    p->r.asked = gw_store_replicas_any(s, key, key_len, nodes, GW_STORE_MAX_REPLICAS);
    if (p->r.asked == 0) {
        cb(&p->r, arg);
        cn_free(p);
        return;
    }
    p->out = p->r.asked;   /* replies never come inside the send */
    struct gw_storage_client *client = gw_store_client(s);
    for (uint32_t i = 0; i < p->r.asked; i++) {
        struct msg m;
        msg_init_request(&m, MSG_OP_HEAD, 0);
        m.key = (struct msg_bytes){(const uint8_t *)key, (uint32_t)key_len};
        MSG_SET(&m, MSG_F_KEY);
        gw_storage_client_send(client, nodes[i], &m, NULL, gw_store_probe_on_reply, p);
    }
}
