/* CPU affinity from a setting: a CPU list in the kernel's own notation
 * ("0", "0-3", "0,2,4-7"; what taskset -c, cpuset.cpus and systemd's
 * CPUAffinity= take), applied to the whole process before it starts any
 * thread, so every thread it starts later (ZeroMQ's I/O thread included)
 * runs on those CPUs. Why a daemon would want it: docs/storage.md
 * ("CPU affinity"). */
#ifndef CN_AFFINITY_H
#define CN_AFFINITY_H

#include <sched.h>   /* cpu_set_t: _GNU_SOURCE comes from the build */

#include "cn/rc.h"

/* Reads the CPU list s into *set. An empty s (or only blanks) is CN_OK with
 * an empty set: no pinning. CN_INVAL with a message in err for anything else
 * than numbers, "a-b" ranges (a <= b) and commas (blanks around items are
 * allowed), and for a CPU number at or past CPU_SETSIZE. */
int cn_cpu_list_parse(const char *s, cpu_set_t *set, char err[CN_ERR_LEN]);

/* Parses s and, when it names any CPU, restricts the calling process's
 * thread (and so every thread it starts afterwards) to them. CN_OK when s
 * is empty (nothing done); CN_INVAL for a bad list; CN_ERR when the kernel
 * refuses it (none of the CPUs online or allowed), with err saying so. */
int cn_cpu_affinity_apply(const char *s, char err[CN_ERR_LEN]);

#endif
