/* POST object policies (post_policy.h): the JSON is parsed by jansson with
 * duplicate keys refused; every condition is checked, then every field is
 * looked up among the conditions' names. */
#include "post_policy.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "checksum.h"
#include "s3_names.h"

#include "cn/alloc.h"

#define GW_POST_POLICY_NAME_MAX 128

static enum gw_s3_err gw_post_policy_bad(char why[CN_ERR_LEN], const char *what)
{
    snprintf(why, CN_ERR_LEN, "Invalid Policy: %s", what);
    return GW_S3_INVALID_POLICY_DOCUMENT;
}

int gw_post_policy_exempt(const char *name, size_t len)
{
    static const char *const exempt[] = {"policy", "signature", "awsaccesskeyid",
                                         "x-amz-signature", "file"};
    for (size_t i = 0; i < CN_ARRAY_LEN(exempt); i++)
        if (len == strlen(exempt[i]) && strncasecmp(name, exempt[i], len) == 0)
            return 1;
    return len >= 9 && strncasecmp(name, "x-ignore-", 9) == 0;
}

/* The names the conditions cover, to find extra fields afterwards. */
struct gw_post_policy_names {
    char names[GW_POST_POLICY_MAX_CONDITIONS][GW_POST_POLICY_NAME_MAX];
    size_t n;
};

static void gw_post_policy_cover(struct gw_post_policy_names *c, const char *name)
{
    if (c->n < GW_POST_POLICY_MAX_CONDITIONS) {
        snprintf(c->names[c->n], GW_POST_POLICY_NAME_MAX, "%s", name);
        c->n++;
    }
}

/* The value a condition's field has: the request's bucket for "bucket",
 * else the form field (NULL when the form has none). */
static const char *gw_post_policy_value(const struct gw_post_policy_input *in, const char *name,
                                        size_t *len)
{
    if (strcasecmp(name, "bucket") == 0) {
        *len = in->bucket_len;
        return in->bucket;
    }
    const struct gw_post_form_field *f = gw_post_form_field(in->form, name);
    if (f == NULL)
        return NULL;
    *len = f->value_len;
    return f->value;
}

/* "Policy Condition failed: [...]" with the condition as JSON. */
static enum gw_s3_err gw_post_policy_failed(char why[CN_ERR_LEN], json_t *cond)
{
    char *s = json_dumps(cond, JSON_COMPACT | JSON_ENCODE_ANY);
    snprintf(why, CN_ERR_LEN, "Invalid according to Policy: Policy Condition failed: %s",
             s != NULL ? s : "?");
    free(s);
    return GW_S3_ACCESS_DENIED;
}

/* A content-length-range bound: a non-negative integer (or a string of
 * digits, as some SDKs send). */
static int gw_post_policy_bound(json_t *v, uint64_t *out)
{
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *out = (uint64_t)json_integer_value(v);
        return CN_OK;
    }
    if (!json_is_string(v))
        return CN_INVAL;
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    if (n == 0 || n > 18)
        return CN_INVAL;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return CN_INVAL;
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    *out = x;
    return CN_OK;
}

/* One ["op", ...] condition. */
static enum gw_s3_err gw_post_policy_array(json_t *cond, const struct gw_post_policy_input *in,
                                           struct gw_post_policy_names *cover, uint64_t *min,
                                           uint64_t *max, char why[CN_ERR_LEN])
{
    if (json_array_size(cond) != 3 || !json_is_string(json_array_get(cond, 0)))
        return gw_post_policy_bad(why, "a condition array must have three elements.");
    const char *op = json_string_value(json_array_get(cond, 0));
    if (strcasecmp(op, "content-length-range") == 0) {
        uint64_t lo, hi;
        if (gw_post_policy_bound(json_array_get(cond, 1), &lo) != CN_OK ||
            gw_post_policy_bound(json_array_get(cond, 2), &hi) != CN_OK || lo > hi)
            return gw_post_policy_bad(why, "Invalid content-length-range.");
        *min = CN_MAX(*min, lo);
        *max = CN_MIN(*max, hi);
        return GW_S3_OK;
    }
    int eq = strcasecmp(op, "eq") == 0, sw = strcasecmp(op, "starts-with") == 0;
    json_t *f = json_array_get(cond, 1), *v = json_array_get(cond, 2);
    if ((!eq && !sw) || !json_is_string(f) || !json_is_string(v))
        return gw_post_policy_bad(why, "a condition must be eq, starts-with or "
                                       "content-length-range.");
    const char *name = json_string_value(f);
    if (name[0] != '$' || name[1] == '\0' || strlen(name) >= GW_POST_POLICY_NAME_MAX)
        return gw_post_policy_bad(why, "a condition's field must start with '$'.");
    name++;
    gw_post_policy_cover(cover, name);
    size_t have_len, want_len = json_string_length(v);
    const char *have = gw_post_policy_value(in, name, &have_len);
    const char *want = json_string_value(v);
    int ok = have != NULL && (eq ? have_len == want_len && memcmp(have, want, want_len) == 0
                                 : have_len >= want_len && memcmp(have, want, want_len) == 0);
    return ok ? GW_S3_OK : gw_post_policy_failed(why, cond);
}

/* One {"field": "value"} condition. */
static enum gw_s3_err gw_post_policy_object(json_t *cond, const struct gw_post_policy_input *in,
                                            struct gw_post_policy_names *cover,
                                            char why[CN_ERR_LEN])
{
    const char *name;
    json_t *v;
    if (json_object_size(cond) != 1)
        return gw_post_policy_bad(why, "a condition object must have one member.");
    json_object_foreach(cond, name, v) {
        if (!json_is_string(v) || strlen(name) >= GW_POST_POLICY_NAME_MAX)
            return gw_post_policy_bad(why, "a condition's value must be a string.");
        gw_post_policy_cover(cover, name);
        size_t have_len, want_len = json_string_length(v);
        const char *have = gw_post_policy_value(in, name, &have_len);
        if (have == NULL || have_len != want_len ||
            memcmp(have, json_string_value(v), want_len) != 0)
            return gw_post_policy_failed(why, cond);
    }
    return GW_S3_OK;
}

static enum gw_s3_err gw_post_policy_json(json_t *doc, const struct gw_post_policy_input *in,
                                          uint64_t *min, uint64_t *max, char why[CN_ERR_LEN])
{
    if (!json_is_object(doc))
        return gw_post_policy_bad(why, "the policy must be a JSON object.");
    json_t *exp = json_object_get(doc, "expiration");
    json_t *conds = json_object_get(doc, "conditions");
    int64_t exp_ms;
    if (!json_is_string(exp) ||
        gw_s3_names_iso8601_parse(json_string_value(exp), json_string_length(exp), &exp_ms) !=
            CN_OK)
        return gw_post_policy_bad(why, "Policy expiration must be an ISO8601 date.");
    if (!json_is_array(conds) || json_array_size(conds) > GW_POST_POLICY_MAX_CONDITIONS)
        return gw_post_policy_bad(why, "Policy must contain a conditions array.");
    if ((int64_t)in->now * 1000 >= exp_ms) {
        snprintf(why, CN_ERR_LEN, "Invalid according to Policy: Policy expired.");
        return GW_S3_ACCESS_DENIED;
    }
    struct gw_post_policy_names *cover = cn_calloc(1, sizeof(*cover));
    enum gw_s3_err err = GW_S3_OK;
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c) {
        if (json_is_array(c))
            err = gw_post_policy_array(c, in, cover, min, max, why);
        else if (json_is_object(c))
            err = gw_post_policy_object(c, in, cover, why);
        else
            err = gw_post_policy_bad(why, "a condition must be an object or an array.");
        if (err != GW_S3_OK)
            break;
    }
    for (size_t k = 0; err == GW_S3_OK && k < gw_post_form_field_count(in->form); k++) {
        const struct gw_post_form_field *f = gw_post_form_field_at(in->form, k);
        if (gw_post_policy_exempt(f->name, f->name_len))
            continue;
        int found = 0;
        for (size_t j = 0; j < cover->n && !found; j++)
            found = strlen(cover->names[j]) == f->name_len &&
                    strncasecmp(cover->names[j], f->name, f->name_len) == 0;
        if (!found) {
            snprintf(why, CN_ERR_LEN, "Invalid according to Policy: Extra input fields: %.*s",
                     (int)CN_MIN(f->name_len, 64), f->name);
            err = GW_S3_ACCESS_DENIED;
        }
    }
    cn_free(cover);
    return err;
}

enum gw_s3_err gw_post_policy_check(const char *b64, size_t len,
                                    const struct gw_post_policy_input *in, uint64_t *min,
                                    uint64_t *max, char why[CN_ERR_LEN])
{
    why[0] = '\0';
    *min = 0;
    *max = UINT64_MAX;
    if (len == 0 || len > GW_POST_POLICY_MAX)
        return gw_post_policy_bad(why, "the policy is empty or too long.");
    unsigned char *json = cn_malloc(len);
    size_t jlen = 0;
    if (gw_checksum_base64_decode(b64, len, json, len, &jlen) != CN_OK) {
        cn_free(json);
        return gw_post_policy_bad(why, "the policy is not valid base64.");
    }
    json_error_t jerr;
    json_t *doc = json_loadb((const char *)json, jlen, JSON_REJECT_DUPLICATES, &jerr);
    cn_free(json);
    if (doc == NULL)
        return gw_post_policy_bad(why, "Invalid JSON.");
    enum gw_s3_err err = gw_post_policy_json(doc, in, min, max, why);
    json_decref(doc);
    return err;
}
