/* Hints a node keeps for its peers (hinted handoff, docs/cluster.md): "node
 * X missed the write (ts, ver) of key K", written by a gateway (HINT_ADD) to
 * a replica that took the write, and listed and dropped by whichever gateway
 * replays them once X is back (HINT_TAKE). A hint is a reference, not a
 * copy: the record itself is on this node (it took the write) and on the
 * other replicas, and the replay copies the newest one with the repair path.
 * Hints live in the index's 'h' keyspace (index.h), never in listings:
 *   'h' + u8 len + target id + key -> u64 ts, u64 ver, u64 added (µs), LE
 * so one hint per (target, key), and a target's hints sort by key. Bounded
 * by a count and a byte total (key + value bytes); when full a new hint is
 * refused (the ones held, the oldest, are kept) and counted. */
#ifndef SN_HINT_H
#define SN_HINT_H

#include <stddef.h>
#include <stdint.h>

#include "cn/rc.h"
#include "index.h"

#define SN_HINT_MAX_TARGET 255u    /* bytes of a target id */
#define SN_HINT_MAX_TARGETS 1024u  /* distinct targets held (one per peer) */
#define SN_HINT_VAL_LEN 24u

struct sn_hint_opts {
    uint64_t max_hints;   /* most hints held, all targets together */
    uint64_t max_bytes;   /* most bytes of hint keys + values held */
    int sync;             /* make each added hint durable before answering */
};

struct sn_hints;

/* Opens the hint store over ix (which must outlive it): counts the hints
 * held, per target (one pass over the 'h' keyspace; entries that do not
 * parse are deleted). On error *out is NULL and err says why. */
int sn_hints_open(struct sn_index *ix, const struct sn_hint_opts *o, struct sn_hints **out,
                  char err[CN_ERR_LEN]);
void sn_hints_free(struct sn_hints *h);

/* Keeps the hint (target, key, ts, ver), or moves the one held for (target,
 * key) to (ts, ver) when that is newer. CN_OK with *applied (0: the held one
 * was newer or equal); CN_INVAL for an empty or too long target or key;
 * CN_TOOBIG when the store is full (refused and counted); CN_IO with err. */
int sn_hints_add(struct sn_hints *h, const uint8_t *target, uint32_t tlen, const uint8_t *key,
                 uint32_t klen, uint64_t ts, uint64_t ver, int *applied, char err[CN_ERR_LEN]);

/* Drops target's hint of key if the hint held is not newer than (ts, ver)
 * (a write missed after the replay read it keeps its hint). Returns CN_OK
 * with *removed 0/1, CN_INVAL or CN_IO. */
int sn_hints_remove(struct sn_hints *h, const uint8_t *target, uint32_t tlen,
                    const uint8_t *key, uint32_t klen, uint64_t ts, uint64_t ver, int *removed,
                    char err[CN_ERR_LEN]);

/* Called for each hint listed; key is valid during the call only. */
typedef void (*sn_hint_list_cb)(void *arg, const uint8_t *key, uint32_t klen, uint64_t ts,
                                uint64_t ver);

/* Lists up to limit hints of target whose key sorts after `after` (alen 0:
 * from the first), in key order; *more says whether more follow. */
int sn_hints_list(struct sn_hints *h, const uint8_t *target, uint32_t tlen,
                  const uint8_t *after, uint32_t alen, uint32_t limit, sn_hint_list_cb cb,
                  void *arg, int *more, char err[CN_ERR_LEN]);

/* One target's hints. */
struct sn_hint_target {
    uint8_t id[SN_HINT_MAX_TARGET];
    uint32_t id_len;
    uint64_t count;
    uint64_t bytes;
};

/* How many targets hold hints now. */
uint32_t sn_hints_target_count(struct sn_hints *h);

/* Copies up to max targets that hold hints into out; returns how many. */
uint32_t sn_hints_targets(struct sn_hints *h, struct sn_hint_target *out, uint32_t max);

struct sn_hint_stats {
    uint64_t held, bytes;          /* now */
    uint64_t added;                /* new hints kept */
    uint64_t updated;              /* held hints moved to a newer version */
    uint64_t refused;              /* new hints refused: the store was full */
    uint64_t removed;              /* hints dropped after their replay */
    uint64_t dropped_corrupt;      /* entries that did not parse (at open) */
};
void sn_hints_stats(struct sn_hints *h, struct sn_hint_stats *st);

/* The longest raw hint key. */
#define SN_HINT_KEY_MAX (2u + SN_HINT_MAX_TARGET + 65536u)

/* Writes the raw hint key of (target, key) into out (SN_HINT_KEY_MAX bytes;
 * tlen 1..SN_HINT_MAX_TARGET, klen 0..SN_RECORD_MAX_KEY: 0 gives the prefix
 * of target's hints); returns its length. */
size_t sn_hint_key_encode(uint8_t *out, const uint8_t *target, uint32_t tlen,
                          const uint8_t *key, uint32_t klen);

/* Parses a raw hint key ('h' + len + target + key): CN_OK with the target
 * and key pointing into k, else CN_CORRUPT. */
int sn_hint_key_parse(const uint8_t *k, size_t klen, const uint8_t **target, uint32_t *tlen,
                      const uint8_t **key, uint32_t *keylen);
/* Parses a hint value: CN_OK or CN_CORRUPT. */
int sn_hint_val_parse(const uint8_t *v, size_t vlen, uint64_t *ts, uint64_t *ver,
                      uint64_t *added_us);

/* Checks that the counts match the keyspace (one pass); CN_OK or
 * CN_CORRUPT. For unit tests. */
int sn_hints_validate(struct sn_hints *h);

#endif
