/* Fuzzes the bucket-policy parser (policy.c, jansson underneath) for bucket
 * "b", and evaluates what parses against a few requests: whatever the
 * document, evaluation terminates with one of the three effects. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "cn/rc.h"
#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[GW_POLICY_WHY_MAX];
    struct gw_policy *p = gw_policy_parse((const char *)data, size, "b", why);
    if (p == NULL) {
        CN_ASSERT(why[0] != '\0');
        return 0;
    }
    static const char *const actions[] = {"s3:GetObject", "s3:ListBucket", "s3:PutObject"};
    static const char *const keys[] = {NULL, "a/x", "a/../b", ""};
    for (size_t i = 0; i < CN_ARRAY_LEN(actions); i++)
        for (size_t k = 0; k < CN_ARRAY_LEN(keys); k++) {
            struct gw_policy_request q = {
                .principal = (k & 1) ? "other" : NULL,
                .action = actions[i],
                .bucket = "b",
                .bucket_len = 1,
                .key = keys[k],
                .key_len = keys[k] != NULL ? strlen(keys[k]) : 0,
                .source_family = AF_INET,
                .source = {127, 0, 0, 1},
                .prefix = k == 2 ? "a/" : NULL,
                .prefix_len = k == 2 ? 2 : 0,
            };
            enum gw_policy_effect e = gw_policy_eval(p, &q);
            CN_ASSERT(e == GW_POLICY_NONE || e == GW_POLICY_ALLOW || e == GW_POLICY_DENY);
        }
    (void)gw_policy_is_public(p);
    gw_policy_free(p);
    return 0;
}
