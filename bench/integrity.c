/* Per-key record of the last good PUT (see integrity.h). */
#include "integrity.h"

#include <pthread.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/rc.h"

#define BENCH_INTEGRITY_MAX_KEYS (INT64_C(1) << 24)
#define BENCH_INTEGRITY_STRIPES 64

struct bench_integrity_entry {
    unsigned char md5[16];
    int64_t size;
    uint64_t origin;
    uint32_t version;
    uint16_t writers;
    uint8_t state;
    uint8_t overlap;    /* writes in flight overlapped: the server's order is unknown */
};

struct bench_integrity {
    int64_t limit;
    struct bench_integrity_entry *e;
    pthread_mutex_t locks[BENCH_INTEGRITY_STRIPES];
};

struct bench_integrity *bench_integrity_new(int64_t limit)
{
    struct bench_integrity *t = cn_calloc(1, sizeof(*t));
    t->limit = limit < 1 ? 1 : CN_MIN(limit, BENCH_INTEGRITY_MAX_KEYS);
    t->e = cn_calloc((size_t)t->limit, sizeof(*t->e));
    for (int i = 0; i < BENCH_INTEGRITY_STRIPES; i++)
        pthread_mutex_init(&t->locks[i], NULL);
    return t;
}

void bench_integrity_free(struct bench_integrity *t)
{
    if (t == NULL)
        return;
    for (int i = 0; i < BENCH_INTEGRITY_STRIPES; i++)
        pthread_mutex_destroy(&t->locks[i]);
    cn_free(t->e);
    cn_free(t);
}

static pthread_mutex_t *bench_integrity_lock(struct bench_integrity *t, int64_t key)
{
    pthread_mutex_t *m = &t->locks[(uint64_t)key % BENCH_INTEGRITY_STRIPES];
    pthread_mutex_lock(m);
    return m;
}

void bench_integrity_peek(struct bench_integrity *t, int64_t key,
                          struct bench_integrity_snap *snap)
{
    memset(snap, 0, sizeof(*snap));
    if (key < 0 || key >= t->limit)
        return;
    pthread_mutex_t *m = bench_integrity_lock(t, key);
    const struct bench_integrity_entry *e = &t->e[key];
    snap->tracked = 1;
    snap->state = (enum bench_integrity_state)e->state;
    memcpy(snap->md5, e->md5, 16);
    snap->size = e->size;
    snap->origin = e->origin;
    snap->version = e->version;
    snap->writers = e->writers;
    pthread_mutex_unlock(m);
}

void bench_integrity_write_begin(struct bench_integrity *t, int64_t key)
{
    if (key < 0 || key >= t->limit)
        return;
    pthread_mutex_t *m = bench_integrity_lock(t, key);
    if (t->e[key].writers > 0)
        t->e[key].overlap = 1;
    t->e[key].writers++;
    t->e[key].version++;
    pthread_mutex_unlock(m);
}

void bench_integrity_write_end(struct bench_integrity *t, int64_t key, int ok, int deleted,
                               const unsigned char md5[16], int64_t size, uint64_t origin)
{
    if (key < 0 || key >= t->limit)
        return;
    pthread_mutex_t *m = bench_integrity_lock(t, key);
    struct bench_integrity_entry *e = &t->e[key];
    CN_ASSERT(e->writers > 0);
    e->writers--;
    e->version++;
    if (!ok || e->overlap) {
        /* a failed write may or may not have landed; of two overlapping
         * writes the server may have applied either last */
        e->state = BENCH_INTEGRITY_UNKNOWN;
        if (e->writers == 0)
            e->overlap = 0;
    } else if (deleted) {
        e->state = BENCH_INTEGRITY_DELETED;
    } else {
        e->state = BENCH_INTEGRITY_PRESENT;
        memcpy(e->md5, md5, 16);
        e->size = size;
        e->origin = origin;
    }
    pthread_mutex_unlock(m);
}

/* 1 when the key was written by nobody while the read was in flight. */
static int bench_integrity_stable(const struct bench_integrity_snap *before,
                                  const struct bench_integrity_snap *now)
{
    return before->writers == 0 && now->writers == 0 && before->version == now->version;
}

enum bench_integrity_verdict bench_integrity_judge(struct bench_integrity *t, int64_t key,
                                                   const struct bench_integrity_snap *before,
                                                   int not_found, const unsigned char md5[16],
                                                   int64_t size)
{
    struct bench_integrity_snap now;
    bench_integrity_peek(t, key, &now);
    if (!before->tracked)
        return BENCH_INTEGRITY_UNVERIFIABLE;
    if (!not_found) {
        /* matching either the version before or the one after is fine */
        if (before->state == BENCH_INTEGRITY_PRESENT && size == before->size &&
            memcmp(md5, before->md5, 16) == 0)
            return BENCH_INTEGRITY_OK;
        if (now.state == BENCH_INTEGRITY_PRESENT && size == now.size &&
            memcmp(md5, now.md5, 16) == 0)
            return BENCH_INTEGRITY_OK;
    }
    if (!bench_integrity_stable(before, &now))
        return BENCH_INTEGRITY_UNVERIFIABLE;
    switch (before->state) {
    case BENCH_INTEGRITY_PRESENT:
        return not_found ? BENCH_INTEGRITY_MISSING : BENCH_INTEGRITY_MISMATCH;
    case BENCH_INTEGRITY_DELETED:
        return not_found ? BENCH_INTEGRITY_OK : BENCH_INTEGRITY_MISMATCH;
    default:
        return BENCH_INTEGRITY_UNVERIFIABLE;
    }
}

enum bench_integrity_verdict bench_integrity_judge_range(struct bench_integrity *t, int64_t key,
                                                         const struct bench_integrity_snap *before,
                                                         int not_found, int same_bytes)
{
    struct bench_integrity_snap now;
    bench_integrity_peek(t, key, &now);
    if (!before->tracked || !bench_integrity_stable(before, &now))
        return BENCH_INTEGRITY_UNVERIFIABLE;
    switch (before->state) {
    case BENCH_INTEGRITY_PRESENT:
        if (not_found)
            return BENCH_INTEGRITY_MISSING;
        return same_bytes ? BENCH_INTEGRITY_OK : BENCH_INTEGRITY_MISMATCH;
    case BENCH_INTEGRITY_DELETED:
        return not_found ? BENCH_INTEGRITY_OK : BENCH_INTEGRITY_MISMATCH;
    default:
        return BENCH_INTEGRITY_UNVERIFIABLE;
    }
}
