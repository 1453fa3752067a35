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

void cn_log_write(int level, uint64_t reqid, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define CN_LOGR(level, reqid, ...)                                         \
    do {                                                                   \
        if ((level) >= cn_log_level_current)                               \
            cn_log_write((level), (reqid), __VA_ARGS__);                   \
    } while (0)

#define CN_LOG(level, ...) CN_LOGR(level, 0, __VA_ARGS__)
#define cn_debug(...) CN_LOG(CN_LOG_DEBUG, __VA_ARGS__)
#define cn_info(...) CN_LOG(CN_LOG_INFO, __VA_ARGS__)
#define cn_warn(...) CN_LOG(CN_LOG_WARN, __VA_ARGS__)
#define cn_error(...) CN_LOG(CN_LOG_ERROR, __VA_ARGS__)

#endif
