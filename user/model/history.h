/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The run over time, for the views that draw it (the JSON's intervals, the trace, the
 * HTML report): the intervals of the phase timeline, every thread's phase changes, marks
 * (OOM kills, guard actions, libraries loaded, execs), the system's and cgroup's
 * memory readings and the GPU side's changes. Growing arrays with a bound each, so that an
 * observation of days stays within its footprint: past it, the older half of the
 * intervals is merged pair by pair (each pair one interval of the phase that held most of
 * it) and the older half of every thread's phase changes thinned (every other change of
 * a thread goes, its phase lasting to the next kept one): the run's first HISTORY_HEAD
 * (its load, its context) and the newest half stay exact, what lies between drawn at a
 * coarser grain the longer it runs. Marks past their bound are
 * counted as dropped; memory and GPU readings are thinned (every other one goes) so they
 * still span the run. Pure code.
 */
#ifndef __MP_HISTORY_H
#define __MP_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define HISTORY_MAX_INTERVALS	(1U << 15)	/* 768 KiB */
#define HISTORY_MAX_CHANGES	(1U << 15)	/* 768 KiB */
#define HISTORY_HEAD		256	/* the run's first intervals and changes stay exact */
#define HISTORY_MAX_MARKS	(1U << 16)
#define HISTORY_MAX_MEM		8192
#define HISTORY_TEXT		160

/* The phase timeline was in phase from start_ns to end_ns (closed intervals only). */
struct history_interval {
	__u64 start_ns, end_ns;
	__u32 phase, pid;
};

/* A thread changed phase. */
struct history_change {
	__u64 ts_ns;
	__u32 pid, tid, phase, old_phase;
};

enum history_mark_kind {
	HISTORY_OOM = 1,	/* an OOM kill */
	HISTORY_GUARD = 2,	/* the guard stopped or ended a process */
	HISTORY_LIBRARY = 3,	/* a process mapped an executable file it had not before */
	HISTORY_EXEC = 4,	/* a process ran a program */
	HISTORY_LEFT = 5,	/* a process left the observation (the user's reach) */
};

struct history_mark {
	__u64 ts_ns;
	__u32 kind, pid;
	char text[HISTORY_TEXT];
};

/* One reading of the system's (and the target's memory cgroup's) memory. */
struct history_mem {
	__u64 ts_ns;
	__u64 mem_available, swap_free;
	__u64 cg_usage, cg_limit;	/* 0 and 0: no cgroup, or no limit */
};

/* The GPU side changed: pinned and managed host bytes held, the observed processes' VRAM. */
struct history_gpu {
	__u64 ts_ns;
	__s64 pinned, managed;
	__u64 vram;
};

struct history {
	struct history_interval *iv;
	size_t niv, capiv;
	struct history_change *ch;
	size_t nch, capch;
	struct history_mark *mk;
	size_t nmk, capmk;
	struct history_mem *mem;
	size_t nmem, capmem;
	struct history_gpu *gpu;
	size_t ngpu, capgpu;
	__u64 dropped;		/* marks over their bound */
	__u64 merged;		/* intervals merged into others past their bound */
	__u64 thinned;		/* phase changes left out past their bound */
	/*
	 * false: the intervals end where the timeline's phase last changed, the current
	 * phase's interval is open (from the last one's end to the model's end_ns); true:
	 * every interval is in iv[] (a window of a replayed run).
	 */
	bool closed;
};

/* Where the open interval starts, or 0 when there is none (closed). */
static inline __u64 history__open_since(const struct history *h, __u64 start_ns)
{
	if (h->closed)
		return 0;
	return h->niv ? h->iv[h->niv - 1].end_ns : start_ns;
}

void history__free(struct history *h);
void history__add_interval(struct history *h, __u32 phase, __u32 pid, __u64 start_ns,
			   __u64 end_ns);
void history__add_change(struct history *h, __u64 ts_ns, __u32 pid, __u32 tid, __u32 phase,
			 __u32 old_phase);
void history__add_mark(struct history *h, __u64 ts_ns, __u32 kind, __u32 pid,
		       const char *text);
void history__add_mem(struct history *h, const struct history_mem *s);
/* Notes the GPU side at s->ts_ns when it differs from the last note. */
void history__add_gpu(struct history *h, const struct history_gpu *s);
const char *history__mark_name(__u32 kind);

#endif
