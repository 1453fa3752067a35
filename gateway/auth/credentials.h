/* The gateway's credentials file: who may sign requests. Loaded once at
 * start (and on reload) into an immutable table that every event-loop thread
 * reads without locks; sigv4.c looks secrets up in it.
 *
 * File format, one entry per line:
 *     access_key secret_key owner_id display_name
 * Fields are separated by spaces or tabs; display_name is the rest of the
 * line (it may contain spaces; trailing white space is trimmed). Blank lines
 * and lines whose first non-blank character is '#' are skipped. Access keys
 * are 3..128 characters of [A-Za-z0-9._-+/=]; secrets 1..128 printable
 * non-space ASCII characters; owner_id 1..64 of [A-Za-z0-9._-]; display_name
 * 1..64 printable characters. A duplicate access key is an error.
 * A line may end in the attribute `admin=true` (one word after the display
 * name, so a display name cannot end in that word): the key is an
 * operator's, allowed GET /_cairn/status (s3_status.h); nothing else.
 * The local cluster's development pair is in deploy/local/credentials.example:
 *     AKIACAIRNDEV00000000 cairn-dev-secret-key-000000000000000000 cairn-dev cairn */
#ifndef GW_CREDENTIALS_H
#define GW_CREDENTIALS_H

#include <stddef.h>

#include "cn/rc.h"

struct gw_key_limits;

/* One entry; strings NUL-terminated, owned by the table. */
struct gw_cred {
    const char *access_key;
    size_t access_key_len;
    const char *secret_key;
    size_t secret_key_len;
    const char *owner_id;
    const char *display_name;
    int admin;                  /* `admin=true`: may read /_cairn/status */
    /* A cluster key's restrictions (key_record.h; owned by the table), or
     * NULL: the key has its account's rights (file keys always). The one
     * access decision (s3/access.c) applies them. */
    const struct gw_key_limits *limits;
};

struct gw_credentials;

/* Loads a file. Returns CN_OK and a new table in *out (free with
 * gw_credentials_free()), or CN_IO (cannot read) / CN_INVAL (bad line,
 * duplicate key, no entry at all) / CN_TOOBIG (file over 16 MiB) with err
 * naming the file and line; *out is then NULL. */
int gw_credentials_load_file(const char *path, struct gw_credentials **out,
                             char err[CN_ERR_LEN]);
/* Same over a buffer (not NUL-terminated); origin names it in errors. */
int gw_credentials_load_buf(const char *buf, size_t len, const char *origin,
                            struct gw_credentials **out, char err[CN_ERR_LEN]);
/* The entry of an access key (len bytes, not NUL-terminated), or NULL. The
 * pointer lives as long as the table. */
const struct gw_cred *gw_credentials_find(const struct gw_credentials *c, const char *ak,
                                          size_t len);
size_t gw_credentials_count(const struct gw_credentials *c);
/* Entry i in access-key order, i < count. */
const struct gw_cred *gw_credentials_at(const struct gw_credentials *c, size_t i);
/* Tables are shared between threads by reference count (key_sync.h swaps
 * them while requests still hold entries of the old one): _hold adds one
 * and returns c (the count is not part of the const contents); _free drops one, and the last frees the table and every
 * string (secrets are wiped first). NULL is ok for _free. */
struct gw_credentials *gw_credentials_hold(const struct gw_credentials *c);
void gw_credentials_free(struct gw_credentials *c);

/* A new table (one reference) of copies of file's entries (file may be
 * NULL) and of the n_extra entries of extra (keys kept in the cluster),
 * sorted; an extra whose access key the file has is left out (the file
 * wins) and counted in *shadowed, and extras never get `admin` (their
 * limits are copied). An empty
 * table is allowed here. */
struct gw_credentials *gw_credentials_merge(const struct gw_credentials *file,
                                            const struct gw_cred *extra, size_t n_extra,
                                            size_t *shadowed);

#endif
