/* Conditional-write leases (lease.h): a small table under one mutex. It is
 * touched only by LOCK, UNLOCK and PUTs that carry a token, never by plain
 * reads and writes, so a linear scan of at most SN_LEASE_MAX entries is
 * cheap enough and keeps the memory bound obvious. */
#include "lease.h"

#include <pthread.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/time.h"
#include "store.h"

struct sn_lease {
    uint8_t *key;         /* owned; NULL: free slot */
    uint32_t klen;
    uint64_t tok;
    uint64_t expires_us;
    int writing;          /* a PUT under this lease is being stored: no expiry */
};

struct sn_lease_table {
    pthread_mutex_t m;
    struct sn_lease slots[SN_LEASE_MAX];
    uint32_t used;        /* slots with a key */
};

struct sn_lease_table *sn_lease_table_new(void)
{
    struct sn_lease_table *t = cn_calloc(1, sizeof(*t));
    pthread_mutex_init(&t->m, NULL);
    return t;
}

void sn_lease_table_free(struct sn_lease_table *t)
{
    if (t == NULL)
        return;
    for (uint32_t i = 0; i < SN_LEASE_MAX; i++)
        cn_free(t->slots[i].key);
    pthread_mutex_destroy(&t->m);
    cn_free(t);
}

static void sn_lease_clear_locked(struct sn_lease_table *t, struct sn_lease *l)
{
    cn_free(l->key);
    memset(l, 0, sizeof(*l));
    t->used--;
}

static int sn_lease_live(const struct sn_lease *l, uint64_t now)
{
    return l->key != NULL && (l->writing || l->expires_us > now);
}

/* The slot holding key (live or expired), or NULL; *free_slot gets a slot
 * that is empty or expired (NULL when none), for an insert. */
static struct sn_lease *sn_lease_find_locked(struct sn_lease_table *t, const uint8_t *key,
                                             uint32_t klen, uint64_t now,
                                             struct sn_lease **free_slot)
{
    struct sn_lease *found = NULL;
    *free_slot = NULL;
    for (uint32_t i = 0; i < SN_LEASE_MAX && (found == NULL || *free_slot == NULL); i++) {
        struct sn_lease *l = &t->slots[i];
        if (l->key != NULL && l->klen == klen && memcmp(l->key, key, klen) == 0)
            found = l;
        else if (*free_slot == NULL && !sn_lease_live(l, now))
            *free_slot = l;
        if (t->used == 0 && *free_slot != NULL)
            break;
    }
    return found;
}

/* Whether the key's live record is the one expected. */
static enum msg_status sn_lease_check_locked(struct sn_store *s, const uint8_t *key,
                                             uint32_t klen, int has_ifver, uint64_t ifver,
                                             uint64_t *cur_ver, uint64_t *cur_ts,
                                             char err[CN_ERR_LEN])
{
    struct sn_read r;
    int rc = sn_store_read(s, key, klen, 0, 0, 0, &r, err);
    int live = rc == CN_OK;
    *cur_ver = live ? r.ver : 0;
    *cur_ts = live ? r.ts : 0;
    sn_read_fini(&r);
    if (rc != CN_OK && rc != CN_NOTFOUND)
        return rc == CN_CORRUPT ? MSG_ST_CORRUPT : MSG_ST_IO_ERROR;
    if (has_ifver ? (live && *cur_ver == ifver) : !live)
        return MSG_ST_OK;
    return MSG_ST_PRECONDITION;
}

enum msg_status sn_lease_take(struct sn_lease_table *t, struct sn_store *s, const uint8_t *key,
                              uint32_t klen, uint64_t tok, int has_ifver, uint64_t ifver,
                              uint64_t *cur_ver, uint64_t *cur_ts, char err[CN_ERR_LEN])
{
    uint64_t now = cn_time_mono_us();
    struct sn_lease *free_slot;
    *cur_ver = *cur_ts = 0;
    pthread_mutex_lock(&t->m);
    struct sn_lease *l = sn_lease_find_locked(t, key, klen, now, &free_slot);
    enum msg_status st;
    if (l != NULL && sn_lease_live(l, now) && (l->tok != tok || l->writing)) {
        st = MSG_ST_LOCKED;
        goto out;
    }
    /* the check runs under the table's mutex: no other LOCK of this node
     * can pass it between the read and the grant, and a write under a
     * lease releases it only once the record is in the index */
    st = sn_lease_check_locked(s, key, klen, has_ifver, ifver, cur_ver, cur_ts, err);
    if (st != MSG_ST_OK)
        goto out;
    if (l == NULL) {
        if (free_slot == NULL) {
            st = MSG_ST_BUSY;
            goto out;
        }
        if (free_slot->key != NULL)
            sn_lease_clear_locked(t, free_slot);
        l = free_slot;
        l->key = cn_memdup(key, klen);
        l->klen = klen;
        t->used++;
    }
    l->tok = tok;
    l->writing = 0;
    l->expires_us = now + SN_LEASE_TTL_US;
out:
    pthread_mutex_unlock(&t->m);
    return st;
}

enum msg_status sn_lease_write_begin(struct sn_lease_table *t, const uint8_t *key, uint32_t klen,
                                     uint64_t tok)
{
    uint64_t now = cn_time_mono_us();
    struct sn_lease *free_slot;
    enum msg_status st = MSG_ST_LOCKED;
    pthread_mutex_lock(&t->m);
    struct sn_lease *l = sn_lease_find_locked(t, key, klen, now, &free_slot);
    if (l != NULL && l->tok == tok && !l->writing && l->expires_us > now) {
        l->writing = 1;
        st = MSG_ST_OK;
    }
    pthread_mutex_unlock(&t->m);
    return st;
}

void sn_lease_write_end(struct sn_lease_table *t, const uint8_t *key, uint32_t klen, uint64_t tok)
{
    struct sn_lease *free_slot;
    pthread_mutex_lock(&t->m);
    struct sn_lease *l = sn_lease_find_locked(t, key, klen, cn_time_mono_us(), &free_slot);
    if (l != NULL && l->tok == tok && l->writing)
        sn_lease_clear_locked(t, l);
    pthread_mutex_unlock(&t->m);
}

void sn_lease_drop(struct sn_lease_table *t, const uint8_t *key, uint32_t klen, uint64_t tok)
{
    struct sn_lease *free_slot;
    pthread_mutex_lock(&t->m);
    struct sn_lease *l = sn_lease_find_locked(t, key, klen, cn_time_mono_us(), &free_slot);
    if (l != NULL && l->tok == tok && !l->writing)
        sn_lease_clear_locked(t, l);
    pthread_mutex_unlock(&t->m);
}

uint32_t sn_lease_count(struct sn_lease_table *t)
{
    pthread_mutex_lock(&t->m);
    uint32_t n = t->used;
    pthread_mutex_unlock(&t->m);
    return n;
}
