/* cairn-admin: operator commands against storage nodes over the protocol.
 *
 *   cairn-admin [--nodes EP,EP,...] [--timeout MS] status|stats|scrub|compact|ping
 *
 * The node list comes from --nodes, else from CAIRN_STORAGE_NODES (the
 * gateway's storage.nodes setting, same format). status prints one line per
 * node (up/down, records, live and dead bytes); stats prints every counter;
 * scrub and compact run on each node in turn and print what they did. The
 * exit status is 0 when every node answered OK, 1 otherwise, 2 on bad usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/time.h"
#include "msg/client.h"

struct adm_opts {
    const char *nodes;
    int timeout_ms;
    const char *cmd;
};

static void adm_usage(FILE *out)
{
    fprintf(out, "usage: cairn-admin [--nodes EP,EP,...] [--timeout MS] "
                 "status|stats|scrub|compact|ping\n"
                 "  nodes default to $CAIRN_STORAGE_NODES; scrub/compact wait up to "
                 "--timeout (default 5000 ms, 1 h for scrub and compact)\n");
}

static uint64_t adm_stat(const struct msg *m, const char *name)
{
    for (uint32_t i = 0; i < m->n_stats; i++)
        if (m->stats[i].name.len == strlen(name) &&
            memcmp(m->stats[i].name.ptr, name, m->stats[i].name.len) == 0)
            return m->stats[i].value;
    return 0;
}

static void adm_print_stats(const struct msg *m)
{
    for (uint32_t i = 0; i < m->n_stats; i++)
        printf("  %.*s = %llu\n", (int)m->stats[i].name.len, (const char *)m->stats[i].name.ptr,
               (unsigned long long)m->stats[i].value);
}

/* Runs the command against one node; prints its lines; returns 0 when OK. */
static int adm_run_node(void *zctx, const char *ep, const struct adm_opts *o)
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
    struct msg_client *c = msg_client_new(zctx, ep, err);
    if (c == NULL) {
        printf("%-28s down (%s)\n", ep, err);
        return 1;
    }
    msg_init_request(&req, op, cn_time_mono_us());
    uint64_t t0 = cn_time_mono_us();
    int rc = msg_client_call(c, &req, &rep, o->timeout_ms, err);
    double ms = (double)(cn_time_mono_us() - t0) / 1000.0;
    if (rc != CN_OK) {
        printf("%-28s down (%s)\n", ep, err);
        msg_client_free(c);
        return 1;
    }
    int ok = rep.m.st == MSG_ST_OK;
    const struct msg *m = &rep.m;
    if (!ok) {
        printf("%-28s error %s: %.*s\n", ep, msg_status_str(m->st), (int)m->err.len,
               (const char *)m->err.ptr);
    } else if (strcmp(o->cmd, "status") == 0) {
        printf("%-28s up   node=%.*s records=%llu live_bytes=%llu dead_bytes=%llu "
               "queue=%llu rtt=%.2fms\n",
               ep, (int)m->node.len, (const char *)m->node.ptr,
               (unsigned long long)adm_stat(m, "records"),
               (unsigned long long)adm_stat(m, "bytes_live"),
               (unsigned long long)adm_stat(m, "bytes_dead"),
               (unsigned long long)adm_stat(m, "queue_depth"), ms);
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

static int adm_parse(int argc, char **argv, struct adm_opts *o)
{
    o->nodes = getenv("CAIRN_STORAGE_NODES");
    o->timeout_ms = -2;
    o->cmd = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--nodes") == 0 && i + 1 < argc)
            o->nodes = argv[++i];
        else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
            o->timeout_ms = atoi(argv[++i]);
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
        else if (o->cmd == NULL && argv[i][0] != '-')
            o->cmd = argv[i];
        else
            return -1;
    }
    static const char *const cmds[] = {"status", "stats", "scrub", "compact", "ping"};
    int known = 0;
    for (size_t i = 0; o->cmd != NULL && i < CN_ARRAY_LEN(cmds); i++)
        known |= strcmp(o->cmd, cmds[i]) == 0;
    if (!known || o->nodes == NULL || o->nodes[0] == '\0')
        return -1;
    if (o->timeout_ms == -2)
        o->timeout_ms = (strcmp(o->cmd, "scrub") == 0 || strcmp(o->cmd, "compact") == 0)
                            ? 3600000 : 5000;
    return 0;
}

int main(int argc, char **argv)
{
    struct adm_opts o;
    int p = adm_parse(argc, argv, &o);
    if (p != 0) {
        adm_usage(p > 0 ? stdout : stderr);
        return p > 0 ? 0 : 2;
    }
    void *zctx = zmq_ctx_new();
    char *list = cn_strdup(o.nodes), *save = NULL;
    int bad = 0;
    for (char *ep = strtok_r(list, ",", &save); ep != NULL; ep = strtok_r(NULL, ",", &save))
        bad |= adm_run_node(zctx, ep, &o);
    cn_free(list);
    zmq_ctx_term(zctx);
    return bad ? 1 : 0;
}
