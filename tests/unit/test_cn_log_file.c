/* Unit tests of the buffered log file (common/log_file.c): lines reach the
 * file in order, a reopen after a rename sends later lines to a new file,
 * a writer stuck on a full pipe makes callers drop and count lines instead
 * of waiting or growing, and stderr mode writes whole lines. */
#include "cn/log_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cn/alloc.h"
#include "cn/rc.h"
#include "cn/test.h"

CN_TEST_GLOBALS;

static char dir[64];

static void test_dir(void)
{
    if (dir[0] == '\0') {
        snprintf(dir, sizeof(dir), "/tmp/cn-log-file-XXXXXX");
        CN_CHECK(mkdtemp(dir) != NULL);
    }
}

/* The whole file as a NUL-terminated heap string (NULL: none). */
static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return NULL;
    char *s = cn_malloc(1 << 20);
    size_t n = fread(s, 1, (1 << 20) - 1, fp);
    s[n] = '\0';
    fclose(fp);
    return s;
}

static void test_log_file_order(void)
{
    test_dir();
    char path[128], err[CN_ERR_LEN];
    snprintf(path, sizeof(path), "%s/a.log", dir);
    struct cn_log_file *f = NULL;
    CN_CHECK_EQ_INT(cn_log_file_new(path, 1 << 16, &f, err), CN_OK);
    for (int i = 0; i < 1000; i++) {
        char line[32];
        int n = snprintf(line, sizeof(line), "line %d\n", i);
        while (cn_log_file_write(f, line, (size_t)n) != CN_OK)
            cn_log_file_flush(f); /* 64 KiB fits them all, but stay honest */
    }
    cn_log_file_flush(f);
    struct cn_log_file_stats st;
    cn_log_file_stats(f, &st);
    CN_CHECK_EQ_INT(st.lines, 1000);
    CN_CHECK_EQ_INT(st.dropped, 0);
    char *s = slurp(path);
    CN_CHECK(s != NULL);
    const char *p = s;
    for (int i = 0; s != NULL && i < 1000; i++) {
        char want[32];
        int n = snprintf(want, sizeof(want), "line %d\n", i);
        CN_CHECK(strncmp(p, want, (size_t)n) == 0);
        p += n;
    }
    CN_CHECK(s != NULL && *p == '\0');
    struct stat sb;
    CN_CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0640);
    cn_free(s);
    cn_log_file_free(f);
    unlink(path);
}

static void test_log_file_reopen(void)
{
    test_dir();
    char path[128], moved[128], err[CN_ERR_LEN];
    snprintf(path, sizeof(path), "%s/b.log", dir);
    snprintf(moved, sizeof(moved), "%s/b.log.1", dir);
    struct cn_log_file *f = NULL;
    CN_CHECK_EQ_INT(cn_log_file_new(path, 4096, &f, err), CN_OK);
    CN_CHECK_EQ_INT(cn_log_file_write(f, "before\n", 7), CN_OK);
    cn_log_file_flush(f);
    CN_CHECK(rename(path, moved) == 0);
    CN_CHECK_EQ_INT(cn_log_file_write(f, "moved\n", 6), CN_OK); /* still the old file */
    cn_log_file_flush(f);
    CN_CHECK_EQ_INT(cn_log_file_reopen(f, err), CN_OK);
    CN_CHECK_EQ_INT(cn_log_file_write(f, "after\n", 6), CN_OK);
    cn_log_file_flush(f);
    char *a = slurp(moved), *b = slurp(path);
    CN_CHECK(a != NULL && strcmp(a, "before\nmoved\n") == 0);
    CN_CHECK(b != NULL && strcmp(b, "after\n") == 0);
    struct cn_log_file_stats st;
    cn_log_file_stats(f, &st);
    CN_CHECK_EQ_INT(st.reopens, 1);
    cn_free(a);
    cn_free(b);
    cn_log_file_free(f);
    unlink(moved);
    unlink(path);
}

static void test_log_file_bad_path(void)
{
    char err[CN_ERR_LEN];
    struct cn_log_file *f = (void *)1;
    CN_CHECK_EQ_INT(cn_log_file_new("/nonexistent-dir/x/access.log", 4096, &f, err), CN_IO);
    CN_CHECK(f == NULL);
    CN_CHECK(strstr(err, "/nonexistent-dir/x/access.log") != NULL);
}

/* The writer blocks on a pipe nobody reads: callers must not wait, and the
 * buffer must not grow past its cap. */
static void test_log_file_slow_drops(void)
{
    int p[2];
    CN_CHECK(pipe(p) == 0);
    int saved = dup(STDERR_FILENO);
    CN_CHECK(dup2(p[1], STDERR_FILENO) >= 0);
    struct cn_log_file *f = NULL;
    char err[CN_ERR_LEN], line[100];
    memset(line, 'x', sizeof(line) - 1);
    line[sizeof(line) - 1] = '\n';
    CN_CHECK_EQ_INT(cn_log_file_new("", 4096, &f, err), CN_OK);
    size_t before = cn_alloc_used();
    /* 4 MiB of lines: the pipe takes 64 KiB, the buffers 2 x 4 KiB */
    uint64_t ok = 0, dropped = 0;
    for (int i = 0; i < 40000; i++) {
        if (cn_log_file_write(f, line, sizeof(line)) == CN_OK)
            ok++;
        else
            dropped++;
    }
    CN_CHECK(dropped > 30000);
    CN_CHECK(cn_alloc_used() <= before); /* nothing allocated per line */
    struct cn_log_file_stats st;
    cn_log_file_stats(f, &st);
    CN_CHECK_EQ_INT(st.dropped, dropped);
    /* drain the pipe so the writer can finish; every queued line arrives */
    int fl = fcntl(p[0], F_GETFL);
    fcntl(p[0], F_SETFL, fl | O_NONBLOCK);
    uint64_t got = 0;
    char buf[65536];
    for (int idle = 0; idle < 200;) {
        ssize_t n = read(p[0], buf, sizeof(buf));
        if (n > 0) {
            for (ssize_t i = 0; i < n; i++)
                got += buf[i] == '\n';
            idle = 0;
        } else {
            usleep(2000);
            idle++;
            struct cn_log_file_stats s2;
            cn_log_file_stats(f, &s2);
            if (s2.lines == ok && got == ok)
                break;
        }
    }
    CN_CHECK_EQ_INT(got, ok);
    cn_log_file_free(f);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(p[0]);
    close(p[1]);
}

static void test_log_file_cleanup(void)
{
    if (dir[0] != '\0')
        CN_CHECK(rmdir(dir) == 0);
}

int main(int argc, char **argv)
{
    static const struct cn_test_case cases[] = {
        {"order", test_log_file_order},
        {"reopen", test_log_file_reopen},
        {"bad_path", test_log_file_bad_path},
        {"slow_drops", test_log_file_slow_drops},
        {"cleanup", test_log_file_cleanup},
        {NULL, NULL},
    };
    return cn_test_main(cases, argc, argv);
}
