/* Fuzz target: the `key = value` settings parser over arbitrary bytes, and
 * the CPU-list value of the daemons' cpu_affinity setting (cn/affinity.h). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cn/affinity.h"
#include "cn/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_conf {
    int flag;
    int64_t n, size, ms;
    char *s;
    int e;
};

static const char *const fuzz_enum[] = {"a", "b", NULL};
static const struct cn_config_desc fuzz_tab[] = {
    {"flag", CN_CONF_BOOL, offsetof(struct fuzz_conf, flag), "0", 0, 0, NULL, ""},
    {"n", CN_CONF_INT, offsetof(struct fuzz_conf, n), "1", 0, 1000, NULL, ""},
    {"x.size", CN_CONF_SIZE, offsetof(struct fuzz_conf, size), "5M", 0, INT64_MAX, NULL, ""},
    {"ms", CN_CONF_MSEC, offsetof(struct fuzz_conf, ms), "1s", 0, INT64_MAX, NULL, ""},
    {"s", CN_CONF_STRING, offsetof(struct fuzz_conf, s), "x", 0, 0, NULL, ""},
    {"e", CN_CONF_ENUM, offsetof(struct fuzz_conf, e), "a", 0, 0, fuzz_enum, ""},
    CN_CONFIG_END,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_conf c;
    char err[CN_ERR_LEN];
    cn_config_init(fuzz_tab, &c, err);
    cn_config_load_buf(fuzz_tab, &c, (const char *)data, size, "fuzz", err);
    cn_config_fini(fuzz_tab, &c);
    if (size < 256) {
        char list[256];
        cpu_set_t set;
        memcpy(list, data, size);
        list[size] = '\0';
        cn_cpu_list_parse(list, &set, err);
    }
    return 0;
}
