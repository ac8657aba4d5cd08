/* SPDX-License-Identifier: GPL-2.0 */
/*
 * System and cgroup memory: how much room is left before the OOM killer acts.
 *
 * - /proc/meminfo: MemTotal, MemAvailable, SwapTotal, SwapFree;
 * - the memory cgroup of a process (/proc/PID/cgroup): cgroup v1's `memory` controller
 *   (<sys>/fs/cgroup/memory/<path>/memory.limit_in_bytes, memory.usage_in_bytes,
 *   memory.stat total_inactive_file) or v2 (<sys>/fs/cgroup/<path>/memory.max,
 *   memory.current, memory.stat inactive_file; also under fs/cgroup/unified/ on hybrid
 *   systems). The cgroup and each ancestor are read; the one with the least room left
 *   is the binding limit. "max", and v1's huge "unlimited" value, mean no limit;
 * - memory PSI, /proc/pressure/memory, when the kernel has it.
 *
 * Roots are overridable for tests: proc_root (default "/proc") and sys_root ("/sys").
 * struct sysmem and sysmem__headroom() live in model/headroom.h, for the views to read.
 */
#ifndef __MP_SYSMEM_H
#define __MP_SYSMEM_H

#include <sys/types.h>
#include "lib/headroom.h"

/* Reads /proc/meminfo. 0 or -errno. */
int sysmem__read_meminfo(struct sysmem *sm, const char *proc_root);
/* Reads the memory cgroup of pid; 0 (cg_version 0 when there is none) or -errno. */
int sysmem__read_cgroup(struct sysmem *sm, const char *proc_root, const char *sys_root,
			pid_t pid);
/* Reads memory PSI; 0 (have_psi false when absent) or -errno. */
int sysmem__read_psi(struct sysmem *sm, const char *proc_root);
/*
 * All of the above (no cgroup when pid <= 0). Resets *sm first. Returns the error of
 * /proc/meminfo only: a missing cgroup or PSI is not an error.
 */
int sysmem__read(struct sysmem *sm, const char *proc_root, const char *sys_root, pid_t pid);

#endif
