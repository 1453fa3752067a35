/* Fuzzes the object tag-set parsers: the first byte picks the PUT ?tagging
 * XML body (xml.c) or the x-amz-tagging query form (tagset.c), the rest is
 * the input. Whatever parses must hold only tags S3 allows, and must come
 * back unchanged through the stored form (encode, then parse again), which
 * is how GET ?tagging and x-amz-tagging-count read it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/rc.h"
#include "tagset.h"
#include "xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* set, as parsed, must survive the stored form. */
static void fuzz_gw_tagging_round_trip(const struct gw_tagset *set)
{
    char *enc = cn_malloc(GW_TAGSET_ENCODED_MAX_OF(set->max));
    size_t n = gw_tagset_encode(set, enc, GW_TAGSET_ENCODED_MAX_OF(set->max));
    CN_ASSERT((n == 0) == (set->n == 0));
    CN_ASSERT(gw_tagset_count_encoded(enc, n) == set->n);
    struct gw_tagset *back = gw_tagset_new(set->max);
    const char *why = NULL;
    CN_ASSERT(gw_tagset_parse_query(back, enc, n, &why) == GW_S3_OK);
    CN_ASSERT(back->n == set->n);
    for (size_t i = 0; i < set->n; i++) {
        const struct gw_tag *a = &set->tags[i], *b = &back->tags[i];
        CN_ASSERT(a->key_len >= 1 && a->key_len <= GW_TAGSET_KEY_BYTES);
        CN_ASSERT(a->value_len <= GW_TAGSET_VALUE_BYTES);
        CN_ASSERT(a->key_len == b->key_len && memcmp(a->key, b->key, a->key_len) == 0);
        CN_ASSERT(a->value_len == b->value_len && memcmp(a->value, b->value, a->value_len) == 0);
    }
    gw_tagset_free(back);
    cn_free(enc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char *in = (const char *)data + 1;
    size_t len = size - 1;
    struct gw_tagset *set = gw_tagset_new(data[0] & 2 ? GW_TAGSET_BUCKET_MAX : GW_TAGSET_MAX);
    const char *why = NULL;
    enum gw_s3_err err = GW_S3_OK;
    if (data[0] % 2 == 0) {
        int rc = gw_xml_parse_tagging(in, len, set, &err, &why);
        CN_ASSERT((rc == CN_OK) == (err == GW_S3_OK));
        CN_ASSERT(rc == CN_OK || set->n == 0);
    } else {
        err = gw_tagset_parse_query(set, in, len, &why);
        CN_ASSERT(err == GW_S3_OK || why != NULL);
    }
    CN_ASSERT(set->n <= set->max);
    if (err == GW_S3_OK)
        fuzz_gw_tagging_round_trip(set);
    gw_tagset_free(set);
    return 0;
}
