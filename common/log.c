/* Line-at-a-time logging to stderr: "time ident[pid] LEVEL [req id] text".
 * One write(2) per line so lines of different threads do not interleave. */
#include "cn/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int cn_log_level_current = CN_LOG_INFO;
static char cn_log_ident[32] = "cairn";
/* getpid() at cn_log_init, so a line costs one syscall (its write), not two;
 * 0 before init. No cairn process forks after cn_log_init. */
static int cn_log_pid;

void cn_log_init(const char *ident, int level)
{
    snprintf(cn_log_ident, sizeof(cn_log_ident), "%s", ident);
    cn_log_level_current = level;
    cn_log_pid = (int)getpid();
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

void cn_log_write(int level, uint64_t reqid, const char *fmt, ...)
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
    if (n < (int)sizeof(line)) {
        va_list ap;
        va_start(ap, fmt);
        n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
        va_end(ap);
    }
    if (n >= (int)sizeof(line) - 1)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, (size_t)n);
    (void)w;
}
