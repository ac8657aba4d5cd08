/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The collector's state, shared by its two files (collector.c: the live run;
 * collector_replay.c: recordings' segments and their replay), and the steps both take.
 * Not for other users: collector.h is the collector's interface.
 */
#ifndef __MP_COLLECTOR_INT_H
#define __MP_COLLECTOR_INT_H

#include "collect/collector.h"

#define NOTICE_AFTER_NS	1000000000ULL
/* stack records held back past mapping events, at most (see on_event()) */
#define DEFER_MAX	16

struct collector {
	struct memphase_bpf *skel;
	struct model *m;
	const struct phases *phases;
	struct probes *probes;
	struct collector_hooks hooks;
	/* the cause rules' sources, for the recording */
	const char *preset;
	const char *const *allocators, *const *cause_files, *const *cause_texts;
	unsigned int nallocators, ncause_files;
	struct recorder *rec;		/* --record: every input is written here too */
	struct userfs *fs;		/* the invoking user: what root reads for them */
	int rec_mode;			/* REC_MODE_RUN, REC_MODE_ATTACH */
	bool replay;			/* fed by collect/replay.c: no BPF, no /proc */
	struct replay_base *base;	/* replay: the counters where a window opened */
	bool mappings;
	bool stop_on_map;
	struct bpf_object *side;	/* collector_opts.side */
	bool keep_raw;
	__u64 sample_bytes;		/* collector_opts.sample_bytes */
	bool bpf_stats;
	struct ring_buffer *rb;
	struct unwinder *unwinder;
	struct stacks *stacks;
	struct strmap paths;		/* mapping "dev:ino" -> path */
	struct maplog *maplog;	/* the threads' batches of mapping growth */
	struct causerules rules;	/* read at start, moved into the model when it begins */
	struct oom_ring *growth_ring;	/* recent per-phase growth, for OOM reports */
	struct timeline *tl;
	struct sysmem sm;
	bool have_sm;
	unsigned int sm_seq;
	char exe[PATH_MAX];		/* run: the command, for the marker notice */
	bool root_exited;
	bool notice_done;
	struct nvml *nvml;		/* NULL: no NVML (m->gpu.nvml_why says why) */
	bool phase_changed;		/* a phase event since the last NVML reading */
	__u64 last_tick_ns, last_names_ns, last_sysmem_ns;
	__u64 last_room_ns;		/* room_refresh() */
	/* stack records (copies) not resolved yet, in ring order */
	struct { void *data; size_t len; } defer[DEFER_MAX];
	unsigned int ndefer;
};

/* An event from the ring buffer (or a recording) applied to the model. */
void collector__apply_event(struct collector *c, const struct mp_event *e);
/* The target set running (the timeline starts). */
void collector__apply_started(struct collector *c, __u64 ts);
/* A reading of the system's and the cgroup's memory. */
void collector__apply_sysmem(struct collector *c, struct sysmem sm, __u64 ts);
/* The 100 ms tick: counters, RSS, the timeline. */
void collector__apply_tick(struct collector *c, __u64 now);
/* Stack records held back past mapping events, applied. */
void collector__consume(struct collector *c);
/* The set-up a recording starts with (requests, preset, rules). */
void collector__record_setup(struct collector *c);
/* The preset's relabels in the model. 0 or -errno. */
int collector__relabels_set(struct model *m, const struct preset *p);
/* The room before an OOM kill, as read at a request's boundary. */
void collector__room_apply(struct collector *c, bool cg_known, __s64 cg, bool sys_known, __s64 sys);
/* The command's exit status. */
void collector__root_status(struct collector *c, int st);

#endif
