/* Bucket policies (policy.h). The document is kept as the jansson tree it
 * was parsed into, after gw_policy_parse() has checked every value the
 * evaluator reads, so gw_policy_eval() walks known shapes only. */
#include "policy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <jansson.h>

#include "cn/alloc.h"
#include "cn/rc.h"

#define GW_POLICY_MAX_STATEMENTS 256
#define GW_POLICY_ARN "arn:aws:s3:::"
#define GW_POLICY_ARN_LEN (sizeof(GW_POLICY_ARN) - 1)
#define GW_POLICY_IAM "arn:aws:iam::"
#define GW_POLICY_IAM_LEN (sizeof(GW_POLICY_IAM) - 1)

struct gw_policy {
    json_t *root;
    json_t *stmts;   /* the statements, always an array */
};

/* ---- wildcards ---------------------------------------------------------- */

static int gw_policy_char_eq(char a, char b, int fold)
{
    return fold ? tolower((unsigned char)a) == tolower((unsigned char)b) : a == b;
}

int gw_policy_wildcard(const char *p, size_t plen, const char *s, size_t slen, int fold)
{
    /* the usual backtracking on the last star: linear in practice, at worst
     * plen * slen, both bounded (a policy is 20 KiB, a key 1 KiB) */
    size_t pi = 0, si = 0, star = (size_t)-1, mark = 0;
    while (si < slen) {
        if (pi < plen && (p[pi] == '?' || (p[pi] != '*' && gw_policy_char_eq(p[pi], s[si], fold)))) {
            pi++, si++;
        } else if (pi < plen && p[pi] == '*') {
            star = pi++;
            mark = si;
        } else if (star != (size_t)-1) {
            pi = star + 1;
            si = ++mark;
        } else {
            return 0;
        }
    }
    while (pi < plen && p[pi] == '*')
        pi++;
    return pi == plen;
}

/* ---- checks ------------------------------------------------------------- */

#define GW_POLICY_FAIL(...)                                                                        \
    do {                                                                                           \
        snprintf(why, GW_POLICY_WHY_MAX, __VA_ARGS__);                                             \
        return 0;                                                                                  \
    } while (0)

/* Calls check on v, a string or a non-empty array of strings; 1 when every
 * one passes. */
static int gw_policy_each_str(const json_t *v, const char *what, const char *bucket,
                              int (*check)(const char *s, size_t n, const char *bucket,
                                           char *why),
                              char *why)
{
    if (json_is_string(v))
        return check(json_string_value(v), json_string_length(v), bucket, why);
    if (!json_is_array(v) || json_array_size(v) == 0)
        GW_POLICY_FAIL("%s must be a string or a non-empty list of strings", what);
    size_t i;
    const json_t *e;
    json_array_foreach(v, i, e) {
        if (!json_is_string(e))
            GW_POLICY_FAIL("%s must be a string or a non-empty list of strings", what);
        if (!check(json_string_value(e), json_string_length(e), bucket, why))
            return 0;
    }
    return 1;
}

static int gw_policy_visible(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < 0x21 || s[i] > 0x7e)
            return 0;
    return n > 0;
}

/* "*", an account id, or arn:aws:iam::ID:root. */
static int gw_policy_check_aws(const char *s, size_t n, const char *bucket, char *why)
{
    (void)bucket;
    if (n >= GW_POLICY_IAM_LEN && memcmp(s, GW_POLICY_IAM, GW_POLICY_IAM_LEN) == 0) {
        if (n < GW_POLICY_IAM_LEN + 6 || memcmp(s + n - 5, ":root", 5) != 0 ||
            !gw_policy_visible(s + GW_POLICY_IAM_LEN, n - GW_POLICY_IAM_LEN - 5) ||
            memchr(s + GW_POLICY_IAM_LEN, ':', n - GW_POLICY_IAM_LEN - 5) != NULL)
            GW_POLICY_FAIL("Invalid principal in policy");
        return 1;
    }
    if (!gw_policy_visible(s, n) || memchr(s, ':', n) != NULL || n > 64)
        GW_POLICY_FAIL("Invalid principal in policy");
    return 1;
}

static int gw_policy_check_principal(const json_t *v, char *why)
{
    if (json_is_string(v)) {
        if (strcmp(json_string_value(v), "*") != 0)
            GW_POLICY_FAIL("Invalid principal in policy");
        return 1;
    }
    if (!json_is_object(v) || json_object_size(v) == 0)
        GW_POLICY_FAIL("Invalid principal in policy");
    const char *k;
    const json_t *e;
    json_object_foreach((json_t *)v, k, e) {
        if (strcmp(k, "AWS") != 0 && strcmp(k, "CanonicalUser") != 0)
            GW_POLICY_FAIL("Unsupported principal type %.40s", k);
        if (!gw_policy_each_str(e, "Principal", NULL, gw_policy_check_aws, why))
            return 0;
    }
    return 1;
}

/* "*" or s3:Name (letters and wildcards). */
static int gw_policy_check_action(const char *s, size_t n, const char *bucket, char *why)
{
    (void)bucket;
    if (n == 1 && s[0] == '*')
        return 1;
    if (n < 4 || strncasecmp(s, "s3:", 3) != 0)
        GW_POLICY_FAIL("Policy has invalid action");
    for (size_t i = 3; i < n; i++)
        if (!isalpha((unsigned char)s[i]) && s[i] != '*' && s[i] != '?')
            GW_POLICY_FAIL("Policy has invalid action");
    return 1;
}

/* arn:aws:s3:::bucket or arn:aws:s3:::bucket/pattern: a policy speaks of
 * its own bucket only, as S3 requires. */
static int gw_policy_check_resource(const char *s, size_t n, const char *bucket, char *why)
{
    size_t bl = strlen(bucket);
    if (n < GW_POLICY_ARN_LEN + bl || memcmp(s, GW_POLICY_ARN, GW_POLICY_ARN_LEN) != 0 ||
        memcmp(s + GW_POLICY_ARN_LEN, bucket, bl) != 0 ||
        (n > GW_POLICY_ARN_LEN + bl && s[GW_POLICY_ARN_LEN + bl] != '/') ||
        memchr(s, '\0', n) != NULL)
        GW_POLICY_FAIL("Action does not apply to any resource(s) in statement");
    return 1;
}

/* Parses a CIDR (or a bare address) into family, bytes and prefix bits. */
static int gw_policy_cidr(const char *s, size_t n, int *family, unsigned char addr[16],
                          unsigned *bits)
{
    char buf[64];
    if (n == 0 || n >= sizeof(buf))
        return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *slash = strchr(buf, '/');
    if (slash != NULL)
        *slash = '\0';
    if (inet_pton(AF_INET, buf, addr) == 1) {
        *family = AF_INET;
        *bits = 32;
    } else if (inet_pton(AF_INET6, buf, addr) == 1) {
        *family = AF_INET6;
        *bits = 128;
    } else {
        return 0;
    }
    if (slash != NULL) {
        const char *b = slash + 1;
        unsigned v = 0;
        if (*b == '\0' || strlen(b) > 3)
            return 0;
        for (; *b != '\0'; b++) {
            if (*b < '0' || *b > '9')
                return 0;
            v = v * 10 + (unsigned)(*b - '0');
        }
        if (v > *bits)
            return 0;
        *bits = v;
    }
    return 1;
}

static int gw_policy_check_ip(const char *s, size_t n, const char *bucket, char *why)
{
    (void)bucket;
    int family;
    unsigned char addr[16];
    unsigned bits;
    if (!gw_policy_cidr(s, n, &family, addr, &bits))
        GW_POLICY_FAIL("Invalid IP address or CIDR in aws:SourceIp");
    return 1;
}

static int gw_policy_check_string(const char *s, size_t n, const char *bucket, char *why)
{
    (void)s, (void)n, (void)bucket, (void)why;
    return 1;
}

static int gw_policy_is_ip_op(const char *op)
{
    return strcmp(op, "IpAddress") == 0 || strcmp(op, "NotIpAddress") == 0;
}

static int gw_policy_is_string_op(const char *op)
{
    return strcmp(op, "StringEquals") == 0 || strcmp(op, "StringNotEquals") == 0 ||
           strcmp(op, "StringLike") == 0 || strcmp(op, "StringNotLike") == 0;
}

static int gw_policy_check_bool(const char *s, size_t n, const char *bucket, char *why)
{
    (void)bucket;
    if (!(n == 4 && strncasecmp(s, "true", 4) == 0) && !(n == 5 && strncasecmp(s, "false", 5) == 0))
        GW_POLICY_FAIL("Bool conditions take true or false");
    return 1;
}

static int gw_policy_check_condition(const json_t *v, char *why)
{
    if (!json_is_object(v))
        GW_POLICY_FAIL("Condition must be an object");
    const char *op;
    const json_t *keys;
    json_object_foreach((json_t *)v, op, keys) {
        int ip = gw_policy_is_ip_op(op), boolean = strcmp(op, "Bool") == 0;
        if (!ip && !boolean && !gw_policy_is_string_op(op))
            GW_POLICY_FAIL("Unsupported condition operator %.40s", op);
        if (!json_is_object(keys) || json_object_size(keys) == 0)
            GW_POLICY_FAIL("Condition %.40s must map keys to values", op);
        const char *key;
        const json_t *vals;
        json_object_foreach((json_t *)keys, key, vals) {
            const char *want = ip ? "aws:SourceIp" : boolean ? "aws:SecureTransport" : "s3:prefix";
            if (strcasecmp(key, want) != 0)
                GW_POLICY_FAIL("Unsupported condition key %.40s for %.40s", key, op);
            if (!gw_policy_each_str(vals, "A condition value", NULL,
                                    ip        ? gw_policy_check_ip
                                    : boolean ? gw_policy_check_bool
                                              : gw_policy_check_string,
                                    why))
                return 0;
        }
    }
    return 1;
}

/* Does statement object s hold exactly one of a and b? */
static int gw_policy_one_of(const json_t *s, const char *a, const char *b)
{
    return (json_object_get(s, a) != NULL) + (json_object_get(s, b) != NULL) == 1;
}

static int gw_policy_check_stmt(const json_t *s, const char *bucket, char *why)
{
    static const char *const keys[] = {"Sid",    "Effect",      "Principal", "NotPrincipal",
                                       "Action", "NotAction",   "Resource",  "NotResource",
                                       "Condition"};
    if (!json_is_object(s))
        GW_POLICY_FAIL("A statement must be an object");
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)s, k, v) {
        size_t i = 0;
        while (i < CN_ARRAY_LEN(keys) && strcmp(k, keys[i]) != 0)
            i++;
        if (i == CN_ARRAY_LEN(keys))
            GW_POLICY_FAIL("Unknown or unsupported field %.40s in a statement", k);
    }
    const json_t *eff = json_object_get(s, "Effect");
    if (!json_is_string(eff) || (strcmp(json_string_value(eff), "Allow") != 0 &&
                                 strcmp(json_string_value(eff), "Deny") != 0))
        GW_POLICY_FAIL("Invalid effect");
    const json_t *sid = json_object_get(s, "Sid");
    if (sid != NULL && !json_is_string(sid))
        GW_POLICY_FAIL("Sid must be a string");
    if (!gw_policy_one_of(s, "Principal", "NotPrincipal"))
        GW_POLICY_FAIL("A statement needs exactly one of Principal and NotPrincipal");
    const json_t *pr = json_object_get(s, "Principal");
    if (pr == NULL && !json_is_object(pr = json_object_get(s, "NotPrincipal")))
        GW_POLICY_FAIL("NotPrincipal must name principals");   /* "*": would match nobody */
    if (!gw_policy_check_principal(pr, why))
        return 0;
    if (!gw_policy_one_of(s, "Action", "NotAction"))
        GW_POLICY_FAIL("A statement needs exactly one of Action and NotAction");
    if (!gw_policy_one_of(s, "Resource", "NotResource"))
        GW_POLICY_FAIL("A statement needs exactly one of Resource and NotResource");
    const json_t *act = json_object_get(s, "Action");
    if (act == NULL)
        act = json_object_get(s, "NotAction");
    const json_t *res = json_object_get(s, "Resource");
    if (res == NULL)
        res = json_object_get(s, "NotResource");
    if (!gw_policy_each_str(act, "Action", bucket, gw_policy_check_action, why) ||
        !gw_policy_each_str(res, "Resource", bucket, gw_policy_check_resource, why))
        return 0;
    const json_t *cond = json_object_get(s, "Condition");
    return cond == NULL || gw_policy_check_condition(cond, why);
}

/* The root object: Version, Id, Statement. */
static int gw_policy_check_root(const json_t *root, const char *bucket, char *why)
{
    if (!json_is_object(root))
        GW_POLICY_FAIL("Policies must be a JSON object");
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)root, k, v) {
        if (strcmp(k, "Version") == 0) {
            if (!json_is_string(v) || (strcmp(json_string_value(v), "2012-10-17") != 0 &&
                                       strcmp(json_string_value(v), "2008-10-17") != 0))
                GW_POLICY_FAIL("The policy must contain a valid version string");
        } else if (strcmp(k, "Id") == 0) {
            if (!json_is_string(v))
                GW_POLICY_FAIL("Id must be a string");
        } else if (strcmp(k, "Statement") != 0) {
            GW_POLICY_FAIL("Unknown field %.40s", k);
        }
    }
    const json_t *st = json_object_get(root, "Statement");
    if (st == NULL)
        GW_POLICY_FAIL("Missing required field Statement");
    if (json_is_object(st))
        return gw_policy_check_stmt(st, bucket, why);
    if (!json_is_array(st) || json_array_size(st) == 0 ||
        json_array_size(st) > GW_POLICY_MAX_STATEMENTS)
        GW_POLICY_FAIL("Statement must be an object or a non-empty list of them");
    size_t i;
    json_array_foreach(st, i, v) {
        if (!gw_policy_check_stmt(v, bucket, why))
            return 0;
    }
    return 1;
}

struct gw_policy *gw_policy_parse(const char *json, size_t len, const char *bucket,
                                  char why[GW_POLICY_WHY_MAX])
{
    why[0] = '\0';
    if (len > GW_POLICY_MAX_BYTES) {
        snprintf(why, GW_POLICY_WHY_MAX, "Policies must be at most %u bytes", GW_POLICY_MAX_BYTES);
        return NULL;
    }
    json_error_t jerr;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL) {
        snprintf(why, GW_POLICY_WHY_MAX, "Policies must be valid JSON and the first byte must be '{'");
        return NULL;
    }
    if (!gw_policy_check_root(root, bucket, why)) {
        json_decref(root);
        return NULL;
    }
    struct gw_policy *p = cn_calloc(1, sizeof(*p));
    p->root = root;
    json_t *st = json_object_get(root, "Statement");
    if (json_is_object(st)) {
        p->stmts = json_array();
        json_array_append(p->stmts, st);
    } else {
        p->stmts = json_incref(st);
    }
    return p;
}

void gw_policy_free(struct gw_policy *p)
{
    if (p == NULL)
        return;
    json_decref(p->stmts);
    json_decref(p->root);
    cn_free(p);
}

/* ---- evaluation --------------------------------------------------------- */

/* Does any string of v (string or array) satisfy match(s, n, ctx)? */
static int gw_policy_any(const json_t *v, int (*match)(const char *s, size_t n, const void *ctx),
                         const void *ctx)
{
    if (json_is_string(v))
        return match(json_string_value(v), json_string_length(v), ctx);
    size_t i;
    const json_t *e;
    json_array_foreach(v, i, e) {
        if (json_is_string(e) && match(json_string_value(e), json_string_length(e), ctx))
            return 1;
    }
    return 0;
}

static int gw_policy_match_aws(const char *s, size_t n, const void *ctx)
{
    const struct gw_policy_request *q = ctx;
    if (n == 1 && s[0] == '*')
        return 1;
    if (q->principal == NULL)
        return 0;
    size_t pl = strlen(q->principal);
    if (n >= GW_POLICY_IAM_LEN && memcmp(s, GW_POLICY_IAM, GW_POLICY_IAM_LEN) == 0)
        return n == GW_POLICY_IAM_LEN + pl + 5 &&
               memcmp(s + GW_POLICY_IAM_LEN, q->principal, pl) == 0;
    return n == pl && memcmp(s, q->principal, n) == 0;
}

static int gw_policy_principal_matches(const json_t *pr, const struct gw_policy_request *q)
{
    if (json_is_string(pr))
        return 1;   /* "*", the only string form the check lets in */
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)pr, k, v) {
        if (gw_policy_any(v, gw_policy_match_aws, q))
            return 1;
    }
    return 0;
}

static int gw_policy_match_action(const char *s, size_t n, const void *ctx)
{
    const char *a = ctx;
    return gw_policy_wildcard(s, n, a, strlen(a), 1);
}

/* The resource ARN without its arn:aws:s3::: prefix. */
struct gw_policy_resource {
    const char *s;
    size_t n;
};

static int gw_policy_match_resource(const char *s, size_t n, const void *ctx)
{
    const struct gw_policy_resource *r = ctx;
    return gw_policy_wildcard(s + GW_POLICY_ARN_LEN, n - GW_POLICY_ARN_LEN, r->s, r->n, 0);
}

static int gw_policy_match_ip(const char *s, size_t n, const void *ctx)
{
    const struct gw_policy_request *q = ctx;
    int family;
    unsigned char addr[16];
    unsigned bits;
    if (q->source_family == 0 || !gw_policy_cidr(s, n, &family, addr, &bits) ||
        family != q->source_family)
        return 0;
    unsigned full = bits / 8, rest = bits % 8;
    if (memcmp(addr, q->source, full) != 0)
        return 0;
    if (rest == 0)
        return 1;
    unsigned char mask = (unsigned char)(0xffu << (8 - rest));
    return (addr[full] & mask) == (q->source[full] & mask);
}

static int gw_policy_match_bool(const char *s, size_t n, const void *ctx)
{
    const struct gw_policy_request *q = ctx;
    return (n == 4 && strncasecmp(s, "true", 4) == 0) == (q->secure != 0);
}

static int gw_policy_match_equals(const char *s, size_t n, const void *ctx)
{
    const struct gw_policy_request *q = ctx;
    return q->prefix != NULL && n == q->prefix_len && memcmp(s, q->prefix, n) == 0;
}

static int gw_policy_match_like(const char *s, size_t n, const void *ctx)
{
    const struct gw_policy_request *q = ctx;
    return q->prefix != NULL && gw_policy_wildcard(s, n, q->prefix, q->prefix_len, 0);
}

/* Every operator of the Condition block holds (AND over operators and
 * keys, OR over the values of one key; a Not operator holds when no value
 * matches, so also when the key is absent). */
static int gw_policy_conditions_hold(const json_t *cond, const struct gw_policy_request *q)
{
    const char *op;
    const json_t *keys;
    json_object_foreach((json_t *)cond, op, keys) {
        const char *key;
        const json_t *vals;
        int neg = strncmp(op, "Not", 3) == 0 || strncmp(op, "StringNot", 9) == 0;
        int (*m)(const char *, size_t, const void *) =
            gw_policy_is_ip_op(op)            ? gw_policy_match_ip
            : strcmp(op, "Bool") == 0         ? gw_policy_match_bool
            : strstr(op, "Like") != NULL      ? gw_policy_match_like
                                              : gw_policy_match_equals;
        json_object_foreach((json_t *)keys, key, vals) {
            int hit = gw_policy_any(vals, m, q);
            if (hit == neg)
                return 0;
        }
    }
    return 1;
}

/* Does statement s apply to q? (resource is q's ARN tail.) */
static int gw_policy_stmt_applies(const json_t *s, const struct gw_policy_request *q,
                                  const struct gw_policy_resource *res)
{
    /* NotPrincipal: everyone the list does not name (the anonymous caller
     * included), as IAM evaluates it */
    const json_t *pr = json_object_get(s, "Principal");
    int not_p = pr == NULL;
    if (not_p)
        pr = json_object_get(s, "NotPrincipal");
    if (gw_policy_principal_matches(pr, q) == not_p)
        return 0;
    const json_t *a = json_object_get(s, "Action");
    int not_a = a == NULL;
    if (not_a)
        a = json_object_get(s, "NotAction");
    if (gw_policy_any(a, gw_policy_match_action, q->action) == not_a)
        return 0;
    const json_t *r = json_object_get(s, "Resource");
    int not_r = r == NULL;
    if (not_r)
        r = json_object_get(s, "NotResource");
    if (gw_policy_any(r, gw_policy_match_resource, res) == not_r)
        return 0;
    const json_t *cond = json_object_get(s, "Condition");
    return cond == NULL || gw_policy_conditions_hold(cond, q);
}

enum gw_policy_effect gw_policy_eval(const struct gw_policy *p,
                                     const struct gw_policy_request *q)
{
    size_t n = q->bucket_len + (q->key != NULL ? 1 + q->key_len : 0);
    char *arn = cn_malloc(n + 1);
    memcpy(arn, q->bucket, q->bucket_len);
    if (q->key != NULL) {
        arn[q->bucket_len] = '/';
        memcpy(arn + q->bucket_len + 1, q->key, q->key_len);
    }
    struct gw_policy_resource res = {arn, n};
    enum gw_policy_effect out = GW_POLICY_NONE;
    size_t i;
    const json_t *s;
    json_array_foreach(p->stmts, i, s) {
        if (!gw_policy_stmt_applies(s, q, &res))
            continue;
        if (strcmp(json_string_value(json_object_get(s, "Effect")), "Deny") == 0) {
            out = GW_POLICY_DENY;
            break;
        }
        out = GW_POLICY_ALLOW;
    }
    cn_free(arn);
    return out;
}

static int gw_policy_match_star(const char *s, size_t n, const void *ctx)
{
    (void)ctx;
    return n == 1 && s[0] == '*';
}

int gw_policy_is_public(const struct gw_policy *p)
{
    size_t i;
    const json_t *s;
    json_array_foreach(p->stmts, i, s) {
        if (strcmp(json_string_value(json_object_get(s, "Effect")), "Allow") != 0)
            continue;
        const json_t *pr = json_object_get(s, "Principal");
        /* an Allow to everyone but the NotPrincipal list is public */
        int any = pr == NULL || json_is_string(pr);
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)pr, k, v) {
            if (gw_policy_any(v, gw_policy_match_star, NULL))
                any = 1;
        }
        const json_t *cond = json_object_get(s, "Condition");
        int narrowed = cond != NULL && (json_object_get(cond, "IpAddress") != NULL);
        if (any && !narrowed)
            return 1;
    }
    return 0;
}
