/* Private to cairn-admin's repair: the state both passes share (the full
 * merge of repair.c and the digest descent of repair_digest.c) and the
 * per-key repair they both end in. */
#ifndef ADM_REPAIR_INT_H
#define ADM_REPAIR_INT_H

#include <stdint.h>

#include "repair.h"

#include "cn/ring.h"
#include "msg/client.h"

#define ADM_REPAIR_PAGE 1000

/* One key as a node listed it (key owned). */
struct adm_repair_ent {
    uint8_t *key;
    uint32_t key_len;
    uint64_t ts, ver;
    uint32_t flags;
};

/* A node's client and, for the full pass, its place in its key stream. */
struct adm_repair_cursor {
    struct msg_client *c;
    const char *address;
    struct adm_repair_ent *ents;
    uint32_t n, pos;
    int more;
    uint8_t *after;   /* last key of the page (next page starts after it) */
    uint32_t after_len;
};

struct adm_repair {
    const struct cn_cluster *cl;
    const struct adm_repair_opts *o;
    struct cn_ring *ring;
    struct adm_repair_cursor *cur;   /* one per node, in cluster order */
    uint32_t n;
    struct adm_repair_counts *counts;
    uint64_t next_id;                /* request ids, so a late reply is never taken */
};

/* Sends req to c with the next request id (set in req); counts it. CN_OK or
 * CN_IO with why. */
int adm_repair_send(struct adm_repair *rp, struct msg_client *c, struct msg *req,
                    char why[CN_ERR_LEN]);

/* Waits up to the repair's timeout for the reply to request id on c,
 * dropping late replies to earlier requests; counts the reply's bytes
 * (header and payload frames). Returns as msg_client_recv(); on CN_OK the
 * caller releases rep. */
int adm_repair_recv(struct adm_repair *rp, struct msg_client *c, uint64_t id,
                    struct msg_reply *rep, char why[CN_ERR_LEN]);

/* The next reply on c, whatever its id, within timeout_ms; counts its
 * bytes. Returns as msg_client_recv(). */
int adm_repair_recv_any(struct adm_repair *rp, struct msg_client *c, int timeout_ms,
                        struct msg_reply *rep, char why[CN_ERR_LEN]);

/* adm_repair_send() then adm_repair_recv() (req is copied, not changed). */
int adm_repair_call(struct adm_repair *rp, struct msg_client *c, const struct msg *req,
                    struct msg_reply *rep, char why[CN_ERR_LEN]);

/* Compares one key across the nodes (have[i]: node i's entry or NULL; all
 * entries hold the same key), counts the replicas of the key's ring replica
 * set that are missing or older, and, unless dry_run, copies the newest
 * version onto them. */
void adm_repair_key(struct adm_repair *rp, const struct adm_repair_ent *const *have);

/* Bytewise key order. */
int adm_repair_key_cmp(const uint8_t *a, uint32_t al, const uint8_t *b, uint32_t bl);

/* The digest pass (repair_digest.c): CN_OK, CN_IO with err when a node
 * failed, or CN_NOTFOUND when a node does not know DIGEST (protocol 1.0:
 * the caller falls back to the full pass). */
int adm_repair_digest_run(struct adm_repair *rp, char err[CN_ERR_LEN]);

#endif
