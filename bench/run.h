/* One benchmark run: makes the results folder, starts the event-loop
 * threads, closes a window every report_interval (writing a row to each
 * CSV), shows the live progress line, and at the end writes errors.csv,
 * summary.json, summary.png and the final table. */
#ifndef BENCH_RUN_H
#define BENCH_RUN_H

#include <stdio.h>

#include "cn/rc.h"
#include "settings.h"

/* Runs s to completion (duration elapsed or sequential keys exhausted).
 * out receives the progress line and the final table. Warnings go to
 * stderr. Returns CN_OK, or an error with err filled (results folder, a
 * write that failed). Requests that failed are results, not errors. */
int bench_run(const struct bench_settings *s, FILE *out, char err[CN_ERR_LEN]);

/* Ends the run in progress as if its duration were over (the last window,
 * errors.csv and the summary are still written). Async-signal-safe: for a
 * SIGINT/SIGTERM handler. */
void bench_run_interrupt(void);

/* Makes the results folder: s->out_dir as is, else test_dir/<timestamp>
 * with test_dir/current pointing at it. Writes its path into dir. */
int bench_run_results_dir(const struct bench_settings *s, char *dir, size_t dirlen,
                          char err[CN_ERR_LEN]);

#endif
