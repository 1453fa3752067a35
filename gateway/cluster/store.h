/* Records on the cluster: placement on the consistent-hash ring, replication
 * to N replicas answered at W acks (D for deletes), reads answered by R
 * replicas (newest version wins, stale replicas are repaired), replicas the
 * gateway holds down skipped and hinted (handoff.h), and listings merged
 * from every node as one sorted page where the newest version of each key
 * wins and tombstones hide stale copies. The S3 handlers speak to this
 * layer; it speaks to the nodes through the per-thread storage client. One
 * gw_store per event-loop thread. docs/cluster.md describes the rules. */
#ifndef GW_STORE_H
#define GW_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "storage_client.h"

#include "cn/ring.h"

struct gw_store;

#define GW_STORE_MAX_REPLICAS 16

/* Immutable record bytes shared by the sends to every replica: a counted
 * reference, released from any thread (ZeroMQ frees payloads from its I/O
 * thread). */
struct gw_blob;

/* Takes the bytes of buf (the evbuffer is owned by the blob from now on and
 * made contiguous, which copies only when it had several chains). One
 * reference; release with gw_blob_unref(). */
struct gw_blob *gw_blob_from_evbuffer(struct evbuffer *buf);
/* Takes len bytes at data, which stay valid until the last reference goes:
 * then release(data, arg) runs, from whichever thread dropped it (a pool's
 * give-back, lo_pool.h). One reference; release with gw_blob_unref(). */
struct gw_blob *gw_blob_from_buffer(const void *data, size_t len,
                                    void (*release)(void *data, void *arg), void *arg);
const void *gw_blob_data(const struct gw_blob *b);
size_t gw_blob_len(const struct gw_blob *b);
void gw_blob_ref(struct gw_blob *b);
void gw_blob_unref(struct gw_blob *b);

/* Creates the store of one thread over a shared ring. n_replicas and
 * write_quorum are already resolved (1 <= w <= n <= nodes). */
struct gw_store *gw_store_new(const struct cn_ring *ring, struct gw_storage_client *client,
                              uint32_t n_replicas, uint32_t write_quorum);
/* What a store places keys by (cluster.c makes one per cluster map): ring
 * node i is client node i. */
struct gw_store_view {
    const struct cn_ring *ring;      /* replicas of every operation */
    const struct cn_ring *fallback;  /* NULL, or the ring of the map before: a GET or
                                        HEAD that finds no record (and no tombstone) on
                                        ring's replicas asks its replicas there too */
    const uint32_t *members;         /* the nodes a listing asks (those of the map,
                                        leaving ones too); NULL: every ring node */
    uint32_t n_members;
};
/* Switches the store to v (copied; the rings and members must outlive the
 * store or the next switch). Operations already started keep their
 * replicas. On the store's thread. */
void gw_store_set_view(struct gw_store *s, const struct gw_store_view *v);

/* Frees the store; operations still waiting for node replies finish first
 * (the store's memory goes with the last of them, when the client fails
 * them at its own free). */
void gw_store_free(struct gw_store *s);

struct gw_node_health;
struct gw_handoff;

/* Replication settings beyond N and W, resolved by the caller. */
struct gw_store_options {
    uint32_t read_quorum;   /* R: replicas whose versions a read compares (1..N) */
    uint32_t delete_quorum; /* D: acks a delete needs (1..N) */
    struct gw_handoff *handoff;   /* shared hint counters, NULL: no hints */
    int replay;                   /* this store runs the gateway's hint replay */
    int64_t replay_interval_ms;   /* how often the nodes are asked for hints */
    uint32_t replay_inflight;     /* most key repairs in flight per holder */
};

/* Sets R, D and hinted handoff (defaults before: R = 1, D = W, no hints).
 * The node states come from the client (gw_storage_client_set_health). */
void gw_store_configure(struct gw_store *s, const struct gw_store_options *o);

/* Keeps the store's memory until gw_store_unhold() (the hint replay's
 * requests in flight); gw_store_free() then frees it with the last. */
void gw_store_hold(struct gw_store *s);
void gw_store_unhold(struct gw_store *s);

/* The client the store sends with. */
struct gw_storage_client *gw_store_client(const struct gw_store *s);

/* The replicas of key in ring order (at most max, at most N). */
uint32_t gw_store_replicas(const struct gw_store *s, const void *key, size_t key_len,
                           uint32_t *out, uint32_t max);

/* The replicas of key in ring order and, while a map change is in progress
 * (a previous map's ring is kept for reads that miss), then its replicas in
 * that ring that are not among them: every node that may hold the key. At
 * most max. */
uint32_t gw_store_replicas_any(const struct gw_store *s, const void *key, size_t key_len,
                               uint32_t *out, uint32_t max);

/* The nodes a listing asks (the view's members: those of the map, leaving
 * ones too), at most max, into out; returns how many. */
uint32_t gw_store_members(const struct gw_store *s, uint32_t *out, uint32_t max);

/* Counters of one store (this thread). */
struct gw_store_stats {
    uint64_t read_repairs;    /* key repairs started because a read saw a stale replica */
    uint64_t hints_added;     /* writes a replica missed, hinted on a replica that took them */
    uint64_t hints_dropped;   /* writes a replica missed that no replica would keep a hint of */
    uint64_t skipped_down;    /* replica sends skipped because the node was down */
    uint64_t read_fallbacks;  /* R > 1 reads whose data was read in a second round trip */
    uint64_t read_widened;    /* R > 1 reads that asked more than R replicas: late answers */
    uint64_t read_prev_ring;  /* reads that missed and asked the previous map's replicas */
};
void gw_store_stats(const struct gw_store *s, struct gw_store_stats *st);

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
    /* gw_store_lock() only: the replicas that granted the lease, and how
     * many answered PRECONDITION / LOCKED */
    uint32_t granted[GW_STORE_MAX_REPLICAS];
    uint32_t n_granted, precondition, locked;
    uint32_t precondition_absent; /* of those PRECONDITION: the key had no live record */
    int tombstone;  /* reads with CN_NOTFOUND: a replica holds a tombstone (deleted) */
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
    /* protocol version 3: the object's size, for a large object's parent
     * record (lo_map.h); sent as `osize`, or folded into the etag for a
     * node of version < 3 (storage_client.h) */
    int has_osize;
    uint64_t osize;
    /* protocol version 3: the record's owner (a bucket record's), sent as
     * `owner` with no etag, or as the etag to a node of version < 3 */
    const void *owner;           /* NULL: none */
    size_t owner_len;
    /* a conditional write (gw_store_lock): the token goes with the PUT to
     * the n_tok_nodes replicas in tok_nodes, and only their acks count
     * toward W; the other replicas get a plain PUT. n_tok_nodes 0: none */
    uint64_t tok;
    const uint32_t *tok_nodes;
    uint32_t n_tok_nodes;
};

/* Writes rec with data (NULL: empty) to the key's replicas; cb runs once, when
 * W replicas acked (CN_OK) or when W can no longer be reached. Replicas the
 * gateway holds down are not sent to (while W up replicas remain) and get a
 * hint instead, as do replicas that fail or time out; so do, for a write
 * under a lease (n_tok_nodes), the replicas that did not grant it. rec's bytes are
 * encoded before this returns; data is referenced until every send is
 * done. */
void gw_store_put(struct gw_store *s, const struct gw_store_record *rec, struct gw_blob *data,
                  gw_store_cb cb, void *arg);

/* Fills rec's etag, meta, osize and owner from a GET or HEAD reply m (their
 * bytes borrowed from m): a rewrite of a record (a repair, a metadata
 * change, a restored version) keeps everything that says what it is. */
void gw_store_record_from_reply(struct gw_store_record *rec, const struct msg *m);

/* Sends rec with data (NULL: empty) to one node, with no quorum, hint or
 * retry: the building block of repairs. cb gets the node's reply. */
void gw_store_send_record(struct gw_store *s, uint32_t node, const struct gw_store_record *rec,
                          struct gw_blob *data, gw_storage_reply_cb cb, void *arg);

/* Takes the conditional-write lease of key for tok on its replicas (LOCK,
 * proto/PROTOCOL.md): granted by a replica whose live record has version
 * ifver (has_ifver) or none (!has_ifver). cb runs once every replica sent
 * to answered or timed out: rc CN_OK when at least max(W, a majority of
 * the replicas) granted (res->granted
 * names them: write with rec.tok = tok to those), else CN_ERR with the
 * grants already released and res->precondition / res->locked counting the
 * refusals (res->precondition_absent: how many of those found no live
 * record; other failures: res->err). Each node grants one token at a
 * time and two majorities share a node, so at most one of several racing
 * writers gets CN_OK. */
void gw_store_lock(struct gw_store *s, const void *key, size_t key_len, uint64_t tok,
                   int has_ifver, uint64_t ifver, gw_store_cb cb, void *arg);

/* Releases key's lease held by tok on the given replicas (fire and forget:
 * a lease not released expires on its own). */
void gw_store_unlock(struct gw_store *s, const void *key, size_t key_len, uint64_t tok,
                     const uint32_t *nodes, uint32_t n_nodes);

/* Writes a tombstone (ver, ts) to the key's replicas, D acks. */
void gw_store_delete(struct gw_store *s, const void *key, size_t key_len, uint64_t ver,
                     uint64_t ts, gw_store_cb cb, void *arg);

/* Reads bytes [off, off+len) (len 0 with whole = 1: the whole record).
 * Replicas are tried up ones first, down ones last. R = 1: the first replica
 * that has the record answers; on an error, a timeout or a plain NOT_FOUND
 * the next is tried (and a replica that lacked the record is repaired); a
 * tombstone ends the search. R > 1 (a digest read): the first R replicas
 * are asked at once, the first one (up ones first) for the data (GET), the
 * others for their version (HEAD); a replica that fails is replaced by the
 * next one, and when the R answers are late (twice the usual time, 2..50
 * ms; a GET alone also gets the time its record's bytes need, up to 250
 * ms) every replica is asked. The newest of the first R answers wins (a
 * tombstone: NOT_FOUND). When the GET holds it, its answer is served;
 * otherwise (the GET older, failed or late) the data is read from a replica
 * that answered with the newest version. Older or silent replicas among
 * those asked are repaired; fewer than R answers is a failure (CN_IO). */
void gw_store_get(struct gw_store *s, const void *key, size_t key_len, int whole, uint64_t off,
                  uint64_t len, gw_store_cb cb, void *arg);

/* gw_store_get() of bytes [off, off+len) of a record that is never
 * overwritten (a chunk: its key carries the object's version), so any one
 * replica that has it is right: R is 1 whatever consistency.read says, which
 * spares a large-object GET a version round trip per slice. */
void gw_store_get_immutable(struct gw_store *s, const void *key, size_t key_len, uint64_t off,
                            uint64_t len, gw_store_cb cb, void *arg);

/* The record's size, etag and meta without data (same replica order; with
 * R > 1 the replicas are asked as for a GET, every one a HEAD, and the
 * newest of the first R answers is served). */
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
    uint32_t flags;             /* record flags (a tombstone only from gw_store_list_all) */
    int has_osize;              /* the entry's osize (protocol version 3) */
    uint64_t osize;
    int has_owner;              /* the entry's owner (protocol version 3) */
    char owner[129];
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
 * node that is up, tombstones included, and merges them: sorted, one entry
 * per key, the newest (ts, ver) wins and a key whose newest version is a
 * tombstone is left out; cut at the first key some node might still hold
 * more before. Pages of tombstones are read through until a live key or the
 * end is found, so an empty result with more = 0 means no key. Fails
 * (CN_IO/CN_TIMEOUT) when min(W, D) or more nodes did not answer, since an
 * acknowledged write or delete could then be missing. The result is valid
 * during the callback only. */
void gw_store_list(struct gw_store *s, const void *prefix, size_t prefix_len, const void *after,
                   size_t after_len, uint32_t limit, gw_store_list_cb cb, void *arg);

/* gw_store_list() that also answers a key whose newest version is a
 * tombstone (flags MSG_FLAG_TOMBSTONE): the rebalance walk, which must
 * move a delete to the key's new owners before it purges the old copies. */
void gw_store_list_all(struct gw_store *s, const void *prefix, size_t prefix_len,
                       const void *after, size_t after_len, uint32_t limit, gw_store_list_cb cb,
                       void *arg);

#endif
