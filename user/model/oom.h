/* SPDX-License-Identifier: GPL-2.0 */
/* OOM forensics: what grew before a kill, and whether a memory cgroup did the killing. */
#ifndef __MP_OOM_H
#define __MP_OOM_H

#include <linux/types.h>
#include "memphase.h"

#include <stddef.h>

struct model;

#define OOM_WINDOW_S	5.0	/* "what grew just before": this many seconds */
#define OOM_RING	128	/* snapshots kept: 12.8 s at one per 100 ms */

/*
 * Recent snapshots of the per-phase, per-class growth counters (as counted in BPF, so
 * each byte is already in the phase it grew in). The growth over a window is the
 * difference of two snapshots. Pure code.
 */
struct oom_ring {
	unsigned int head, len;
	struct {
		__u64 ts_ns;
		__u64 growth[MP_MAX_PHASES][MP_NR_CLASSES];
	} snap[OOM_RING];
};

/* Adds the model's counters as of ts_ns (ts_ns must not go backwards). */
void oom__ring_add(struct oom_ring *r, const struct model *m, __u64 ts_ns);
/*
 * Growth per phase and class between the newest snapshot and the newest one taken at
 * or before end_ns - window_s (the oldest if none is that old). *span_s is the time
 * actually covered. 0, or -ENODATA with fewer than two snapshots.
 */
int oom__ring_window(const struct oom_ring *r, __u64 end_ns, double window_s,
		     __u64 growth[MP_MAX_PHASES][MP_NR_CLASSES], double *span_s);

/*
 * The path of the memory cgroup whose kernfs id (its directory's inode number) is
 * cg_id, relative to its hierarchy ("/bench/run1"), searched under sys_root/fs/cgroup
 * (NULL = "/sys"): v1's memory hierarchy and v2. Falls back to "/.../name". 0 or -ENOENT.
 */
int oom__cgroup_path(__u64 cg_id, const char *name, const char *sys_root, char *buf,
		     size_t len);

#endif
