/* Object tag sets: S3's rules on a tag (see tagset.h) and the query and XML
 * forms. The messages are the ones S3 answers with. */
#include "tagset.h"

#include <string.h>

#include "s3_names.h"
#include "xml.h"

#include "cn/alloc.h"
#include "cn/rc.h"

static const char gw_tagset_msg_too_many[] = "Object tags cannot be greater than 10";
static const char gw_tagset_msg_too_many_bucket[] = "Bucket tag count cannot be greater than 50";
static const char gw_tagset_msg_bad_key[] = "The TagKey you have provided is invalid";
static const char gw_tagset_msg_bad_value[] = "The TagValue you have provided is invalid";
static const char gw_tagset_msg_long_key[] = "The TagKey you have provided is too long, max 128";
static const char gw_tagset_msg_long_value[] =
    "The TagValue you have provided is too long, max 256";
static const char gw_tagset_msg_aws_key[] = "Your TagKey cannot be prefixed with aws:";
static const char gw_tagset_msg_dup_key[] = "Cannot provide multiple Tags with the same key";
static const char gw_tagset_msg_header[] =
    "The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query parameters "
    "without tag name duplicates.";

/* Decodes the UTF-8 character at s[0..len): returns its length and sets
 * *cp, or 0 when the bytes are not UTF-8 (overlong forms, surrogates and
 * code points past U+10FFFF included). */
static size_t gw_tagset_utf8_next(const unsigned char *s, size_t len, unsigned *cp)
{
    unsigned c = s[0];
    size_t n;
    unsigned min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2, min = 0x80, c &= 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3, min = 0x800, c &= 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4, min = 0x10000, c &= 0x07;
    } else {
        return 0;
    }
    if (len < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return n;
}

/* May a tag hold the character cp? Letters, digits, white space and
 * + - = . _ : / @ in ASCII; beyond it, all but the C1 controls. */
static int gw_tagset_char_ok(unsigned cp)
{
    if (cp >= 0x80)
        return cp >= 0xa0;
    if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9'))
        return 1;
    return cp != 0 && strchr(" +-=._:/@", (int)cp) != NULL;
}

/* Checks s as a tag key or value: UTF-8 of allowed characters, at most max
 * UTF-16 units. Returns 1 when valid, 0 for a bad character, -1 when too
 * long. */
static int gw_tagset_text_check(const char *s, size_t len, size_t max)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t units = 0;
    for (size_t i = 0; i < len;) {
        unsigned cp;
        size_t n = gw_tagset_utf8_next(u + i, len - i, &cp);
        if (n == 0 || !gw_tagset_char_ok(cp))
            return 0;
        units += cp >= 0x10000 ? 2 : 1;
        i += n;
    }
    return units <= max ? 1 : -1;
}

/* Checks key and value (not the set); GW_S3_OK or InvalidTag with *why. */
static enum gw_s3_err gw_tagset_check(const char *key, size_t key_len, const char *value,
                                      size_t value_len, const char **why)
{
    int k = key_len == 0 ? 0 : gw_tagset_text_check(key, key_len, GW_TAGSET_KEY_MAX);
    if (k != 1) {
        *why = k < 0 ? gw_tagset_msg_long_key : gw_tagset_msg_bad_key;
        return GW_S3_INVALID_TAG;
    }
    if (key_len >= 4 && memcmp(key, "aws:", 4) == 0) {
        *why = gw_tagset_msg_aws_key;
        return GW_S3_INVALID_TAG;
    }
    int v = gw_tagset_text_check(value, value_len, GW_TAGSET_VALUE_MAX);
    if (v != 1) {
        *why = v < 0 ? gw_tagset_msg_long_value : gw_tagset_msg_bad_value;
        return GW_S3_INVALID_TAG;
    }
    return GW_S3_OK;
}

struct gw_tagset *gw_tagset_new(size_t max)
{
    CN_ASSERT(max == GW_TAGSET_MAX || max == GW_TAGSET_BUCKET_MAX);
    struct gw_tagset *set = cn_calloc(1, sizeof(*set) + max * sizeof(set->tags[0]));
    set->max = max;
    return set;
}

void gw_tagset_free(struct gw_tagset *set)
{
    cn_free(set);
}

enum gw_s3_err gw_tagset_add(struct gw_tagset *set, const char *key, size_t key_len,
                             const char *value, size_t value_len, const char **why)
{
    if (set->n >= set->max) {
        *why = set->max == GW_TAGSET_MAX ? gw_tagset_msg_too_many : gw_tagset_msg_too_many_bucket;
        return GW_S3_BAD_REQUEST;
    }
    enum gw_s3_err err = gw_tagset_check(key, key_len, value, value_len, why);
    if (err != GW_S3_OK)
        return err;
    /* valid text of at most max units fits: 3 bytes per unit at most */
    CN_ASSERT(key_len <= GW_TAGSET_KEY_BYTES && value_len <= GW_TAGSET_VALUE_BYTES);
    for (size_t i = 0; i < set->n; i++) {
        const struct gw_tag *t = &set->tags[i];
        if (t->key_len == key_len && memcmp(t->key, key, key_len) == 0) {
            *why = gw_tagset_msg_dup_key;
            return GW_S3_INVALID_TAG;
        }
    }
    struct gw_tag *t = &set->tags[set->n++];
    memcpy(t->key, key, key_len);
    t->key_len = key_len;
    memcpy(t->value, value, value_len);
    t->value_len = value_len;
    return GW_S3_OK;
}

/* Percent-decodes one piece of the query form into out (cap bytes): a piece
 * longer than cap cannot be a valid tag, so it is decoded only as far as
 * needed to say so (InvalidTag, too long). */
static enum gw_s3_err gw_tagset_decode_piece(const char *s, size_t len, char *out, size_t cap,
                                             size_t *out_len, int is_key, const char **why)
{
    if (len > 3 * cap) { /* even fully escaped it decodes to more than cap */
        *why = is_key ? gw_tagset_msg_long_key : gw_tagset_msg_long_value;
        return GW_S3_INVALID_TAG;
    }
    char tmp[3 * GW_TAGSET_VALUE_BYTES];
    if (gw_s3_names_uri_decode(s, len, tmp, out_len, 1) != CN_OK) {
        *why = gw_tagset_msg_header;
        return GW_S3_INVALID_ARGUMENT;
    }
    if (*out_len > cap) {
        *why = is_key ? gw_tagset_msg_long_key : gw_tagset_msg_long_value;
        return GW_S3_INVALID_TAG;
    }
    memcpy(out, tmp, *out_len);
    return GW_S3_OK;
}

enum gw_s3_err gw_tagset_parse_query(struct gw_tagset *set, const char *s, size_t len,
                                     const char **why)
{
    set->n = 0;
    const char *p = s, *end = s + len;
    while (len > 0) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *e = amp != NULL ? amp : end;
        if (e == p) { /* "&&", a leading or a trailing '&' */
            *why = gw_tagset_msg_header;
            return GW_S3_INVALID_ARGUMENT;
        }
        const char *eq = memchr(p, '=', (size_t)(e - p));
        const char *ke = eq != NULL ? eq : e;
        const char *v = eq != NULL ? eq + 1 : e;
        char key[GW_TAGSET_KEY_BYTES], value[GW_TAGSET_VALUE_BYTES];
        size_t kl, vl;
        enum gw_s3_err err =
            gw_tagset_decode_piece(p, (size_t)(ke - p), key, sizeof(key), &kl, 1, why);
        if (err == GW_S3_OK)
            err = gw_tagset_decode_piece(v, (size_t)(e - v), value, sizeof(value), &vl, 0, why);
        if (err == GW_S3_OK)
            err = gw_tagset_add(set, key, kl, value, vl, why);
        if (err == GW_S3_INVALID_TAG && *why == gw_tagset_msg_dup_key) {
            *why = gw_tagset_msg_header; /* S3's answer to a duplicate in the header */
            err = GW_S3_INVALID_ARGUMENT;
        }
        if (err != GW_S3_OK)
            return err;
        if (amp == NULL)
            break;
        p = amp + 1;
        if (p == end) {
            *why = gw_tagset_msg_header;
            return GW_S3_INVALID_ARGUMENT;
        }
    }
    return GW_S3_OK;
}

/* Appends s percent-encoded (all but unreserved) at out[*n], if it fits. */
static int gw_tagset_encode_text(const char *s, size_t len, char *out, size_t cap, size_t *n)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.' || c == '_' || c == '~';
        if (*n + (plain ? 1 : 3) > cap)
            return CN_TOOBIG;
        if (plain) {
            out[(*n)++] = (char)c;
        } else {
            out[(*n)++] = '%';
            out[(*n)++] = hex[c >> 4];
            out[(*n)++] = hex[c & 15];
        }
    }
    return CN_OK;
}

size_t gw_tagset_encode(const struct gw_tagset *set, char *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++) {
        const struct gw_tag *t = &set->tags[i];
        if (i > 0) {
            if (n + 1 > cap)
                return 0;
            out[n++] = '&';
        }
        if (gw_tagset_encode_text(t->key, t->key_len, out, cap, &n) != CN_OK || n + 1 > cap)
            return 0;
        out[n++] = '=';
        if (gw_tagset_encode_text(t->value, t->value_len, out, cap, &n) != CN_OK)
            return 0;
    }
    return n;
}

size_t gw_tagset_count_encoded(const char *s, size_t len)
{
    if (len == 0)
        return 0;
    size_t n = 1;
    for (size_t i = 0; i < len; i++)
        n += s[i] == '&';
    return n;
}

void gw_tagset_write_xml(const struct gw_tagset *set, struct gw_xml_writer *w)
{
    gw_xml_open_ns(w, "Tagging", GW_XML_S3_NS);
    gw_xml_open(w, "TagSet");
    for (size_t i = 0; i < set->n; i++) {
        const struct gw_tag *t = &set->tags[i];
        gw_xml_open(w, "Tag");
        gw_xml_elem(w, "Key", t->key, t->key_len);
        gw_xml_elem(w, "Value", t->value, t->value_len);
        gw_xml_close(w);
    }
    gw_xml_close(w); /* TagSet */
    gw_xml_close(w); /* Tagging */
}
