/* The storage client's functions (gateway/cluster/storage_client.h) that a
 * unit test's fake client answers the same way in every test that links
 * real gateway code against one (link-time substitution: storage_client.c
 * is then never linked). Include it once, after defining struct
 * gw_storage_client (with at least `struct event_base *base` and `struct
 * gw_node_health *health`) and gw_storage_client_send_timeout(), which
 * holds what the test does with a request. */
#ifndef TEST_FAKE_STORAGE_CLIENT_H
#define TEST_FAKE_STORAGE_CLIENT_H

struct gw_storage_client *gw_storage_client_new(struct event_base *base, void *zmq_ctx,
                                                char *const *endpoints, uint32_t n_nodes,
                                                const struct msg_curve_client *curve,
                                                int64_t timeout_ms, char err[CN_ERR_LEN])
{
    (void)base, (void)zmq_ctx, (void)endpoints, (void)n_nodes, (void)curve, (void)timeout_ms;
    snprintf(err, CN_ERR_LEN, "the fake client is not created this way");
    return NULL;
}

void gw_storage_client_free(struct gw_storage_client *c)
{
    (void)c;
}

/* cluster.c (pulled in through the metrics) adds the nodes of a cluster
 * map; a fake keeps its fixed set. */
int gw_storage_client_add_node(struct gw_storage_client *c, const char *endpoint,
                               char err[CN_ERR_LEN])
{
    (void)c, (void)endpoint;
    snprintf(err, CN_ERR_LEN, "the fake client has a fixed set of nodes");
    return CN_ERR;
}

uint64_t gw_storage_client_send(struct gw_storage_client *c, uint32_t node, struct msg *req,
                                const struct gw_storage_payload *payload,
                                gw_storage_reply_cb cb, void *arg)
{
    return gw_storage_client_send_timeout(c, node, req, payload, 0, cb, arg);
}

void gw_storage_client_set_health(struct gw_storage_client *c, struct gw_node_health *health,
                                  int64_t probe_interval_ms, int64_t probe_timeout_ms)
{
    (void)probe_interval_ms, (void)probe_timeout_ms;
    c->health = health;
}

void gw_storage_client_watch(struct gw_storage_client *c)
{
    (void)c;
}

struct gw_node_health *gw_storage_client_health(const struct gw_storage_client *c)
{
    return c->health;
}

struct event_base *gw_storage_client_base(const struct gw_storage_client *c)
{
    return c->base;
}

void gw_storage_client_cancel(struct gw_storage_client *c, uint64_t id)
{
    (void)c, (void)id;
}

int gw_storage_reply_move_payload(struct gw_storage_reply *r, struct evbuffer *dst)
{
    return evbuffer_add(dst, r->m.payload.ptr, r->m.payload.len) == 0 ? CN_OK : CN_ERR;
}

/* The tests' replies borrow bytes that outlive the test's requests, so a
 * kept reply is a plain copy. */
struct gw_storage_reply *gw_storage_reply_keep(const struct gw_storage_client *c,
                                               struct gw_storage_reply *r)
{
    (void)c;
    struct gw_storage_reply *k = cn_malloc(sizeof(*k));
    *k = *r;
    return k;
}

void gw_storage_reply_free(struct gw_storage_reply *k)
{
    cn_free(k);
}

#endif
