/* Unit tests of tombstones in the storage engine: the live/tombstone
 * accounting (STATS records and tombstones) through PUT over a tombstone,
 * DELETE over a live record or a tombstone, relocation by compaction,
 * recovery and an index written in the old 24-byte form; tombstone GC by
 * compaction (which tombstones are purged, which containers become
 * candidates, nothing comes back after a restart) and the writer's purge
 * decision when a PUT of the key is in the same batch. */
#include <fcntl.h>
#include <leveldb/c.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cn/alloc.h"
#include "cn/test.h"
#include "cn/time.h"
#include "container.h"
#include "store.h"

CN_TEST_GLOBALS;

static char test_dir[256];

static void test_tb_fresh_dir(void)
{
    char cmd[512];
    snprintf(test_dir, sizeof(test_dir), "/tmp/test_sn_tombstone.%d", (int)getpid());
    snprintf(cmd, sizeof(cmd), "rm -rf %s", test_dir);
    CN_CHECK_EQ_INT(system(cmd), 0);
}

static struct sn_store *test_tb_open(uint64_t container_len, uint64_t gc_ms)
{
    struct sn_store_opts o;
    struct sn_store *s = NULL;
    char err[CN_ERR_LEN];
    sn_store_opts_default(&o);
    o.data_dir = test_dir;
    o.max_container_len = container_len;
    o.sync_mode = SN_SYNC_NONE;
    o.tombstone_gc_after_ms = gc_ms;
    int rc = sn_store_open(&o, &s, err);
    if (rc != CN_OK)
        fprintf(stderr, "open: %s\n", err);
    CN_CHECK_EQ_INT(rc, CN_OK);
    return s;
}

static void test_tb_close(struct sn_store *s)
{
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(sn_store_close(s, err), CN_OK);
}

/* A PUT (data, len) or, with data NULL and len 0 and del set, a DELETE;
 * returns whether it applied. */
static int test_tb_write(struct sn_store *s, int del, const char *key, const uint8_t *data,
                         uint64_t len, uint64_t ver, uint64_t ts)
{
    struct sn_wreq w;
    char err[CN_ERR_LEN];
    int rc = sn_wreq_init(&w, del ? SN_WOP_DELETE : SN_WOP_PUT, (const uint8_t *)key,
                          (uint32_t)strlen(key), NULL, 0, del ? NULL : (const uint8_t *)"etag",
                          del ? 0 : 4, ver, ts, data, len, err);
    CN_CHECK_EQ_INT(rc, CN_OK);
    CN_CHECK_EQ_INT(sn_store_submit_wait(s, &w), CN_OK);
    int applied = w.applied;
    sn_wreq_fini(&w);
    return applied;
}

static int test_tb_put(struct sn_store *s, const char *key, uint64_t len, uint64_t ts)
{
    static uint8_t d[70000];
    CN_ASSERT(len <= sizeof(d));
    memset(d, (int)(ts & 0xff), len);
    return test_tb_write(s, 0, key, d, len, 1, ts);
}

static int test_tb_del(struct sn_store *s, const char *key, uint64_t ts)
{
    return test_tb_write(s, 1, key, NULL, 0, 1, ts);
}

/* A record of more than container_len bytes goes alone into a container of
 * its own, so the next write starts a new one. */
static void test_tb_roll(struct sn_store *s, uint64_t container_len)
{
    static int n;
    char key[32];
    snprintf(key, sizeof(key), "filler/%d", n++);
    CN_CHECK(test_tb_put(s, key, container_len, 5));
}

static void test_tb_counts(struct sn_store *s, uint64_t records, uint64_t tombstones)
{
    struct sn_store_stats st;
    sn_store_stats(s, &st);
    CN_CHECK_EQ_INT(st.records, records);
    CN_CHECK_EQ_INT(st.tombstones, tombstones);
}

enum { TEST_TB_ABSENT, TEST_TB_TOMBSTONE, TEST_TB_LIVE };

/* What the store holds for key: absent, a tombstone (NOT_FOUND with its
 * flags and ts) or a live record (ts in *ts). */
static int test_tb_state(struct sn_store *s, const char *key, uint64_t *ts)
{
    struct sn_read r;
    char err[CN_ERR_LEN];
    int rc = sn_store_read(s, (const uint8_t *)key, (uint32_t)strlen(key), 0, 0, 0, &r, err);
    int state = rc == CN_OK ? TEST_TB_LIVE
                : r.flags & SN_RECORD_FLAG_TOMBSTONE ? TEST_TB_TOMBSTONE
                                                     : TEST_TB_ABSENT;
    CN_CHECK(rc == CN_OK || rc == CN_NOTFOUND);
    if (ts != NULL)
        *ts = r.ts;
    sn_read_fini(&r);
    return state;
}

static int test_tb_file_exists(uint32_t cid)
{
    char dir[300], path[512];
    struct stat st;
    snprintf(dir, sizeof(dir), "%s/containers", test_dir);
    sn_container_path(dir, cid, path, sizeof(path));
    return stat(path, &st) == 0;
}

/* Each kind of write moves records/tombstones the right way, and the counts
 * (and bytes) survive a restart. */
static void test_tb_accounting(void)
{
    test_tb_fresh_dir();
    struct sn_store *s = test_tb_open(1 << 20, 0);
    CN_CHECK(test_tb_put(s, "a", 100, 10));
    test_tb_counts(s, 1, 0);
    CN_CHECK(test_tb_del(s, "a", 20));       /* DELETE over a live record */
    test_tb_counts(s, 0, 1);
    CN_CHECK(test_tb_del(s, "a", 30));       /* DELETE over a tombstone */
    test_tb_counts(s, 0, 1);
    CN_CHECK(!test_tb_del(s, "a", 5));       /* stale: nothing changes */
    test_tb_counts(s, 0, 1);
    CN_CHECK(test_tb_del(s, "ghost", 10));   /* DELETE of a key never written */
    test_tb_counts(s, 0, 2);
    CN_CHECK(test_tb_put(s, "a", 100, 40));  /* PUT over a tombstone */
    test_tb_counts(s, 1, 1);
    CN_CHECK(!test_tb_put(s, "ghost", 10, 9));  /* older than the tombstone */
    test_tb_counts(s, 1, 1);
    struct sn_store_stats st;
    sn_store_stats(s, &st);
    uint64_t live = sn_record_hdr_len(1, 0, 4, 100) + 100 + sn_record_hdr_len(5, 0, 0, 0);
    CN_CHECK_EQ_INT(st.bytes_live, live);
    test_tb_close(s);
    s = test_tb_open(1 << 20, 0);
    test_tb_counts(s, 1, 1);
    sn_store_stats(s, &st);
    CN_CHECK_EQ_INT(st.bytes_live, live);
    CN_CHECK_EQ_INT(st.recovered_records, 0);
    test_tb_close(s);
}

/* With GC off, compaction copies tombstones like any live record: the
 * counts move with them to the new container and stay right after a
 * restart. */
static void test_tb_relocate(void)
{
    const uint64_t clen = 64 * 1024;
    test_tb_fresh_dir();
    struct sn_store *s = test_tb_open(clen, 0);
    CN_CHECK(test_tb_put(s, "k1", 100, 10));
    CN_CHECK(test_tb_del(s, "k1", 20));
    CN_CHECK(test_tb_del(s, "ghost", 20));
    CN_CHECK(test_tb_put(s, "k2", 100, 10));
    test_tb_roll(s, clen);
    test_tb_roll(s, clen);
    test_tb_counts(s, 3, 2);
    struct sn_compact_result cr;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(sn_compact_run(s, 1, &cr, err), CN_OK);
    CN_CHECK_EQ_INT(cr.containers_reclaimed, 1);
    CN_CHECK_EQ_INT(cr.records_moved, 3);
    CN_CHECK_EQ_INT(cr.tombstones_purged, 0);
    CN_CHECK(!test_tb_file_exists(1));
    test_tb_counts(s, 3, 2);
    CN_CHECK_EQ_INT(test_tb_state(s, "k1", NULL), TEST_TB_TOMBSTONE);
    CN_CHECK_EQ_INT(test_tb_state(s, "ghost", NULL), TEST_TB_TOMBSTONE);
    test_tb_close(s);
    s = test_tb_open(clen, 0);
    test_tb_counts(s, 3, 2);
    test_tb_close(s);
}

/* Appends a record to container cid behind the store's back (as a crash
 * that lost the index write leaves it). */
static void test_tb_append_raw(uint32_t cid, const char *key, int tombstone, uint64_t ts)
{
    char dir[300], path[512];
    uint8_t data[10] = {0};
    uint32_t klen = (uint32_t)strlen(key);
    uint64_t dlen = tombstone ? 0 : sizeof(data);
    snprintf(dir, sizeof(dir), "%s/containers", test_dir);
    sn_container_path(dir, cid, path, sizeof(path));
    uint64_t hl = sn_record_hdr_len(klen, 0, 0, dlen);
    uint8_t *hdr = cn_malloc(hl);
    sn_record_encode(hdr, (const uint8_t *)key, klen, NULL, 0, NULL, 0,
                     tombstone ? SN_RECORD_FLAG_TOMBSTONE : 0, 1, ts, data, dlen);
    int fd = open(path, O_WRONLY | O_APPEND);
    CN_CHECK(fd >= 0);
    CN_CHECK(write(fd, hdr, hl) == (ssize_t)hl);
    if (dlen > 0)
        CN_CHECK(write(fd, data, dlen) == (ssize_t)dlen);
    close(fd);
    cn_free(hdr);
}

/* Recovery indexes records past indexed_upto through the same accounting:
 * a tombstone over a live key and one of a new key. */
static void test_tb_recovery(void)
{
    test_tb_fresh_dir();
    struct sn_store *s = test_tb_open(1 << 20, 0);
    CN_CHECK(test_tb_put(s, "a", 100, 10));
    CN_CHECK(test_tb_put(s, "b", 100, 10));
    test_tb_close(s);
    test_tb_append_raw(1, "a", 1, 20);
    test_tb_append_raw(1, "c", 1, 20);
    test_tb_append_raw(1, "b", 0, 30);
    s = test_tb_open(1 << 20, 0);
    struct sn_store_stats st;
    sn_store_stats(s, &st);
    CN_CHECK_EQ_INT(st.recovered_records, 3);
    test_tb_counts(s, 1, 2);
    test_tb_close(s);
    s = test_tb_open(1 << 20, 0);
    test_tb_counts(s, 1, 2);
    test_tb_close(s);
}

/* Checks that the index is in the current format (SN_INDEX_FORMAT) with
 * every container accounting value in the 40-byte form and, with to_old
 * set, rewrites it as an older node wrote it: format 1, 24-byte values.
 * Returns how many values there are. */
static int test_tb_index_values(int to_old)
{
    char path[300], *lerr = NULL;
    snprintf(path, sizeof(path), "%s/index", test_dir);
    leveldb_options_t *o = leveldb_options_create();
    leveldb_t *db = leveldb_open(o, path, &lerr);
    CN_CHECK(lerr == NULL && db != NULL);
    leveldb_readoptions_t *ro = leveldb_readoptions_create();
    leveldb_writeoptions_t *wo = leveldb_writeoptions_create();
    leveldb_writeoptions_set_sync(wo, 1);
    leveldb_writebatch_t *wb = leveldb_writebatch_create();
    size_t fn = 0;
    char *f = leveldb_get(db, ro, "f", 1, &fn, &lerr);
    CN_CHECK(lerr == NULL && f != NULL && fn == 4 &&
             sn_get32((const uint8_t *)f) == SN_INDEX_FORMAT);
    leveldb_free(f);
    if (to_old) {
        uint8_t one[4];
        sn_put32(one, 1);
        leveldb_writebatch_put(wb, "f", 1, (const char *)one, 4);
    }
    leveldb_iterator_t *it = leveldb_create_iterator(db, ro);
    int n = 0;
    for (leveldb_iter_seek(it, "c", 1); leveldb_iter_valid(it); leveldb_iter_next(it)) {
        size_t kn, vn;
        const char *k = leveldb_iter_key(it, &kn);
        const char *v = leveldb_iter_value(it, &vn);
        if (kn != 5 || k[0] != 'c')
            break;
        CN_CHECK_EQ_INT(vn, 40);
        if (to_old)
            leveldb_writebatch_put(wb, k, kn, v, 24);
        n++;
    }
    leveldb_iter_destroy(it);
    leveldb_write(db, wo, wb, &lerr);
    CN_CHECK(lerr == NULL);
    leveldb_writebatch_destroy(wb);
    leveldb_writeoptions_destroy(wo);
    leveldb_readoptions_destroy(ro);
    leveldb_close(db);
    leveldb_options_destroy(o);
    return n;
}

/* An index written by an older node (24-byte container values, no
 * tombstone counts) is read, the tombstones are counted once, and the
 * values are written back in the new form. */
static void test_tb_legacy(void)
{
    const uint64_t clen = 64 * 1024;
    test_tb_fresh_dir();
    struct sn_store *s = test_tb_open(clen, 0);
    CN_CHECK(test_tb_put(s, "a", 100, 10));
    CN_CHECK(test_tb_del(s, "a", 20));
    CN_CHECK(test_tb_del(s, "b", 20));
    test_tb_roll(s, clen);
    CN_CHECK(test_tb_put(s, "c", 100, 10));
    CN_CHECK(test_tb_del(s, "d", 20));
    test_tb_counts(s, 2, 3);
    test_tb_close(s);
    int n = test_tb_index_values(1);
    CN_CHECK(n >= 3);
    s = test_tb_open(clen, 0);
    test_tb_counts(s, 2, 3);
    CN_CHECK(test_tb_put(s, "b", 100, 30));   /* PUT over a recounted tombstone */
    test_tb_counts(s, 3, 2);
    test_tb_close(s);
    CN_CHECK_EQ_INT(test_tb_index_values(0), n);
    s = test_tb_open(clen, 0);
    test_tb_counts(s, 3, 2);
    test_tb_close(s);
}

/* GC on: compaction purges the tombstones past the grace (by record ts),
 * copies the others, and a container whose live records are only old
 * tombstones is a candidate even though its plain dead share is small. */
static void test_tb_purge(void)
{
    const uint64_t clen = 64 * 1024;
    uint64_t future = cn_time_now_us() + 3600ull * 1000000;
    test_tb_fresh_dir();
    struct sn_store *s = test_tb_open(clen, 1);
    CN_CHECK(test_tb_put(s, "k", 20, 1000));
    CN_CHECK(test_tb_del(s, "k", 2000));
    CN_CHECK(test_tb_del(s, "ghost", 2000));
    CN_CHECK(test_tb_del(s, "young", future));  /* not past the grace */
    test_tb_roll(s, clen);                        /* container 2 */
    /* container 3: only an old tombstone; its dead share without GC is 0 */
    CN_CHECK(test_tb_del(s, "lonely", 2000));
    test_tb_roll(s, clen);                        /* container 4 */
    test_tb_roll(s, clen);                        /* container 5: the active one */
    test_tb_counts(s, 3, 4);
    usleep(5000);   /* the containers were last appended to > 1 ms ago */
    struct sn_compact_result cr;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(sn_compact_run(s, 90, &cr, err), CN_OK);
    CN_CHECK_EQ_INT(cr.containers_scanned, 2);
    CN_CHECK_EQ_INT(cr.containers_reclaimed, 2);
    CN_CHECK_EQ_INT(cr.tombstones_purged, 3);
    CN_CHECK_EQ_INT(cr.records_moved, 1);
    CN_CHECK(!test_tb_file_exists(1) && !test_tb_file_exists(3));
    CN_CHECK(test_tb_file_exists(2) && test_tb_file_exists(4));
    CN_CHECK_EQ_INT(test_tb_state(s, "k", NULL), TEST_TB_ABSENT);
    CN_CHECK_EQ_INT(test_tb_state(s, "ghost", NULL), TEST_TB_ABSENT);
    CN_CHECK_EQ_INT(test_tb_state(s, "lonely", NULL), TEST_TB_ABSENT);
    CN_CHECK_EQ_INT(test_tb_state(s, "young", NULL), TEST_TB_TOMBSTONE);
    test_tb_counts(s, 3, 1);
    struct sn_store_stats st;
    sn_store_stats(s, &st);
    CN_CHECK_EQ_INT(st.tombstones_purged, 3);
    test_tb_close(s);
    s = test_tb_open(clen, 1);
    test_tb_counts(s, 3, 1);
    CN_CHECK_EQ_INT(test_tb_state(s, "k", NULL), TEST_TB_ABSENT);
    /* the trade-off: once the tombstone is gone, a PUT older than the delete
     * that arrives late (a replica down past the grace) is taken */
    CN_CHECK(test_tb_put(s, "k", 20, 1500));
    test_tb_counts(s, 4, 1);
    test_tb_close(s);
    /* GC off: the same kind of container is no candidate */
    test_tb_fresh_dir();
    s = test_tb_open(clen, 0);
    CN_CHECK(test_tb_del(s, "lonely", 2000));
    test_tb_roll(s, clen);
    test_tb_roll(s, clen);
    usleep(5000);
    CN_CHECK_EQ_INT(sn_compact_run(s, 90, &cr, err), CN_OK);
    CN_CHECK_EQ_INT(cr.containers_scanned, 0);
    CN_CHECK_EQ_INT(test_tb_state(s, "lonely", NULL), TEST_TB_TOMBSTONE);
    test_tb_close(s);
}

/* A purged tombstone does not let an older record of the key, in an older
 * container that stays, come back on restart: records before a container's
 * indexed_upto are never re-indexed. */
static void test_tb_purge_restart(void)
{
    const uint64_t clen = 64 * 1024;
    test_tb_fresh_dir();
    struct sn_store *s = test_tb_open(clen, 1);
    CN_CHECK(test_tb_put(s, "k", 20, 1000));       /* container 1, dead later */
    CN_CHECK(test_tb_put(s, "keep", 30000, 1000)); /* keeps container 1 mostly live */
    test_tb_roll(s, clen);                          /* 2 */
    CN_CHECK(test_tb_del(s, "k", 2000));           /* 3 */
    test_tb_roll(s, clen);                          /* 4 */
    test_tb_roll(s, clen);                          /* 5 */
    usleep(5000);
    struct sn_compact_result cr;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(sn_compact_run(s, 50, &cr, err), CN_OK);
    CN_CHECK_EQ_INT(cr.tombstones_purged, 1);
    CN_CHECK(test_tb_file_exists(1) && !test_tb_file_exists(3));
    CN_CHECK_EQ_INT(test_tb_state(s, "k", NULL), TEST_TB_ABSENT);
    test_tb_close(s);
    s = test_tb_open(clen, 1);
    CN_CHECK_EQ_INT(test_tb_state(s, "k", NULL), TEST_TB_ABSENT);
    struct sn_store_stats st;
    sn_store_stats(s, &st);
    CN_CHECK_EQ_INT(st.recovered_records, 0);
    test_tb_counts(s, 4, 0);
    test_tb_close(s);
}

/* ---- the purge decision in the writer, with a PUT in the same batch ---- */

struct test_tb_gate {
    pthread_mutex_t m;
    pthread_cond_t c;
    int entered, open, done;
};

/* done_cb of the write that holds the writer: waits until the gate opens, so
 * that what the test queues meanwhile is taken as one batch. */
static void test_tb_gate_cb(struct sn_wreq *w, void *arg)
{
    struct test_tb_gate *g = arg;
    (void)w;
    pthread_mutex_lock(&g->m);
    g->entered = 1;
    pthread_cond_broadcast(&g->c);
    while (!g->open)
        pthread_cond_wait(&g->c, &g->m);
    g->done++;
    pthread_mutex_unlock(&g->m);
}

static void test_tb_count_cb(struct sn_wreq *w, void *arg)
{
    struct test_tb_gate *g = arg;
    (void)w;
    pthread_mutex_lock(&g->m);
    g->done++;
    pthread_cond_broadcast(&g->c);
    pthread_mutex_unlock(&g->m);
}

/* The index value of key (a tombstone too). */
static int test_tb_ival_cb(void *arg, const uint8_t *key, uint32_t klen, const struct sn_ival *v)
{
    (void)key;
    (void)klen;
    *(struct sn_ival *)arg = *v;
    return 1;
}

static struct sn_ival test_tb_ival(struct sn_store *s, const char *key)
{
    struct sn_ival v;
    int more;
    char err[CN_ERR_LEN];
    memset(&v, 0, sizeof(v));
    CN_CHECK_EQ_INT(sn_store_list_ex(s, (const uint8_t *)key, (uint32_t)strlen(key), NULL, 0, 1,
                                     1, test_tb_ival_cb, &v, &more, err), CN_OK);
    return v;
}

/* Runs w1 then w2 in one writer batch: a gated write holds the writer while
 * they are queued. */
static void test_tb_one_batch(struct sn_store *s, struct sn_wreq *w1, struct sn_wreq *w2)
{
    struct test_tb_gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};
    struct sn_wreq blk;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(sn_wreq_init(&blk, SN_WOP_PUT, (const uint8_t *)"blk", 3, NULL, 0, NULL, 0,
                                 1, cn_time_now_us(), (const uint8_t *)"x", 1, err), CN_OK);
    blk.done_cb = test_tb_gate_cb;
    blk.arg = &g;
    sn_store_submit(s, &blk);
    pthread_mutex_lock(&g.m);
    while (!g.entered)
        pthread_cond_wait(&g.c, &g.m);
    pthread_mutex_unlock(&g.m);
    struct sn_store_stats before, after;
    sn_store_stats(s, &before);
    w1->done_cb = w2->done_cb = test_tb_count_cb;
    w1->arg = w2->arg = &g;
    sn_store_submit(s, w1);
    sn_store_submit(s, w2);
    pthread_mutex_lock(&g.m);
    g.open = 1;
    pthread_cond_broadcast(&g.c);
    while (g.done < 3)
        pthread_cond_wait(&g.c, &g.m);
    pthread_mutex_unlock(&g.m);
    sn_store_stats(s, &after);
    CN_CHECK_EQ_INT(after.batches - before.batches, 1);
    CN_CHECK_EQ_INT(w1->rc, CN_OK);
    CN_CHECK_EQ_INT(w2->rc, CN_OK);
    sn_wreq_fini(&blk);
    pthread_mutex_destroy(&g.m);
    pthread_cond_destroy(&g.c);
}

/* A purge of the tombstone of key as it lies now (v). The header is the
 * tombstone's, made by sn_wreq_init; the caller ends with
 * test_tb_purge_fini. */
static void test_tb_purge_init(struct sn_wreq *w, const char *key, const struct sn_ival *v)
{
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(sn_wreq_init(w, SN_WOP_DELETE, (const uint8_t *)key, (uint32_t)strlen(key),
                                 NULL, 0, NULL, 0, v->ver, v->ts, NULL, 0, err), CN_OK);
    w->op = SN_WOP_PURGE;
    w->old_cid = v->cid;
    w->old_off = v->off;
}

static void test_tb_purge_fini(struct sn_wreq *w)
{
    w->op = SN_WOP_DELETE;
    sn_wreq_fini(w);
}

static void test_tb_put_init(struct sn_wreq *w, const char *key, uint64_t ts)
{
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(sn_wreq_init(w, SN_WOP_PUT, (const uint8_t *)key, (uint32_t)strlen(key),
                                 NULL, 0, NULL, 0, 1, ts, (const uint8_t *)"new", 3, err), CN_OK);
}

static void test_tb_purge_race(void)
{
    test_tb_fresh_dir();
    struct sn_store *s = test_tb_open(1 << 20, 0);
    struct sn_wreq pu, pg;
    uint64_t ts;
    /* purge first, PUT second: the PUT sees the key absent and is stored */
    CN_CHECK(test_tb_put(s, "k", 10, 10));
    CN_CHECK(test_tb_del(s, "k", 20));
    struct sn_ival v = test_tb_ival(s, "k");
    CN_CHECK(v.flags & SN_RECORD_FLAG_TOMBSTONE);
    test_tb_purge_init(&pg, "k", &v);
    test_tb_put_init(&pu, "k", 30);
    test_tb_one_batch(s, &pg, &pu);
    CN_CHECK(pg.applied && pu.applied);
    CN_CHECK_EQ_INT(test_tb_state(s, "k", &ts), TEST_TB_LIVE);
    CN_CHECK_EQ_INT(ts, 30);
    test_tb_counts(s, 2, 0);   /* k and blk */
    test_tb_purge_fini(&pg);
    sn_wreq_fini(&pu);
    /* PUT first, purge second: the key no longer points at the tombstone,
     * the purge does nothing */
    CN_CHECK(test_tb_del(s, "k", 40));
    v = test_tb_ival(s, "k");
    test_tb_put_init(&pu, "k", 50);
    test_tb_purge_init(&pg, "k", &v);
    test_tb_one_batch(s, &pu, &pg);
    CN_CHECK(pu.applied && !pg.applied);
    CN_CHECK_EQ_INT(test_tb_state(s, "k", &ts), TEST_TB_LIVE);
    CN_CHECK_EQ_INT(ts, 50);
    test_tb_counts(s, 2, 0);
    test_tb_purge_fini(&pg);
    sn_wreq_fini(&pu);
    /* a purge of a live record (same place, not a tombstone) does nothing */
    v = test_tb_ival(s, "k");
    test_tb_purge_init(&pg, "k", &v);
    CN_CHECK_EQ_INT(sn_store_submit_wait(s, &pg), CN_OK);
    CN_CHECK(!pg.applied);
    test_tb_purge_fini(&pg);
    CN_CHECK_EQ_INT(test_tb_state(s, "k", NULL), TEST_TB_LIVE);
    test_tb_counts(s, 2, 0);
    test_tb_close(s);
    s = test_tb_open(1 << 20, 0);
    test_tb_counts(s, 2, 0);
    CN_CHECK_EQ_INT(test_tb_state(s, "k", &ts), TEST_TB_LIVE);
    CN_CHECK_EQ_INT(ts, 50);
    test_tb_close(s);
}

static void test_tb_cleanup(void)
{
    test_tb_fresh_dir();
}

static const struct cn_test_case cases[] = {
    {"accounting", test_tb_accounting},
    {"relocate", test_tb_relocate},
    {"recovery", test_tb_recovery},
    {"legacy", test_tb_legacy},
    {"purge", test_tb_purge},
    {"purge_restart", test_tb_purge_restart},
    {"purge_race", test_tb_purge_race},
    {"cleanup", test_tb_cleanup},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
