/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by floor.bpf.c and floor.c (no #includes; __u32/__u64 only). */
#ifndef __FLOOR_H
#define __FLOOR_H

#define FLOOR_TSLOTS	4096	/* direct-mapped target slots, as memphase's MP_TSLOTS */
#define FLOOR_MAX_TARGETS 64	/* the hash behind a collided slot */

/* one observed process, in tslots[tgid % FLOOR_TSLOTS] or, on a collision, in targets */
struct floor_target {
	__u32 tgid;
	__u32 collided;
};

/* per CPU: the events of the targets each program counted */
struct floor_counts {
	__u64 faults;
	__u64 rss;
};

#endif
