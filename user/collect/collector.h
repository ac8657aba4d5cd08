/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The collector: the one writer of the model. It reads the BPF ring buffer (phase
 * changes, forks, execs, exits, OOM kills, stack samples, new code to probe) and the
 * BPF maps (per-phase counters, address spaces, mappings), /proc (mapping names, the
 * starting RSS of an attached process) and the system's memory (MemAvailable, the
 * target's cgroup, PSI), and writes what they say into the model, the stack profile and
 * the RSS timeline. Views, exporters and the guard only read them.
 */
#ifndef __MP_COLLECTOR_H
#define __MP_COLLECTOR_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "lib/sysmem.h"
#include "model/model.h"
#include "model/timeline.h"

struct bpf_object;
struct memphase_bpf;
struct recorder;
struct stacks_sample;
struct phases;
struct probes;
struct userfs;
struct collector;

#define COLLECTOR_TICK_NS	100000000ULL	/* counters, reaping, OOM ring, timeline */
#define COLLECTOR_NAMES_NS	1000000000ULL	/* mapping names (their process must live) */
#define COLLECTOR_SYSMEM_NS	500000000ULL	/* MemAvailable, cgroup, PSI */
#define COLLECTOR_ROOM_NS	50000000ULL	/* the room, at request boundaries */
#define COLLECTOR_TIMELINE_CAP	4096		/* RSS history samples (thinned, whole run) */
#define COLLECTOR_RATE_WINDOW_S	5.0		/* the timeline's growth-rate window */
#define COLLECTOR_ATTACHED_PHASE "attached"	/* phase 0 of an attach: before its first marker */

/* What the collector tells the orchestrator. */
struct collector_hooks {
	void *ctx;
	/* a line for the user (the live view's notices, or stderr) */
	void (*notice)(void *ctx, const char *msg);
	/* BPF saw a process cross --max-rss */
	void (*max_rss)(void *ctx, pid_t pid, const char *comm);
};

struct collector_opts {
	const struct phases *phases;
	struct probes *probes;		/* marker uprobes, attached on new code */
	bool mappings;			/* name the mappings that grew */
	bool stacks;			/* stack samples are on */
	bool keep_raw;			/* keep raw samples and code mappings (perf.data) */
	__u64 sample_bytes;		/* --sample-bytes (the model notes it; 0: no stacks) */
	bool stop_on_map;		/* run: BPF holds targets at new code until probed */
	bool bpf_stats;			/* read the programs' run-time statistics at the end */
	struct bpf_object *side;	/* programs loaded from a second object (or NULL) */
	struct recorder *rec;		/* --record: every input written here too (or NULL) */
	struct userfs *fs;		/* the invoking user: may they read a mapped file? */
	/* cause rules: the built-in data/causes.rules for this preset, plus these files (their
	 * names and the texts read from them) */
	const char *preset;		/* NULL: none */
	const char *const *cause_files, *const *cause_texts;
	unsigned int ncause_files;
	const char *const *allocators;	/* more allocator frame patterns */
	unsigned int nallocators;
	struct collector_hooks hooks;
};

/* After the skeleton is loaded and attached; m is all zero bytes (calloc) or a model begun
 * before. NULL on error (errno set, one line said). */
struct collector *collector__new(struct memphase_bpf *skel, struct model *m,
				 const struct collector_opts *o);
void collector__free(struct collector *c);

/* run: the model starts with the command (pid, argv), its executable probed. -errno. */
int collector__begin_run(struct collector *c, pid_t pid, char *const argv[], const char *exe);
/*
 * attach: the model starts with the process as it is (argv, comm, RSS), in phase 0 named
 * COLLECTOR_ATTACHED_PHASE unless at_start (watch caught it at its exec). -errno.
 */
int collector__begin_attach(struct collector *c, pid_t pid, bool at_start);
/* Observation starts now (the target runs, or is watched). */
void collector__started(struct collector *c);
/*
 * Waits up to timeout_ms for events and applies them, then what is due: counters every
 * COLLECTOR_TICK_NS, mapping names every COLLECTOR_NAMES_NS, system memory every
 * COLLECTOR_SYSMEM_NS, the marker notice after 1 s. 0 or -errno (reported).
 */
int collector__poll(struct collector *c, int timeout_ms);
/* The root process has exited (attach). */
bool collector__root_exited(const struct collector *c);
/* The latest system memory reading, or NULL; *seq changes with every new reading. */
const struct sysmem *collector__sysmem(const struct collector *c, unsigned int *seq);
/* The model it writes (to read). */
const struct model *collector__model(const struct collector *c);
/* The RSS history. */
const struct timeline *collector__timeline(const struct collector *c);
/* memphase ended the target itself (the guard): why. */
void collector__stopped_by(struct collector *c, const char *why);
/*
 * The model as things stand, finished at now, for a snapshot of the outputs: counters
 * and samples up to date. A malloc'd shallow copy (free() it, never model__free()), or
 * NULL.
 */
struct model *collector__snapshot(struct collector *c);
/*
 * Stops holding targets at new code and lets go of any that a hold caught: the ring
 * buffer is not read after this.
 */
void collector__release(struct collector *c);
/*
 * The end: everything still in the ring buffer and the maps, mapping names, the stack
 * profile, the root's wait status (run: reaped, status as wait(2) gave it), unmatched
 * markers; the model is finished.
 */
void collector__finish(struct collector *c, bool reaped, int wait_status);
/*
 * --record-keep: the recording's current segment ends (the code mappings, the counters,
 * the mapping counters, its end time; flushed) and rec (NULL: none) takes the records from
 * here on, starting with everything a replay needs to read it on its own: the run's
 * beginning and set-up, the process table, the timeline's state, the mapping origins, the
 * counters and mapping counters as they are now.
 */
void collector__segment_end(struct collector *c);
void collector__segment_begin(struct collector *c, struct recorder *rec);

/*
 * Replay (collect/replay.c feeds a recording back): a collector without BPF or /proc,
 * whose inputs come from the records; each is applied to the model by the code the live
 * collector applies it with, so the model (and every output) comes out the same.
 */
struct collector *collector__new_replay(struct model *m, bool keep_raw,
					const struct collector_hooks *hooks);
int collector__replay_begin(struct collector *c, __u32 pid, __u64 init_ns, __u64 wall_ns,
			    char names[][PHASE_NAME_MAX], unsigned int nphases, char *const argv[]);
void collector__replay_started(struct collector *c, __u64 ts_ns);
void collector__replay_event(struct collector *c, const struct mp_event *e);
int collector__replay_sample(struct collector *c, const struct stacks_sample *s);
int collector__replay_origin(struct collector *c, const struct stacks_sample *s);
void collector__replay_alloc(struct collector *c, const struct mp_alloc_event *e);
void collector__replay_room(struct collector *c, bool cg_known, __s64 cg, bool sys_known,
			    __s64 sys);
void collector__replay_vram(struct collector *c, __u64 ts_ns, __u32 phase,
			    const struct model_gpu_device *dev, unsigned int n);
void collector__replay_alloc_probes(struct collector *c, unsigned int n);
void collector__replay_nvml(struct collector *c, bool loaded, const char *why);
/* Requests' phases and the cause rules (built in, the preset's, the run's files' text). */
int collector__replay_setup(struct collector *c, int request_phase, __u32 idle, __u32 end,
			    __u32 lead, bool by_marker, const char *preset,
			    const char *const *allocators, unsigned int nallocators,
			    const char *const *names, const char *const *texts, unsigned int nfiles);
void collector__replay_stats(struct collector *c, unsigned int id,
			     const struct mp_phase_stats *st);
void collector__replay_rss(struct collector *c, __u32 pid, const __s64 rss[MP_NR_CLASSES],
			   const __s64 peak[MP_NR_CLASSES], __s64 peak_total, __u64 peak_ns,
			   const __s64 peak_rss[MP_NR_CLASSES]);
/* d: REC_DROPS_N counters, in the order of collect/record.h */
void collector__replay_drops(struct collector *c, const __u64 *d);
void collector__replay_tick(struct collector *c, __u64 now_ns);
void collector__replay_forget(struct collector *c, __u32 pid);
void collector__replay_mappings_clear(struct collector *c);
void collector__replay_mapping(struct collector *c, unsigned int phase,
			       const struct model_mapping *mm);
void collector__replay_sysmem(struct collector *c, const struct sysmem *sm, __u64 ts_ns);
void collector__replay_mark(struct collector *c, __u64 ts_ns, __u32 kind, __u32 pid,
			    const char *text);
void collector__replay_oom_info(struct collector *c, const struct model_oom *info);
void collector__replay_markers(struct collector *c, unsigned int n);
void collector__replay_root_comm(struct collector *c, const char *comm);
void collector__replay_unmatched(struct collector *c, const struct model_unmatched *u);
int collector__replay_profile_proc(struct collector *c, bool first, __u32 pid,
				   const char *comm);
int collector__replay_profile_map(struct collector *c, __u32 pid, __u64 start, __u64 end,
				  __u64 pgoff, const char *path, const unsigned char *build_id,
				  int build_id_len);
void collector__replay_profile_end(struct collector *c);
void collector__replay_bpf_stats(struct collector *c, const struct model_bpf_stats *st);
void collector__replay_root_status(struct collector *c, int wait_status);
void collector__replay_finish(struct collector *c, __u64 end_ns);
/* A rotated segment's REC_CARRY: the timeline's state where the segment starts. */
struct collector_carry {
	__u32 cur_phase, focus_pid, req_last_phase;
	bool root_phased;
	__u64 phase_since_ns, relabel_since_ns;
	unsigned int norder;
	__u32 order[MP_MAX_PHASES];
	__u64 time_ns[MP_MAX_PHASES];
	struct model_ivl moved_in[MP_MAX_PHASES], moved_out[MP_MAX_PHASES];
	struct model_ivl relabel_acc[MP_MAX_PHASES];
};
void collector__replay_carry(struct collector *c, const struct collector_carry *k);
/*
 * A window of the run (report --from/--to/--phase): open notes the counters where the
 * window starts; close makes the model say what happened between from and to (counters
 * as differences, phase times, intervals, marks, memory readings and OOM kills inside)
 * and, with phase >= 0, in that phase alone.
 */
void collector__replay_window_open(struct collector *c);
void collector__replay_window_close(struct collector *c, __u64 from_ns, __u64 to_ns, int phase);

#endif
