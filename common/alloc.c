/* Counting allocator: malloc_usable_size() tells how many bytes each block
 * holds, so the count needs no header in front of the block. */
#include "cn/alloc.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_size_t cn_alloc_used_bytes;
static atomic_long cn_alloc_fail_countdown;

static int cn_alloc_should_fail(void)
{
    long n = atomic_load_explicit(&cn_alloc_fail_countdown, memory_order_relaxed);
    if (n <= 0)
        return 0;
    return atomic_fetch_sub(&cn_alloc_fail_countdown, 1) == 1;
}

static void *cn_alloc_oom(size_t size)
{
    fprintf(stderr, "cn_alloc: out of memory allocating %zu bytes\n", size);
    abort();
}

static void *cn_alloc_account(void *p)
{
    if (p != NULL)
        atomic_fetch_add_explicit(&cn_alloc_used_bytes, malloc_usable_size(p),
                                  memory_order_relaxed);
    return p;
}

void *cn_malloc(size_t size)
{
    if (cn_alloc_should_fail())
        return NULL;
    void *p = malloc(size ? size : 1);
    if (p == NULL)
        return cn_alloc_oom(size);
    return cn_alloc_account(p);
}

void *cn_calloc(size_t n, size_t size)
{
    if (cn_alloc_should_fail())
        return NULL;
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p == NULL)
        return cn_alloc_oom(n * size);
    return cn_alloc_account(p);
}

void *cn_realloc(void *ptr, size_t size)
{
    if (cn_alloc_should_fail())
        return NULL;
    size_t old = ptr ? malloc_usable_size(ptr) : 0;
    void *p = realloc(ptr, size ? size : 1);
    if (p == NULL)
        return cn_alloc_oom(size);
    atomic_fetch_sub_explicit(&cn_alloc_used_bytes, old, memory_order_relaxed);
    return cn_alloc_account(p);
}

void cn_free(void *ptr)
{
    if (ptr == NULL)
        return;
    atomic_fetch_sub_explicit(&cn_alloc_used_bytes, malloc_usable_size(ptr),
                              memory_order_relaxed);
    free(ptr);
}

char *cn_strndup(const char *s, size_t n)
{
    char *p = cn_malloc(n + 1);
    if (p == NULL)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *cn_strdup(const char *s)
{
    return cn_strndup(s, strlen(s));
}

void *cn_memdup(const void *src, size_t n)
{
    void *p = cn_malloc(n);
    if (p != NULL && n > 0)
        memcpy(p, src, n);
    return p;
}

size_t cn_alloc_used(void)
{
    return atomic_load_explicit(&cn_alloc_used_bytes, memory_order_relaxed);
}

void cn_alloc_fail_after(long n)
{
    atomic_store(&cn_alloc_fail_countdown, n);
}
