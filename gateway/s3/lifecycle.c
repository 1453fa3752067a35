/* Lifecycle rules (lifecycle.h): a parser over xml.c's walk that keeps the
 * path of open elements, counts each element per parent (so a repeated one
 * is refused), and checks each rule as it closes; the writer of the
 * canonical form; and the due-date arithmetic. */
#include "lifecycle.h"

#include <stdio.h>
#include <string.h>

#include <openssl/rand.h>

#include "cn/alloc.h"
#include "cn/hex.h"
#include "cn/rc.h"

enum gw_lc_el {
    GW_LC_EL_OTHER = 0,
    GW_LC_EL_ROOT,
    GW_LC_EL_RULE,
    GW_LC_EL_ID,
    GW_LC_EL_STATUS,
    GW_LC_EL_PREFIX,
    GW_LC_EL_FILTER,
    GW_LC_EL_AND,
    GW_LC_EL_TAG,
    GW_LC_EL_KEY,
    GW_LC_EL_VALUE,
    GW_LC_EL_SIZE_GT,
    GW_LC_EL_SIZE_LT,
    GW_LC_EL_EXP,
    GW_LC_EL_DAYS,
    GW_LC_EL_DATE,
    GW_LC_EL_MARKER,
    GW_LC_EL_NCE,
    GW_LC_EL_NC_DAYS,
    GW_LC_EL_NC_NEWER,
    GW_LC_EL_ABORT,
    GW_LC_EL_ABORT_DAYS,
    GW_LC_EL_TRANSITION,
    GW_LC_EL_COUNT
};

static const char *const gw_lc_el_names[GW_LC_EL_COUNT] = {
    [GW_LC_EL_ROOT] = "LifecycleConfiguration",
    [GW_LC_EL_RULE] = "Rule",
    [GW_LC_EL_ID] = "ID",
    [GW_LC_EL_STATUS] = "Status",
    [GW_LC_EL_PREFIX] = "Prefix",
    [GW_LC_EL_FILTER] = "Filter",
    [GW_LC_EL_AND] = "And",
    [GW_LC_EL_TAG] = "Tag",
    [GW_LC_EL_KEY] = "Key",
    [GW_LC_EL_VALUE] = "Value",
    [GW_LC_EL_SIZE_GT] = "ObjectSizeGreaterThan",
    [GW_LC_EL_SIZE_LT] = "ObjectSizeLessThan",
    [GW_LC_EL_EXP] = "Expiration",
    [GW_LC_EL_DAYS] = "Days",
    [GW_LC_EL_DATE] = "Date",
    [GW_LC_EL_MARKER] = "ExpiredObjectDeleteMarker",
    [GW_LC_EL_NCE] = "NoncurrentVersionExpiration",
    [GW_LC_EL_NC_DAYS] = "NoncurrentDays",
    [GW_LC_EL_NC_NEWER] = "NewerNoncurrentVersions",
    [GW_LC_EL_ABORT] = "AbortIncompleteMultipartUpload",
    [GW_LC_EL_ABORT_DAYS] = "DaysAfterInitiation",
    [GW_LC_EL_TRANSITION] = "Transition",
};

/* Which element may hold which: parent -> bit per child. */
#define GW_LC_BIT(e) (1u << (e))
static const unsigned gw_lc_children[GW_LC_EL_COUNT] = {
    [GW_LC_EL_ROOT] = GW_LC_BIT(GW_LC_EL_RULE),
    [GW_LC_EL_RULE] = GW_LC_BIT(GW_LC_EL_ID) | GW_LC_BIT(GW_LC_EL_STATUS) |
                      GW_LC_BIT(GW_LC_EL_PREFIX) | GW_LC_BIT(GW_LC_EL_FILTER) |
                      GW_LC_BIT(GW_LC_EL_EXP) | GW_LC_BIT(GW_LC_EL_NCE) |
                      GW_LC_BIT(GW_LC_EL_ABORT) | GW_LC_BIT(GW_LC_EL_TRANSITION),
    [GW_LC_EL_FILTER] = GW_LC_BIT(GW_LC_EL_PREFIX) | GW_LC_BIT(GW_LC_EL_TAG) |
                        GW_LC_BIT(GW_LC_EL_AND) | GW_LC_BIT(GW_LC_EL_SIZE_GT) |
                        GW_LC_BIT(GW_LC_EL_SIZE_LT),
    [GW_LC_EL_AND] = GW_LC_BIT(GW_LC_EL_PREFIX) | GW_LC_BIT(GW_LC_EL_TAG) |
                     GW_LC_BIT(GW_LC_EL_SIZE_GT) | GW_LC_BIT(GW_LC_EL_SIZE_LT),
    [GW_LC_EL_TAG] = GW_LC_BIT(GW_LC_EL_KEY) | GW_LC_BIT(GW_LC_EL_VALUE),
    [GW_LC_EL_EXP] = GW_LC_BIT(GW_LC_EL_DAYS) | GW_LC_BIT(GW_LC_EL_DATE) |
                     GW_LC_BIT(GW_LC_EL_MARKER),
    [GW_LC_EL_NCE] = GW_LC_BIT(GW_LC_EL_NC_DAYS) | GW_LC_BIT(GW_LC_EL_NC_NEWER),
    [GW_LC_EL_ABORT] = GW_LC_BIT(GW_LC_EL_ABORT_DAYS),
};

#define GW_LC_DEPTH (GW_XML_MAX_DEPTH_IN + 1)

struct gw_lc_parser {
    struct gw_lc *lc;
    uint32_t cap;
    enum gw_lc_el path[GW_LC_DEPTH + 1];             /* path[d]: open at depth d */
    uint16_t counts[GW_LC_DEPTH + 1][GW_LC_EL_COUNT]; /* children seen, per open element */
    struct gw_tagset *tags;                          /* the current rule's filter tags */
    char key[GW_TAGSET_KEY_BYTES + 1];               /* the current <Tag> */
    size_t key_len;
    char value[GW_TAGSET_VALUE_BYTES + 1];
    size_t value_len;
    const char *tag_why;
    char *why;
};

static enum gw_lc_el gw_lc_el_lookup(const char *name)
{
    for (int i = 1; i < GW_LC_EL_COUNT; i++)
        if (strcmp(name, gw_lc_el_names[i]) == 0)
            return (enum gw_lc_el)i;
    if (strcmp(name, "NoncurrentVersionTransition") == 0)
        return GW_LC_EL_TRANSITION;
    return GW_LC_EL_OTHER;
}

static struct gw_lc_rule *gw_lc_cur(struct gw_lc_parser *p)
{
    return &p->lc->rules[p->lc->n_rules - 1];
}

/* An error with S3's message. */
static enum gw_s3_err gw_lc_fail(struct gw_lc_parser *p, enum gw_s3_err e, const char *msg)
{
    snprintf(p->why, GW_XML_WHY_MAX, "%s", msg);
    return e;
}

static void gw_lc_rule_init(struct gw_lc_rule *r)
{
    memset(r, 0, sizeof(*r));
    r->size_gt = r->size_lt = GW_LC_NONE;
    r->exp_days = r->exp_date_s = r->nc_days = r->nc_newer = r->abort_days = GW_LC_NONE;
    r->exp_marker = GW_LC_NONE;
}

static enum gw_s3_err gw_lc_on_start(void *user, int depth, const char *name)
{
    struct gw_lc_parser *p = user;
    enum gw_lc_el el = gw_lc_el_lookup(name);
    if (depth > GW_LC_DEPTH)
        return GW_S3_MALFORMED_XML;
    if (depth == 1) {
        if (el != GW_LC_EL_ROOT)
            return GW_S3_MALFORMED_XML;
    } else {
        enum gw_lc_el parent = p->path[depth - 1];
        if (el == GW_LC_EL_OTHER || !(gw_lc_children[parent] & GW_LC_BIT(el)))
            return GW_S3_MALFORMED_XML;
        if (el == GW_LC_EL_TRANSITION)
            return gw_lc_fail(p, GW_S3_NOT_IMPLEMENTED,
                              "Transitions are not supported: cairn has one storage class.");
        uint16_t n = ++p->counts[depth - 1][el];
        if (n > 1 && el != GW_LC_EL_RULE && el != GW_LC_EL_TAG)
            return GW_S3_MALFORMED_XML;   /* an element given twice */
    }
    p->path[depth] = el;
    memset(p->counts[depth], 0, sizeof(p->counts[depth]));
    if (el == GW_LC_EL_RULE) {
        if (p->lc->n_rules == GW_LC_MAX_RULES)
            return GW_S3_MALFORMED_XML;
        if (p->lc->n_rules == p->cap) {
            p->cap = p->cap ? 2 * p->cap : 4;
            p->lc->rules = cn_realloc(p->lc->rules, p->cap * sizeof(*p->lc->rules));
        }
        gw_lc_rule_init(&p->lc->rules[p->lc->n_rules++]);
        p->tags->n = 0;
    } else if (el == GW_LC_EL_TAG) {
        p->key_len = p->value_len = 0;
    }
    return GW_S3_OK;
}

/* A decimal number of at most 19 digits, white space around allowed. */
static int gw_lc_number(const char *s, size_t n, int64_t *out)
{
    while (n > 0 && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
        s++, n--;
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--;
    int neg = n > 0 && *s == '-';
    if (neg)
        s++, n--;
    if (n == 0 || n > 18)
        return 0;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = neg ? -v : v;
    return 1;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil). */
static int64_t gw_lc_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* An ISO 8601 date: YYYY-MM-DD, optionally THH:MM:SS[.fff][Z|+00:00].
 * Returns 1 with *s (Unix seconds) and *midnight, or 0 when it does not
 * parse. */
static int gw_lc_date(const char *t, size_t n, int64_t *s, int *midnight)
{
    char buf[64];
    while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == '\t'))
        n--;
    while (n > 0 && (*t == ' ' || *t == '\n' || *t == '\r' || *t == '\t'))
        t++, n--;
    if (n < 10 || n >= sizeof(buf))
        return 0;
    memcpy(buf, t, n);
    buf[n] = '\0';
    unsigned y, mo, d, h = 0, mi = 0, se = 0;
    int used = 0;
    if (sscanf(buf, "%4u-%2u-%2u%n", &y, &mo, &d, &used) != 3 || used != 10)
        return 0;
    const char *rest = buf + 10;
    int frac_zero = 1;
    if (*rest == 'T') {
        if (sscanf(rest, "T%2u:%2u:%2u%n", &h, &mi, &se, &used) != 3 || used != 9)
            return 0;
        rest += 9;
        if (*rest == '.') {
            rest++;
            size_t k = strspn(rest, "0123456789");
            if (k == 0)
                return 0;
            frac_zero = strspn(rest, "0") >= k;
            rest += k;
        }
        if (strcmp(rest, "Z") == 0 || strcmp(rest, "+00:00") == 0)
            rest += strlen(rest);
    }
    if (*rest != '\0' || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 59 ||
        y < 1970)
        return 0;
    *s = gw_lc_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
    *midnight = h == 0 && mi == 0 && se == 0 && frac_zero;
    return 1;
}

static char *gw_lc_dup(const char *s, size_t n)
{
    char *d = cn_malloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static int gw_lc_text_is(const char *t, size_t n, const char *want)
{
    while (n > 0 && (*t == ' ' || *t == '\n' || *t == '\r' || *t == '\t'))
        t++, n--;
    while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == '\t'))
        n--;
    return n == strlen(want) && memcmp(t, want, n) == 0;
}

/* A positive number of days into *slot; InvalidArgument with msg when not. */
static enum gw_s3_err gw_lc_days(struct gw_lc_parser *p, const char *t, size_t n, int64_t *slot,
                                 const char *msg)
{
    int64_t v;
    if (!gw_lc_number(t, n, &v))
        return GW_S3_MALFORMED_XML;
    if (v <= 0 || v > INT32_MAX)
        return gw_lc_fail(p, GW_S3_INVALID_ARGUMENT, msg);
    *slot = v;
    return GW_S3_OK;
}

/* A leaf of a rule: its text into the rule. */
static enum gw_s3_err gw_lc_leaf(struct gw_lc_parser *p, enum gw_lc_el el, enum gw_lc_el parent,
                                 const char *t, size_t n)
{
    struct gw_lc_rule *r = gw_lc_cur(p);
    int64_t v;
    switch (el) {
    case GW_LC_EL_ID:
        if (n > GW_LC_ID_MAX)
            return gw_lc_fail(p, GW_S3_INVALID_ARGUMENT,
                              "ID length should not exceed allowed limit of 255");
        r->id = gw_lc_dup(t, n);
        r->id_len = n;
        return GW_S3_OK;
    case GW_LC_EL_STATUS:
        if (gw_lc_text_is(t, n, "Enabled"))
            r->enabled = 1;
        else if (!gw_lc_text_is(t, n, "Disabled"))
            return GW_S3_MALFORMED_XML;
        return GW_S3_OK;
    case GW_LC_EL_PREFIX:
        cn_free(r->prefix);   /* a rule's Prefix next to a Filter's: refused at the rule's end */
        r->prefix = gw_lc_dup(t, n);
        r->prefix_len = n;
        r->legacy_prefix = parent == GW_LC_EL_RULE;
        return GW_S3_OK;
    case GW_LC_EL_KEY:
    case GW_LC_EL_VALUE: {
        char *slot = el == GW_LC_EL_KEY ? p->key : p->value;
        size_t cap = el == GW_LC_EL_KEY ? GW_TAGSET_KEY_BYTES : GW_TAGSET_VALUE_BYTES;
        size_t k = CN_MIN(n, cap + 1);   /* too long to keep: refused as too long */
        memcpy(slot, t, k);
        *(el == GW_LC_EL_KEY ? &p->key_len : &p->value_len) = k;
        return GW_S3_OK;
    }
    case GW_LC_EL_SIZE_GT:
    case GW_LC_EL_SIZE_LT:
        if (!gw_lc_number(t, n, &v) || v < 0)
            return GW_S3_MALFORMED_XML;
        *(el == GW_LC_EL_SIZE_GT ? &r->size_gt : &r->size_lt) = v;
        return GW_S3_OK;
    case GW_LC_EL_DAYS:
        return gw_lc_days(p, t, n, &r->exp_days,
                          "'Days' for Expiration action must be a positive integer");
    case GW_LC_EL_DATE: {
        int midnight;
        if (!gw_lc_date(t, n, &v, &midnight))
            return GW_S3_MALFORMED_XML;
        if (!midnight)
            return gw_lc_fail(p, GW_S3_INVALID_ARGUMENT, "'Date' must be at midnight GMT");
        r->exp_date_s = v;
        return GW_S3_OK;
    }
    case GW_LC_EL_MARKER:
        if (gw_lc_text_is(t, n, "true"))
            r->exp_marker = 1;
        else if (gw_lc_text_is(t, n, "false"))
            r->exp_marker = 0;
        else
            return GW_S3_MALFORMED_XML;
        return GW_S3_OK;
    case GW_LC_EL_NC_DAYS:
        return gw_lc_days(p, t, n, &r->nc_days, "'NoncurrentDays' in NoncurrentVersionExpiration "
                                                "action must be a positive integer");
    case GW_LC_EL_NC_NEWER:
        if (!gw_lc_number(t, n, &v))
            return GW_S3_MALFORMED_XML;
        if (v < 1 || v > 100)
            return gw_lc_fail(p, GW_S3_INVALID_ARGUMENT,
                              "'NewerNoncurrentVersions' must be between 1 and 100");
        r->nc_newer = v;
        return GW_S3_OK;
    case GW_LC_EL_ABORT_DAYS:
        return gw_lc_days(p, t, n, &r->abort_days, "'DaysAfterInitiation' for "
                          "AbortIncompleteMultipartUpload action must be a positive integer");
    default:
        return GW_S3_OK;
    }
}

/* The filter conditions outside <And>: at most one. */
static int gw_lc_filter_conditions(const uint16_t *c)
{
    return c[GW_LC_EL_PREFIX] + c[GW_LC_EL_TAG] + c[GW_LC_EL_AND] + c[GW_LC_EL_SIZE_GT] +
           c[GW_LC_EL_SIZE_LT];
}

/* A random rule ID, as S3 gives a rule sent without one. */
static void gw_lc_random_id(struct gw_lc_rule *r)
{
    unsigned char b[16];
    if (RAND_bytes(b, sizeof(b)) != 1)
        memset(b, 0, sizeof(b));
    r->id = cn_malloc(2 * sizeof(b) + 1);
    cn_hex_encode(b, sizeof(b), r->id);
    r->id_len = 2 * sizeof(b);
    r->id[r->id_len] = '\0';
}

/* A rule closed: the checks that need all of it. */
static enum gw_s3_err gw_lc_rule_end(struct gw_lc_parser *p, const uint16_t *c)
{
    struct gw_lc_rule *r = gw_lc_cur(p);
    if (c[GW_LC_EL_STATUS] != 1 || c[GW_LC_EL_FILTER] + c[GW_LC_EL_PREFIX] != 1)
        return GW_S3_MALFORMED_XML;
    if (c[GW_LC_EL_EXP] + c[GW_LC_EL_NCE] + c[GW_LC_EL_ABORT] == 0)
        return gw_lc_fail(p, GW_S3_INVALID_REQUEST,
                          "At least one action needs to be specified in a rule");
    if (c[GW_LC_EL_EXP] &&
        (r->exp_days != GW_LC_NONE) + (r->exp_date_s != GW_LC_NONE) +
                (r->exp_marker != GW_LC_NONE) != 1)
        return GW_S3_MALFORMED_XML;
    if (c[GW_LC_EL_NCE] && r->nc_days == GW_LC_NONE)
        return GW_S3_MALFORMED_XML;
    if (c[GW_LC_EL_ABORT] && r->abort_days == GW_LC_NONE)
        return GW_S3_MALFORMED_XML;
    int has_tag_or_size = r->n_tags > 0 || r->size_gt != GW_LC_NONE || r->size_lt != GW_LC_NONE;
    if (r->abort_days != GW_LC_NONE && has_tag_or_size)
        return gw_lc_fail(p, GW_S3_INVALID_REQUEST,
                          "AbortIncompleteMultipartUpload cannot be specified with Tags.");
    if (r->exp_marker == 1 && has_tag_or_size)
        return gw_lc_fail(p, GW_S3_INVALID_REQUEST,
                          "ExpiredObjectDeleteMarker cannot be specified with Tags.");
    if (r->size_gt != GW_LC_NONE && r->size_lt != GW_LC_NONE && r->size_gt >= r->size_lt)
        return gw_lc_fail(p, GW_S3_INVALID_REQUEST,
                          "ObjectSizeGreaterThan must be less than ObjectSizeLessThan");
    if (r->id == NULL || r->id_len == 0) {
        cn_free(r->id);
        gw_lc_random_id(r);
    }
    for (uint32_t i = 0; i + 1 < p->lc->n_rules; i++)
        if (p->lc->rules[i].id_len == r->id_len && memcmp(p->lc->rules[i].id, r->id, r->id_len) == 0)
            return gw_lc_fail(p, GW_S3_INVALID_ARGUMENT,
                              "Rule ID must be unique. Found same ID for more than one rule");
    return GW_S3_OK;
}

/* A <Tag> of the filter closed: checked as an object tag, kept. */
static enum gw_s3_err gw_lc_tag_end(struct gw_lc_parser *p, const uint16_t *c)
{
    if (c[GW_LC_EL_KEY] != 1 || c[GW_LC_EL_VALUE] != 1)
        return GW_S3_MALFORMED_XML;
    enum gw_s3_err e = gw_tagset_add(p->tags, p->key, p->key_len, p->value, p->value_len,
                                     &p->tag_why);
    if (e != GW_S3_OK)
        return gw_lc_fail(p, e, p->tag_why);
    struct gw_lc_rule *r = gw_lc_cur(p);
    r->tags = cn_realloc(r->tags, (r->n_tags + 1) * sizeof(*r->tags));
    r->tags[r->n_tags++] = (struct gw_lc_tag){gw_lc_dup(p->key, p->key_len), p->key_len,
                                              gw_lc_dup(p->value, p->value_len), p->value_len};
    return GW_S3_OK;
}

static enum gw_s3_err gw_lc_on_end(void *user, int depth, const char *name, const char *text,
                                   size_t len)
{
    (void)name;
    struct gw_lc_parser *p = user;
    enum gw_lc_el el = p->path[depth];
    const uint16_t *c = p->counts[depth];
    switch (el) {
    case GW_LC_EL_ROOT:
        return p->lc->n_rules > 0 ? GW_S3_OK : GW_S3_MALFORMED_XML;
    case GW_LC_EL_RULE:
        return gw_lc_rule_end(p, c);
    case GW_LC_EL_FILTER:
        if (gw_lc_filter_conditions(c) > 1)
            return GW_S3_MALFORMED_XML;
        return GW_S3_OK;
    case GW_LC_EL_AND:
        gw_lc_cur(p)->filter_and = 1;
        return gw_lc_filter_conditions(c) - c[GW_LC_EL_AND] > 0 ? GW_S3_OK : GW_S3_MALFORMED_XML;
    case GW_LC_EL_TAG:
        return gw_lc_tag_end(p, c);
    case GW_LC_EL_EXP:
    case GW_LC_EL_NCE:
    case GW_LC_EL_ABORT:
        return GW_S3_OK;
    default:
        return gw_lc_leaf(p, el, p->path[depth - 1], text, len);
    }
}

void gw_lc_fini(struct gw_lc *lc)
{
    for (uint32_t i = 0; i < lc->n_rules; i++) {
        struct gw_lc_rule *r = &lc->rules[i];
        cn_free(r->id);
        cn_free(r->prefix);
        for (uint32_t j = 0; j < r->n_tags; j++) {
            cn_free(r->tags[j].key);
            cn_free(r->tags[j].value);
        }
        cn_free(r->tags);
    }
    cn_free(lc->rules);
    lc->rules = NULL;
    lc->n_rules = 0;
}

int gw_lc_parse(const char *body, size_t len, struct gw_lc *out, enum gw_s3_err *err,
                char why[GW_XML_WHY_MAX])
{
    memset(out, 0, sizeof(*out));
    why[0] = '\0';
    struct gw_lc_parser *p = cn_calloc(1, sizeof(*p));
    p->lc = out;
    p->why = why;
    p->tags = gw_tagset_new(GW_TAGSET_MAX);
    static const struct gw_xml_walk_cbs cbs = {gw_lc_on_start, gw_lc_on_end};
    /* a rule takes at most about 40 elements */
    int rc = gw_xml_walk(body, len, GW_LC_MAX_BYTES, 64u * GW_LC_MAX_RULES, &cbs, p, err);
    if (rc == CN_OK && out->n_rules == 0) {   /* an empty document */
        *err = GW_S3_MALFORMED_XML;
        rc = CN_INVAL;
    }
    gw_tagset_free(p->tags);
    cn_free(p);
    if (rc != CN_OK) {
        gw_lc_fini(out);
        if (*err == GW_S3_MALFORMED_XML || *err == GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED)
            why[0] = '\0';
    }
    return rc;
}

/* ---- writer ----------------------------------------------------------- */

static void gw_lc_write_conditions(const struct gw_lc_rule *r, struct gw_xml_writer *w)
{
    if (r->prefix != NULL)
        gw_xml_elem(w, "Prefix", r->prefix, r->prefix_len);
    for (uint32_t i = 0; i < r->n_tags; i++) {
        gw_xml_open(w, "Tag");
        gw_xml_elem(w, "Key", r->tags[i].key, r->tags[i].key_len);
        gw_xml_elem(w, "Value", r->tags[i].value, r->tags[i].value_len);
        gw_xml_close(w);
    }
    if (r->size_gt != GW_LC_NONE)
        gw_xml_elem_i64(w, "ObjectSizeGreaterThan", r->size_gt);
    if (r->size_lt != GW_LC_NONE)
        gw_xml_elem_i64(w, "ObjectSizeLessThan", r->size_lt);
}

static void gw_lc_write_rule(const struct gw_lc_rule *r, struct gw_xml_writer *w)
{
    gw_xml_open(w, "Rule");
    gw_xml_elem(w, "ID", r->id, r->id_len);
    if (r->legacy_prefix) {
        gw_xml_elem(w, "Prefix", r->prefix, r->prefix_len);
    } else {
        gw_xml_open(w, "Filter");
        if (r->filter_and)
            gw_xml_open(w, "And");
        gw_lc_write_conditions(r, w);
        if (r->filter_and)
            gw_xml_close(w);
        gw_xml_close(w);
    }
    gw_xml_elem_str(w, "Status", r->enabled ? "Enabled" : "Disabled");
    if (r->exp_days != GW_LC_NONE || r->exp_date_s != GW_LC_NONE || r->exp_marker != GW_LC_NONE) {
        gw_xml_open(w, "Expiration");
        if (r->exp_days != GW_LC_NONE)
            gw_xml_elem_i64(w, "Days", r->exp_days);
        if (r->exp_date_s != GW_LC_NONE)
            gw_xml_elem_time_ms(w, "Date", r->exp_date_s * 1000);
        if (r->exp_marker != GW_LC_NONE)
            gw_xml_elem_bool(w, "ExpiredObjectDeleteMarker", r->exp_marker);
        gw_xml_close(w);
    }
    if (r->nc_days != GW_LC_NONE) {
        gw_xml_open(w, "NoncurrentVersionExpiration");
        gw_xml_elem_i64(w, "NoncurrentDays", r->nc_days);
        if (r->nc_newer != GW_LC_NONE)
            gw_xml_elem_i64(w, "NewerNoncurrentVersions", r->nc_newer);
        gw_xml_close(w);
    }
    if (r->abort_days != GW_LC_NONE) {
        gw_xml_open(w, "AbortIncompleteMultipartUpload");
        gw_xml_elem_i64(w, "DaysAfterInitiation", r->abort_days);
        gw_xml_close(w);
    }
    gw_xml_close(w);
}

void gw_lc_write_xml(const struct gw_lc *lc, struct gw_xml_writer *w)
{
    gw_xml_open_ns(w, "LifecycleConfiguration", GW_XML_S3_NS);
    for (uint32_t i = 0; i < lc->n_rules; i++)
        gw_lc_write_rule(&lc->rules[i], w);
    gw_xml_close(w);
}

/* ---- when ------------------------------------------------------------- */

uint64_t gw_lc_next_boundary(uint64_t t_us, uint64_t day_us)
{
    uint64_t d = t_us / day_us;
    if (d >= UINT64_MAX / day_us - 1)
        return UINT64_MAX;
    return (d + 1) * day_us;
}

/* The boundary after start + days days, or UINT64_MAX past the range. */
static uint64_t gw_lc_after_days(uint64_t start_us, int64_t days, uint64_t day_us)
{
    if (days < 0 || (uint64_t)days > (UINT64_MAX - start_us) / day_us)
        return UINT64_MAX;
    return gw_lc_next_boundary(start_us + (uint64_t)days * day_us, day_us);
}

uint64_t gw_lc_rule_expire_at(const struct gw_lc_rule *rule, uint64_t created_us,
                              uint64_t day_us)
{
    if (rule->exp_days != GW_LC_NONE)
        return gw_lc_after_days(created_us, rule->exp_days, day_us);
    if (rule->exp_date_s != GW_LC_NONE)
        return (uint64_t)rule->exp_date_s * 1000000u;
    return UINT64_MAX;
}

uint64_t gw_lc_rule_abort_at(const struct gw_lc_rule *rule, uint64_t initiated_us,
                             uint64_t day_us)
{
    if (rule->abort_days == GW_LC_NONE)
        return UINT64_MAX;
    return gw_lc_after_days(initiated_us, rule->abort_days, day_us);
}

uint64_t gw_lc_rule_noncurrent_at(const struct gw_lc_rule *rule, uint64_t since_us,
                                  uint64_t nth, uint64_t day_us)
{
    if (rule->nc_days == GW_LC_NONE)
        return UINT64_MAX;
    if (rule->nc_newer != GW_LC_NONE && nth <= (uint64_t)rule->nc_newer)
        return UINT64_MAX;   /* one of the newer noncurrent versions kept */
    return gw_lc_after_days(since_us, rule->nc_days, day_us);
}

uint64_t gw_lc_rule_marker_at(const struct gw_lc_rule *rule, uint64_t created_us,
                              uint64_t day_us)
{
    if (rule->exp_marker == 1)
        return created_us;
    return gw_lc_rule_expire_at(rule, created_us, day_us);
}

int gw_lc_rule_prefix_matches(const struct gw_lc_rule *rule, const char *key, size_t len)
{
    return rule->prefix == NULL ||
           (len >= rule->prefix_len && memcmp(key, rule->prefix, rule->prefix_len) == 0);
}

int gw_lc_rule_matches(const struct gw_lc_rule *rule, const char *key, size_t len, uint64_t size,
                       const struct gw_tagset *tags)
{
    if (!gw_lc_rule_prefix_matches(rule, key, len))
        return 0;
    if (rule->size_gt != GW_LC_NONE && !(size > (uint64_t)rule->size_gt))
        return 0;
    if (rule->size_lt != GW_LC_NONE && !(size < (uint64_t)rule->size_lt))
        return 0;
    for (uint32_t i = 0; i < rule->n_tags; i++) {
        const struct gw_lc_tag *want = &rule->tags[i];
        int found = 0;
        for (size_t j = 0; tags != NULL && j < tags->n && !found; j++) {
            const struct gw_tag *t = &tags->tags[j];
            found = t->key_len == want->key_len && memcmp(t->key, want->key, t->key_len) == 0 &&
                    t->value_len == want->value_len &&
                    memcmp(t->value, want->value, t->value_len) == 0;
        }
        if (!found)
            return 0;
    }
    return 1;
}
