/* Status codes shared by the whole tree (one vocabulary, as in nginx), and
 * the always-on assertion. Library code returns these; daemons log them. */
#ifndef CN_RC_H
#define CN_RC_H

#define CN_OK        0
#define CN_ERR      -1   /* generic failure; details in the caller's err[] */
#define CN_AGAIN    -2   /* need more bytes or space: the normal answer of a
                            non-blocking parser */
#define CN_NOTFOUND -3
#define CN_CORRUPT  -4   /* a checksum or framing check failed */
#define CN_TOOBIG   -5   /* a length is over a configured limit */
#define CN_INVAL    -6   /* malformed input or a bad argument */
#define CN_IO       -7   /* an operating-system I/O call failed */
#define CN_TIMEOUT  -8
#define CN_DONE     -9   /* a stream or iteration has ended */
#define CN_CONFLICT -10  /* a concurrent writer holds (or took over) what this write needed */
#define CN_WOULDBLOCK -11 /* a call asked not to wait would have waited (on the disk) */

#define CN_ERR_LEN 256

/* Returns a static name for rc ("CN_OK", "CN_AGAIN", ...); never NULL. */
const char *cn_rc_str(int rc);

/* Kept in release builds (redis serverAssert): prints and aborts. */
#define CN_ASSERT(cond)                                                    \
    do {                                                                   \
        if (!(cond))                                                       \
            cn_assert_fail(#cond, __FILE__, __LINE__);                     \
    } while (0)

_Noreturn void cn_assert_fail(const char *expr, const char *file, int line);

#define CN_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define CN_MIN(a, b) ((a) < (b) ? (a) : (b))
#define CN_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
