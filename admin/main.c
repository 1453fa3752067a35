/* cairn-admin: operator commands against storage nodes over the protocol.
 *
 *   cairn-admin [--cluster FILE | --nodes EP,EP,...] [--timeout MS]
 *               [--replicas N] [--vnodes V] [--dry-run] [-v]
 *               [--full] [--fanout F] [--leaf-keys K]
 *               [--auth none|curve] [--curve-secret-key-file F]
 *               [--curve-server-key-file F]
 *               [--gateway URL]... [--access-key K --secret-key S] [--json]
 *               status|stats|scrub|compact|ping|repair|lifecycle status
 *               | collector status
 *   cairn-admin [--json] keygen OUT_PREFIX
 *   cairn-admin [node options] [--json] [--master-key-file F]
 *               key create NAME [--account A] | key list | key delete AKID
 *             | key allow AKID [--bucket B [--read] [--write] [--owner]] [--create-bucket]
 *             | key deny AKID [--bucket B [--read] [--write] [--owner]] [--create-bucket]
 *   cairn-admin [node options] [--json] account create NAME | account list
 *             | account delete ID|NAME [--force]
 *   cairn-admin [node options] [--json] bucket list | bucket info B
 *             | bucket create B --account A [--region R] | bucket delete B
 *   cairn-admin --cluster FILE [node options] [--json]
 *               node add ID ADDR [zone=Z] [weight=W]
 *               | node decommission ID [--wait [--repair] [--worker-timeout S]]
 *               | node remove ID [--force]
 *               | node replace OLD NEW ADDR [--wait [--repair] [--worker-timeout S]]
 *               | node status
 *   cairn-admin [node options] [--json]
 *               rebalance status | rebalance throttle RATE|off
 *
 * The nodes given come from --cluster (the gateways' cluster.file), else
 * --nodes, else CAIRN_CLUSTER_FILE, else CAIRN_STORAGE_NODES (the gateway's
 * storage.nodes setting, same format). Every command talks to the nodes of
 * the newest cluster map held on the nodes given (adm_cluster_map(); one
 * node of the cluster is enough after `node add`), to the nodes given as
 * they are only when none holds a map; stats, scrub, compact and ping
 * given --nodes act on exactly those nodes. status prints one line per node
 * (up/down, ring ownership, records, disk use, queue lengths); stats prints
 * every counter; scrub and compact run on each node in turn; repair is the
 * anti-entropy pass of repair.h, by range digests unless --full (--dry-run
 * only counts differences; --json prints its summary as one JSON object). The
 * exit status is 0 when every node answered OK (repair: nothing failed;
 * repair --dry-run: no difference), 1 otherwise, 2 on bad usage.
 * Toward nodes with auth = curve, the tool is a CURVE client: --auth and the
 * key files default to $CAIRN_STORAGE_AUTH, $CAIRN_STORAGE_CURVE_SECRET_KEY_FILE
 * and $CAIRN_STORAGE_CURVE_SERVER_KEY_FILE (the gateway's storage.* names).
 * keygen writes a new key pair (keygen.h). key manages the access keys kept
 * in the cluster (keys.h); create needs the master key (--master-key-file,
 * else $CAIRN_MASTER_KEY_FILE); --account names an account of the cluster
 * (accounts.h), without it the key is its own account named NAME. allow and
 * deny change a key's restrictions (keys.h) and need the master key too.
 * account and bucket are the operator's accounts and buckets (accounts.h,
 * buckets.h). node changes the cluster map kept on the nodes (node.h,
 * docs/cluster.md); rebalance shows and throttles the data moving after a
 * change (rebalance.h).
 * status also asks each gateway given with --gateway (or $CAIRN_GATEWAYS,
 * comma-separated) for GET /_cairn/status, signed with an admin key
 * (--access-key/--secret-key, else $CAIRN_ADMIN_ACCESS_KEY/_SECRET_KEY, else
 * $AWS_ACCESS_KEY_ID/$AWS_SECRET_ACCESS_KEY), and prints it; with
 * --gateway and no nodes it asks only the gateways. --json makes every
 * command print one JSON document on stdout (progress lines go to stderr). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "accounts.h"
#include "buckets.h"
#include "gateway.h"
#include "json.h"
#include "key_record.h"
#include "keygen.h"
#include "keys.h"
#include "lifecycle.h"
#include "rebalance.h"
#include "node.h"
#include "repair.h"

#include "cn/alloc.h"
#include "cn/build_info.h"
#include "cn/cluster.h"
#include "cn/curve_key.h"
#include "cn/ring.h"
#include "cn/time.h"
#include "msg/client.h"

struct adm_opts {
    const char *nodes;
    const char *cluster_file;
    int timeout_ms;
    const char *cmd;
    const char *sub;     /* lifecycle's subcommand */
    uint32_t replicas;   /* 0: min(3, nodes) */
    uint32_t vnodes;
    int dry_run;
    int verbose;
    int full;                /* repair: the full pass instead of digests */
    uint32_t fanout, leaf_keys;
    const char *auth, *secret_key_file, *server_key_file; /* NULL: environment */
    int json;
    const char *arg;                 /* keygen's OUT_PREFIX, key's NAME or AKID */
    const char *account;             /* key create --account */
    const char *master_key_file;     /* key create, allow, deny */
    const char *bucket;              /* key allow|deny --bucket */
    unsigned rights;                 /* key allow|deny --read --write --owner */
    int create_bucket;               /* key allow|deny --create-bucket */
    int force;                       /* account delete --force, node remove --force */
    int region_set;                  /* --region given (bucket create) */
    char *node_args[8];              /* node: SUB and its words */
    uint32_t n_node_args;
    int wait;                        /* node decommission/replace --wait */
    int repair;                      /* --wait --repair: cairn-admin's own repair passes */
    int worker_timeout_s;            /* --worker-timeout: how long --wait waits for a worker */
    const char *gateways[16];
    uint32_t n_gateways;
    struct adm_gateway_key key;
    struct msg_curve_client curve;
    const struct cn_ring *ring;
};

static void adm_usage(FILE *out)
{
    fprintf(out, "usage: cairn-admin [--cluster FILE | --nodes EP,EP,...] [--timeout MS]\n"
                 "                   [--replicas N] [--vnodes V] [--dry-run] [-v]\n"
                 "                   [--full] [--fanout F] [--leaf-keys K]\n"
                 "                   [--auth none|curve] [--curve-secret-key-file F]\n"
                 "                   [--curve-server-key-file F] [--version]\n"
                 "                   [--gateway URL]... [--access-key K] [--secret-key S]\n"
                 "                   [--region R] [--json]\n"
                 "                   status|stats|scrub|compact|ping|repair|lifecycle status\n"
                 "                   |collector status\n"
                 "       cairn-admin [--json] keygen OUT_PREFIX   (writes OUT_PREFIX.key, "
                 "OUT_PREFIX.pub)\n"
                 "       cairn-admin [node options] [--json] [--master-key-file F]\n"
                 "                   key create NAME [--account A] | key list | key delete AKID\n"
                 "                 | key allow|deny AKID [--bucket B [--read] [--write] [--owner]]"
                 " [--create-bucket]\n"
                 "       cairn-admin [node options] [--json] account create NAME | account list\n"
                 "                 | account delete ID|NAME [--force]\n"
                 "       cairn-admin [node options] [--json] bucket list | bucket info B\n"
                 "                 | bucket create B --account A [--region R] | bucket delete B\n"
                 "       cairn-admin --cluster FILE [node options] [--json]\n"
                 "                   node add ID ADDR [zone=Z] [weight=W] | node status\n"
                 "                   | node decommission ID [--wait [--repair] "
                 "[--worker-timeout S]]\n"
                 "                   | node remove ID [--force]\n"
                 "                   | node replace OLD NEW ADDR [--wait [--repair] "
                 "[--worker-timeout S]]\n"
                 "       cairn-admin [node options] [--json]\n"
                 "                   rebalance status | rebalance throttle RATE (50M; 0: no "
                 "limit)|off\n"
                 "  status asks the gateways (--gateway, or $CAIRN_GATEWAYS) for their "
                 "/_cairn/status with an\n  admin key (--access-key/--secret-key, else "
                 "$CAIRN_ADMIN_ACCESS_KEY/$CAIRN_ADMIN_SECRET_KEY,\n  else "
                 "$AWS_ACCESS_KEY_ID/$AWS_SECRET_ACCESS_KEY); --json: one JSON document\n"
                 "  nodes default to $CAIRN_CLUSTER_FILE, then $CAIRN_STORAGE_NODES; commands "
                 "talk to the nodes\n  of the newest cluster map those nodes hold (stats, "
                 "scrub, compact, ping with --nodes:\n  to exactly those); requests wait up "
                 "to --timeout\n  (default 5000 ms; 1 h for scrub and compact); repair "
                 "re-syncs every key's N replicas\n  (--replicas, default min(3, nodes); "
                 "--vnodes, default 168: as the gateways' settings)\n  by range digests "
                 "(DIGEST, --fanout 64, --leaf-keys 4) or, with --full, by listing every key\n  --auth and the key files "
                 "default to $CAIRN_STORAGE_AUTH, $CAIRN_STORAGE_CURVE_SECRET_KEY_FILE,\n"
                 "  $CAIRN_STORAGE_CURVE_SERVER_KEY_FILE (docs/security.md)\n");
}

static uint64_t adm_stat(const struct msg *m, const char *name)
{
    for (uint32_t i = 0; i < m->n_stats; i++)
        if (m->stats[i].name.len == strlen(name) &&
            memcmp(m->stats[i].name.ptr, name, m->stats[i].name.len) == 0)
            return m->stats[i].value;
    return 0;
}

/* One node's answer as a JSON object (--json). */
static void adm_json_node(const char *ep, const struct msg *m, const char *error, double ms,
                          const struct adm_opts *o, uint32_t index)
{
    printf("{\"address\": ");
    adm_json_cstr(ep);
    if (m == NULL || m->st != MSG_ST_OK) {
        printf(", \"ok\": false, \"up\": %s, \"error\": ", m != NULL ? "true" : "false");
        if (m != NULL) {
            char e[CN_ERR_LEN + 32];
            snprintf(e, sizeof(e), "%s: %.*s", msg_status_str(m->st), (int)m->err.len,
                     (const char *)m->err.ptr);
            adm_json_cstr(e);
        } else {
            adm_json_cstr(error);
        }
        putchar('}');
        return;
    }
    printf(", \"ok\": true, \"up\": true, \"rtt_ms\": %.3f", ms);
    if (m->node.len > 0) {
        printf(", \"node\": ");
        adm_json_str((const char *)m->node.ptr, m->node.len);
    }
    if (strcmp(o->cmd, "status") == 0)
        printf(", \"ring_share\": %.6f", cn_ring_ownership(o->ring, index));
    printf(", \"stats\": {");
    for (uint32_t i = 0; i < m->n_stats; i++) {
        printf("%s", i > 0 ? ", " : "");
        adm_json_str((const char *)m->stats[i].name.ptr, m->stats[i].name.len);
        printf(": %llu", (unsigned long long)m->stats[i].value);
    }
    printf("}, \"corrupt\": [");
    for (uint32_t i = 0; i < m->n_ents; i++) {
        printf("%s{\"key\": ", i > 0 ? ", " : "");
        adm_json_str((const char *)m->ents[i].key.ptr, m->ents[i].key.len);
        printf(", \"ver\": %llu}", (unsigned long long)m->ents[i].ver);
    }
    printf("]}");
}

static void adm_print_stats(const struct msg *m)
{
    for (uint32_t i = 0; i < m->n_stats; i++)
        printf("  %.*s = %llu\n", (int)m->stats[i].name.len, (const char *)m->stats[i].name.ptr,
               (unsigned long long)m->stats[i].value);
}

/* Runs the command against one node; prints its lines; returns 0 when OK. */
static int adm_run_node(void *zctx, const char *ep, uint32_t index, const struct adm_opts *o)
{
    char err[CN_ERR_LEN];
    struct msg req;
    struct msg_reply rep;
    enum msg_op op = MSG_OP_STATS;
    if (strcmp(o->cmd, "scrub") == 0)
        op = MSG_OP_SCRUB;
    else if (strcmp(o->cmd, "compact") == 0)
        op = MSG_OP_COMPACT;
    else if (strcmp(o->cmd, "ping") == 0)
        op = MSG_OP_PING;
    struct msg_client *c = msg_client_new_curve(zctx, ep, &o->curve, err);
    if (c == NULL) {
        if (o->json)
            adm_json_node(ep, NULL, err, 0, o, index);
        else
            printf("%-28s down (%s)\n", ep, err);
        return 1;
    }
    msg_init_request(&req, op, cn_time_mono_us());
    uint64_t t0 = cn_time_mono_us();
    int rc = msg_client_call(c, &req, &rep, o->timeout_ms, err);
    double ms = (double)(cn_time_mono_us() - t0) / 1000.0;
    if (rc != CN_OK) {
        if (o->json)
            adm_json_node(ep, NULL, err, 0, o, index);
        else
            printf("%-28s down (%s)\n", ep, err);
        msg_client_free(c);
        return 1;
    }
    int ok = rep.m.st == MSG_ST_OK;
    const struct msg *m = &rep.m;
    if (o->json) {
        adm_json_node(ep, m, NULL, ms, o, index);
    } else if (!ok) {
        printf("%-28s error %s: %.*s\n", ep, msg_status_str(m->st), (int)m->err.len,
               (const char *)m->err.ptr);
    } else if (strcmp(o->cmd, "status") == 0) {
        printf("%-28s up   node=%.*s ring=%.1f%% records=%llu tombstones=%llu "
               "live_bytes=%llu dead_bytes=%llu disk_bytes=%llu queue=%llu inflight=%llu "
               "rtt=%.2fms\n",
               ep, (int)m->node.len, (const char *)m->node.ptr,
               100.0 * cn_ring_ownership(o->ring, index),
               (unsigned long long)adm_stat(m, "records"),
               (unsigned long long)adm_stat(m, "tombstones"),
               (unsigned long long)adm_stat(m, "bytes_live"),
               (unsigned long long)adm_stat(m, "bytes_dead"),
               (unsigned long long)adm_stat(m, "bytes_total"),
               (unsigned long long)adm_stat(m, "queue_depth"),
               (unsigned long long)adm_stat(m, "inflight"), ms);
    } else {
        printf("%-28s ok (%.1f ms)\n", ep, ms);
        adm_print_stats(m);
        for (uint32_t i = 0; i < m->n_ents; i++)
            printf("  corrupt: %.*s (ver %llu)\n", (int)m->ents[i].key.len,
                   (const char *)m->ents[i].key.ptr, (unsigned long long)m->ents[i].ver);
    }
    msg_reply_release(&rep);
    msg_client_free(c);
    return ok ? 0 : 1;
}

/* The gateways from $CAIRN_GATEWAYS (when none was given) and the admin
 * key from the environment (when not given). */
static void adm_parse_gateways(struct adm_opts *o)
{
    static char list[4096];
    const char *env = getenv("CAIRN_GATEWAYS");
    if (o->n_gateways == 0 && env != NULL && strlen(env) < sizeof(list)) {
        snprintf(list, sizeof(list), "%s", env);
        for (char *save = NULL, *t = strtok_r(list, ",", &save);
             t != NULL && o->n_gateways < CN_ARRAY_LEN(o->gateways);
             t = strtok_r(NULL, ",", &save))
            o->gateways[o->n_gateways++] = t;
    }
    const char *ak = getenv("CAIRN_ADMIN_ACCESS_KEY"), *sk = getenv("CAIRN_ADMIN_SECRET_KEY");
    if (o->key.access_key == NULL)
        o->key.access_key = ak != NULL ? ak : getenv("AWS_ACCESS_KEY_ID");
    if (o->key.secret_key == NULL)
        o->key.secret_key = sk != NULL ? sk : getenv("AWS_SECRET_ACCESS_KEY");
    if (o->key.region == NULL)
        o->key.region = getenv("AWS_REGION");
    if (o->key.region == NULL)
        o->key.region = getenv("AWS_DEFAULT_REGION");
    if (o->key.region == NULL)
        o->key.region = "us-east-1";
}

/* The commands over records kept in the cluster: CMD SUB [ARG]. */
static int adm_is_managed(const char *cmd)
{
    return strcmp(cmd, "key") == 0 || strcmp(cmd, "account") == 0 || strcmp(cmd, "bucket") == 0;
}

/* Whether sub (with or without an argument) is one of cmd's subcommands. */
static int adm_managed_ok(const char *cmd, const char *sub, const char *arg)
{
    static const struct {
        const char *cmd, *sub;
        int arg;
    } rows[] = {
        {"key", "create", 1},    {"key", "list", 0},      {"key", "delete", 1},
        {"key", "allow", 1},     {"key", "deny", 1},      {"account", "create", 1},
        {"account", "list", 0},  {"account", "delete", 1}, {"bucket", "list", 0},
        {"bucket", "info", 1},   {"bucket", "create", 1}, {"bucket", "delete", 1},
    };
    for (size_t i = 0; sub != NULL && i < CN_ARRAY_LEN(rows); i++)
        if (strcmp(cmd, rows[i].cmd) == 0 && strcmp(sub, rows[i].sub) == 0)
            return rows[i].arg == (arg != NULL);
    return 0;
}

static int adm_parse(int argc, char **argv, struct adm_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->timeout_ms = -2;
    o->vnodes = 168;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--nodes") == 0 && i + 1 < argc)
            o->nodes = argv[++i];
        else if (strcmp(argv[i], "--cluster") == 0 && i + 1 < argc)
            o->cluster_file = argv[++i];
        else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
            o->timeout_ms = atoi(argv[++i]);
        else if (strcmp(argv[i], "--replicas") == 0 && i + 1 < argc)
            o->replicas = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--vnodes") == 0 && i + 1 < argc)
            o->vnodes = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--auth") == 0 && i + 1 < argc)
            o->auth = argv[++i];
        else if (strcmp(argv[i], "--curve-secret-key-file") == 0 && i + 1 < argc)
            o->secret_key_file = argv[++i];
        else if (strcmp(argv[i], "--curve-server-key-file") == 0 && i + 1 < argc)
            o->server_key_file = argv[++i];
        else if (strcmp(argv[i], "--gateway") == 0 && i + 1 < argc &&
                 o->n_gateways < CN_ARRAY_LEN(o->gateways))
            o->gateways[o->n_gateways++] = argv[++i];
        else if (strcmp(argv[i], "--access-key") == 0 && i + 1 < argc)
            o->key.access_key = argv[++i];
        else if (strcmp(argv[i], "--secret-key") == 0 && i + 1 < argc)
            o->key.secret_key = argv[++i];
        else if (strcmp(argv[i], "--region") == 0 && i + 1 < argc) {
            o->key.region = argv[++i];
            o->region_set = 1;
        } else if (strcmp(argv[i], "--bucket") == 0 && i + 1 < argc)
            o->bucket = argv[++i];
        else if (strcmp(argv[i], "--read") == 0)
            o->rights |= GW_KEY_RIGHT_READ;
        else if (strcmp(argv[i], "--write") == 0)
            o->rights |= GW_KEY_RIGHT_WRITE;
        else if (strcmp(argv[i], "--owner") == 0)
            o->rights |= GW_KEY_RIGHT_OWNER;
        else if (strcmp(argv[i], "--create-bucket") == 0)
            o->create_bucket = 1;
        else if (strcmp(argv[i], "--force") == 0)
            o->force = 1;
        else if (strcmp(argv[i], "--json") == 0)
            o->json = 1;
        else if (strcmp(argv[i], "--account") == 0 && i + 1 < argc)
            o->account = argv[++i];
        else if (strcmp(argv[i], "--master-key-file") == 0 && i + 1 < argc)
            o->master_key_file = argv[++i];
        else if (strcmp(argv[i], "--dry-run") == 0)
            o->dry_run = 1;
        else if (strcmp(argv[i], "-v") == 0)
            o->verbose = 1;
        else if (strcmp(argv[i], "--full") == 0)
            o->full = 1;
        else if (strcmp(argv[i], "--wait") == 0)
            o->wait = 1;
        else if (strcmp(argv[i], "--repair") == 0)
            o->repair = 1;
        else if (strcmp(argv[i], "--worker-timeout") == 0 && i + 1 < argc) {
            if ((o->worker_timeout_s = atoi(argv[++i])) <= 0)
                return -1;
        }
        else if (strcmp(argv[i], "--fanout") == 0 && i + 1 < argc)
            o->fanout = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--leaf-keys") == 0 && i + 1 < argc)
            o->leaf_keys = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
        else if (o->cmd == NULL && argv[i][0] != '-')
            o->cmd = argv[i];
        else if (o->cmd != NULL &&
                 (strcmp(o->cmd, "node") == 0 || strcmp(o->cmd, "rebalance") == 0) &&
                 argv[i][0] != '-' &&
                 o->n_node_args < CN_ARRAY_LEN(o->node_args))
            o->node_args[o->n_node_args++] = argv[i];
        else if (o->cmd != NULL && strcmp(o->cmd, "keygen") == 0 && o->arg == NULL)
            o->arg = argv[i];
        else if (o->cmd != NULL &&
                 (strcmp(o->cmd, "lifecycle") == 0 || strcmp(o->cmd, "collector") == 0) &&
                 o->sub == NULL && argv[i][0] != '-')
            o->sub = argv[i];
        else if (o->cmd != NULL && adm_is_managed(o->cmd) && o->sub == NULL &&
                 argv[i][0] != '-')
            o->sub = argv[i];
        else if (o->cmd != NULL && adm_is_managed(o->cmd) && o->arg == NULL &&
                 argv[i][0] != '-')
            o->arg = argv[i];
        else
            return -1;
    }
    if (o->cmd != NULL && strcmp(o->cmd, "keygen") == 0)
        return o->arg != NULL ? 0 : -1;
    adm_parse_gateways(o);
    if (o->cluster_file == NULL && o->nodes == NULL)
        o->cluster_file = getenv("CAIRN_CLUSTER_FILE");
    if (o->cluster_file != NULL && o->cluster_file[0] == '\0')
        o->cluster_file = NULL;
    if (o->cluster_file == NULL && o->nodes == NULL)
        o->nodes = getenv("CAIRN_STORAGE_NODES");
    static const char *const cmds[] = {"status", "stats", "scrub", "compact", "ping", "repair",
                                       "lifecycle", "key", "account", "bucket", "collector",
                                       "node", "rebalance"};
    int known = 0;
    for (size_t i = 0; o->cmd != NULL && i < CN_ARRAY_LEN(cmds); i++)
        known |= strcmp(o->cmd, cmds[i]) == 0;
    if (known && (strcmp(o->cmd, "lifecycle") == 0 || strcmp(o->cmd, "collector") == 0) &&
        (o->sub == NULL || strcmp(o->sub, "status")))
        known = 0;
    if (known && adm_is_managed(o->cmd)) {
        if (!adm_managed_ok(o->cmd, o->sub, o->arg))
            known = 0;
        if (o->master_key_file == NULL)
            o->master_key_file = getenv("CAIRN_MASTER_KEY_FILE");
    }
    if (known && strcmp(o->cmd, "node") == 0 && (o->n_node_args == 0 || o->cluster_file == NULL))
        known = 0;   /* the map's bootstrap is a cluster file: ids name its nodes */
    if (known && strcmp(o->cmd, "rebalance") == 0 &&
        (o->n_node_args == 0 ||
         !((strcmp(o->node_args[0], "status") == 0 && o->n_node_args == 1) ||
           (strcmp(o->node_args[0], "throttle") == 0 && o->n_node_args == 2))))
        known = 0;
    int no_nodes = o->cluster_file == NULL && (o->nodes == NULL || o->nodes[0] == '\0');
    if (!known || (no_nodes && !(strcmp(o->cmd, "status") == 0 && o->n_gateways > 0)) ||
        o->vnodes == 0 || o->fanout > 256)
        return -1;
    if (o->timeout_ms == -2)
        o->timeout_ms = (strcmp(o->cmd, "scrub") == 0 || strcmp(o->cmd, "compact") == 0)
                            ? 3600000 : 5000;
    return 0;
}

/* repair: the anti-entropy pass; prints its counts. With --json its
 * progress lines (repair.c prints them on stdout) go to stderr and stdout
 * gets the counts as one JSON object. */
static int adm_repair(const struct cn_cluster *cl, const struct adm_opts *o)
{
    uint32_t nodes = cn_cluster_active_nodes(cl);
    struct adm_repair_opts ro = {
        .replicas = o->replicas > 0 ? o->replicas : CN_MIN(3u, nodes),
        .vnodes = o->vnodes, .timeout_ms = o->timeout_ms, .dry_run = o->dry_run,
        .verbose = o->verbose, .curve = &o->curve, .full = o->full, .fanout = o->fanout,
        .leaf_keys = o->leaf_keys,
    };
    if (ro.replicas > nodes) {
        fprintf(stderr, "cairn-admin: --replicas %u is above the %u active nodes\n", ro.replicas,
                nodes);
        return 2;
    }
    struct adm_repair_counts n;
    char err[CN_ERR_LEN];
    uint64_t t0 = cn_time_mono_us();
    int saved = -1;
    if (o->json) {
        fflush(stdout);
        saved = dup(STDOUT_FILENO);
        dup2(STDERR_FILENO, STDOUT_FILENO);
    }
    int rc = adm_repair_run(cl, &ro, &n, err);
    double secs = (double)(cn_time_mono_us() - t0) / 1e6;
    if (saved >= 0) {
        fflush(stdout);
        dup2(saved, STDOUT_FILENO);
        close(saved);
    }
    if (o->json) {
        printf("{\"command\": \"repair\", \"mode\": \"%s\", \"dry_run\": %s, \"ok\": %s, "
               "\"keys\": %llu, \"differences\": %llu, \"repaired\": %llu, \"failed\": %llu, "
               "\"bytes\": %llu, \"bytes_copied\": %llu, \"keys_listed\": %llu, "
               "\"requests\": %llu, \"bytes_read\": %llu, \"ranges_compared\": %llu, "
               "\"ranges_differing\": %llu, \"leaves\": %llu, \"seconds\": %.3f, \"error\": ",
               n.digest ? "digest" : "full", o->dry_run ? "true" : "false",
               rc == CN_OK ? "true" : "false", (unsigned long long)n.keys,
               (unsigned long long)n.differences, (unsigned long long)n.repaired,
               (unsigned long long)n.failed, (unsigned long long)n.bytes,
               (unsigned long long)n.bytes, (unsigned long long)n.listed,
               (unsigned long long)n.requests, (unsigned long long)n.bytes_read,
               (unsigned long long)n.ranges_compared, (unsigned long long)n.ranges_differing,
               (unsigned long long)n.leaves, secs);
        if (rc != CN_OK)
            adm_json_cstr(err);
        else
            printf("null");
        printf("}\n");
    } else {
        printf("repair%s (%s): %llu keys, %llu differences, %llu repaired, %llu failed, %llu "
               "bytes copied, %llu keys listed, %llu ranges compared, %llu differing, %llu bytes "
               "read, %.2fs%s%s\n", o->dry_run ? " (dry run)" : "", n.digest ? "digest" : "full",
               (unsigned long long)n.keys, (unsigned long long)n.differences,
               (unsigned long long)n.repaired, (unsigned long long)n.failed,
               (unsigned long long)n.bytes, (unsigned long long)n.listed,
               (unsigned long long)n.ranges_compared, (unsigned long long)n.ranges_differing,
               (unsigned long long)n.bytes_read, secs, rc != CN_OK ? ": stopped: " : "",
               rc != CN_OK ? err : "");
    }
    if (rc != CN_OK || n.failed > 0)
        return 1;
    return o->dry_run && n.differences > 0 ? 1 : 0;
}

/* keygen: writes the pair; prints the public key (--json: with the files). */
static int adm_keygen(const struct adm_opts *o)
{
    char err[CN_ERR_LEN];
    int saved = -1;
    if (o->json) { /* adm_keygen_run prints the public key alone: keep it off stdout */
        fflush(stdout);
        saved = dup(STDOUT_FILENO);
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        dup2(null >= 0 ? null : STDERR_FILENO, STDOUT_FILENO);
        if (null >= 0)
            close(null);
    }
    int rc = adm_keygen_run(o->arg, err);
    if (saved >= 0) {
        fflush(stdout);
        dup2(saved, STDOUT_FILENO);
        close(saved);
    }
    if (rc != CN_OK) {
        fprintf(stderr, "cairn-admin: keygen: %s\n", err);
        return 1;
    }
    if (o->json) {
        char path[4096 + 8];
        struct cn_curve_key pub;
        snprintf(path, sizeof(path), "%s.pub", o->arg);
        if (cn_curve_key_load(path, 0, &pub, err) != CN_OK) {
            fprintf(stderr, "cairn-admin: keygen: %s\n", err);
            return 1;
        }
        printf("{\"command\": \"keygen\", \"public_key\": ");
        adm_json_cstr(pub.z85);
        printf(", \"public_key_file\": ");
        adm_json_cstr(path);
        snprintf(path, sizeof(path), "%s.key", o->arg);
        printf(", \"secret_key_file\": ");
        adm_json_cstr(path);
        printf("}\n");
    }
    return 0;
}

/* status of the gateways: each one's GET /_cairn/status. Text: the
 * document under a header line; --json: {"url", "http_status", "status"}
 * objects. Returns 1 when one did not answer 200. */
static int adm_gateways(const struct adm_opts *o)
{
    int bad = 0;
    if (o->n_gateways > 0 && (o->key.access_key == NULL || o->key.secret_key == NULL)) {
        fprintf(stderr, "cairn-admin: status of a gateway needs an admin key: --access-key "
                "and --secret-key (or $CAIRN_ADMIN_ACCESS_KEY, $CAIRN_ADMIN_SECRET_KEY)\n");
        return 2;
    }
    for (uint32_t i = 0; i < o->n_gateways; i++) {
        char err[CN_ERR_LEN], *body = NULL;
        int status = 0;
        int rc = adm_gateway_status(o->gateways[i], &o->key, o->timeout_ms, &status, &body, err);
        int ok = rc == CN_OK && status == 200;
        bad |= !ok;
        if (o->json) {
            printf("%s\n    {\"url\": ", i > 0 ? "," : "");
            adm_json_cstr(o->gateways[i]);
            if (rc == CN_OK)
                printf(", \"http_status\": %d", status);
            if (ok) {
                size_t n = strlen(body);
                while (n > 0 && (body[n - 1] == '\n' || body[n - 1] == '\r'))
                    body[--n] = '\0';
                printf(", \"status\": %s}", body);
            } else {
                printf(", \"error\": ");
                adm_json_cstr(rc != CN_OK ? err : body);
                printf("}");
            }
        } else if (ok) {
            printf("gateway %s\n%s", o->gateways[i], body);
        } else {
            printf("gateway %s: %s%s\n", o->gateways[i], rc != CN_OK ? err : "refused: ",
                   rc != CN_OK ? "" : body);
        }
        free(body);
    }
    return bad;
}

/* The per-node commands over every node; --json wraps them in one document
 * (status: with the gateways'). */
static int adm_nodes(const struct cn_cluster *cl, const struct adm_opts *o)
{
    int bad = 0;
    if (o->json)
        printf("{\"command\": \"%s\", \"%s\": [", o->cmd,
               strcmp(o->cmd, "status") == 0 ? "gateways" : "nodes");
    if (strcmp(o->cmd, "status") == 0) {
        int g = adm_gateways(o);
        if (g == 2)
            return 2;
        bad |= g;
        if (o->json)
            printf("%s],\n  \"nodes\": [", o->n_gateways > 0 ? "\n  " : "");
    }
    void *zctx = zmq_ctx_new();
    for (uint32_t i = 0; cl != NULL && i < cn_cluster_nodes(cl); i++) {
        if (o->json)
            printf("%s\n    ", i > 0 ? "," : "");
        bad |= adm_run_node(zctx, cn_cluster_node(cl, i)->address, i, o);
    }
    zmq_ctx_term(zctx);
    if (o->json)
        printf("%s]}\n", cl != NULL && cn_cluster_nodes(cl) > 0 ? "\n  " : "");
    return bad;
}

/* cairn-admin rebalance status|throttle RATE over the cluster map in use. */
static int adm_rebalance(const struct adm_opts *o, const struct cn_cluster *map)
{
    struct adm_rebalance_opts ro = {
        .map = map, .replicas = o->replicas, .timeout_ms = o->timeout_ms, .curve = &o->curve,
        .json = o->json,
    };
    return strcmp(o->node_args[0], "status") == 0 ? adm_rebalance_status(&ro)
                                                  : adm_rebalance_throttle(&ro, o->node_args[1]);
}

/* key, account and bucket: the records kept in the cluster. */
static int adm_managed(const struct adm_opts *o, const struct adm_keys_opts *ko)
{
    if (strcmp(o->cmd, "account") == 0) {
        if (strcmp(o->sub, "create") == 0)
            return adm_accounts_create(ko, o->arg);
        if (strcmp(o->sub, "list") == 0)
            return adm_accounts_list(ko);
        return adm_accounts_delete(ko, o->arg, o->force);
    }
    if (strcmp(o->cmd, "bucket") == 0) {
        if (strcmp(o->sub, "list") == 0)
            return adm_buckets_list(ko);
        if (strcmp(o->sub, "info") == 0)
            return adm_buckets_info(ko, o->arg);
        if (strcmp(o->sub, "create") == 0)
            return adm_buckets_create(ko, o->arg, o->account, o->key.region);
        return adm_buckets_delete(ko, o->arg);
    }
    if (strcmp(o->sub, "create") == 0)
        return adm_keys_create(ko, o->arg, o->account);
    if (strcmp(o->sub, "list") == 0)
        return adm_keys_list(ko);
    if (strcmp(o->sub, "delete") == 0)
        return adm_keys_delete(ko, o->arg);
    struct adm_keys_limit_change ch = {
        .allow = strcmp(o->sub, "allow") == 0, .bucket = o->bucket, .rights = o->rights,
        .create_bucket = o->create_bucket,
    };
    return adm_keys_limit(ko, o->arg, &ch);
}

/* key, account and bucket over the cluster map in use (adm_cluster_map):
 * records are written to their replicas in the map's ring (as the gateways
 * place them) and listings ask every node of the map, leaving ones too. */
static int adm_managed_on_map(const struct adm_opts *o, const struct cn_cluster *map,
                              const struct cn_ring *ring)
{
    uint32_t active = cn_cluster_active_nodes(map);
    struct adm_keys_opts ko = {
        .cl = map, .ring = ring, .timeout_ms = o->timeout_ms, .curve = &o->curve,
        .json = o->json, .master_key_file = o->master_key_file,
        .replicas = o->replicas > 0 ? CN_MIN(o->replicas, active) : CN_MIN(3u, active),
    };
    return adm_managed(o, &ko);
}

/* Whether the command talks to the nodes of the cluster map in use rather
 * than to the nodes given: all but node (which finds the map itself) and,
 * with --nodes, the per-node commands (stats, scrub, compact, ping act on
 * exactly the nodes named, so one node can be scrubbed alone). */
static int adm_follows_map(const struct adm_opts *o)
{
    static const char *const per_node[] = {"stats", "scrub", "compact", "ping"};
    if (strcmp(o->cmd, "node") == 0)
        return 0;
    for (size_t i = 0; o->cluster_file == NULL && i < CN_ARRAY_LEN(per_node); i++)
        if (strcmp(o->cmd, per_node[i]) == 0)
            return 0;
    return 1;
}

/* The nodes every command but node and keygen talks to: the newest
 * cluster map held on the nodes given (--cluster, --nodes or their
 * environment defaults), found by adm_node_map() (node.h) exactly as
 * `node status` finds it, so that after `node add` one node of the cluster
 * given is enough and no file needs editing. The given nodes are used as
 * they are only when none holds a map (said on stderr). A copy the caller
 * frees with cn_cluster_free(); NULL when no map can be trusted (said). */
static struct cn_cluster *adm_cluster_map(const struct adm_opts *o,
                                          const struct cn_cluster *given)
{
    struct adm_node_opts no = {
        .file = given, .replicas = o->replicas, .vnodes = o->vnodes,
        .timeout_ms = o->timeout_ms < 5000 ? o->timeout_ms : 5000, .curve = &o->curve,
        .given = o->cluster_file != NULL ? "--cluster file" : "--nodes list",
        .quiet_no_map = o->cluster_file != NULL,   /* the bootstrap names the cluster */
    };
    return adm_node_map(&no);
}

int main(int argc, char **argv)
{
    struct adm_opts o;
    char err[CN_ERR_LEN];
    if (cn_build_info_version_flag("cairn-admin", argc, argv))
        return 0;
    int p = adm_parse(argc, argv, &o);
    if (p != 0) {
        adm_usage(p > 0 ? stdout : stderr);
        return p > 0 ? 0 : 2;
    }
    if (strcmp(o.cmd, "keygen") == 0)
        return adm_keygen(&o);
    if (msg_curve_client_from_env(&o.curve, o.auth, o.secret_key_file, o.server_key_file,
                                  err) != CN_OK) {
        fprintf(stderr, "cairn-admin: %s\n", err);
        return 2;
    }
    struct cn_cluster *cl = NULL;
    struct cn_ring *ring = NULL;
    int rc = CN_OK;
    if (o.cluster_file != NULL)
        rc = cn_cluster_load(o.cluster_file, &cl, err);
    else if (o.nodes != NULL && o.nodes[0] != '\0')
        rc = cn_cluster_from_endpoints(o.nodes, &cl, err);
    if (rc == CN_OK && cl != NULL && (ring = cn_cluster_ring(cl, o.vnodes, err)) == NULL)
        rc = CN_INVAL;
    if (rc != CN_OK) {
        fprintf(stderr, "cairn-admin: %s\n", err);
        cn_cluster_free(cl);
        return 2;
    }
    if (cl != NULL && adm_follows_map(&o)) {
        struct cn_cluster *map = adm_cluster_map(&o, cl);
        cn_ring_free(ring);
        ring = NULL;
        if (map != NULL && (ring = cn_cluster_ring(map, o.vnodes, err)) == NULL)
            fprintf(stderr, "cairn-admin: the cluster map's ring: %s\n", err);
        cn_cluster_free(cl);
        cl = map;
        if (ring == NULL) {
            cn_cluster_free(cl);
            return 1;
        }
    }
    o.ring = ring;
    int bad = 0;
    if (strcmp(o.cmd, "repair") == 0) {
        bad = adm_repair(cl, &o);
    } else if (adm_is_managed(o.cmd)) {
        bad = adm_managed_on_map(&o, cl, ring);
    } else if (strcmp(o.cmd, "node") == 0) {
        struct adm_node_opts no = {
            .file = cl, .replicas = o.replicas, .vnodes = o.vnodes, .timeout_ms = o.timeout_ms,
            .curve = &o.curve, .json = o.json, .verbose = o.verbose, .wait = o.wait,
            .repair = o.repair, .worker_timeout_s = o.worker_timeout_s, .force = o.force,
        };
        bad = adm_node_run(&no, o.node_args, o.n_node_args);
    } else if (strcmp(o.cmd, "rebalance") == 0) {
        bad = adm_rebalance(&o, cl);
    } else if (strcmp(o.cmd, "lifecycle") == 0) {
        bad = adm_lifecycle_status(cl, o.timeout_ms, &o.curve, o.json);
    } else if (strcmp(o.cmd, "collector") == 0) {
        bad = adm_system_record_status(cl, o.timeout_ms, &o.curve, o.json, "s/collector",
                                       "collector");
    } else {
        bad = adm_nodes(cl, &o);
    }
    cn_ring_free(ring);
    cn_cluster_free(cl);
    return bad;
}
