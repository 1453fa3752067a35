/* Gnuplot script for summary.png (see plot.h). */
#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int bench_plot_script(const char *dir, const struct bench_settings *s, char err[CN_ERR_LEN])
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/summary.gp", dir);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        snprintf(err, CN_ERR_LEN, "%s: %s", path, strerror(errno));
        return CN_IO;
    }
    size_t panels = s->nops + 1;
    fprintf(f,
            "# drawn by cairn-bench; rerun with: gnuplot summary.gp\n"
            "set terminal png size 1000,%zu\n"
            "set output 'summary.png'\n"
            "set termoption noenhanced\n"
            "set datafile separator ','\n"
            "set grid\n"
            "set key outside right top\n"
            "set xlabel 'elapsed (s)'\n"
            "set xrange [0:*]\n"
            "set yrange [0:*]\n"
            "set multiplot layout %zu,1\n"
            "set title 'throughput'\n"
            "set ylabel 'ops/s'\n"
            "plot 'summary.csv' skip 1 using 1:($4/$2) with linespoints title 'ok', \\\n"
            "     '' skip 1 using 1:($5/$2) with linespoints title 'errors'\n",
            300 * panels, panels);
    static const char *const names[] = {"mean", "median", "95th", "99th", "99.9th", "max"};
    static const char *const colors[] = {"#1f77b4", "#2ca02c", "#ff7f0e",
                                         "#d62728", "#9467bd", "#7f7f7f"};
    for (size_t i = 0; i < s->nops; i++) {
        fprintf(f, "set title '%s latency'\nset ylabel 'ms'\nplot ", s->ops[i].label);
        for (int c = 0; c < 6; c++)
            fprintf(f,
                    "%s'%s_latencies.csv' skip 1 using 1:($%d/1000) with lines lw 2 "
                    "lc rgb '%s' title '%s'",
                    c ? ", \\\n     " : "", s->ops[i].label, 5 + c, colors[c], names[c]);
        fprintf(f, "\n");
    }
    fprintf(f, "unset multiplot\n");
    if (ferror(f) || fclose(f) != 0) {
        snprintf(err, CN_ERR_LEN, "%s: write failed", path);
        return CN_IO;
    }
    return CN_OK;
}

/* Finds gnuplot on PATH; writes its path into out. */
static int bench_plot_find(char *out, size_t outlen)
{
    const char *path = getenv("PATH");
    if (path == NULL)
        path = "/usr/bin:/bin";
    while (*path != '\0') {
        size_t n = strcspn(path, ":");
        snprintf(out, outlen, "%.*s/gnuplot", (int)n, n ? path : ".");
        if (access(out, X_OK) == 0)
            return CN_OK;
        path += n + (path[n] == ':');
    }
    return CN_NOTFOUND;
}

int bench_plot_draw(const char *dir, char err[CN_ERR_LEN])
{
    char gnuplot[4096];
    if (bench_plot_find(gnuplot, sizeof(gnuplot)) != CN_OK) {
        snprintf(err, CN_ERR_LEN, "gnuplot is not installed (apt-get install gnuplot-nox); "
                 "no summary.png, the script is %s/summary.gp", dir);
        return CN_NOTFOUND;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, CN_ERR_LEN, "fork: %s", strerror(errno));
        return CN_ERR;
    }
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, STDOUT_FILENO);
            dup2(devnull, STDERR_FILENO);
        }
        if (chdir(dir) == 0)
            execl(gnuplot, "gnuplot", "summary.gp", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(err, CN_ERR_LEN, "gnuplot failed on %s/summary.gp (status %d)", dir, status);
        return CN_ERR;
    }
    return CN_OK;
}
