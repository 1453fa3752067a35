/* Typed handler state (gateway/s3/hstate.h, request.h's GW_REQ_STATE): a
 * state whose header is not its first member comes back whole, NULL stays
 * NULL, the request frees its state through the state's type, and a state
 * read as another type stops the process naming both types (checked in a
 * child process). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cn/alloc.h"
#include "cn/test.h"
#include "hstate.h"
#include "request.h"

CN_TEST_GLOBALS;

static int freed_a, freed_b;

/* The header in the middle: nothing may rely on it being first. */
struct test_state_a {
    char before[40];
    struct gw_hstate hs;
    int value;
};

struct test_state_b {
    struct gw_hstate hs;
    double x;
};

static void test_state_a_free(struct gw_hstate *hs);
static const struct gw_hstate_type test_state_a_hstate = {"test_state_a", test_state_a_free};
static void test_state_b_free(struct gw_hstate *hs);
static const struct gw_hstate_type test_state_b_hstate = {"test_state_b", test_state_b_free};

static void test_state_a_free(struct gw_hstate *hs)
{
    freed_a++;
    cn_free(GW_HSTATE(hs, test_state_a));
}

static void test_state_b_free(struct gw_hstate *hs)
{
    freed_b++;
    cn_free(GW_HSTATE(hs, test_state_b));
}

static void test_gw_hstate_roundtrip(void)
{
    struct test_state_a *a = cn_calloc(1, sizeof(*a));
    a->hs.type = &test_state_a_hstate;
    a->value = 42;
    struct test_state_a *back = GW_HSTATE(&a->hs, test_state_a);
    CN_CHECK(back == a);
    CN_CHECK_EQ_INT(back->value, 42);
    CN_CHECK(gw_hstate_is(&a->hs, &test_state_a_hstate));
    CN_CHECK(!gw_hstate_is(&a->hs, &test_state_b_hstate));
    CN_CHECK(!gw_hstate_is(NULL, &test_state_a_hstate));
    CN_CHECK(GW_HSTATE(NULL, test_state_a) == NULL);
    freed_a = 0;
    gw_hstate_free(&a->hs);
    CN_CHECK_EQ_INT(freed_a, 1);
    gw_hstate_free(NULL);   /* a no-op */
    CN_CHECK_EQ_INT(freed_a, 1);
}

/* The request's slot: set, read back typed, dropped (freed through the
 * type), then another handler's state may take the slot. */
static void test_gw_hstate_request(void)
{
    struct gw_req *r = cn_calloc(1, sizeof(*r));
    CN_CHECK(GW_REQ_STATE(r, test_state_a) == NULL);
    struct test_state_a *a = cn_calloc(1, sizeof(*a));
    a->value = 7;
    gw_req_state_set(r, &a->hs, &test_state_a_hstate);
    CN_CHECK(a->hs.type == &test_state_a_hstate);
    CN_CHECK(GW_REQ_STATE(r, test_state_a) == a);
    freed_a = freed_b = 0;
    gw_req_state_drop(r);
    CN_CHECK_EQ_INT(freed_a, 1);
    CN_CHECK(r->state == NULL);
    struct test_state_b *b = cn_calloc(1, sizeof(*b));
    gw_req_state_set(r, &b->hs, &test_state_b_hstate);
    CN_CHECK(GW_REQ_STATE(r, test_state_b) == b);
    gw_req_state_drop(r);
    CN_CHECK_EQ_INT(freed_b, 1);
    gw_req_state_drop(r);   /* none left: a no-op */
    CN_CHECK_EQ_INT(freed_a + freed_b, 2);
    cn_free(r);
}

/* Runs fn in a child with stderr to a pipe; returns its wait status and
 * what it wrote (NUL-terminated, cut at cap). */
static int test_gw_hstate_in_child(void (*fn)(void), char *out, size_t cap)
{
    int p[2];
    if (pipe(p) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 2);
        close(p[0]);
        fn();
        _exit(0);
    }
    close(p[1]);
    size_t n = 0;
    ssize_t k;
    while (n + 1 < cap && (k = read(p[0], out + n, cap - 1 - n)) > 0)
        n += (size_t)k;
    out[n] = '\0';
    close(p[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return st;
}

static void test_gw_hstate_read_as_b(void)
{
    struct test_state_a *a = cn_calloc(1, sizeof(*a));
    a->hs.type = &test_state_a_hstate;
    struct test_state_b *b = GW_HSTATE(&a->hs, test_state_b);
    printf("%p\n", (void *)b);   /* not reached */
}

static void test_gw_hstate_read_as_a(void)
{
    struct test_state_a *a = cn_calloc(1, sizeof(*a));
    a->hs.type = &test_state_a_hstate;
    struct test_state_a *back = GW_HSTATE(&a->hs, test_state_a);
    fprintf(stderr, "ok %d\n", back == a);
    cn_free(a);
}

static void test_gw_hstate_wrong_type(void)
{
    char msg[512];
    int st = test_gw_hstate_in_child(test_gw_hstate_read_as_b, msg, sizeof(msg));
    CN_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
    CN_CHECK(strstr(msg, "request state is test_state_a, not test_state_b") != NULL);
    /* the same harness sees a right read go through */
    st = test_gw_hstate_in_child(test_gw_hstate_read_as_a, msg, sizeof(msg));
    CN_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CN_CHECK(strstr(msg, "ok 1") != NULL);
}

static const struct cn_test_case cases[] = {
    {"roundtrip", test_gw_hstate_roundtrip},
    {"request", test_gw_hstate_request},
    {"wrong_type", test_gw_hstate_wrong_type},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
