/* Cluster description: a line parser for the cluster file, the endpoint-list
 * form, and the ring built from either. */
#include "cn/cluster.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn/alloc.h"

struct cn_cluster {
    struct cn_cluster_node nodes[CN_CLUSTER_MAX_NODES];
    char *addresses[CN_CLUSTER_MAX_NODES];
    uint32_t n_nodes;
    int has_zones;
};

void cn_cluster_free(struct cn_cluster *c)
{
    if (c == NULL)
        return;
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        cn_free(c->nodes[i].id);
        cn_free(c->nodes[i].address);
        cn_free(c->nodes[i].zone);
    }
    cn_free(c);
}

/* Appends a node (copies the strings); checks uniqueness and the count. */
static int cn_cluster_add(struct cn_cluster *c, const char *id, const char *address,
                          uint32_t weight, const char *zone, char err[CN_ERR_LEN])
{
    if (c->n_nodes == CN_CLUSTER_MAX_NODES) {
        snprintf(err, CN_ERR_LEN, "more than %d nodes", CN_CLUSTER_MAX_NODES);
        return CN_INVAL;
    }
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        if (strcmp(c->nodes[i].id, id) == 0 || strcmp(c->nodes[i].address, address) == 0) {
            snprintf(err, CN_ERR_LEN, "node '%s' (%s) is listed twice", id, address);
            return CN_INVAL;
        }
    }
    struct cn_cluster_node *n = &c->nodes[c->n_nodes];
    n->id = cn_strdup(id);
    n->address = cn_strdup(address);
    n->weight = weight;
    n->zone = cn_strdup(zone);
    c->addresses[c->n_nodes++] = n->address;
    c->has_zones |= zone[0] != '\0';
    return CN_OK;
}

/* Splits line (NUL-terminated, modified) into at most max words. */
static int cn_cluster_words(char *line, char **w, int max)
{
    int n = 0;
    for (char *save = NULL, *t = strtok_r(line, " \t\r", &save); t != NULL;
         t = strtok_r(NULL, " \t\r", &save)) {
        if (n == max)
            return max + 1;
        w[n++] = t;
    }
    return n;
}

/* Parses "node id address [weight=N] [zone=Z]" (words already split). */
static int cn_cluster_parse_node(struct cn_cluster *c, char **w, int n, char err[CN_ERR_LEN])
{
    if (n < 3 || strcmp(w[0], "node") != 0) {
        snprintf(err, CN_ERR_LEN, "expected 'node <id> <address> [weight=N] [zone=Z]'");
        return CN_INVAL;
    }
    if (strlen(w[1]) > CN_CLUSTER_MAX_NAME || strlen(w[2]) > CN_CLUSTER_MAX_NAME) {
        snprintf(err, CN_ERR_LEN, "id or address longer than %d bytes", CN_CLUSTER_MAX_NAME);
        return CN_INVAL;
    }
    uint32_t weight = 100;
    const char *zone = "";
    for (int i = 3; i < n; i++) {
        if (strncmp(w[i], "weight=", 7) == 0) {
            char *end;
            errno = 0;
            unsigned long v = strtoul(w[i] + 7, &end, 10);
            if (errno != 0 || end == w[i] + 7 || *end != '\0' || v < 1 || v > 10000) {
                snprintf(err, CN_ERR_LEN, "weight must be 1 to 10000: '%s'", w[i] + 7);
                return CN_INVAL;
            }
            weight = (uint32_t)v;
        } else if (strncmp(w[i], "zone=", 5) == 0 && w[i][5] != '\0' &&
                   strlen(w[i]) <= CN_CLUSTER_MAX_NAME) {
            zone = w[i] + 5;
        } else {
            snprintf(err, CN_ERR_LEN, "unknown attribute '%s'", w[i]);
            return CN_INVAL;
        }
    }
    return cn_cluster_add(c, w[1], w[2], weight, zone, err);
}

int cn_cluster_parse(const char *text, size_t len, struct cn_cluster **out,
                     char err[CN_ERR_LEN])
{
    *out = NULL;
    struct cn_cluster *c = cn_calloc(1, sizeof(*c));
    size_t pos = 0;
    int lineno = 0, rc = CN_OK;
    while (pos < len && rc == CN_OK) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t ll = nl != NULL ? (size_t)(nl - (text + pos)) : len - pos;
        int has_nul = memchr(text + pos, '\0', ll) != NULL;
        char *line = cn_strndup(text + pos, ll);
        lineno++;
        pos += ll + 1;
        char *hash = strchr(line, '#');
        if (hash != NULL)
            *hash = '\0';
        char *w[8];
        char why[CN_ERR_LEN];
        int n = has_nul ? -1 : cn_cluster_words(line, w, 6);
        if (n < 0 || n > 6) {
            snprintf(err, CN_ERR_LEN, "line %d: %s", lineno,
                     n < 0 ? "NUL byte" : "too many words");
            rc = CN_INVAL;
        } else if (n > 0 && cn_cluster_parse_node(c, w, n, why) != CN_OK) {
            snprintf(err, CN_ERR_LEN, "line %d: %s", lineno, why);
            rc = CN_INVAL;
        }
        cn_free(line);
    }
    if (rc == CN_OK && c->n_nodes == 0) {
        snprintf(err, CN_ERR_LEN, "the cluster names no node");
        rc = CN_INVAL;
    }
    if (rc != CN_OK) {
        cn_cluster_free(c);
        return rc;
    }
    *out = c;
    return CN_OK;
}

int cn_cluster_load(const char *path, struct cn_cluster **out, char err[CN_ERR_LEN])
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, CN_ERR_LEN, "%s: %s", path, strerror(errno));
        return CN_IO;
    }
    char *buf = cn_malloc(1 << 20);
    size_t n = fread(buf, 1, 1 << 20, f);
    int toobig = n == (1 << 20), bad = ferror(f);
    fclose(f);
    int rc;
    char why[CN_ERR_LEN];
    if (bad || toobig) {
        snprintf(err, CN_ERR_LEN, "%s: %s", path, bad ? "read error" : "larger than 1 MiB");
        rc = CN_IO;
    } else if ((rc = cn_cluster_parse(buf, n, out, why)) != CN_OK) {
        snprintf(err, CN_ERR_LEN, "%s: %s", path, why);
    }
    cn_free(buf);
    return rc;
}

int cn_cluster_from_endpoints(const char *list, struct cn_cluster **out, char err[CN_ERR_LEN])
{
    *out = NULL;
    struct cn_cluster *c = cn_calloc(1, sizeof(*c));
    char *copy = cn_strdup(list);
    int rc = CN_OK;
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t != NULL && rc == CN_OK;
         t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ' || *t == '\t')
            t++;
        size_t l = strlen(t);
        while (l > 0 && (t[l - 1] == ' ' || t[l - 1] == '\t'))
            t[--l] = '\0';
        if (l > CN_CLUSTER_MAX_NAME) {
            snprintf(err, CN_ERR_LEN, "endpoint longer than %d bytes", CN_CLUSTER_MAX_NAME);
            rc = CN_INVAL;
        } else if (l > 0) {
            rc = cn_cluster_add(c, t, t, 100, "", err);
        }
    }
    cn_free(copy);
    if (rc == CN_OK && c->n_nodes == 0) {
        snprintf(err, CN_ERR_LEN, "the node list names no node");
        rc = CN_INVAL;
    }
    if (rc != CN_OK) {
        cn_cluster_free(c);
        return rc;
    }
    *out = c;
    return CN_OK;
}

uint32_t cn_cluster_nodes(const struct cn_cluster *c)
{
    return c->n_nodes;
}

const struct cn_cluster_node *cn_cluster_node(const struct cn_cluster *c, uint32_t i)
{
    CN_ASSERT(i < c->n_nodes);
    return &c->nodes[i];
}

int cn_cluster_find(const struct cn_cluster *c, const char *id_or_address)
{
    for (uint32_t i = 0; i < c->n_nodes; i++)
        if (strcmp(c->nodes[i].id, id_or_address) == 0 ||
            strcmp(c->nodes[i].address, id_or_address) == 0)
            return (int)i;
    return -1;
}

int cn_cluster_has_zones(const struct cn_cluster *c)
{
    return c->has_zones;
}

char *const *cn_cluster_addresses(const struct cn_cluster *c)
{
    return c->addresses;
}

struct cn_ring *cn_cluster_ring(const struct cn_cluster *c, uint32_t vnodes, char err[CN_ERR_LEN])
{
    const char *names[CN_CLUSTER_MAX_NODES], *zones[CN_CLUSTER_MAX_NODES];
    uint32_t weights[CN_CLUSTER_MAX_NODES];
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        names[i] = c->nodes[i].id;
        zones[i] = c->nodes[i].zone;
        weights[i] = c->nodes[i].weight;
    }
    return cn_ring_new_weighted(names, weights, c->has_zones ? zones : NULL, c->n_nodes, vnodes,
                                err);
}
