/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stack profile: symbolized stack samples, each standing for `weight` bytes of RSS
 * growth, merged per (phase, comm, frames); optionally every raw sample (addresses,
 * thread, time) and the code mappings of the sampled processes, for exporters that
 * symbolize on their own (perf.data). Written by the collector, read by the stack views.
 *
 * Frame and comm strings are interned: equal names share one pointer, owned by the
 * profile. They are valid UTF-8 without control characters and never empty (the
 * collector makes them so); they may hold any other character, ';' included: a format
 * with separators escapes them itself.
 */
#ifndef __MP_PROFILE_H
#define __MP_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "memphase.h"
#include "lib/strmap.h"

/* One merged stack. frames[0] is the outermost. */
struct profile_stack {
	__u32 phase;
	const char *comm;
	const char **frames;
	__u32 nframes;
	__u64 bytes;
	__u64 samples;
	/*
	 * The mapping its first sample with a known origin grew: 1 + index in the model's
	 * origins (model/origins.h), 0 if none. The same stack filling two mappings keeps the
	 * first.
	 */
	__u32 origin;
};

/* One sample as BPF took it; ips[0] is the innermost (the faulting) address. */
struct profile_sample {
	__u32 pid, tid, phase, n;
	__u64 ts_ns, weight;
	__u32 stack;		/* the merged stack it went to: index in stacks */
	__u32 cls;		/* enum mp_class of the growth */
	__u32 origin;		/* the mapping it grew: 1 + index in the origins, 0 unknown */
	__u32 cpu;		/* the CPU it was taken on (0 also when unknown) */
	__u64 ips[];		/* symbolized innermost first: stacks[stack].frames reversed */
};

/* An executable mapping of a sampled process. */
struct profile_map {
	__u32 pid;
	__u64 start, end, pgoff;
	const char *path;		/* interned */
	unsigned char build_id[20];
	int build_id_len;
};

/* A process that took samples, with its comm as it was. */
struct profile_proc {
	__u32 pid;
	char comm[MP_COMM_LEN + 1];
};

/* When a sample was taken, and which merged stack it went to (the timed views). */
struct profile_when {
	__u64 ts_ns;
	__u64 weight;
	__u32 stack;		/* index in stacks */
	__u32 pid;		/* the process that took it */
	__u32 origin;		/* the mapping it grew: 1 + index in the origins, 0 unknown */
	__u32 tid;		/* and the thread */
};

#define PROFILE_MAX_WHEN	(1U << 21)	/* timed samples kept, at most */

struct profile {
	bool keep_raw;			/* keep every sample and the mappings */
	struct strmap strings;		/* interned names (values unused) */
	struct strmap index;		/* merge key -> index in stacks + 1 */
	struct profile_stack *stacks;
	size_t nstacks, capstacks;
	struct profile_sample **raw;
	size_t nraw, capraw;
	struct profile_map *maps;
	size_t nmaps, capmaps;
	struct profile_proc *procs;
	size_t nprocs, capprocs;
	__u64 total;			/* samples */
	struct profile_when *when;	/* every sample's time, in the order added */
	size_t nwhen, capwhen;
	__u64 when_dropped;		/* past PROFILE_MAX_WHEN */
	size_t last;			/* the stack profile__add() added to last */
	__u32 last_origin;		/* and the mapping that sample grew */
};

void profile__init(struct profile *p, bool keep_raw);
void profile__free(struct profile *p);
/* The interned copy of s, or NULL on ENOMEM. */
const char *profile__intern(struct profile *p, const char *s);
/*
 * Adds one sample of weight bytes to the merged stack (phase, comm, frames[0..n), outermost
 * first); the strings need not be interned. 0 or -ENOMEM.
 */
int profile__add(struct profile *p, __u32 phase, const char *comm, const char *const *frames,
		 __u32 n, __u64 weight);
/* Notes when (and in which thread) the sample profile__add() added last was taken. */
int profile__add_when(struct profile *p, __u32 pid, __u32 tid, __u64 ts_ns, __u64 weight);
/* profile__add() of a sample that grew the mapping of origin id (0: unknown). */
int profile__add_from(struct profile *p, __u32 phase, const char *comm,
		      const char *const *frames, __u32 n, __u64 weight, __u32 origin);
/*
 * Keeps a raw sample (when keep_raw; otherwise does nothing) of the stack profile__add() added
 * last, taken on cpu, of growth class cls in the mapping of origin (0: unknown). 0 or
 * -ENOMEM.
 */
int profile__add_raw(struct profile *p, __u32 pid, __u32 tid, __u32 cpu, __u32 phase,
		     __u64 ts_ns, __u64 weight, __u32 cls, __u32 origin, const __u64 *ips,
		     __u32 n);
/* Notes a process that took samples (once per pid). 0 or -ENOMEM. */
int profile__add_proc(struct profile *p, __u32 pid, const char *comm);
/* Records an executable mapping of a sampled process (when keep_raw). 0 or -ENOMEM. */
int profile__add_map(struct profile *p, __u32 pid, __u64 start, __u64 end, __u64 pgoff,
		     const char *path, const unsigned char *build_id, int build_id_len);
/*
 * Moves the samples taken in [from_ns, to_ns] in a phase p with to[p] != 0 to phase
 * to[p] - 1 (merged stacks and, of pid, raw samples); adds what moved to dbytes[] and
 * dsamples[] (per phase: minus from p, plus to the new one). Samples whose time was not
 * kept (past PROFILE_MAX_WHEN) stay.
 */
void profile__relabel(struct profile *p, __u32 pid, __u64 from_ns, __u64 to_ns,
		      const __u8 to[MP_MAX_PHASES], __s64 dbytes[MP_MAX_PHASES],
		      __s64 dsamples[MP_MAX_PHASES]);
/* Sorts the raw samples by time (then thread). */
void profile__sort_raw(struct profile *p);

#endif
