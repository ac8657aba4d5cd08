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
 *
 * Under the same conditions the programs only uprobes run (LOADER_LATE_PROGS: the markers'
 * and the allocation probes', a third of the verification) are not loaded with the others:
 * from two more openings of the object, on two threads, once the command runs
 * (loader__late_begin()) or a uprobe is to be attached, whichever comes first. The command
 * starts without waiting for them, and a target without markers never does. The first
 * uprobe attached waits for them (loader__late_wait()); in run mode the target is held at
 * new code until its markers are probed, so nothing it does is missed.
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
/* programs loaded after the others, only for the uprobes (see above), from two objects:
 * the first (the heaviest) from one, the others from the second */
#define LOADER_LATE_PROGS { "handle_marker", "handle_marker_ret", "handle_alloc_entry",	\
			    "handle_alloc_return" }
#define LOADER_LATE_OBJS 2
/* maps created before the load, half of them on the second CPU, at most */
#define LOADER_MAX_MAPS 32

struct loader_opts {
	const struct bpf_object_open_opts *oo;	/* how skel was opened */
	const struct phases *phases;		/* ... and configured */
	const struct bpfmaps_config *cc;
	bool split;				/* the kbtf handler is in use */
	int btf_fd;				/* ... and its minimal BTF (oo's path) */
};

struct loader_late;

/*
 * Loads skel (opened and configured). *side is the second object when the side programs
 * were loaded from it: they are attached already (they act on no process before a target
 * is added to the maps); destroy it after skel's links. NULL otherwise. *late is the late
 * programs' load, not begun (free it with loader__late_free()), or NULL when they were
 * loaded with skel. 0 or -errno (a failed load or attach leaves *side and *late NULL).
 */
int loader__load(struct memphase_bpf *skel, const struct loader_opts *o,
		 struct memphase_bpf **side, struct loader_late **late);
/* Begins the late load on its threads (signals blocked there). Idempotent, NULL-safe. */
void loader__late_begin(struct loader_late *l);
/* Begins the late load if need be and waits for it: 0 and objs[] the objects that loaded
 * the LOADER_LATE_PROGS (not attached), or -errno (objs[i] NULL for a part that failed). */
int loader__late_wait(struct loader_late *l, struct bpf_object *objs[LOADER_LATE_OBJS]);
/* The late objects loaded by now, into objs[]: how many. Never waits; NULL-safe. */
unsigned int loader__late_done(struct loader_late *l, struct bpf_object *objs[LOADER_LATE_OBJS]);
/* Waits for the late load if begun and frees it (its objects too: after the links of their
 * programs). NULL-safe. */
void loader__late_free(struct loader_late *l);

#endif
