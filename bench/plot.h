/* summary.png like basho_bench's: throughput (ok and errors per second) over
 * time, then one panel per operation with mean, median, 95th, 99th, 99.9th
 * and max latency. Written as a gnuplot script (summary.gp, kept so a person
 * can restyle it) and drawn by running gnuplot in the results folder. */
#ifndef BENCH_PLOT_H
#define BENCH_PLOT_H

#include "cn/rc.h"
#include "settings.h"

/* Writes dir/summary.gp. */
int bench_plot_script(const char *dir, const struct bench_settings *s, char err[CN_ERR_LEN]);

/* Runs gnuplot on dir/summary.gp; CN_NOTFOUND when gnuplot is not installed,
 * CN_ERR when it failed. */
int bench_plot_draw(const char *dir, char err[CN_ERR_LEN]);

#endif
