/* SPDX-License-Identifier: GPL-2.0 */
/* BPF maps -> model. */
#ifndef __MP_BPFMAPS_H
#define __MP_BPFMAPS_H

#include "model/model.h"

struct memphase_bpf;
struct bpf_object;
struct phases;
struct maplog;
struct recorder;

/* What the BPF side is configured with before it is loaded. */
struct bpfmaps_config {
	int stack_mode;			/* enum mp_stack_mode */
	__u64 sample_bytes;		/* one stack sample per this much of a thread's growth */
	__u64 max_samples;		/* per second, all threads (0: no cap) */
	bool mappings;			/* charge growth to mappings */
	__u64 max_rss;			/* the guard's RSS limit (0: off) */
	unsigned int ringbuf_kib;
	__u64 origin_min;		/* mappings this large get their origin (0: none) */
	bool attach;			/* to a running process (its sizes are read first) */
};

#define BPFMAPS_ORIGINS_SMALL_PER_SEC	64	/* origins of smaller mappings: at most */
#define BPFMAPS_ORIGINS_SMALL_MAX	4096	/* ... per second, and in all */

/* Fills the read-only config and sizes the ring buffer (after open, before load). -errno
 * after one line on stderr. */
int bpfmaps__configure(struct memphase_bpf *skel, const struct phases *ph,
		       const struct bpfmaps_config *cc);
struct stacks;

/* Reads per-phase counters (summed over CPUs), address-space RSS and drop counters (ml:
 * the batches' own, NULL: none). */
int bpfmaps__maps(struct memphase_bpf *skel, struct maplog *ml, struct model *m);
/*
 * A process ended: the pinned and managed memory it still held went with it. Removes its
 * entries from the BPF allocation table and frees them in the model, in phase (its phase
 * at the exit). Returns how many, or -errno.
 */
int bpfmaps__allocs_exit(struct memphase_bpf *skel, struct model *m, __u32 pid, __u32 phase,
			 struct recorder *rec);
/*
 * How long an ended process keeps its slots: long enough for its address space's teardown
 * (rss_stat after the exit event) to be counted, short enough that a burst of short
 * processes does not fill the 4096-slot target table: a new process whose home slot is
 * taken needs one of the homes of the pids 1,021, 2,046 or 3,071 below its own free, and
 * is not observed (lost.events) when all of them still hold processes not yet reaped.
 */
#define BPFMAPS_REAP_NS		100000000ULL

/*
 * Removes processes that ended more than BPFMAPS_REAP_NS before now_ns from the BPF
 * target set and their address spaces from the map (their last numbers are in the model
 * by then), and has st (NULL: no stacks) forget their snapshots, so long runs that fork
 * often neither fill the maps nor grow memphase. Returns how many were removed.
 */
int bpfmaps__reap(struct memphase_bpf *skel, struct model *m, struct stacks *st, __u64 now_ns);
/*
 * Reads every loaded program's run count and run time (bpf_obj_get_info_by_fd; the
 * kernel counts the time only while BPF_STATS_RUN_TIME is enabled) into m->bpf_stats:
 * skel's, or their namesakes' in side (NULL: none), the object that loaded some of skel's
 * programs instead (loader.h). Returns 0, or the last -errno of a program it could not
 * read (the others are kept).
 */
int bpfmaps__bpf_stats(struct memphase_bpf *skel, struct bpf_object *side, struct model *m);
/*
 * Has every thread send the mapping growth it still holds (the flush_threads iterator; from
 * side, NULL: none, if it was loaded there), before the last read of the mappings. 0,
 * -ENOENT (not loaded: no mapping tracking) or -errno.
 */
int bpfmaps__flush_threads(struct memphase_bpf *skel, struct bpf_object *side);
/*
 * Attach: after bpfmaps__add_target(tgid, MP_T_SEEDING), reads the exact sizes of tgid's
 * address space into its entry and lets its events count (the seed_attach iterator; from
 * side if it was loaded there). 0; or, when it could not be seeded, the target is re-added
 * without the flag (its first event of each class is then its baseline) and -errno
 * (-ESRCH: no task of it has an address space, -ENOENT: not loaded).
 */
int bpfmaps__seed_attach(struct memphase_bpf *skel, struct bpf_object *side, __u32 tgid);
/* Adds a process to the BPF target set. */
int bpfmaps__add_target(struct memphase_bpf *skel, __u32 tgid, __u32 flags);
/* A full mapping map must still take growth: every phase's "unknown" rows exist. */
void bpfmaps__reserve_unknown(struct memphase_bpf *skel, unsigned int nphases);
/* Marks an executable as probed already: its exec does not hold the target. */
void bpfmaps__seen_file(struct memphase_bpf *skel, const char *path);
/* Removes a process from the BPF target set. */
void bpfmaps__drop_targets(struct memphase_bpf *skel);
void bpfmaps__del_target(struct memphase_bpf *skel, __u32 tgid);

#endif
