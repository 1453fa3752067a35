/* Replays fuzz inputs without libFuzzer: each argument is a file, or a
 * folder whose files are each one input. Lets every build (gcc, sanitizers)
 * run the seed corpus of every fuzz target as a regression test. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    size_t got = fread(buf, 1, (size_t)(n > 0 ? n : 0), f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, got);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int ran = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (replay_file(argv[i]) != 0)
                return 1;
            ran++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        while (d != NULL && (e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
            if (replay_file(path) != 0)
                return 1;
            ran++;
        }
        if (d != NULL)
            closedir(d);
    }
    /* an empty input always runs too, the smallest edge case */
    LLVMFuzzerTestOneInput((const uint8_t *)"", 0);
    printf("replayed %d inputs\n", ran + 1);
    return 0;
}
