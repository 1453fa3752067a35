/* Request handlers of the storage node: one per op, each mapping a decoded
 * request onto the engine (store.h) and building the reply. The entry point,
 * sn_handler_run(), is declared in server.h. */
#ifndef SN_HANDLER_H
#define SN_HANDLER_H

#include "server.h"

/* The status a store return code maps to. */
enum msg_status sn_handler_status(int rc);

struct sn_ival;

/* The etag of a record as a reply to a request of version req_v carries it
 * (PROTOCOL.md, "Large objects"): for version 3 and later the etag as
 * stored, with *out_has_osize set when the record has an osize; for older
 * requests a record's osize folded into the etag (written to buf,
 * MSG_ETAG_FOLD_MAX bytes, which must outlive the reply) and *out_has_osize
 * 0. The result points at etag or buf. */
struct msg_bytes sn_handler_etag(uint32_t req_v, const uint8_t *etag, uint32_t etag_len,
                                 uint32_t has_osize, uint64_t osize, uint8_t *buf,
                                 uint32_t *out_has_osize);

/* Fills e from an index entry, as a reply to a request of version req_v
 * carries it (sn_handler_etag): key and etag are copied into one block
 * cn_malloc'd at e->key.ptr, which the caller frees. */
void sn_handler_entry(struct msg_entry *e, uint32_t req_v, const uint8_t *key, uint32_t klen,
                      const struct sn_ival *v);

#endif
