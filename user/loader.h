/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF object's load, on two CPUs where it can be. libbpf 1.1 loads an object's
 * programs one after the other, and the kernel's verifier is most of the load: the
 * heaviest programs (LOADER_SIDE_PROGS, about half of the verification) are loaded from a
 * second opening of the same object, on a thread, with the first one's maps, while the
 * others load; the thread attaches them too. Only where the first object's maps can be
 * known to exist before its programs load (the tp_btf handler of kbtf.h is in use) and
 * there is more than one CPU; elsewhere everything loads from the one object.
 */
#ifndef __MP_LOADER_H
#define __MP_LOADER_H

#include <stdbool.h>
#include <bpf/libbpf.h>
#include "collect/bpfmaps.h"
#include "collect/phases.h"

struct memphase_bpf;

/* programs verified (and tp_btf ones attached) on the second CPU: the heaviest, the rarely
 * hit ones whose links (~0.7 ms each) the first CPU need not make after its last program,
 * and the iterators only user space runs (bpfmaps__flush_threads(), bpfmaps__seed_attach()) */
#define LOADER_SIDE_PROGS { "handle_rss_stat", "handle_mark_victim",			\
			    "handle_reclaim_begin", "handle_reclaim_end",			\
			    "handle_memcg_reclaim_begin", "handle_memcg_reclaim_end",		\
			    "flush_threads", "seed_attach", "handle_prepare_exec" }

struct loader_opts {
	const struct bpf_object_open_opts *oo;	/* how skel was opened */
	const struct phases *phases;		/* ... and configured */
	const struct bpfmaps_config *cc;
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
