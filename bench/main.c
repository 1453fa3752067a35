/* cairn-bench: a basho_bench-compatible load driver for S3 and HTTP servers.
 * main() reads the settings and hands over to bench_run(). */
#include <curl/curl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_MIMALLOC
#include <mimalloc.h>
#endif

#include "bucket.h"
#include "cn/build_info.h"
#include "cn/rc.h"
#include "run.h"
#include "settings.h"

static void bench_main_warn(void *arg, const char *msg)
{
    (void)arg;
    fprintf(stderr, "cairn-bench: warning: %s\n", msg);
}

/* Ctrl-C or a sweep script's timeout: finish the run and write its files. */
static void bench_main_on_signal(int sig)
{
    (void)sig;
    bench_run_interrupt();
}

int main(int argc, char **argv)
{
    static struct bench_settings s;
    char err[CN_ERR_LEN];
    if (cn_build_info_version_flag("cairn-bench", argc, argv))
        return 0;
    /* libcurl allocates and frees its large receive buffers per transfer;
     * above glibc's mmap threshold each one was an mmap/munmap pair and page
     * faults, a third of the CPU at 50,000 requests/s. Keep them in the heap. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    int rc = bench_settings_cli(&s, argc, argv, stdout, bench_main_warn, NULL, err);
    if (rc == CN_DONE)
        return 0;
    if (rc != CN_OK) {
        fprintf(stderr, "cairn-bench: %s\n", err);
        return 2;
    }
#ifdef BENCH_MIMALLOC
    /* libcurl makes ~40 allocations per request: give them a faster
     * allocator (see bench/CMakeLists.txt). Must precede any other libcurl
     * call; everything libcurl hands back is freed with curl_free. (Debian's
     * libmimalloc also replaces malloc process-wide, the mallopt above then
     * only tunes an unused glibc heap.) */
    CURLcode init = curl_global_init_mem(CURL_GLOBAL_DEFAULT, mi_malloc, mi_free, mi_realloc,
                                         mi_strdup, mi_calloc);
#else
    CURLcode init = curl_global_init(CURL_GLOBAL_DEFAULT);
#endif
    if (init != CURLE_OK) {
        fprintf(stderr, "cairn-bench: curl_global_init failed\n");
        return 1;
    }
    struct sigaction sa = {0};
    sa.sa_handler = bench_main_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    enum bench_bucket_verdict made;
    if (bench_bucket_wanted(&s) && bench_bucket_create(&s, &made, err) != CN_OK) {
        fprintf(stderr, "cairn-bench: %s\n", err);
        curl_global_cleanup();
        return 1;
    }
    rc = bench_run(&s, stdout, err);
    curl_global_cleanup();
    if (rc != CN_OK) {
        fprintf(stderr, "cairn-bench: %s\n", err);
        return 1;
    }
    return 0;
}
