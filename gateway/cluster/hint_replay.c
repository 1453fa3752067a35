/* The hint replay driver (see hint_replay.h). Per holder a small state
 * machine: IDLE -> (tick) POLL (HINT_TAKE for the counts) -> LIST (HINT_TAKE
 * with a peer, carrying the hints replayed so far, which the holder drops)
 * -> REPAIR (the batch's repairs) -> LIST again ... until the peer's list
 * comes back empty, a repair fails (the peer is down again: the rest waits
 * for a later tick) or no peer is left; then IDLE. */
#include "hint_replay.h"

#include <string.h>

#include "cn/alloc.h"
#include "cn/log.h"
#include "cn/rc.h"

#include "handoff.h"
#include "node_health.h"
#include "repair.h"
#include "storage_client.h"
#include "store.h"

enum gw_hint_state { GW_HINT_IDLE, GW_HINT_POLL, GW_HINT_LIST, GW_HINT_REPAIR };

struct gw_hint_item {
    char *key;
    uint32_t key_len;
    uint64_t ts, ver;
};

struct gw_hint_holder {
    struct gw_hint_replay *r;
    uint32_t node;
    enum gw_hint_state state;
    int target;                   /* the peer being drained; -1 none */
    int stop;                     /* the LIST in flight ends the drain */
    struct gw_hint_item *batch;   /* being repaired */
    uint32_t n_batch, repairing;
    int failed;                   /* a repair of this batch missed the peer */
    struct gw_hint_item *done;    /* replayed: dropped by the next HINT_TAKE */
    uint32_t n_done;
    uint64_t *counts;             /* per peer, from the last HINT_TAKE's stats */
};

struct gw_hint_replay {
    struct gw_store *s;
    struct gw_handoff *h;
    struct gw_node_health *health;
    struct event *timer;
    int64_t interval_ms;
    uint32_t batch;
    uint32_t n_nodes;             /* holders and peers known: grows as maps add nodes */
    uint32_t max_nodes;           /* the handoff's slots: holders' and counts' size */
    struct gw_hint_holder *holders;
    uint32_t busy;                /* holders not IDLE */
    int closing;
};

struct gw_hint_repair {
    struct gw_hint_holder *ho;
    uint32_t idx;                 /* in ho->batch */
};

static const char *gw_hint_state_str(enum gw_hint_state st)
{
    switch (st) {
    case GW_HINT_IDLE: return "idle";
    case GW_HINT_POLL: return "poll";
    case GW_HINT_LIST: return "list";
    case GW_HINT_REPAIR: return "repair";
    }
    return "?";
}

static int gw_hint_up(const struct gw_hint_replay *r, uint32_t node)
{
    return r->health == NULL || gw_node_health_is_up(r->health, node);
}

static void gw_hint_items_free(struct gw_hint_item *it, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        cn_free(it[i].key);
    cn_free(it);
}

static void gw_hint_replay_free(struct gw_hint_replay *r)
{
    for (uint32_t i = 0; i < r->n_nodes; i++) {
        gw_hint_items_free(r->holders[i].batch, r->holders[i].n_batch);
        gw_hint_items_free(r->holders[i].done, r->holders[i].n_done);
        cn_free(r->holders[i].counts);
    }
    cn_free(r->holders);
    if (r->timer != NULL)
        event_free(r->timer);
    cn_free(r);
}

/* Moves ho to state st, keeping the count of busy holders. */
static void gw_hint_set_state(struct gw_hint_holder *ho, enum gw_hint_state st)
{
    struct gw_hint_replay *r = ho->r;
    if (ho->state == GW_HINT_IDLE && st != GW_HINT_IDLE)
        r->busy++;
    else if (ho->state != GW_HINT_IDLE && st == GW_HINT_IDLE)
        r->busy--;
    CN_LOG(CN_LOG_DEBUG, "hint replay: holder %u %s -> %s", ho->node,
           gw_hint_state_str(ho->state), gw_hint_state_str(st));
    ho->state = st;
}

/* Releases what one finished step held: the store, and the driver once
 * stopped and idle. */
static void gw_hint_step_done(struct gw_hint_replay *r)
{
    struct gw_store *s = r->s;
    if (r->closing && r->busy == 0)
        gw_hint_replay_free(r);
    gw_store_unhold(s);
}

static void gw_hint_on_take(struct gw_storage_reply *rep, void *arg);

/* Sends HINT_TAKE from ho: the replayed hints to drop, and with target >= 0
 * a listing of target's hints. */
static void gw_hint_send_take(struct gw_hint_holder *ho, int target)
{
    struct gw_hint_replay *r = ho->r;
    struct msg m;
    struct msg_entry *ents = NULL;
    msg_init_request(&m, MSG_OP_HINT_TAKE, 0);
    if (target >= 0) {
        const char *id = gw_handoff_node_id(r->h, (uint32_t)target);
        m.node = (struct msg_bytes){(const uint8_t *)id, (uint32_t)strlen(id)};
        m.limit = r->batch;
        MSG_SET(&m, MSG_F_NODE);
        MSG_SET(&m, MSG_F_LIMIT);
    }
    if (ho->n_done > 0) {
        CN_ASSERT(target >= 0);
        ents = cn_calloc(ho->n_done, sizeof(*ents));
        for (uint32_t i = 0; i < ho->n_done; i++)
            ents[i] = (struct msg_entry){.key = {(const uint8_t *)ho->done[i].key,
                                                 ho->done[i].key_len},
                                         .ts = ho->done[i].ts, .ver = ho->done[i].ver};
        m.ents = ents;
        m.n_ents = ho->n_done;
        MSG_SET(&m, MSG_F_ENTS);
    }
    gw_hint_set_state(ho, target >= 0 ? GW_HINT_LIST : GW_HINT_POLL);
    gw_store_hold(r->s);
    gw_storage_client_send(gw_store_client(r->s), ho->node, &m, NULL, gw_hint_on_take, ho);
    cn_free(ents); /* encoded by the send */
}

/* The next peer (after `after`, in index order) that ho holds hints for and
 * that is up; -1 when none. */
static int gw_hint_next_target(struct gw_hint_holder *ho, int after)
{
    struct gw_hint_replay *r = ho->r;
    for (uint32_t x = (uint32_t)(after + 1); x < r->n_nodes; x++)
        if (x != ho->node && ho->counts[x] > 0 && gw_hint_up(r, x))
            return (int)x;
    return -1;
}

/* Takes the counts of a HINT_TAKE reply (every peer the holder names). */
static void gw_hint_take_counts(struct gw_hint_holder *ho, const struct msg *m)
{
    struct gw_hint_replay *r = ho->r;
    memset(ho->counts, 0, r->n_nodes * sizeof(*ho->counts));
    for (uint32_t i = 0; i < m->n_stats; i++) {
        /* a peer a newer map named that this client does not reach yet
         * waits for the tick after the worker applies that map */
        int x = gw_handoff_node_find(r->h, m->stats[i].name.ptr, m->stats[i].name.len);
        if (x >= 0 && (uint32_t)x < r->n_nodes)
            ho->counts[x] = m->stats[i].value;
    }
    for (uint32_t x = 0; x < r->n_nodes; x++)
        gw_handoff_set_held(r->h, ho->node, x, ho->counts[x]);
}

static void gw_hint_on_repaired(const struct gw_repair_result *res, void *arg);

/* Starts the repair of every hint the LIST reply m names. */
static void gw_hint_start_batch(struct gw_hint_holder *ho, const struct msg *m)
{
    struct gw_hint_replay *r = ho->r;
    ho->batch = cn_calloc(m->n_ents, sizeof(*ho->batch));
    ho->n_batch = m->n_ents;
    ho->failed = 0;
    gw_hint_set_state(ho, GW_HINT_REPAIR);
    ho->repairing = m->n_ents;
    for (uint32_t i = 0; i < m->n_ents; i++) {
        const struct msg_entry *e = &m->ents[i];
        ho->batch[i] = (struct gw_hint_item){cn_memdup(e->key.ptr, e->key.len), e->key.len,
                                             e->ts, e->ver};
    }
    for (uint32_t i = 0; i < m->n_ents; i++) {
        struct gw_hint_repair *rp = cn_malloc(sizeof(*rp));
        *rp = (struct gw_hint_repair){ho, i};
        gw_store_hold(r->s);
        gw_repair_key(r->s, ho->batch[i].key, ho->batch[i].key_len, gw_hint_on_repaired, rp);
    }
}

/* Decides what ho does after a HINT_TAKE answered OK: start a batch, move
 * to the next peer, or go idle. */
static void gw_hint_after_take(struct gw_hint_holder *ho, const struct msg *m, int was_list)
{
    struct gw_hint_replay *r = ho->r;
    if (was_list && !ho->stop && !r->closing && m->n_ents > 0) {
        gw_hint_start_batch(ho, m);
        return;
    }
    int next = ho->stop || r->closing ? -1 : gw_hint_next_target(ho, ho->target);
    ho->stop = 0;
    ho->target = next;
    if (next < 0) {
        gw_hint_set_state(ho, GW_HINT_IDLE);
        return;
    }
    gw_hint_send_take(ho, next);
}

static void gw_hint_on_take(struct gw_storage_reply *rep, void *arg)
{
    struct gw_hint_holder *ho = arg;
    struct gw_hint_replay *r = ho->r;
    int was_list = ho->state == GW_HINT_LIST;
    /* the holder has dropped the replayed hints when it answered OK; when
     * not, they stay there and are replayed again later (harmless) */
    gw_hint_items_free(ho->done, ho->n_done);
    ho->done = NULL;
    ho->n_done = 0;
    if (rep->rc != CN_OK || rep->m.st != MSG_ST_OK) {
        CN_LOG(CN_LOG_DEBUG, "hint replay: HINT_TAKE on node %u failed (%s)", ho->node,
               rep->rc != CN_OK ? rep->err : msg_status_str(rep->m.st));
        ho->stop = 0;
        ho->target = -1;
        gw_hint_set_state(ho, GW_HINT_IDLE);
    } else {
        gw_hint_take_counts(ho, &rep->m);
        if (!was_list)
            ho->target = -1;
        gw_hint_after_take(ho, &rep->m, was_list);
    }
    gw_hint_step_done(r);
}

static void gw_hint_on_repaired(const struct gw_repair_result *res, void *arg)
{
    struct gw_hint_repair *rp = arg;
    struct gw_hint_holder *ho = rp->ho;
    struct gw_hint_replay *r = ho->r;
    struct gw_hint_item *it = &ho->batch[rp->idx];
    cn_free(rp);
    if (gw_repair_result_failed(res, (uint32_t)ho->target)) {
        ho->failed = 1;
    } else {
        /* the peer holds the newest version now: drop the hint */
        if (ho->done == NULL)
            ho->done = cn_calloc(ho->n_batch, sizeof(*ho->done));
        ho->done[ho->n_done++] = *it;
        it->key = NULL;
        gw_handoff_replayed(r->h, (uint32_t)ho->target, 1);
    }
    if (--ho->repairing == 0) {
        gw_hint_items_free(ho->batch, ho->n_batch);
        ho->batch = NULL;
        ho->n_batch = 0;
        /* a failed repair: the peer is away again; drop what was replayed
         * and leave the rest for a later tick. Stopping: no new sends (the
         * client may be going away); the hints stay on the holder and are
         * replayed again later, which is harmless */
        ho->stop = ho->failed || r->closing;
        if (!r->closing && (ho->n_done > 0 || !ho->stop))
            gw_hint_send_take(ho, ho->target);
        else
            gw_hint_after_take(ho, NULL, 0);
    }
    gw_hint_step_done(r);
}

/* Takes in the nodes a cluster map added since the last tick: those the
 * handoff names (the gateway's slots) and this thread's client reaches
 * (it connects to them when its worker applies the map). */
static void gw_hint_grow(struct gw_hint_replay *r)
{
    uint32_t n = CN_MIN(gw_handoff_nodes(r->h), gw_storage_client_nodes(gw_store_client(r->s)));
    n = CN_MIN(n, r->max_nodes);
    for (uint32_t i = r->n_nodes; i < n; i++) {
        r->holders[i] = (struct gw_hint_holder){.r = r, .node = i, .target = -1};
        r->holders[i].counts = cn_calloc(r->max_nodes, sizeof(uint64_t));
    }
    if (n > r->n_nodes)
        r->n_nodes = n;
}

/* Timer: polls each idle holder that is up. */
static void gw_hint_on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_hint_replay *r = arg;
    gw_hint_grow(r);
    for (uint32_t i = 0; i < r->n_nodes && !r->closing; i++) {
        struct gw_hint_holder *ho = &r->holders[i];
        if (ho->state == GW_HINT_IDLE && gw_hint_up(r, i))
            gw_hint_send_take(ho, -1);
    }
    struct timeval tv = {r->interval_ms / 1000, (r->interval_ms % 1000) * 1000};
    evtimer_add(r->timer, &tv);
}

struct gw_hint_replay *gw_hint_replay_new(struct gw_store *s, struct gw_handoff *h,
                                          int64_t interval_ms, uint32_t batch)
{
    struct gw_hint_replay *r = cn_calloc(1, sizeof(*r));
    struct gw_storage_client *c = gw_store_client(s);
    r->s = s;
    r->h = h;
    r->health = gw_storage_client_health(c);
    r->interval_ms = interval_ms > 0 ? interval_ms : 200;
    r->batch = batch > 0 ? batch : 32;
    /* holders for every slot a map may add; a holder's counts once known */
    r->max_nodes = GW_STORAGE_CLIENT_MAX_NODES;
    r->holders = cn_calloc(r->max_nodes, sizeof(*r->holders));
    gw_hint_grow(r);
    r->timer = evtimer_new(gw_storage_client_base(c), gw_hint_on_tick, r);
    /* the first poll after one interval, not at once: the sockets to the
     * nodes are still connecting, and a send that fails marks a node down */
    struct timeval tv = {r->interval_ms / 1000, (r->interval_ms % 1000) * 1000};
    evtimer_add(r->timer, &tv);
    return r;
}

void gw_hint_replay_stop(struct gw_hint_replay *r)
{
    if (r == NULL)
        return;
    r->closing = 1;
    event_del(r->timer);
    if (r->busy == 0)
        gw_hint_replay_free(r);
}
