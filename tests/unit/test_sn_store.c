/* Unit tests of the storage engine: write/read semantics, versions and
 * tombstones, listing, recovery of an index that lags the containers, torn
 * tails, corruption on read and in scrub, compaction under concurrent writes,
 * and group commit, large values leaving the page cache after their sync.
 * Each case works in its own temporary directory. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cn/alloc.h"
#include "cn/test.h"
#include "container.h"
#include "index.h"
#include "store.h"

CN_TEST_GLOBALS;

static char test_dir[256];
static int test_read_mmap = 1;   /* the store's read path: mapping or pread */

static struct sn_store *test_sn_open(uint64_t container_len, int sync_mode)
{
    struct sn_store_opts o;
    struct sn_store *s = NULL;
    char err[CN_ERR_LEN];
    sn_store_opts_default(&o);
    o.data_dir = test_dir;
    o.max_container_len = container_len;
    o.sync_mode = sync_mode;
    o.sync_interval_ms = 50;
    o.read_mmap = test_read_mmap;
    int rc = sn_store_open(&o, &s, err);
    if (rc != CN_OK)
        fprintf(stderr, "open: %s\n", err);
    CN_CHECK_EQ_INT(rc, CN_OK);
    return s;
}

static void test_sn_fresh_dir(void)
{
    char cmd[512];
    snprintf(test_dir, sizeof(test_dir), "/tmp/test_sn_store.%d", (int)getpid());
    snprintf(cmd, sizeof(cmd), "rm -rf %s", test_dir);
    CN_CHECK_EQ_INT(system(cmd), 0);
}

static void test_sn_fill(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)((i * 2654435761u + seed) >> 13);
}

static int test_sn_put(struct sn_store *s, const char *key, const uint8_t *data, uint64_t len,
                       uint64_t ver, uint64_t ts, int *applied)
{
    struct sn_wreq w;
    char err[CN_ERR_LEN];
    int rc = sn_wreq_init(&w, SN_WOP_PUT, (const uint8_t *)key, (uint32_t)strlen(key), NULL, 0,
                          (const uint8_t *)"etag", 4, ver, ts, data, len, err);
    if (rc == CN_OK)
        rc = sn_store_submit_wait(s, &w);
    if (applied)
        *applied = w.applied;
    sn_wreq_fini(&w);
    return rc;
}

static int test_sn_del(struct sn_store *s, const char *key, uint64_t ver, uint64_t ts, int *applied)
{
    struct sn_wreq w;
    char err[CN_ERR_LEN];
    int rc = sn_wreq_init(&w, SN_WOP_DELETE, (const uint8_t *)key, (uint32_t)strlen(key), NULL,
                          0, NULL, 0, ver, ts, NULL, 0, err);
    if (rc == CN_OK)
        rc = sn_store_submit_wait(s, &w);
    *applied = w.applied;
    sn_wreq_fini(&w);
    return rc;
}

/* Reads key whole and checks it equals want. */
static void test_sn_expect(struct sn_store *s, const char *key, const uint8_t *want, uint64_t len)
{
    struct sn_read r;
    char err[CN_ERR_LEN];
    int rc = sn_store_read(s, (const uint8_t *)key, (uint32_t)strlen(key), SN_READ_DATA, 0, 0, &r, err);
    CN_CHECK_EQ_INT(rc, CN_OK);
    if (rc == CN_OK) {
        CN_CHECK_EQ_INT(r.len, len);
        CN_CHECK(r.len == len && memcmp(r.data, want, len) == 0);
        if (len > 0)   /* the read path under test was the one taken */
            CN_CHECK_EQ_INT(r.pin != NULL, test_read_mmap);
    }
    sn_read_fini(&r);
}

static void test_sn_store_basic(void)
{
    test_sn_fresh_dir();
    struct sn_store *s = test_sn_open(1 << 20, SN_SYNC_WRITETHROUGH);
    uint64_t n = 300000;
    uint8_t *d = cn_malloc(n);
    test_sn_fill(d, n, 1);
    int applied;
    CN_CHECK_EQ_INT(test_sn_put(s, "a/1", d, n, 1, 100, &applied), CN_OK);
    CN_CHECK(applied);
    test_sn_expect(s, "a/1", d, n);
    /* slices: inside a block, across blocks, clipped at the end, at the end */
    struct sn_read r;
    char err[CN_ERR_LEN];
    uint64_t offs[] = {5, 65530, 131072, 299990, 300000};
    for (size_t i = 0; i < CN_ARRAY_LEN(offs); i++) {
        CN_CHECK_EQ_INT(sn_store_read(s, (const uint8_t *)"a/1", 3, SN_READ_DATA | SN_READ_SLICE,
                                      offs[i], 70000, &r, err), CN_OK);
        uint64_t want = CN_MIN(70000, n - offs[i]);
        CN_CHECK_EQ_INT(r.len, want);
        CN_CHECK(memcmp(r.data, d + offs[i], want) == 0);
        CN_CHECK_EQ_INT(r.size, n);
        sn_read_fini(&r);
    }
    CN_CHECK_EQ_INT(sn_store_read(s, (const uint8_t *)"a/1", 3, SN_READ_DATA | SN_READ_SLICE,
                                  n + 1, 10, &r, err), CN_INVAL);
    sn_read_fini(&r);
    /* HEAD: no data, etag */
    CN_CHECK_EQ_INT(sn_store_read(s, (const uint8_t *)"a/1", 3, 0, 0, 0, &r, err), CN_OK);
    CN_CHECK(r.buf == NULL && r.size == n && r.etag_len == 4 && r.ver == 1 && r.ts == 100);
    sn_read_fini(&r);
    /* older or equal (ts, ver) is not applied; newer is */
    CN_CHECK_EQ_INT(test_sn_put(s, "a/1", d, 10, 9, 99, &applied), CN_OK);
    CN_CHECK(!applied);
    CN_CHECK_EQ_INT(test_sn_put(s, "a/1", d, 10, 1, 100, &applied), CN_OK);
    CN_CHECK(!applied);
    test_sn_expect(s, "a/1", d, n);
    CN_CHECK_EQ_INT(test_sn_put(s, "a/1", d + 1, 10, 0, 101, &applied), CN_OK);
    CN_CHECK(applied);
    test_sn_expect(s, "a/1", d + 1, 10);
    /* delete: tombstone answers NOT_FOUND with its version */
    CN_CHECK_EQ_INT(test_sn_del(s, "a/1", 5, 100, &applied), CN_OK);
    CN_CHECK(!applied);
    CN_CHECK_EQ_INT(test_sn_del(s, "a/1", 5, 200, &applied), CN_OK);
    CN_CHECK(applied);
    CN_CHECK_EQ_INT(sn_store_read(s, (const uint8_t *)"a/1", 3, SN_READ_DATA, 0, 0, &r, err), CN_NOTFOUND);
    CN_CHECK(r.flags == SN_RECORD_FLAG_TOMBSTONE && r.ts == 200 && r.ver == 5);
    sn_read_fini(&r);
    CN_CHECK_EQ_INT(sn_store_read(s, (const uint8_t *)"zz", 2, SN_READ_DATA, 0, 0, &r, err), CN_NOTFOUND);
    CN_CHECK_EQ_INT(r.flags, 0);
    sn_read_fini(&r);
    /* empty record */
    CN_CHECK_EQ_INT(test_sn_put(s, "empty", NULL, 0, 1, 1, &applied), CN_OK);
    test_sn_expect(s, "empty", d, 0);
    sn_store_close(s, NULL);
    cn_free(d);
}

struct test_sn_list_acc {
    char keys[16][16];
    int n;
};

static int test_sn_list_cb(void *arg, const uint8_t *key, uint32_t klen, const struct sn_ival *v)
{
    struct test_sn_list_acc *a = arg;
    (void)v;
    if (a->n < 16 && klen < 16) {
        memcpy(a->keys[a->n], key, klen);
        a->keys[a->n][klen] = '\0';
    }
    a->n++;
    return 0;
}

static void test_sn_store_list(void)
{
    test_sn_fresh_dir();
    struct sn_store *s = test_sn_open(1 << 20, SN_SYNC_NONE);
    const char *keys[] = {"b/3", "a/1", "b/1", "b/2", "b/20", "c", "b/4"};
    int applied, more;
    char err[CN_ERR_LEN];
    for (size_t i = 0; i < CN_ARRAY_LEN(keys); i++)
        CN_CHECK_EQ_INT(test_sn_put(s, keys[i], (const uint8_t *)"x", 1, 1, 1, &applied), CN_OK);
    CN_CHECK_EQ_INT(test_sn_del(s, "b/2", 2, 2, &applied), CN_OK);
    struct test_sn_list_acc a = {0};
    CN_CHECK_EQ_INT(sn_store_list(s, (const uint8_t *)"b/", 2, NULL, 0, 3, test_sn_list_cb, &a, &more, err), CN_OK);
    CN_CHECK_EQ_INT(a.n, 3);
    CN_CHECK_EQ_STR(a.keys[0], "b/1");
    CN_CHECK_EQ_STR(a.keys[1], "b/20");
    CN_CHECK_EQ_STR(a.keys[2], "b/3");
    CN_CHECK(more);
    memset(&a, 0, sizeof(a));
    CN_CHECK_EQ_INT(sn_store_list(s, (const uint8_t *)"b/", 2, (const uint8_t *)"b/3", 3, 3, test_sn_list_cb, &a, &more, err), CN_OK);
    CN_CHECK_EQ_INT(a.n, 1);
    CN_CHECK_EQ_STR(a.keys[0], "b/4");
    CN_CHECK(!more);
    memset(&a, 0, sizeof(a));
    CN_CHECK_EQ_INT(sn_store_list(s, (const uint8_t *)"", 0, (const uint8_t *)"a", 1, 100, test_sn_list_cb, &a, &more, err), CN_OK);
    CN_CHECK_EQ_INT(a.n, 6);
    CN_CHECK_EQ_STR(a.keys[0], "a/1");
    sn_store_close(s, NULL);
}

static char *test_sn_container_file(uint32_t id)
{
    static char path[512];
    char dir[300];
    snprintf(dir, sizeof(dir), "%s/containers", test_dir);
    sn_container_path(dir, id, path, sizeof(path));
    return path;
}

/* Records appended to a container behind the index's back (as after a crash
 * that lost index writes) are indexed on open; a torn one is cut off. */
static void test_sn_store_recovery(void)
{
    test_sn_fresh_dir();
    struct sn_store *s = test_sn_open(1 << 30, SN_SYNC_WRITETHROUGH);
    uint8_t d[100000];
    int applied;
    test_sn_fill(d, sizeof(d), 3);
    CN_CHECK_EQ_INT(test_sn_put(s, "k1", d, sizeof(d), 1, 1, &applied), CN_OK);
    sn_store_close(s, NULL);
    /* append a complete record for k2, a newer k1, then half a record */
    const char *path = test_sn_container_file(1);
    int fd = open(path, O_WRONLY | O_APPEND);
    CN_CHECK(fd >= 0);
    for (int i = 0; i < 3; i++) {
        const char *key = i == 1 ? "k1" : i == 0 ? "k2" : "k3";
        uint64_t hl = sn_record_hdr_len(2, 0, 0, 5000);
        uint8_t *hdr = cn_malloc(hl);
        sn_record_encode(hdr, (const uint8_t *)key, 2, NULL, 0, NULL, 0, 0, 1, 10 + (uint64_t)i, d + i, 5000);
        CN_CHECK(write(fd, hdr, hl) == (ssize_t)hl);
        CN_CHECK(write(fd, d + i, i == 2 ? 1000 : 5000) == (i == 2 ? 1000 : 5000));
        cn_free(hdr);
    }
    close(fd);
    struct stat st0, st1;
    stat(path, &st0);
    s = test_sn_open(1 << 30, SN_SYNC_WRITETHROUGH);
    stat(path, &st1);
    test_sn_expect(s, "k1", d + 1, 5000);
    test_sn_expect(s, "k2", d, 5000);
    struct sn_read r;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(sn_store_read(s, (const uint8_t *)"k3", 2, SN_READ_DATA, 0, 0, &r, err), CN_NOTFOUND);
    sn_read_fini(&r);
    CN_CHECK(st1.st_size < st0.st_size);
    struct sn_store_stats ss;
    sn_store_stats(s, &ss);
    CN_CHECK_EQ_INT(ss.recovered_records, 2);
    CN_CHECK_EQ_INT(ss.torn_tails, 1);
    CN_CHECK_EQ_INT(ss.records, 2);
    /* the cut is reported to the caller (the daemon logs it), not logged */
    const char *const *notes;
    CN_CHECK_EQ_INT(sn_store_notes(s, &notes), 1);
    CN_CHECK(strstr(notes[0], "container 00000001") != NULL &&
             strstr(notes[0], "dropping") != NULL);
    /* writes continue after the cut */
    CN_CHECK_EQ_INT(test_sn_put(s, "k3", d, 10, 1, 1, &applied), CN_OK);
    sn_store_close(s, NULL);
    s = test_sn_open(1 << 30, SN_SYNC_WRITETHROUGH);
    test_sn_expect(s, "k3", d, 10);
    sn_store_stats(s, &ss);
    CN_CHECK_EQ_INT(ss.recovered_records, 0);
    CN_CHECK_EQ_INT(sn_store_notes(s, &notes), 0);
    sn_store_close(s, NULL);
}

struct test_sn_scrub_acc {
    int n;
    char key[64];
};

static void test_sn_scrub_cb(void *arg, const uint8_t *key, uint32_t klen,
                             const struct sn_ival *v, const char *why)
{
    struct test_sn_scrub_acc *a = arg;
    (void)v;
    (void)why;
    if (klen < sizeof(a->key)) {
        memcpy(a->key, key, klen);
        a->key[klen] = '\0';
    }
    a->n++;
}

static void test_sn_store_corrupt(void)
{
    test_sn_fresh_dir();
    struct sn_store *s = test_sn_open(1 << 30, SN_SYNC_WRITETHROUGH);
    static uint8_t d[3 << 20];
    int applied;
    test_sn_fill(d, sizeof(d), 5);
    CN_CHECK_EQ_INT(test_sn_put(s, "good", d, 1000, 1, 1, &applied), CN_OK);
    CN_CHECK_EQ_INT(test_sn_put(s, "bad", d, sizeof(d), 1, 1, &applied), CN_OK);
    CN_CHECK_EQ_INT(test_sn_put(s, "good2", d, 1000, 1, 1, &applied), CN_OK);
    /* flip a byte in the middle of "bad"'s data (the 2nd MiB) */
    uint64_t bad_at = SN_CONTAINER_HDR + sn_record_hdr_len(4, 0, 4, 1000) + 1000 +
                      sn_record_hdr_len(3, 0, 4, sizeof(d)) + (2u << 20) + 77;
    int fd = open(test_sn_container_file(1), O_RDWR);
    uint8_t b;
    CN_CHECK(pread(fd, &b, 1, (off_t)bad_at) == 1);
    b ^= 0x40;
    CN_CHECK(pwrite(fd, &b, 1, (off_t)bad_at) == 1);
    close(fd);
    struct sn_read r;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(sn_store_read(s, (const uint8_t *)"bad", 3, SN_READ_DATA, 0, 0, &r, err), CN_CORRUPT);
    CN_CHECK(strstr(err, "'bad'") != NULL);
    sn_read_fini(&r);
    /* a slice away from the damage still reads; one over it does not */
    CN_CHECK_EQ_INT(sn_store_read(s, (const uint8_t *)"bad", 3, SN_READ_DATA | SN_READ_SLICE, 0, 1 << 20, &r, err), CN_OK);
    sn_read_fini(&r);
    CN_CHECK_EQ_INT(sn_store_read(s, (const uint8_t *)"bad", 3, SN_READ_DATA | SN_READ_SLICE, (2u << 20) + 50, 100, &r, err), CN_CORRUPT);
    sn_read_fini(&r);
    test_sn_expect(s, "good2", d, 1000);
    for (uint32_t threads = 1; threads <= 4; threads *= 4) {
        struct test_sn_scrub_acc a = {0};
        struct sn_scrub_result res;
        CN_CHECK_EQ_INT(sn_scrub_run(s, threads, test_sn_scrub_cb, &a, &res, err), CN_OK);
        CN_CHECK_EQ_INT(a.n, 1);
        CN_CHECK_EQ_STR(a.key, "bad");
        CN_CHECK_EQ_INT(res.corrupt, 1);
        CN_CHECK_EQ_INT(res.records, 3);
        CN_CHECK_EQ_INT(res.bytes, sizeof(d) + 2000);
    }
    /* overwriting the damaged record makes it dead: the scrub no longer reports it */
    CN_CHECK_EQ_INT(test_sn_put(s, "bad", d, 10, 2, 2, &applied), CN_OK);
    struct test_sn_scrub_acc a = {0};
    struct sn_scrub_result res;
    CN_CHECK_EQ_INT(sn_scrub_run(s, 2, test_sn_scrub_cb, &a, &res, err), CN_OK);
    CN_CHECK_EQ_INT(a.n, 0);
    CN_CHECK_EQ_INT(res.corrupt_dead, 1);
    sn_store_close(s, NULL);
}

struct test_sn_writer_arg {
    struct sn_store *s;
    int id;
    int n;
    int errors;
};

static void *test_sn_writer_thread(void *p)
{
    struct test_sn_writer_arg *a = p;
    uint8_t d[3000];
    for (int i = 0; i < a->n; i++) {
        char key[32];
        snprintf(key, sizeof(key), "w%d/%d", a->id, i % 20);
        test_sn_fill(d, sizeof(d), (unsigned)(a->id * 1000 + i));
        if (test_sn_put(a->s, key, d, sizeof(d), (uint64_t)i, 1, NULL) != CN_OK)
            a->errors++;
    }
    return NULL;
}

/* Compaction while writers overwrite: everything stays readable, dead space
 * goes away, containers are unlinked. Also checks that concurrent writers
 * share syncs (group commit). */
static void test_sn_store_compact(void)
{
    test_sn_fresh_dir();
    struct sn_store *s = test_sn_open(64 * 1024, SN_SYNC_WRITETHROUGH);
    struct test_sn_writer_arg args[4];
    pthread_t th[4];
    char err[CN_ERR_LEN];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 4; i++) {
            args[i] = (struct test_sn_writer_arg){s, i, 200 + round, 0};
            pthread_create(&th[i], NULL, test_sn_writer_thread, &args[i]);
        }
        struct sn_compact_result cr;
        int rc = sn_compact_run(s, 30, &cr, err);
        if (rc != CN_OK)
            fprintf(stderr, "compact: %s\n", err);
        CN_CHECK_EQ_INT(rc, CN_OK);
        for (int i = 0; i < 4; i++) {
            pthread_join(th[i], NULL);
            CN_CHECK_EQ_INT(args[i].errors, 0);
        }
    }
    /* rewrite every key (same bytes, newer version) so that the old
     * containers are dead whatever the concurrent compactions did */
    for (int w = 0; w < 4; w++)
        for (int k = 0; k < 20; k++) {
            int last = 200;
            while (last % 20 != k)
                last--;
            char key[32];
            uint8_t d[3000];
            snprintf(key, sizeof(key), "w%d/%d", w, k);
            test_sn_fill(d, sizeof(d), (unsigned)(w * 1000 + last));
            CN_CHECK_EQ_INT(test_sn_put(s, key, d, sizeof(d), 1000, 1, NULL), CN_OK);
        }
    struct sn_store_stats before, after;
    sn_store_stats(s, &before);
    CN_CHECK(before.batches < before.puts);  /* group commit shared syncs */
    struct sn_compact_result cr;
    CN_CHECK_EQ_INT(sn_compact_run(s, 1, &cr, err), CN_OK);
    sn_store_stats(s, &after);
    CN_CHECK(cr.containers_reclaimed > 0);
    CN_CHECK(after.bytes_total < before.bytes_total);
    CN_CHECK(after.bytes_dead < before.bytes_dead);
    CN_CHECK_EQ_INT(after.records, 80);
    /* each key holds its last write (i = 200 or 201 rounds: seed of the last i for its slot) */
    for (int w = 0; w < 4; w++)
        for (int k = 0; k < 20; k++) {
            int last = 200;
            while (last % 20 != k)
                last--;
            char key[32];
            uint8_t d[3000];
            snprintf(key, sizeof(key), "w%d/%d", w, k);
            test_sn_fill(d, sizeof(d), (unsigned)(w * 1000 + last));
            test_sn_expect(s, key, d, sizeof(d));
        }
    struct sn_scrub_result res;
    CN_CHECK_EQ_INT(sn_scrub_run(s, 3, NULL, NULL, &res, err), CN_OK);
    CN_CHECK_EQ_INT(res.corrupt + res.corrupt_dead + res.headers_corrupt, 0);
    sn_store_close(s, NULL);
    /* and after a restart */
    s = test_sn_open(64 * 1024, SN_SYNC_WRITETHROUGH);
    sn_store_stats(s, &after);
    CN_CHECK_EQ_INT(after.records, 80);
    CN_CHECK_EQ_INT(after.recovered_records, 0);
    sn_store_close(s, NULL);
}

static void test_sn_store_periodic(void)
{
    test_sn_fresh_dir();
    struct sn_store *s = test_sn_open(1 << 20, SN_SYNC_PERIODIC);
    int applied;
    CN_CHECK_EQ_INT(test_sn_put(s, "p", (const uint8_t *)"abc", 3, 1, 1, &applied), CN_OK);
    usleep(200 * 1000);
    struct sn_store_stats st;
    sn_store_stats(s, &st);
    CN_CHECK(st.syncs >= 1);
    test_sn_expect(s, "p", (const uint8_t *)"abc", 3);
    sn_store_close(s, NULL);
}

/* The same cases through pread instead of the container mapping. */
static void test_sn_store_pread(void)
{
    test_read_mmap = 0;
    test_sn_store_basic();
    test_sn_store_corrupt();
    test_read_mmap = 1;
}

/* Data read through the mapping stays valid while the read holds it, even
 * after compaction dropped and unlinked its container. */
static void test_sn_store_mapped_pin(void)
{
    test_sn_fresh_dir();
    struct sn_store *s = test_sn_open(2 << 20, SN_SYNC_NONE);
    size_t n = 1536 * 1024;
    uint8_t *d = cn_malloc(n);
    test_sn_fill(d, n, 9);
    int applied;
    CN_CHECK_EQ_INT(test_sn_put(s, "a", d, n, 1, 1, &applied), CN_OK);
    CN_CHECK_EQ_INT(test_sn_put(s, "b", d, n, 1, 1, &applied), CN_OK);   /* rolls */
    struct sn_read r;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(sn_store_read(s, (const uint8_t *)"a", 1, SN_READ_DATA, 0, 0, &r, err), CN_OK);
    CN_CHECK(r.pin != NULL && r.buf == NULL);
    CN_CHECK_EQ_INT(test_sn_del(s, "a", 2, 2, &applied), CN_OK);
    struct sn_compact_result res;
    CN_CHECK_EQ_INT(sn_compact_run(s, 50, &res, err), CN_OK);
    CN_CHECK_EQ_INT(res.containers_reclaimed, 1);
    CN_CHECK(access(test_sn_container_file(1), F_OK) != 0);
    CN_CHECK(r.len == n && memcmp(r.data, d, n) == 0);
    sn_read_fini(&r);
    test_sn_expect(s, "b", d, n);
    sn_store_close(s, NULL);
    cn_free(d);
}

static int test_sn_forget(struct sn_store *s, const char *key, uint64_t ver, uint64_t ts,
                          int *applied)
{
    struct sn_wreq w;
    char err[CN_ERR_LEN];
    int rc = sn_wreq_init(&w, SN_WOP_FORGET, (const uint8_t *)key, (uint32_t)strlen(key), NULL,
                          0, NULL, 0, ver, ts, NULL, 0, err);
    if (rc == CN_OK)
        rc = sn_store_submit_wait(s, &w);
    *applied = w.applied;
    sn_wreq_fini(&w);
    return rc;
}

/* FORGET (the PURGE op): removes a record only when it holds exactly the
 * (ts, ver) given, live or tombstone, and leaves no tombstone behind; the
 * removal survives a reopen. */
static void test_sn_store_forget(void)
{
    test_sn_fresh_dir();
    struct sn_store *s = test_sn_open(1 << 20, SN_SYNC_WRITETHROUGH);
    uint8_t d[100];
    test_sn_fill(d, sizeof(d), 7);
    int applied = -1;
    CN_CHECK_EQ_INT(test_sn_put(s, "k", d, sizeof(d), 5, 100, &applied), CN_OK);
    CN_CHECK_EQ_INT(test_sn_forget(s, "k", 4, 100, &applied), CN_OK);   /* other ver */
    CN_CHECK_EQ_INT(applied, 0);
    CN_CHECK_EQ_INT(test_sn_forget(s, "k", 5, 101, &applied), CN_OK);   /* newer ts */
    CN_CHECK_EQ_INT(applied, 0);
    CN_CHECK_EQ_INT(test_sn_forget(s, "k", 5, 99, &applied), CN_OK);    /* older ts */
    CN_CHECK_EQ_INT(applied, 0);
    test_sn_expect(s, "k", d, sizeof(d));
    CN_CHECK_EQ_INT(test_sn_forget(s, "k", 5, 100, &applied), CN_OK);
    CN_CHECK_EQ_INT(applied, 1);
    struct sn_read r;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(sn_store_read(s, (const uint8_t *)"k", 1, 0, 0, 0, &r, err), CN_NOTFOUND);
    CN_CHECK((r.flags & SN_RECORD_FLAG_TOMBSTONE) == 0);   /* gone, no tombstone */
    sn_read_fini(&r);
    CN_CHECK_EQ_INT(test_sn_forget(s, "k", 5, 100, &applied), CN_OK);   /* nothing left */
    CN_CHECK_EQ_INT(applied, 0);
    /* no tombstone: an older copy is taken again (a repair may bring it) */
    CN_CHECK_EQ_INT(test_sn_put(s, "k", d, 10, 1, 50, &applied), CN_OK);
    CN_CHECK_EQ_INT(applied, 1);
    /* a tombstone is forgotten by its own version only */
    CN_CHECK_EQ_INT(test_sn_del(s, "t", 1, 200, &applied), CN_OK);
    CN_CHECK_EQ_INT(test_sn_forget(s, "t", 1, 200, &applied), CN_OK);
    CN_CHECK_EQ_INT(applied, 1);
    struct sn_store_stats st;
    sn_store_stats(s, &st);
    CN_CHECK_EQ_INT(st.copies_purged, 2);
    CN_CHECK_EQ_INT(st.tombstones, 0);
    CN_CHECK_EQ_INT(st.records, 1);
    sn_store_close(s, NULL);
    s = test_sn_open(1 << 20, SN_SYNC_WRITETHROUGH);   /* durable */
    CN_CHECK_EQ_INT(sn_store_read(s, (const uint8_t *)"t", 1, 0, 0, 0, &r, err), CN_NOTFOUND);
    sn_read_fini(&r);
    test_sn_expect(s, "k", d, 10);
    sn_store_close(s, NULL);
}

/* Pages of container `id` in the page cache (mincore over a fresh mapping
 * of the file); *pages gets the file's page count. */
static size_t test_sn_resident(uint32_t id, size_t *pages)
{
    size_t resident = 0;
    *pages = 0;
    int fd = open(test_sn_container_file(id), O_RDONLY);
    CN_CHECK(fd >= 0);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = ((size_t)st.st_size + pg - 1) / pg;
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    unsigned char *v = cn_malloc(n);
    CN_CHECK(m != MAP_FAILED);
    if (m != MAP_FAILED && mincore(m, (size_t)st.st_size, v) == 0)
        for (size_t i = 0; i < n; i++)
            resident += v[i] & 1;
    if (m != MAP_FAILED)
        munmap(m, (size_t)st.st_size);
    cn_free(v);
    close(fd);
    *pages = n;
    return resident;
}

/* writethrough: a value of 1 MiB or more leaves the page cache once synced
 * (its pages are reused by the next writes), a small one stays, and both
 * read back whole from the disk, through the mapping and through pread.
 * Under none the pages are still dirty and stay cached. */
static void test_sn_store_uncache(void)
{
    size_t big = 3u << 20, pages = 0;
    uint8_t *d = cn_malloc(big);
    test_sn_fill(d, big, 21);
    int applied;
    for (int mode = 0; mode < 2; mode++) {
        test_sn_fresh_dir();
        struct sn_store *s = test_sn_open(64 << 20, mode == 0 ? SN_SYNC_WRITETHROUGH
                                                                 : SN_SYNC_NONE);
        CN_CHECK_EQ_INT(test_sn_put(s, "small", d, 4000, 1, 1, &applied), CN_OK);
        CN_CHECK_EQ_INT(test_sn_put(s, "big", d, big, 1, 1, &applied), CN_OK);
        size_t resident = test_sn_resident(1, &pages);
        CN_CHECK(pages > big / 4096);
        if (mode == 0)   /* the small record's pages and the big one's first */
            CN_CHECK(resident <= 3);
        else
            CN_CHECK(resident >= big / 4096);
        test_sn_expect(s, "small", d, 4000);
        test_sn_expect(s, "big", d, big);
        sn_store_close(s, NULL);
    }
    test_read_mmap = 0;
    test_sn_fresh_dir();
    struct sn_store *s = test_sn_open(64 << 20, SN_SYNC_WRITETHROUGH);
    CN_CHECK_EQ_INT(test_sn_put(s, "big", d, big, 1, 1, &applied), CN_OK);
    CN_CHECK(test_sn_resident(1, &pages) <= 2);
    test_sn_expect(s, "big", d, big);
    sn_store_close(s, NULL);
    test_read_mmap = 1;
    cn_free(d);
}

/* Drops container 1's clean pages from the page cache (as the kernel would
 * under memory pressure); the store must not have mapped them yet. */
static void test_sn_evict(void)
{
    int fd = open(test_sn_container_file(1), O_RDONLY);
    CN_CHECK(fd >= 0);
    CN_CHECK_EQ_INT(fdatasync(fd), 0);
    CN_CHECK_EQ_INT(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    close(fd);
}

/* sn_store_read_nowait (the socket thread's read): answers from the page
 * cache only, never more than max_data bytes of data, and leaves what it
 * cannot answer that way (CN_WOULDBLOCK, nothing held) to sn_store_read. */
static void test_sn_store_nowait(void)
{
    test_sn_fresh_dir();
    struct sn_store *s = test_sn_open(64 << 20, SN_SYNC_WRITETHROUGH);
    static uint8_t d[200000];
    int applied;
    struct sn_read r;
    char err[CN_ERR_LEN];
    test_sn_fill(d, sizeof(d), 31);
    CN_CHECK_EQ_INT(test_sn_put(s, "small", d, 4096, 1, 1, &applied), CN_OK);
    CN_CHECK_EQ_INT(test_sn_put(s, "mid", d, sizeof(d), 1, 1, &applied), CN_OK);
    CN_CHECK_EQ_INT(test_sn_put(s, "gone", d, 10, 1, 1, &applied), CN_OK);
    CN_CHECK_EQ_INT(test_sn_del(s, "gone", 2, 2, &applied), CN_OK);
    /* cold: neither the header nor the data is read from the disk (each
     * such try starts the kernel's readahead: evicted again before the next) */
    test_sn_evict();
    CN_CHECK_EQ_INT(sn_store_read_nowait(s, (const uint8_t *)"small", 5, SN_READ_DATA, 0, 0,
                                         65536, &r, err), CN_WOULDBLOCK);
    CN_CHECK(r.pin == NULL && r.buf == NULL && r.meta == NULL);
    sn_read_fini(&r);
    test_sn_evict();
    CN_CHECK_EQ_INT(sn_store_read_nowait(s, (const uint8_t *)"small", 5, 0, 0, 0, 65536, &r,
                                         err), CN_WOULDBLOCK);
    sn_read_fini(&r);
    /* a waiting read brings it in; then it is answered without waiting */
    test_sn_expect(s, "small", d, 4096);
    CN_CHECK_EQ_INT(sn_store_read_nowait(s, (const uint8_t *)"small", 5, SN_READ_DATA, 0, 0,
                                         65536, &r, err), CN_OK);
    CN_CHECK(r.len == 4096 && memcmp(r.data, d, 4096) == 0 && r.ver == 1);
    sn_read_fini(&r);
    /* more data than max_data: left to a waiting read, cached or not; a
     * slice within the bound and a HEAD (no data) are answered */
    test_sn_expect(s, "mid", d, sizeof(d));
    CN_CHECK_EQ_INT(sn_store_read_nowait(s, (const uint8_t *)"mid", 3, SN_READ_DATA, 0, 0,
                                         65536, &r, err), CN_WOULDBLOCK);
    sn_read_fini(&r);
    CN_CHECK_EQ_INT(sn_store_read_nowait(s, (const uint8_t *)"mid", 3,
                                         SN_READ_DATA | SN_READ_SLICE, 70000, 1000, 65536, &r,
                                         err), CN_OK);
    CN_CHECK(r.len == 1000 && memcmp(r.data, d + 70000, 1000) == 0);
    sn_read_fini(&r);
    CN_CHECK_EQ_INT(sn_store_read_nowait(s, (const uint8_t *)"mid", 3, 0, 0, 0, 65536, &r, err),
                    CN_OK);
    CN_CHECK_EQ_INT(r.size, sizeof(d));
    sn_read_fini(&r);
    /* not found and deleted are answered from the index alone */
    CN_CHECK_EQ_INT(sn_store_read_nowait(s, (const uint8_t *)"none", 4, SN_READ_DATA, 0, 0,
                                         65536, &r, err), CN_NOTFOUND);
    sn_read_fini(&r);
    CN_CHECK_EQ_INT(sn_store_read_nowait(s, (const uint8_t *)"gone", 4, SN_READ_DATA, 0, 0,
                                         65536, &r, err), CN_NOTFOUND);
    CN_CHECK((r.flags & SN_RECORD_FLAG_TOMBSTONE) && r.ver == 2);
    sn_read_fini(&r);
    /* damage is not answered here: the waiting read reports and marks it */
    uint64_t at = SN_CONTAINER_HDR + sn_record_hdr_len(5, 0, 4, 4096) + 100;
    int fd = open(test_sn_container_file(1), O_RDWR);
    uint8_t b;
    CN_CHECK(pread(fd, &b, 1, (off_t)at) == 1);
    b ^= 0x10;
    CN_CHECK(pwrite(fd, &b, 1, (off_t)at) == 1);
    close(fd);
    CN_CHECK_EQ_INT(sn_store_read_nowait(s, (const uint8_t *)"small", 5, SN_READ_DATA, 0, 0,
                                         65536, &r, err), CN_WOULDBLOCK);
    sn_read_fini(&r);
    CN_CHECK_EQ_INT(sn_store_read(s, (const uint8_t *)"small", 5, SN_READ_DATA, 0, 0, &r, err),
                    CN_CORRUPT);
    sn_read_fini(&r);
    sn_store_close(s, NULL);
}

struct test_sn_osize_acc {
    int n;
    uint32_t has[8];
    uint64_t osize[8];
};

static int test_sn_osize_list_cb(void *arg, const uint8_t *key, uint32_t klen,
                                 const struct sn_ival *v)
{
    struct test_sn_osize_acc *a = arg;
    (void)key;
    (void)klen;
    if (a->n < 8) {
        a->has[a->n] = v->has_osize;
        a->osize[a->n] = v->osize;
    }
    a->n++;
    return 0;
}

/* Checks what the store says of "big" (osize 1 TiB + 1, etag "e-2") and
 * "small" (no osize): read, HEAD-style read and LIST. */
static void test_sn_osize_check(struct sn_store *s)
{
    struct sn_read r;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(sn_store_read(s, (const uint8_t *)"big", 3, SN_READ_DATA, 0, 0, &r, err),
                    CN_OK);
    CN_CHECK(r.has_osize && r.osize == (1ull << 40) + 1 && r.size == 300);
    CN_CHECK(r.etag_len == 3 && memcmp(r.etag, "e-2", 3) == 0);
    CN_CHECK(r.flags == 0);   /* the on-disk flag is not a record flag */
    sn_read_fini(&r);
    CN_CHECK_EQ_INT(sn_store_read(s, (const uint8_t *)"small", 5, 0, 0, 0, &r, err), CN_OK);
    CN_CHECK(!r.has_osize && r.size == 10);
    sn_read_fini(&r);
    struct test_sn_osize_acc a = {0};
    int more;
    CN_CHECK_EQ_INT(sn_store_list(s, (const uint8_t *)"", 0, NULL, 0, 10, test_sn_osize_list_cb,
                                  &a, &more, err), CN_OK);
    CN_CHECK_EQ_INT(a.n, 2);   /* "big", "small" */
    CN_CHECK(a.has[0] && a.osize[0] == (1ull << 40) + 1);
    CN_CHECK(!a.has[1]);
}

/* Protocol version 3's osize: stored with the record, returned by reads and
 * LIST, kept across a restart (from the index) and a re-index from the
 * containers (from the record header) and through compaction; a plain write
 * over the key drops it. */
static void test_sn_store_osize(void)
{
    test_sn_fresh_dir();
    struct sn_store *s = test_sn_open(1 << 20, SN_SYNC_WRITETHROUGH);
    uint8_t d[300];
    char err[CN_ERR_LEN];
    test_sn_fill(d, sizeof(d), 9);
    struct sn_wreq w;
    uint64_t osize = (1ull << 40) + 1;
    CN_CHECK_EQ_INT(sn_wreq_init_osize(&w, SN_WOP_PUT, (const uint8_t *)"big", 3, NULL, 0,
                                       (const uint8_t *)"e-2", 3, &osize, 0, 1, 1, d,
                                       sizeof(d),
                                       err), CN_OK);
    CN_CHECK(w.ri.has_osize && w.ri.osize == osize);
    CN_CHECK_EQ_INT(sn_store_submit_wait(s, &w), CN_OK);
    sn_wreq_fini(&w);
    int applied;
    CN_CHECK_EQ_INT(test_sn_put(s, "small", d, 10, 1, 1, &applied), CN_OK);
    test_sn_osize_check(s);
    sn_store_close(s, NULL);

    s = test_sn_open(1 << 20, SN_SYNC_WRITETHROUGH);   /* from the index */
    test_sn_osize_check(s);
    sn_store_close(s, NULL);

    char cmd[600];   /* from the containers alone */
    snprintf(cmd, sizeof(cmd), "rm -rf %s/index", test_dir);
    CN_CHECK_EQ_INT(system(cmd), 0);
    s = test_sn_open(1 << 20, SN_SYNC_WRITETHROUGH);
    struct sn_store_stats st;
    sn_store_stats(s, &st);
    CN_CHECK_EQ_INT(st.recovered_records, 2);
    test_sn_osize_check(s);

    /* compaction moves the record as it is: with small containers, the
     * overwrites of "small" leave "big"'s container half dead; compact it
     * and read again */
    sn_store_close(s, NULL);
    s = test_sn_open(256, SN_SYNC_WRITETHROUGH);
    for (int i = 0; i < 8; i++)
        CN_CHECK_EQ_INT(test_sn_put(s, "small", d, 10, 2 + (uint64_t)i, 2 + (uint64_t)i,
                                    &applied), CN_OK);
    struct sn_compact_result cr;
    CN_CHECK_EQ_INT(sn_compact_run(s, 1, &cr, err), CN_OK);
    CN_CHECK(cr.records_moved >= 1);
    test_sn_osize_check(s);

    /* a DELETE never stores an osize; a plain PUT replaces the record */
    CN_CHECK_EQ_INT(sn_wreq_init_osize(&w, SN_WOP_DELETE, (const uint8_t *)"t", 1, NULL, 0,
                                       NULL, 0, &osize, 1, 1, 1, NULL, 0, err), CN_OK);
    CN_CHECK(!w.ri.has_osize && !w.ri.has_owner);
    sn_wreq_fini(&w);
    CN_CHECK_EQ_INT(test_sn_put(s, "big", d, 5, 9, 9, &applied), CN_OK);
    struct sn_read r;
    CN_CHECK_EQ_INT(sn_store_read(s, (const uint8_t *)"big", 3, 0, 0, 0, &r, err), CN_OK);
    CN_CHECK(!r.has_osize && r.size == 5);
    sn_read_fini(&r);
    sn_store_close(s, NULL);
}

/* Index entries: with and without osize round-trip; an entry written
 * before index format 3 (ext byte 0) reads as one without osize; unknown
 * ext bits or a length that does not match are corrupt. */
static void test_sn_index_val_osize(void)
{
    struct sn_ival v, out;
    uint8_t buf[SN_IVAL_MAX];
    memset(&v, 0, sizeof(v));
    v.cid = 3;
    v.off = 16;
    v.hdr_len = 100;
    v.data_len = 300;
    v.ver = 5;
    v.ts = 6;
    v.etag_len = 3;
    memcpy(v.etag, "e-2", 3);
    size_t n = sn_index_encode_val(&v, buf);
    CN_CHECK_EQ_INT(n, SN_IVAL_FIXED + 3);
    CN_CHECK_EQ_INT(buf[3], 0);   /* the same bytes as before format 3 */
    CN_CHECK_EQ_INT(sn_index_decode_val(buf, n, &out), CN_OK);
    CN_CHECK(!out.has_osize && out.data_len == 300 && out.etag_len == 3);
    v.has_osize = 1;
    v.osize = UINT64_MAX - 1;
    n = sn_index_encode_val(&v, buf);
    CN_CHECK_EQ_INT(n, SN_IVAL_FIXED + 3 + 8);
    CN_CHECK_EQ_INT(sn_index_decode_val(buf, n, &out), CN_OK);
    CN_CHECK(out.has_osize && out.osize == UINT64_MAX - 1 && memcmp(out.etag, "e-2", 3) == 0);
    CN_CHECK_EQ_INT(sn_index_decode_val(buf, n - 1, &out), CN_CORRUPT);
    buf[3] = 0;   /* says no osize, but 8 bytes follow */
    CN_CHECK_EQ_INT(sn_index_decode_val(buf, n, &out), CN_CORRUPT);
    buf[3] = 5;   /* an unknown ext bit */
    CN_CHECK_EQ_INT(sn_index_decode_val(buf, n, &out), CN_CORRUPT);
    /* the owner flag: the etag bytes are the owner, no length of its own */
    v.has_osize = 0;
    v.has_owner = 1;
    n = sn_index_encode_val(&v, buf);
    CN_CHECK_EQ_INT(n, SN_IVAL_FIXED + 3);
    CN_CHECK_EQ_INT(sn_index_decode_val(buf, n, &out), CN_OK);
    CN_CHECK(out.has_owner && !out.has_osize && memcmp(out.etag, "e-2", 3) == 0);
}

/* Protocol version 3's owner: the record's etag bytes flagged as its owner,
 * through reads, LIST and a re-index from the containers. */
static void test_sn_store_owner(void)
{
    test_sn_fresh_dir();
    struct sn_store *s = test_sn_open(1 << 20, SN_SYNC_WRITETHROUGH);
    char err[CN_ERR_LEN];
    struct sn_wreq w;
    CN_CHECK_EQ_INT(sn_wreq_init_osize(&w, SN_WOP_PUT, (const uint8_t *)"b/x", 3, NULL, 0,
                                       (const uint8_t *)"owner-1", 7, NULL, 1, 1, 1, NULL, 0,
                                       err), CN_OK);
    CN_CHECK(w.ri.has_owner && w.ri.flags == 0);
    CN_CHECK_EQ_INT(sn_store_submit_wait(s, &w), CN_OK);
    sn_wreq_fini(&w);
    for (int pass = 0; pass < 2; pass++) {
        struct sn_read r;
        CN_CHECK_EQ_INT(sn_store_read(s, (const uint8_t *)"b/x", 3, 0, 0, 0, &r, err), CN_OK);
        CN_CHECK(r.has_owner && r.etag_len == 7 && memcmp(r.etag, "owner-1", 7) == 0 &&
                 r.flags == 0);
        sn_read_fini(&r);
        sn_store_close(s, NULL);
        char cmd[600];   /* the second pass from the containers alone */
        snprintf(cmd, sizeof(cmd), "rm -rf %s/index", test_dir);
        CN_CHECK_EQ_INT(system(cmd), 0);
        s = test_sn_open(1 << 20, SN_SYNC_WRITETHROUGH);
    }
    sn_store_close(s, NULL);
}

static void test_sn_cleanup(void)
{
    test_sn_fresh_dir();
}

static const struct cn_test_case cases[] = {
    {"basic", test_sn_store_basic},
    {"list", test_sn_store_list},
    {"recovery", test_sn_store_recovery},
    {"corrupt", test_sn_store_corrupt},
    {"compact", test_sn_store_compact},
    {"periodic", test_sn_store_periodic},
    {"pread", test_sn_store_pread},
    {"mapped_pin", test_sn_store_mapped_pin},
    {"forget", test_sn_store_forget},
    {"uncache", test_sn_store_uncache},
    {"osize", test_sn_store_osize},
    {"index_val_osize", test_sn_index_val_osize},
    {"owner", test_sn_store_owner},
    {"nowait", test_sn_store_nowait},
    {"cleanup", test_sn_cleanup},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
