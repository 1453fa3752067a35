/* Unit tests of the hints a node keeps for its peers (hint.h) over a real
 * store's index: one hint per (peer, key) with the newest version, drops
 * only of hints not newer than the one replayed, listing in key order with
 * `after`, the count and byte bounds (new hints refused, held ones still
 * updated), the counts rebuilt when the store is reopened, and that hints
 * never show in the store's listing. sn_hints_validate() after each step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cn/test.h"
#include "hint.h"
#include "store.h"

CN_TEST_GLOBALS;

static char test_dir[256];

static struct sn_store *test_hint_store(int fresh)
{
    char cmd[512];
    snprintf(test_dir, sizeof(test_dir), "/tmp/test_sn_hint.%d", (int)getpid());
    snprintf(cmd, sizeof(cmd), "rm -rf %s", test_dir);
    if (fresh)
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

static struct sn_hints *test_hint_open(struct sn_store *s, uint64_t max, uint64_t max_bytes)
{
    struct sn_hint_opts o = {max, max_bytes, 1};
    struct sn_hints *h = NULL;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(sn_hints_open(sn_store_index(s), &o, &h, err), CN_OK);
    CN_CHECK_EQ_INT(sn_hints_validate(h), CN_OK);
    return h;
}

static void test_hint_close(struct sn_store *s, struct sn_hints *h, int remove)
{
    char err[CN_ERR_LEN], cmd[512];
    sn_hints_free(h);
    CN_CHECK_EQ_INT(sn_store_close(s, err), CN_OK);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", test_dir);
    if (remove)
        CN_CHECK_EQ_INT(system(cmd), 0);
}

static int test_hint_add(struct sn_hints *h, const char *peer, const char *key, uint64_t ts,
                         int *applied)
{
    char err[CN_ERR_LEN];
    int rc = sn_hints_add(h, (const uint8_t *)peer, (uint32_t)strlen(peer),
                          (const uint8_t *)key, (uint32_t)strlen(key), ts, 1, applied, err);
    CN_CHECK_EQ_INT(sn_hints_validate(h), CN_OK);
    return rc;
}

static int test_hint_remove(struct sn_hints *h, const char *peer, const char *key, uint64_t ts)
{
    char err[CN_ERR_LEN];
    int removed = -1;
    CN_CHECK_EQ_INT(sn_hints_remove(h, (const uint8_t *)peer, (uint32_t)strlen(peer),
                                    (const uint8_t *)key, (uint32_t)strlen(key), ts, 1,
                                    &removed, err),
                    CN_OK);
    CN_CHECK_EQ_INT(sn_hints_validate(h), CN_OK);
    return removed;
}

struct test_hint_listed {
    char keys[16][32];
    uint64_t ts[16];
    uint32_t n;
};

static void test_hint_list_cb(void *arg, const uint8_t *key, uint32_t klen, uint64_t ts,
                              uint64_t ver)
{
    struct test_hint_listed *l = arg;
    (void)ver;
    CN_CHECK(l->n < 16 && klen < 32);
    memcpy(l->keys[l->n], key, klen);
    l->keys[l->n][klen] = '\0';
    l->ts[l->n++] = ts;
}

static uint32_t test_hint_list(struct sn_hints *h, const char *peer, const char *after,
                               uint32_t limit, struct test_hint_listed *l, int *more)
{
    char err[CN_ERR_LEN];
    memset(l, 0, sizeof(*l));
    CN_CHECK_EQ_INT(sn_hints_list(h, (const uint8_t *)peer, (uint32_t)strlen(peer),
                                  (const uint8_t *)after, (uint32_t)strlen(after), limit,
                                  test_hint_list_cb, l, more, err),
                    CN_OK);
    return l->n;
}

static void test_hint_one_per_key(void)
{
    struct sn_store *s = test_hint_store(1);
    struct sn_hints *h = test_hint_open(s, 100, 1 << 20);
    struct sn_hint_stats st;
    struct test_hint_listed l;
    int applied, more;
    CN_CHECK_EQ_INT(test_hint_add(h, "c", "k1", 10, &applied), CN_OK);
    CN_CHECK_EQ_INT(applied, 1);
    CN_CHECK_EQ_INT(test_hint_add(h, "c", "k1", 5, &applied), CN_OK); /* older: kept */
    CN_CHECK_EQ_INT(applied, 0);
    CN_CHECK_EQ_INT(test_hint_add(h, "c", "k1", 20, &applied), CN_OK); /* newer: moves */
    CN_CHECK_EQ_INT(applied, 1);
    CN_CHECK_EQ_INT(test_hint_add(h, "c", "k0", 7, &applied), CN_OK);
    CN_CHECK_EQ_INT(test_hint_add(h, "cc", "k1", 7, &applied), CN_OK); /* other peer */
    sn_hints_stats(h, &st);
    CN_CHECK_EQ_INT(st.held, 3);
    CN_CHECK_EQ_INT(st.added, 3);
    CN_CHECK_EQ_INT(st.updated, 1);
    /* peer "c" lists its own two in key order, not "cc"'s */
    CN_CHECK_EQ_INT(test_hint_list(h, "c", "", 10, &l, &more), 2);
    CN_CHECK(strcmp(l.keys[0], "k0") == 0 && strcmp(l.keys[1], "k1") == 0 && l.ts[1] == 20);
    CN_CHECK_EQ_INT(more, 0);
    CN_CHECK_EQ_INT(test_hint_list(h, "c", "", 1, &l, &more), 1);
    CN_CHECK_EQ_INT(more, 1);
    CN_CHECK_EQ_INT(test_hint_list(h, "c", "k0", 10, &l, &more), 1);
    CN_CHECK(strcmp(l.keys[0], "k1") == 0);
    /* a replay of version 10 does not drop the hint of version 20 */
    CN_CHECK_EQ_INT(test_hint_remove(h, "c", "k1", 10), 0);
    CN_CHECK_EQ_INT(test_hint_remove(h, "c", "k1", 20), 1);
    CN_CHECK_EQ_INT(test_hint_remove(h, "c", "k1", 20), 0);   /* gone: fine */
    CN_CHECK_EQ_INT(test_hint_remove(h, "c", "k0", 99), 1);
    CN_CHECK_EQ_INT(test_hint_list(h, "c", "", 10, &l, &more), 0);
    struct sn_hint_target t[4];
    CN_CHECK_EQ_INT(sn_hints_targets(h, t, 4), 1);
    CN_CHECK(t[0].id_len == 2 && memcmp(t[0].id, "cc", 2) == 0 && t[0].count == 1);
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(sn_hints_add(h, (const uint8_t *)"", 0, (const uint8_t *)"k", 1, 1, 1,
                                 &applied, err), CN_INVAL);
    test_hint_close(s, h, 1);
}

static void test_hint_bound(void)
{
    struct sn_store *s = test_hint_store(1);
    struct sn_hints *h = test_hint_open(s, 3, 1 << 20);
    struct sn_hint_stats st;
    int applied;
    CN_CHECK_EQ_INT(test_hint_add(h, "c", "a", 1, &applied), CN_OK);
    CN_CHECK_EQ_INT(test_hint_add(h, "c", "b", 1, &applied), CN_OK);
    CN_CHECK_EQ_INT(test_hint_add(h, "d", "a", 1, &applied), CN_OK);
    /* full: a new hint is refused, the oldest are kept; a held one still moves */
    CN_CHECK_EQ_INT(test_hint_add(h, "c", "z", 1, &applied), CN_TOOBIG);
    CN_CHECK_EQ_INT(test_hint_add(h, "e", "a", 1, &applied), CN_TOOBIG);
    CN_CHECK_EQ_INT(test_hint_add(h, "c", "a", 2, &applied), CN_OK);
    CN_CHECK_EQ_INT(applied, 1);
    sn_hints_stats(h, &st);
    CN_CHECK_EQ_INT(st.held, 3);
    CN_CHECK_EQ_INT(st.refused, 2);
    /* a replayed hint makes room */
    CN_CHECK_EQ_INT(test_hint_remove(h, "c", "b", 1), 1);
    CN_CHECK_EQ_INT(test_hint_add(h, "c", "z", 1, &applied), CN_OK);
    sn_hints_free(h);
    /* bytes: each hint counts 2 + peer + key + 24 = 28 bytes here */
    h = test_hint_open(s, 1000, 28 * 3 + 27);
    sn_hints_stats(h, &st);
    CN_CHECK_EQ_INT(st.held, 3);
    CN_CHECK_EQ_INT(st.bytes, 28 * 3);
    CN_CHECK_EQ_INT(test_hint_add(h, "c", "y", 1, &applied), CN_TOOBIG);
    test_hint_close(s, h, 1);
}

static int test_hint_list_store_cb(void *arg, const uint8_t *key, uint32_t klen,
                                   const struct sn_ival *v)
{
    (void)key;
    (void)klen;
    (void)v;
    (*(int *)arg)++;
    return 0;
}

static void test_hint_reopen(void)
{
    struct sn_store *s = test_hint_store(1);
    struct sn_hints *h = test_hint_open(s, 100, 1 << 20);
    char key[16], err[CN_ERR_LEN];
    int applied, more, listed = 0;
    for (int i = 0; i < 10; i++) {
        snprintf(key, sizeof(key), "key%02d", i);
        CN_CHECK_EQ_INT(test_hint_add(h, i % 2 ? "p1" : "p2", key, 5, &applied), CN_OK);
    }
    test_hint_close(s, h, 0);
    s = test_hint_store(0);
    h = test_hint_open(s, 100, 1 << 20);
    struct sn_hint_stats st;
    sn_hints_stats(h, &st);
    CN_CHECK_EQ_INT(st.held, 10);
    struct sn_hint_target t[4];
    CN_CHECK_EQ_INT(sn_hints_targets(h, t, 4), 2);
    CN_CHECK(t[0].count == 5 && t[1].count == 5);
    /* hints are not records: the store's listing (tombstones too) is empty */
    CN_CHECK_EQ_INT(sn_store_list_ex(s, (const uint8_t *)"", 0, NULL, 0, 100, 1,
                                     test_hint_list_store_cb, &listed, &more, err),
                    CN_OK);
    CN_CHECK_EQ_INT(listed, 0);
    test_hint_close(s, h, 1);
}

static const struct cn_test_case cases[] = {
    {"one_per_key", test_hint_one_per_key},
    {"bound", test_hint_bound},
    {"reopen", test_hint_reopen},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
