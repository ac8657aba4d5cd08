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
 */
#ifndef __MP_SYSMEM_H
#define __MP_SYSMEM_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#define SYSMEM_PATH_MAX	256

struct sysmem {
	/* /proc/meminfo, bytes */
	bool have_meminfo;
	__u64 mem_total;
	__u64 mem_available;
	__u64 swap_total;
	__u64 swap_free;

	/* memory cgroup: cg_version 0 when none was found */
	int cg_version;			/* 1 or 2 */
	char cg_path[SYSMEM_PATH_MAX];	/* the process's cgroup, in its hierarchy */
	__u64 cg_usage;			/* of the process's cgroup */
	bool cg_limited;		/* a limit applies (its own or an ancestor's) */
	char cg_limit_path[SYSMEM_PATH_MAX];	/* the cgroup whose limit binds */
	__u64 cg_limit;			/* that cgroup's limit, usage and */
	__u64 cg_limit_usage;
	__u64 cg_reclaimable;		/* inactive file pages (reclaimed before an OOM) */

	/* /proc/pressure/memory */
	bool have_psi;
	double psi_some_avg10;		/* percent */
	double psi_full_avg10;
	__u64 psi_some_total_us;
	__u64 psi_full_total_us;
};

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

enum sysmem_bound {
	SYSMEM_SYSTEM,		/* MemAvailable + SwapFree */
	SYSMEM_CGROUP,		/* limit - usage + inactive file of the binding cgroup */
};

/*
 * Bytes that can still be used up before an OOM kill, against one bound (may be <= 0).
 * 0, or -ENODATA when that bound is unknown or there is no limit.
 */
int sysmem__headroom(const struct sysmem *sm, enum sysmem_bound b, __s64 *bytes);

#endif
