/* The table of S3 operations: well formed, and requests matched to the
 * operation the router's if-chain chose before the table existed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cn/rc.h"
#include "cn/test.h"
#include "s3_ops.h"

CN_TEST_GLOBALS;

static void test_rows(void)
{
    for (size_t i = 0; i < GW_S3_OP_COUNT; i++) {
        const struct gw_s3_op *op = &gw_s3_ops_table[i];
        if (op->name == NULL || op->handler == NULL || op->doc == NULL)
            fprintf(stderr, "  row %zu is incomplete\n", i);
        CN_CHECK(op->name != NULL && op->handler != NULL && op->doc != NULL);
        CN_CHECK_EQ_INT(op->id, i);
        CN_CHECK(op->targets != 0 && (op->targets & ~GW_S3_OP_ANY) == 0);
        CN_CHECK(op->param_value == NULL || op->param != NULL);
        /* the markdown table: a '|' would cut a row */
        CN_CHECK(op->name == NULL || strchr(op->name, '|') == NULL);
        CN_CHECK(op->doc == NULL || strchr(op->doc, '|') == NULL);
    }
    /* the last row takes whatever no other row took */
    const struct gw_s3_op *last = &gw_s3_ops_table[GW_S3_OP_COUNT - 1];
    CN_CHECK(last->method == NULL && last->targets == GW_S3_OP_ANY && last->param == NULL &&
             last->any_param == NULL && last->header == NULL);
}

static void test_names_unique(void)
{
    for (size_t i = 0; i < GW_S3_OP_COUNT; i++)
        for (size_t j = i + 1; j < GW_S3_OP_COUNT; j++) {
            const char *a = gw_s3_ops_table[i].name, *b = gw_s3_ops_table[j].name;
            if (a != NULL && b != NULL && strcmp(a, b) == 0)
                fprintf(stderr, "  %s twice (rows %zu, %zu)\n", a, i, j);
            CN_CHECK(a == NULL || b == NULL || strcmp(a, b) != 0);
        }
}

/* Every sub-resource of a NotImplemented row is in the catch-all's list,
 * and every entry of that list has a row that names the operation. */
static void test_unsupported_subs(void)
{
    const char *const *any = gw_s3_ops_table[GW_S3_OP_UNSUPPORTED_SUBRESOURCE].any_param;
    CN_CHECK(any != NULL);
    if (any == NULL)
        return;
    for (size_t i = 0; i < GW_S3_OP_UNSUPPORTED_SUBRESOURCE; i++) {
        const struct gw_s3_op *op = &gw_s3_ops_table[i];
        if (op->kind != GW_S3_OP_UNSUPPORTED)
            continue;
        int listed = 0;
        for (const char *const *p = any; *p != NULL; p++)
            listed |= op->param != NULL && strcmp(*p, op->param) == 0;
        if (!listed)
            fprintf(stderr, "  %s: ?%s not in the catch-all\n", op->name, op->param);
        CN_CHECK(listed);
    }
    for (const char *const *p = any; *p != NULL; p++) {
        int named = 0;
        for (size_t i = 0; i < GW_S3_OP_UNSUPPORTED_SUBRESOURCE; i++)
            named |= gw_s3_ops_table[i].kind == GW_S3_OP_UNSUPPORTED &&
                     strcmp(gw_s3_ops_table[i].param, *p) == 0;
        if (!named)
            fprintf(stderr, "  ?%s has no NotImplemented row\n", *p);
        CN_CHECK(named);
    }
}

/* A request for the matcher: query "a=1&b" (decoded), headers "h1,h2". */
struct ops_case {
    const char *method;
    const char *bucket; /* NULL: none */
    const char *key;    /* NULL: none */
    const char *query;
    const char *headers;
    const char *want;
};

/* Finds name in the list "a=1&b" (sep '&', names case-sensitive) or "h1,h2"
 * (sep ',', case-insensitive); the value ("" without '=') is copied to
 * out[64]. */
static const char *ops_case_find(const char *list, char sep, const char *name, char *out)
{
    size_t n = strlen(name);
    for (const char *p = list; p != NULL && *p != '\0';) {
        const char *e = strchr(p, sep);
        size_t len = e != NULL ? (size_t)(e - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        size_t nlen = eq != NULL ? (size_t)(eq - p) : len;
        int same = sep == '&' ? strncmp(p, name, n) == 0 : strncasecmp(p, name, n) == 0;
        if (nlen == n && same) {
            size_t vlen = eq != NULL ? len - nlen - 1 : 0;
            memcpy(out, eq != NULL ? eq + 1 : "", vlen);
            out[vlen] = '\0';
            return out;
        }
        p = e != NULL ? e + 1 : NULL;
    }
    return NULL;
}

static char ops_case_value[64];

static const char *ops_case_param(const void *ctx, const char *name)
{
    const struct ops_case *c = ctx;
    return ops_case_find(c->query, '&', name, ops_case_value);
}

static int ops_case_header(const void *ctx, const char *name)
{
    const struct ops_case *c = ctx;
    char v[64];
    return ops_case_find(c->headers, ',', name, v) != NULL;
}

static void test_match(void)
{
    static const struct ops_case v[] = {
        /* the service */
        {"GET", NULL, NULL, "", "", "ListBuckets"},
        {"GET", NULL, NULL, "uploads", "", "ListBuckets"},
        {"PUT", NULL, NULL, "", "", "MethodNotAllowed"},
        {"GET", NULL, NULL, "encryption", "", "UnsupportedSubresource"},
        {"GET", NULL, NULL, "acl", "", "GetBucketAcl"},
        /* buckets */
        {"PUT", "b", NULL, "", "", "CreateBucket"},
        {"PUT", "b", NULL, "uploads", "", "CreateBucket"},
        {"HEAD", "b", NULL, "", "", "HeadBucket"},
        {"DELETE", "b", NULL, "", "", "DeleteBucket"},
        {"GET", "b", NULL, "", "", "ListObjects"},
        {"GET", "b", NULL, "list-type=2", "", "ListObjectsV2"},
        {"GET", "b", NULL, "list-type=1", "", "ListObjects"},
        {"GET", "b", NULL, "list-type=2&versions", "", "ListObjectVersions"},
        {"GET", "b", NULL, "uploads", "", "ListMultipartUploads"},
        {"GET", "b", NULL, "uploads&location", "", "ListMultipartUploads"},
        {"GET", "b", NULL, "location", "", "GetBucketLocation"},
        {"POST", "b", NULL, "delete", "", "DeleteObjects"},
        {"POST", "b", NULL, "", "", "PostObject"},
        {"PATCH", "b", NULL, "", "", "MethodNotAllowed"},
        /* bucket sub-resources: configuration reads before ACLs before
         * NotImplemented */
        {"GET", "b", NULL, "versioning", "", "GetBucketVersioning"},
        {"GET", "b", NULL, "publicAccessBlock", "", "GetPublicAccessBlock"},
        {"GET", "b", NULL, "acl&versioning", "", "GetBucketVersioning"},
        {"GET", "b", NULL, "tagging", "", "GetBucketTagging"},
        {"PUT", "b", NULL, "tagging", "", "PutBucketTagging"},
        {"DELETE", "b", NULL, "tagging", "", "DeleteBucketTagging"},
        {"GET", "b", NULL, "lifecycle", "", "GetBucketLifecycleConfiguration"},
        {"PUT", "b", NULL, "lifecycle", "", "PutBucketLifecycleConfiguration"},
        {"DELETE", "b", NULL, "lifecycle", "", "DeleteBucketLifecycle"},
        {"PUT", "b", NULL, "versioning", "", "PutBucketVersioning"},
        {"HEAD", "b", NULL, "versioning", "", "HeadBucket"},
        {"DELETE", "b", NULL, "policy", "", "DeleteBucketPolicy"},
        {"GET", "b", NULL, "acl", "", "GetBucketAcl"},
        {"PUT", "b", NULL, "acl", "", "PutBucketAcl"},
        {"DELETE", "b", NULL, "acl", "", "AclMethodNotAllowed"},
        {"DELETE", "b", NULL, "acl&policy", "", "AclMethodNotAllowed"},
        {"GET", "b", NULL, "analytics&id=x", "", "GetBucketAnalyticsConfiguration"},
        /* objects */
        {"PUT", "b", "k", "", "", "PutObject"},
        {"PUT", "b", "k", "", "x-amz-copy-source", "CopyObject"},
        {"PUT", "b", "k", "uploadId=u&partNumber=1", "", "UploadPart"},
        {"PUT", "b", "k", "uploadId=u&partNumber=1", "x-amz-copy-source", "UploadPartCopy"},
        {"PUT", "b", "k", "uploadId=u", "X-Amz-Copy-Source", "UploadPartCopy"},
        {"POST", "b", "k", "uploads", "", "CreateMultipartUpload"},
        {"POST", "b", "k", "uploads&uploadId=u", "", "CreateMultipartUpload"},
        {"POST", "b", "k", "uploadId=u", "", "CompleteMultipartUpload"},
        {"DELETE", "b", "k", "uploadId=u", "", "AbortMultipartUpload"},
        {"GET", "b", "k", "uploadId=u", "", "ListParts"},
        {"HEAD", "b", "k", "uploadId=u", "", "HeadObject"},
        {"GET", "b", "k", "", "", "GetObject"},
        {"GET", "b", "k", "partNumber=1&versionId=null", "", "GetObject"},
        {"HEAD", "b", "k", "", "", "HeadObject"},
        {"DELETE", "b", "k", "", "", "DeleteObject"},
        {"POST", "b", "k", "", "", "MethodNotAllowed"},
        {"GET", "b", "k", "list-type=2", "", "GetObject"},
        {"GET", "b", "k", "location", "", "GetObject"},
        /* object sub-resources */
        {"GET", "b", "k", "tagging", "", "GetObjectTagging"},
        {"DELETE", "b", "k", "tagging", "", "DeleteObjectTagging"},
        {"PUT", "b", "k", "tagging", "", "PutObjectTagging"},
        {"HEAD", "b", "k", "tagging", "", "HeadObject"},
        {"GET", "b", "k", "acl", "", "GetObjectAcl"},
        {"PUT", "b", "k", "acl", "x-amz-copy-source", "PutObjectAcl"},
        {"HEAD", "b", "k", "acl", "", "AclMethodNotAllowed"},
        {"GET", "b", "k", "versioning", "", "GetObject"},
        {"POST", "b", "k", "restore", "", "RestoreObject"},
        {"POST", "b", "k", "select&select-type=2", "", "SelectObjectContent"},
        {"GET", "b", "k", "retention", "", "GetObjectRetention"},
        {"PUT", "b", "k", "uploadId=u&legal-hold", "", "PutObjectLegalHold"},
        /* methods compare case-insensitively, as the router always did
         * for the bucket and object operations */
        {"get", "b", "k", "", "", "GetObject"},
        {"Put", "b", "k", "uploadId=u", "", "UploadPart"},
    };
    for (size_t i = 0; i < CN_ARRAY_LEN(v); i++) {
        struct gw_s3_ops_input in = {
            .method = v[i].method,
            .method_len = strlen(v[i].method),
            .has_bucket = v[i].bucket != NULL,
            .has_key = v[i].key != NULL,
            .param = ops_case_param,
            .header = ops_case_header,
            .ctx = &v[i],
        };
        const struct gw_s3_op *op = gw_s3_ops_match(&in);
        if (strcmp(op->name, v[i].want) != 0)
            fprintf(stderr, "  case %zu: %s %s%s%s ?%s [%s]\n", i, v[i].method,
                    v[i].bucket != NULL ? v[i].bucket : "", v[i].key != NULL ? "/" : "",
                    v[i].key != NULL ? v[i].key : "", v[i].query, v[i].headers);
        CN_CHECK_EQ_STR(op->name, v[i].want);
    }
}

static void test_markdown(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    gw_s3_ops_write_markdown(f);
    fclose(f);
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    CN_CHECK_EQ_INT(lines, GW_S3_OP_COUNT + 2); /* the header and its rule */
    CN_CHECK(strstr(text, "| UploadPartCopy | PUT | object | `?uploadId` + header "
                          "`x-amz-copy-source` | yes |") != NULL);
    CN_CHECK(strstr(text, "| ListObjectsV2 | GET | bucket | `?list-type=2` | yes |") != NULL);
    CN_CHECK(strstr(text, "| PutBucketEncryption | PUT | bucket | `?encryption` | "
                          "NotImplemented |") != NULL);
    CN_CHECK(strstr(text, "| PutBucketPolicy | PUT | bucket | `?policy` | yes |") != NULL);
    free(text);
}

static const struct cn_test_case cases[] = {
    {"rows", test_rows},
    {"names_unique", test_names_unique},
    {"unsupported_subs", test_unsupported_subs},
    {"match", test_match},
    {"markdown", test_markdown},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
