/* Line-at-a-time logging to stderr: "time ident[pid] LEVEL [req id] text".
 * One write(2) per line so lines of different threads do not interleave.
 * Lines above debug go through a per-call-site rate limit (log_limit.c), so
 * an error that repeats in a loop cannot fill the disk. */
#include "cn/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "cn/log_limit.h"
#include "cn/rc.h"
#include "cn/time.h"

int cn_log_level_current = CN_LOG_INFO;
static char cn_log_ident[32] = "cairn";
/* getpid() at cn_log_init, so a line costs one syscall (its write), not two;
 * 0 before init. No cairn process forks after cn_log_init. */
static int cn_log_pid;
/* zeroed: no limit until cn_log_init or cn_log_set_limit */
static struct cn_log_limit cn_log_limiter;
static pthread_mutex_t cn_log_limiter_m = PTHREAD_MUTEX_INITIALIZER;

void cn_log_init(const char *ident, int level)
{
    snprintf(cn_log_ident, sizeof(cn_log_ident), "%s", ident);
    cn_log_level_current = level;
    cn_log_pid = (int)getpid();
    cn_log_set_limit(CN_LOG_LIMIT_WINDOW_MS, CN_LOG_LIMIT_BURST);
}

void cn_log_set_limit(uint64_t window_ms, uint32_t burst)
{
    pthread_mutex_lock(&cn_log_limiter_m);
    cn_log_limit_init(&cn_log_limiter, window_ms, burst);
    pthread_mutex_unlock(&cn_log_limiter_m);
}

int cn_log_level_parse(const char *s)
{
    static const char *const names[] = {"debug", "info", "warn", "error"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

const char *cn_log_level_str(int level)
{
    static const char *const names[] = {"DEBUG", "INFO", "WARN", "ERROR"};
    return (level >= 0 && level < 4) ? names[level] : "?";
}

/* Formats and writes one line; the fixed part comes first. */
static void cn_log_emit(int level, uint64_t reqid, const char *fmt, va_list ap)
{
    char line[2048];
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    int n = snprintf(line, sizeof(line), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ %s[%d] %s ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec, (int)(tv.tv_usec / 1000), cn_log_ident,
                     cn_log_pid != 0 ? cn_log_pid : (int)getpid(), cn_log_level_str(level));
    if (reqid != 0 && n < (int)sizeof(line))
        n += snprintf(line + n, sizeof(line) - (size_t)n, "[req %016llx] ",
                      (unsigned long long)reqid);
    if (n < (int)sizeof(line))
        n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    if (n >= (int)sizeof(line) - 1)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, (size_t)n);
    (void)w;
}

static void cn_log_emitf(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cn_log_emitf(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cn_log_emit(level, 0, fmt, ap);
    va_end(ap);
}

/* Writes "N similar lines suppressed (dir/file.c:line)" for each report. */
static void cn_log_report(const struct cn_log_limit_report *reps, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        /* the site is __FILE__ (an absolute path under CMake): keep dir/file */
        const char *site = reps[i].site, *show = site;
        for (const char *p = site; *p != '\0'; p++)
            if (*p == '/' && strchr(p + 1, '/') != NULL)
                show = p + 1;
        cn_log_emitf(CN_LOG_WARN, "%llu similar lines suppressed (%s)",
                     (unsigned long long)reps[i].n, show);
    }
}

void cn_log_write(int level, uint64_t reqid, const char *site, const char *fmt, ...)
{
    if (level > CN_LOG_DEBUG && site != NULL) {
        struct cn_log_limit_report reps[9];
        uint64_t now_ms = cn_time_mono_us() / 1000;
        pthread_mutex_lock(&cn_log_limiter_m);
        int write_it = cn_log_limit_check(&cn_log_limiter, site, now_ms, &reps[0]);
        size_t n = reps[0].n > 0 ? 1 : 0;
        n += cn_log_limit_due(&cn_log_limiter, now_ms, reps + n, CN_ARRAY_LEN(reps) - n);
        pthread_mutex_unlock(&cn_log_limiter_m);
        cn_log_report(reps, n);
        if (!write_it)
            return;
    }
    va_list ap;
    va_start(ap, fmt);
    cn_log_emit(level, reqid, fmt, ap);
    va_end(ap);
}
