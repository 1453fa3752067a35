/* The one definition of every gateway <-> storage node message. Change the
 * protocol here; regenerate PROTOCOL.md's tables with msg-docgen (a test
 * fails while they differ). */
#include "schema.h"

#include <stddef.h>

#define F(id, key, type, lim, max, member, doc) \
    [id] = {id, key, type, lim, max, offsetof(struct msg, member), doc}

const struct msg_field_desc msg_fields[MSG_F_MAX_] = {
    F(MSG_F_V, "v", MSG_T_UINT, MSG_LIM_NONE, UINT32_MAX, v,
      "protocol version of the message: the lowest that has every op, field and status it uses "
      "(1, or 2 for LOCK, UNLOCK, HINT_ADD, HINT_TAKE, PURGE, `tok`, `ifver`, PRECONDITION and "
      "LOCKED, or 3 for `osize` and `owner`); a request may carry a higher one to ask for the newer form "
      "of its reply (3: `osize` as a field, see Large objects)"),
    F(MSG_F_ID, "id", MSG_T_UINT, MSG_LIM_NONE, UINT64_MAX, id,
      "request id chosen by the client; the reply carries the same id"),
    F(MSG_F_OP, "op", MSG_T_UINT, MSG_LIM_NONE, UINT32_MAX, op,
      "operation code (table below); the reply carries the same op"),
    F(MSG_F_ST, "st", MSG_T_UINT, MSG_LIM_NONE, UINT32_MAX, st,
      "reply status code (table below)"),
    F(MSG_F_ERR, "err", MSG_T_STR, MSG_LIM_FIXED, 1024, err,
      "human-readable error text; names the record when data is corrupt"),
    F(MSG_F_KEY, "key", MSG_T_BIN, MSG_LIM_KEY, 0, key,
      "record key: arbitrary bytes, 1 to max_key_len long"),
    F(MSG_F_OFF, "off", MSG_T_UINT, MSG_LIM_NONE, UINT64_MAX, off,
      "byte offset into the record's data"),
    F(MSG_F_LEN, "len", MSG_T_UINT, MSG_LIM_NONE, UINT64_MAX, len,
      "byte count wanted from `off` (clipped at the end of the record)"),
    F(MSG_F_SIZE, "size", MSG_T_UINT, MSG_LIM_NONE, UINT64_MAX, size,
      "total length of the record's data"),
    F(MSG_F_CRC, "crc", MSG_T_UINT, MSG_LIM_NONE, UINT32_MAX, crc,
      "CRC32C (Castagnoli, as in iSCSI) of the payload frame's bytes"),
    F(MSG_F_VER, "ver", MSG_T_UINT, MSG_LIM_NONE, UINT64_MAX, ver,
      "version id of the record, chosen by the writer"),
    F(MSG_F_TS, "ts", MSG_T_UINT, MSG_LIM_NONE, UINT64_MAX, ts,
      "timestamp of the write in microseconds since the Unix epoch; (ts, ver) orders writes"),
    F(MSG_F_FLAGS, "flags", MSG_T_UINT, MSG_LIM_NONE, UINT32_MAX, flags,
      "record flags: bit 0 (1) = tombstone; in a LIST request, bit 0 (1) = include tombstones"),
    F(MSG_F_ETAG, "etag", MSG_T_BIN, MSG_LIM_FIXED, 128, etag,
      "opaque tag stored with the record and returned by HEAD, GET and LIST"),
    F(MSG_F_META, "meta", MSG_T_BIN, MSG_LIM_META, 0, meta,
      "opaque metadata stored with the record (the cairn gateway puts a msgpack map in it)"),
    F(MSG_F_PREFIX, "prefix", MSG_T_BIN, MSG_LIM_KEY, 0, prefix,
      "LIST only keys that start with these bytes (may be empty)"),
    F(MSG_F_AFTER, "after", MSG_T_BIN, MSG_LIM_KEY, 0, after,
      "LIST only keys that sort strictly after these bytes"),
    F(MSG_F_LIMIT, "limit", MSG_T_UINT, MSG_LIM_LIST, 0, limit,
      "largest number of entries wanted, 1 to max_list"),
    F(MSG_F_ENTS, "ents", MSG_T_ENTS, MSG_LIM_LIST, 0, ents,
      "array of entry maps (see Entries), sorted by key bytewise"),
    F(MSG_F_MORE, "more", MSG_T_BOOL, MSG_LIM_NONE, 1, more,
      "true when more keys match after the last entry returned"),
    F(MSG_F_NODE, "node", MSG_T_STR, MSG_LIM_FIXED, 256, node,
      "PING, STATS: the storage node's id (its node_id setting); HINT_ADD, HINT_TAKE: the id "
      "of the node a hint is for, as the gateways' ring names it (1 to 255 bytes)"),
    F(MSG_F_STATS, "stats", MSG_T_STATS, MSG_LIM_FIXED, 1024, stats,
      "map of counter name (str) to unsigned integer"),
    F(MSG_F_APPLIED, "applied", MSG_T_BOOL, MSG_LIM_NONE, 1, applied,
      "false when the node already held a newer (ts, ver) and ignored the write"),
    F(MSG_F_TOK, "tok", MSG_T_UINT, MSG_LIM_NONE, UINT64_MAX, tok,
      "(v2) lease token chosen by a conditional writer (the `ver` it will write); on a PUT: "
      "write only while this token holds the key's lease, which the write then releases"),
    F(MSG_F_IFVER, "ifver", MSG_T_UINT, MSG_LIM_NONE, UINT64_MAX, ifver,
      "(v2) LOCK: grant only if the key's live record has this `ver`; absent: only if the key "
      "has no live record (none, or a tombstone)"),
    F(MSG_F_UPTO, "upto", MSG_T_BIN, MSG_LIM_KEY, 0, upto,
      "DIGEST: the range's last key (inclusive); absent: no upper bound"),
    F(MSG_F_FANOUT, "fanout", MSG_T_UINT, MSG_LIM_NONE, 256, fanout,
      "DIGEST: how many sub-ranges to split the range into, 1 to 256"),
    F(MSG_F_ARCS, "arcs", MSG_T_BIN, MSG_LIM_FIXED, 65536, arcs,
      "DIGEST: count only keys whose ring hash lies in these arcs: pairs of u64 BE "
      "(first, last), inclusive, sorted, disjoint"),
    F(MSG_F_SUMS, "sums", MSG_T_BIN, MSG_LIM_FIXED, 6144, sums,
      "DIGEST reply: per sub-range, in order, 24 bytes: count, digest lane 0, digest lane 1 "
      "(u64 BE each)"),
    F(MSG_F_LO, "lo", MSG_T_BIN, MSG_LIM_KEY, 0, lo,
      "DIGEST reply: the smallest key counted, when all fell in one sub-range"),
    F(MSG_F_HI, "hi", MSG_T_BIN, MSG_LIM_KEY, 0, hi,
      "DIGEST reply: the largest key counted, when all fell in one sub-range"),
    F(MSG_F_OSIZE, "osize", MSG_T_UINT, MSG_LIM_NONE, UINT64_MAX, osize,
      "(v3) the logical size of the object the record stands for, when it differs from the "
      "record's data (a large object's parent record holds its chunk map); stored with the "
      "record and returned by HEAD, GET and LIST to requests of version 3 (older ones get it "
      "folded into `etag`, see Large objects)"),
    F(MSG_F_VMAX, "vmax", MSG_T_UINT, MSG_LIM_NONE, UINT32_MAX, vmax,
      "(v3) in every reply of a node of version 3 or later: the newest version it accepts "
      "(a reply without it comes from a node of version 1 or 2). Never required"),
    F(MSG_F_OWNER, "owner", MSG_T_BIN, MSG_LIM_FIXED, MSG_OWNER_MAX, owner,
      "(v3) the owner id of the record (a gateway's bucket record), stored with it and "
      "returned by HEAD, GET and LIST to requests of version 3; a record with an owner has no "
      "etag of its own (older requests get the owner as `etag`, see Record owners)"),
};

#define E(key, type, lim, max, member, doc) \
    {MSG_F_MAX_, key, type, lim, max, offsetof(struct msg_entry, member), doc, 0}
#define EOPT(key, type, lim, max, member, has, doc) \
    {MSG_F_MAX_, key, type, lim, max, offsetof(struct msg_entry, member), doc, \
     offsetof(struct msg_entry, has)}

const struct msg_field_desc msg_entry_fields[] = {
    E("key", MSG_T_BIN, MSG_LIM_KEY, 0, key, "record key"),
    E("size", MSG_T_UINT, MSG_LIM_NONE, UINT64_MAX, size, "length of the record's data"),
    E("etag", MSG_T_BIN, MSG_LIM_FIXED, 128, etag, "the etag stored with the record (may be empty)"),
    E("ts", MSG_T_UINT, MSG_LIM_NONE, UINT64_MAX, ts, "timestamp of the write, microseconds"),
    E("ver", MSG_T_UINT, MSG_LIM_NONE, UINT64_MAX, ver, "version id"),
    E("flags", MSG_T_UINT, MSG_LIM_NONE, UINT32_MAX, flags, "record flags"),
    EOPT("osize", MSG_T_UINT, MSG_LIM_NONE, UINT64_MAX, osize, has_osize,
         "(v3) the record's `osize`, only when it has one and the request was of version 3"),
    EOPT("owner", MSG_T_BIN, MSG_LIM_FIXED, MSG_OWNER_MAX, owner, has_owner,
         "(v3) the record's `owner`, only when it has one and the request was of version 3"),
    {MSG_F_MAX_, NULL, MSG_T_UINT, MSG_LIM_NONE, 0, 0, NULL, 0},
};

#define END {MSG_F_MAX_, 0}

static const struct msg_use msg_none[] = {END};
static const struct msg_use msg_ping_rep[] = {{MSG_F_NODE, 1}, END};
static const struct msg_use msg_stats_rep[] = {{MSG_F_NODE, 1}, {MSG_F_STATS, 1}, END};
static const struct msg_use msg_put_req[] = {
    {MSG_F_KEY, 1}, {MSG_F_CRC, 1}, {MSG_F_VER, 1}, {MSG_F_TS, 1},
    {MSG_F_ETAG, 0}, {MSG_F_META, 0}, {MSG_F_TOK, 0}, {MSG_F_OSIZE, 0}, {MSG_F_OWNER, 0}, END};
static const struct msg_use msg_put_rep[] = {{MSG_F_APPLIED, 0}, END};
static const struct msg_use msg_get_req[] = {{MSG_F_KEY, 1}, {MSG_F_OFF, 0}, {MSG_F_LEN, 0}, END};
static const struct msg_use msg_get_rep[] = {
    {MSG_F_SIZE, 0}, {MSG_F_OFF, 0}, {MSG_F_CRC, 0}, {MSG_F_VER, 0}, {MSG_F_TS, 0},
    {MSG_F_FLAGS, 0}, {MSG_F_ETAG, 0}, {MSG_F_META, 0}, {MSG_F_OSIZE, 0}, {MSG_F_OWNER, 0},
    END};
static const struct msg_use msg_head_req[] = {{MSG_F_KEY, 1}, END};
static const struct msg_use msg_head_rep[] = {
    {MSG_F_SIZE, 0}, {MSG_F_VER, 0}, {MSG_F_TS, 0}, {MSG_F_FLAGS, 0},
    {MSG_F_ETAG, 0}, {MSG_F_META, 0}, {MSG_F_OSIZE, 0}, {MSG_F_OWNER, 0}, END};
static const struct msg_use msg_delete_req[] = {{MSG_F_KEY, 1}, {MSG_F_VER, 1}, {MSG_F_TS, 1}, END};
static const struct msg_use msg_delete_rep[] = {{MSG_F_APPLIED, 0}, END};
static const struct msg_use msg_list_req[] = {
    {MSG_F_PREFIX, 1}, {MSG_F_AFTER, 0}, {MSG_F_LIMIT, 1}, {MSG_F_FLAGS, 0}, END};
static const struct msg_use msg_list_rep[] = {{MSG_F_ENTS, 0}, {MSG_F_MORE, 0}, END};
static const struct msg_use msg_scrub_rep[] = {{MSG_F_STATS, 0}, {MSG_F_ENTS, 0}, END};
static const struct msg_use msg_compact_rep[] = {{MSG_F_STATS, 0}, END};
static const struct msg_use msg_lock_req[] = {{MSG_F_KEY, 1}, {MSG_F_TOK, 1}, {MSG_F_IFVER, 0}, END};
static const struct msg_use msg_lock_rep[] = {{MSG_F_VER, 0}, {MSG_F_TS, 0}, END};
static const struct msg_use msg_unlock_req[] = {{MSG_F_KEY, 1}, {MSG_F_TOK, 1}, END};
static const struct msg_use msg_digest_req[] = {
    {MSG_F_AFTER, 0}, {MSG_F_UPTO, 0}, {MSG_F_FANOUT, 1}, {MSG_F_ARCS, 0}, {MSG_F_LIMIT, 0}, END};
static const struct msg_use msg_digest_rep[] = {
    {MSG_F_SUMS, 1}, {MSG_F_MORE, 0}, {MSG_F_LO, 0}, {MSG_F_HI, 0}, {MSG_F_ENTS, 0}, END};
static const struct msg_use msg_hint_add_req[] = {
    {MSG_F_NODE, 1}, {MSG_F_KEY, 1}, {MSG_F_TS, 1}, {MSG_F_VER, 1}, END};
static const struct msg_use msg_hint_add_rep[] = {{MSG_F_APPLIED, 0}, END};
static const struct msg_use msg_hint_take_req[] = {
    {MSG_F_NODE, 0}, {MSG_F_AFTER, 0}, {MSG_F_LIMIT, 0}, {MSG_F_ENTS, 0}, END};
static const struct msg_use msg_hint_take_rep[] = {
    {MSG_F_STATS, 1}, {MSG_F_ENTS, 0}, {MSG_F_MORE, 0}, END};
static const struct msg_use msg_purge_req[] = {
    {MSG_F_KEY, 1}, {MSG_F_TS, 1}, {MSG_F_VER, 1}, END};
static const struct msg_use msg_purge_rep[] = {{MSG_F_APPLIED, 0}, END};

const struct msg_op_desc msg_ops[] = {
    {MSG_OP_PING, "PING", "liveness check; the reply names the node", 0, 0,
     msg_none, msg_ping_rep},
    {MSG_OP_STATS, "STATS", "the node's counters (records, bytes, queue depth, ops, ...)", 0, 0,
     msg_none, msg_stats_rep},
    {MSG_OP_PUT, "PUT",
     "store the payload frame as the data of `key`, with its etag, meta and (v3) osize, if (ts, "
     "ver) is newer than what the node holds; `crc` must match the payload",
     1, 0, msg_put_req, msg_put_rep},
    {MSG_OP_GET, "GET",
     "read `len` bytes from `off` of `key` (the whole record without them); an OK reply is followed "
     "by the payload frame, whose CRC32C is `crc`. A tombstone answers NOT_FOUND with ver, ts and flags set",
     0, 1, msg_get_req, msg_get_rep},
    {MSG_OP_HEAD, "HEAD", "the record's size, version, etag, meta and osize, without data", 0, 0,
     msg_head_req, msg_head_rep},
    {MSG_OP_DELETE, "DELETE",
     "write a tombstone carrying (ts, ver) for `key`, if newer than what the node holds", 0, 0,
     msg_delete_req, msg_delete_rep},
    {MSG_OP_LIST, "LIST",
     "up to `limit` live keys starting with `prefix` and sorting after `after`, in bytewise order; "
     "with `flags` bit 0, tombstones too (their entries have flags bit 0 set)",
     0, 0, msg_list_req, msg_list_rep},
    {MSG_OP_SCRUB, "SCRUB",
     "re-read every record and verify every checksum; the reply counts what was checked and lists "
     "each corrupt record in `ents`",
     0, 0, msg_none, msg_scrub_rep},
    {MSG_OP_COMPACT, "COMPACT", "reclaim the space of dead records now; the reply counts the work",
     0, 0, msg_none, msg_compact_rep},
    {MSG_OP_LOCK, "LOCK",
     "(v2) take the key's conditional-write lease for `tok` if the key's live record is the one "
     "expected (`ifver`, or none); answers PRECONDITION (with the live record's `ver` and `ts`, "
     "if any) or LOCKED (another token holds an unexpired lease). Leases live in memory, expire "
     "after 10 s and are lost when the node restarts",
     0, 0, msg_lock_req, msg_lock_rep},
    {MSG_OP_UNLOCK, "UNLOCK", "(v2) release the key's lease if `tok` holds it (OK either way)",
     0, 0, msg_unlock_req, msg_none},
    {MSG_OP_DIGEST, "DIGEST",
     "split the key range (`after`, `upto`] into `fanout` sub-ranges and answer each one's "
     "record count and digest sum (tombstones included), from the index only; `more` true: the "
     "node's work cap stopped it and `sums` covers only the first sub-ranges; with `limit`, "
     "when the whole range counts at most `limit` records, `ents` lists them as LIST would",
     0, 0, msg_digest_req, msg_digest_rep},
    {MSG_OP_HINT_ADD, "HINT_ADD",
     "(v2) keep, durably, a hint that the node `node` missed the write (`ts`, `ver`) of `key` "
     "(hinted handoff: sent to a replica that took the write). One hint per (`node`, `key`): a "
     "newer (`ts`, `ver`) replaces the one held (`applied` false: the one held is newer). "
     "When the node's hint store is full (its handoff.max_hints or handoff.max_hint_bytes) "
     "answers BUSY and keeps the hints it has (the oldest)",
     0, 0, msg_hint_add_req, msg_hint_add_rep},
    {MSG_OP_HINT_TAKE, "HINT_TAKE",
     "(v2) hinted handoff replay. First drops the hints of `node` named in `ents` (each "
     "only if the hint held is not newer than the entry's `ts`, `ver`: a write missed since "
     "keeps it), then, with `node`, lists up to `limit` (default 100) of its hints after "
     "`after` in key order (`ents`: key, ts, ver) and `more`. `stats` always maps each node "
     "id the node holds hints for to their count (at most 1024 ids)",
     0, 0, msg_hint_take_req, msg_hint_take_rep},
    {MSG_OP_PURGE, "PURGE",
     "(v2) rebalance: remove `key`'s record from this node only if the version it holds is "
     "exactly (`ts`, `ver`), without writing a tombstone (the record lives on its owners in "
     "the new ring; a newer write is never removed). `applied`: the record was removed; its "
     "space comes back at the container's next compaction",
     0, 0, msg_purge_req, msg_purge_rep},
    {0, NULL, NULL, 0, 0, NULL, NULL},
};

const struct msg_status_desc msg_statuses[] = {
    {MSG_ST_OK, "OK", "success"},
    {MSG_ST_NOT_FOUND, "NOT_FOUND", "no such key, or its newest version is a tombstone"},
    {MSG_ST_BAD_REQUEST, "BAD_REQUEST",
     "the request was not valid msgpack, had a wrong type, an unknown op or a missing field"},
    {MSG_ST_CORRUPT, "CORRUPT", "stored bytes failed their checksum; `err` names the record"},
    {MSG_ST_TOO_LARGE, "TOO_LARGE", "a key, meta, payload or count is over the node's limits"},
    {MSG_ST_IO_ERROR, "IO_ERROR", "the node's disk failed the operation"},
    {MSG_ST_BUSY, "BUSY", "the node's queue is full; retry later or on another replica"},
    {MSG_ST_BAD_VERSION, "BAD_VERSION", "the protocol version `v` is not supported"},
    {MSG_ST_BAD_CHECKSUM, "BAD_CHECKSUM", "a PUT payload does not match its `crc`"},
    {MSG_ST_INTERNAL, "INTERNAL", "a bug or resource failure in the node"},
    {MSG_ST_PRECONDITION, "PRECONDITION",
     "(v2) LOCK: the key's live record is not the one `ifver` expects"},
    {MSG_ST_LOCKED, "LOCKED",
     "(v2) LOCK, or PUT with `tok`: another token holds the key's lease (or, for a PUT, `tok` "
     "does not hold it)"},
    {0, NULL, NULL},
};

const struct msg_op_desc *msg_schema_op(uint32_t code)
{
    for (const struct msg_op_desc *o = msg_ops; o->name != NULL; o++)
        if (o->code == code)
            return o;
    return NULL;
}
