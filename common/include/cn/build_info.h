/* What a binary knows of its own build: the version from git describe at
 * configure time ("unknown" outside a git checkout), printed by every
 * binary's --version as "NAME VERSION". */
#ifndef CN_BUILD_INFO_H
#define CN_BUILD_INFO_H

/* The version string (static storage). */
const char *cn_build_info_version(void);

/* When argv holds "--version", prints "prog VERSION" on stdout and returns
 * 1 (the caller exits 0); else returns 0 and prints nothing. */
int cn_build_info_version_flag(const char *prog, int argc, char **argv);

#endif
