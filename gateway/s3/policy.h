/* Bucket policies: the JSON document of PUT ?policy, checked once when it
 * is stored (gw_policy_parse: jansson, then every field of every statement
 * against the subset cairn evaluates), and evaluated per request
 * (gw_policy_eval) with S3's rule: an explicit Deny wins over any Allow.
 * Pure: no request, no I/O, so that unit tests and the fuzz target drive it.
 *
 * Understood: Version, Id, Statement (one or a list) of Sid, Effect
 * Allow|Deny, Principal ("*", {"AWS": "*" | id | "arn:aws:iam::ID:root" |
 * a list}, {"CanonicalUser": id}) or NotPrincipal (the same objects: the
 * statement applies to every caller they do not name), Action / NotAction ("s3:Name" with * and
 * ? wildcards, "*"), Resource / NotResource ("arn:aws:s3:::bucket" or
 * "arn:aws:s3:::bucket/key-pattern", wildcards), Condition with IpAddress /
 * NotIpAddress on aws:SourceIp (CIDR, IPv4 and IPv6) and StringEquals /
 * StringNotEquals / StringLike / StringNotLike on s3:prefix, Bool on
 * aws:SecureTransport ("true"/"false": the request came over HTTPS). Anything else
 * (another operator or key, a resource outside the bucket) is
 * refused as MalformedPolicy rather than evaluated loosely. */
#ifndef GW_POLICY_H
#define GW_POLICY_H

#include <stddef.h>
#include <stdint.h>

#define GW_POLICY_MAX_BYTES (20u * 1024)   /* S3's limit on a bucket policy */
#define GW_POLICY_WHY_MAX 160

struct gw_policy;

enum gw_policy_effect {
    GW_POLICY_NONE,    /* no statement applies */
    GW_POLICY_ALLOW,
    GW_POLICY_DENY,    /* an explicit Deny applies */
};

/* What a request is, as a policy sees it. */
struct gw_policy_request {
    const char *principal;       /* the account id; NULL: anonymous */
    const char *action;          /* "s3:GetObject" */
    const char *bucket;
    size_t bucket_len;
    const char *key;             /* NULL: the bucket itself is the resource */
    size_t key_len;
    int source_family;           /* AF_INET, AF_INET6, 0: unknown */
    unsigned char source[16];    /* the client address, network order */
    const char *prefix;          /* s3:prefix of a listing; NULL: absent */
    size_t prefix_len;
    int secure;                  /* aws:SecureTransport: over TLS */
};

/* Parses and checks json[len] as the policy of bucket (NUL-terminated).
 * Returns the parsed policy (gw_policy_free() it), or NULL with why set
 * (the MalformedPolicy message). */
struct gw_policy *gw_policy_parse(const char *json, size_t len, const char *bucket,
                                  char why[GW_POLICY_WHY_MAX]);
void gw_policy_free(struct gw_policy *p);

/* The effect of p on q: DENY when a Deny statement applies, else ALLOW when
 * an Allow does, else NONE. */
enum gw_policy_effect gw_policy_eval(const struct gw_policy *p,
                                     const struct gw_policy_request *q);

/* 1 when p is public as S3 defines it: an Allow to any principal ("*")
 * not narrowed by an aws:SourceIp condition. */
int gw_policy_is_public(const struct gw_policy *p);

/* 1 when s[slen] matches pattern p[plen] (* any run, ? one byte);
 * fold: ASCII case-insensitive. */
int gw_policy_wildcard(const char *p, size_t plen, const char *s, size_t slen, int fold);

#endif
