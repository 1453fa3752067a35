/* The replicated store (gateway/cluster/store.c) over a fake storage client:
 * the test stands in for the nodes, sees every request the store sends and
 * answers each by hand, in any order, with any status, version or failure.
 * Link-time substitution: this file defines the storage client's functions
 * (storage_client.h), so the static gw_core library's store.c, repair.c
 * and handoff.c run against it and storage_client.c is never linked.
 * Cases: the write quorum (W acks answer, a lost quorum fails once, late
 * replies after the answer), down replicas skipped and hinted, deletes at D,
 * reads with R = 1 (next replica on a miss, read repair of the replica that
 * lacked the key, a tombstone is authoritative, N - W + 1 misses end the
 * search), reads with R = 2 (the newest of the answers wins; an older GET is
 * read again from a holder of the newest; the stale replica is repaired),
 * and listings merged from every node (newest per key, tombstones hide). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "cn/alloc.h"
#include "cn/cluster.h"
#include "cn/crc.h"
#include "cn/rc.h"
#include "cn/ring.h"
#include "cn/test.h"
#include "handoff.h"
#include "node_health.h"
#include "storage_client.h"
#include "store.h"

CN_TEST_GLOBALS;

#define FAKE_NODES 3
#define FAKE_MAX_REQS 256
#define FAKE_KEY_MAX 256

/* One request the store sent. */
struct fake_req {
    uint32_t node;
    uint32_t op;
    char key[FAKE_KEY_MAX];
    size_t key_len;
    uint64_t ts, ver;
    int has_payload;
    gw_storage_reply_cb cb;
    void *arg;
    int answered;
};

/* The client: every request, in order. */
struct gw_storage_client {
    struct event_base *base;
    struct gw_node_health *health;
    struct fake_req reqs[FAKE_MAX_REQS];
    uint32_t n_reqs;
    uint64_t next_id;
    long payloads_out;   /* payload references the store handed over */
};

static struct gw_storage_client fake;

/* ---- the storage client's functions, as the store sees them ---------- */

uint32_t gw_storage_client_nodes(const struct gw_storage_client *c)
{
    (void)c;
    return FAKE_NODES;
}

uint64_t gw_storage_client_send_timeout(struct gw_storage_client *c, uint32_t node,
                                        struct msg *req,
                                        const struct gw_storage_payload *payload,
                                        int64_t timeout_ms, gw_storage_reply_cb cb, void *arg)
{
    (void)timeout_ms;
    CN_ASSERT(c->n_reqs < FAKE_MAX_REQS);
    struct fake_req *q = &c->reqs[c->n_reqs++];
    memset(q, 0, sizeof(*q));
    q->node = node;
    q->op = req->op;
    if (MSG_HAS(req, MSG_F_KEY)) {
        CN_ASSERT(req->key.len <= FAKE_KEY_MAX);
        memcpy(q->key, req->key.ptr, req->key.len);
        q->key_len = req->key.len;
    }
    q->ts = MSG_HAS(req, MSG_F_TS) ? req->ts : 0;
    q->ver = MSG_HAS(req, MSG_F_VER) ? req->ver : 0;
    q->cb = cb;
    q->arg = arg;
    if (payload != NULL) {
        q->has_payload = 1;
        /* a node is done with the bytes once it has them: release the
         * store's reference now, as ZeroMQ would after the send */
        if (payload->free_fn != NULL)
            payload->free_fn((void *)payload->data, payload->hint);
        c->payloads_out++;
    }
    return ++c->next_id;
}

#include "fake_storage_client.h"

/* ---- the test's side ---------------------------------------------------- */

static const char *const fake_names[FAKE_NODES] = {"n0", "n1", "n2"};
static struct cn_ring *ring;

static void fake_reset(void)
{
    memset(&fake, 0, sizeof(fake));
    fake.base = event_base_new();
    char err[CN_ERR_LEN];
    ring = cn_ring_new(fake_names, FAKE_NODES, 168, err);
    CN_ASSERT(ring != NULL);
}

static void fake_done(void)
{
    event_base_free(fake.base);
    cn_ring_free(ring);
}

/* The index of the first unanswered request of op to node (-1: none). */
static int fake_find(uint32_t op, uint32_t node)
{
    for (uint32_t i = 0; i < fake.n_reqs; i++)
        if (!fake.reqs[i].answered && fake.reqs[i].op == op && fake.reqs[i].node == node)
            return (int)i;
    return -1;
}

static uint32_t fake_count(uint32_t op)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < fake.n_reqs; i++)
        n += fake.reqs[i].op == op;
    return n;
}

static uint32_t fake_unanswered(void)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < fake.n_reqs; i++)
        n += !fake.reqs[i].answered;
    return n;
}

/* What a node answers. */
struct fake_answer {
    int rc;                 /* CN_OK: a reply with st below; else no reply (CN_TIMEOUT...) */
    uint32_t st;
    uint64_t ts, ver;
    uint32_t flags;
    const char *data;       /* GET payload */
    struct msg_entry *ents; /* LIST */
    uint32_t n_ents;
    int more;
};

static void fake_answer(int i, const struct fake_answer *a)
{
    CN_ASSERT(i >= 0);
    struct fake_req *q = &fake.reqs[i];
    CN_ASSERT(!q->answered);
    q->answered = 1;
    struct gw_storage_reply r;
    memset(&r, 0, sizeof(r));
    r.rc = a->rc;
    r.node = q->node;
    if (a->rc != CN_OK) {
        snprintf(r.err, sizeof(r.err), "fake: no reply");
        q->cb(&r, q->arg);
        return;
    }
    r.m.op = q->op;
    r.m.st = a->st;
    MSG_SET(&r.m, MSG_F_ST);
    if (a->ts != 0 || a->ver != 0) {
        r.m.ts = a->ts;
        r.m.ver = a->ver;
        MSG_SET(&r.m, MSG_F_TS);
        MSG_SET(&r.m, MSG_F_VER);
    }
    r.m.flags = a->flags;
    MSG_SET(&r.m, MSG_F_FLAGS);
    if (a->data != NULL) {
        size_t n = strlen(a->data);
        r.m.payload = (struct msg_bytes){(const uint8_t *)a->data, (uint32_t)n};
        r.m.crc = cn_crc32c(0, a->data, n);
        r.m.size = n;
        MSG_SET(&r.m, MSG_F_CRC);
        MSG_SET(&r.m, MSG_F_SIZE);
    }
    if (q->op == MSG_OP_LIST) {
        r.m.ents = a->ents;
        r.m.n_ents = a->n_ents;
        r.m.more = (uint32_t)a->more;
        MSG_SET(&r.m, MSG_F_ENTS);
        MSG_SET(&r.m, MSG_F_MORE);
    }
    q->cb(&r, q->arg);
}

static void fake_ok(int i)
{
    fake_answer(i, &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK});
}

static void fake_fail(int i, int rc)
{
    fake_answer(i, &(struct fake_answer){.rc = rc});
}

/* What the store's callback saw. */
struct outcome {
    int calls;
    int rc;
    uint32_t acks;
    uint64_t ts, ver;
    char data[64];
};

static void on_result(struct gw_store_result *res, void *arg)
{
    struct outcome *o = arg;
    o->calls++;
    o->rc = res->rc;
    o->acks = res->acks;
    if (res->rc == CN_OK && res->reply != NULL) {
        o->ts = res->reply->m.ts;
        o->ver = res->reply->m.ver;
        size_t n = CN_MIN(res->reply->m.payload.len, sizeof(o->data) - 1);
        memcpy(o->data, res->reply->m.payload.ptr, n);
        o->data[n] = '\0';
    }
}

static const char test_key[] = "b/bucket/o/key";
#define TEST_KEY test_key, sizeof(test_key) - 1

static struct gw_store *store_new(uint32_t r, uint32_t w)
{
    struct gw_store *s = gw_store_new(ring, &fake, 3, w);
    struct gw_store_options o = {.read_quorum = r, .delete_quorum = w, .replay_interval_ms = 1000,
                                 .replay_inflight = 4};
    gw_store_configure(s, &o);
    return s;
}

static void put_once(struct gw_store *s, struct outcome *o)
{
    struct gw_store_record rec = {.key = test_key, .key_len = sizeof(test_key) - 1,
                                  .ver = 7, .ts = 100};
    struct evbuffer *b = evbuffer_new();
    evbuffer_add(b, "hello", 5);
    struct gw_blob *blob = gw_blob_from_evbuffer(b);
    gw_store_put(s, &rec, blob, on_result, o);
    gw_blob_unref(blob);
}

/* ---- writes ---------------------------------------------------------------- */

/* N = 3, W = 2: the write goes to the key's three replicas and is answered
 * at the second ack, once; the third ack comes later and changes nothing. */
static void test_put_quorum(void)
{
    fake_reset();
    struct gw_store *s = store_new(1, 2);
    uint32_t reps[3];
    CN_CHECK_EQ_INT(gw_store_replicas(s, TEST_KEY, reps, 3), 3);
    struct outcome o = {0};
    put_once(s, &o);
    CN_CHECK_EQ_INT(fake_count(MSG_OP_PUT), 3);
    for (int i = 0; i < 3; i++)
        CN_CHECK(fake_find(MSG_OP_PUT, reps[i]) >= 0);
    CN_CHECK_EQ_INT(fake.reqs[0].ts, 100);
    CN_CHECK_EQ_INT(fake.reqs[0].ver, 7);
    fake_ok(fake_find(MSG_OP_PUT, reps[2]));
    CN_CHECK_EQ_INT(o.calls, 0);
    fake_ok(fake_find(MSG_OP_PUT, reps[0]));
    CN_CHECK_EQ_INT(o.calls, 1);
    CN_CHECK_EQ_INT(o.rc, CN_OK);
    CN_CHECK_EQ_INT(o.acks, 2);
    fake_ok(fake_find(MSG_OP_PUT, reps[1]));
    CN_CHECK_EQ_INT(o.calls, 1);
    CN_CHECK_EQ_INT(fake_unanswered(), 0);
    gw_store_free(s);
    fake_done();
}

/* Two of three replicas fail: W = 2 cannot be reached, and the write fails
 * at the second failure, before the last replica answers; that answer (a
 * success) does not call back again. */
static void test_put_quorum_lost(void)
{
    fake_reset();
    struct gw_store *s = store_new(1, 2);
    uint32_t reps[3];
    gw_store_replicas(s, TEST_KEY, reps, 3);
    struct outcome o = {0};
    put_once(s, &o);
    fake_fail(fake_find(MSG_OP_PUT, reps[0]), CN_TIMEOUT);
    CN_CHECK_EQ_INT(o.calls, 0);
    fake_answer(fake_find(MSG_OP_PUT, reps[1]),
                &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_IO_ERROR});
    CN_CHECK_EQ_INT(o.calls, 1);
    CN_CHECK(o.rc != CN_OK);
    fake_ok(fake_find(MSG_OP_PUT, reps[2]));
    CN_CHECK_EQ_INT(o.calls, 1);
    gw_store_free(s);
    fake_done();
}

/* A replica the gateway holds down is not sent to while W up replicas
 * remain; once the quorum acked, a replica that took the write is asked to
 * keep a hint for it (HINT_ADD, hints live on the nodes) and the write
 * answers only after that; a replica that refuses passes the hint on to the
 * next one that took the write. */
static void test_put_down_replica_hinted(void)
{
    fake_reset();
    static const char text[] = "node n0 tcp://127.0.0.1:1\nnode n1 tcp://127.0.0.1:2\n"
                               "node n2 tcp://127.0.0.1:3\n";
    struct cn_cluster *cl = NULL;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(cn_cluster_parse(text, sizeof(text) - 1, &cl, err), CN_OK);
    struct gw_node_health *health = gw_node_health_new(FAKE_NODES);
    /* the gateway's slot table: slot i is the description's node i */
    const char *ids[GW_STORAGE_CLIENT_MAX_NODES] = {0};
    for (uint32_t i = 0; i < cn_cluster_nodes(cl); i++)
        ids[i] = cn_cluster_node(cl, i)->id;
    struct gw_handoff *hand = gw_handoff_new(ids, GW_STORAGE_CLIENT_MAX_NODES);
    gw_handoff_set_nodes(hand, cn_cluster_nodes(cl));
    gw_storage_client_set_health(&fake, health, 1000, 1000);
    struct gw_store *s = gw_store_new(ring, &fake, 3, 2);
    struct gw_store_options opt = {.read_quorum = 1, .delete_quorum = 2, .handoff = hand,
                                   .replay_interval_ms = 60000, .replay_inflight = 4};
    gw_store_configure(s, &opt);
    uint32_t reps[3];
    gw_store_replicas(s, TEST_KEY, reps, 3);
    gw_node_health_mark_down(health, reps[1]);
    struct outcome o = {0};
    put_once(s, &o);
    CN_CHECK_EQ_INT(fake_count(MSG_OP_PUT), 2);
    CN_CHECK_EQ_INT(fake_find(MSG_OP_PUT, reps[1]), -1);
    fake_ok(fake_find(MSG_OP_PUT, reps[0]));
    fake_ok(fake_find(MSG_OP_PUT, reps[2]));
    CN_CHECK_EQ_INT(o.calls, 0);   /* the hint first */
    CN_CHECK_EQ_INT(fake_count(MSG_OP_HINT_ADD), 1);
    int h = -1;
    for (uint32_t i = 0; i < fake.n_reqs; i++)
        if (fake.reqs[i].op == MSG_OP_HINT_ADD)
            h = (int)i;
    CN_CHECK(h >= 0 && fake.reqs[h].node != reps[1]);
    CN_CHECK_EQ_INT(fake.reqs[h].ts, 100);
    CN_CHECK_EQ_INT(fake.reqs[h].ver, 7);
    /* the first holder refuses (its hint store is full): the other takes it */
    fake_answer(h, &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_BUSY});
    CN_CHECK_EQ_INT(o.calls, 0);
    CN_CHECK_EQ_INT(fake_count(MSG_OP_HINT_ADD), 2);
    int h2 = fake_find(MSG_OP_HINT_ADD, fake.reqs[h].node == reps[0] ? reps[2] : reps[0]);
    CN_CHECK(h2 >= 0);
    fake_ok(h2);
    CN_CHECK_EQ_INT(o.calls, 1);
    CN_CHECK_EQ_INT(o.rc, CN_OK);
    struct gw_store_stats st;
    gw_store_stats(s, &st);
    CN_CHECK_EQ_INT(st.skipped_down, 1);
    CN_CHECK_EQ_INT(st.hints_added, 1);
    struct gw_handoff_stats hs;
    gw_handoff_stats(hand, reps[1], &hs);
    CN_CHECK_EQ_INT(hs.added, 1);
    CN_CHECK_EQ_INT(fake_unanswered(), 0);
    gw_store_free(s);
    gw_handoff_free(hand);
    gw_node_health_free(health);
    cn_cluster_free(cl);
    fake_done();
}

/* Deletes write a tombstone (ver, ts) to every replica and answer at D. */
static void test_delete_quorum(void)
{
    fake_reset();
    struct gw_store *s = store_new(1, 2);
    uint32_t reps[3];
    gw_store_replicas(s, TEST_KEY, reps, 3);
    struct outcome o = {0};
    gw_store_delete(s, TEST_KEY, 9, 200, on_result, &o);
    CN_CHECK_EQ_INT(fake_count(MSG_OP_DELETE), 3);
    int i = fake_find(MSG_OP_DELETE, reps[0]);
    CN_CHECK_EQ_INT(fake.reqs[i].ts, 200);
    CN_CHECK_EQ_INT(fake.reqs[i].ver, 9);
    fake_ok(i);
    fake_fail(fake_find(MSG_OP_DELETE, reps[1]), CN_TIMEOUT);
    CN_CHECK_EQ_INT(o.calls, 0);
    fake_ok(fake_find(MSG_OP_DELETE, reps[2]));
    CN_CHECK_EQ_INT(o.calls, 1);
    CN_CHECK_EQ_INT(o.rc, CN_OK);
    gw_store_free(s);
    fake_done();
}

/* ---- reads, R = 1 ------------------------------------------------------ */

static void get_whole(struct gw_store *s, struct outcome *o)
{
    gw_store_get(s, TEST_KEY, 1, 0, 0, on_result, o);
}

/* The first replica lacks the key: the next is asked and serves it, and the
 * replica that lacked it is repaired (a repair starts: HEADs of the key). */
static void test_get_r1_next_and_repair(void)
{
    fake_reset();
    struct gw_store *s = store_new(1, 2);
    uint32_t reps[3];
    gw_store_replicas(s, TEST_KEY, reps, 3);
    struct outcome o = {0};
    get_whole(s, &o);
    CN_CHECK_EQ_INT(fake_count(MSG_OP_GET), 1);
    fake_answer(fake_find(MSG_OP_GET, reps[0]),
                &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_NOT_FOUND});
    CN_CHECK_EQ_INT(o.calls, 0);
    CN_CHECK_EQ_INT(fake_count(MSG_OP_GET), 2);
    uint32_t heads_before = fake_count(MSG_OP_HEAD);
    fake_answer(fake_find(MSG_OP_GET, reps[1]),
                &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK, .ts = 100, .ver = 7,
                                      .data = "hello"});
    CN_CHECK_EQ_INT(o.calls, 1);
    CN_CHECK_EQ_INT(o.rc, CN_OK);
    CN_CHECK_EQ_STR(o.data, "hello");
    struct gw_store_stats st;
    gw_store_stats(s, &st);
    CN_CHECK_EQ_INT(st.read_repairs, 1);
    CN_CHECK(fake_count(MSG_OP_HEAD) > heads_before);   /* the repair asks the replicas */
    /* the repair: the newest is on reps[1]; reps[0] gets it written */
    for (int k = 0; k < 3; k++) {
        int h = fake_find(MSG_OP_HEAD, reps[k]);
        if (h < 0)
            continue;
        if (reps[k] == reps[0])
            fake_answer(h, &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_NOT_FOUND});
        else
            fake_answer(h, &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK, .ts = 100,
                                                 .ver = 7});
    }
    /* the repair reads the bytes from a holder and writes them to reps[0] */
    for (int guard = 0; guard < 8 && fake_unanswered() > 0; guard++) {
        for (uint32_t i = 0; i < fake.n_reqs; i++) {
            struct fake_req *q = &fake.reqs[i];
            if (q->answered)
                continue;
            if (q->op == MSG_OP_GET)
                fake_answer((int)i, &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK,
                                                          .ts = 100, .ver = 7, .data = "hello"});
            else
                fake_ok((int)i);
        }
    }
    int wrote = 0;
    for (uint32_t i = 0; i < fake.n_reqs; i++)
        wrote += fake.reqs[i].op == MSG_OP_PUT && fake.reqs[i].node == reps[0] &&
                 fake.reqs[i].ts == 100 && fake.reqs[i].ver == 7;
    CN_CHECK_EQ_INT(wrote, 1);
    gw_store_free(s);
    fake_done();
}

/* A tombstone on the first replica is authoritative: NOT_FOUND at once. */
static void test_get_r1_tombstone(void)
{
    fake_reset();
    struct gw_store *s = store_new(1, 2);
    uint32_t reps[3];
    gw_store_replicas(s, TEST_KEY, reps, 3);
    struct outcome o = {0};
    get_whole(s, &o);
    fake_answer(fake_find(MSG_OP_GET, reps[0]),
                &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_NOT_FOUND, .ts = 90, .ver = 3,
                                      .flags = MSG_FLAG_TOMBSTONE});
    CN_CHECK_EQ_INT(o.calls, 1);
    CN_CHECK_EQ_INT(o.rc, CN_NOTFOUND);
    CN_CHECK_EQ_INT(fake_count(MSG_OP_GET), 1);
    gw_store_free(s);
    fake_done();
}

/* N = 3, W = 2: two replicas without the key mean no acknowledged write
 * has it (it would be on one of them): NOT_FOUND without the third. */
static void test_get_r1_absent(void)
{
    fake_reset();
    struct gw_store *s = store_new(1, 2);
    uint32_t reps[3];
    gw_store_replicas(s, TEST_KEY, reps, 3);
    struct outcome o = {0};
    get_whole(s, &o);
    fake_answer(fake_find(MSG_OP_GET, reps[0]),
                &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_NOT_FOUND});
    fake_answer(fake_find(MSG_OP_GET, reps[1]),
                &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_NOT_FOUND});
    CN_CHECK_EQ_INT(o.calls, 1);
    CN_CHECK_EQ_INT(o.rc, CN_NOTFOUND);
    CN_CHECK_EQ_INT(fake_count(MSG_OP_GET), 2);
    gw_store_free(s);
    fake_done();
}

/* A failed replica (timeout) is skipped; every replica failing is a
 * failure, not a NOT_FOUND. */
static void test_get_r1_all_fail(void)
{
    fake_reset();
    struct gw_store *s = store_new(1, 2);
    uint32_t reps[3];
    gw_store_replicas(s, TEST_KEY, reps, 3);
    struct outcome o = {0};
    get_whole(s, &o);
    for (int k = 0; k < 3; k++)
        fake_fail(fake_find(MSG_OP_GET, reps[k]), CN_TIMEOUT);
    CN_CHECK_EQ_INT(o.calls, 1);
    CN_CHECK_EQ_INT(o.rc, CN_TIMEOUT);
    gw_store_free(s);
    fake_done();
}

/* ---- reads, R = 2 ------------------------------------------------------ */

/* The GET (to the first replica) and a HEAD (to the second) go out at once;
 * the HEAD holds a newer version than the GET's answer, so the data is read
 * again from the HEAD's replica and that newer version is served; the
 * stale replica is repaired. */
static void test_get_r2_newest_wins(void)
{
    fake_reset();
    struct gw_store *s = store_new(2, 2);
    uint32_t reps[3];
    gw_store_replicas(s, TEST_KEY, reps, 3);
    struct outcome o = {0};
    get_whole(s, &o);
    CN_CHECK_EQ_INT(fake_count(MSG_OP_GET), 1);
    CN_CHECK_EQ_INT(fake_count(MSG_OP_HEAD), 1);
    int g = fake_find(MSG_OP_GET, reps[0]);
    int h = fake_find(MSG_OP_HEAD, reps[1]);
    CN_CHECK(g >= 0 && h >= 0);
    fake_answer(h, &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK, .ts = 300, .ver = 2});
    fake_answer(g, &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK, .ts = 200, .ver = 1,
                                         .data = "old"});
    CN_CHECK_EQ_INT(o.calls, 0);   /* the GET was older: read again */
    int again = fake_find(MSG_OP_GET, reps[1]);
    CN_CHECK(again >= 0);
    fake_answer(again, &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK, .ts = 300, .ver = 2,
                                             .data = "new"});
    CN_CHECK_EQ_INT(o.calls, 1);
    CN_CHECK_EQ_INT(o.rc, CN_OK);
    CN_CHECK_EQ_INT(o.ts, 300);
    CN_CHECK_EQ_STR(o.data, "new");
    struct gw_store_stats st;
    gw_store_stats(s, &st);
    CN_CHECK_EQ_INT(st.read_fallbacks, 1);
    CN_CHECK_EQ_INT(st.read_repairs, 1);
    /* answer what the repair asked, so the store can be freed clean */
    for (int guard = 0; guard < 8 && fake_unanswered() > 0; guard++)
        for (uint32_t i = 0; i < fake.n_reqs; i++)
            if (!fake.reqs[i].answered)
                fake_fail((int)i, CN_TIMEOUT);
    gw_store_free(s);
    fake_done();
}

/* The GET holds the newest version: served from its answer, no second
 * round trip and no repair when the HEAD agrees. */
static void test_get_r2_agree(void)
{
    fake_reset();
    struct gw_store *s = store_new(2, 2);
    uint32_t reps[3];
    gw_store_replicas(s, TEST_KEY, reps, 3);
    struct outcome o = {0};
    get_whole(s, &o);
    fake_answer(fake_find(MSG_OP_GET, reps[0]),
                &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK, .ts = 300, .ver = 2,
                                      .data = "same"});
    fake_answer(fake_find(MSG_OP_HEAD, reps[1]),
                &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK, .ts = 300, .ver = 2});
    CN_CHECK_EQ_INT(o.calls, 1);
    CN_CHECK_EQ_STR(o.data, "same");
    CN_CHECK_EQ_INT(fake_count(MSG_OP_GET), 1);
    struct gw_store_stats st;
    gw_store_stats(s, &st);
    CN_CHECK_EQ_INT(st.read_repairs, 0);
    CN_CHECK_EQ_INT(fake_unanswered(), 0);
    gw_store_free(s);
    fake_done();
}

/* ---- listings ------------------------------------------------------------ */

struct list_outcome {
    int calls;
    int rc;
    char keys[8][16];
    uint64_t ts[8];
    uint32_t n;
    int more;
};

static void on_list(struct gw_store_list_result *res, void *arg)
{
    struct list_outcome *o = arg;
    o->calls++;
    o->rc = res->rc;
    o->more = res->more;
    for (uint32_t i = 0; i < res->n_ents && i < 8; i++) {
        snprintf(o->keys[i], sizeof(o->keys[i]), "%.*s", (int)res->ents[i].key_len,
                 res->ents[i].key);
        o->ts[i] = res->ents[i].ts;
    }
    o->n = res->n_ents;
}

static struct msg_entry ent(const char *key, uint64_t ts, uint32_t flags)
{
    return (struct msg_entry){.key = {(const uint8_t *)key, (uint32_t)strlen(key)},
                              .etag = {(const uint8_t *)"e", 1},
                              .ts = ts, .ver = 1, .flags = flags};
}

/* Every node is asked; per key the newest (ts, ver) wins; a key whose
 * newest version is a tombstone is left out even where an older live copy
 * remains on another node. */
static void test_list_merge(void)
{
    fake_reset();
    struct gw_store *s = store_new(1, 2);
    struct list_outcome o = {0};
    gw_store_list(s, "k", 1, NULL, 0, 10, on_list, &o);
    CN_CHECK_EQ_INT(fake_count(MSG_OP_LIST), 3);
    struct msg_entry e0[] = {ent("ka", 10, 0), ent("kb", 10, 0), ent("kc", 10, 0)};
    struct msg_entry e1[] = {ent("ka", 20, 0), ent("kb", 30, MSG_FLAG_TOMBSTONE)};
    struct msg_entry e2[] = {ent("kd", 5, 0)};
    fake_answer(fake_find(MSG_OP_LIST, 0),
                &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK, .ents = e0, .n_ents = 3});
    fake_answer(fake_find(MSG_OP_LIST, 1),
                &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK, .ents = e1, .n_ents = 2});
    CN_CHECK_EQ_INT(o.calls, 0);
    fake_answer(fake_find(MSG_OP_LIST, 2),
                &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK, .ents = e2, .n_ents = 1});
    CN_CHECK_EQ_INT(o.calls, 1);
    CN_CHECK_EQ_INT(o.rc, CN_OK);
    CN_CHECK_EQ_INT(o.n, 3);
    CN_CHECK_EQ_STR(o.keys[0], "ka");
    CN_CHECK_EQ_INT(o.ts[0], 20);
    CN_CHECK_EQ_STR(o.keys[1], "kc");
    CN_CHECK_EQ_STR(o.keys[2], "kd");
    CN_CHECK_EQ_INT(o.more, 0);
    gw_store_free(s);
    fake_done();
}

/* A node whose page was cut (more) bounds the answer: keys after its last
 * one are not answered from this round (another of its keys may come before
 * them); with room left in the page, the next round lists after the bound. */
static void test_list_bound(void)
{
    fake_reset();
    struct gw_store *s = store_new(1, 2);
    struct list_outcome o = {0};
    gw_store_list(s, "k", 1, NULL, 0, 10, on_list, &o);
    struct msg_entry e0[] = {ent("ka", 10, 0), ent("kb", 10, 0)};
    struct msg_entry e1[] = {ent("kc", 10, 0), ent("kz", 10, 0)};
    fake_answer(fake_find(MSG_OP_LIST, 0), &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK,
                                                                 .ents = e0, .n_ents = 2,
                                                                 .more = 1});
    fake_answer(fake_find(MSG_OP_LIST, 1),
                &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK, .ents = e1, .n_ents = 2});
    fake_answer(fake_find(MSG_OP_LIST, 2),
                &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK, .ents = NULL, .n_ents = 0});
    CN_CHECK_EQ_INT(o.calls, 0);
    CN_CHECK_EQ_INT(fake_count(MSG_OP_LIST), 6);   /* a second round, after "kb" */
    struct msg_entry r0[] = {ent("kd", 10, 0)};
    fake_answer(fake_find(MSG_OP_LIST, 0),
                &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK, .ents = r0, .n_ents = 1});
    fake_answer(fake_find(MSG_OP_LIST, 1),
                &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK, .ents = e1, .n_ents = 2});
    fake_answer(fake_find(MSG_OP_LIST, 2),
                &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK, .ents = NULL, .n_ents = 0});
    CN_CHECK_EQ_INT(o.calls, 1);
    CN_CHECK_EQ_INT(o.n, 5);
    CN_CHECK_EQ_STR(o.keys[2], "kc");
    CN_CHECK_EQ_STR(o.keys[3], "kd");
    CN_CHECK_EQ_STR(o.keys[4], "kz");
    CN_CHECK_EQ_INT(o.more, 0);
    gw_store_free(s);
    fake_done();
}

/* A full page with a bound answers at once, with more set. */
static void test_list_page_full(void)
{
    fake_reset();
    struct gw_store *s = store_new(1, 2);
    struct list_outcome o = {0};
    gw_store_list(s, "k", 1, NULL, 0, 2, on_list, &o);
    struct msg_entry e0[] = {ent("ka", 10, 0), ent("kb", 10, 0)};
    struct msg_entry e1[] = {ent("kc", 10, 0)};
    fake_answer(fake_find(MSG_OP_LIST, 0), &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK,
                                                                 .ents = e0, .n_ents = 2,
                                                                 .more = 1});
    fake_answer(fake_find(MSG_OP_LIST, 1),
                &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK, .ents = e1, .n_ents = 1});
    fake_answer(fake_find(MSG_OP_LIST, 2),
                &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK, .ents = NULL, .n_ents = 0});
    CN_CHECK_EQ_INT(o.calls, 1);
    CN_CHECK_EQ_INT(o.n, 2);
    CN_CHECK_EQ_STR(o.keys[1], "kb");
    CN_CHECK_EQ_INT(o.more, 1);
    gw_store_free(s);
    fake_done();
}

/* Two of three nodes failing (min(W, D) = 2) fail the listing: an
 * acknowledged write could be missing from it. */
static void test_list_fails_without_quorum(void)
{
    fake_reset();
    struct gw_store *s = store_new(1, 2);
    struct list_outcome o = {0};
    gw_store_list(s, "k", 1, NULL, 0, 10, on_list, &o);
    fake_fail(fake_find(MSG_OP_LIST, 0), CN_TIMEOUT);
    fake_fail(fake_find(MSG_OP_LIST, 1), CN_TIMEOUT);
    fake_answer(fake_find(MSG_OP_LIST, 2),
                &(struct fake_answer){.rc = CN_OK, .st = MSG_ST_OK, .ents = NULL, .n_ents = 0});
    CN_CHECK_EQ_INT(o.calls, 1);
    CN_CHECK(o.rc != CN_OK);
    gw_store_free(s);
    fake_done();
}

static const struct cn_test_case cases[] = {
    {"put_quorum", test_put_quorum},
    {"put_quorum_lost", test_put_quorum_lost},
    {"put_down_replica_hinted", test_put_down_replica_hinted},
    {"delete_quorum", test_delete_quorum},
    {"get_r1_next_and_repair", test_get_r1_next_and_repair},
    {"get_r1_tombstone", test_get_r1_tombstone},
    {"get_r1_absent", test_get_r1_absent},
    {"get_r1_all_fail", test_get_r1_all_fail},
    {"get_r2_newest_wins", test_get_r2_newest_wins},
    {"get_r2_agree", test_get_r2_agree},
    {"list_merge", test_list_merge},
    {"list_bound", test_list_bound},
    {"list_page_full", test_list_page_full},
    {"list_fails_without_quorum", test_list_fails_without_quorum},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
