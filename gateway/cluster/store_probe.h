/* A HEAD of one key on every one of its replicas at once, answered with the
 * newest version any of them holds — a tombstone's time included, which a
 * quorum read (store.h) turns into a plain NOT_FOUND. For background
 * workers that must know when a record last changed (the chunk collector,
 * s3/collector.h). Nothing is repaired; no hint is written. */
#ifndef GW_STORE_PROBE_H
#define GW_STORE_PROBE_H

#include <stddef.h>
#include <stdint.h>

struct gw_store;

struct gw_store_probe_result {
    uint32_t asked;          /* replicas of the key */
    uint32_t answered;       /* of them, those that answered OK or NOT_FOUND */
    int state;               /* of the newest answer: 0 no record, 1 live, 2 tombstone */
    uint64_t ts, ver;        /* its version (state != 0) */
    char etag[129];          /* a live record's etag field, NUL-terminated (cut at 128) */
    size_t etag_len;
    int has_osize;           /* a live record's osize (protocol version 3) */
    uint64_t osize;
};

/* r is valid during the call only. */
typedef void (*gw_store_probe_cb)(const struct gw_store_probe_result *r, void *arg);

/* HEADs key on each of its replicas (and, while a map change is in
 * progress, on its previous map's replicas too); cb runs once, from the loop, when
 * every one answered or failed (a failure only leaves it out of
 * `answered`); with no replica (an empty ring) at once, before this
 * returns. The key is encoded into the requests before this returns. */
void gw_store_probe(struct gw_store *s, const void *key, size_t key_len, gw_store_probe_cb cb,
                    void *arg);

#endif
