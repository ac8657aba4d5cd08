/* SPDX-License-Identifier: GPL-2.0 */
/*
 * System and cgroup memory as last read (collect/sysmem.c fills struct sysmem from /proc
 * and cgroupfs), and the room left before the OOM killer acts. Pure data and arithmetic,
 * here so that the views can read it without reaching up into the collector.
 */
#ifndef __MP_HEADROOM_H
#define __MP_HEADROOM_H

#include <stdbool.h>
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
