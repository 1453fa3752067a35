/* Conditional-write leases of one storage node (protocol v2 LOCK/UNLOCK and
 * PUT with `tok`). A gateway that must write a key only if its current
 * record is the one it read takes the key's lease on every replica (LOCK
 * checks the expectation and takes it atomically), writes with the token to
 * the replicas that granted it, and needs grants from a majority of the
 * replicas (and W): since each node grants one token at a time and two
 * majorities share a node, two conditional writers cannot both win. Leases are in memory only, at most SN_LEASE_MAX at once,
 * and expire after SN_LEASE_TTL_US unless a write under them is running. */
#ifndef SN_LEASE_H
#define SN_LEASE_H

#include <stdint.h>

#include "msg/msg.h"

/* Leases held at once. Memory: the table is SN_LEASE_MAX x 40 B, plus a
 * copy of each leased key (at most max_key_len): 4096 x (40 B + 2 KiB)
 * = 8.2 MiB at most with the default key limit. */
#define SN_LEASE_MAX 4096
#define SN_LEASE_TTL_US 10000000ull   /* 10 s */

struct sn_lease_table;
struct sn_store;

/* An empty table; free with sn_lease_table_free(). */
struct sn_lease_table *sn_lease_table_new(void);
void sn_lease_table_free(struct sn_lease_table *t);

/* LOCK: grants key's lease to tok if no other unexpired token holds it and
 * the key's live record is the expected one (has_ifver: its ver is ifver;
 * else: no live record). Returns MSG_ST_OK, MSG_ST_LOCKED,
 * MSG_ST_PRECONDITION (*cur_ver and *cur_ts: the live record's, 0 when none),
 * MSG_ST_BUSY (the table is full) or the read's error status (err). The
 * same token asking again is granted again (a retried LOCK). */
enum msg_status sn_lease_take(struct sn_lease_table *t, struct sn_store *s, const uint8_t *key,
                              uint32_t klen, uint64_t tok, int has_ifver, uint64_t ifver,
                              uint64_t *cur_ver, uint64_t *cur_ts, char err[CN_ERR_LEN]);

/* PUT with tok: MSG_ST_OK when tok holds key's unexpired lease (it then
 * stays held, without expiry, until sn_lease_write_end()); else
 * MSG_ST_LOCKED. */
enum msg_status sn_lease_write_begin(struct sn_lease_table *t, const uint8_t *key, uint32_t klen,
                                     uint64_t tok);
/* The write under tok's lease finished (stored or failed): releases it. */
void sn_lease_write_end(struct sn_lease_table *t, const uint8_t *key, uint32_t klen, uint64_t tok);

/* UNLOCK: releases key's lease if tok holds it and no write runs under it. */
void sn_lease_drop(struct sn_lease_table *t, const uint8_t *key, uint32_t klen, uint64_t tok);

/* Leases held now (expired ones included until reused). */
uint32_t sn_lease_count(struct sn_lease_table *t);

#endif
