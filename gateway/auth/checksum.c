/* Streaming body checksums over OpenSSL (MD5, SHA-1, SHA-256), zlib and
 * ISA-L (CRC32, CRC32C through cn/crc.h) and a slice-by-8 CRC-64/NVME
 * (ISA-L 2.30, the Debian 12 one, has no NVMe polynomial). */
#include "checksum.h"

#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "cn/crc.h"
#include "cn/hex.h"
#include "cn/rc.h"

/* ---- CRC-64/NVME ----------------------------------------------------- */

/* CRC-64/NVME: reflected polynomial 0x9a6c9329ac4bc9b5 (normal form
 * 0xad93d23594c93659), init and final xor all ones; check("123456789") =
 * 0xae8b14860a799888. Tables are built once on first use. */
#define GW_CHECKSUM_CRC64_POLY 0x9a6c9329ac4bc9b5ull

static uint64_t gw_checksum_crc64_table[8][256];
static int gw_checksum_crc64_ready;

static void gw_checksum_crc64_init_tables(void)
{
    for (int i = 0; i < 256; i++) {
        uint64_t c = (uint64_t)i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ GW_CHECKSUM_CRC64_POLY : c >> 1;
        gw_checksum_crc64_table[0][i] = c;
    }
    for (int i = 0; i < 256; i++) {
        uint64_t c = gw_checksum_crc64_table[0][i];
        for (int t = 1; t < 8; t++) {
            c = gw_checksum_crc64_table[0][c & 0xff] ^ (c >> 8);
            gw_checksum_crc64_table[t][i] = c;
        }
    }
    __atomic_store_n(&gw_checksum_crc64_ready, 1, __ATOMIC_RELEASE);
}

uint64_t gw_checksum_crc64nvme(uint64_t crc, const void *p, size_t n)
{
    /* Building the tables twice from two threads writes the same values, so
     * the race is benign; the flag only saves the work. */
    if (!__atomic_load_n(&gw_checksum_crc64_ready, __ATOMIC_ACQUIRE))
        gw_checksum_crc64_init_tables();
    const unsigned char *b = p;
    uint64_t c = ~crc;
    const uint64_t (*t)[256] = gw_checksum_crc64_table;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, b, 8);   /* little-endian host assumed (x86-64, arm64) */
        c ^= w;
        c = t[7][c & 0xff] ^ t[6][(c >> 8) & 0xff] ^ t[5][(c >> 16) & 0xff] ^
            t[4][(c >> 24) & 0xff] ^ t[3][(c >> 32) & 0xff] ^ t[2][(c >> 40) & 0xff] ^
            t[1][(c >> 48) & 0xff] ^ t[0][c >> 56];
        b += 8;
        n -= 8;
    }
    while (n-- > 0)
        c = t[0][(c ^ *b++) & 0xff] ^ (c >> 8);
    return ~c;
}

/* ---- algorithm table ------------------------------------------------- */

struct gw_checksum_algo_desc {
    const char *name;
    const char *header;
    size_t len;
};

static const struct gw_checksum_algo_desc gw_checksum_algos[GW_CHECKSUM_ALGO_COUNT] = {
    [GW_CHECKSUM_CRC32] = {"CRC32", "x-amz-checksum-crc32", 4},
    [GW_CHECKSUM_CRC32C] = {"CRC32C", "x-amz-checksum-crc32c", 4},
    [GW_CHECKSUM_CRC64NVME] = {"CRC64NVME", "x-amz-checksum-crc64nvme", 8},
    [GW_CHECKSUM_SHA1] = {"SHA1", "x-amz-checksum-sha1", 20},
    [GW_CHECKSUM_SHA256] = {"SHA256", "x-amz-checksum-sha256", 32},
    [GW_CHECKSUM_MD5] = {"MD5", NULL, 16},
};

static int gw_checksum_algo_ok(enum gw_checksum_algo a)
{
    return (int)a >= 0 && a < GW_CHECKSUM_ALGO_COUNT;
}

size_t gw_checksum_digest_len(enum gw_checksum_algo algo)
{
    return gw_checksum_algo_ok(algo) ? gw_checksum_algos[algo].len : 0;
}

const char *gw_checksum_algo_name(enum gw_checksum_algo algo)
{
    return gw_checksum_algo_ok(algo) ? gw_checksum_algos[algo].name : "?";
}

const char *gw_checksum_header_name(enum gw_checksum_algo algo)
{
    return gw_checksum_algo_ok(algo) ? gw_checksum_algos[algo].header : NULL;
}

int gw_checksum_algo_from_name(const char *name, size_t len, enum gw_checksum_algo *algo)
{
    for (int a = 0; a < GW_CHECKSUM_ALGO_COUNT; a++) {
        const char *n = gw_checksum_algos[a].name;
        if (a != GW_CHECKSUM_MD5 && strlen(n) == len && strncasecmp(n, name, len) == 0) {
            *algo = (enum gw_checksum_algo)a;
            return CN_OK;
        }
    }
    return CN_NOTFOUND;
}

int gw_checksum_algo_from_header(const char *name, size_t len, enum gw_checksum_algo *algo)
{
    for (int a = 0; a < GW_CHECKSUM_ALGO_COUNT; a++) {
        const char *h = gw_checksum_algos[a].header;
        if (h != NULL && strlen(h) == len && strncasecmp(h, name, len) == 0) {
            *algo = (enum gw_checksum_algo)a;
            return CN_OK;
        }
    }
    return CN_NOTFOUND;
}

/* ---- streaming ------------------------------------------------------- */

static const EVP_MD *gw_checksum_evp(enum gw_checksum_algo a)
{
    switch (a) {
    case GW_CHECKSUM_SHA1: return EVP_sha1();
    case GW_CHECKSUM_SHA256: return EVP_sha256();
    case GW_CHECKSUM_MD5: return EVP_md5();
    default: return NULL;
    }
}

int gw_checksum_init(struct gw_checksum *c, unsigned want)
{
    memset(c, 0, sizeof(*c));
    c->want = want & ((1u << GW_CHECKSUM_ALGO_COUNT) - 1);
    for (int a = 0; a < GW_CHECKSUM_ALGO_COUNT; a++) {
        const EVP_MD *md = gw_checksum_evp((enum gw_checksum_algo)a);
        if (md == NULL || !(c->want & GW_CHECKSUM_BIT(a)))
            continue;
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        if (ctx == NULL || EVP_DigestInit_ex(ctx, md, NULL) != 1) {
            EVP_MD_CTX_free(ctx);
            gw_checksum_fini(c);
            return CN_ERR;
        }
        c->md[a] = ctx;
    }
    return CN_OK;
}

void gw_checksum_update(struct gw_checksum *c, const void *p, size_t n)
{
    CN_ASSERT(!c->finished);
    c->bytes += n;
    if (c->want & GW_CHECKSUM_BIT(GW_CHECKSUM_CRC32))
        c->crc32 = cn_crc32(c->crc32, p, n);
    if (c->want & GW_CHECKSUM_BIT(GW_CHECKSUM_CRC32C))
        c->crc32c = cn_crc32c(c->crc32c, p, n);
    if (c->want & GW_CHECKSUM_BIT(GW_CHECKSUM_CRC64NVME))
        c->crc64 = gw_checksum_crc64nvme(c->crc64, p, n);
    for (int a = 0; a < GW_CHECKSUM_ALGO_COUNT; a++)
        if (c->md[a] != NULL)
            CN_ASSERT(EVP_DigestUpdate(c->md[a], p, n) == 1);
}

static void gw_checksum_put_be(unsigned char *out, uint64_t v, size_t len)
{
    for (size_t i = 0; i < len; i++)
        out[i] = (unsigned char)(v >> (8 * (len - 1 - i)));
}

void gw_checksum_final(struct gw_checksum *c)
{
    if (c->finished)
        return;
    c->finished = 1;
    gw_checksum_put_be(c->digest[GW_CHECKSUM_CRC32], c->crc32, 4);
    gw_checksum_put_be(c->digest[GW_CHECKSUM_CRC32C], c->crc32c, 4);
    gw_checksum_put_be(c->digest[GW_CHECKSUM_CRC64NVME], c->crc64, 8);
    for (int a = 0; a < GW_CHECKSUM_ALGO_COUNT; a++) {
        if (c->md[a] == NULL)
            continue;
        unsigned int n = 0;
        CN_ASSERT(EVP_DigestFinal_ex(c->md[a], c->digest[a], &n) == 1);
    }
}

void gw_checksum_fini(struct gw_checksum *c)
{
    for (int a = 0; a < GW_CHECKSUM_ALGO_COUNT; a++) {
        EVP_MD_CTX_free(c->md[a]);
        c->md[a] = NULL;
    }
}

uint64_t gw_checksum_bytes(const struct gw_checksum *c)
{
    return c->bytes;
}

size_t gw_checksum_digest(const struct gw_checksum *c, enum gw_checksum_algo algo,
                          unsigned char out[GW_CHECKSUM_MAX_DIGEST])
{
    if (!gw_checksum_algo_ok(algo) || !c->finished || !(c->want & GW_CHECKSUM_BIT(algo)))
        return 0;
    size_t n = gw_checksum_algos[algo].len;
    memcpy(out, c->digest[algo], n);
    return n;
}

int gw_checksum_base64(const struct gw_checksum *c, enum gw_checksum_algo algo,
                       char out[GW_CHECKSUM_B64_MAX])
{
    unsigned char d[GW_CHECKSUM_MAX_DIGEST];
    size_t n = gw_checksum_digest(c, algo, d);
    if (n == 0)
        return CN_INVAL;
    gw_checksum_base64_encode(d, n, out);
    return CN_OK;
}

int gw_checksum_hex(const struct gw_checksum *c, enum gw_checksum_algo algo,
                    char out[GW_CHECKSUM_HEX_MAX])
{
    unsigned char d[GW_CHECKSUM_MAX_DIGEST];
    size_t n = gw_checksum_digest(c, algo, d);
    if (n == 0)
        return CN_INVAL;
    cn_hex_encode(d, n, out);
    return CN_OK;
}

int gw_checksum_verify_base64(const struct gw_checksum *c, enum gw_checksum_algo algo,
                              const char *b64, size_t len)
{
    unsigned char want[GW_CHECKSUM_MAX_DIGEST], got[GW_CHECKSUM_MAX_DIGEST];
    size_t n = gw_checksum_digest(c, algo, want), m = 0;
    if (n == 0 || gw_checksum_base64_decode(b64, len, got, sizeof(got), &m) != CN_OK ||
        m != n)
        return CN_INVAL;
    return CRYPTO_memcmp(want, got, n) == 0 ? CN_OK : CN_CORRUPT;
}

int gw_checksum_verify_hex(const struct gw_checksum *c, enum gw_checksum_algo algo,
                           const char *hex, size_t len)
{
    unsigned char want[GW_CHECKSUM_MAX_DIGEST], got[GW_CHECKSUM_MAX_DIGEST];
    size_t n = gw_checksum_digest(c, algo, want);
    if (n == 0 || len != 2 * n || cn_hex_decode(hex, len, got, sizeof(got)) != CN_OK)
        return CN_INVAL;
    return CRYPTO_memcmp(want, got, n) == 0 ? CN_OK : CN_CORRUPT;
}

/* ---- one-shot helpers ------------------------------------------------ */

void gw_checksum_sha256_hex(const void *p, size_t n, char out[GW_CHECKSUM_HEX_MAX])
{
    unsigned char d[32];
    unsigned int dl = 0;
    CN_ASSERT(EVP_Digest(p, n, d, &dl, EVP_sha256(), NULL) == 1);
    cn_hex_encode(d, 32, out);
}

void gw_checksum_md5(const void *p, size_t n, unsigned char out[16])
{
    unsigned int dl = 0;
    CN_ASSERT(EVP_Digest(p, n, out, &dl, EVP_md5(), NULL) == 1);
}

int gw_checksum_content_md5_parse(const char *b64, size_t len, unsigned char md5[16])
{
    size_t n = 0;
    unsigned char tmp[18];
    if (gw_checksum_base64_decode(b64, len, tmp, sizeof(tmp), &n) != CN_OK || n != 16)
        return CN_INVAL;
    memcpy(md5, tmp, 16);
    return CN_OK;
}

void gw_checksum_multipart_etag(const unsigned char (*part_md5s)[16], size_t n,
                                char out[GW_CHECKSUM_MULTIPART_ETAG_MAX])
{
    unsigned char d[16];
    unsigned int dl = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    CN_ASSERT(ctx != NULL && EVP_DigestInit_ex(ctx, EVP_md5(), NULL) == 1);
    for (size_t i = 0; i < n; i++)
        CN_ASSERT(EVP_DigestUpdate(ctx, part_md5s[i], 16) == 1);
    CN_ASSERT(EVP_DigestFinal_ex(ctx, d, &dl) == 1);
    EVP_MD_CTX_free(ctx);
    cn_hex_encode(d, 16, out);
    snprintf(out + 32, GW_CHECKSUM_MULTIPART_ETAG_MAX - 32, "-%zu", n);
}

int gw_checksum_composite(enum gw_checksum_algo algo, const char *const *part_b64, size_t n,
                          char out[GW_CHECKSUM_COMPOSITE_MAX])
{
    size_t dl = gw_checksum_digest_len(algo);
    if (dl == 0 || algo == GW_CHECKSUM_MD5 || n == 0)
        return CN_INVAL;
    struct gw_checksum c;
    if (gw_checksum_init(&c, GW_CHECKSUM_BIT(algo)) != CN_OK)
        return CN_ERR;
    int rc = CN_OK;
    for (size_t i = 0; i < n && rc == CN_OK; i++) {
        unsigned char d[GW_CHECKSUM_MAX_DIGEST];
        size_t got = 0;
        if (gw_checksum_base64_decode(part_b64[i], strlen(part_b64[i]), d, sizeof(d), &got) !=
                CN_OK ||
            got != dl)
            rc = CN_INVAL;
        else
            gw_checksum_update(&c, d, dl);
    }
    if (rc == CN_OK) {
        gw_checksum_final(&c);
        char b64[GW_CHECKSUM_B64_MAX];
        rc = gw_checksum_base64(&c, algo, b64);
        if (rc == CN_OK)
            snprintf(out, GW_CHECKSUM_COMPOSITE_MAX, "%s-%zu", b64, n);
    }
    gw_checksum_fini(&c);
    return rc;
}

/* ---- combining CRCs -------------------------------------------------- */

/* CRC(A || B) from CRC(A), CRC(B) and len(B), for the reflected CRCs here
 * (init and final xor all ones): CRC(A) is advanced over len(B) zero bytes
 * with the operator "append one zero bit" squared up to a byte and then by
 * repeated squaring over len(B)'s bits, as zlib's crc32_combine() does, for
 * a width of 32 or 64 bits. */
static uint64_t gw_checksum_gf2_times(const uint64_t *mat, uint64_t vec)
{
    uint64_t sum = 0;
    for (; vec != 0; vec >>= 1, mat++)
        if (vec & 1)
            sum ^= *mat;
    return sum;
}

static void gw_checksum_gf2_square(uint64_t *sq, const uint64_t *mat, int width)
{
    for (int n = 0; n < width; n++)
        sq[n] = gw_checksum_gf2_times(mat, mat[n]);
}

static uint64_t gw_checksum_crc_combine(uint64_t crc1, uint64_t crc2, uint64_t len2,
                                        uint64_t poly, int width)
{
    if (len2 == 0)
        return crc1 ^ crc2;
    uint64_t even[64], odd[64];
    odd[0] = poly; /* the operator for one zero bit */
    for (int n = 1; n < width; n++)
        odd[n] = (uint64_t)1 << (n - 1);
    gw_checksum_gf2_square(even, odd, width); /* two zero bits */
    gw_checksum_gf2_square(odd, even, width); /* four */
    for (;;) {
        gw_checksum_gf2_square(even, odd, width); /* 8, 32, ... bits */
        if (len2 & 1)
            crc1 = gw_checksum_gf2_times(even, crc1);
        len2 >>= 1;
        if (len2 == 0)
            break;
        gw_checksum_gf2_square(odd, even, width);
        if (len2 & 1)
            crc1 = gw_checksum_gf2_times(odd, crc1);
        len2 >>= 1;
        if (len2 == 0)
            break;
    }
    return crc1 ^ crc2;
}

int gw_checksum_full_object(enum gw_checksum_algo algo, const char *const *part_b64,
                            const uint64_t *part_len, size_t n, char out[GW_CHECKSUM_B64_MAX])
{
    uint64_t poly;
    int width;
    switch (algo) {
    case GW_CHECKSUM_CRC32: poly = 0xedb88320u; width = 32; break;
    case GW_CHECKSUM_CRC32C: poly = 0x82f63b78u; width = 32; break;
    case GW_CHECKSUM_CRC64NVME: poly = GW_CHECKSUM_CRC64_POLY; width = 64; break;
    default: return CN_INVAL;
    }
    if (n == 0)
        return CN_INVAL;
    size_t dl = (size_t)width / 8;
    uint64_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char d[8];
        size_t got = 0;
        if (gw_checksum_base64_decode(part_b64[i], strlen(part_b64[i]), d, sizeof(d), &got) !=
                CN_OK ||
            got != dl)
            return CN_INVAL;
        uint64_t c = 0;
        for (size_t k = 0; k < dl; k++)
            c = c << 8 | d[k];
        crc = i == 0 ? c : gw_checksum_crc_combine(crc, c, part_len[i], poly, width);
    }
    unsigned char be[8];
    gw_checksum_put_be(be, crc, dl);
    gw_checksum_base64_encode(be, dl, out);
    return CN_OK;
}

/* ---- codecs ---------------------------------------------------------- */

static const char gw_checksum_b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t gw_checksum_base64_encode(const void *in, size_t n, char *out)
{
    const unsigned char *b = in;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)b[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)b[i + 1] << 8;
        if (i + 2 < n)
            v |= b[i + 2];
        out[o++] = gw_checksum_b64_alphabet[(v >> 18) & 63];
        out[o++] = gw_checksum_b64_alphabet[(v >> 12) & 63];
        out[o++] = i + 1 < n ? gw_checksum_b64_alphabet[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? gw_checksum_b64_alphabet[v & 63] : '=';
    }
    out[o] = '\0';
    return o;
}

static int gw_checksum_b64_val(char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '+')
        return 62;
    if (ch == '/')
        return 63;
    return -1;
}

int gw_checksum_base64_decode(const char *in, size_t n, unsigned char *out, size_t cap,
                              size_t *out_len)
{
    if (n % 4 != 0)
        return CN_INVAL;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 4) {
        int last = i + 4 == n;
        int pad = (in[i + 3] == '=') + (in[i + 2] == '=' && in[i + 3] == '=');
        if (pad > 0 && !last)
            return CN_INVAL;
        int v[4];
        for (int k = 0; k < 4 - pad; k++)
            if ((v[k] = gw_checksum_b64_val(in[i + k])) < 0)
                return CN_INVAL;
        size_t bytes = 3 - (size_t)pad;
        if (o + bytes > cap)
            return CN_TOOBIG;
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12;
        if (pad < 2)
            w |= (uint32_t)v[2] << 6;
        if (pad < 1)
            w |= (uint32_t)v[3];
        /* the bits under the padding must be zero (canonical encoding) */
        if ((pad == 1 && (w & 0xff)) || (pad == 2 && (w & 0xffff)))
            return CN_INVAL;
        out[o++] = (unsigned char)(w >> 16);
        if (bytes > 1)
            out[o++] = (unsigned char)(w >> 8);
        if (bytes > 2)
            out[o++] = (unsigned char)w;
    }
    *out_len = o;
    return CN_OK;
}

