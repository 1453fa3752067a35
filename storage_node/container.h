/* A container: one append-only data file of records (LeoFS's
 * obj_containers). The writer thread appends to the active one; readers
 * pread any; compaction empties old ones and unlinks them. A container is
 * reference counted so a reader that holds one finishes on its fd even after
 * compaction unlinked the file.
 *
 * Reads of record data may go through a read-only shared mapping of the file
 * instead of pread (sn_container_mapped): the bytes are checksummed and sent
 * straight from the page cache, one copy fewer per byte served. The mapping
 * covers map_len bytes from the start of the file, is made on the first such
 * read and lives as long as the container; a reply that points into it holds a
 * reference. */
#ifndef SN_CONTAINER_H
#define SN_CONTAINER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "cn/rc.h"
#include "record.h"

#define SN_CONTAINER_MAGIC "CAIRNCN1"
#define SN_CONTAINER_HDR 16u   /* magic[8], u32 id, u32 crc32c of the first 12 */

struct sn_container {
    uint32_t id;
    int fd;
    atomic_int refs;         /* the store's table holds one */
    uint64_t len;            /* end of the valid records: the append point */
    /* Accounting, guarded by the store's lock; persisted in the index. */
    uint64_t indexed_upto;   /* records before this offset are in the index */
    uint64_t live_bytes;     /* bytes of records the index points at */
    uint64_t live_records;   /* records the index points at, tombstones included */
    uint64_t live_tombstones;   /* of those, tombstones */
    uint64_t tombstone_bytes;   /* their bytes (part of live_bytes) */
    uint64_t last_append_us; /* wall clock of the last append (the file's mtime at open) */
    int meta_dirty;          /* accounting changed since the last index write */
    int unsynced;            /* appended since the last fdatasync */
    char *path;
    uint64_t map_len;          /* bytes a mapping covers (0: never map); set before sharing */
    _Atomic(uint8_t *) map;    /* the mapping once made, else NULL */
    atomic_int map_failed;     /* mmap failed once: use pread from then on */
};

/* A growable buffer for record headers read from disk. */
struct sn_buf {
    uint8_t *p;
    size_t cap;
};
void sn_buf_reserve(struct sn_buf *b, size_t n);
void sn_buf_fini(struct sn_buf *b);

/* "<dir>/<id as 8 hex digits>.cnr" into out. */
void sn_container_path(const char *dir, uint32_t id, char *out, size_t outlen);
/* Parses a file name made by sn_container_path(); CN_OK and *id, or CN_INVAL. */
int sn_container_parse_name(const char *name, uint32_t *id);

/* Creates (O_EXCL) a new empty container file with its file header, synced,
 * and the directory synced. *out has one reference. */
int sn_container_create(const char *dir, uint32_t id, struct sn_container **out,
                        char err[CN_ERR_LEN]);
/* Opens an existing container, checks its file header; len is the file size.
 * *out has one reference. */
int sn_container_open(const char *dir, uint32_t id, struct sn_container **out,
                      char err[CN_ERR_LEN]);

void sn_container_ref(struct sn_container *c);
/* Drops a reference; the last one closes the fd and frees c. */
void sn_container_unref(struct sn_container *c);

/* Caps the length a mapping of c may cover: the most a container grows to
 * (its roll-over size, or its length when a single record made it longer). 0
 * turns mapping off for c. Call before c is shared between threads. */
void sn_container_set_map_len(struct sn_container *c, uint64_t map_len);

/* The bytes [off, off+len) of c through its mapping (made on first use),
 * with their page tables populated so reading them does not fault; NULL when
 * the range is past the mapping, mapping is off or failed, or populating
 * failed (an I/O error, a range past the end of the file): the caller then
 * uses sn_container_pread, which reports such errors as return codes. */
const uint8_t *sn_container_mapped(struct sn_container *c, uint64_t off, uint64_t len);

/* Reads exactly len bytes at off. CN_IO on an I/O error, CN_CORRUPT when the
 * file ends first. */
int sn_container_pread(struct sn_container *c, void *buf, size_t len, uint64_t off);

/* sn_container_pread() that does not wait for the disk: CN_WOULDBLOCK when
 * some of the bytes are not in the page cache (preadv2 RWF_NOWAIT; also on a
 * kernel or file system without it). */
int sn_container_pread_nowait(struct sn_container *c, void *buf, size_t len, uint64_t off);

/* Whether [off, off+len) of the container's mapping is in the page cache
 * (mincore), so that touching it will not wait for the disk. 0 when the
 * container is not mapped or the range is outside the mapping. */
int sn_container_resident(struct sn_container *c, uint64_t off, uint64_t len);

/* Appends the iovecs (total bytes) at c->len with pwritev and advances len.
 * Only the writer (or recovery) calls it. On error len is unchanged and the
 * file is truncated back to it. */
int sn_container_append(struct sn_container *c, struct iovec *iov, int n_iov,
                        uint64_t total, char err[CN_ERR_LEN]);

int sn_container_sync(struct sn_container *c, char err[CN_ERR_LEN]);
/* Drops the page-cache pages of [off, off + len) that are clean and not
 * mapped (posix_fadvise DONTNEED; advice: failures are ignored). Called on
 * large values right after their fdatasync: their pages go back to the
 * allocator for the next writes instead of the cache growing. */
void sn_container_uncache(struct sn_container *c, uint64_t off, uint64_t len);
/* Cuts the file at len (a torn tail) and syncs it. */
int sn_container_truncate(struct sn_container *c, uint64_t len, char err[CN_ERR_LEN]);

/* Unlinks the file (open fds stay valid) and fsyncs dir, so the removal is
 * durable before the caller forgets the container in the index. A file that
 * is already gone is not an error. */
int sn_container_unlink(struct sn_container *c, const char *dir, char err[CN_ERR_LEN]);

/* Reads and parses the record header at off (off < end, end is the end of
 * the bytes to trust) into b; ri points into b. Returns CN_OK, CN_DONE when
 * off == end, CN_CORRUPT (err says why) for a header that is torn, runs past
 * end, or fails its checks, CN_IO on a read error. */
int sn_container_read_header(struct sn_container *c, uint64_t off, uint64_t end,
                             struct sn_buf *b, struct sn_record_info *ri,
                             char err[CN_ERR_LEN]);

#endif
