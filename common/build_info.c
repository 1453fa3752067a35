/* The build's version (cn/build_info.h), from the header CMake generates. */
#include "cn/build_info.h"

#include <stdio.h>
#include <string.h>

#include "build_version.h"

const char *cn_build_info_version(void)
{
    return CN_BUILD_VERSION;
}

int cn_build_info_version_flag(const char *prog, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--version") == 0) {
            printf("%s %s\n", prog, CN_BUILD_VERSION);
            return 1;
        }
    }
    return 0;
}
