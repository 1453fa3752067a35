/* Unit tests of corrupt-record marks (storage_node: SN_WOP_MARK,
 * SN_IVAL_FLAG_CORRUPT): a read or a scrub that finds a record corrupt marks
 * it; HEAD then answers CORRUPT, a slice away from the damage still reads,
 * LIST shows the flag; an older write is refused, one of the same version
 * repairs it; the mark survives a reopen and a relocation by compaction;
 * tombstones, missing keys and other versions are never marked. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cn/test.h"
#include "container.h"
#include "store.h"

CN_TEST_GLOBALS;

#define MARK_LEN 200000u

static char test_dir[256];
static uint8_t mark_data[MARK_LEN];

static struct sn_store *mark_open(uint64_t container_len)
{
    struct sn_store_opts o;
    struct sn_store *s = NULL;
    char err[CN_ERR_LEN];
    sn_store_opts_default(&o);
    o.data_dir = test_dir;
    o.max_container_len = container_len;
    int rc = sn_store_open(&o, &s, err);
    if (rc != CN_OK)
        fprintf(stderr, "open: %s\n", err);
    CN_CHECK_EQ_INT(rc, CN_OK);
    return s;
}

static void mark_fresh_dir(void)
{
    char cmd[512];
    snprintf(test_dir, sizeof(test_dir), "/tmp/test_sn_mark.%d", (int)getpid());
    snprintf(cmd, sizeof(cmd), "rm -rf %s", test_dir);
    CN_CHECK_EQ_INT(system(cmd), 0);
    for (size_t i = 0; i < MARK_LEN; i++)
        mark_data[i] = (uint8_t)((i * 2654435761u + 3) >> 13);
}

static int mark_put(struct sn_store *s, const char *key, const uint8_t *data, uint64_t len,
                    uint64_t ver, uint64_t ts)
{
    struct sn_wreq w;
    char err[CN_ERR_LEN];
    int rc = sn_wreq_init(&w, SN_WOP_PUT, (const uint8_t *)key, (uint32_t)strlen(key), NULL, 0,
                          (const uint8_t *)"etag", 4, ver, ts, data, len, err);
    CN_CHECK_EQ_INT(rc, CN_OK);
    rc = sn_store_submit_wait(s, &w);
    CN_CHECK_EQ_INT(rc, CN_OK);
    int applied = w.applied;
    sn_wreq_fini(&w);
    return applied;
}

static int mark_read(struct sn_store *s, const char *key, int flags, uint64_t off, uint64_t len)
{
    struct sn_read r;
    char err[CN_ERR_LEN];
    int rc = sn_store_read(s, (const uint8_t *)key, (uint32_t)strlen(key), flags, off, len, &r,
                           err);
    if (rc == CN_OK && (flags & SN_READ_DATA) && !(flags & SN_READ_SLICE))
        CN_CHECK(r.len == MARK_LEN && memcmp(r.data, mark_data, MARK_LEN) == 0);
    sn_read_fini(&r);
    return rc;
}

/* Flips one byte in the middle of the data of the first record of
 * container 1 (key of klen bytes, MARK_LEN bytes of data). */
static void mark_damage_first(uint32_t klen)
{
    char dir[300], path[512];
    snprintf(dir, sizeof(dir), "%s/containers", test_dir);
    sn_container_path(dir, 1, path, sizeof(path));
    off_t at = (off_t)(SN_CONTAINER_HDR + sn_record_hdr_len(klen, 0, 4, MARK_LEN) + 100000);
    int fd = open(path, O_RDWR);
    uint8_t b = 0;
    CN_CHECK(fd >= 0 && pread(fd, &b, 1, at) == 1);
    b ^= 0x10;
    CN_CHECK(pwrite(fd, &b, 1, at) == 1);
    close(fd);
}

static int mark_list_cb(void *arg, const uint8_t *key, uint32_t klen, const struct sn_ival *v)
{
    uint32_t *flags = arg;
    if (klen == 1 && key[0] == 'a')
        *flags = v->flags;
    return 0;
}

static uint32_t mark_list_flags(struct sn_store *s)
{
    uint32_t flags = 0xffffffffu;
    int more;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(sn_store_list_ex(s, (const uint8_t *)"", 0, NULL, 0, 100, 1, mark_list_cb,
                                     &flags, &more, err), CN_OK);
    return flags;
}

static void test_mark_read_and_repair(void)
{
    mark_fresh_dir();
    struct sn_store *s = mark_open(1ull << 30);
    struct sn_store_stats st;
    CN_CHECK(mark_put(s, "a", mark_data, MARK_LEN, 1, 10));
    CN_CHECK(mark_put(s, "b", mark_data, 100, 1, 10));
    CN_CHECK_EQ_INT(mark_read(s, "a", 0, 0, 0), CN_OK);   /* HEAD: not marked yet */
    mark_damage_first(1);
    CN_CHECK_EQ_INT(mark_read(s, "a", SN_READ_DATA, 0, 0), CN_CORRUPT);
    sn_store_stats(s, &st);
    CN_CHECK_EQ_INT(st.corrupt_marked, 1);
    CN_CHECK_EQ_INT(mark_read(s, "a", 0, 0, 0), CN_CORRUPT);
    CN_CHECK_EQ_INT(mark_list_flags(s), SN_IVAL_FLAG_CORRUPT);
    CN_CHECK_EQ_INT(mark_read(s, "a", SN_READ_DATA | SN_READ_SLICE, 0, 65536), CN_OK);
    CN_CHECK_EQ_INT(mark_read(s, "b", 0, 0, 0), CN_OK);
    /* a second corrupt read does not mark again */
    CN_CHECK_EQ_INT(mark_read(s, "a", SN_READ_DATA, 0, 0), CN_CORRUPT);
    sn_store_stats(s, &st);
    CN_CHECK_EQ_INT(st.corrupt_marked, 1);
    CN_CHECK(!mark_put(s, "a", mark_data, MARK_LEN, 9, 9));     /* older: refused */
    CN_CHECK(!mark_put(s, "a", mark_data, MARK_LEN, 0, 10));    /* same ts, older ver */
    CN_CHECK_EQ_INT(mark_read(s, "a", 0, 0, 0), CN_CORRUPT);
    CN_CHECK(mark_put(s, "a", mark_data, MARK_LEN, 1, 10));     /* the same version: repair */
    CN_CHECK_EQ_INT(mark_read(s, "a", SN_READ_DATA, 0, 0), CN_OK);
    CN_CHECK_EQ_INT(mark_read(s, "a", 0, 0, 0), CN_OK);
    CN_CHECK_EQ_INT(mark_list_flags(s), 0);
    CN_CHECK(!mark_put(s, "a", mark_data, MARK_LEN, 1, 10));    /* unmarked: equal is stale */
    sn_store_stats(s, &st);
    CN_CHECK_EQ_INT(st.corrupt_repaired, 1);
    CN_CHECK_EQ_INT(st.records, 2);
    sn_store_close(s, NULL);
}

static void test_mark_persists(void)
{
    mark_fresh_dir();
    struct sn_store *s = mark_open(1ull << 30);
    CN_CHECK(mark_put(s, "a", mark_data, MARK_LEN, 1, 10));
    mark_damage_first(1);
    CN_CHECK_EQ_INT(mark_read(s, "a", SN_READ_DATA, 0, 0), CN_CORRUPT);
    CN_CHECK_EQ_INT(sn_store_close(s, NULL), CN_OK);
    s = mark_open(1ull << 30);
    CN_CHECK_EQ_INT(mark_read(s, "a", 0, 0, 0), CN_CORRUPT);
    CN_CHECK(mark_put(s, "a", mark_data, MARK_LEN, 1, 10));
    CN_CHECK_EQ_INT(sn_store_close(s, NULL), CN_OK);
    s = mark_open(1ull << 30);
    CN_CHECK_EQ_INT(mark_read(s, "a", SN_READ_DATA, 0, 0), CN_OK);
    sn_store_close(s, NULL);
}

static void mark_scrub_cb(void *arg, const uint8_t *key, uint32_t klen, const struct sn_ival *v,
                          const char *why)
{
    (void)key, (void)klen, (void)v, (void)why;
    (*(int *)arg)++;
}

static void test_mark_by_scrub(void)
{
    mark_fresh_dir();
    struct sn_store *s = mark_open(1ull << 30);
    struct sn_scrub_result res;
    char err[CN_ERR_LEN];
    int found = 0;
    CN_CHECK(mark_put(s, "a", mark_data, MARK_LEN, 1, 10));
    mark_damage_first(1);
    CN_CHECK_EQ_INT(sn_scrub_run(s, 2, mark_scrub_cb, &found, &res, err), CN_OK);
    CN_CHECK_EQ_INT(found, 1);
    CN_CHECK_EQ_INT(mark_read(s, "a", 0, 0, 0), CN_CORRUPT);
    sn_store_close(s, NULL);
}

/* Compaction copies the bad bytes forward: the mark goes with them. */
static void test_mark_survives_relocation(void)
{
    mark_fresh_dir();
    struct sn_store *s = mark_open(1u << 20);
    struct sn_compact_result res;
    char err[CN_ERR_LEN];
    CN_CHECK(mark_put(s, "a", mark_data, MARK_LEN, 1, 10));
    for (int i = 0; i < 6; i++) {
        char k[8];
        snprintf(k, sizeof(k), "f%d", i);
        CN_CHECK(mark_put(s, k, mark_data, MARK_LEN, 1, 10));
    }
    mark_damage_first(1);
    CN_CHECK_EQ_INT(mark_read(s, "a", SN_READ_DATA, 0, 0), CN_CORRUPT);
    for (int i = 0; i < 6; i++) {   /* container 1 becomes mostly dead */
        char k[8];
        snprintf(k, sizeof(k), "f%d", i);
        CN_CHECK(mark_put(s, k, mark_data, 10, 2, 20));
    }
    CN_CHECK_EQ_INT(sn_compact_run(s, 1, &res, err), CN_OK);
    CN_CHECK(res.records_moved >= 1 && res.containers_reclaimed >= 1);
    CN_CHECK_EQ_INT(mark_read(s, "a", 0, 0, 0), CN_CORRUPT);
    CN_CHECK_EQ_INT(mark_read(s, "a", SN_READ_DATA, 0, 0), CN_CORRUPT);
    CN_CHECK(mark_put(s, "a", mark_data, MARK_LEN, 1, 10));
    CN_CHECK_EQ_INT(mark_read(s, "a", SN_READ_DATA, 0, 0), CN_OK);
    sn_store_close(s, NULL);
}

static void test_mark_only_that_version(void)
{
    mark_fresh_dir();
    struct sn_store *s = mark_open(1ull << 30);
    struct sn_wreq w;
    char err[CN_ERR_LEN];
    CN_CHECK(mark_put(s, "a", mark_data, 100, 1, 10));
    CN_CHECK_EQ_INT(sn_store_mark_corrupt(s, (const uint8_t *)"a", 1, 1, 9), 0);   /* other ts */
    CN_CHECK_EQ_INT(sn_store_mark_corrupt(s, (const uint8_t *)"x", 1, 1, 10), 0);  /* missing */
    CN_CHECK_EQ_INT(sn_wreq_init(&w, SN_WOP_DELETE, (const uint8_t *)"d", 1, NULL, 0, NULL, 0, 1,
                                 10, NULL, 0, err), CN_OK);
    CN_CHECK_EQ_INT(sn_store_submit_wait(s, &w), CN_OK);
    sn_wreq_fini(&w);
    CN_CHECK_EQ_INT(sn_store_mark_corrupt(s, (const uint8_t *)"d", 1, 1, 10), 0);  /* tombstone */
    CN_CHECK_EQ_INT(sn_store_mark_corrupt(s, (const uint8_t *)"a", 1, 1, 10), 1);
    CN_CHECK_EQ_INT(sn_store_mark_corrupt(s, (const uint8_t *)"a", 1, 1, 10), 0);  /* already */
    /* a newer write clears the mark */
    CN_CHECK(mark_put(s, "a", mark_data, 100, 2, 11));
    CN_CHECK_EQ_INT(mark_read(s, "a", 0, 0, 0), CN_OK);
    sn_store_close(s, NULL);
}

static void test_mark_cleanup(void)
{
    mark_fresh_dir();
}

static const struct cn_test_case cases[] = {
    {"read_and_repair", test_mark_read_and_repair},
    {"persists", test_mark_persists},
    {"by_scrub", test_mark_by_scrub},
    {"survives_relocation", test_mark_survives_relocation},
    {"only_that_version", test_mark_only_that_version},
    {"cleanup", test_mark_cleanup},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
