/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stack samples -> frames -> the model's profile (model/profile.h). Each sample stands for
 * `weight` bytes of RSS growth; per phase the weights add up to the sampled part of the
 * growth.
 */
#ifndef __MP_STACKS_H
#define __MP_STACKS_H

#include <stdbool.h>
#include <linux/types.h>
#include "memphase.h"
#include "model/model.h"

#define STACKS_MAX_FRAMES	128

struct stacks;
struct unwinder;

/* keep_raw: the profile keeps raw samples (perf.data): sampled processes keep their
 * snapshots until the end, for their mappings. */
struct stacks *stacks__new(struct unwinder *u, bool keep_raw);
void stacks__free(struct stacks *st);

/* A process appeared or mapped code: snapshot its mappings while it is alive. */
void stacks__note_process(struct stacks *st, __u32 pid);
/*
 * A process exec'd (its earlier samples are in): its cached symbol names go (the new image
 * may have other code at the same address) and it is snapshot again, its next miss
 * re-reading its maps at once (unwinder__exec).
 */
void stacks__exec_process(struct stacks *st, __u32 pid);
/*
 * A process exited and its samples are in: drop its snapshot (unwinder__forget) and its
 * cached symbol names. With raw samples kept, a sampled process keeps its snapshot, whose
 * mappings the profile needs at the end.
 */
void stacks__forget_process(struct stacks *st, __u32 pid);
/* One sample as the collector resolved it: what the profile and the recording take. */
struct stacks_sample {
	__u32 pid, tid, phase;
	__u32 cpu;			/* the CPU it was taken on (0: unknown, an older
					 * recording's) */
	__u64 ts_ns, weight;
	bool unwind_failed;		/* no frame past the first */
	__u32 cls;			/* >= MP_STACK_CLS_ALLOC: an allocation probe's */
	__u64 addr;			/* the address grown, or an origin's start */
	__u32 map_how, map_prot;	/* an origin's syscall and protection */
	const char *comm;		/* sanitized */
	__u32 nframes;			/* outermost first */
	const char *frames[STACKS_MAX_FRAMES + 1];
	__u32 nips;			/* innermost first; 0: no stack */
	__u64 ips[STACKS_MAX_FRAMES];
};

/*
 * One MP_EV_STACK record (header + payload as sent by BPF) unwound and symbolized into s.
 * The strings live until the next call (s->comm is malloc'd: free it). 0 or -errno.
 */
int stacks__resolve(struct stacks *st, const void *data, size_t len, struct stacks_sample *s);
/* A resolved sample into m's profile and sample counters. 0 or -errno. */
int stacks__apply(struct model *m, const struct stacks_sample *s);
/* stacks__resolve() then stacks__apply(). */
int stacks__add(struct stacks *st, struct model *m, const void *data, size_t len);
/*
 * One MP_EV_ORIGIN record (the same layout): unwound, symbolized and added to m's origins,
 * labelled with m's allocator rules. 0 or -errno.
 */
int stacks__origin(struct stacks *st, struct model *m, const void *data, size_t len);
/* A resolved MP_EV_ORIGIN record into m's origins. 0 or -errno. */
int stacks__origin_apply(struct model *m, const struct stacks_sample *s);
/*
 * The sampled processes and (when the profile keeps raw samples) their code mappings into
 * m's profile, raw samples in time order. Again later: the mappings are replaced. 0 or
 * -errno.
 */
int stacks__finish(struct stacks *st, struct model *m);

#endif
