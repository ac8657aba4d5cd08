/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF object's load, on two CPUs where it can be. libbpf 1.1 loads an object's
 * programs one after the other, and the kernel's verifier is most of the load: the
 * heaviest program (LOADER_SIDE_PROG) is loaded from a second opening of the same object,
 * on a thread, with the first one's maps, while the others load. Only where the first
 * object's maps can be known to exist before its programs load (the tp_btf handler of
 * kbtf.h is in use) and there is more than one CPU; elsewhere everything loads from the one
 * object, as before.
 */
#ifndef __MP_LOADER_H
#define __MP_LOADER_H

#include <stdbool.h>
#include <bpf/libbpf.h>
#include "collect/collect.h"
#include "collect/phases.h"

struct memphase_bpf;

#define LOADER_SIDE_PROG "handle_rss_stat"

struct loader_opts {
	const struct bpf_object_open_opts *oo;	/* how skel was opened */
	const struct phases *phases;		/* ... and configured */
	const struct collect_config *cc;
	bool split;				/* the kbtf handler is in use */
};

/*
 * Loads skel (opened and configured). *side is the second object when the side program
 * was loaded from it (attach it, destroy it after skel's links), NULL otherwise. 0 or
 * -errno (a failed load leaves *side NULL).
 */
int loader__load(struct memphase_bpf *skel, const struct loader_opts *o,
		 struct memphase_bpf **side);

#endif
