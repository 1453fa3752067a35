/* Process-wide cluster state of a gateway: built from the settings, shared
 * read-only (plus the atomics inside node_health and the locked hint counters)
 * by every worker thread. */
#include "cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn/alloc.h"

#include "handoff.h"
#include "node_health.h"

struct gw_cluster {
    const struct gw_config *cfg;
    struct cn_cluster *nodes;
    struct cn_ring *ring;
    uint32_t n, w, r, d;
    struct gw_node_health *health;
    struct gw_handoff *handoff;
    uint32_t *sets;   /* the ring's distinct replica sets, n nodes each, sorted */
    uint32_t n_sets;
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

/* Collects the distinct replica sets of the ring's points (each sorted), so
 * that a readiness check looks at each set once: at most a few thousand
 * points, a walk of a few nodes each, once at start. */
static void gw_cluster_replica_sets(struct gw_cluster *c)
{
    uint32_t points = cn_ring_total_points(c->ring);
    c->sets = cn_malloc((size_t)points * c->n * sizeof(uint32_t));
    c->n_sets = 0;
    for (uint32_t i = 0; i < points; i++) {
        uint32_t *set = &c->sets[(size_t)c->n_sets * c->n];
        CN_ASSERT(cn_ring_replicas_at(c->ring, i, c->n, set) == c->n);
        qsort(set, c->n, sizeof(uint32_t), gw_cluster_u32_cmp);
        int seen = 0;
        for (uint32_t k = 0; k < c->n_sets && !seen; k++)
            seen = memcmp(&c->sets[(size_t)k * c->n], set, c->n * sizeof(uint32_t)) == 0;
        if (!seen)
            c->n_sets++;
    }
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
    c->ring = cn_cluster_ring(c->nodes, (uint32_t)cfg->ring_vnodes, err);
    if (c->ring == NULL)
        goto fail;
    gw_cluster_replica_sets(c);
    c->health = gw_node_health_new(cn_cluster_nodes(c->nodes));
    c->handoff = gw_handoff_new(c->nodes);
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
    cn_free(c->sets);
    memset(&c->curve, 0, sizeof(c->curve)); /* no secret left in freed memory */
    cn_ring_free(c->ring);
    cn_cluster_free(c->nodes);
    cn_free(c);
}

const struct cn_cluster *gw_cluster_nodes(const struct gw_cluster *c)
{
    return c->nodes;
}

const struct cn_ring *gw_cluster_ring(const struct gw_cluster *c)
{
    return c->ring;
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
    struct gw_store *s = gw_store_new(c->ring, client, c->n, c->w);
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

/* Appends " node i" for each down member of set to out (once per node). */
static void gw_cluster_ready_down_nodes(const struct gw_cluster *c, char *out, size_t len)
{
    size_t at = strlen(out);
    for (uint32_t i = 0; i < cn_cluster_nodes(c->nodes) && at + 1 < len; i++) {
        if (gw_node_health_is_up(c->health, i))
            continue;
        int k = snprintf(out + at, len - at, "%s%s", at > 0 && out[at - 1] != ' ' ? ", " : "",
                         cn_cluster_node(c->nodes, i)->address);
        at = k > 0 ? CN_MIN(len - 1, at + (size_t)k) : at;
    }
}

int gw_cluster_ready(const struct gw_cluster *c, char *why, size_t len)
{
    uint32_t worst = c->n, short_w = 0, short_r = 0;
    for (uint32_t k = 0; k < c->n_sets; k++) {
        const uint32_t *set = &c->sets[(size_t)k * c->n];
        uint32_t up = 0;
        for (uint32_t j = 0; j < c->n; j++)
            up += (uint32_t)gw_node_health_is_up(c->health, set[j]);
        worst = CN_MIN(worst, up);
        short_w += up < c->w;
        short_r += up < c->r;
    }
    if (short_w == 0 && short_r == 0)
        return 1;
    snprintf(why, len, "%u of %u replica sets have fewer than W=%u up replicas, %u fewer than "
             "R=%u (fewest up: %u of N=%u); down: ", short_w, c->n_sets, c->w, short_r, c->r,
             worst, c->n);
    gw_cluster_ready_down_nodes(c, why, len);
    return 0;
}
