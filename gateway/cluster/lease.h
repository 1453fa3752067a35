/* The cluster-held lease of a background worker: at most one gateway of a
 * cluster does the worker's job at a time, the one named in the worker's
 * system record ("s/lifecycle", "s/collector", "s/rebalance"), which also
 * carries the worker's own fields (its cursor, counts, state). The protocol
 * (docs/operations.md, "The lease"): every tick read the record; another
 * holder's live lease: wait; our own: renew and work; free or expired:
 * claim it (write ourselves as holder), wait settle_us, read it back, and
 * hold it only when the record read back names us. While working the
 * holder renews (read, check, write) every third of the lease, and stops
 * when the record names another holder. One record operation in flight at
 * a time; what a worker does with the lease is its callbacks'.
 *
 * Memory: one copy of the worker's status (ops->status_size) and one
 * record's data at a time (ops->record_max). */
#ifndef GW_LEASE_H
#define GW_LEASE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <msgpack.h>

struct gw_store;
struct cn_metrics;

#define GW_LEASE_HOLDER_MAX 128

/* The lease's part of a worker's record: the first member of the worker's
 * status struct (ops->status_size bytes, "holder" and "lease_until_us" in
 * the record). */
struct gw_lease_head {
    char holder[GW_LEASE_HOLDER_MAX];   /* NUL-terminated; "" when none */
    uint64_t lease_until;               /* µs of the wall clock */
};

/* What a record operation the worker asked for came to. */
enum gw_lease_result {
    GW_LEASE_OK = 0,      /* written (gw_lease_write), or renewed (gw_lease_renew) */
    GW_LEASE_LOST,        /* renew: the record names another holder; not held any more */
    GW_LEASE_UNREAD,      /* renew: the record could not be read */
    GW_LEASE_UNWRITTEN,   /* the record could not be written */
};

/* Must end in one of gw_lease_again(), gw_lease_check(), gw_lease_write(),
 * gw_lease_renew(), or start work that later ends in one of them. */
typedef void (*gw_lease_cb)(void *arg, enum gw_lease_result r);

/* What makes one worker's lease: its record and its callbacks (arg is the
 * one given to gw_lease_new). Only encode, decode_field and held are
 * required. */
struct gw_lease_ops {
    const char *what;      /* the log lines' prefix: "lifecycle" */
    const char *key;       /* the record's key */
    size_t record_max;     /* a record's data longer than this does not parse */
    size_t status_size;    /* sizeof the worker's status, struct gw_lease_head first */
    /* The worker's own fields of its status into pk (after the lease's
     * two); returns how many (key, value) pairs it packed. */
    uint32_t (*encode)(void *arg, msgpack_packer *pk);
    /* One (k, v) of the record that is not the lease's into status: CN_OK
     * (an unknown key too) or CN_INVAL (a known key of the wrong type or
     * size: the whole record is then taken as empty). */
    int (*decode_field)(void *status, const msgpack_object *k, const msgpack_object *v);
    /* The lease is ours (the status as read, the lease counted from now):
     * a gw_lease_cb's obligation. */
    void (*held)(void *arg);
    /* At a tick, the record was read (held or not). Optional. */
    void (*on_read)(void *arg);
    /* The record, free or expired, is about to be written as our claim
     * (the status keeps what the last holder left). Optional. */
    void (*on_claim)(void *arg);
    /* At a tick, the lease is not ours (another holder's is live, or its
     * claim won). Optional. */
    void (*on_lost)(void *arg);
    /* gw_lease_renew found the lease still ours: read is the record as
     * read, before the status is written again. Optional. */
    void (*merge)(void *arg, const void *read);
};

struct gw_lease_opts {
    uint64_t interval_us;   /* the worker's interval: ticks come this often or ... */
    uint64_t lease_us;      /* ... every third of this, when shorter (100 ms at least) */
    uint64_t settle_us;     /* between a claim and its read-back */
    uint64_t ver;           /* the writes' version (the worker's) */
    const char *holder;     /* this gateway's name in the record (copied) */
    uint64_t (*now_us)(void);   /* the wall clock; NULL: cn_time_now_us (tests set their own) */
};

struct gw_lease;

/* Creates the lease of the worker whose status is status (ops->status_size
 * bytes, kept by the worker; the lease reads and writes its head and hands
 * it to the callbacks) on base, the thread of store, and arms the first tick
 * (a quarter of a tick from now). reg (NULL: none) and m_held: the gauge set
 * to 1 while the lease is held. ops is kept (static storage). */
struct gw_lease *gw_lease_new(struct event_base *base, struct gw_store *store,
                              const struct gw_lease_ops *ops, const struct gw_lease_opts *o,
                              void *status, void *arg, struct cn_metrics *reg, uint32_t m_held);

/* The next tick a tick's time from now. */
void gw_lease_again(struct gw_lease *l);
/* A tick now (one armed for later is cancelled). */
void gw_lease_check(struct gw_lease *l);
/* Writes the status as ours (the lease counted from now) and then cb(arg,
 * GW_LEASE_OK or GW_LEASE_UNWRITTEN); cb NULL: gw_lease_again(). */
void gw_lease_write(struct gw_lease *l, gw_lease_cb cb);
/* 1 when a third of the lease has passed since it was last written. */
int gw_lease_renew_due(const struct gw_lease *l);
/* Renews while working: reads the record; when it still names us,
 * ops->merge, then writes the status; then cb. On GW_LEASE_LOST the lease
 * is no longer held (the gauge and the log say so) and the status is as it
 * was. */
void gw_lease_renew(struct gw_lease *l, gw_lease_cb cb);

int gw_lease_held(const struct gw_lease *l);
/* The holder named in the record read last (for a log line). */
const char *gw_lease_read_holder(const struct gw_lease *l);
/* Record operations in flight. */
int gw_lease_inflight(const struct gw_lease *l);

/* Reads a record's data into status (ops->status_size bytes, zeroed
 * first, and again when it does not parse). Unknown keys are skipped.
 * CN_OK or CN_INVAL. Pure: for the workers' fuzz targets too. */
int gw_lease_decode(const struct gw_lease_ops *ops, const void *data, size_t len, void *status);

/* Packs a str key and its value (for the workers' encode). */
void gw_lease_pack_str(msgpack_packer *pk, const char *s, size_t n);
void gw_lease_pack_u64(msgpack_packer *pk, const char *k, uint64_t v);
/* 1 when k is the str name. */
int gw_lease_key_is(const msgpack_object *k, const char *name);
/* For a worker's decode_field: when k is names[i] (of n), v into *slots[i].
 * CN_OK (also when k is none of them) or CN_INVAL when v is not a
 * non-negative integer. */
int gw_lease_decode_u64(const msgpack_object *k, const msgpack_object *v,
                        const char *const *names, uint64_t *const *slots, size_t n);

/* Stops: nothing new starts; callbacks still due only count down. */
void gw_lease_close(struct gw_lease *l);
/* Frees l after close when no operation is in flight and returns 1; else
 * returns 0 and leaves it (the worker logs and keeps its state). NULL: 1. */
int gw_lease_free(struct gw_lease *l);

#endif
