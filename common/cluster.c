/* Cluster description: a line parser for the cluster file (and the cluster
 * map record, the same text with a version line), the endpoint-list form,
 * the map's writer and editors, and the ring built from any of them. */
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
    uint64_t version;
    int has_version;   /* parse: a second `version` line is an error */
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
    int leaving = 0;
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
        } else if (strcmp(w[i], "state=active") == 0 || strcmp(w[i], "state=leaving") == 0) {
            leaving = w[i][6] == 'l';
        } else {
            snprintf(err, CN_ERR_LEN, "unknown attribute '%s'", w[i]);
            return CN_INVAL;
        }
    }
    int rc = cn_cluster_add(c, w[1], w[2], weight, zone, err);
    if (rc == CN_OK)
        c->nodes[c->n_nodes - 1].leaving = leaving;
    return rc;
}

/* Parses "version N" (words already split): once, N decimal below 2^63. */
static int cn_cluster_parse_version(struct cn_cluster *c, char **w, int n, char err[CN_ERR_LEN])
{
    if (n != 2) {
        snprintf(err, CN_ERR_LEN, "expected 'version <number>'");
        return CN_INVAL;
    }
    if (c->has_version) {
        snprintf(err, CN_ERR_LEN, "a second version line");
        return CN_INVAL;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(w[1], &end, 10);
    if (errno != 0 || end == w[1] || *end != '\0' || w[1][0] < '0' || w[1][0] > '9' ||
        v > (unsigned long long)INT64_MAX) {
        snprintf(err, CN_ERR_LEN, "version must be 0 to 2^63-1: '%s'", w[1]);
        return CN_INVAL;
    }
    c->version = v;
    c->has_version = 1;
    return CN_OK;
}

/* One non-empty line's words: a version or a node. */
static int cn_cluster_parse_words(struct cn_cluster *c, char **w, int n, char err[CN_ERR_LEN])
{
    if (strcmp(w[0], "version") == 0)
        return cn_cluster_parse_version(c, w, n, err);
    return cn_cluster_parse_node(c, w, n, err);
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
        } else if (n > 0 && cn_cluster_parse_words(c, w, n, why) != CN_OK) {
            snprintf(err, CN_ERR_LEN, "line %d: %s", lineno, why);
            rc = CN_INVAL;
        }
        cn_free(line);
    }
    if (rc == CN_OK && c->n_nodes == 0) {
        snprintf(err, CN_ERR_LEN, "the cluster names no node");
        rc = CN_INVAL;
    } else if (rc == CN_OK && cn_cluster_active_nodes(c) == 0) {
        snprintf(err, CN_ERR_LEN, "every node is leaving");
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
    char *buf = cn_malloc(CN_CLUSTER_MAP_MAX);
    size_t n = fread(buf, 1, CN_CLUSTER_MAP_MAX, f);
    int toobig = n == CN_CLUSTER_MAP_MAX, bad = ferror(f);
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
        weights[i] = c->nodes[i].leaving ? 0 : c->nodes[i].weight;
    }
    return cn_ring_new_weighted(names, weights, c->has_zones ? zones : NULL, c->n_nodes, vnodes,
                                err);
}

uint64_t cn_cluster_version(const struct cn_cluster *c)
{
    return c->version;
}

uint32_t cn_cluster_active_nodes(const struct cn_cluster *c)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->n_nodes; i++)
        n += !c->nodes[i].leaving;
    return n;
}

char *cn_cluster_format(const struct cn_cluster *c, size_t *len)
{
    /* per node: "node ", id, address, " weight=10000 zone=" zone, " state=leaving\n" */
    size_t cap = 64;
    for (uint32_t i = 0; i < c->n_nodes; i++)
        cap += 64 + strlen(c->nodes[i].id) + strlen(c->nodes[i].address) +
               strlen(c->nodes[i].zone);
    char *out = cn_malloc(cap);
    size_t at = (size_t)snprintf(out, cap, "version %llu\n", (unsigned long long)c->version);
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        const struct cn_cluster_node *n = &c->nodes[i];
        at += (size_t)snprintf(out + at, cap - at, "node %s %s weight=%u%s%s%s\n", n->id,
                               n->address, n->weight, n->zone[0] != '\0' ? " zone=" : "",
                               n->zone, n->leaving ? " state=leaving" : "");
    }
    CN_ASSERT(at < cap);
    *len = at;
    return out;
}

struct cn_cluster *cn_cluster_map_copy(const struct cn_cluster *c)
{
    struct cn_cluster *d = cn_calloc(1, sizeof(*d));
    char err[CN_ERR_LEN];
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        const struct cn_cluster_node *n = &c->nodes[i];
        int rc = cn_cluster_add(d, n->id, n->address, n->weight, n->zone, err);
        CN_ASSERT(rc == CN_OK);   /* c already held it */
        d->nodes[i].leaving = n->leaving;
    }
    d->version = c->version;
    d->has_version = c->has_version;
    return d;
}

void cn_cluster_map_set_version(struct cn_cluster *c, uint64_t version)
{
    c->version = version;
    c->has_version = 1;
}

int cn_cluster_map_add(struct cn_cluster *c, const char *id, const char *address,
                       uint32_t weight, const char *zone, char err[CN_ERR_LEN])
{
    if (strlen(id) == 0 || strlen(id) > CN_CLUSTER_MAX_NAME || strlen(address) == 0 ||
        strlen(address) > CN_CLUSTER_MAX_NAME || strlen(zone) > CN_CLUSTER_MAX_NAME ||
        strpbrk(id, " \t\r\n#") != NULL || strpbrk(address, " \t\r\n#") != NULL ||
        strpbrk(zone, " \t\r\n#") != NULL) {
        snprintf(err, CN_ERR_LEN, "id, address and zone must be 1 to %d bytes without blanks "
                 "or '#'", CN_CLUSTER_MAX_NAME);
        return CN_INVAL;
    }
    if (weight < 1 || weight > 10000) {
        snprintf(err, CN_ERR_LEN, "weight must be 1 to 10000");
        return CN_INVAL;
    }
    return cn_cluster_add(c, id, address, weight, zone, err);
}

void cn_cluster_map_remove(struct cn_cluster *c, uint32_t i)
{
    CN_ASSERT(i < c->n_nodes);
    cn_free(c->nodes[i].id);
    cn_free(c->nodes[i].address);
    cn_free(c->nodes[i].zone);
    memmove(&c->nodes[i], &c->nodes[i + 1], (c->n_nodes - i - 1) * sizeof(c->nodes[0]));
    c->n_nodes--;
    c->has_zones = 0;
    for (uint32_t k = 0; k < c->n_nodes; k++) {
        c->addresses[k] = c->nodes[k].address;
        c->has_zones |= c->nodes[k].zone[0] != '\0';
    }
}

void cn_cluster_map_set_leaving(struct cn_cluster *c, uint32_t i, int leaving)
{
    CN_ASSERT(i < c->n_nodes);
    c->nodes[i].leaving = leaving != 0;
}
