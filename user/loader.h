/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF object's load, on two CPUs where it can be. libbpf 1.1 loads an object's
 * programs one after the other, and the kernel's verifier is most of the load: the
 * heaviest programs (LOADER_SIDE_PROGS, about half of the verification) are loaded from a
 * second opening of the same object, on a thread, with the first one's maps, while the
 * others load; the thread attaches them too. The first object's maps but its global data
 * (the kernel allocates and clears their memory: ~15 ms here) are created first, split
 * between the two threads, and given to the first object before its load. Only where the first object's maps can be
 * known to exist before its programs load (the tp_btf handler of kbtf.h is in use) and
 * there is more than one CPU; elsewhere everything loads from the one object, as before.
 */
#ifndef __MP_LOADER_H
#define __MP_LOADER_H

#include <stdbool.h>
#include <bpf/libbpf.h>
#include "collect/collect.h"
#include "collect/phases.h"

struct memphase_bpf;

/* programs verified (and tp_btf ones attached) on the second CPU: the two heaviest, the
 * rarely hit ones whose links (~0.7 ms each) the first CPU need not make after its last
 * program, and the iterator only the end runs (collect__flush_threads()) */
#define LOADER_SIDE_PROGS { "handle_rss_stat", "handle_sys_exit", "handle_mark_victim",	\
			    "handle_reclaim_begin", "handle_reclaim_end",			\
			    "handle_memcg_reclaim_begin", "handle_memcg_reclaim_end",		\
			    "flush_threads" }
/* maps created before the load, half of them on the second CPU, at most */
#define LOADER_MAX_MAPS 32

struct loader_opts {
	const struct bpf_object_open_opts *oo;	/* how skel was opened */
	const struct phases *phases;		/* ... and configured */
	const struct collect_config *cc;
	bool split;				/* the kbtf handler is in use */
};

/*
 * Loads skel (opened and configured). *side is the second object when the side programs
 * were loaded from it: they are attached already (they act on no process before a target
 * is added to the maps); destroy it after skel's links. NULL otherwise. 0 or -errno (a
 * failed load or attach leaves *side NULL).
 */
int loader__load(struct memphase_bpf *skel, const struct loader_opts *o,
		 struct memphase_bpf **side);

#endif
