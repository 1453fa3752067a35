/* Process-wide cluster state of a gateway: built from the settings, shared
 * read-only (plus the atomics inside node_health and the locked hint counters)
 * by every worker thread. A cluster map the follower (map_sync.h) takes
 * becomes a view: its ring over the gateway's node slots (every node any
 * map named, in the order first seen, so a node keeps its index in the
 * clients, node states and hint counters), published through an atomic
 * pointer; views are kept until the gateway stops. */
#include "cluster.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn/alloc.h"

#include "cluster_metrics.h"
#include "handoff.h"
#include "node_health.h"

struct gw_cluster_view {
    struct cn_cluster *map;      /* owned */
    struct cn_ring *ring;        /* over the slots known when built; leaving nodes weigh 0 */
    struct cn_ring *all_ring;    /* leaving nodes as active; NULL when none leaves */
    uint32_t *members;           /* slot of map node i */
    uint32_t n_slots;            /* slots known when built: clients connect up to here */
    uint32_t n_rep;              /* replicas per key: min(N, active nodes) */
    uint32_t *sets;   /* the ring's distinct replica sets, n_rep nodes each, sorted */
    uint32_t n_sets;
    struct gw_store_view sv;
    struct gw_cluster_view *older;   /* the views before (kept until the cluster's free) */
};

struct gw_cluster {
    const struct gw_config *cfg;
    struct cn_cluster *nodes;    /* the bootstrap: slot i is its node i */
    uint32_t n, w, r, d;
    struct gw_node_health *health;
    struct gw_handoff *handoff;
    char *slot_address[GW_STORAGE_CLIENT_MAX_NODES];  /* appended by the follower only */
    char *slot_id[GW_STORAGE_CLIENT_MAX_NODES];
    uint32_t n_slots;
    _Atomic(struct gw_cluster_view *) view;   /* the map in use */
    uint32_t n_clients;   /* made so far: the first one watches idle nodes */
    uint32_t n_stores;    /* made so far: the first one replays hints */
    struct msg_curve_client curve; /* storage.auth = curve; else not enabled */
};

/* One quorum setting: 0 = dflt, else 1..n. */
static int gw_cluster_quorum(const char *name, int64_t set, uint32_t dflt, uint32_t n,
                             uint32_t *out, char err[CN_ERR_LEN])
{
    *out = set > 0 ? (uint32_t)set : CN_MIN(dflt, n);
    if (*out > n) {
        snprintf(err, CN_ERR_LEN, "%s (%u) is above consistency.num_of_replicas (%u)", name,
                 *out, n);
        return CN_INVAL;
    }
    return CN_OK;
}

static int gw_cluster_quorums(struct gw_cluster *c, char err[CN_ERR_LEN])
{
    const struct gw_config *cfg = c->cfg;
    uint32_t nodes = cn_cluster_nodes(c->nodes);
    c->n = cfg->consistency_replicas > 0 ? (uint32_t)cfg->consistency_replicas
                                         : CN_MIN(3u, nodes);
    if (c->n > nodes) {
        snprintf(err, CN_ERR_LEN, "consistency.num_of_replicas (%u) is above the %u nodes", c->n,
                 nodes);
        return CN_INVAL;
    }
    if (gw_cluster_quorum("consistency.write", cfg->consistency_write, 2, c->n, &c->w, err) ||
        gw_cluster_quorum("consistency.delete", cfg->consistency_delete, 2, c->n, &c->d, err))
        return CN_INVAL;
    /* S3 promises read-after-write (and read-after-delete): the default R
     * makes every read quorum meet every write and delete quorum,
     * R = N - min(W, D) + 1 (2 for N=3, W=D=2). LeoFS's R=1 returned stale
     * objects in 11 of 300 overwrite-then-GET pairs here (docs/cluster.md). */
    uint32_t r_dflt = c->n - CN_MIN(c->w, c->d) + 1;
    if (gw_cluster_quorum("consistency.read", cfg->consistency_read, r_dflt, c->n, &c->r, err))
        return CN_INVAL;
    return CN_OK;
}

static int gw_cluster_u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Collects the distinct replica sets of the view's ring points (each
 * sorted), so that a readiness check looks at each set once: at most a few
 * thousand points, a walk of a few nodes each, once per map. */
static void gw_cluster_replica_sets(struct gw_cluster_view *v)
{
    uint32_t points = cn_ring_total_points(v->ring), n = v->n_rep;
    v->sets = cn_malloc((size_t)points * n * sizeof(uint32_t));
    v->n_sets = 0;
    for (uint32_t i = 0; i < points; i++) {
        uint32_t *set = &v->sets[(size_t)v->n_sets * n];
        CN_ASSERT(cn_ring_replicas_at(v->ring, i, n, set) == n);
        qsort(set, n, sizeof(uint32_t), gw_cluster_u32_cmp);
        int seen = 0;
        for (uint32_t k = 0; k < v->n_sets && !seen; k++)
            seen = memcmp(&v->sets[(size_t)k * n], set, n * sizeof(uint32_t)) == 0;
        if (!seen)
            v->n_sets++;
    }
}

/* The slot of address, appended (with id) when new; -1 when full. */
static int gw_cluster_slot(struct gw_cluster *c, const char *address, const char *id)
{
    for (uint32_t i = 0; i < c->n_slots; i++)
        if (strcmp(c->slot_address[i], address) == 0)
            return (int)i;
    if (c->n_slots == GW_STORAGE_CLIENT_MAX_NODES)
        return -1;
    c->slot_address[c->n_slots] = cn_strdup(address);
    c->slot_id[c->n_slots] = cn_strdup(id);
    c->n_slots++;
    gw_handoff_set_nodes(c->handoff, c->n_slots);   /* hints may name it from now on */
    return (int)c->n_slots - 1;
}

/* A ring over every slot: map members by their id, weight and zone
 * (leaving ones weigh 0 unless as_active), other slots weigh 0. */
static struct cn_ring *gw_cluster_slot_ring(const struct gw_cluster *c,
                                            const struct gw_cluster_view *v, int as_active,
                                            char err[CN_ERR_LEN])
{
    const char **names = cn_calloc(v->n_slots, sizeof(*names));
    const char **zones = cn_calloc(v->n_slots, sizeof(*zones));
    uint32_t *weights = cn_calloc(v->n_slots, sizeof(*weights));
    char (*spare)[24] = cn_calloc(v->n_slots, sizeof(*spare));
    for (uint32_t i = 0; i < v->n_slots; i++) {
        snprintf(spare[i], sizeof(spare[i]), "\x01slot%u", i);   /* unique, no point */
        names[i] = spare[i];
        zones[i] = "";
    }
    for (uint32_t k = 0; k < cn_cluster_nodes(v->map); k++) {
        const struct cn_cluster_node *n = cn_cluster_node(v->map, k);
        uint32_t i = v->members[k];
        names[i] = n->id;
        zones[i] = n->zone;
        weights[i] = n->leaving && !as_active ? 0 : n->weight;
    }
    struct cn_ring *r = cn_ring_new_weighted(names, weights,
                                             cn_cluster_has_zones(v->map) ? zones : NULL,
                                             v->n_slots, (uint32_t)c->cfg->ring_vnodes, err);
    cn_free(spare);
    cn_free(weights);
    cn_free(zones);
    cn_free(names);
    return r;
}

static void gw_cluster_view_free(struct gw_cluster_view *v)
{
    while (v != NULL) {
        struct gw_cluster_view *older = v->older;
        cn_free(v->sets);
        cn_free(v->members);
        cn_ring_free(v->all_ring);
        cn_ring_free(v->ring);
        cn_cluster_free(v->map);
        cn_free(v);
        v = older;
    }
}

/* The view of map (copied) after prev (NULL at start). On the follower's
 * thread (slots are appended here). NULL with err. */
static struct gw_cluster_view *gw_cluster_view_new(struct gw_cluster *c,
                                                   const struct cn_cluster *map,
                                                   struct gw_cluster_view *prev,
                                                   char err[CN_ERR_LEN])
{
    struct gw_cluster_view *v = cn_calloc(1, sizeof(*v));
    v->map = cn_cluster_map_copy(map);
    v->members = cn_calloc(cn_cluster_nodes(map), sizeof(uint32_t));
    int leaving = 0;
    for (uint32_t k = 0; k < cn_cluster_nodes(map); k++) {
        const struct cn_cluster_node *n = cn_cluster_node(map, k);
        int slot = gw_cluster_slot(c, n->address, n->id);
        if (slot < 0) {
            snprintf(err, CN_ERR_LEN, "more than %d storage nodes over the gateway's life",
                     GW_STORAGE_CLIENT_MAX_NODES);
            goto fail;
        }
        v->members[k] = (uint32_t)slot;
        leaving |= n->leaving;
    }
    v->n_slots = c->n_slots;
    v->n_rep = CN_MIN(c->n, cn_cluster_active_nodes(map));
    v->ring = gw_cluster_slot_ring(c, v, 0, err);
    if (v->ring == NULL)
        goto fail;
    if (leaving && (v->all_ring = gw_cluster_slot_ring(c, v, 1, err)) == NULL)
        goto fail;
    gw_cluster_replica_sets(v);
    v->sv = (struct gw_store_view){
        .ring = v->ring,
        /* a leaving node's keys are read where they were; after any other
         * change, where the map before put them */
        .fallback = v->all_ring != NULL ? v->all_ring : prev != NULL ? prev->ring : NULL,
        .members = v->members,
        .n_members = cn_cluster_nodes(map),
    };
    v->older = prev;
    return v;
fail:
    gw_cluster_view_free(v);
    return NULL;
}

struct gw_cluster *gw_cluster_new(const struct gw_config *cfg, char err[CN_ERR_LEN])
{
    struct gw_cluster *c = cn_calloc(1, sizeof(*c));
    c->cfg = cfg;
    int rc = cfg->cluster_file != NULL && cfg->cluster_file[0] != '\0'
                 ? cn_cluster_load(cfg->cluster_file, &c->nodes, err)
                 : cn_cluster_from_endpoints(cfg->storage_nodes, &c->nodes, err);
    if (rc != CN_OK || gw_cluster_quorums(c, err) != CN_OK)
        goto fail;
    if (cfg->storage_auth == 1 &&
        msg_curve_client_load(&c->curve, cfg->storage_curve_secret_key_file,
                              cfg->storage_curve_server_key_file, err) != CN_OK)
        goto fail;
    if (cn_cluster_nodes(c->nodes) > GW_STORAGE_CLIENT_MAX_NODES) {
        snprintf(err, CN_ERR_LEN, "more than %d storage nodes", GW_STORAGE_CLIENT_MAX_NODES);
        goto fail;
    }
    /* room for every node a later map may add: node indexes never move.
     * The hint counters name nodes by the slot table's ids, so they exist
     * before the first view appends slots. */
    c->health = gw_node_health_new(GW_STORAGE_CLIENT_MAX_NODES);
    c->handoff = gw_handoff_new((const char *const *)c->slot_id, GW_STORAGE_CLIENT_MAX_NODES);
    struct gw_cluster_view *v = gw_cluster_view_new(c, c->nodes, NULL, err);
    if (v == NULL)
        goto fail;
    atomic_init(&c->view, v);
    return c;
fail:
    gw_cluster_free(c);
    return NULL;
}

void gw_cluster_free(struct gw_cluster *c)
{
    if (c == NULL)
        return;
    gw_handoff_free(c->handoff);
    gw_node_health_free(c->health);
    memset(&c->curve, 0, sizeof(c->curve)); /* no secret left in freed memory */
    gw_cluster_view_free(atomic_load(&c->view));
    for (uint32_t i = 0; i < c->n_slots; i++) {
        cn_free(c->slot_address[i]);
        cn_free(c->slot_id[i]);
    }
    cn_cluster_free(c->nodes);
    cn_free(c);
}

const struct cn_cluster *gw_cluster_nodes(const struct gw_cluster *c)
{
    return c->nodes;
}

const struct cn_ring *gw_cluster_ring(const struct gw_cluster *c)
{
    return atomic_load(&((struct gw_cluster *)c)->view)->ring;
}

const struct gw_cluster_view *gw_cluster_view(const struct gw_cluster *c)
{
    return atomic_load(&((struct gw_cluster *)c)->view);
}

const struct gw_cluster_view *gw_cluster_adopt(struct gw_cluster *c, const struct cn_cluster *map,
                                               char err[CN_ERR_LEN])
{
    struct gw_cluster_view *cur = atomic_load(&c->view);
    struct gw_cluster_view *v = gw_cluster_view_new(c, map, cur, err);
    if (v == NULL)
        return NULL;
    gw_cluster_metrics_name_slots((const char *const *)c->slot_id, c->n_slots);
    atomic_store(&c->view, v);
    return v;
}

uint64_t gw_cluster_view_version(const struct gw_cluster_view *v)
{
    return cn_cluster_version(v->map);
}

const struct cn_cluster *gw_cluster_view_map(const struct gw_cluster_view *v)
{
    return v->map;
}

uint32_t gw_cluster_view_slot(const struct gw_cluster_view *v, uint32_t i)
{
    CN_ASSERT(i < cn_cluster_nodes(v->map));
    return v->members[i];
}

int gw_cluster_apply(const struct gw_cluster *c, const struct gw_cluster_view *v,
                     struct gw_storage_client *client, struct gw_store *store,
                     char err[CN_ERR_LEN])
{
    for (uint32_t i = gw_storage_client_nodes(client); i < v->n_slots; i++)
        if (gw_storage_client_add_node(client, c->slot_address[i], err) != CN_OK)
            return CN_ERR;   /* the store keeps the ring it had */
    gw_store_set_view(store, &v->sv);
    return CN_OK;
}

void gw_cluster_quorum_values(const struct gw_cluster *c, uint32_t *n, uint32_t *w,
                              uint32_t *r, uint32_t *d)
{
    *n = c->n;
    *w = c->w;
    *r = c->r;
    *d = c->d;
}

struct gw_node_health *gw_cluster_health(const struct gw_cluster *c)
{
    return c->health;
}

struct gw_handoff *gw_cluster_handoff(const struct gw_cluster *c)
{
    return c->handoff;
}

struct gw_storage_client *gw_cluster_client_new(struct gw_cluster *c, struct event_base *base,
                                                void *zmq_ctx, char err[CN_ERR_LEN])
{
    struct gw_storage_client *client = gw_storage_client_new(
        base, zmq_ctx, cn_cluster_addresses(c->nodes), cn_cluster_nodes(c->nodes), &c->curve,
        c->cfg->storage_request_timeout_ms, err);
    if (client != NULL) {
        int64_t probe = c->cfg->storage_probe_interval_ms;
        gw_storage_client_set_health(client, c->health, probe,
                                     CN_MIN(probe, c->cfg->storage_request_timeout_ms));
        if (c->n_clients++ == 0)
            gw_storage_client_watch(client);
    }
    return client;
}

struct gw_store *gw_cluster_store_new(struct gw_cluster *c, struct gw_storage_client *client)
{
    const struct gw_cluster_view *v = atomic_load(&c->view);
    struct gw_store *s = gw_store_new(v->ring, client, c->n, c->w);
    gw_store_set_view(s, &v->sv);
    struct gw_store_options o = {
        .read_quorum = c->r,
        .delete_quorum = c->d,
        .handoff = c->handoff,
        .replay = c->n_stores++ == 0,
        .replay_interval_ms = c->cfg->handoff_replay_interval_ms,
        .replay_inflight = 32,
    };
    gw_store_configure(s, &o);
    return s;
}

void gw_cluster_describe(const struct gw_cluster *c, char *out, size_t len)
{
    snprintf(out, len, "%u storage nodes%s (N=%u W=%u R=%u D=%u, storage auth %s)",
             cn_cluster_nodes(c->nodes), cn_cluster_has_zones(c->nodes) ? " in zones" : "",
             c->n, c->w, c->r, c->d, c->curve.enabled ? "curve" : "none");
}

/* Appends each down node of the map to out (once per node). */
static void gw_cluster_ready_down_nodes(const struct gw_cluster *c,
                                        const struct gw_cluster_view *v, char *out, size_t len)
{
    size_t at = strlen(out);
    for (uint32_t i = 0; i < cn_cluster_nodes(v->map) && at + 1 < len; i++) {
        if (gw_node_health_is_up(c->health, v->members[i]))
            continue;
        int k = snprintf(out + at, len - at, "%s%s", at > 0 && out[at - 1] != ' ' ? ", " : "",
                         cn_cluster_node(v->map, i)->address);
        at = k > 0 ? CN_MIN(len - 1, at + (size_t)k) : at;
    }
}

int gw_cluster_ready(const struct gw_cluster *c, char *why, size_t len)
{
    const struct gw_cluster_view *v = gw_cluster_view(c);
    uint32_t n = v->n_rep, worst = n, short_w = 0, short_r = 0;
    for (uint32_t k = 0; k < v->n_sets; k++) {
        const uint32_t *set = &v->sets[(size_t)k * n];
        uint32_t up = 0;
        for (uint32_t j = 0; j < n; j++)
            up += (uint32_t)gw_node_health_is_up(c->health, set[j]);
        worst = CN_MIN(worst, up);
        short_w += up < c->w;
        short_r += up < c->r;
    }
    if (short_w == 0 && short_r == 0)
        return 1;
    snprintf(why, len, "%u of %u replica sets have fewer than W=%u up replicas, %u fewer than "
             "R=%u (fewest up: %u of N=%u); down: ", short_w, v->n_sets, c->w, short_r, c->r,
             worst, n);
    gw_cluster_ready_down_nodes(c, v, why, len);
    return 0;
}
