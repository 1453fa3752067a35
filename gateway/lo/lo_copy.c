/* Chunked server-side copy (lo_copy.h): one source read in flight at a
 * time, each a whole source chunk (or the part of it in range), fed to the
 * writer; a full writer parks the next read until a chunk write answers. */
#include "lo_copy.h"

#include <stdio.h>
#include <string.h>

#include "checksum.h"
#include "lo_writer.h"

#include "cn/alloc.h"
#include "cn/log.h"

struct gw_lo_copy {
    const struct gw_lo_env *lo;
    char src[GW_KEYS_MAX];
    size_t src_len;
    struct gw_lo_map map;
    uint64_t next, end;          /* source offsets still to read */
    struct gw_lo_writer *writer;
    struct evbuffer *pending;    /* read but not yet taken by the writer */
    struct gw_checksum md5;
    char md5_hex[GW_CHECKSUM_HEX_MAX];
    gw_lo_copy_cb cb;
    void *arg;
    int reading;                 /* a source read is in flight */
    int finished;                /* cb ran */
    int freed;                   /* the owner let go */
    int committed;
    uint64_t reqid;
    struct event *kick;          /* the first step, from the loop */
};

static void gw_lo_copy_destroy(struct gw_lo_copy *c)
{
    if (!c->committed)
        gw_lo_writer_abandon(c->writer);
    evbuffer_free(c->pending);
    event_free(c->kick);
    gw_checksum_fini(&c->md5);
    gw_lo_map_fini(&c->map);
    cn_free(c);
}

static void gw_lo_copy_finish(struct gw_lo_copy *c, int rc, const char *err)
{
    if (c->finished)
        return;
    c->finished = 1;
    if (rc == CN_OK) {
        gw_checksum_final(&c->md5);
        gw_checksum_hex(&c->md5, GW_CHECKSUM_MD5, c->md5_hex);
    }
    c->cb(rc, err, c->arg);
}

static void gw_lo_copy_pump(struct gw_lo_copy *c);

static void gw_lo_copy_on_read(struct gw_store_result *res, void *arg)
{
    struct gw_lo_copy *c = arg;
    c->reading = 0;
    if (c->freed) {
        gw_lo_copy_destroy(c);
        return;
    }
    if (res->rc != CN_OK) {
        char err[CN_ERR_LEN + 32];
        snprintf(err, sizeof(err), "copy source read failed: %s", res->err);
        gw_lo_copy_finish(c, res->rc, err);
        return;
    }
    const struct msg *m = &res->reply->m;
    gw_checksum_update(&c->md5, m->payload.ptr, m->payload.len);
    c->next += m->payload.len;
    gw_storage_reply_move_payload(res->reply, c->pending);
    gw_lo_copy_pump(c);
}

/* Feeds what was read; reads the next slice when the writer took it all. */
static void gw_lo_copy_pump(struct gw_lo_copy *c)
{
    if (c->finished || c->reading)
        return;
    int last = c->next == c->end;
    int rc = gw_lo_writer_feed(c->writer, c->pending, last);
    if (rc == CN_ERR) {
        gw_lo_copy_finish(c, gw_lo_writer_rc(c->writer), gw_lo_writer_error(c->writer));
        return;
    }
    if (rc == CN_AGAIN)
        return; /* the writer calls back when a chunk is stored */
    if (last) {
        if (gw_lo_writer_inflight(c->writer) == 0)
            gw_lo_copy_finish(c, CN_OK, NULL);
        return;
    }
    struct gw_lo_slice s;
    gw_lo_map_slice(&c->map, c->next, c->end, UINT64_MAX, &s);
    char key[GW_LO_KEY_MAX];
    size_t kl = gw_lo_map_chunk_key(key, c->src, c->src_len, c->map.segs[s.seg].ver, s.chunk);
    c->reading = 1;
    gw_store_get(c->lo->store, key, kl, 0, s.off, s.len, gw_lo_copy_on_read, c);
}

static void gw_lo_copy_on_writer(struct gw_lo_writer *w, void *arg)
{
    (void)w;
    gw_lo_copy_pump(arg);
}

static void gw_lo_copy_on_kick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gw_lo_copy_pump(arg);
}

struct gw_lo_copy *gw_lo_copy_start(const struct gw_lo_env *lo, const char *src_okey,
                                    size_t src_okey_len, struct gw_lo_map *map, uint64_t first,
                                    uint64_t len, const char *dst_okey, size_t dst_okey_len,
                                    uint64_t ver, uint64_t reqid, gw_lo_copy_cb cb, void *arg)
{
    CN_ASSERT(src_okey_len <= GW_KEYS_MAX && first + len <= map->size);
    struct gw_lo_copy *c = cn_calloc(1, sizeof(*c));
    c->lo = lo;
    memcpy(c->src, src_okey, src_okey_len);
    c->src_len = src_okey_len;
    c->map = *map;
    memset(map, 0, sizeof(*map));
    c->next = first;
    c->end = first + len;
    c->pending = evbuffer_new();
    gw_checksum_init(&c->md5, GW_CHECKSUM_BIT(GW_CHECKSUM_MD5));
    c->cb = cb;
    c->arg = arg;
    c->reqid = reqid;
    struct gw_lo_writer_config wc = {
        .store = lo->store, .reclaim = lo->reclaim,
        .okey = dst_okey, .okey_len = dst_okey_len, .ver = ver,
        .chunk_len = lo->chunk_len,
        .max_inflight = lo->write_inflight, .reqid = reqid, .pool = lo->pool,
    };
    c->writer = gw_lo_writer_new(&wc, gw_lo_copy_on_writer, c);
    /* first step from the loop: cb must never run inside this call */
    c->kick = evtimer_new(lo->base, gw_lo_copy_on_kick, c);
    struct timeval now = {0, 0};
    evtimer_add(c->kick, &now);
    return c;
}

void gw_lo_copy_seg(const struct gw_lo_copy *c, struct gw_lo_seg *out)
{
    gw_lo_writer_seg(c->writer, out);
}

const char *gw_lo_copy_md5(const struct gw_lo_copy *c)
{
    return c->md5_hex;
}

void gw_lo_copy_commit(struct gw_lo_copy *c)
{
    CN_ASSERT(c->finished && !c->committed);
    c->committed = 1;
    gw_lo_writer_commit(c->writer);
    c->writer = NULL;
}

void gw_lo_copy_free(struct gw_lo_copy *c)
{
    if (c == NULL)
        return;
    c->freed = 1;
    if (!c->reading)
        gw_lo_copy_destroy(c);
}
