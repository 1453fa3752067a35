/* Versioning state, PutBucketVersioning's body, version ids and version
 * keys (versioning.h). Pure functions: unit-tested in
 * tests/unit/test_gw_versioning.c, fuzzed in tests/fuzz/fuzz_gw_versioning.c. */
#include "versioning.h"

#include <stdio.h>
#include <string.h>

#include <openssl/rand.h>

#include "xml.h"

#include "cn/rc.h"

enum gw_versioning_state gw_versioning_state_of(const void *value, size_t len)
{
    if (value == NULL)
        return GW_VERSIONING_OFF;
    if (len == 7 && memcmp(value, "Enabled", 7) == 0)
        return GW_VERSIONING_ENABLED;
    if (len == 9 && memcmp(value, "Suspended", 9) == 0)
        return GW_VERSIONING_SUSPENDED;
    return GW_VERSIONING_OFF;
}

const char *gw_versioning_state_str(enum gw_versioning_state s)
{
    switch (s) {
    case GW_VERSIONING_ENABLED:
        return "Enabled";
    case GW_VERSIONING_SUSPENDED:
        return "Suspended";
    case GW_VERSIONING_OFF:
        break;
    }
    return NULL;
}

/* ---- PutBucketVersioning's body -------------------------------------- */

struct gw_versioning_xml {
    enum gw_versioning_state state;
    int n_status, n_mfa;
    int mfa_enabled;
};

static enum gw_s3_err gw_versioning_xml_start(void *user, int depth, const char *name)
{
    (void)user;
    if (depth == 1 && strcmp(name, "VersioningConfiguration") != 0)
        return GW_S3_MALFORMED_XML;
    return GW_S3_OK;
}

static enum gw_s3_err gw_versioning_xml_end(void *user, int depth, const char *name,
                                            const char *text, size_t len)
{
    struct gw_versioning_xml *x = user;
    if (depth != 2)
        return GW_S3_OK;
    if (strcmp(name, "Status") == 0) {
        if (x->n_status++ > 0)
            return GW_S3_MALFORMED_XML;
        x->state = gw_versioning_state_of(text, len);
        return x->state == GW_VERSIONING_OFF ? GW_S3_MALFORMED_XML : GW_S3_OK;
    }
    if (strcmp(name, "MfaDelete") == 0) {
        if (x->n_mfa++ > 0)
            return GW_S3_MALFORMED_XML;
        if (len == 7 && memcmp(text, "Enabled", 7) == 0)
            x->mfa_enabled = 1;
        else if (!(len == 8 && memcmp(text, "Disabled", 8) == 0))
            return GW_S3_MALFORMED_XML;
        return GW_S3_OK;
    }
    return GW_S3_MALFORMED_XML;
}

enum gw_s3_err gw_versioning_parse_xml(const char *body, size_t len,
                                       enum gw_versioning_state *state)
{
    *state = GW_VERSIONING_OFF;
    if (len == 0)
        return GW_S3_MALFORMED_XML;
    struct gw_versioning_xml x = {.state = GW_VERSIONING_OFF};
    static const struct gw_xml_walk_cbs cbs = {gw_versioning_xml_start, gw_versioning_xml_end};
    enum gw_s3_err err = GW_S3_OK;
    if (gw_xml_walk(body, len, GW_VERSIONING_XML_MAX_BYTES, 16, &cbs, &x, &err) != CN_OK)
        return err != GW_S3_OK ? err : GW_S3_MALFORMED_XML;
    if (x.mfa_enabled)
        return GW_S3_NOT_IMPLEMENTED;
    *state = x.state;
    return GW_S3_OK;
}

/* ---- version ids ----------------------------------------------------- */

void gw_versioning_id_new(uint64_t ts, char out[GW_VERSIONING_ID_MAX])
{
    unsigned char b[8];
    uint64_t rnd = 0;
    if (RAND_bytes(b, sizeof(b)) == 1)   /* else ~ts alone: (ts, id) stays unique per HLC */
        memcpy(&rnd, b, sizeof(b));
    snprintf(out, GW_VERSIONING_ID_MAX, "%016llx%016llx", (unsigned long long)~ts,
             (unsigned long long)rnd);
}

static int gw_versioning_is_hex(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

int gw_versioning_id_check(const char *id, size_t len)
{
    if (id == NULL)
        return 0;
    if (len == 4 && memcmp(id, "null", 4) == 0)
        return 1;
    if (len == GW_VERSIONING_ID_LEN && gw_versioning_is_hex(id, len))
        return 2;
    return 0;
}

static uint64_t gw_versioning_hex16(const char *s)
{
    uint64_t v = 0;
    for (int i = 0; i < 16; i++)
        v = (v << 4) | (uint64_t)(s[i] <= '9' ? s[i] - '0' : s[i] - 'a' + 10);
    return v;
}

uint64_t gw_versioning_id_ts(const char *id)
{
    return ~gw_versioning_hex16(id);
}

/* ---- version keys ---------------------------------------------------- */

size_t gw_versioning_bucket_prefix(char *out, const char *bucket, size_t bucket_len)
{
    CN_ASSERT(bucket_len <= 63);
    memcpy(out, "v/", 2);
    memcpy(out + 2, bucket, bucket_len);
    out[2 + bucket_len] = '/';
    return 3 + bucket_len;
}

size_t gw_versioning_key_prefix(char *out, const char *bucket, size_t bucket_len,
                                const char *key, size_t key_len)
{
    CN_ASSERT(key_len <= 1024);
    size_t n = gw_versioning_bucket_prefix(out, bucket, bucket_len);
    memcpy(out + n, key, key_len);
    out[n + key_len] = '\0';
    return n + key_len + 1;
}

size_t gw_versioning_key(char *out, const char *bucket, size_t bucket_len, const char *key,
                         size_t key_len, const char *id, uint64_t ts)
{
    size_t n = gw_versioning_key_prefix(out, bucket, bucket_len, key, key_len);
    if (strcmp(id, "null") == 0) {
        char h[17];
        snprintf(h, sizeof(h), "%016llx", (unsigned long long)~ts);
        memcpy(out + n, h, 16);
        memcpy(out + n + 16, "null", 4);
        return n + 20;
    }
    CN_ASSERT(strlen(id) == GW_VERSIONING_ID_LEN);
    memcpy(out + n, id, GW_VERSIONING_ID_LEN);
    return n + GW_VERSIONING_ID_LEN;
}

int gw_versioning_key_split(const char *k, size_t len, size_t prefix_len, const char **key,
                            size_t *key_len, char id[GW_VERSIONING_ID_MAX], uint64_t *ts)
{
    if (len < prefix_len)
        return -1;
    const char *nul = memchr(k + prefix_len, '\0', len - prefix_len);
    if (nul == NULL)
        return -1;
    const char *suf = nul + 1;
    size_t suf_len = len - (size_t)(suf - k);
    if (suf_len == 20 && gw_versioning_is_hex(suf, 16) && memcmp(suf + 16, "null", 4) == 0) {
        memcpy(id, "null", 5);
    } else if (suf_len == GW_VERSIONING_ID_LEN && gw_versioning_is_hex(suf, suf_len)) {
        memcpy(id, suf, GW_VERSIONING_ID_LEN);
        id[GW_VERSIONING_ID_LEN] = '\0';
    } else {
        return -1;
    }
    *key = k + prefix_len;
    *key_len = (size_t)(nul - *key);
    *ts = ~gw_versioning_hex16(suf);
    return 0;
}
