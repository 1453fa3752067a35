/* The records cairn-admin reads and writes on the nodes directly (keys,
 * accounts, bucket records): connections reused per node, a write to a
 * key's N ring replicas (done at a majority), and a listing of a prefix
 * merged over every node (the newest version of each key wins). Shared by
 * keys.c, accounts.c and buckets.c. */
#ifndef ADM_RECORDS_H
#define ADM_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "keys.h"
#include "msg/client.h"

#define ADM_REC_KEY_MAX 160      /* "s/keys/" + 128, "s/accounts/" + 64, "b/" + 63 */
#define ADM_REC_ETAG_MAX 64      /* a bucket record's etag: its owner id */

/* Connections to the nodes, made when first needed. */
struct adm_rec_conn {
    void *zctx;
    struct msg_client **c;
    uint32_t n;
};

void adm_rec_conn_init(struct adm_rec_conn *cx, const struct adm_keys_opts *o);
void adm_rec_conn_fini(struct adm_rec_conn *cx);
/* One request to node; *rep valid on CN_OK (the caller releases it). */
int adm_rec_call(const struct adm_keys_opts *o, struct adm_rec_conn *cx, uint32_t node,
                 struct msg *req, struct msg_reply *rep, char err[CN_ERR_LEN]);

/* One listed key, newest version over the nodes. */
struct adm_rec_ent {
    char key[ADM_REC_KEY_MAX + 1];
    size_t key_len;
    char etag[ADM_REC_ETAG_MAX + 1];
    uint64_t ts, ver;
    uint32_t flags;
    uint32_t node;               /* a node that holds this version */
};

struct adm_rec_set {
    struct adm_rec_ent *v;
    size_t n, cap;
    uint32_t answered;           /* nodes whose listing completed */
};

/* Lists prefix on every node into s (cn_free(s->v) after), sorted by key,
 * newest version of each; tombstones are dropped unless keep_tombstones.
 * Returns CN_OK when at least one node answered (others are printed on
 * stderr), else CN_IO. At most max entries over all nodes are read. */
int adm_rec_list(const struct adm_keys_opts *o, struct adm_rec_conn *cx, const char *prefix,
                 size_t prefix_len, int keep_tombstones, size_t max, struct adm_rec_set *s);

/* Whether any node holds a live key under prefix (a LIST of one). 1 yes,
 * 0 no, -1 no node answered. */
int adm_rec_any(const struct adm_keys_opts *o, struct adm_rec_conn *cx, const char *prefix,
                size_t prefix_len);

/* GET of key from node. CN_OK with *rep (release it), CN_NOTFOUND, or CN_IO
 * with err. */
int adm_rec_get(const struct adm_keys_opts *o, struct adm_rec_conn *cx, uint32_t node,
                const char *key, size_t key_len, struct msg_reply *rep, char err[CN_ERR_LEN]);

/* A record to write: payload NULL and no meta makes a DELETE (tombstone). */
struct adm_rec_write {
    const char *key;
    size_t key_len;
    const void *payload;
    size_t len;
    const char *etag;            /* NULL: "" */
    size_t etag_len;
    const void *meta;            /* NULL: none */
    size_t meta_len;
    uint64_t ts;
    int del;
};

/* Sends w to its replicas; returns how many acked (*n_rep: how many were
 * asked). Done when acks >= *n_rep / 2 + 1. */
uint32_t adm_rec_put(const struct adm_keys_opts *o, const struct adm_rec_write *w,
                     uint32_t *n_rep);

/* A timestamp newer than every listed version of key (for a rewrite or a
 * tombstone that must win): max(HLC now, newest + 1). */
uint64_t adm_rec_next_ts(uint64_t newest);

#endif
