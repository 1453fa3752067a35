/* The protocol's schema tables (private to proto/): every field with its
 * msgpack key, type and limit, and every op with the fields of its request
 * and reply. msg.c encodes and decodes from them; msg_schema_write_markdown()
 * turns them into the tables of PROTOCOL.md. */
#ifndef MSG_SCHEMA_H
#define MSG_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "msg/msg.h"

enum msg_type {
    MSG_T_UINT,  /* msgpack positive integer, at most `max` */
    MSG_T_BOOL,  /* msgpack true/false */
    MSG_T_BIN,   /* msgpack bin (str also accepted), length limited */
    MSG_T_STR,   /* msgpack str (bin also accepted), length limited */
    MSG_T_ENTS,  /* array of entry maps (see msg_entry_fields) */
    MSG_T_STATS, /* map of str -> uint */
};

/* Where a length limit comes from. */
enum msg_limit {
    MSG_LIM_NONE,     /* integers: `max` is the largest value */
    MSG_LIM_KEY,      /* struct msg_limits.max_key_len */
    MSG_LIM_META,     /* struct msg_limits.max_meta_len */
    MSG_LIM_LIST,     /* struct msg_limits.max_list */
    MSG_LIM_FIXED,    /* `max` */
};

struct msg_field_desc {
    enum msg_field id;
    const char *key;
    enum msg_type type;
    enum msg_limit limit;
    uint64_t max;
    size_t offset;   /* in struct msg */
    const char *doc;
    /* entry fields only: offset in struct msg_entry of the uint32_t that
     * says the field is present (written only then, set when decoded);
     * 0: the field is always written */
    size_t has_offset;
};

struct msg_use {
    enum msg_field field;
    int required;
};

struct msg_op_desc {
    uint32_t code;
    const char *name;
    const char *doc;
    int req_payload;   /* a payload frame follows the request header */
    int rep_payload;   /* a payload frame follows an OK reply header */
    const struct msg_use *req;   /* terminated by {MSG_F_MAX_, 0} */
    const struct msg_use *rep;
};

struct msg_status_desc {
    uint32_t code;
    const char *name;
    const char *doc;
};

extern const struct msg_field_desc msg_fields[MSG_F_MAX_];
extern const struct msg_field_desc msg_entry_fields[];   /* ends with key NULL */
extern const struct msg_op_desc msg_ops[];               /* ends with name NULL */
extern const struct msg_status_desc msg_statuses[];      /* ends with name NULL */

const struct msg_op_desc *msg_schema_op(uint32_t code);

#endif
