/* Unit tests of the consistent-hash ring (common/ring.c). */
#include <stdio.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/ring.h"
#include "cn/test.h"

CN_TEST_GLOBALS;

static const char *const test_ring_names[] = {"tcp://127.0.0.1:7001", "tcp://127.0.0.1:7002",
                                              "tcp://127.0.0.1:7003", "tcp://127.0.0.1:7004"};

static void test_ring_distinct_replicas(void)
{
    char err[CN_ERR_LEN];
    struct cn_ring *r = cn_ring_new(test_ring_names, 4, 168, err);
    CN_CHECK(r != NULL);
    CN_CHECK_EQ_INT(cn_ring_validate(r), CN_OK);
    for (int i = 0; i < 1000; i++) {
        char key[32];
        int n = snprintf(key, sizeof(key), "o/bucket/key-%d", i);
        uint32_t out[8];
        CN_CHECK_EQ_INT(cn_ring_lookup(r, key, (size_t)n, 3, out), 3);
        CN_CHECK(out[0] != out[1] && out[1] != out[2] && out[0] != out[2]);
        CN_CHECK(out[0] < 4 && out[1] < 4 && out[2] < 4);
        CN_CHECK_EQ_INT(cn_ring_lookup(r, key, (size_t)n, 8, out), 4);
    }
    cn_ring_free(r);
}

/* Each key's replicas are those of some point (cn_ring_replicas_at), with
 * and without zones: a readiness check that walks the points sees every
 * key's replica set. */
static void test_ring_replicas_at_points(void)
{
    char err[CN_ERR_LEN];
    static const char *const zones[] = {"a", "a", "b", "c"};
    for (int zoned = 0; zoned < 2; zoned++) {
        struct cn_ring *r = cn_ring_new_weighted(test_ring_names, NULL, zoned ? zones : NULL, 4,
                                                 16, err);
        CN_CHECK(r != NULL);
        uint32_t points = cn_ring_total_points(r);
        for (int i = 0; i < 300; i++) {
            char key[32];
            int n = snprintf(key, sizeof(key), "o/bucket/key-%d", i);
            uint32_t want[3], got[3];
            CN_CHECK_EQ_INT(cn_ring_lookup(r, key, (size_t)n, 3, want), 3);
            int found = 0;
            for (uint32_t p = 0; p < points && !found; p++) {
                CN_CHECK_EQ_INT(cn_ring_replicas_at(r, p, 3, got), 3);
                found = memcmp(want, got, sizeof(want)) == 0;
            }
            CN_CHECK(found);
        }
        cn_ring_free(r);
    }
}

static void test_ring_balance(void)
{
    char err[CN_ERR_LEN];
    struct cn_ring *r = cn_ring_new(test_ring_names, 4, 168, err);
    int count[4] = {0};
    for (int i = 0; i < 40000; i++) {
        char key[32];
        int n = snprintf(key, sizeof(key), "k%d", i);
        uint32_t out[1];
        cn_ring_lookup(r, key, (size_t)n, 1, out);
        count[out[0]]++;
    }
    for (int i = 0; i < 4; i++)
        CN_CHECK(count[i] > 7000 && count[i] < 13000); /* 10000 +- 30 % */
    cn_ring_free(r);
}

/* Adding a fifth node moves only the keys it takes over (about 1/5). */
static void test_ring_stability(void)
{
    char err[CN_ERR_LEN];
    const char *five[5] = {test_ring_names[0], test_ring_names[1], test_ring_names[2],
                           test_ring_names[3], "tcp://127.0.0.1:7005"};
    struct cn_ring *a = cn_ring_new(test_ring_names, 4, 168, err);
    struct cn_ring *b = cn_ring_new(five, 5, 168, err);
    int moved = 0, wrong = 0;
    for (int i = 0; i < 10000; i++) {
        char key[32];
        int n = snprintf(key, sizeof(key), "k%d", i);
        uint32_t x, y;
        cn_ring_lookup(a, key, (size_t)n, 1, &x);
        cn_ring_lookup(b, key, (size_t)n, 1, &y);
        if (x != y) {
            moved++;
            wrong += y != 4;
        }
    }
    CN_CHECK(moved > 1000 && moved < 3000);
    CN_CHECK_EQ_INT(wrong, 0);
    cn_ring_free(a);
    cn_ring_free(b);
}

static void test_ring_errors(void)
{
    char err[CN_ERR_LEN];
    const char *dup[2] = {"a", "a"};
    CN_CHECK(cn_ring_new(dup, 2, 10, err) == NULL);
    CN_CHECK(strstr(err, "twice") != NULL);
    CN_CHECK(cn_ring_new(dup, 0, 10, err) == NULL);
    struct cn_ring *one = cn_ring_new(dup, 1, 1, err);
    uint32_t out[3];
    CN_CHECK_EQ_INT(cn_ring_lookup(one, "x", 1, 3, out), 1);
    CN_CHECK_EQ_INT(out[0], 0);
    cn_ring_free(one);
}

/* The arcs repair by difference sends: point i takes the hashes in
 * (hash of point i-1, hash of point i], point 0 also those above the last;
 * a key's replicas are those of the point whose arc holds its hash. */
static void test_ring_point_arcs(void)
{
    char err[CN_ERR_LEN];
    struct cn_ring *r = cn_ring_new(test_ring_names, 4, 168, err);
    uint32_t n = cn_ring_total_points(r);
    for (uint32_t i = 1; i < n; i++)
        CN_CHECK(cn_ring_point_hash(r, i - 1) <= cn_ring_point_hash(r, i));
    for (int k = 0; k < 2000; k++) {
        char key[32];
        int len = snprintf(key, sizeof(key), "o/b/key-%d", k);
        uint64_t h = cn_ring_hash(key, (size_t)len);
        uint32_t i = 0;
        while (i < n && cn_ring_point_hash(r, i) < h)
            i++;
        if (i == n)
            i = 0;   /* above the last point: point 0's arc */
        uint32_t a[3], b[3];
        CN_CHECK_EQ_INT(cn_ring_lookup(r, key, (size_t)len, 3, a), 3);
        CN_CHECK_EQ_INT(cn_ring_replicas_at(r, i, 3, b), 3);
        CN_CHECK(memcmp(a, b, sizeof(a)) == 0);
    }
    cn_ring_free(r);
}

int main(int argc, char **argv)
{
    static const struct cn_test_case cases[] = {
        {"distinct_replicas", test_ring_distinct_replicas},
        {"replicas_at_points", test_ring_replicas_at_points},
        {"balance", test_ring_balance},
        {"stability", test_ring_stability},
        {"errors", test_ring_errors},
        {"point_arcs", test_ring_point_arcs},
        {NULL, NULL},
    };
    return cn_test_main(cases, argc, argv);
}
