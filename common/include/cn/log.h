/* Logging for the daemons. The macros test the level before evaluating their
 * arguments (redis serverLog), and CN_LOGR carries a request id so one
 * request can be followed through gateway and storage node logs. */
#ifndef CN_LOG_H
#define CN_LOG_H

#include <stdint.h>

enum cn_log_level {
    CN_LOG_DEBUG = 0,
    CN_LOG_INFO = 1,
    CN_LOG_WARN = 2,
    CN_LOG_ERROR = 3,
};

extern int cn_log_level_current;

/* Sets the process name printed on each line and the minimum level. */
void cn_log_init(const char *ident, int level);
/* Parses "debug", "info", "warn", "error"; returns -1 on anything else. */
int cn_log_level_parse(const char *s);
const char *cn_log_level_str(int level);

/* The rate limit cn_log_init sets: each call site writes at most BURST
 * lines (above debug) per WINDOW; the rest are counted and reported by a
 * later line as "N similar lines suppressed (file:line)". */
#define CN_LOG_LIMIT_WINDOW_MS 5000
#define CN_LOG_LIMIT_BURST 10

/* Sets the rate limit (burst 0 turns it off; off until cn_log_init). */
void cn_log_set_limit(uint64_t window_ms, uint32_t burst);

/* Writes one line. site identifies the call site by pointer (the macros
 * pass a "file:line" literal); debug lines and site NULL (a line that is
 * meant to be written once per event, such as the access line of every
 * request: CN_LOGR_EVERY) are never rate limited. */
void cn_log_write(int level, uint64_t reqid, const char *site, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define CN_LOG_STR_(x) #x
#define CN_LOG_STR(x) CN_LOG_STR_(x)
#define CN_LOG_SITE __FILE__ ":" CN_LOG_STR(__LINE__)

#define CN_LOGR(level, reqid, ...)                                         \
    do {                                                                   \
        if ((level) >= cn_log_level_current)                               \
            cn_log_write((level), (reqid), CN_LOG_SITE, __VA_ARGS__);      \
    } while (0)

/* A line written for every event, never rate limited (access lines). */
#define CN_LOGR_EVERY(level, reqid, ...)                                   \
    do {                                                                   \
        if ((level) >= cn_log_level_current)                               \
            cn_log_write((level), (reqid), NULL, __VA_ARGS__);             \
    } while (0)

#define CN_LOG(level, ...) CN_LOGR(level, 0, __VA_ARGS__)
#define cn_debug(...) CN_LOG(CN_LOG_DEBUG, __VA_ARGS__)
#define cn_info(...) CN_LOG(CN_LOG_INFO, __VA_ARGS__)
#define cn_warn(...) CN_LOG(CN_LOG_WARN, __VA_ARGS__)
#define cn_error(...) CN_LOG(CN_LOG_ERROR, __VA_ARGS__)

#endif
