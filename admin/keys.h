/* cairn-admin key create|list|delete: the access keys kept in the cluster
 * (gateway/auth/key_record.h, docs/operations.md). The tool talks to the
 * nodes directly: a key's record goes to its N ring replicas (as the
 * gateways place it), listings are merged from every node. */
#ifndef ADM_KEYS_H
#define ADM_KEYS_H

#include <stdint.h>

#include "cn/cluster.h"
#include "cn/ring.h"
#include "msg/client.h"

struct adm_keys_opts {
    const struct cn_cluster *cl;
    const struct cn_ring *ring;
    uint32_t replicas;              /* N (resolved: 1..nodes) */
    int timeout_ms;
    const struct msg_curve_client *curve;
    int json;
    const char *master_key_file;    /* create: required */
};

/* Each returns the exit status: 0 done, 1 failed (printed on stderr), 2 usage. */
int adm_keys_create(const struct adm_keys_opts *o, const char *name, const char *account);
int adm_keys_list(const struct adm_keys_opts *o);
int adm_keys_delete(const struct adm_keys_opts *o, const char *akid);

#endif
