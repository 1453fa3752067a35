/* Unit tests of the conditional-write leases (lease.h) over a real store:
 * the expectation check (absent / a version, tombstones count as absent),
 * one token at a time, a write holding its lease until it ends, UNLOCK,
 * the table's bound (BUSY when full) and many threads racing for one key
 * (exactly one grant). Expiry (10 s) is covered by the docs, not waited
 * for here. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cn/test.h"
#include "lease.h"
#include "store.h"

CN_TEST_GLOBALS;

static char test_dir[256];

static struct sn_store *test_lease_open(void)
{
    char cmd[512];
    snprintf(test_dir, sizeof(test_dir), "/tmp/test_sn_lease.%d", (int)getpid());
    snprintf(cmd, sizeof(cmd), "rm -rf %s", test_dir);
    CN_CHECK_EQ_INT(system(cmd), 0);
    struct sn_store_opts o;
    struct sn_store *s = NULL;
    char err[CN_ERR_LEN];
    sn_store_opts_default(&o);
    o.data_dir = test_dir;
    o.sync_mode = SN_SYNC_NONE;
    CN_CHECK_EQ_INT(sn_store_open(&o, &s, err), CN_OK);
    return s;
}

static void test_lease_close(struct sn_store *s)
{
    char err[CN_ERR_LEN], cmd[512];
    CN_CHECK_EQ_INT(sn_store_close(s, err), CN_OK);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", test_dir);
    CN_CHECK_EQ_INT(system(cmd), 0);
}

static void test_lease_write(struct sn_store *s, int del, const char *key, uint64_t ver)
{
    struct sn_wreq w;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(sn_wreq_init(&w, del ? SN_WOP_DELETE : SN_WOP_PUT, (const uint8_t *)key,
                                 (uint32_t)strlen(key), NULL, 0, NULL, 0, ver, ver,
                                 del ? NULL : (const uint8_t *)"d", del ? 0 : 1, err),
                    CN_OK);
    CN_CHECK_EQ_INT(sn_store_submit_wait(s, &w), CN_OK);
    sn_wreq_fini(&w);
}

static enum msg_status test_lease_take(struct sn_lease_table *t, struct sn_store *s,
                                       const char *key, uint64_t tok, int has_ifver,
                                       uint64_t ifver, uint64_t *cur_ver)
{
    uint64_t ts;
    char err[CN_ERR_LEN];
    return sn_lease_take(t, s, (const uint8_t *)key, (uint32_t)strlen(key), tok, has_ifver,
                         ifver, cur_ver, &ts, err);
}

static void test_lease_expectations(void)
{
    struct sn_store *s = test_lease_open();
    struct sn_lease_table *t = sn_lease_table_new();
    uint64_t cur;
    const uint8_t *k = (const uint8_t *)"k";
    /* absent key: granted once, again to the same token, LOCKED to others */
    CN_CHECK_EQ_INT(test_lease_take(t, s, "k", 1, 0, 0, &cur), MSG_ST_OK);
    CN_CHECK_EQ_INT(test_lease_take(t, s, "k", 1, 0, 0, &cur), MSG_ST_OK);
    CN_CHECK_EQ_INT(test_lease_take(t, s, "k", 2, 0, 0, &cur), MSG_ST_LOCKED);
    CN_CHECK_EQ_INT(sn_lease_write_begin(t, k, 1, 2), MSG_ST_LOCKED);
    /* the write under token 1: while it runs even token 1 cannot re-lock,
     * and UNLOCK leaves it alone */
    CN_CHECK_EQ_INT(sn_lease_write_begin(t, k, 1, 1), MSG_ST_OK);
    CN_CHECK_EQ_INT(sn_lease_write_begin(t, k, 1, 1), MSG_ST_LOCKED);
    CN_CHECK_EQ_INT(test_lease_take(t, s, "k", 1, 0, 0, &cur), MSG_ST_LOCKED);
    sn_lease_drop(t, k, 1, 1);
    CN_CHECK_EQ_INT(sn_lease_count(t), 1);
    test_lease_write(s, 0, "k", 10);
    sn_lease_write_end(t, k, 1, 1);
    CN_CHECK_EQ_INT(sn_lease_count(t), 0);
    /* the record exists now: "absent" fails, its version passes */
    CN_CHECK_EQ_INT(test_lease_take(t, s, "k", 3, 0, 0, &cur), MSG_ST_PRECONDITION);
    CN_CHECK_EQ_INT(cur, 10);
    CN_CHECK_EQ_INT(test_lease_take(t, s, "k", 3, 1, 9, &cur), MSG_ST_PRECONDITION);
    CN_CHECK_EQ_INT(test_lease_take(t, s, "k", 3, 1, 10, &cur), MSG_ST_OK);
    sn_lease_drop(t, k, 1, 4);             /* another token's UNLOCK: no effect */
    CN_CHECK_EQ_INT(test_lease_take(t, s, "k", 4, 1, 10, &cur), MSG_ST_LOCKED);
    sn_lease_drop(t, k, 1, 3);
    CN_CHECK_EQ_INT(sn_lease_count(t), 0);
    /* a tombstone is "absent" */
    test_lease_write(s, 1, "k", 11);
    CN_CHECK_EQ_INT(test_lease_take(t, s, "k", 5, 1, 10, &cur), MSG_ST_PRECONDITION);
    CN_CHECK_EQ_INT(test_lease_take(t, s, "k", 5, 0, 0, &cur), MSG_ST_OK);
    sn_lease_drop(t, k, 1, 5);
    sn_lease_table_free(t);
    test_lease_close(s);
}

static void test_lease_bound(void)
{
    struct sn_store *s = test_lease_open();
    struct sn_lease_table *t = sn_lease_table_new();
    uint64_t cur;
    char key[32];
    for (uint32_t i = 0; i < SN_LEASE_MAX; i++) {
        snprintf(key, sizeof(key), "key-%u", i);
        CN_CHECK_EQ_INT(test_lease_take(t, s, key, 100 + i, 0, 0, &cur), MSG_ST_OK);
    }
    CN_CHECK_EQ_INT(sn_lease_count(t), SN_LEASE_MAX);
    CN_CHECK_EQ_INT(test_lease_take(t, s, "one-more", 1, 0, 0, &cur), MSG_ST_BUSY);
    sn_lease_drop(t, (const uint8_t *)"key-7", 5, 107);
    CN_CHECK_EQ_INT(test_lease_take(t, s, "one-more", 1, 0, 0, &cur), MSG_ST_OK);
    sn_lease_table_free(t);    /* frees the keys it holds */
    test_lease_close(s);
}

struct test_lease_racer {
    struct sn_lease_table *t;
    struct sn_store *s;
    uint64_t tok;
    enum msg_status st;
    pthread_barrier_t *go;
};

static void *test_lease_race_main(void *arg)
{
    struct test_lease_racer *rc = arg;
    uint64_t cur;
    pthread_barrier_wait(rc->go);
    rc->st = test_lease_take(rc->t, rc->s, "race", rc->tok, 0, 0, &cur);
    return NULL;
}

static void test_lease_race(void)
{
    enum { N = 8 };
    struct sn_store *s = test_lease_open();
    struct sn_lease_table *t = sn_lease_table_new();
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, N);
    pthread_t th[N];
    struct test_lease_racer r[N];
    for (int i = 0; i < N; i++) {
        r[i] = (struct test_lease_racer){t, s, 1000 + (uint64_t)i, MSG_ST_INTERNAL, &go};
        CN_CHECK_EQ_INT(pthread_create(&th[i], NULL, test_lease_race_main, &r[i]), 0);
    }
    int granted = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        granted += r[i].st == MSG_ST_OK;
        CN_CHECK(r[i].st == MSG_ST_OK || r[i].st == MSG_ST_LOCKED);
    }
    CN_CHECK_EQ_INT(granted, 1);
    pthread_barrier_destroy(&go);
    sn_lease_table_free(t);
    test_lease_close(s);
}

static const struct cn_test_case cases[] = {
    {"expectations", test_lease_expectations},
    {"bound", test_lease_bound},
    {"race", test_lease_race},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
