/* cairn-admin node (node.h): reads the current cluster map from the nodes,
 * edits a copy, writes it as version + 1 to every node of the old and the
 * new map, and for decommission --wait waits until the gateways' rebalance
 * worker has walked the new map (s/rebalance's done_version; progress on
 * stderr), verifies by a dry run of the full repair pass (every node
 * listed, the leaving one included) that no key the leaving node holds is
 * short of its N copies on active nodes at that version or newer
 * (adm_node_verify()), then writes the map without the node. With --repair,
 * or when told to after no worker took the map, cairn-admin copies by its
 * own repair passes instead. */
#include "node.h"

#include "json.h"
#include "rebalance.h"
#include "repair.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zmq.h>

#include "cn/alloc.h"
#include "cn/crc.h"
#include "cn/hlc.h"
#include "cn/time.h"
#include "msg/client.h"
#include "msg/msg.h"

#define ADM_NODE_MAX_ADDRS (2 * CN_CLUSTER_MAX_NODES)
#define ADM_NODE_WAIT_PASSES 20
#define ADM_NODE_VERIFY_TRIES 5       /* dry runs after the walk; one repair pass after the 3rd */
#define ADM_NODE_POLL_US 500000       /* s/rebalance read every half second */
#define ADM_NODE_PRINT_US 5000000     /* a progress line at least this often */

/* What one node said about the map. */
struct adm_node_seen {
    const char *address;   /* borrowed from a map that outlives the view */
    int up;                /* answered */
    int has;               /* holds a map record that parses */
    int bad;               /* holds a map record that does not */
    uint64_t version, ts, ver;
    double rtt_ms;
    char err[CN_ERR_LEN];
};

/* The current map and what each node asked said. */
struct adm_node_view {
    struct cn_cluster *map;         /* owned */
    struct cn_cluster *found[ADM_NODE_MAX_ADDRS]; /* maps the records held (owned) */
    struct adm_node_seen seen[ADM_NODE_MAX_ADDRS];
    uint32_t n_seen;
    int from_file;
};

/* Reads node address's map record. CN_OK: *out parsed (owned), with its
 * record version; CN_NOTFOUND: none (or a tombstone); CN_INVAL: a record
 * that does not parse (why in s->err); CN_IO: no answer. */
static int adm_node_fetch(const struct adm_node_opts *o, void *zctx, struct adm_node_seen *s,
                          struct cn_cluster **out)
{
    *out = NULL;
    struct msg_client *c = msg_client_new_curve(zctx, s->address, o->curve, s->err);
    if (c == NULL)
        return CN_IO;
    struct msg req;
    struct msg_reply rep;
    msg_init_request(&req, MSG_OP_GET, 0);
    req.key = (struct msg_bytes){(const uint8_t *)ADM_NODE_MAP_KEY, strlen(ADM_NODE_MAP_KEY)};
    MSG_SET(&req, MSG_F_KEY);
    uint64_t t0 = cn_time_mono_us();
    int rc = msg_client_call(c, &req, &rep, o->timeout_ms, s->err);
    s->rtt_ms = (double)(cn_time_mono_us() - t0) / 1000.0;
    if (rc != CN_OK) {
        msg_client_free(c);
        return CN_IO;
    }
    s->up = 1;
    if (rep.m.st == MSG_ST_NOT_FOUND) {
        rc = CN_NOTFOUND;
    } else if (rep.m.st != MSG_ST_OK) {
        snprintf(s->err, CN_ERR_LEN, "%s", msg_status_str(rep.m.st));
        rc = CN_IO;
    } else {
        char why[CN_ERR_LEN];
        rc = rep.m.payload.len > CN_CLUSTER_MAP_MAX
                 ? CN_INVAL
                 : cn_cluster_parse((const char *)rep.m.payload.ptr, rep.m.payload.len, out, why);
        if (rc != CN_OK) {
            snprintf(s->err, CN_ERR_LEN, "map record left out: %s",
                     rep.m.payload.len > CN_CLUSTER_MAP_MAX ? "larger than 1 MiB" : why);
            s->bad = 1;
            rc = CN_INVAL;
        } else {
            s->has = 1;
            s->version = cn_cluster_version(*out);
            s->ts = rep.m.ts;
            s->ver = rep.m.ver;
        }
    }
    msg_reply_release(&rep);
    msg_client_free(c);
    return rc;
}

/* Asks each node of cl not asked yet. */
static void adm_node_ask(const struct adm_node_opts *o, void *zctx, struct adm_node_view *v,
                         const struct cn_cluster *cl)
{
    for (uint32_t i = 0; i < cn_cluster_nodes(cl) && v->n_seen < ADM_NODE_MAX_ADDRS; i++) {
        const char *a = cn_cluster_node(cl, i)->address;
        int asked = 0;
        for (uint32_t k = 0; k < v->n_seen && !asked; k++)
            asked = strcmp(v->seen[k].address, a) == 0;
        if (asked)
            continue;
        struct adm_node_seen *s = &v->seen[v->n_seen];
        memset(s, 0, sizeof(*s));
        s->address = a;
        adm_node_fetch(o, zctx, s, &v->found[v->n_seen]);
        v->n_seen++;
    }
}

/* Index of the newest record seen (ts, then ver), or -1. */
static int adm_node_newest(const struct adm_node_view *v)
{
    int best = -1;
    for (uint32_t k = 0; k < v->n_seen; k++) {
        const struct adm_node_seen *s = &v->seen[k];
        if (!s->has)
            continue;
        if (best < 0 || s->ts > v->seen[best].ts ||
            (s->ts == v->seen[best].ts && s->ver > v->seen[best].ver))
            best = (int)k;
    }
    return best;
}

/* Finds the current map: the newest record on the file's nodes, then on
 * the nodes that record names; the file when its version is higher. A
 * record that does not parse is left out with a warning; when no node holds
 * a good one, the file is taken only if it has a version line (else the
 * file's version 0 would roll the cluster back): CN_INVAL, said on stderr. */
static int adm_node_view_load(const struct adm_node_opts *o, struct adm_node_view *v)
{
    memset(v, 0, sizeof(*v));
    void *zctx = zmq_ctx_new();
    adm_node_ask(o, zctx, v, o->file);
    int best = adm_node_newest(v);
    if (best >= 0) {
        adm_node_ask(o, zctx, v, v->found[best]);
        best = adm_node_newest(v);
    }
    zmq_ctx_term(zctx);
    uint32_t bad = 0;
    for (uint32_t k = 0; k < v->n_seen; k++) {
        if (v->seen[k].bad)
            fprintf(stderr, "cairn-admin: %s: %s\n", v->seen[k].address, v->seen[k].err);
        bad += (uint32_t)v->seen[k].bad;
    }
    if (best < 0 && bad > 0 && cn_cluster_version(o->file) == 0) {
        fprintf(stderr, "cairn-admin: no node holds a cluster map that parses: put the map in "
                "use (the gateways log it) in the --cluster file with a `version N` line above "
                "the last version, and run the command again\n");
        v->map = cn_cluster_map_copy(o->file);
        return CN_INVAL;
    }
    if (best < 0 || cn_cluster_version(o->file) > v->seen[best].version) {
        v->map = cn_cluster_map_copy(o->file);
        v->from_file = 1;
    } else {
        v->map = cn_cluster_map_copy(v->found[best]);
    }
    return CN_OK;
}

static void adm_node_view_free(struct adm_node_view *v)
{
    for (uint32_t k = 0; k < v->n_seen; k++)
        cn_cluster_free(v->found[k]);
    cn_cluster_free(v->map);
}

/* PUTs text to address as the map record (ts, ver). 1 when it acked. */
static int adm_node_put(const struct adm_node_opts *o, void *zctx, const char *address,
                        const char *text, size_t len, uint64_t ts)
{
    char err[CN_ERR_LEN];
    struct msg_client *c = msg_client_new_curve(zctx, address, o->curve, err);
    if (c == NULL) {
        fprintf(stderr, "cairn-admin: %s: %s\n", address, err);
        return 0;
    }
    struct msg req;
    struct msg_reply rep;
    msg_init_request(&req, MSG_OP_PUT, 0);
    req.key = (struct msg_bytes){(const uint8_t *)ADM_NODE_MAP_KEY, strlen(ADM_NODE_MAP_KEY)};
    req.ts = ts;
    req.ver = ts;
    req.crc = cn_crc32c(0, text, len);
    req.etag = (struct msg_bytes){(const uint8_t *)"", 0};
    req.payload = (struct msg_bytes){(const uint8_t *)text, (uint32_t)len};
    MSG_SET(&req, MSG_F_KEY);
    MSG_SET(&req, MSG_F_TS);
    MSG_SET(&req, MSG_F_VER);
    MSG_SET(&req, MSG_F_CRC);
    MSG_SET(&req, MSG_F_ETAG);
    int ok = 0;
    if (msg_client_call(c, &req, &rep, o->timeout_ms, err) != CN_OK) {
        fprintf(stderr, "cairn-admin: %s: %s\n", address, err);
    } else {
        ok = rep.m.st == MSG_ST_OK;
        if (!ok)
            fprintf(stderr, "cairn-admin: %s: %s\n", address, msg_status_str(rep.m.st));
        msg_reply_release(&rep);
    }
    msg_client_free(c);
    return ok;
}

/* Writes map (its version already set) to every node of old and map.
 * Returns CN_OK when a majority of map's active nodes stored it (the
 * others get it from the next write or are down: said on stderr). */
static int adm_node_publish(const struct adm_node_opts *o, const struct cn_cluster *old,
                            const struct cn_cluster *map)
{
    size_t len = 0;
    char *text = cn_cluster_format(map, &len);
    uint64_t ts = cn_hlc_now(cn_hlc_default());
    void *zctx = zmq_ctx_new();
    uint32_t acks_new = 0, sent = 0, acks = 0;
    for (uint32_t i = 0; i < cn_cluster_nodes(map); i++) {
        int ok = adm_node_put(o, zctx, cn_cluster_node(map, i)->address, text, len, ts);
        acks += (uint32_t)ok;
        acks_new += (uint32_t)(ok && !cn_cluster_node(map, i)->leaving);
        sent++;
    }
    for (uint32_t i = 0; i < cn_cluster_nodes(old); i++) {
        const char *a = cn_cluster_node(old, i)->address;
        if (cn_cluster_find(map, a) >= 0)
            continue;
        acks += (uint32_t)adm_node_put(o, zctx, a, text, len, ts);
        sent++;
    }
    zmq_ctx_term(zctx);
    cn_free(text);
    uint32_t need = cn_cluster_active_nodes(map) / 2 + 1;
    fprintf(stderr, "cluster map version %llu stored on %u of %u nodes\n",
            (unsigned long long)cn_cluster_version(map), acks, sent);
    if (acks_new < need) {
        fprintf(stderr, "cairn-admin: only %u of the map's %u active nodes stored it (need "
                "%u): run the command again once they are up\n", acks_new,
                cn_cluster_active_nodes(map), need);
        return CN_IO;
    }
    return CN_OK;
}

/* Prints the result of a change (--json: one object). */
static void adm_node_report(const struct adm_node_opts *o, const char *what,
                            const struct cn_cluster *map, int ok)
{
    if (o->json) {
        printf("{\"command\": \"node %s\", \"ok\": %s, \"version\": %llu}\n", what,
               ok ? "true" : "false", (unsigned long long)cn_cluster_version(map));
    } else if (ok) {
        printf("node %s: cluster map version %llu\n", what,
               (unsigned long long)cn_cluster_version(map));
    }
}

/* Edits the map by the command; CN_OK with next (owned), else 2 on bad
 * usage (said on stderr). */
static int adm_node_edit(const struct adm_node_opts *o, const struct cn_cluster *cur,
                         char *const *a, uint32_t n, struct cn_cluster **next)
{
    char err[CN_ERR_LEN] = "";
    struct cn_cluster *m = cn_cluster_map_copy(cur);
    int at = n >= 2 ? cn_cluster_find(m, a[1]) : -1;
    int rc = CN_OK;
    if (strcmp(a[0], "add") == 0 && n >= 3) {
        uint32_t weight = 100;
        const char *zone = "";
        for (uint32_t i = 3; i < n && rc == CN_OK; i++) {
            char *end;
            if (strncmp(a[i], "weight=", 7) == 0) {
                unsigned long w = strtoul(a[i] + 7, &end, 10);
                weight = *end == '\0' && w <= 10000 ? (uint32_t)w : 0;
            } else if (strncmp(a[i], "zone=", 5) == 0 && a[i][5] != '\0') {
                zone = a[i] + 5;
            } else {
                snprintf(err, CN_ERR_LEN, "unknown attribute '%s'", a[i]);
                rc = CN_INVAL;
            }
        }
        if (rc == CN_OK)
            rc = cn_cluster_map_add(m, a[1], a[2], weight, zone, err);
    } else if (strcmp(a[0], "replace") == 0 && n == 4 && at >= 0) {
        const struct cn_cluster_node *old = cn_cluster_node(m, (uint32_t)at);
        char *zone = cn_strdup(old->zone);
        uint32_t weight = old->weight;
        cn_cluster_map_remove(m, (uint32_t)at);
        rc = cn_cluster_map_add(m, a[2], a[3], weight, zone, err);
        cn_free(zone);
    } else if (strcmp(a[0], "decommission") == 0 && n == 2 && at >= 0) {
        cn_cluster_map_set_leaving(m, (uint32_t)at, 1);
        if (cn_cluster_active_nodes(m) == 0) {
            snprintf(err, CN_ERR_LEN, "%s is the last active node", a[1]);
            rc = CN_INVAL;
        }
    } else if (strcmp(a[0], "remove") == 0 && n == 2 && at >= 0) {
        if (!cn_cluster_node(m, (uint32_t)at)->leaving && !o->force) {
            snprintf(err, CN_ERR_LEN, "%s is active: decommission it first (its keys would "
                     "lose a copy), or --force for a node that is gone", a[1]);
            rc = CN_INVAL;
        } else {
            cn_cluster_map_remove(m, (uint32_t)at);
            if (cn_cluster_active_nodes(m) == 0) {
                snprintf(err, CN_ERR_LEN, "no active node would remain");
                rc = CN_INVAL;
            }
        }
    } else {
        snprintf(err, CN_ERR_LEN, n >= 2 && at < 0 ? "no node '%s' in the cluster map "
                 "(version %llu)" : "bad arguments", n >= 2 ? a[1] : "",
                 (unsigned long long)cn_cluster_version(cur));
        rc = CN_INVAL;
    }
    if (rc != CN_OK) {
        fprintf(stderr, "cairn-admin: node %s: %s\n", a[0], err);
        cn_cluster_free(m);
        return 2;
    }
    cn_cluster_map_set_version(m, cn_cluster_version(cur) + 1);
    *next = m;
    return CN_OK;
}

/* One repair pass over map (the full pass: it lists every node, the
 * leaving ones too, and writes each key to its replicas in map's ring;
 * the records not placed by the ring are left out: repair.h). With
 * leaving, only the keys a leaving node holds count, against its version
 * (repair.h's against_leaving). Progress goes to stderr. CN_OK with the
 * counts, else CN_IO. */
static int adm_node_repair_pass(const struct adm_node_opts *o, const struct cn_cluster *map,
                                int dry_run, int leaving, uint64_t before_us,
                                struct adm_repair_counts *n)
{
    uint32_t active = cn_cluster_active_nodes(map);
    struct adm_repair_opts ro = {
        .replicas = o->replicas > 0 ? CN_MIN(o->replicas, active) : CN_MIN(3u, active),
        .vnodes = o->vnodes, .timeout_ms = o->timeout_ms, .dry_run = dry_run,
        .verbose = o->verbose, .curve = o->curve, .full = 1, .skip_unplaced = 1,
        .against_leaving = leaving, .written_before_us = dry_run ? before_us : 0,
    };
    char err[CN_ERR_LEN];
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    dup2(STDERR_FILENO, STDOUT_FILENO);
    int rc = adm_repair_run(map, &ro, n, err);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    if (rc != CN_OK)
        fprintf(stderr, "cairn-admin: repair toward map version %llu stopped: %s\n",
                (unsigned long long)cn_cluster_version(map), err);
    return rc;
}

/* Repairs toward map until a dry run finds every key with its N copies on
 * active nodes (or ADM_NODE_WAIT_PASSES passes went by); with leaving
 * (decommission), every key a leaving node holds with its N copies at its
 * version or newer: adm_node_verify(). CN_OK when done. */
static int adm_node_wait_copies(const struct adm_node_opts *o, const struct cn_cluster *map,
                                int leaving)
{
    for (int pass = 1; pass <= ADM_NODE_WAIT_PASSES; pass++) {
        struct adm_repair_counts n;
        if (adm_node_repair_pass(o, map, 0, 0, 0, &n) != CN_OK)
            return CN_IO;
        fprintf(stderr, "pass %d: %llu keys, %llu copies written, %llu failed\n", pass,
                (unsigned long long)n.keys, (unsigned long long)n.repaired,
                (unsigned long long)n.failed);
        if (adm_node_repair_pass(o, map, 1, leaving, 0, &n) != CN_OK)
            return CN_IO;
        if (n.differences == 0 && n.failed == 0) {
            fprintf(stderr, "every one of %llu keys%s has its copies on active nodes\n",
                    (unsigned long long)(leaving ? n.leaving_keys : n.keys),
                    leaving ? " the leaving node holds" : "");
            return CN_OK;
        }
        sleep(1);
    }
    fprintf(stderr, "cairn-admin: keys still lack copies after %d passes\n",
            ADM_NODE_WAIT_PASSES);
    return CN_IO;
}

/* One progress line of the worker's walk toward version target. */
static void adm_node_print_walk(const struct adm_rebalance_fields *f, uint64_t target)
{
    const char *state = !f->has ? "no record"
                        : f->done >= target ? "done"
                        : strcmp(f->state, "copying") == 0 && f->to >= target ? "copying"
                        : "pending";
    fprintf(stderr, "rebalance toward map version %llu: %s, holder %s, %llu keys scanned, "
            "%llu copies written (%llu bytes), %llu purged, %llu failed\n",
            (unsigned long long)target, state, f->holder[0] ? f->holder : "none",
            (unsigned long long)f->scanned, (unsigned long long)f->copied,
            (unsigned long long)f->bytes, (unsigned long long)f->purged,
            (unsigned long long)f->failed);
}

/* Waits until the gateways' rebalance worker has walked map (s/rebalance's
 * done_version reaches its version), printing progress on stderr. CN_OK;
 * CN_TIMEOUT (said on stderr) when for worker_timeout_s no gateway held the
 * lease (a holder may first finish an older walk, or wait until every
 * gateway uses the map: that is a live worker). */
static int adm_node_wait_worker(const struct adm_node_opts *o, const struct cn_cluster *map,
                                const char *what, const char *id, uint64_t *walk_started_us)
{
    struct adm_rebalance_opts ro = {
        .map = map, .replicas = o->replicas, .timeout_ms = o->timeout_ms, .curve = o->curve,
    };
    uint64_t target = cn_cluster_version(map);
    uint64_t limit = (uint64_t)(o->worker_timeout_s > 0 ? o->worker_timeout_s : 60) * 1000000u;
    uint64_t t0 = cn_time_mono_us(), working_at = t0, printed_at = 0;
    struct adm_rebalance_fields f, last;
    memset(&last, 0, sizeof(last));
    fprintf(stderr, "waiting for the gateways' rebalance worker to walk map version %llu\n",
            (unsigned long long)target);
    for (;;) {
        adm_rebalance_fetch(&ro, &f);
        uint64_t now = cn_time_mono_us();
        if (f.has && f.done >= target) {
            adm_node_print_walk(&f, target);
            *walk_started_us = f.started;
            return CN_OK;
        }
        if (f.has && f.lease_until > cn_time_now_us())   /* a live worker */
            working_at = now;
        if (now - printed_at >= ADM_NODE_PRINT_US || f.to != last.to ||
            strcmp(f.holder, last.holder) != 0 || strcmp(f.state, last.state) != 0) {
            adm_node_print_walk(&f, target);
            printed_at = now;
            last = f;
        }
        if (now - working_at > limit) {
            fprintf(stderr, "cairn-admin: node %s: no gateway's rebalance worker held the "
                    "lease for %llu s, map version %llu not walked (s/rebalance: %s, last "
                    "holder %s, done_version %llu). Start a gateway with rebalance.enabled = "
                    "true (or raise --worker-timeout) and run the command again, or copy with "
                    "cairn-admin itself: node %s %s --wait --repair\n", what,
                    (unsigned long long)(limit / 1000000u), (unsigned long long)target,
                    f.has ? "found" : "none",
                    f.holder[0] ? f.holder : "none", (unsigned long long)f.done,
                    what, id);
            return CN_TIMEOUT;
        }
        usleep(ADM_NODE_POLL_US);
    }
}

/* After the walk: dry runs of the full repair pass until one finds every
 * key with its N copies on active nodes. With leaving (decommission) the
 * check is what removing the leaving node needs, and no more: each key a
 * leaving node holds has, on its N active owners in map's ring, a copy at
 * the version the leaving node holds or newer. Keys no leaving node holds
 * are not counted, and a newer write still on its way to a replica is no
 * difference; a leaving node owns no ring point, so what it holds only
 * shrinks during the walk, and the check settles under a steady overwrite
 * load (the full rule would find the writes in flight on every pass).
 * replace keeps the full rule (its old node is gone from map), over the
 * keys stamped before before_us, the start of the worker's walk (every
 * gateway used the new map by then, so a later write's own quorum and
 * hints place it; 0: every key), so it settles under a steady overwrite
 * load too. A key
 * still short (a write the walk raced, a replica that missed one) is
 * copied by one repair pass (the same rule) after the third dry run.
 * CN_OK when verified. */
static int adm_node_verify(const struct adm_node_opts *o, const struct cn_cluster *map,
                           int leaving, uint64_t before_us)
{
    for (int t = 1; t <= ADM_NODE_VERIFY_TRIES; t++) {
        struct adm_repair_counts n;
        if (adm_node_repair_pass(o, map, 1, leaving, leaving ? 0 : before_us, &n) != CN_OK)
            return CN_IO;
        if (n.differences == 0 && n.failed == 0) {
            if (leaving)
                fprintf(stderr, "verified: every one of %llu keys the leaving node holds "
                        "has its copies on active nodes, at its version or newer (%llu keys "
                        "listed)\n", (unsigned long long)n.leaving_keys,
                        (unsigned long long)n.keys);
            else
                fprintf(stderr, "verified: every one of %llu keys has its copies on active "
                        "nodes (%llu written during the walk left to their own quorum)\n",
                        (unsigned long long)(n.keys - n.recent), (unsigned long long)n.recent);
            return CN_OK;
        }
        fprintf(stderr, "verification %d: %llu copies short of N, %llu failed\n", t,
                (unsigned long long)n.differences, (unsigned long long)n.failed);
        if (t == 3) {
            fprintf(stderr, "copying what is still short with a repair pass\n");
            if (adm_node_repair_pass(o, map, 0, leaving, 0, &n) != CN_OK)
                return CN_IO;
        }
        sleep(1);
    }
    fprintf(stderr, "cairn-admin: keys still lack copies after the walk and a repair pass: "
            "run the command again (or cairn-admin repair)\n");
    return CN_IO;
}

/* Before the map without the node is written: the map in use must still
 * be map (another change while the data moved would be undone by a write
 * of map's version + 1). CN_OK, else CN_IO said on stderr. */
static int adm_node_unchanged(const struct adm_node_opts *o, const struct cn_cluster *map,
                              const char *id)
{
    struct adm_node_view v;
    int rc = adm_node_view_load(o, &v);
    if (rc == CN_OK && cn_cluster_version(v.map) != cn_cluster_version(map)) {
        fprintf(stderr, "cairn-admin: the cluster map moved to version %llu while %s's data "
                "moved (this command wrote version %llu): %s stays leaving; run `node "
                "decommission %s --wait` again\n", (unsigned long long)cn_cluster_version(v.map),
                id, (unsigned long long)cn_cluster_version(map), id, id);
        rc = CN_IO;
    }
    adm_node_view_free(&v);
    return rc == CN_OK ? CN_OK : CN_IO;
}

/* add, decommission, remove, replace. */
static int adm_node_change(const struct adm_node_opts *o, char *const *a, uint32_t n)
{
    struct adm_node_view v;
    if (adm_node_view_load(o, &v) != CN_OK) {
        adm_node_view_free(&v);
        return 1;
    }
    struct cn_cluster *next = NULL;
    int bad = adm_node_edit(o, v.map, a, n, &next);
    if (bad != 0) {
        adm_node_view_free(&v);
        return bad;
    }
    int rc = adm_node_publish(o, v.map, next);
    int wait = o->wait && (strcmp(a[0], "decommission") == 0 || strcmp(a[0], "replace") == 0);
    int leaving = strcmp(a[0], "decommission") == 0;
    uint64_t walk_started_us = 0;
    if (rc == CN_OK && wait && o->repair)
        rc = adm_node_wait_copies(o, next, leaving);
    else if (rc == CN_OK && wait &&
             (rc = adm_node_wait_worker(o, next, a[0], a[1], &walk_started_us)) == CN_OK)
        rc = adm_node_verify(o, next, leaving, walk_started_us);
    if (rc == CN_OK && wait && strcmp(a[0], "decommission") == 0)
        rc = adm_node_unchanged(o, next, a[1]);
    if (rc == CN_OK && wait && strcmp(a[0], "decommission") == 0) {
        struct cn_cluster *gone = cn_cluster_map_copy(next);
        cn_cluster_map_remove(gone, (uint32_t)cn_cluster_find(gone, a[1]));
        cn_cluster_map_set_version(gone, cn_cluster_version(next) + 1);
        rc = adm_node_publish(o, next, gone);
        cn_cluster_free(next);
        next = gone;
    }
    adm_node_report(o, a[0], next, rc == CN_OK);
    cn_cluster_free(next);
    adm_node_view_free(&v);
    return rc == CN_OK ? 0 : 1;
}

/* The node of the view that is address, or NULL. */
static const struct adm_node_seen *adm_node_seen_of(const struct adm_node_view *v,
                                                    const char *address)
{
    for (uint32_t k = 0; k < v->n_seen; k++)
        if (strcmp(v->seen[k].address, address) == 0)
            return &v->seen[k];
    return NULL;
}

/* status: the map's version and, per node, state, reachability and the
 * map version it holds. Exit 1 when a node of the map did not answer. */
/* Says on stderr where the map in use came from when the nodes did not
 * settle it: none answered, none holds a map, the file's version is
 * higher, or the nodes that answered hold different versions. */
static void adm_node_map_explain(const struct adm_node_opts *o, const struct adm_node_view *v)
{
    const char *given = o->given != NULL ? o->given : "nodes given";
    uint32_t up = 0, has = 0;
    for (uint32_t k = 0; k < v->n_seen; k++) {
        up += (uint32_t)v->seen[k].up;
        has += (uint32_t)v->seen[k].has;
    }
    uint64_t used = cn_cluster_version(v->map);
    if (up == 0) {
        fprintf(stderr, "cairn-admin: none of the %u nodes of the %s answered for the cluster "
                "map (%s): using the %s as it is\n", v->n_seen, given, ADM_NODE_MAP_KEY, given);
        return;
    }
    if (has == 0 && o->quiet_no_map)
        return;
    if (has == 0) {
        fprintf(stderr, "cairn-admin: no node of the %s holds a cluster map (%s; `cairn-admin "
                "node` writes one): using the %s as it is (%u nodes)\n", given,
                ADM_NODE_MAP_KEY, given, cn_cluster_nodes(v->map));
        return;
    }
    if (v->from_file)
        fprintf(stderr, "cairn-admin: the %s's version %llu is above the nodes' cluster map: "
                "using the %s\n", given, (unsigned long long)used, given);
    uint32_t differ = 0;
    for (uint32_t k = 0; k < v->n_seen; k++)
        differ += (uint32_t)(v->seen[k].up && !v->seen[k].bad &&
                             (!v->seen[k].has || v->seen[k].version != used));
    if (differ == 0 || v->from_file)
        return;
    fprintf(stderr, "cairn-admin: the nodes disagree on the cluster map: using version %llu, "
            "the newest;", (unsigned long long)used);
    for (uint32_t k = 0; k < v->n_seen; k++) {
        const struct adm_node_seen *s = &v->seen[k];
        if (!s->up || s->bad || (s->has && s->version == used))   /* bad: said already */
            continue;
        if (s->has)
            fprintf(stderr, " %s holds version %llu;", s->address,
                    (unsigned long long)s->version);
        else
            fprintf(stderr, " %s holds none;", s->address);
    }
    fprintf(stderr, " the next `cairn-admin node` change rewrites it on every node\n");
}

struct cn_cluster *adm_node_map(const struct adm_node_opts *o)
{
    struct adm_node_view v;
    struct cn_cluster *m = NULL;
    if (adm_node_view_load(o, &v) == CN_OK) {
        adm_node_map_explain(o, &v);
        m = v.map;
        v.map = NULL;
    }
    adm_node_view_free(&v);
    return m;
}

static int adm_node_status(const struct adm_node_opts *o)
{
    struct adm_node_view v;
    int bad = adm_node_view_load(o, &v) != CN_OK;
    void *zctx = zmq_ctx_new();
    adm_node_ask(o, zctx, &v, v.map);   /* nodes only the map names */
    zmq_ctx_term(zctx);
    const struct cn_cluster *m = v.map;
    if (o->json)
        printf("{\"command\": \"node status\", \"version\": %llu, \"source\": \"%s\", "
               "\"nodes\": [", (unsigned long long)cn_cluster_version(m),
               v.from_file ? "file" : "nodes");
    else
        printf("cluster map version %llu (from the %s)\n",
               (unsigned long long)cn_cluster_version(m), v.from_file ? "file" : "nodes");
    for (uint32_t i = 0; i < cn_cluster_nodes(m); i++) {
        const struct cn_cluster_node *nd = cn_cluster_node(m, i);
        const struct adm_node_seen *s = adm_node_seen_of(&v, nd->address);
        int up = s != NULL && s->up;
        bad |= !up;
        if (o->json) {
            printf("%s\n    {\"id\": ", i > 0 ? "," : "");
            adm_json_cstr(nd->id);
            printf(", \"address\": ");
            adm_json_cstr(nd->address);
            printf(", \"state\": \"%s\", \"weight\": %u, \"zone\": ",
                   nd->leaving ? "leaving" : "active", nd->weight);
            adm_json_cstr(nd->zone);
            printf(", \"up\": %s, \"map_version\": ", up ? "true" : "false");
            if (s != NULL && s->has)
                printf("%llu}", (unsigned long long)s->version);
            else
                printf("null}");
        } else {
            char held[32] = "none";
            if (s != NULL && s->has)
                snprintf(held, sizeof(held), "%llu", (unsigned long long)s->version);
            printf("%-12s %-28s %-8s %-4s map=%s%s%s\n", nd->id, nd->address,
                   nd->leaving ? "leaving" : "active", up ? "up" : "down", held,
                   s != NULL && s->err[0] ? " " : "", s != NULL ? s->err : "");
        }
    }
    struct adm_rebalance_opts ro = {
        .map = m, .replicas = o->replicas, .timeout_ms = o->timeout_ms, .curve = o->curve,
        .json = o->json,
    };
    if (o->json)
        printf("\n  ], \"rebalance\": ");
    adm_rebalance_summary(&ro);   /* the data moving after the last change */
    if (o->json)
        printf("}\n");
    adm_node_view_free(&v);
    return bad;
}

int adm_node_run(const struct adm_node_opts *o, char *const *args, uint32_t n_args)
{
    if (n_args == 0)
        return 2;
    if (strcmp(args[0], "status") == 0)
        return n_args == 1 ? adm_node_status(o) : 2;
    static const char *const subs[] = {"add", "decommission", "remove", "replace"};
    for (size_t i = 0; i < CN_ARRAY_LEN(subs); i++)
        if (strcmp(args[0], subs[i]) == 0)
            return adm_node_change(o, args, n_args);
    fprintf(stderr, "cairn-admin: node: unknown subcommand '%s' (add, decommission, remove, "
            "replace, status)\n", args[0]);
    return 2;
}
