/* Fuzzes the S3 request-body parsers (Delete, CompleteMultipartUpload,
 * CreateBucketConfiguration, Tagging, CORSConfiguration,
 * LifecycleConfiguration: the first byte picks one; 0xA0..0xA2:
 * AccessControlPolicy, OwnershipControls, PublicAccessBlockConfiguration of
 * acl.c) and the XML escaper over the rest of the input. A lifecycle
 * configuration that parses must come back the same through its stored
 * form. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <event2/buffer.h>

#include "acl.h"
#include "cn/alloc.h"
#include "cn/rc.h"
#include "lifecycle.h"
#include "xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Parses body as a lifecycle configuration; what parses is written in the
 * stored form, which must parse again to the same document. */
static void fuzz_gw_xml_lifecycle(const char *body, size_t len)
{
    struct gw_lc lc;
    enum gw_s3_err err = GW_S3_OK;
    char why[GW_XML_WHY_MAX];
    int rc = gw_lc_parse(body, len, &lc, &err, why);
    CN_ASSERT((rc == CN_OK) == (err == GW_S3_OK));
    CN_ASSERT(rc == CN_OK ? lc.n_rules >= 1 && lc.n_rules <= GW_LC_MAX_RULES : lc.n_rules == 0);
    if (rc != CN_OK)
        return;
    struct evbuffer *a = evbuffer_new(), *b = evbuffer_new();
    struct gw_xml_writer w;
    gw_xml_writer_init(&w, a);
    gw_lc_write_xml(&lc, &w);
    CN_ASSERT(gw_xml_writer_finish(&w) == CN_OK);
    size_t n = evbuffer_get_length(a);
    struct gw_lc back;
    CN_ASSERT(gw_lc_parse((const char *)evbuffer_pullup(a, -1), n, &back, &err, why) == CN_OK);
    CN_ASSERT(back.n_rules == lc.n_rules);
    gw_xml_writer_init(&w, b);
    gw_lc_write_xml(&back, &w);
    CN_ASSERT(gw_xml_writer_finish(&w) == CN_OK);
    CN_ASSERT(evbuffer_get_length(b) == n &&
              memcmp(evbuffer_pullup(a, -1), evbuffer_pullup(b, -1), n) == 0);
    gw_lc_fini(&back);
    gw_lc_fini(&lc);
    evbuffer_free(a);
    evbuffer_free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    enum gw_s3_err err = GW_S3_OK;
    if (data[0] == 0xA0) {
        struct gw_acl *acl = cn_malloc(sizeof(*acl));
        err = gw_acl_parse_xml(acl, body, len);
        CN_ASSERT(acl->n <= GW_ACL_MAX_GRANTS && strlen(acl->owner) <= GW_ACL_ID_MAX);
        if (err == GW_S3_OK) {   /* what parses survives the stored form */
            char *text;
            size_t tl;
            struct gw_acl *back = cn_malloc(sizeof(*back));
            gw_acl_encode(acl, &text, &tl);
            CN_ASSERT(gw_acl_decode(back, text, tl) == CN_OK && back->n == acl->n);
            cn_free(text);
            cn_free(back);
        }
        cn_free(acl);
        return 0;
    }
    if (data[0] == 0xA1) {
        int o = -1;
        if (gw_acl_parse_ownership_xml(body, len, &o) == GW_S3_OK)
            CN_ASSERT(o >= 0 && o <= 2);
        return 0;
    }
    if (data[0] == 0xA2) {
        unsigned f = 0;
        gw_acl_parse_pab_xml(body, len, &f);
        CN_ASSERT(f <= 15);
        return 0;
    }
    switch (data[0] % 7) {
    case 0: {
        struct gw_xml_delete d;
        int rc = gw_xml_parse_delete(body, len, &d, &err);
        CN_ASSERT((rc == CN_OK) == (err == GW_S3_OK));
        CN_ASSERT(rc != CN_OK || (d.n_objects >= 1 && d.n_objects <= GW_XML_DELETE_MAX_OBJECTS));
        for (size_t i = 0; rc == CN_OK && i < d.n_objects; i++)
            CN_ASSERT(d.objects[i].key != NULL && strlen(d.objects[i].key) == d.objects[i].key_len);
        gw_xml_delete_fini(&d);
        break;
    }
    case 1: {
        struct gw_xml_complete c;
        int rc = gw_xml_parse_complete(body, len, &c, &err);
        CN_ASSERT((rc == CN_OK) == (err == GW_S3_OK));
        for (size_t i = 1; rc == CN_OK && i < c.n_parts; i++)
            CN_ASSERT(c.parts[i - 1].part_number < c.parts[i].part_number);
        gw_xml_complete_fini(&c);
        break;
    }
    case 2: {
        char loc[GW_XML_LOCATION_MAX + 1];
        int rc = gw_xml_parse_create_bucket(body, len, loc, &err);
        CN_ASSERT(strlen(loc) <= GW_XML_LOCATION_MAX);
        CN_ASSERT((rc == CN_OK) == (err == GW_S3_OK));
        break;
    }
    case 3: {
        struct gw_tagset *t = gw_tagset_new(len % 2 ? GW_TAGSET_MAX : GW_TAGSET_BUCKET_MAX);
        const char *why = NULL;
        int rc = gw_xml_parse_tagging(body, len, t, &err, &why);
        CN_ASSERT((rc == CN_OK) == (err == GW_S3_OK));
        CN_ASSERT(rc == CN_OK ? t->n <= t->max : t->n == 0);
        gw_tagset_free(t);
        break;
    }
    case 4: {
        struct gw_cors c;
        char why[GW_XML_WHY_MAX];
        memset(&c, 0, sizeof(c));
        int rc = gw_xml_parse_cors(body, len, &c, &err, why);
        CN_ASSERT((rc == CN_OK) == (err == GW_S3_OK));
        CN_ASSERT(rc == CN_OK ? c.n_rules >= 1 && c.n_rules <= GW_CORS_MAX_RULES
                              : c.n_rules == 0);
        for (size_t i = 0; rc == CN_OK && i < c.n_rules; i++)
            CN_ASSERT(c.rules[i].methods != 0 && c.rules[i].origins.n >= 1);
        gw_cors_fini(&c);
        break;
    }
    case 6:
        fuzz_gw_xml_lifecycle(body, len);
        break;
    default: {
        struct evbuffer *b = evbuffer_new();
        struct gw_xml_writer w;
        gw_xml_writer_init(&w, b);
        gw_xml_open(&w, "R");
        gw_xml_elem(&w, "Key", body, len);
        gw_xml_close(&w);
        CN_ASSERT(gw_xml_writer_finish(&w) == CN_OK);
        /* no raw markup character survives escaping */
        size_t n = evbuffer_get_length(b);
        char *out = (char *)evbuffer_pullup(b, -1);
        size_t start = strlen("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<R><Key>");
        for (size_t i = start; i + strlen("</Key></R>") < n; i++)
            CN_ASSERT(out[i] != '<' && out[i] != '>' && out[i] != '"' && out[i] != '\r');
        evbuffer_free(b);
        break;
    }
    }
    return 0;
}
