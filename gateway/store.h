/* Records on the cluster: placement on the consistent-hash ring, replication
 * to N replicas with W write acks, reads that try the replicas in order, and
 * listings merged from every node as one sorted, de-duplicated page. The S3
 * handlers speak to this layer; it speaks to the nodes through the
 * per-thread storage client. One gw_store per event-loop thread. */
#ifndef GW_STORE_H
#define GW_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "storage_client.h"

#include "cn/ring.h"

struct gw_store;

/* Immutable record bytes shared by the sends to every replica: a counted
 * reference, released from any thread (ZeroMQ frees payloads from its I/O
 * thread). */
struct gw_blob;

/* Takes the bytes of buf (the evbuffer is owned by the blob from now on and
 * made contiguous, which copies only when it had several chains). One
 * reference; release with gw_blob_unref(). */
struct gw_blob *gw_blob_from_evbuffer(struct evbuffer *buf);
const void *gw_blob_data(const struct gw_blob *b);
size_t gw_blob_len(const struct gw_blob *b);
void gw_blob_ref(struct gw_blob *b);
void gw_blob_unref(struct gw_blob *b);

/* Creates the store of one thread over a shared ring. n_replicas and
 * write_quorum are already resolved (1 <= w <= n <= nodes). */
struct gw_store *gw_store_new(const struct cn_ring *ring, struct gw_storage_client *client,
                              uint32_t n_replicas, uint32_t write_quorum);
void gw_store_free(struct gw_store *s);

/* Outcome of an operation. rc: CN_OK; CN_NOTFOUND (no live record);
 * CN_TIMEOUT or CN_IO (not enough replicas answered: ServiceUnavailable);
 * CN_CORRUPT (every replica that answered had bad bytes); CN_INVAL (a node
 * refused the request: a bug or a limit, InternalError). For GET and HEAD
 * with CN_OK, reply is the winning node's reply (valid during the callback;
 * gw_storage_reply_move_payload() may take its payload). */
struct gw_store_result {
    int rc;
    struct gw_storage_reply *reply;
    uint32_t acks;
    char err[CN_ERR_LEN];
};

typedef void (*gw_store_cb)(struct gw_store_result *res, void *arg);

/* A record to write. */
struct gw_store_record {
    const void *key;
    size_t key_len;
    const void *etag;
    size_t etag_len;
    const void *meta;
    size_t meta_len;
    uint64_t ver;
    uint64_t ts;
};

/* Writes rec with data (NULL: empty) to the key's replicas; cb runs once, when
 * W replicas acked (CN_OK) or when W can no longer be reached. rec's bytes
 * are encoded before this returns; data is referenced until every send is
 * done. */
void gw_store_put(struct gw_store *s, const struct gw_store_record *rec, struct gw_blob *data,
                  gw_store_cb cb, void *arg);

/* Writes a tombstone (ver, ts) to the key's replicas, W acks. */
void gw_store_delete(struct gw_store *s, const void *key, size_t key_len, uint64_t ver,
                     uint64_t ts, gw_store_cb cb, void *arg);

/* Reads bytes [off, off+len) (len 0 with whole = 1: the whole record) from
 * the first replica that has the record; on an error, a timeout or a plain
 * NOT_FOUND the next replica is tried; a tombstone ends the search. */
void gw_store_get(struct gw_store *s, const void *key, size_t key_len, int whole, uint64_t off,
                  uint64_t len, gw_store_cb cb, void *arg);

/* The record's size, etag and meta without data (same replica order). */
void gw_store_head(struct gw_store *s, const void *key, size_t key_len, gw_store_cb cb,
                   void *arg);

/* One entry of a merged listing; key is a heap copy owned by the result. */
struct gw_store_entry {
    char *key;
    uint32_t key_len;
    uint64_t size;
    char etag[129];
    uint64_t ts;
    uint64_t ver;
};

struct gw_store_list_result {
    int rc;                     /* CN_OK, or CN_TIMEOUT/CN_IO when a node failed */
    struct gw_store_entry *ents;
    uint32_t n_ents;
    int more;                   /* keys may follow the last entry */
    char err[CN_ERR_LEN];
};

typedef void (*gw_store_list_cb)(struct gw_store_list_result *res, void *arg);

/* Lists up to limit keys starting with prefix and after `after` from every
 * node and merges them: sorted, one entry per key (newest ts, ver), cut at
 * the first key some node might still hold more before. The result is valid
 * during the callback only. */
void gw_store_list(struct gw_store *s, const void *prefix, size_t prefix_len, const void *after,
                   size_t after_len, uint32_t limit, gw_store_list_cb cb, void *arg);

#endif
