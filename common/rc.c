/* Names for the status codes of cn/rc.h and the assertion handler. */
#include "cn/rc.h"

#include <stdio.h>
#include <stdlib.h>

const char *cn_rc_str(int rc)
{
    switch (rc) {
    case CN_OK: return "CN_OK";
    case CN_ERR: return "CN_ERR";
    case CN_AGAIN: return "CN_AGAIN";
    case CN_NOTFOUND: return "CN_NOTFOUND";
    case CN_CORRUPT: return "CN_CORRUPT";
    case CN_TOOBIG: return "CN_TOOBIG";
    case CN_INVAL: return "CN_INVAL";
    case CN_IO: return "CN_IO";
    case CN_TIMEOUT: return "CN_TIMEOUT";
    case CN_DONE: return "CN_DONE";
    case CN_CONFLICT: return "CN_CONFLICT";
    case CN_WOULDBLOCK: return "CN_WOULDBLOCK";
    default: return "CN_UNKNOWN";
    }
}

void cn_assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "assertion failed: %s (%s:%d)\n", expr, file, line);
    fflush(stderr);
    abort();
}
