/* A worker's request lifecycle (see worker.h): choose, build, sign, send;
 * then classify, record, check integrity and schedule the next. */
#include "worker.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "cn/alloc.h"
#include "cn/time.h"
#include "loop.h"

/* libcurl's largest receive buffer in 7.88: fewer, larger reads for big GETs.
 * (Starting workers at libcurl's 16 KiB and growing it after a large response
 * was tried: 4 % fewer instructions per small GET, but 256 MiB GETs cost
 * 0.42 instead of 0.29 CPU-s/GB, so every worker gets the large one.) */
#define BENCH_WORKER_RECV_BUFFER (512 * 1024)

/* recv_rate: 1 when taking n more bytes now would go over the rate since
 * the request started (a small allowance lets the first bytes through);
 * sets when reading may resume. libcurl's own MAX_RECV_SPEED averages over
 * 3 s windows and let short transfers through at full speed. */
static int bench_worker_over_rate(struct bench_worker *w, size_t n)
{
    uint64_t rate = (uint64_t)w->loop->sh->s->recv_rate;
    uint64_t allowance = CN_MIN(rate / 20, (uint64_t)65536);
    uint64_t due = w->received + n > allowance ? w->received + n - allowance : 0;
    uint64_t at = w->start_us + (uint64_t)((double)due * 1e6 / (double)rate);
    if (at <= cn_time_mono_us())
        return 0;
    w->paused_until_us = at;
    return 1;
}

/* Body bytes arriving: count them and feed the integrity check. */
static size_t bench_worker_on_data(char *ptr, size_t size, size_t nmemb, void *arg)
{
    struct bench_worker *w = arg;
    size_t n = size * nmemb;
    if (w->loop->sh->s->recv_rate > 0 && bench_worker_over_rate(w, n))
        return CURL_WRITEFUNC_PAUSE; /* libcurl keeps the bytes and offers them again */
    if (w->received == 0) {
        long status = 0;
        curl_easy_getinfo(w->easy, CURLINFO_RESPONSE_CODE, &status);
        w->err_body = status >= 400;
    }
    if (w->err_body && w->errlen + 1 < sizeof(w->errbuf)) {
        size_t take = CN_MIN(n, sizeof(w->errbuf) - 1 - w->errlen);
        memcpy(w->errbuf + w->errlen, ptr, take);
        w->errlen += take;
        w->errbuf[w->errlen] = '\0';
    }
    w->loop->cur->op[w->op].bytes_in += n;
    if (w->check == 1) {
        EVP_DigestUpdate(w->md5, ptr, n);
    } else if (w->check == 2 && w->range_same) {
        const struct bench_valgen *v = &w->loop->sh->valgen;
        if (w->range_off + w->received + n > (uint64_t)w->snap.size ||
            bench_valgen_compare(v, w->snap.origin, w->range_off + w->received, ptr, n) != 0)
            w->range_same = 0;
    }
    w->received += n;
    return n;
}

/* PUT body bytes leaving: generated from the value source at w->origin. */
static size_t bench_worker_on_send(char *ptr, size_t size, size_t nmemb, void *arg)
{
    struct bench_worker *w = arg;
    uint64_t left = (uint64_t)w->size - w->pos;
    size_t n = size * nmemb;
    if (n > left)
        n = (size_t)left;
    bench_valgen_fill(&w->loop->sh->valgen, w->origin, w->pos, ptr, n);
    if (w->md5 != NULL)
        EVP_DigestUpdate(w->md5, ptr, n);
    w->pos += n;
    w->loop->cur->op[w->op].bytes_out += n;
    return n;
}

/* recv_rate: a receive buffer of about 1/10 s of the rate (64 KiB..4 MiB). */
static int bench_worker_on_socket(void *arg, curl_socket_t fd, curlsocktype purpose)
{
    struct bench_worker *w = arg;
    if (purpose == CURLSOCKTYPE_IPCXN) {
        int64_t want = CN_MAX(CN_MIN(w->loop->sh->s->recv_rate / 10, (int64_t)4 << 20),
                              (int64_t)65536);
        int v = (int)want;
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
    }
    return CURL_SOCKOPT_OK;
}

void bench_worker_init(struct bench_worker *w, struct bench_loop *loop, int id)
{
    const struct bench_settings *s = loop->sh->s;
    memset(w, 0, sizeof(*w));
    w->loop = loop;
    w->id = id;
    w->state = BENCH_WORKER_WAITING;
    bench_rng_init(&w->rng, s->seed, (uint64_t)id + 1);
    bench_keygen_init(&w->keygen, &s->keygen, id, s->concurrent);
    bench_settings_host(s, (size_t)id, w->host, sizeof(w->host));
    if (s->integrity)
        w->md5 = EVP_MD_CTX_new();
    w->easy = curl_easy_init();
    CN_ASSERT(w->easy != NULL && (w->md5 != NULL || !s->integrity));
    CURL *e = w->easy;
    curl_easy_setopt(e, CURLOPT_PRIVATE, w);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, bench_worker_on_data);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, w);
    curl_easy_setopt(e, CURLOPT_READFUNCTION, bench_worker_on_send);
    curl_easy_setopt(e, CURLOPT_READDATA, w);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    /* no proxy: also spares a getenv() of the *_proxy variables per request,
     * and an empty no-proxy list the two of no_proxy and NO_PROXY */
    curl_easy_setopt(e, CURLOPT_PROXY, "");
    curl_easy_setopt(e, CURLOPT_NOPROXY, "");
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, (long)BENCH_WORKER_RECV_BUFFER);
    curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, (long)(2 * 1024 * 1024));
    if (s->request_timeout_ms > 0)
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)s->request_timeout_ms);
    if (s->ca_cert[0] != '\0')
        curl_easy_setopt(e, CURLOPT_CAINFO, s->ca_cert);
    if (s->recv_rate > 0) {
        /* a slow client: small reads, and a small socket buffer so the
         * server feels the back-pressure instead of the kernel absorbing it */
        long buf = (long)CN_MAX(CN_MIN(s->recv_rate / 20, (int64_t)BENCH_WORKER_RECV_BUFFER),
                                (int64_t)16384);
        curl_easy_setopt(e, CURLOPT_BUFFERSIZE, buf);
        curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, bench_worker_on_socket);
        curl_easy_setopt(e, CURLOPT_SOCKOPTDATA, w);
    }
    for (int i = 0; i < BENCH_WORKER_HEADERS; i++)
        w->hdr_node[i].data = w->hdr[i];
    /* The URL is parsed once here and handed over as a CURLU: each request
     * then only replaces the path, which spares libcurl 7.88 parsing a whole
     * URL string per request (a sixth of its instructions per small GET).
     * A host that does not parse keeps the text URL, so the request fails
     * with libcurl's own error as before. */
    char base[sizeof(w->host) + 16];
    snprintf(base, sizeof(base), "%s://%s/", s->https ? "https" : "http", w->host);
    w->uh = curl_url();
    CN_ASSERT(w->uh != NULL);
    if (curl_url_set(w->uh, CURLUPART_URL, base, 0) == CURLUE_OK) {
        curl_easy_setopt(e, CURLOPT_CURLU, w->uh);
    } else {
        curl_url_cleanup(w->uh);
        w->uh = NULL;
    }
}

void bench_worker_fini(struct bench_worker *w)
{
    if (w->easy != NULL)
        curl_easy_cleanup(w->easy);
    if (w->uh != NULL)
        curl_url_cleanup(w->uh);
    w->uh = NULL;
    if (w->md5 != NULL)
        EVP_MD_CTX_free(w->md5);
    w->easy = NULL;
    w->md5 = NULL;
}

static size_t bench_worker_pick_op(struct bench_worker *w)
{
    const struct bench_settings *s = w->loop->sh->s;
    if (s->nops == 1)
        return 0;
    uint64_t pick = bench_rng_below(&w->rng, w->loop->sh->total_weight);
    for (size_t i = 0; i < s->nops; i++) {
        if (pick < s->ops[i].weight)
            return i;
        pick -= s->ops[i].weight;
    }
    return s->nops - 1;
}

/* Appends "Name: value" as the next header node. */
static void bench_worker_header(struct bench_worker *w, int *n, const char *name,
                                const char *value)
{
    CN_ASSERT(*n < BENCH_WORKER_HEADERS);
    snprintf(w->hdr[*n], sizeof(w->hdr[0]), "%s:%s%s", name, *value ? " " : "", value);
    w->hdr_node[*n].next = NULL;
    if (*n > 0)
        w->hdr_node[*n - 1].next = &w->hdr_node[*n];
    (*n)++;
}

/* Adds x-amz-* and Authorization headers for an S3 server (SigV4). */
static void bench_worker_sign(struct bench_worker *w, int *n, const char *method,
                              const char *uri, const char *query, const char *range)
{
    struct bench_loop *l = w->loop;
    const struct bench_settings *s = l->sh->s;
    long long now_s = (long long)time(NULL);
    if (now_s != l->date_s) {
        bench_sigv4_amz_date(now_s, l->amz_date);
        l->date_s = now_s;
    }
    const char *payload = w->kind == BENCH_OP_PUT ? BENCH_SIGV4_UNSIGNED : BENCH_SIGV4_EMPTY_SHA256;
    struct bench_sigv4_header h[5];
    size_t nh = 0;
    h[nh++] = (struct bench_sigv4_header){"host", w->host};
    if (range != NULL)
        h[nh++] = (struct bench_sigv4_header){"range", range};
    h[nh++] = (struct bench_sigv4_header){"x-amz-content-sha256", payload};
    h[nh++] = (struct bench_sigv4_header){"x-amz-date", l->amz_date};
    if (s->session_token[0] != '\0')
        h[nh++] = (struct bench_sigv4_header){"x-amz-security-token", s->session_token};
    char auth[1024];
    int rc = bench_sigv4_sign(&l->signer, method, uri, query, h, nh, payload, l->amz_date, auth,
                              sizeof(auth));
    CN_ASSERT(rc == CN_OK);
    bench_worker_header(w, n, "x-amz-content-sha256", payload);
    bench_worker_header(w, n, "x-amz-date", l->amz_date);
    if (s->session_token[0] != '\0')
        bench_worker_header(w, n, "x-amz-security-token", s->session_token);
    bench_worker_header(w, n, "Authorization", auth);
}

/* Chooses the range of a range_get: the object's size when the integrity
 * table knows it, else the smallest size the value generator makes. */
static void bench_worker_range(struct bench_worker *w, char *range, size_t rangelen)
{
    const struct bench_shared *sh = w->loop->sh;
    uint64_t len = (uint64_t)sh->s->range_len;
    int64_t size = w->snap.state == BENCH_INTEGRITY_PRESENT ? w->snap.size
                                                             : bench_valgen_min_size(&sh->valgen);
    w->range_off = (uint64_t)size > len ? bench_rng_below(&w->rng, (uint64_t)size - len + 1) : 0;
    snprintf(range, rangelen, "bytes=%" PRIu64 "-%" PRIu64, w->range_off, w->range_off + len - 1);
}

/* Integrity bookkeeping at the start of a request. */
static void bench_worker_integrity_begin(struct bench_worker *w)
{
    struct bench_integrity *t = w->loop->sh->integrity;
    w->check = 0;
    memset(&w->snap, 0, sizeof(w->snap));
    if (t == NULL)
        return;
    switch (w->kind) {
    case BENCH_OP_GET:
        bench_integrity_peek(t, w->key, &w->snap);
        w->check = 1;
        EVP_DigestInit_ex(w->md5, w->loop->sh->md5, NULL);
        break;
    case BENCH_OP_RANGE_GET:
        bench_integrity_peek(t, w->key, &w->snap);
        w->check = w->snap.state == BENCH_INTEGRITY_PRESENT ? 2 : 0;
        w->range_same = 1;
        break;
    case BENCH_OP_PUT:
    case BENCH_OP_DELETE:
        bench_integrity_write_begin(t, w->key);
        if (w->kind == BENCH_OP_PUT)
            EVP_DigestInit_ex(w->md5, w->loop->sh->md5, NULL);
        break;
    default:
        break;
    }
}

/* out = path "/" key, written without snprintf (the hot path of small GETs). */
static void bench_worker_key_path(const char *path, int64_t key, char *out, size_t outlen)
{
    char digits[24];
    size_t nd = 0;
    uint64_t k = key < 0 ? (uint64_t)0 - (uint64_t)key : (uint64_t)key;
    do {
        digits[nd++] = (char)('0' + k % 10);
        k /= 10;
    } while (k != 0);
    if (key < 0)
        digits[nd++] = '-';
    size_t pl = strlen(path);
    CN_ASSERT(pl + 1 + nd + 1 <= outlen); /* settings.path is 512 bytes, out 700 */
    memcpy(out, path, pl);
    out[pl] = '/';
    for (size_t i = 0; i < nd; i++)
        out[pl + 1 + i] = digits[nd - 1 - i];
    out[pl + 1 + nd] = '\0';
}

int bench_worker_start(struct bench_worker *w, uint64_t now_us)
{
    struct bench_loop *l = w->loop;
    const struct bench_settings *s = l->sh->s;
    if (bench_keygen_next(&w->keygen, &w->rng, &w->key) != CN_OK) {
        w->state = BENCH_WORKER_DONE;
        return CN_DONE;
    }
    w->op = bench_worker_pick_op(w);
    w->kind = s->ops[w->op].kind;
    w->received = 0;
    w->err_body = 0;
    w->errlen = 0;
    w->errbuf[0] = '\0';
    w->paused_until_us = 0;
    w->pos = 0;
    bench_worker_integrity_begin(w);

    char uri[700], query[64] = "", range[64];
    const char *method = "GET";
    if (w->kind == BENCH_OP_LIST) {
        snprintf(uri, sizeof(uri), "%s", s->path[0] ? s->path : "/");
        snprintf(query, sizeof(query), "list-type=2&max-keys=%d", s->list_max_keys);
    } else {
        bench_worker_key_path(s->path, w->key, uri, sizeof(uri));
    }
    CURL *e = w->easy;
    if (w->uh != NULL) {
        curl_url_set(w->uh, CURLUPART_PATH, uri, 0);
        if (query[0] != '\0' || w->uh_query)
            curl_url_set(w->uh, CURLUPART_QUERY, query[0] != '\0' ? query : NULL, 0);
        w->uh_query = query[0] != '\0';
    } else {
        snprintf(w->url, sizeof(w->url), "%s://%s%s%s%s", s->https ? "https" : "http", w->host,
                 uri, query[0] ? "?" : "", query);
        curl_easy_setopt(e, CURLOPT_URL, w->url);
    }
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, (char *)NULL);
    int nh = 0;
    const char *range_hdr = NULL;
    switch (w->kind) {
    case BENCH_OP_PUT:
        method = "PUT";
        /* no 100-continue round trip: measure the server, not a 1 s wait */
        bench_worker_header(w, &nh, "Expect", "");
        w->size = bench_valgen_size(&l->sh->valgen, &w->rng);
        w->origin = bench_valgen_origin(&l->sh->valgen, &w->rng);
        curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)w->size);
        break;
    case BENCH_OP_DELETE:
        method = "DELETE";
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
        break;
    case BENCH_OP_HEAD:
        method = "HEAD";
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
        break;
    case BENCH_OP_RANGE_GET:
        bench_worker_range(w, range, sizeof(range));
        bench_worker_header(w, &nh, "Range", range);
        range_hdr = range;
        break;
    default:
        break;
    }
    if (l->signing)
        bench_worker_sign(w, &nh, method, uri, query, range_hdr);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, nh > 0 ? &w->hdr_node[0] : NULL);
    w->start_us = now_us;
    w->state = BENCH_WORKER_RUNNING;
    CURLMcode mc = curl_multi_add_handle(l->multi, e);
    CN_ASSERT(mc == CURLM_OK);
    return CN_OK;
}

uint64_t bench_worker_unpause(struct bench_worker *w, uint64_t now_us)
{
    if (w->paused_until_us == 0 || w->state != BENCH_WORKER_RUNNING)
        return 0;
    if (w->paused_until_us > now_us)
        return w->paused_until_us;
    w->paused_until_us = 0;
    /* may call bench_worker_on_data() at once, which may pause again */
    curl_easy_pause(w->easy, CURLPAUSE_CONT);
    return w->paused_until_us;
}

/* Integrity verdict of a finished GET or range_get; updates the table after
 * a PUT or DELETE. Returns the verdict (OK when nothing was checked). */
static enum bench_integrity_verdict bench_worker_integrity_end(struct bench_worker *w, int ok,
                                                               int not_found)
{
    struct bench_loop *l = w->loop;
    struct bench_integrity *t = l->sh->integrity;
    enum bench_integrity_verdict v = BENCH_INTEGRITY_OK;
    unsigned char md5[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (t == NULL)
        return v;
    switch (w->kind) {
    case BENCH_OP_PUT:
        EVP_DigestFinal_ex(w->md5, md5, &mdlen);
        bench_integrity_write_end(t, w->key, ok && w->pos == (uint64_t)w->size, 0, md5, w->size,
                                  w->origin);
        return v;
    case BENCH_OP_DELETE:
        bench_integrity_write_end(t, w->key, ok, 1, NULL, 0, 0);
        return v;
    case BENCH_OP_GET:
        EVP_DigestFinal_ex(w->md5, md5, &mdlen);
        if (!ok)
            return v;
        v = bench_integrity_judge(t, w->key, &w->snap, not_found, md5, (int64_t)w->received);
        break;
    case BENCH_OP_RANGE_GET: {
        if (!ok || (w->check != 2 && !not_found))
            return v;
        uint64_t want = CN_MIN((uint64_t)l->sh->s->range_len,
                               (uint64_t)w->snap.size - CN_MIN(w->range_off, (uint64_t)w->snap.size));
        int same = w->range_same && w->received == want;
        v = bench_integrity_judge_range(t, w->key, &w->snap, not_found, same);
        break;
    }
    default:
        return v;
    }
    if (v == BENCH_INTEGRITY_UNVERIFIABLE)
        l->integrity_unverifiable++;
    else
        l->integrity_checked++;
    return v;
}

void bench_worker_finish(struct bench_worker *w, CURLcode result, uint64_t now_us)
{
    struct bench_loop *l = w->loop;
    const struct bench_settings *s = l->sh->s;
    struct bench_op_stats *os = &l->cur->op[w->op];
    long status = 0;
    curl_easy_getinfo(w->easy, CURLINFO_RESPONSE_CODE, &status);
    int reads = w->kind != BENCH_OP_PUT && w->kind != BENCH_OP_LIST;
    int ok = result == CURLE_OK && status >= 200 && status < 300;
    int not_found = result == CURLE_OK && status == 404 && reads && s->not_found_ok;
    enum bench_integrity_verdict v = bench_worker_integrity_end(w, ok || not_found, not_found);
    if (result != CURLE_OK) {
        os->errors++;
        bench_errors_add(&l->errors, w->op, BENCH_ERR_CURL, (int)result, 1,
                         curl_easy_strerror(result));
    } else if (!ok && !not_found) {
        os->errors++;
        bench_errors_add(&l->errors, w->op, BENCH_ERR_HTTP, (int)status, 1, w->errbuf);
    } else if (v == BENCH_INTEGRITY_MISMATCH || v == BENCH_INTEGRITY_MISSING) {
        char what[BENCH_ERROR_SAMPLE];
        snprintf(what, sizeof(what),
                 "key %" PRId64 ": HTTP %ld, %" PRIu64 " bytes%s; the last PUT wrote %" PRId64
                 " bytes%s",
                 w->key, status, w->received,
                 w->kind == BENCH_OP_RANGE_GET ? " at the range asked" : "", w->snap.size,
                 w->snap.state == BENCH_INTEGRITY_DELETED ? " and was deleted" : "");
        os->errors++;
        bench_errors_add(&l->errors, w->op, BENCH_ERR_INTEGRITY,
                         v == BENCH_INTEGRITY_MISSING, 1, what);
    } else {
        os->not_found += (uint64_t)not_found;
        bench_stats_ok(l->cur, w->op, now_us - w->start_us);
    }
    w->state = BENCH_WORKER_WAITING;
    w->next_start_us = now_us;
    if (!s->mode_max)
        w->next_start_us += (uint64_t)bench_rng_exp(&w->rng, 1e6 / s->rate);
}
