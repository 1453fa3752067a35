/* Server-side copy of a byte range of a large (chunked) object into new
 * chunks: UploadPartCopy and CopyObject from a chunked source. The source
 * is read a chunk-sized slice at a time (each slice's CRC32C checked by the
 * store, other replicas tried on failure) and fed to a chunk writer
 * (lo_writer.c), whose in-flight bound pauses the reads; the MD5 of the
 * copied bytes is computed on the way (the new ETag).
 *
 * Like the writer it does not hold the request: the handler state owns it
 * and frees it with gw_lo_copy_free() (the new chunks are reclaimed unless
 * gw_lo_copy_commit() said a record references them). Memory: about
 * (write_inflight + 2) x chunked_obj_len. */
#ifndef GW_LO_COPY_H
#define GW_LO_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "lo_map.h"
#include "lo_env.h"

struct gw_lo_copy;

/* rc CN_OK when every byte is stored in the new chunks, else the store's
 * status with err; runs once, from the loop, never after gw_lo_copy_free. */
typedef void (*gw_lo_copy_cb)(int rc, const char *err, void *arg);

/* Copies bytes [first, first+len) of the object src_okey (chunk map map,
 * moved in) into chunks of dst_okey named by ver, then calls cb. */
struct gw_lo_copy *gw_lo_copy_start(const struct gw_lo_env *lo, const char *src_okey,
                                    size_t src_okey_len, struct gw_lo_map *map, uint64_t first,
                                    uint64_t len, const char *dst_okey, size_t dst_okey_len,
                                    uint64_t ver, uint64_t reqid, gw_lo_copy_cb cb, void *arg);

/* After cb(CN_OK): the new segment and the hex MD5 of the copied bytes. */
void gw_lo_copy_seg(const struct gw_lo_copy *c, struct gw_lo_seg *out);
const char *gw_lo_copy_md5(const struct gw_lo_copy *c);

/* A stored record references the new chunks: keep them. */
void gw_lo_copy_commit(struct gw_lo_copy *c);
/* Frees c (later, if a read is in flight); uncommitted chunks are
 * reclaimed. NULL is a no-op. */
void gw_lo_copy_free(struct gw_lo_copy *c);

#endif
