/* The cluster-held lease (gateway/cluster/lease.c) over the real replicated
 * store (store.c) and a fake storage client: one node that the test serves
 * by hand, keeping the newest write of each key by (ts, ver) as a node
 * does. Link-time substitution as in test_gw_store_quorum.c: this file
 * (with fake_storage_client.h) defines the storage client's functions, so
 * storage_client.c is never linked. Two leases ("a" and "b") on one record stand for two gateways;
 * the wall clock the lease reads is the test's. Cases: a claim of a free
 * record (claim, settle, read-back, held), a claim refused while another
 * holder's lease is live, a takeover after expiry that keeps what the last
 * holder left, a renew, the lease lost on a newer record from another
 * holder (at renew and at a tick), two claims that race (the newer write
 * wins, exactly one holds), a failed read that claims nothing, a record
 * that does not parse taken as empty, and close with a read in flight. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <msgpack.h>

#include "cn/alloc.h"
#include "cn/crc.h"
#include "cn/metrics.h"
#include "cn/rc.h"
#include "cn/ring.h"
#include "cn/test.h"
#include "cn/version.h"
#include "lease.h"
#include "node_health.h"
#include "storage_client.h"
#include "store.h"

CN_TEST_GLOBALS;

#define FAKE_MAX_REQS 256
#define FAKE_KEY_MAX 64
#define FAKE_DATA_MAX 1024
#define TEST_KEY "s/test-lease"
#define LEASE_US 30000000u   /* 30 s of the test's clock */

/* One request the store sent. */
struct fake_req {
    uint32_t op;
    char key[FAKE_KEY_MAX];
    size_t key_len;
    uint64_t ts, ver;
    char *data;          /* a PUT's payload (the test frees it) */
    size_t len;
    gw_storage_reply_cb cb;
    void *arg;
    int answered;
};

/* The node: the newest write of the one key, and every request. */
struct gw_storage_client {
    struct event_base *base;
    struct gw_node_health *health;
    struct fake_req reqs[FAKE_MAX_REQS];
    uint32_t n_reqs, served;
    uint64_t next_id;
    const struct fake_req *rec;   /* the newest PUT applied; NULL: none */
    const char *raw;              /* set by a test: this payload instead of rec's */
    size_t raw_len;               /* its length; 0: strlen(raw) */
};

static struct gw_storage_client fake;

/* ---- the storage client's functions, as the store sees them ---------- */

uint32_t gw_storage_client_nodes(const struct gw_storage_client *c)
{
    (void)c;
    return 1;
}

uint64_t gw_storage_client_send_timeout(struct gw_storage_client *c, uint32_t node,
                                        struct msg *req,
                                        const struct gw_storage_payload *payload,
                                        int64_t timeout_ms, gw_storage_reply_cb cb, void *arg)
{
    (void)timeout_ms, (void)node;
    CN_ASSERT(c->n_reqs < FAKE_MAX_REQS);
    struct fake_req *q = &c->reqs[c->n_reqs++];
    memset(q, 0, sizeof(*q));
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
        CN_ASSERT(payload->len <= FAKE_DATA_MAX);
        q->data = cn_malloc(payload->len + 1);
        memcpy(q->data, payload->data, payload->len);
        q->len = payload->len;
        if (payload->free_fn != NULL)
            payload->free_fn((void *)payload->data, payload->hint);
    }
    return ++c->next_id;
}

#include "fake_storage_client.h"

/* ---- the node ----------------------------------------------------------- */

static const char *const fake_names[1] = {"n0"};
static struct cn_ring *ring;
static struct gw_store *store;

static void fake_reset(void)
{
    memset(&fake, 0, sizeof(fake));
    fake.base = event_base_new();
    char err[CN_ERR_LEN];
    ring = cn_ring_new(fake_names, 1, 168, err);
    CN_ASSERT(ring != NULL);
    store = gw_store_new(ring, &fake, 1, 1);
    struct gw_store_options o = {.read_quorum = 1, .delete_quorum = 1,
                                 .replay_interval_ms = 1000, .replay_inflight = 4};
    gw_store_configure(store, &o);
}

static void fake_done(void)
{
    gw_store_free(store);
    for (uint32_t i = 0; i < fake.n_reqs; i++)
        cn_free(fake.reqs[i].data);
    event_base_free(fake.base);
    cn_ring_free(ring);
}

/* Answers request i as the node would (rc CN_OK), or with no reply. */
static void fake_serve_one(uint32_t i, int rc)
{
    struct fake_req *q = &fake.reqs[i];
    CN_ASSERT(!q->answered);
    q->answered = 1;
    struct gw_storage_reply r;
    memset(&r, 0, sizeof(r));
    r.rc = rc;
    if (rc != CN_OK) {
        snprintf(r.err, sizeof(r.err), "fake: no reply");
        q->cb(&r, q->arg);
        return;
    }
    r.m.op = q->op;
    r.m.st = MSG_ST_OK;
    MSG_SET(&r.m, MSG_F_ST);
    if (q->op == MSG_OP_PUT) {
        if (fake.rec == NULL || cn_version_newer(q->ts, q->ver, fake.rec->ts, fake.rec->ver))
            fake.rec = q;
        r.m.applied = fake.rec == q;
    } else if (fake.rec == NULL && fake.raw == NULL) {
        r.m.st = MSG_ST_NOT_FOUND;
    } else {
        const char *data = fake.raw != NULL ? fake.raw : fake.rec->data;
        size_t n = fake.raw == NULL ? fake.rec->len
                   : fake.raw_len > 0 ? fake.raw_len : strlen(fake.raw);
        r.m.ts = fake.rec != NULL ? fake.rec->ts : 1;
        r.m.ver = fake.rec != NULL ? fake.rec->ver : 1;
        MSG_SET(&r.m, MSG_F_TS);
        MSG_SET(&r.m, MSG_F_VER);
        r.m.payload = (struct msg_bytes){(const uint8_t *)data, (uint32_t)n};
        r.m.crc = cn_crc32c(0, data, n);
        r.m.size = n;
        MSG_SET(&r.m, MSG_F_CRC);
        MSG_SET(&r.m, MSG_F_SIZE);
    }
    q->cb(&r, q->arg);
}

/* Serves every request not yet answered, in order, also those that the
 * answers send; returns how many. */
static uint32_t fake_serve(void)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < fake.n_reqs; i++)
        if (!fake.reqs[i].answered) {
            fake_serve_one(i, CN_OK);
            n++;
        }
    return n;
}

static uint32_t fake_pending(void)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < fake.n_reqs; i++)
        n += !fake.reqs[i].answered;
    return n;
}

static uint32_t fake_count(uint32_t op)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < fake.n_reqs; i++)
        n += fake.reqs[i].op == op;
    return n;
}

/* Runs the loop (the settle wait) until a request is pending; 0 when none
 * came within 2 s. */
static int fake_wait_request(void)
{
    for (int i = 0; i < 2000 && fake_pending() == 0; i++) {
        struct timeval tv = {0, 1000};
        event_base_loopexit(fake.base, &tv);
        event_base_dispatch(fake.base);
    }
    return fake_pending() > 0;
}

/* ---- the worker the test stands in for ---------------------------------- */

static uint64_t test_now;

static uint64_t test_clock(void)
{
    return test_now;
}

struct test_status {
    struct gw_lease_head lease;
    uint64_t counter;   /* "counter": a worker's own field */
    uint64_t knob;      /* "knob": what merge takes from the record */
};

struct test_worker {
    struct gw_lease *lease;
    struct test_status st;
    int held_calls, lost_calls, claim_calls, read_calls, merge_calls;
    uint64_t merged_knob;
    int cb_calls;
    enum gw_lease_result cb_result;
    uint32_t gauge;
};

static uint32_t test_encode(void *arg, msgpack_packer *pk)
{
    struct test_worker *w = arg;
    gw_lease_pack_u64(pk, "counter", w->st.counter);
    gw_lease_pack_u64(pk, "knob", w->st.knob);
    return 2;
}

static int test_decode_field(void *status, const msgpack_object *k, const msgpack_object *v)
{
    struct test_status *s = status;
    static const char *const names[] = {"counter", "knob"};
    uint64_t *slots[] = {&s->counter, &s->knob};
    return gw_lease_decode_u64(k, v, names, slots, 2);
}

/* Held: as an idle worker, renews by writing its status (then a tick later). */
static void test_held(void *arg)
{
    struct test_worker *w = arg;
    w->held_calls++;
    gw_lease_write(w->lease, NULL);
}

static void test_on_lost(void *arg)
{
    ((struct test_worker *)arg)->lost_calls++;
}

static void test_on_claim(void *arg)
{
    ((struct test_worker *)arg)->claim_calls++;
}

static void test_on_read(void *arg)
{
    ((struct test_worker *)arg)->read_calls++;
}

static void test_merge(void *arg, const void *read)
{
    struct test_worker *w = arg;
    w->merge_calls++;
    w->merged_knob = ((const struct test_status *)read)->knob;
}

static void test_cb(void *arg, enum gw_lease_result r)
{
    struct test_worker *w = arg;
    w->cb_calls++;
    w->cb_result = r;
    gw_lease_again(w->lease);
}

static const struct gw_lease_ops test_ops = {
    .what = "test",
    .key = TEST_KEY,
    .record_max = 4096,
    .status_size = sizeof(struct test_status),
    .encode = test_encode,
    .decode_field = test_decode_field,
    .held = test_held,
    .on_read = test_on_read,
    .on_claim = test_on_claim,
    .on_lost = test_on_lost,
    .merge = test_merge,
};

static struct cn_metrics *metrics;

static void worker_init(struct test_worker *w, const char *holder, uint64_t ver)
{
    memset(w, 0, sizeof(*w));
    /* a long interval: no tick of the lease's own timer comes during a
     * case; the test starts each with gw_lease_check() */
    struct gw_lease_opts o = {.interval_us = 3600000000u, .lease_us = LEASE_US,
                              .settle_us = 1000, .ver = ver, .holder = holder,
                              .now_us = test_clock};
    char name[64];
    snprintf(name, sizeof(name), "test_lease_held_%s", holder);
    w->gauge = cn_metrics_gauge(metrics, name, "1 while the lease is held", 0, NULL);
    w->lease = gw_lease_new(fake.base, store, &test_ops, &o, &w->st, w, metrics, w->gauge);
}

static void worker_fini(struct test_worker *w)
{
    gw_lease_close(w->lease);
    CN_CHECK(gw_lease_free(w->lease));
}

/* The record as the node holds it. */
static void record_read(struct test_status *s)
{
    CN_ASSERT(fake.rec != NULL);
    CN_CHECK_EQ_INT(gw_lease_decode(&test_ops, fake.rec->data, fake.rec->len, s), CN_OK);
}

/* A tick of w that finds the record free or expired: claim (PUT), settle,
 * read back (GET), and, when held, the worker's write (PUT). */
static void tick_and_claim(struct test_worker *w)
{
    gw_lease_check(w->lease);
    CN_CHECK_EQ_INT(fake_serve(), 2);   /* the read, then the claim it sent */
    CN_CHECK(fake_wait_request());      /* after settle_us: the read-back */
    fake_serve();
}

static void case_setup(void)
{
    fake_reset();
    metrics = cn_metrics_new();
    test_now = 1000000000000u;
}

static void case_teardown(void)
{
    fake_done();
    cn_metrics_free(metrics);
}

/* Two gateways' leases on one record. */
static void pair_setup(struct test_worker *a, struct test_worker *b)
{
    case_setup();
    worker_init(a, "a", 1);
    worker_init(b, "b", 2);
}

static void pair_teardown(struct test_worker *a, struct test_worker *b)
{
    worker_fini(a);
    worker_fini(b);
    case_teardown();
}

/* Does the record the node holds name holder? */
static int record_holder_is(const char *holder)
{
    struct test_status s;
    record_read(&s);
    return strcmp(s.lease.holder, holder) == 0;
}

/* ---- cases -------------------------------------------------------------- */

/* No record: the tick claims (writes itself as holder), waits settle_us,
 * reads back, holds, and the worker writes its status with the lease. */
static void test_claim_free(void)
{
    case_setup();
    struct test_worker a;
    worker_init(&a, "a", 1);
    gw_lease_check(a.lease);
    CN_CHECK_EQ_INT(fake_count(MSG_OP_GET), 1);
    CN_CHECK_EQ_INT(fake_serve(), 2);
    CN_CHECK_EQ_INT(a.claim_calls, 1);
    CN_CHECK_EQ_INT(a.read_calls, 1);
    CN_CHECK_EQ_INT(fake_count(MSG_OP_PUT), 1);
    CN_CHECK(!gw_lease_held(a.lease));   /* not before the read-back */
    struct test_status s;
    record_read(&s);
    CN_CHECK_EQ_STR(s.lease.holder, "a");
    CN_CHECK_EQ_INT(s.lease.lease_until, test_now + LEASE_US);
    CN_CHECK(fake_wait_request());
    CN_CHECK_EQ_INT(fake_count(MSG_OP_GET), 2);
    CN_CHECK_EQ_INT(fake_serve(), 2);   /* the read-back, the worker's write */
    CN_CHECK(gw_lease_held(a.lease));
    CN_CHECK_EQ_INT(a.held_calls, 1);
    CN_CHECK_EQ_INT(cn_metrics_value(metrics, a.gauge), 1);
    CN_CHECK_EQ_INT(fake_count(MSG_OP_PUT), 2);
    CN_CHECK(!gw_lease_renew_due(a.lease));
    /* a tick of the holder: its own live lease, held, no claim */
    a.st.counter = 7;
    gw_lease_check(a.lease);
    CN_CHECK_EQ_INT(fake_serve(), 2);
    CN_CHECK_EQ_INT(a.held_calls, 2);
    CN_CHECK_EQ_INT(a.claim_calls, 1);
    record_read(&s);
    CN_CHECK_EQ_INT(s.counter, 0);   /* the status as read was written back */
    worker_fini(&a);
    case_teardown();
}

/* Another holder's live lease: a tick of b claims nothing and does not
 * hold; the record stays a's. */
static void test_claim_refused_while_live(void)
{
    struct test_worker a, b;
    pair_setup(&a, &b);
    tick_and_claim(&a);
    CN_CHECK(gw_lease_held(a.lease));
    uint32_t puts = fake_count(MSG_OP_PUT);
    test_now += LEASE_US - 1;   /* a microsecond before a's lease runs out */
    gw_lease_check(b.lease);
    CN_CHECK_EQ_INT(fake_serve(), 1);
    CN_CHECK_EQ_INT(fake_count(MSG_OP_PUT), puts);
    CN_CHECK(!gw_lease_held(b.lease));
    CN_CHECK_EQ_INT(b.claim_calls, 0);
    CN_CHECK_EQ_INT(b.held_calls, 0);
    CN_CHECK_EQ_INT(b.lost_calls, 1);
    CN_CHECK_EQ_STR(gw_lease_read_holder(b.lease), "a");
    CN_CHECK_EQ_INT(cn_metrics_value(metrics, b.gauge), 0);
    CN_CHECK(record_holder_is("a"));
    pair_teardown(&a, &b);
}

/* a's lease expires (a stopped): b claims it, keeping the fields a left
 * (a worker's cursor), and holds; a's next tick sees b's live lease. */
static void test_takeover_after_expiry(void)
{
    struct test_worker a, b;
    pair_setup(&a, &b);
    a.st.counter = 0;
    tick_and_claim(&a);
    a.st.counter = 41;   /* a's progress, written at its next renewal */
    gw_lease_write(a.lease, NULL);
    fake_serve();
    test_now += LEASE_US;   /* lease_until == now: expired */
    tick_and_claim(&b);
    CN_CHECK_EQ_INT(b.claim_calls, 1);
    CN_CHECK(gw_lease_held(b.lease));
    CN_CHECK_EQ_INT(b.st.counter, 41);
    struct test_status s;
    record_read(&s);
    CN_CHECK_EQ_STR(s.lease.holder, "b");
    CN_CHECK_EQ_INT(s.lease.lease_until, test_now + LEASE_US);
    CN_CHECK_EQ_INT(s.counter, 41);
    gw_lease_check(a.lease);
    fake_serve();
    CN_CHECK(!gw_lease_held(a.lease));
    CN_CHECK_EQ_INT(a.lost_calls, 1);
    pair_teardown(&a, &b);
}

/* While working: a renew is due after a third of the lease; it reads the
 * record, merges what it holds (an operator's knob), writes the status
 * with the lease counted from now. */
static void test_renew(void)
{
    case_setup();
    struct test_worker a;
    worker_init(&a, "a", 1);
    tick_and_claim(&a);
    CN_CHECK(!gw_lease_renew_due(a.lease));
    test_now += LEASE_US / 3 - 1;
    CN_CHECK(!gw_lease_renew_due(a.lease));
    test_now += 1;
    CN_CHECK(gw_lease_renew_due(a.lease));
    /* an operator sets the knob in the record meanwhile */
    struct test_status op = {.counter = 0, .knob = 99};
    snprintf(op.lease.holder, sizeof(op.lease.holder), "a");
    op.lease.lease_until = test_now + 5;
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 3);
    gw_lease_pack_str(&pk, "holder", 6);
    gw_lease_pack_str(&pk, "a", 1);
    gw_lease_pack_u64(&pk, "lease_until_us", op.lease.lease_until);
    gw_lease_pack_u64(&pk, "knob", op.knob);
    char raw[64];
    CN_ASSERT(sb.size < sizeof(raw));
    memcpy(raw, sb.data, sb.size);
    fake.raw_len = sb.size;
    msgpack_sbuffer_destroy(&sb);
    a.st.counter = 5;
    gw_lease_renew(a.lease, test_cb);
    fake.raw = raw;
    CN_CHECK_EQ_INT(fake_serve(), 2);   /* the read, the write */
    fake.raw = NULL;
    fake.raw_len = 0;
    CN_CHECK_EQ_INT(a.cb_calls, 1);
    CN_CHECK_EQ_INT(a.cb_result, GW_LEASE_OK);
    CN_CHECK_EQ_INT(a.merge_calls, 1);
    CN_CHECK_EQ_INT(a.merged_knob, 99);
    CN_CHECK(gw_lease_held(a.lease));
    CN_CHECK(!gw_lease_renew_due(a.lease));
    struct test_status s;
    record_read(&s);
    CN_CHECK_EQ_STR(s.lease.holder, "a");
    CN_CHECK_EQ_INT(s.lease.lease_until, test_now + LEASE_US);
    CN_CHECK_EQ_INT(s.counter, 5);   /* the worker's status, not the record's */
    /* a write that fails: UNWRITTEN, and the renew is still due later */
    test_now += LEASE_US / 3;
    gw_lease_renew(a.lease, test_cb);
    fake_serve_one(fake.n_reqs - 1, CN_OK);                 /* the read */
    fake_serve_one(fake.n_reqs - 1, CN_TIMEOUT);            /* its write */
    CN_CHECK_EQ_INT(a.cb_calls, 2);
    CN_CHECK_EQ_INT(a.cb_result, GW_LEASE_UNWRITTEN);
    CN_CHECK(gw_lease_renew_due(a.lease));
    /* a read that fails: UNREAD, nothing written */
    uint32_t puts = fake_count(MSG_OP_PUT);
    gw_lease_renew(a.lease, test_cb);
    fake_serve_one(fake.n_reqs - 1, CN_TIMEOUT);
    CN_CHECK_EQ_INT(a.cb_result, GW_LEASE_UNREAD);
    CN_CHECK_EQ_INT(fake_count(MSG_OP_PUT), puts);
    worker_fini(&a);
    case_teardown();
}

/* a is frozen past its lease; b takes over. a's renew then reads b's newer
 * record: LOST, a no longer holds, nothing written, b's record stands. */
static void test_lost_to_newer_record(void)
{
    struct test_worker a, b;
    pair_setup(&a, &b);
    tick_and_claim(&a);
    CN_CHECK(gw_lease_held(a.lease));
    test_now += LEASE_US + 1;
    tick_and_claim(&b);
    CN_CHECK(gw_lease_held(b.lease));
    uint32_t puts = fake_count(MSG_OP_PUT);
    a.st.counter = 1234;
    gw_lease_renew(a.lease, test_cb);
    CN_CHECK_EQ_INT(fake_serve(), 1);
    CN_CHECK_EQ_INT(a.cb_result, GW_LEASE_LOST);
    CN_CHECK(!gw_lease_held(a.lease));
    CN_CHECK_EQ_INT(a.merge_calls, 0);
    CN_CHECK_EQ_INT(fake_count(MSG_OP_PUT), puts);
    CN_CHECK_EQ_STR(gw_lease_read_holder(a.lease), "b");
    CN_CHECK_EQ_INT(a.st.counter, 1234);   /* the status is left as it was */
    CN_CHECK_EQ_INT(cn_metrics_value(metrics, a.gauge), 0);
    CN_CHECK_EQ_INT(cn_metrics_value(metrics, b.gauge), 1);
    CN_CHECK(record_holder_is("b"));
    pair_teardown(&a, &b);
}

/* a and b find the record free at once and both claim: the node keeps the
 * newer write, both read it back after the settle, exactly one holds. */
static void test_racing_claims(void)
{
    struct test_worker a, b;
    pair_setup(&a, &b);
    gw_lease_check(a.lease);
    gw_lease_check(b.lease);
    CN_CHECK_EQ_INT(fake_serve(), 4);   /* two reads (both free), two claims */
    CN_CHECK_EQ_INT(a.claim_calls + b.claim_calls, 2);
    for (int i = 0; i < 2000 && fake_pending() < 2; i++)
        fake_wait_request();
    CN_CHECK_EQ_INT(fake_pending(), 2);   /* both read-backs */
    fake_serve();
    CN_CHECK_EQ_INT(gw_lease_held(a.lease) + gw_lease_held(b.lease), 1);
    struct test_status s;
    record_read(&s);
    const char *winner = gw_lease_held(a.lease) ? "a" : "b";
    CN_CHECK_EQ_STR(s.lease.holder, winner);
    CN_CHECK_EQ_INT(a.lost_calls + b.lost_calls, 1);
    pair_teardown(&a, &b);
}

/* A read that fails claims nothing (the record may be held); a record that
 * does not parse is taken as empty and claimed. */
static void test_read_failure_and_garbage(void)
{
    case_setup();
    struct test_worker a;
    worker_init(&a, "a", 1);
    gw_lease_check(a.lease);
    fake_serve_one(0, CN_TIMEOUT);
    CN_CHECK_EQ_INT(fake_count(MSG_OP_PUT), 0);
    CN_CHECK_EQ_INT(a.read_calls, 0);
    CN_CHECK(!gw_lease_held(a.lease));
    fake.raw = "\x81\xa6holder\x05";   /* holder of the wrong type */
    gw_lease_check(a.lease);
    CN_CHECK_EQ_INT(fake_serve(), 2);
    fake.raw = NULL;
    CN_CHECK_EQ_INT(a.claim_calls, 1);
    CN_CHECK(fake_wait_request());
    fake_serve();
    CN_CHECK(gw_lease_held(a.lease));
    /* the decoder: wrong types and oversize records refuse the whole record */
    struct test_status s;
    CN_CHECK_EQ_INT(gw_lease_decode(&test_ops, "\x81\xa6holder\x05", 9, &s), CN_INVAL);
    CN_CHECK_EQ_INT(gw_lease_decode(&test_ops, "\x81\xaelease_until_us\xa1x", 18, &s), CN_INVAL);
    CN_CHECK_EQ_INT(gw_lease_decode(&test_ops, "\x81\xa7" "counter\xa1x", 11, &s), CN_INVAL);
    CN_CHECK_EQ_INT(gw_lease_decode(&test_ops, "\x81\xa5other\xa1x", 9, &s), CN_OK);
    CN_CHECK_EQ_INT(gw_lease_decode(&test_ops, "\x81\xa6holder\xa1z", 10, &s), CN_OK);
    CN_CHECK_EQ_STR(s.lease.holder, "z");
    CN_CHECK_EQ_INT(gw_lease_decode(&test_ops, "", 0, &s), CN_INVAL);
    CN_CHECK_EQ_INT(gw_lease_decode(&test_ops, "\x90", 1, &s), CN_INVAL);   /* not a map */
    CN_CHECK_EQ_INT(s.lease.holder[0], '\0');
    worker_fini(&a);
    case_teardown();
}

/* Closed with its read in flight: not freed until the answer comes, which
 * then does nothing. */
static void test_close_in_flight(void)
{
    case_setup();
    struct test_worker a;
    worker_init(&a, "a", 1);
    gw_lease_check(a.lease);
    gw_lease_close(a.lease);
    CN_CHECK_EQ_INT(gw_lease_inflight(a.lease), 1);
    CN_CHECK(!gw_lease_free(a.lease));
    CN_CHECK_EQ_INT(fake_serve(), 1);
    CN_CHECK_EQ_INT(fake_count(MSG_OP_PUT), 0);
    CN_CHECK_EQ_INT(a.read_calls, 0);
    CN_CHECK(gw_lease_free(a.lease));
    case_teardown();
}

static const struct cn_test_case cases[] = {
    {"claim_free", test_claim_free},
    {"claim_refused_while_live", test_claim_refused_while_live},
    {"takeover_after_expiry", test_takeover_after_expiry},
    {"renew", test_renew},
    {"lost_to_newer_record", test_lost_to_newer_record},
    {"racing_claims", test_racing_claims},
    {"read_failure_and_garbage", test_read_failure_and_garbage},
    {"close_in_flight", test_close_in_flight},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
