/* Allocation wrappers (redis zmalloc): abort on out-of-memory, count the
 * bytes in use for metrics, and let tests fail the Nth allocation (sqlite). */
#ifndef CN_ALLOC_H
#define CN_ALLOC_H

#include <stddef.h>

/* All of these abort on OOM, so they never return NULL for size > 0
 * (unless a test armed cn_alloc_fail_after(), when they return NULL). */
void *cn_malloc(size_t size);
void *cn_calloc(size_t n, size_t size);
void *cn_realloc(void *ptr, size_t size);
void cn_free(void *ptr);
char *cn_strdup(const char *s);
char *cn_strndup(const char *s, size_t n);
void *cn_memdup(const void *p, size_t n);

/* Bytes currently allocated through these wrappers (all threads). */
size_t cn_alloc_used(void);

/* Test hook: the nth allocation from now (1 = the next) returns NULL instead
 * of aborting; 0 disarms. Only for tests of error paths. */
void cn_alloc_fail_after(long n);

#endif
