/* Fuzz target: a basho_bench config file through the Erlang-term reader and
 * the settings table, then the dump of what was read back through the
 * reader (it must parse). Nothing may crash, leak or read out of bounds. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "settings.h"
#include "term.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct bench_term_doc doc;
    char err[CN_ERR_LEN];
    if (bench_term_parse_doc((const char *)data, size, &doc, err) != CN_OK) {
        CN_ASSERT(strncmp(err, "line ", 5) == 0 || strncmp(err, "input larger", 12) == 0);
        return 0;
    }
    static struct bench_settings s;
    bench_settings_init(&s);
    int rc = bench_settings_apply_doc(&s, &doc, "fuzz", NULL, NULL, err);
    for (size_t i = 0; i < doc.nterms; i++) {
        char out[512];
        bench_term_format(doc.terms[i], out, sizeof(out));
    }
    bench_term_doc_fini(&doc);
    if (rc == CN_OK && bench_settings_check(&s, err) == CN_OK) {
        static char dump[1 << 16];
        FILE *f = fmemopen(dump, sizeof(dump) - 1, "w");
        if (f != NULL) {
            bench_settings_dump(&s, f);
            long n = ftell(f);
            fclose(f);
            if (n > 0 && n < (long)sizeof(dump) - 1) {
                int back = bench_term_parse_doc(dump, (size_t)n, &doc, err);
                CN_ASSERT(back == CN_OK);
                bench_term_doc_fini(&doc);
            }
        }
    }
    /* each term also as a command-line value */
    if (size < 256) {
        char text[256];
        memcpy(text, data, size);
        text[size] = '\0';
        bench_settings_apply_text(&s, "operations", text, NULL, NULL, err);
        bench_settings_apply_text(&s, "key_generator", text, NULL, NULL, err);
        bench_settings_apply_text(&s, "http_raw_ips", text, NULL, NULL, err);
        bench_settings_apply_text(&s, "endpoint", text, NULL, NULL, err);
        bench_settings_apply_text(&s, "duration", text, NULL, NULL, err);
    }
    return 0;
}
