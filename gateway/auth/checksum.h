/* Streaming checksums of object bodies: the x-amz-checksum-* family (CRC32,
 * CRC32C, CRC64NVME, SHA1, SHA256), MD5 for the ETag and Content-MD5, and
 * SHA-256 hex for x-amz-content-sha256. One gw_checksum accumulates every
 * wanted sum in one pass over the body. Also the base64 and hex codecs the
 * S3 headers use. */
#ifndef GW_CHECKSUM_H
#define GW_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

enum gw_checksum_algo {
    GW_CHECKSUM_CRC32 = 0,   /* zlib CRC-32, 4 bytes big-endian */
    GW_CHECKSUM_CRC32C,      /* Castagnoli, 4 bytes big-endian */
    GW_CHECKSUM_CRC64NVME,   /* CRC-64/NVME, 8 bytes big-endian */
    GW_CHECKSUM_SHA1,        /* 20 bytes */
    GW_CHECKSUM_SHA256,      /* 32 bytes */
    GW_CHECKSUM_MD5,         /* 16 bytes: ETag, Content-MD5 */
    GW_CHECKSUM_ALGO_COUNT
};

#define GW_CHECKSUM_BIT(a) (1u << (a))
#define GW_CHECKSUM_MAX_DIGEST 32
/* base64 of 32 bytes is 44 chars; +1 NUL */
#define GW_CHECKSUM_B64_MAX 45
/* hex of 32 bytes is 64 chars; +1 NUL */
#define GW_CHECKSUM_HEX_MAX 65

/* Embedded by the caller. Fields are private; use the functions. */
struct gw_checksum {
    unsigned want;           /* GW_CHECKSUM_BIT() set */
    int finished;
    uint64_t bytes;          /* bytes fed so far */
    uint32_t crc32, crc32c;
    uint64_t crc64;
    void *md[GW_CHECKSUM_ALGO_COUNT]; /* EVP_MD_CTX * for SHA1/SHA256/MD5 */
    unsigned char digest[GW_CHECKSUM_ALGO_COUNT][GW_CHECKSUM_MAX_DIGEST];
};

/* Starts the sums named in want (GW_CHECKSUM_BIT(...) ored; 0 is allowed and
 * only counts bytes). Returns CN_OK, or CN_ERR if OpenSSL failed (then
 * nothing needs releasing). Always pair a CN_OK init with gw_checksum_fini(). */
int gw_checksum_init(struct gw_checksum *c, unsigned want);
/* Feeds n bytes (any split gives the same result). Not after _final(). */
void gw_checksum_update(struct gw_checksum *c, const void *p, size_t n);
/* Ends the stream; digests become readable. Idempotent. */
void gw_checksum_final(struct gw_checksum *c);
/* Releases the OpenSSL contexts. Safe on a zeroed struct and twice. */
void gw_checksum_fini(struct gw_checksum *c);
/* Bytes fed so far. */
uint64_t gw_checksum_bytes(const struct gw_checksum *c);

/* After _final(): copies the raw digest of algo (which must be in want) into
 * out and returns its length (gw_checksum_digest_len()); 0 if algo was not
 * wanted or _final() was not called. */
size_t gw_checksum_digest(const struct gw_checksum *c, enum gw_checksum_algo algo,
                          unsigned char out[GW_CHECKSUM_MAX_DIGEST]);
/* The digest as base64 (x-amz-checksum-*, Content-MD5), NUL-terminated.
 * Returns CN_OK, or CN_INVAL if not available (see _digest). */
int gw_checksum_base64(const struct gw_checksum *c, enum gw_checksum_algo algo,
                       char out[GW_CHECKSUM_B64_MAX]);
/* The digest as lower-case hex (ETag, x-amz-content-sha256). */
int gw_checksum_hex(const struct gw_checksum *c, enum gw_checksum_algo algo,
                    char out[GW_CHECKSUM_HEX_MAX]);
/* Compares the digest with a base64 value as a client sent it. Returns
 * CN_OK on a match, CN_CORRUPT on a mismatch (answer BadDigest), CN_INVAL
 * when b64 is not valid base64 of the right length (answer InvalidDigest for
 * Content-MD5, InvalidRequest for x-amz-checksum-*). Constant time. */
int gw_checksum_verify_base64(const struct gw_checksum *c, enum gw_checksum_algo algo,
                              const char *b64, size_t len);
/* Same with lower-case or upper-case hex (x-amz-content-sha256):
 * CN_OK, CN_CORRUPT, CN_INVAL. */
int gw_checksum_verify_hex(const struct gw_checksum *c, enum gw_checksum_algo algo,
                           const char *hex, size_t len);

/* Digest length in bytes of algo; 0 for an invalid value. */
size_t gw_checksum_digest_len(enum gw_checksum_algo algo);
/* "CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256", "MD5": the names of
 * x-amz-checksum-algorithm / x-amz-sdk-checksum-algorithm and of the
 * <ChecksumXXX> XML elements. */
const char *gw_checksum_algo_name(enum gw_checksum_algo algo);
/* "x-amz-checksum-crc32" ... ; NULL for MD5 (it has no such header). */
const char *gw_checksum_header_name(enum gw_checksum_algo algo);
/* Case-insensitive lookups; CN_OK and *algo, or CN_NOTFOUND. from_name does
 * not accept MD5 (it is not an x-amz-checksum-algorithm value). */
int gw_checksum_algo_from_name(const char *name, size_t len, enum gw_checksum_algo *algo);
int gw_checksum_algo_from_header(const char *name, size_t len, enum gw_checksum_algo *algo);

/* One-shot sums. */
uint64_t gw_checksum_crc64nvme(uint64_t crc, const void *p, size_t n); /* start with 0 */
void gw_checksum_sha256_hex(const void *p, size_t n, char out[GW_CHECKSUM_HEX_MAX]);
void gw_checksum_md5(const void *p, size_t n, unsigned char out[16]);

/* Content-MD5: decodes base64 of exactly 16 bytes. CN_OK or CN_INVAL
 * (answer InvalidDigest). */
int gw_checksum_content_md5_parse(const char *b64, size_t len, unsigned char md5[16]);

/* The multipart ETag: hex(md5(md5_1 || ... || md5_n)) + "-" + n, without
 * quotes, NUL-terminated (out needs 32 + 1 + 5 + 1 bytes). n >= 1. */
#define GW_CHECKSUM_MULTIPART_ETAG_MAX 40
void gw_checksum_multipart_etag(const unsigned char (*part_md5s)[16], size_t n,
                                char out[GW_CHECKSUM_MULTIPART_ETAG_MAX]);

/* The COMPOSITE checksum of a multipart upload, as S3 computes it: the
 * algo's checksum of the parts' raw checksums concatenated in part order,
 * base64, then "-" and the part count ("...=-3"). part_b64[i] is part i's
 * base64 checksum. CN_OK; CN_INVAL for MD5, n == 0 or a value that is not
 * base64 of algo's digest length. */
#define GW_CHECKSUM_COMPOSITE_MAX (GW_CHECKSUM_B64_MAX + 6)
int gw_checksum_composite(enum gw_checksum_algo algo, const char *const *part_b64, size_t n,
                          char out[GW_CHECKSUM_COMPOSITE_MAX]);

/* The FULL_OBJECT checksum of a multipart upload: the CRC of the whole
 * object, from the parts' CRCs (base64, part order) and lengths, without
 * reading the data. CRC32, CRC32C and CRC64NVME only (CN_INVAL otherwise,
 * and for n == 0 or a value that is not base64 of the CRC's width). */
int gw_checksum_full_object(enum gw_checksum_algo algo, const char *const *part_b64,
                            const uint64_t *part_len, size_t n, char out[GW_CHECKSUM_B64_MAX]);

/* Standard base64 with padding. encode writes 4*ceil(n/3) chars plus a NUL
 * and returns the length without it (out must have room). decode is strict
 * (padding required, no white space, no trailing bits) and returns CN_OK with
 * *out_len, CN_INVAL on bad input, CN_TOOBIG if out[cap] is too small. */
size_t gw_checksum_base64_encode(const void *in, size_t n, char *out);
int gw_checksum_base64_decode(const char *in, size_t n, unsigned char *out, size_t cap,
                              size_t *out_len);

#endif
