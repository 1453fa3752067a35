/* create_bucket (see bucket.h): one blocking libcurl request before the
 * event loops start; the pure parts (name, verdict, XML text) are tested
 * in tests/unit/test_bench_bucket.c. */
#include "bucket.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sigv4.h"

/* Without a request timeout (0) the PUT still gives up after this long. */
#define BENCH_BUCKET_TIMEOUT_MS 30000L

int bench_bucket_name(const char *path, char *name, size_t len)
{
    while (*path == '/')
        path++;
    size_t n = strcspn(path, "/");
    if (n == 0)
        return CN_NOTFOUND;
    if (n >= len)
        return CN_TOOBIG;
    memcpy(name, path, n);
    name[n] = '\0';
    return CN_OK;
}

int bench_bucket_wanted(const struct bench_settings *s)
{
    char name[BENCH_BUCKET_NAME_MAX];
    return s->create_bucket && bench_settings_has_kind(s, BENCH_OP_PUT) &&
           bench_bucket_name(s->path, name, sizeof(name)) != CN_NOTFOUND;
}

/* memmem over a body that need not end in NUL. */
static const char *bench_bucket_find(const char *hay, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; n <= len && i <= len - n; i++)
        if (memcmp(hay + i, needle, n) == 0)
            return hay + i;
    return NULL;
}

int bench_bucket_xml_text(const char *body, size_t len, const char *tag, char *out,
                          size_t outlen)
{
    char open[64], close[64];
    CN_ASSERT(outlen > 0);
    if ((size_t)snprintf(open, sizeof(open), "<%s>", tag) >= sizeof(open) ||
        (size_t)snprintf(close, sizeof(close), "</%s>", tag) >= sizeof(close))
        return CN_INVAL;
    const char *a = bench_bucket_find(body, len, open);
    if (a == NULL)
        return CN_NOTFOUND;
    a += strlen(open);
    const char *b = bench_bucket_find(a, len - (size_t)(a - body), close);
    if (b == NULL)
        return CN_NOTFOUND;
    size_t n = CN_MIN((size_t)(b - a), outlen - 1);
    memcpy(out, a, n);
    out[n] = '\0';
    return CN_OK;
}

enum bench_bucket_verdict bench_bucket_judge(long status, const char *body, size_t len)
{
    char code[64];
    if (status == 200)
        return BENCH_BUCKET_CREATED;
    if (status == 409 && bench_bucket_xml_text(body, len, "Code", code, sizeof(code)) == CN_OK &&
        strcmp(code, "BucketAlreadyOwnedByYou") == 0)
        return BENCH_BUCKET_EXISTS;
    return BENCH_BUCKET_FAILED;
}

int bench_bucket_config_body(const char *region, char *out, size_t outlen)
{
    int n;
    if (region[0] == '\0' || strcmp(region, "us-east-1") == 0)
        n = snprintf(out, outlen, "%s", "");
    else
        n = snprintf(out, outlen,
                     "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                     "<LocationConstraint>%s</LocationConstraint></CreateBucketConfiguration>",
                     region);
    return n < 0 || (size_t)n >= outlen ? CN_TOOBIG : CN_OK;
}

/* The request being sent: its body going out, the answer's body coming in. */
struct bench_bucket_req {
    const char *body;
    size_t body_len, body_pos;
    char reply[4096];
    size_t reply_len;
};

static size_t bench_bucket_on_data(char *ptr, size_t size, size_t nmemb, void *arg)
{
    struct bench_bucket_req *q = arg;
    size_t n = size * nmemb;
    size_t take = CN_MIN(n, sizeof(q->reply) - 1 - q->reply_len);
    memcpy(q->reply + q->reply_len, ptr, take);
    q->reply_len += take;
    q->reply[q->reply_len] = '\0';
    return n;
}

static size_t bench_bucket_on_send(char *ptr, size_t size, size_t nmemb, void *arg)
{
    struct bench_bucket_req *q = arg;
    size_t n = CN_MIN(size * nmemb, q->body_len - q->body_pos);
    memcpy(ptr, q->body + q->body_pos, n);
    q->body_pos += n;
    return n;
}

/* Adds "name: value" to a header list; CN_ERR when libcurl cannot. */
static int bench_bucket_header(struct curl_slist **list, const char *name, const char *value)
{
    char line[2048];
    snprintf(line, sizeof(line), "%s: %s", name, value);
    struct curl_slist *l = curl_slist_append(*list, line);
    if (l == NULL)
        return CN_ERR;
    *list = l;
    return CN_OK;
}

/* The SigV4 headers of PUT uri with this payload hash. */
static int bench_bucket_sign(const struct bench_settings *s, const char *host, const char *uri,
                             const char *payload, struct curl_slist **list)
{
    struct bench_sigv4 signer;
    char amz_date[17], auth[1024];
    bench_sigv4_init(&signer, s->access_key, s->secret_key, s->region, "s3");
    bench_sigv4_amz_date((long long)time(NULL), amz_date);
    struct bench_sigv4_header h[4];
    size_t nh = 0;
    h[nh++] = (struct bench_sigv4_header){"host", host};
    h[nh++] = (struct bench_sigv4_header){"x-amz-content-sha256", payload};
    h[nh++] = (struct bench_sigv4_header){"x-amz-date", amz_date};
    if (s->session_token[0] != '\0')
        h[nh++] = (struct bench_sigv4_header){"x-amz-security-token", s->session_token};
    if (bench_sigv4_sign(&signer, "PUT", uri, "", h, nh, payload, amz_date, auth,
                         sizeof(auth)) != CN_OK)
        return CN_TOOBIG;
    int rc = bench_bucket_header(list, "x-amz-content-sha256", payload);
    if (rc == CN_OK)
        rc = bench_bucket_header(list, "x-amz-date", amz_date);
    if (rc == CN_OK && s->session_token[0] != '\0')
        rc = bench_bucket_header(list, "x-amz-security-token", s->session_token);
    if (rc == CN_OK)
        rc = bench_bucket_header(list, "Authorization", auth);
    return rc;
}

/* Sends PUT url with q's body and the headers; fills q->reply and status. */
static CURLcode bench_bucket_send(const struct bench_settings *s, const char *url,
                                  struct curl_slist *headers, struct bench_bucket_req *q,
                                  long *status, char curl_err[CURL_ERROR_SIZE])
{
    CURL *e = curl_easy_init();
    if (e == NULL)
        return CURLE_OUT_OF_MEMORY;
    curl_err[0] = '\0';
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)q->body_len);
    curl_easy_setopt(e, CURLOPT_READFUNCTION, bench_bucket_on_send);
    curl_easy_setopt(e, CURLOPT_READDATA, q);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, bench_bucket_on_data);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, q);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, curl_err);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROXY, "");
    if (s->ca_cert[0] != '\0')
        curl_easy_setopt(e, CURLOPT_CAINFO, s->ca_cert);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
                     s->request_timeout_ms > 0 ? (long)s->request_timeout_ms
                                               : BENCH_BUCKET_TIMEOUT_MS);
    CURLcode rc = curl_easy_perform(e);
    *status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, status);
    curl_easy_cleanup(e);
    return rc;
}

/* The start of a body on one line: whitespace runs become one space. */
static void bench_bucket_sample(const char *body, size_t len, char *out, size_t outlen)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n + 1 < outlen; i++) {
        int space = body[i] == ' ' || body[i] == '\n' || body[i] == '\r' || body[i] == '\t';
        if (space && (n == 0 || out[n - 1] == ' '))
            continue;
        out[n++] = space ? ' ' : body[i];
    }
    out[n] = '\0';
}

/* err for an answer that stops the run: the status, the S3 code and message
 * when the body has them, else the start of the body. */
static void bench_bucket_explain(const char *what, long status, const struct bench_bucket_req *q,
                                 char err[CN_ERR_LEN])
{
    char code[64], msg[96];
    if (bench_bucket_xml_text(q->reply, q->reply_len, "Code", code, sizeof(code)) == CN_OK) {
        if (bench_bucket_xml_text(q->reply, q->reply_len, "Message", msg, sizeof(msg)) != CN_OK)
            msg[0] = '\0';
        snprintf(err, CN_ERR_LEN, "%s: HTTP %ld %s%s%s", what, status, code, msg[0] ? ": " : "",
                 msg);
    } else {
        bench_bucket_sample(q->reply, q->reply_len, msg, 48);
        snprintf(err, CN_ERR_LEN, "%s: HTTP %ld, not an S3 answer ('%s'); "
                 "{create_bucket, false} turns this off", what, status, msg);
    }
}

int bench_bucket_create(const struct bench_settings *s, enum bench_bucket_verdict *verdict,
                        char err[CN_ERR_LEN])
{
    char name[BENCH_BUCKET_NAME_MAX], host[160], uri[80], url[300], what[400];
    char body[512], payload[65], curl_err[CURL_ERROR_SIZE];
    *verdict = BENCH_BUCKET_FAILED;
    int rc = bench_bucket_name(s->path, name, sizeof(name));
    if (rc != CN_OK) {
        snprintf(err, CN_ERR_LEN, "create_bucket: no bucket name of at most %d characters at the "
                 "start of http_raw_path '%s'", BENCH_BUCKET_NAME_MAX - 1, s->path);
        return CN_INVAL;
    }
    bench_settings_host(s, 0, host, sizeof(host));
    snprintf(uri, sizeof(uri), "/%s", name);
    snprintf(url, sizeof(url), "%s://%s%s", s->https ? "https" : "http", host, uri);
    snprintf(what, sizeof(what), "could not create bucket '%s' at %s", name, url);
    if (bench_bucket_config_body(s->region, body, sizeof(body)) != CN_OK) {
        snprintf(err, CN_ERR_LEN, "%s: region '%s' too long", what, s->region);
        return CN_INVAL;
    }
    struct bench_bucket_req q = {.body = body, .body_len = strlen(body)};
    struct curl_slist *headers = NULL;
    rc = bench_bucket_header(&headers, "Expect", "");
    if (rc == CN_OK && s->access_key[0] != '\0') {
        bench_sigv4_sha256_hex(body, q.body_len, payload);
        rc = bench_bucket_sign(s, host, uri, payload, &headers);
    }
    if (rc != CN_OK) {
        curl_slist_free_all(headers);
        snprintf(err, CN_ERR_LEN, "%s: could not build the request", what);
        return rc;
    }
    long status = 0;
    CURLcode cc = bench_bucket_send(s, url, headers, &q, &status, curl_err);
    curl_slist_free_all(headers);
    if (cc != CURLE_OK) {
        snprintf(err, CN_ERR_LEN, "%s: %s", what, curl_err[0] ? curl_err : curl_easy_strerror(cc));
        return CN_IO;
    }
    *verdict = bench_bucket_judge(status, q.reply, q.reply_len);
    if (*verdict == BENCH_BUCKET_FAILED) {
        bench_bucket_explain(what, status, &q, err);
        return CN_ERR;
    }
    return CN_OK;
}
