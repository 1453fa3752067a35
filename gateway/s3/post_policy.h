/* The policy document of a POST object form (AWS "Creating a POST policy"):
 * base64 JSON {"expiration": ISO 8601, "conditions": [...]} parsed with
 * jansson, then checked against the form's fields. Conditions: {"field":
 * "value"} and ["eq", "$field", "value"] (exact), ["starts-with", "$field",
 * "prefix"] ("" matches anything), ["content-length-range", min, max] (the
 * file's size, enforced while it streams). Every form field but policy,
 * the signature fields, file and x-ignore-* must be named by a condition. */
#ifndef GW_POST_POLICY_H
#define GW_POST_POLICY_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "cn/rc.h"
#include "post_form.h"
#include "s3_error.h"

#define GW_POST_POLICY_MAX GW_POST_FORM_PRE_DATA_MAX /* the decoded JSON */
#define GW_POST_POLICY_MAX_CONDITIONS 256

struct gw_post_policy_input {
    const char *bucket;                 /* the request's bucket ("bucket" conditions) */
    size_t bucket_len;
    const struct gw_post_form *form;    /* the fields before the file */
    time_t now;
};

/* Checks the base64 policy b64[len] against in. Returns GW_S3_OK and the
 * content-length-range in *min and *max (0..UINT64_MAX when there is none), or
 * the error with why (NUL-terminated, "" for the table's text):
 *   not base64, not JSON, not an object, no expiration or conditions, a
 *   condition of an unknown form -> InvalidPolicyDocument "Invalid Policy: ..."
 *   expired -> AccessDenied "Invalid according to Policy: Policy expired."
 *   a condition not met -> AccessDenied "Invalid according to Policy: Policy
 *   Condition failed: [...]"
 *   a field no condition names -> AccessDenied "Invalid according to Policy:
 *   Extra input fields: NAME". */
enum gw_s3_err gw_post_policy_check(const char *b64, size_t len,
                                    const struct gw_post_policy_input *in, uint64_t *min,
                                    uint64_t *max, char why[CN_ERR_LEN]);

/* Is a form field exempt from the policy (policy, signature fields, file,
 * x-ignore-*)? 1/0. */
int gw_post_policy_exempt(const char *name, size_t len);

#endif
