/* The status request of cairn-admin (gateway.h): a blocking socket, one
 * request with Connection: close, the reply read to EOF. */
#include "gateway.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "sigv4.h"

/* Splits http://HOST[:PORT][/] into host and port. */
static int adm_gateway_url(const char *url, char *host, size_t hlen, char *port, size_t plen,
                           char err[CN_ERR_LEN])
{
    static const char scheme[] = "http://";
    if (strncmp(url, scheme, sizeof(scheme) - 1) != 0) {
        snprintf(err, CN_ERR_LEN, "%s: only http://HOST[:PORT] gateway URLs are supported", url);
        return CN_INVAL;
    }
    const char *h = url + sizeof(scheme) - 1, *end = h + strcspn(h, "/");
    if (*end == '/' && end[1] != '\0') {
        snprintf(err, CN_ERR_LEN, "%s: give the gateway's base URL, without a path", url);
        return CN_INVAL;
    }
    const char *colon = memchr(h, ':', (size_t)(end - h));
    const char *he = colon != NULL ? colon : end;
    if (he == h || (size_t)(he - h) >= hlen ||
        (colon != NULL && (end - colon - 1 <= 0 || (size_t)(end - colon) > plen))) {
        snprintf(err, CN_ERR_LEN, "%s: bad gateway URL", url);
        return CN_INVAL;
    }
    memcpy(host, h, (size_t)(he - h));
    host[he - h] = '\0';
    if (colon != NULL) {
        memcpy(port, colon + 1, (size_t)(end - colon - 1));
        port[end - colon - 1] = '\0';
    } else {
        snprintf(port, plen, "80");
    }
    return CN_OK;
}

static int adm_gateway_connect(const char *host, const char *port, int timeout_ms,
                               char err[CN_ERR_LEN])
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    int rc = getaddrinfo(host, port, &hints, &ai);
    if (rc != 0) {
        snprintf(err, CN_ERR_LEN, "%s:%s: %s", host, port, gai_strerror(rc));
        return -1;
    }
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    }
    if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        snprintf(err, CN_ERR_LEN, "%s:%s: %s", host, port, strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    return fd;
}

/* The request's head, signed. */
static int adm_gateway_request(const char *host, const char *port,
                               const struct adm_gateway_key *key, char *out, size_t len)
{
    char hosthdr[300], amz_date[17], auth[1024];
    snprintf(hosthdr, sizeof(hosthdr), strcmp(port, "80") == 0 ? "%s" : "%s:%s", host, port);
    bench_sigv4_amz_date((long long)time(NULL), amz_date);
    const struct bench_sigv4_header hdrs[] = {
        {"host", hosthdr},
        {"x-amz-content-sha256", BENCH_SIGV4_EMPTY_SHA256},
        {"x-amz-date", amz_date},
    };
    struct bench_sigv4 sig;
    bench_sigv4_init(&sig, key->access_key, key->secret_key, key->region, "s3");
    int rc = bench_sigv4_sign(&sig, "GET", "/_cairn/status", "", hdrs, 3,
                              BENCH_SIGV4_EMPTY_SHA256, amz_date, auth, sizeof(auth));
    memset(&sig, 0, sizeof(sig)); /* the secret */
    if (rc != CN_OK)
        return rc;
    int n = snprintf(out, len, "GET /_cairn/status HTTP/1.1\r\nHost: %s\r\n"
                     "x-amz-content-sha256: %s\r\nx-amz-date: %s\r\nAuthorization: %s\r\n"
                     "Connection: close\r\n\r\n", hosthdr, BENCH_SIGV4_EMPTY_SHA256, amz_date,
                     auth);
    return n > 0 && (size_t)n < len ? CN_OK : CN_TOOBIG;
}

int adm_gateway_status(const char *url, const struct adm_gateway_key *key, int timeout_ms,
                       int *status, char **body, char err[CN_ERR_LEN])
{
    char host[256], port[16], req[4096];
    *body = NULL;
    int rc = adm_gateway_url(url, host, sizeof(host), port, sizeof(port), err);
    if (rc != CN_OK)
        return rc;
    if (adm_gateway_request(host, port, key, req, sizeof(req)) != CN_OK) {
        snprintf(err, CN_ERR_LEN, "%s: the signed request does not fit", url);
        return CN_TOOBIG;
    }
    int fd = adm_gateway_connect(host, port, timeout_ms, err);
    if (fd < 0)
        return CN_IO;
    size_t cap = ADM_GATEWAY_MAX_BODY + 65536, n = 0;
    char *buf = malloc(cap + 1);
    rc = CN_OK;
    if (buf == NULL || send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) {
        snprintf(err, CN_ERR_LEN, "%s: cannot send: %s", url, strerror(errno));
        rc = CN_IO;
    }
    while (rc == CN_OK) {
        ssize_t k = recv(fd, buf + n, cap - n, 0);
        if (k == 0)
            break;
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            snprintf(err, CN_ERR_LEN, "%s: %s", url,
                     errno == EAGAIN ? "no complete answer in time" : strerror(errno));
            rc = CN_TIMEOUT;
        } else if ((n += (size_t)k) == cap) {
            snprintf(err, CN_ERR_LEN, "%s: answer too large", url);
            rc = CN_TOOBIG;
        }
    }
    close(fd);
    char *sep = NULL;
    if (rc == CN_OK) {
        buf[n] = '\0';
        sep = strstr(buf, "\r\n\r\n");
        if (sep == NULL || sscanf(buf, "HTTP/1.%*d %d", status) != 1) {
            snprintf(err, CN_ERR_LEN, "%s: not an HTTP answer", url);
            rc = CN_INVAL;
        }
    }
    if (rc != CN_OK) {
        free(buf);
        return rc;
    }
    size_t blen = n - (size_t)(sep + 4 - buf);
    memmove(buf, sep + 4, blen + 1);
    *body = buf;
    return CN_OK;
}
