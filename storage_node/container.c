/* Container files (see container.h): creation with a small file header,
 * positioned reads and appends, and reading record headers in place. */
#include "container.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cn/alloc.h"
#include "cn/crc.h"
#include "cn/hex.h"
#include "cn/time.h"

void sn_buf_reserve(struct sn_buf *b, size_t n)
{
    if (b->cap >= n)
        return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < n)
        cap *= 2;
    b->p = cn_realloc(b->p, cap);
    b->cap = cap;
}

void sn_buf_fini(struct sn_buf *b)
{
    cn_free(b->p);
    b->p = NULL;
    b->cap = 0;
}

void sn_container_path(const char *dir, uint32_t id, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s/%08x.cnr", dir, id);
}

int sn_container_parse_name(const char *name, uint32_t *id)
{
    uint32_t v = 0;
    for (int i = 0; i < 8; i++) {
        int d = cn_hex_val_lower(name[i]); /* we write them with %08x */
        if (d < 0)
            return CN_INVAL;
        v = v << 4 | (uint32_t)d;
    }
    if (strcmp(name + 8, ".cnr") != 0)
        return CN_INVAL;
    *id = v;
    return CN_OK;
}

static struct sn_container *sn_container_alloc(const char *path, uint32_t id, int fd)
{
    struct sn_container *c = cn_calloc(1, sizeof(*c));
    c->id = id;
    c->fd = fd;
    atomic_init(&c->refs, 1);
    c->path = cn_strdup(path);
    return c;
}

static void sn_container_file_header(uint32_t id, uint8_t hdr[SN_CONTAINER_HDR])
{
    memcpy(hdr, SN_CONTAINER_MAGIC, 8);
    sn_put32(hdr + 8, id);
    sn_put32(hdr + 12, cn_crc32c(0, hdr, 12));
}

static int sn_container_sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return CN_IO;
    int rc = fsync(fd) == 0 ? CN_OK : CN_IO;
    close(fd);
    return rc;
}

int sn_container_create(const char *dir, uint32_t id, struct sn_container **out,
                        char err[CN_ERR_LEN])
{
    char path[4096];
    uint8_t hdr[SN_CONTAINER_HDR];
    sn_container_path(dir, id, path, sizeof(path));
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, CN_ERR_LEN, "create %s: %s", path, strerror(errno));
        return CN_IO;
    }
    sn_container_file_header(id, hdr);
    if (pwrite(fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) || fdatasync(fd) != 0 ||
        sn_container_sync_dir(dir) != CN_OK) {
        snprintf(err, CN_ERR_LEN, "init %s: %s", path, strerror(errno));
        close(fd);
        unlink(path);
        return CN_IO;
    }
    struct sn_container *c = sn_container_alloc(path, id, fd);
    c->len = SN_CONTAINER_HDR;
    c->indexed_upto = SN_CONTAINER_HDR;
    c->last_append_us = cn_time_now_us();
    *out = c;
    return CN_OK;
}

int sn_container_open(const char *dir, uint32_t id, struct sn_container **out,
                      char err[CN_ERR_LEN])
{
    char path[4096];
    uint8_t want[SN_CONTAINER_HDR], got[SN_CONTAINER_HDR];
    struct stat st;
    sn_container_path(dir, id, path, sizeof(path));
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, CN_ERR_LEN, "open %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return CN_IO;
    }
    sn_container_file_header(id, want);
    if (pread(fd, got, sizeof(got), 0) != (ssize_t)sizeof(got) ||
        memcmp(want, got, sizeof(got)) != 0) {
        snprintf(err, CN_ERR_LEN, "%s: bad container file header", path);
        close(fd);
        return CN_CORRUPT;
    }
    struct sn_container *c = sn_container_alloc(path, id, fd);
    c->len = (uint64_t)st.st_size;
    c->indexed_upto = SN_CONTAINER_HDR;
    c->last_append_us =
        (uint64_t)st.st_mtim.tv_sec * 1000000u + (uint64_t)st.st_mtim.tv_nsec / 1000u;
    *out = c;
    return CN_OK;
}

void sn_container_ref(struct sn_container *c)
{
    atomic_fetch_add(&c->refs, 1);
}

void sn_container_unref(struct sn_container *c)
{
    if (c == NULL || atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    uint8_t *map = atomic_load(&c->map);
    if (map != NULL)
        munmap(map, (size_t)c->map_len);
    close(c->fd);
    cn_free(c->path);
    cn_free(c);
}

/* The most address space one container's mapping may take. */
#define SN_CONTAINER_MAX_MAP (64ull << 30)

void sn_container_set_map_len(struct sn_container *c, uint64_t map_len)
{
    map_len = CN_MAX(map_len, c->len);
    c->map_len = map_len > SN_CONTAINER_MAX_MAP ? 0 : map_len;
}

/* Maps the container on first use; racing readers keep the first mapping. */
static uint8_t *sn_container_map(struct sn_container *c)
{
    uint8_t *map = atomic_load(&c->map);
    if (map != NULL || c->map_len == 0 || atomic_load(&c->map_failed))
        return map;
    void *m = mmap(NULL, (size_t)c->map_len, PROT_READ, MAP_SHARED, c->fd, 0);
    if (m == MAP_FAILED) {
        atomic_store(&c->map_failed, 1);
        return NULL;
    }
    uint8_t *expect = NULL;
    if (!atomic_compare_exchange_strong(&c->map, &expect, (uint8_t *)m)) {
        munmap(m, (size_t)c->map_len);
        return expect;
    }
    return m;
}

const uint8_t *sn_container_mapped(struct sn_container *c, uint64_t off, uint64_t len)
{
    if (off > c->map_len || len > c->map_len - off || len == 0)
        return NULL;
    uint8_t *map = sn_container_map(c);
    if (map == NULL)
        return NULL;
    /* MADV_POPULATE_READ (Linux 5.14) faults the pages in now and reports an
     * unreadable page as an error instead of a SIGBUS on first touch */
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), start = off & ~(page - 1);
    if (madvise(map + start, (size_t)(off + len - start), MADV_POPULATE_READ) != 0) {
        if (errno == EINVAL)
            atomic_store(&c->map_failed, 1);   /* a kernel without it */
        return NULL;
    }
    return map + off;
}

int sn_container_pread(struct sn_container *c, void *buf, size_t len, uint64_t off)
{
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = pread(c->fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return CN_IO;
        if (n == 0)
            return CN_CORRUPT;
        p += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return CN_OK;
}

int sn_container_pread_nowait(struct sn_container *c, void *buf, size_t len, uint64_t off)
{
    for (;;) {
        struct iovec v = {buf, len};
        ssize_t n = preadv2(c->fd, &v, 1, (off_t)off, RWF_NOWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EOPNOTSUPP || errno == EINVAL))
            return CN_WOULDBLOCK;
        if (n < 0)
            return CN_IO;
        if (n == 0 && len > 0)
            return CN_CORRUPT;
        /* part of it cached: the rest would wait (a waiting reader redoes it) */
        return (size_t)n == len ? CN_OK : CN_WOULDBLOCK;
    }
}

/* Most pages sn_container_resident() looks at: the socket thread only reads
 * small records itself (inline_max), larger ones go to the I/O pool. */
#define SN_CONTAINER_RESIDENT_MAX_PAGES 64

int sn_container_resident(struct sn_container *c, uint64_t off, uint64_t len)
{
    if (len == 0 || off > c->map_len || len > c->map_len - off)
        return 0;
    uint8_t *map = sn_container_map(c);
    if (map == NULL)
        return 0;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), start = off & ~(page - 1);
    uint64_t pages = (off + len - start + page - 1) / page;
    unsigned char vec[SN_CONTAINER_RESIDENT_MAX_PAGES];
    if (pages > SN_CONTAINER_RESIDENT_MAX_PAGES ||
        mincore(map + start, (size_t)(off + len - start), vec) != 0)
        return 0;
    for (uint64_t i = 0; i < pages; i++)
        if (!(vec[i] & 1))
            return 0;
    return 1;
}

int sn_container_append(struct sn_container *c, struct iovec *iov, int n_iov,
                        uint64_t total, char err[CN_ERR_LEN])
{
    uint64_t off = c->len, done = 0;
    int i = 0;
    while (done < total) {
        int cnt = CN_MIN(n_iov - i, IOV_MAX);
        ssize_t n = pwritev(c->fd, iov + i, cnt, (off_t)(off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            snprintf(err, CN_ERR_LEN, "append to %s: %s", c->path,
                     n < 0 ? strerror(errno) : "short write");
            if (ftruncate(c->fd, (off_t)off) != 0) {
                /* the scan on the next start drops the partial record */
            }
            return CN_IO;
        }
        done += (uint64_t)n;
        /* skip the iovecs that were written completely; trim a partial one */
        size_t left = (size_t)n;
        while (i < n_iov && left >= iov[i].iov_len)
            left -= iov[i++].iov_len;
        if (left > 0) {
            iov[i].iov_base = (uint8_t *)iov[i].iov_base + left;
            iov[i].iov_len -= left;
        }
    }
    c->len = off + total;
    c->unsynced = 1;
    return CN_OK;
}

int sn_container_sync(struct sn_container *c, char err[CN_ERR_LEN])
{
    if (fdatasync(c->fd) != 0) {
        snprintf(err, CN_ERR_LEN, "fdatasync %s: %s", c->path, strerror(errno));
        return CN_IO;
    }
    c->unsynced = 0;
    return CN_OK;
}

void sn_container_uncache(struct sn_container *c, uint64_t off, uint64_t len)
{
    (void)posix_fadvise(c->fd, (off_t)off, (off_t)len, POSIX_FADV_DONTNEED);
}

int sn_container_truncate(struct sn_container *c, uint64_t len, char err[CN_ERR_LEN])
{
    if (ftruncate(c->fd, (off_t)len) != 0 || fdatasync(c->fd) != 0) {
        snprintf(err, CN_ERR_LEN, "truncate %s: %s", c->path, strerror(errno));
        return CN_IO;
    }
    c->len = len;
    return CN_OK;
}

int sn_container_unlink(struct sn_container *c, const char *dir, char err[CN_ERR_LEN])
{
    if (unlink(c->path) != 0 && errno != ENOENT) {
        snprintf(err, CN_ERR_LEN, "unlink %s: %s", c->path, strerror(errno));
        return CN_IO;
    }
    if (sn_container_sync_dir(dir) != CN_OK) {
        snprintf(err, CN_ERR_LEN, "fsync %s: %s", dir, strerror(errno));
        return CN_IO;
    }
    return CN_OK;
}

int sn_container_read_header(struct sn_container *c, uint64_t off, uint64_t end,
                             struct sn_buf *b, struct sn_record_info *ri,
                             char err[CN_ERR_LEN])
{
    if (off == end)
        return CN_DONE;
    if (end < off || end - off < SN_RECORD_FIXED) {
        snprintf(err, CN_ERR_LEN, "torn record header at %llu", (unsigned long long)off);
        return CN_CORRUPT;
    }
    sn_buf_reserve(b, SN_RECORD_FIXED);
    int rc = sn_container_pread(c, b->p, SN_RECORD_FIXED, off);
    if (rc != CN_OK) {
        snprintf(err, CN_ERR_LEN, "read header at %llu: %s", (unsigned long long)off,
                 cn_rc_str(rc));
        return rc;
    }
    if ((rc = sn_record_parse_fixed(b->p, SN_RECORD_FIXED, ri, err)) != CN_OK)
        return CN_CORRUPT;
    if (end - off < sn_record_total_len(ri)) {
        snprintf(err, CN_ERR_LEN, "torn record at %llu (needs %llu bytes, %llu left)",
                 (unsigned long long)off, (unsigned long long)sn_record_total_len(ri),
                 (unsigned long long)(end - off));
        return CN_CORRUPT;
    }
    sn_buf_reserve(b, ri->hdr_len);
    rc = sn_container_pread(c, b->p + SN_RECORD_FIXED, ri->hdr_len - SN_RECORD_FIXED,
                            off + SN_RECORD_FIXED);
    if (rc != CN_OK) {
        snprintf(err, CN_ERR_LEN, "read header at %llu: %s", (unsigned long long)off,
                 cn_rc_str(rc));
        return rc;
    }
    if (sn_record_parse(b->p, ri->hdr_len, ri, err) != CN_OK)
        return CN_CORRUPT;
    return CN_OK;
}
