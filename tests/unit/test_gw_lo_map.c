/* Chunk maps: slicing never crosses a chunk and covers a range exactly
 * (uneven multipart segments included), strict decoding of outside bytes,
 * chunk keys and the "<etag> <size>" etag field. */
#include <stdlib.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/test.h"
#include "lo_map.h"
#include "msg/msg.h"
#include "store.h"

CN_TEST_GLOBALS;

/* Walks [a, b) in slices and checks each against the segment layout. */
static void check_cover(const struct gw_lo_map *m, uint64_t a, uint64_t b, uint64_t max)
{
    uint64_t pos = a;
    while (pos < b) {
        struct gw_lo_slice s;
        gw_lo_map_slice(m, pos, b, max, &s);
        const struct gw_lo_seg *seg = &m->segs[s.seg];
        CN_CHECK(s.len > 0 && s.len <= max);
        CN_CHECK(s.off + s.len <= s.chunk_size);
        CN_CHECK(s.chunk_size == gw_lo_seg_chunk_size(seg, s.chunk));
        CN_CHECK(m->starts[s.seg] + (uint64_t)s.chunk * seg->chunk_len + s.off == pos);
        pos += s.len;
    }
    CN_CHECK(pos == b);
}

static void test_slices(void)
{
    struct gw_lo_seg segs[] = {
        {1, 5000, 1000}, {2, 0, 1000}, {3, 7, 1000}, {4, 8192, 4096}, {5, 1, 1},
    };
    struct gw_lo_map m;
    CN_CHECK_EQ_INT(gw_lo_map_init(&m, segs, 5, 1), CN_OK);
    CN_CHECK_EQ_INT(m.size, 5000 + 7 + 8192 + 1);
    CN_CHECK_EQ_INT(gw_lo_seg_chunks(&segs[0]), 5);
    CN_CHECK_EQ_INT(gw_lo_seg_chunks(&segs[1]), 0);
    CN_CHECK_EQ_INT(gw_lo_seg_chunks(&segs[3]), 2);
    struct gw_lo_slice s;
    gw_lo_map_slice(&m, 999, m.size, 512, &s);
    CN_CHECK(s.seg == 0 && s.chunk == 0 && s.off == 999 && s.len == 1);
    gw_lo_map_slice(&m, 5000, m.size, 512, &s); /* skips the empty part */
    CN_CHECK(s.seg == 2 && s.chunk == 0 && s.off == 0 && s.len == 7);
    gw_lo_map_slice(&m, m.size - 1, m.size, 512, &s);
    CN_CHECK(s.seg == 4 && s.len == 1);
    srand(1);
    for (int i = 0; i < 2000; i++) {
        uint64_t a = (uint64_t)rand() % m.size;
        uint64_t b = a + 1 + (uint64_t)rand() % (m.size - a);
        check_cover(&m, a, b, 1 + (uint64_t)rand() % 3000);
    }
    check_cover(&m, 0, m.size, 1);
    gw_lo_map_fini(&m);
    CN_CHECK_EQ_INT(gw_lo_map_init(&m, segs, 0, 0), CN_INVAL);
    struct gw_lo_seg bad = {1, 10, 0};
    CN_CHECK_EQ_INT(gw_lo_map_init(&m, &bad, 1, 0), CN_INVAL);
}

static void test_codec(void)
{
    struct gw_lo_seg segs[] = {{0xFFFFFFFFFFFFFFFFull, 5u << 20, 5u << 20}, {7, 123, 64}};
    struct gw_lo_map m, d;
    CN_CHECK_EQ_INT(gw_lo_map_init(&m, segs, 2, 1), CN_OK);
    char *bytes;
    size_t len;
    gw_lo_map_encode(&m, &bytes, &len);
    CN_CHECK_EQ_INT(gw_lo_map_decode(&d, bytes, len), CN_OK);
    CN_CHECK(d.n_segs == 2 && d.multipart == 1 && d.size == m.size);
    /* field by field: the struct's tail padding is not initialized in segs[] */
    for (size_t i = 0; i < 2; i++)
        CN_CHECK(d.segs[i].ver == segs[i].ver && d.segs[i].size == segs[i].size &&
                 d.segs[i].chunk_len == segs[i].chunk_len);
    gw_lo_map_fini(&d);
    /* every truncation and a flipped size byte are refused */
    for (size_t i = 0; i < len; i++)
        CN_CHECK_EQ_INT(gw_lo_map_decode(&d, bytes, i), CN_INVAL);
    char *bad = cn_memdup(bytes, len);
    bad[5] ^= 1; /* inside "sz"'s value */
    CN_CHECK_EQ_INT(gw_lo_map_decode(&d, bad, len), CN_INVAL);
    cn_free(bad);
    static const unsigned char wrong_type[] = {0x81, 0xa1, 's', 0x91, 0x93, 1, 2, 0};
    CN_CHECK_EQ_INT(gw_lo_map_decode(&d, wrong_type, sizeof(wrong_type)), CN_INVAL);
    CN_CHECK_EQ_INT(gw_lo_map_decode(&d, "", 0), CN_INVAL);
    cn_free(bytes);
    gw_lo_map_fini(&m);
}

static void test_keys_and_etags(void)
{
    char out[GW_LO_KEY_MAX];
    size_t n = gw_lo_map_chunk_key(out, "o/b/k/x", 7, 0xab, 3);
    CN_CHECK_EQ_INT(n, 7 + 1 + 16 + 1 + 8);
    CN_CHECK(memcmp(out, "c/b/k/x\0" "00000000000000ab/00000003", n) == 0);
    /* the version-2 form, as a node of version 3 folds it for an older
     * reader (msg_osize_fold) and as gateways before version 3 wrote it */
    uint8_t e[MSG_ETAG_FOLD_MAX + 1];
    size_t el = msg_osize_fold(e, (const uint8_t *)"abc-2", 5, 12345);
    e[el] = '\0';
    CN_CHECK_EQ_STR((const char *)e, "abc-2 12345");
    size_t tl;
    uint64_t size;
    CN_CHECK(gw_lo_map_etag_split((const char *)e, el, &tl, &size) == 1 && tl == 5 &&
             size == 12345);
    /* the largest osize folds and reads back */
    el = msg_osize_fold(e, (const uint8_t *)"abc-2", 5, UINT64_MAX);
    CN_CHECK(el <= MSG_ETAG_FOLD_MAX);
    CN_CHECK(gw_lo_map_etag_split((const char *)e, el, &tl, &size) == 1 && size == UINT64_MAX);
    CN_CHECK(gw_lo_map_etag_split("0123abcd", 8, &tl, &size) == 0 && tl == 8);
    CN_CHECK(gw_lo_map_etag_split("a b", 3, &tl, &size) == 0);
    CN_CHECK(gw_lo_map_etag_split("a ", 2, &tl, &size) == 0);
    CN_CHECK(gw_lo_map_etag_split(" 1", 2, &tl, &size) == 0);
    CN_CHECK(gw_lo_map_etag_split("a 99999999999999999999", 22, &tl, &size) == 0);
}

/* The parent record of a large object: its data decodes to the segments it
 * was built over, and its osize is the sum of the segment sizes. */
static void test_parent(void)
{
    const struct gw_lo_seg one = {7, 5000, 1024};
    uint64_t osize = 0;
    struct gw_blob *b = gw_lo_map_parent(&one, 1, 0, &osize);
    CN_CHECK_EQ_INT(osize, 5000);
    struct gw_lo_map m;
    CN_CHECK_EQ_INT(gw_lo_map_decode(&m, gw_blob_data(b), gw_blob_len(b)), CN_OK);
    CN_CHECK(m.n_segs == 1 && !m.multipart && m.size == 5000);
    CN_CHECK(m.segs[0].ver == 7 && m.segs[0].size == 5000 && m.segs[0].chunk_len == 1024);
    gw_lo_map_fini(&m);
    gw_blob_unref(b);

    const struct gw_lo_seg parts[3] = {{1, 6000, 4096}, {2, 6000, 4096}, {3, 10, 4096}};
    b = gw_lo_map_parent(parts, 3, 1, &osize);
    CN_CHECK_EQ_INT(osize, 12010);
    CN_CHECK_EQ_INT(gw_lo_map_decode(&m, gw_blob_data(b), gw_blob_len(b)), CN_OK);
    CN_CHECK(m.n_segs == 3 && m.multipart && m.size == 12010);
    for (int i = 0; i < 3; i++)
        CN_CHECK(m.segs[i].ver == parts[i].ver && m.segs[i].size == parts[i].size &&
                 m.segs[i].chunk_len == parts[i].chunk_len);
    gw_lo_map_fini(&m);
    gw_blob_unref(b);
}

/* The one reader of a record's size reads both forms alike: the osize field
 * (protocol version 3) and the "<etag> <size>" etag written before it (or
 * folded by a node for an older reader); a plain etag is a small object. */
static void test_record_size(void)
{
    size_t tl = 0;
    uint64_t size = 0;
    CN_CHECK(gw_lo_map_record_size("d41d8cd9-3", 10, 1, 12010, &tl, &size) == 1);
    CN_CHECK(tl == 10 && size == 12010);
    CN_CHECK(gw_lo_map_record_size("d41d8cd9-3 12010", 16, 0, 0, &tl, &size) == 1);
    CN_CHECK(tl == 10 && size == 12010);
    size = 7;
    CN_CHECK(gw_lo_map_record_size("0123abcd", 8, 0, 0, &tl, &size) == 0);
    CN_CHECK(tl == 8 && size == 7);
    /* with osize, the whole etag is the ETag, spaces or not */
    CN_CHECK(gw_lo_map_record_size("a 5", 3, 1, 99, &tl, &size) == 1 && tl == 3 && size == 99);

    /* a reply: the field, or the folded form a node of version 3 sends a
     * request of version < 3, read as the same object */
    struct msg m;
    memset(&m, 0, sizeof(m));
    m.etag = (struct msg_bytes){(const uint8_t *)"abc-2", 5};
    MSG_SET(&m, MSG_F_ETAG);
    m.osize = 1ull << 40;
    MSG_SET(&m, MSG_F_OSIZE);
    CN_CHECK(gw_lo_map_reply_size(&m, &tl, &size) == 1 && tl == 5 && size == 1ull << 40);
    uint8_t buf[MSG_ETAG_FOLD_MAX];
    msg_osize_downgrade(&m, buf);
    CN_CHECK(!MSG_HAS(&m, MSG_F_OSIZE));
    CN_CHECK(gw_lo_map_reply_size(&m, &tl, &size) == 1 && tl == 5 && size == 1ull << 40);
    memset(&m, 0, sizeof(m));   /* no etag at all: a small object */
    CN_CHECK(gw_lo_map_reply_size(&m, &tl, &size) == 0 && tl == 0);
}

static const struct cn_test_case cases[] = {
    {"slices", test_slices},
    {"record_size", test_record_size},
    {"codec", test_codec},
    {"keys_and_etags", test_keys_and_etags},
    {"parent", test_parent},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
