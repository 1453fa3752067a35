/* A bucket's CORS configuration: its rules, their stored form (msgpack,
 * kept under "cors" in the bucket record's meta, bucket_meta.h), the
 * GetBucketCors document, and the matching of a browser's request against
 * them. No I/O: s3_cors.c runs the operations and the preflight. */
#ifndef GW_CORS_H
#define GW_CORS_H

#include <stddef.h>
#include <stdint.h>

#include "cn/rc.h"

struct gw_xml_writer;

#define GW_CORS_MAX_RULES 100
#define GW_CORS_MAX_BYTES (64u * 1024)   /* a PutBucketCors body */
#define GW_CORS_ID_MAX 255

/* AllowedMethod bits */
#define GW_CORS_GET 1u
#define GW_CORS_PUT 2u
#define GW_CORS_POST 4u
#define GW_CORS_DELETE 8u
#define GW_CORS_HEAD 16u

/* A list of heap strings (NUL-terminated; XML and the stored form carry no
 * NUL). */
struct gw_cors_list {
    char **v;
    size_t n;
};

struct gw_cors_rule {
    char *id;                      /* NULL: none */
    unsigned methods;              /* GW_CORS_* */
    struct gw_cors_list origins;   /* at most one '*' each */
    struct gw_cors_list headers;   /* AllowedHeader, at most one '*' each */
    struct gw_cors_list expose;    /* ExposeHeader */
    int64_t max_age;               /* -1: none */
};

struct gw_cors {
    struct gw_cors_rule *rules;
    size_t n_rules;
};

/* Frees what c holds and empties it (safe on an empty one). */
void gw_cors_fini(struct gw_cors *c);

/* Appends an empty rule (max_age -1) and returns it. */
struct gw_cors_rule *gw_cors_add_rule(struct gw_cors *c);
/* Appends a copy of s[len] to l. */
void gw_cors_list_add(struct gw_cors_list *l, const char *s, size_t len);

/* The GW_CORS_* bit of an AllowedMethod (case-sensitive, as S3), or 0. */
unsigned gw_cors_method_bit(const char *m, size_t len);
/* How many '*' s[len] holds. */
size_t gw_cors_stars(const char *s, size_t len);

/* The stored form: *out cn_malloc'd (the caller frees), *len its size. */
void gw_cors_encode(const struct gw_cors *c, char **out, size_t *len);
/* Reads the stored form into c (empty before). Returns CN_OK or CN_INVAL
 * when the bytes are not a configuration this gateway wrote (then c is
 * empty). */
int gw_cors_decode(struct gw_cors *c, const void *bytes, size_t len);

/* Writes <CORSConfiguration> with every rule, as GetBucketCors answers. */
void gw_cors_write_xml(const struct gw_cors *c, struct gw_xml_writer *w);

/* The first rule that allows origin[olen] with the method m[mlen] (an HTTP
 * method: for a preflight, its Access-Control-Request-Method) and, when
 * req_headers is not NULL, every name of that comma-separated list (a
 * preflight's Access-Control-Request-Headers; names compare
 * case-insensitively). NULL when none does. */
const struct gw_cors_rule *gw_cors_match(const struct gw_cors *c, const char *origin,
                                         size_t olen, const char *m, size_t mlen,
                                         const char *req_headers, size_t hlen);

/* Joins rule's methods ("GET, PUT") or list l (", ") into out[cap]
 * (NUL-terminated, cut short when full); returns the length. */
size_t gw_cors_methods_str(const struct gw_cors_rule *rule, char *out, size_t cap);
size_t gw_cors_list_str(const struct gw_cors_list *l, char *out, size_t cap);

/* 1 when rule allows any origin ("*" among its origins). */
int gw_cors_rule_any_origin(const struct gw_cors_rule *rule);

#endif
