/* An event-loop thread: one libcurl multi handle driving its share of the
 * workers. It fills stats slot (epoch & 1) and acknowledges each epoch the
 * reporter publishes, so the reporter can read the other slot without a lock
 * (see run.c for the protocol). */
#ifndef BENCH_LOOP_H
#define BENCH_LOOP_H

#include <pthread.h>
#include <stdatomic.h>

#include "sigv4.h"
#include "stats.h"
#include "worker.h"

struct bench_loop {
    int id;
    pthread_t thread;
    CURLM *multi;
    struct bench_shared *sh;
    struct bench_worker *workers;
    size_t nworkers;
    struct bench_stats slot[2];
    struct bench_stats *cur;           /* slot of this pass */
    struct bench_errors errors;        /* read by the reporter after join */
    uint64_t integrity_checked, integrity_unverifiable;
    atomic_uint_fast64_t seen;         /* last epoch fully acknowledged */
    atomic_int retired;                /* loop ended: slots are free to read */
    struct bench_sigv4 signer;
    int signing;
    long long date_s;                  /* second of amz_date */
    char amz_date[17];
};

/* Builds the loop and its workers (global ids first_id ..); no thread yet. */
void bench_loop_init(struct bench_loop *l, struct bench_shared *sh, int id, int first_id,
                     size_t nworkers);
void bench_loop_fini(struct bench_loop *l);

/* Thread body: runs until sh->stop or every worker is DONE, then sets
 * retired. */
void *bench_loop_main(void *arg);

/* Wakes the loop out of its poll (a new epoch or stop). */
void bench_loop_wake(struct bench_loop *l);

#endif
