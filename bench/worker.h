/* One basho_bench worker: a connection (a libcurl easy handle) that runs one
 * request at a time, choosing the operation by weight and the key from its
 * key generator, and records the outcome in its event loop's current stats
 * slot. Workers are driven by their loop (loop.c); nothing here blocks. */
#ifndef BENCH_WORKER_H
#define BENCH_WORKER_H

#include <curl/curl.h>
#include <openssl/evp.h>
#include <stdatomic.h>
#include <stdint.h>

#include "integrity.h"
#include "keygen.h"
#include "rng.h"
#include "settings.h"
#include "sigv4.h"
#include "stats.h"
#include "valgen.h"

/* Read-only during the run (except the atomics), shared by every thread. */
struct bench_shared {
    const struct bench_settings *s;
    struct bench_valgen valgen;
    struct bench_integrity *integrity;   /* NULL unless {integrity, true} */
    EVP_MD *md5;                         /* fetched once: EVP_md5() fetches (a lock
                                          * and allocations) at every init */
    uint64_t total_weight;
    atomic_uint_fast64_t epoch;          /* which stats slot the loops fill */
    atomic_int stop;
};

struct bench_loop;

enum bench_worker_state {
    BENCH_WORKER_WAITING,     /* rate mode: until next_start_us */
    BENCH_WORKER_RUNNING,     /* a request is in the multi handle */
    BENCH_WORKER_DONE,        /* key generator exhausted */
};

#define BENCH_WORKER_HEADERS 8

struct bench_worker {
    struct bench_loop *loop;
    int id;
    CURL *easy;
    struct bench_rng rng;
    struct bench_keygen keygen;
    enum bench_worker_state state;
    uint64_t next_start_us;
    /* the request in flight */
    size_t op;
    enum bench_op_kind kind;
    int64_t key;
    uint64_t start_us;
    int64_t size;                 /* PUT body length */
    uint64_t origin;              /* PUT body origin in the value source */
    uint64_t pos;                 /* PUT bytes sent so far */
    uint64_t received;
    int err_body;                 /* the response is an HTTP error: keep its start */
    size_t errlen;
    char errbuf[BENCH_ERROR_SAMPLE];
    uint64_t paused_until_us;     /* recv_rate: reading resumes then (0: not paused) */
    uint64_t range_off;
    int check;                    /* 0 none, 1 MD5 of the body, 2 compare range */
    int range_same;
    struct bench_integrity_snap snap;
    EVP_MD_CTX *md5;
    /* request text, rebuilt in place: no allocation of ours per request */
    CURLU *uh;                    /* http://host/ parsed once; path and query set per request */
    int uh_query;                 /* uh has a query now */
    char url[1024];               /* the URL as text, only when host did not parse into uh */
    char host[160];
    char hdr[BENCH_WORKER_HEADERS][2304];
    struct curl_slist hdr_node[BENCH_WORKER_HEADERS];
};

/* Sets up worker `id` (global index) of loop; aborts on OOM. */
void bench_worker_init(struct bench_worker *w, struct bench_loop *loop, int id);
void bench_worker_fini(struct bench_worker *w);

/* Starts the next request and adds it to the loop's multi handle; when the
 * key generator is exhausted sets the state to DONE and returns CN_DONE. */
int bench_worker_start(struct bench_worker *w, uint64_t now_us);

/* recv_rate: resumes a paused transfer whose time has come (call from the
 * loop, outside libcurl callbacks). Returns the time it still waits for, or
 * 0 when it is not paused any more. */
uint64_t bench_worker_unpause(struct bench_worker *w, uint64_t now_us);

/* Called by the loop when the request ended (after curl_multi_remove_handle):
 * classifies it, records it and schedules the next one (state WAITING with
 * next_start_us, which is now in max mode). */
void bench_worker_finish(struct bench_worker *w, CURLcode result, uint64_t now_us);

#endif
