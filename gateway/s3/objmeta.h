/* The `meta` of an object record: the response headers stored with the
 * object (Content-Type, Cache-Control, Content-Disposition, Content-Encoding,
 * Content-Language, Expires, x-amz-meta-*, x-amz-checksum-*), as a msgpack
 * map {"h": [[name, value], ...]}. The node treats it as opaque bytes; the
 * large-object issue adds the chunk map under its own key.
 *
 * Entries whose name begins with ':' are the gateway's own, not headers (no
 * header name can hold ':'): GET never replays them. Today one: GW_OBJMETA_TAGS,
 * the object's tags in x-amz-tagging's query form (tagset.h). Kept in "h"
 * so that every edit that keeps the headers keeps them too. */
#ifndef GW_OBJMETA_H
#define GW_OBJMETA_H

#include <stddef.h>
#include <stdint.h>

#include "cn/rc.h"

#define GW_OBJMETA_MAX_HEADERS 64

/* The object's tags (tagset.h's encoded form); absent: no tags. */
#define GW_OBJMETA_TAGS ":tags"
/* The object's ACL (acl.h's text form); absent: the bucket owner's alone. */
#define GW_OBJMETA_ACL ":acl"

struct gw_objmeta_header {
    const char *name;   /* lower-case */
    size_t name_len;
    const char *value;
    size_t value_len;
};

struct gw_objmeta {
    struct gw_objmeta_header h[GW_OBJMETA_MAX_HEADERS];
    size_t n;
};

/* Adds a header (pointers borrowed). CN_TOOBIG when full. */
int gw_objmeta_add(struct gw_objmeta *m, const char *name, size_t name_len, const char *value,
                   size_t value_len);

/* Encodes m; *out is cn_malloc'd (caller frees), *len its size. */
void gw_objmeta_encode(const struct gw_objmeta *m, char **out, size_t *len);

/* Decodes bytes (borrowed: m points into them). Returns CN_OK or CN_INVAL
 * when they are not a meta this gateway wrote (then m is empty). */
int gw_objmeta_decode(struct gw_objmeta *m, const void *bytes, size_t len);

/* The value of name or NULL. */
const struct gw_objmeta_header *gw_objmeta_find(const struct gw_objmeta *m, const char *name);

/* Is h one of the gateway's own entries rather than a stored header? */
int gw_objmeta_is_internal(const struct gw_objmeta_header *h);

/* Re-encodes the meta bytes in[in_len] with the entry name replaced by
 * value (value NULL: removed; else added when absent, at the end). *out is
 * cn_malloc'd (caller frees), *out_len its size. Bytes that do not decode
 * are taken as an empty meta. Returns CN_OK, or CN_TOOBIG (nothing
 * allocated) when the meta already holds GW_OBJMETA_MAX_HEADERS entries. */
int gw_objmeta_replace(const void *in, size_t in_len, const char *name, const char *value,
                       size_t value_len, char **out, size_t *out_len);

#endif
