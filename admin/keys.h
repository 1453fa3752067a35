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
/* account: an account's id or name (it must exist; the key's owner is its
 * id), or NULL: the key is its own account, named NAME (as before accounts). */
int adm_keys_create(const struct adm_keys_opts *o, const char *name, const char *account);
int adm_keys_list(const struct adm_keys_opts *o);
int adm_keys_delete(const struct adm_keys_opts *o, const char *akid);

/* key allow|deny AKID: a change of the key's restrictions (key_record.h).
 * allow adds rights on bucket (and/or sets the create-bucket flag); deny
 * takes rights away (rights 0: the bucket leaves the list) and/or clears the
 * flag. The first change makes the key restricted: from then on it may use
 * only what its list allows. The record is opened and sealed again (the
 * list is authenticated with the secret), so the master key is needed. */
struct adm_keys_limit_change {
    int allow;              /* 1 allow, 0 deny */
    const char *bucket;     /* NULL: no bucket named */
    unsigned rights;        /* GW_KEY_RIGHT_*; deny with 0: the whole bucket */
    int create_bucket;      /* 1: --create-bucket given */
};
int adm_keys_limit(const struct adm_keys_opts *o, const char *akid,
                   const struct adm_keys_limit_change *ch);

#endif
