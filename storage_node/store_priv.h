/* Internals of the storage engine shared by store.c, writer.c, compact.c and
 * scrub.c. Nothing outside the engine includes this. */
#ifndef SN_STORE_PRIV_H
#define SN_STORE_PRIV_H

#include <pthread.h>
#include <stdatomic.h>

#include "container.h"
#include "index.h"
#include "metrics.h"
#include "store.h"

struct sn_store {
    struct sn_store_opts o;
    char *dir_data, *dir_containers, *dir_index;
    struct sn_index *ix;

    /* The container table, sorted by id, and all accounting fields of the
     * containers: guarded by lock. */
    pthread_mutex_t lock;
    struct sn_container **cons;
    size_t n_cons, cap_cons;
    struct sn_container *active;   /* the writer appends here */
    uint32_t next_cid;

    /* Writer queue. */
    pthread_mutex_t wlock;
    pthread_cond_t wcond;
    struct sn_wreq *q_head, *q_tail;
    size_t q_len;
    int stopping;
    int writer_started;
    pthread_t writer;

    pthread_mutex_t admin;         /* one compaction or scrub at a time */

    atomic_uint_fast64_t puts, deletes, stale_writes, relocations, batches, syncs;
    atomic_uint_fast64_t tombstones_purged;
    atomic_uint_fast64_t copies_purged;   /* PURGE ops applied (a rebalance) */
    atomic_uint_fast64_t reads, corrupt_reads, scrubs, scrub_corrupt;
    atomic_uint_fast64_t compactions, containers_reclaimed, bytes_reclaimed;
    atomic_uint_fast64_t auto_compactions, compact_throttle_us;
    atomic_uint_fast64_t corrupt_marked, corrupt_repaired;
    atomic_int compact_auto_claimed;   /* an automatic run is queued or running */
    atomic_int compact_abort;          /* sn_compact_abort: stop automatic runs */
    uint64_t recovered_records, torn_tails;
    char *notes[SN_STORE_MAX_NOTES];   /* what recovery repaired (sn_store_notes) */
    size_t n_notes;
};

/* The container with this id, with a reference taken; NULL if there is none
 * (compacted away). */
struct sn_container *sn_store_container_get(struct sn_store *s, uint32_t cid);
/* The container with this id or NULL; no reference. Caller holds s->lock. */
struct sn_container *sn_store_container_find_locked(struct sn_store *s, uint32_t cid);
/* Adds c to the table (the table takes over the caller's reference). Caller
 * holds s->lock. */
void sn_store_container_add_locked(struct sn_store *s, struct sn_container *c);
/* Removes cid from the table and drops the table's reference. Caller holds
 * s->lock. */
void sn_store_container_remove_locked(struct sn_store *s, uint32_t cid);

/* One index batch being built by the writer or by recovery: the LevelDB
 * batch, and an overlay of the keys set in it so a later write to the same
 * key in the same batch sees the earlier one. */
struct sn_apply_ent {
    const uint8_t *key;
    uint32_t klen;
    int purged;          /* removed from the index (v unused) */
    struct sn_ival v;
};
struct sn_apply {
    struct sn_index_batch *b;
    struct sn_apply_ent *ents;
    size_t n, cap;
};

void sn_writer_apply_init(struct sn_apply *a);
void sn_writer_apply_fini(struct sn_apply *a);
/* What key holds, seen through the batch: CN_OK and *cur, CN_NOTFOUND (also
 * when the batch purged it), or an index error. */
int sn_writer_apply_lookup(struct sn_store *s, struct sn_apply *a, const uint8_t *key,
                           uint32_t klen, struct sn_ival *cur, char err[CN_ERR_LEN]);
/* Points key at nv (key must stay valid until commit); old is what it held
 * (NULL if nothing). Moves the live accounting of both containers. */
void sn_writer_apply_set(struct sn_store *s, struct sn_apply *a, const uint8_t *key,
                         uint32_t klen, const struct sn_ival *nv, const struct sn_ival *old);
/* Removes key from the index in the batch (key must stay valid until
 * commit); old is what it held. Moves old's container accounting. */
void sn_writer_apply_del(struct sn_store *s, struct sn_apply *a, const uint8_t *key,
                         uint32_t klen, const struct sn_ival *old);
/* Writes the batch and the accounting of every changed container to the
 * index and empties a. */
int sn_writer_apply_commit(struct sn_store *s, struct sn_apply *a, int sync,
                           char err[CN_ERR_LEN]);

/* Starts / stops the writer thread (stop drains the queue first). */
int sn_writer_start(struct sn_store *s, char err[CN_ERR_LEN]);
void sn_writer_stop(struct sn_store *s);

/* Makes an index value for a record stored at cid/off. */
void sn_store_ival_from(struct sn_ival *v, const struct sn_record_info *ri, uint32_t cid,
                        uint64_t off);

/* Verifies the data of the record whose header ri was read at off, reading
 * it in pieces into b. CN_OK, CN_CORRUPT (err names the block) or CN_IO. */
int sn_store_verify_data(struct sn_container *c, uint64_t off, const struct sn_record_info *ri,
                         struct sn_buf *b, char err[CN_ERR_LEN]);

#endif
