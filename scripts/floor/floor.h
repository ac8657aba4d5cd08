/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by floor.bpf.c and floor.c (no #includes; __u32/__u64 only). */
#ifndef __FLOOR_H
#define __FLOOR_H

#define FLOOR_TSLOTS	4096	/* target slots, as memphase's MP_TSLOTS ... */
#define FLOOR_T_PROBES	4	/* ... MP_T_PROBES */
#define FLOOR_T_STRIDE	1025	/* ... MP_T_STRIDE */

/* one observed process, in one of its slots (as memphase's struct mp_target) */
struct floor_target {
	__u32 tgid;
	__u32 chained;
};

static inline __u32 floor_tslot(__u32 tgid, __u32 i)
{
	return (tgid + i * FLOOR_T_STRIDE) & (FLOOR_TSLOTS - 1);
}

/* per CPU: the events of the targets each program counted */
struct floor_counts {
	__u64 faults;
	__u64 rss;
};

#endif
