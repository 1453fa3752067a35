/* Fuzz target: the cluster file / cluster map record parser over arbitrary
 * bytes; what parses is written back and must parse to the same text. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/cluster.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cn_cluster *c = NULL;
    char err[CN_ERR_LEN];
    if (cn_cluster_parse((const char *)data, size, &c, err) != CN_OK)
        return 0;
    size_t len = 0, len2 = 0;
    char *text = cn_cluster_format(c, &len);
    struct cn_cluster *back = NULL;
    CN_ASSERT(cn_cluster_parse(text, len, &back, err) == CN_OK);
    char *text2 = cn_cluster_format(back, &len2);
    CN_ASSERT(len == len2 && memcmp(text, text2, len) == 0);
    char ring_err[CN_ERR_LEN];
    cn_ring_free(cn_cluster_ring(c, 8, ring_err));
    cn_free(text2);
    cn_free(text);
    cn_cluster_free(back);
    cn_cluster_free(c);
    return 0;
}
