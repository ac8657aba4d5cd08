/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The recording (--record FILE): the collector's inputs, as it resolved them, written as
 * typed records (lib/recfile.h) while the run goes, so that `memphase report` can feed
 * them through the same collector code again (collect/replay.h) and get the same model:
 *
 * - every ring-buffer event as BPF sent it (phase changes, forks, execs, exits, OOM kills,
 *   guard stops), stack samples as the collector symbolized them (comm, frames, and the
 *   raw addresses with the sampled processes' code mappings and build ids at the end);
 * - the per-phase counters, per-process RSS and peaks and drop counters after each read
 *   of the BPF maps (only what changed since the last record), the named mapping counters
 *   (when they changed), the ticks that add to the RSS timeline, reaped processes;
 * - system and cgroup memory and PSI readings, OOM forensics, markers attached, why
 *   memphase stopped the target, unmatched markers, the root's exit status and the end.
 *
 * New kinds of data are new record types: older readers skip them and count them.
 */
#ifndef __MP_RECORD_H
#define __MP_RECORD_H

#include <stdbool.h>
#include <linux/types.h>
#include "lib/headroom.h"
#include "model/model.h"

struct stacks_sample;
struct recorder;

/* Record types (never renumbered; a new kind of data takes the next number). */
enum rec_type {
	REC_BEGIN = 1,		/* root pid, mode, init time, phase names, argv, wall clock */
	REC_STARTED = 2,	/* observation starts: time */
	REC_EVENT = 3,		/* one struct mp_event as BPF sent it */
	REC_STRING = 4,		/* id, string: what samples and mappings refer to */
	REC_SAMPLE = 5,		/* one symbolized stack sample (with raw addresses) */
	REC_STATS = 6,		/* a phase's counters (struct mp_phase_stats), summed */
	REC_RSS = 7,		/* a process's RSS and peaks */
	REC_DROPS = 8,		/* lost events, drop counters */
	REC_TICK = 9,		/* a collector tick: the RSS timeline takes a sample */
	REC_FORGET = 10,	/* a process was reaped */
	REC_MAPPINGS = 11,	/* every mapping counter, named (replaces the last set) */
	REC_SYSMEM = 12,	/* MemAvailable, swap, cgroup, PSI */
	REC_OOM_INFO = 13,	/* what the collector found out about the last OOM kill */
	REC_MARKERS = 14,	/* marker uprobes attached so far */
	REC_ROOT_COMM = 15,	/* attach: the root's comm */
	REC_STOP_REASON = 16,	/* memphase ended the target itself: why */
	REC_UNMATCHED = 17,	/* a --phase marker that never attached */
	REC_PROFILE = 18,	/* sampled processes and their code mappings (build ids) */
	REC_BPF_STATS = 19,	/* the programs' run time */
	REC_ROOT_STATUS = 20,	/* run: the root's wait status */
	REC_FINISH = 21,	/* the end of the run: time */
	REC_MARK = 22,		/* a mark of the run: a library loaded, a guard action */
	REC_ORIGIN = 23,	/* a mapping's creation with its symbolized stack */
	REC_ALLOC = 24,		/* one struct mp_alloc_event (MP_EV_ALLOC, MP_EV_FREE) */
	REC_ROOM = 25,		/* the room before an OOM kill, read at a request boundary */
	REC_VRAM = 26,		/* one NVML reading */
	REC_SETUP = 27,		/* requests' phases, cause rules (preset, files' text) */
	REC_CARRY = 28,		/* a rotated segment's start: the timeline state so far */
	REC_ENGINE = 29,	/* the engine's settings and its build's flags */
	REC_NR_TYPES
};

/* counters of a REC_DROPS record (older recordings: the first six) */
#define REC_DROPS_N	12

#define REC_MODE_RUN	1
#define REC_MODE_ATTACH	2

struct recorder_opts {
	int fd;				/* the file, opened for writing (stays the caller's) */
	__u64 max_bytes;		/* --record-max (0: no bound; rotated segments: 0) */
};

/* Writes the file header. NULL + errno. */
struct recorder *recorder__new(const struct recorder_opts *o);
/* Flushes; the fd stays open. 0 or the first write error (-errno). */
int recorder__free(struct recorder *r);
/* Writes the pending records when the last chunk is older than 1 s. */
void recorder__poll(struct recorder *r, __u64 now_ns);
int recorder__flush(struct recorder *r);
__u64 recorder__bytes(const struct recorder *r);
/* Records not written because of --record-max (RSS ticks and counters thinned). */
__u64 recorder__thinned(const struct recorder *r);

void recorder__begin(struct recorder *r, const struct model *m, int mode);
void recorder__started(struct recorder *r, __u64 ts_ns);
void recorder__event(struct recorder *r, const void *data, __u32 len);
void recorder__sample(struct recorder *r, const struct stacks_sample *s);
/* A mapping origin (MP_EV_ORIGIN) as the collector symbolized it. */
void recorder__origin(struct recorder *r, const struct stacks_sample *s);
/* An allocation probe's event, as BPF sent it. */
void recorder__alloc(struct recorder *r, const void *data, __u32 len);
/* The counters, RSS, peaks and drops of m that changed since the last call. */
void recorder__counters(struct recorder *r, const struct model *m);
/* The same, never thinned out by --record-max (the end, an OOM kill). */
void recorder__counters_all(struct recorder *r, const struct model *m);
void recorder__tick(struct recorder *r, const struct model *m, __u64 now_ns);
/* Processes reaped since the last call. */
void recorder__forgotten(struct recorder *r, const struct model *m);
/* One pass over the mapping counters: begin, each one offered, end. */
void recorder__mappings_begin(struct recorder *r);
void recorder__mapping(struct recorder *r, unsigned int phase, const struct model_mapping *mm);
void recorder__mappings_end(struct recorder *r);
void recorder__sysmem(struct recorder *r, const struct sysmem *sm, __u64 ts_ns);
void recorder__mark(struct recorder *r, __u64 ts_ns, __u32 kind, __u32 pid, const char *text);
void recorder__oom_info(struct recorder *r, const struct model_oom *o);
void recorder__markers(struct recorder *r, unsigned int n, unsigned int alloc_probes);
/* The engine's settings (as read, with their sources) and its build's flags. */
void recorder__engine(struct recorder *r, const struct model_engine *e);
/* After recorder__begin(): which phases make requests, and the cause rules' sources (each
 * file's name and the text the run read from it). */
void recorder__setup(struct recorder *r, const struct model *m, const char *preset,
		     const char *const *allocators, unsigned int nallocators,
		     const char *const *cause_files, const char *const *cause_texts,
		     unsigned int ncause_files);
/* The room before an OOM kill, read afresh at a request boundary. */
void recorder__room(struct recorder *r, __u64 ts_ns, bool cg_known, __s64 cg, bool sys_known,
		    __s64 sys);
/* One NVML reading for the phase. */
void recorder__vram(struct recorder *r, __u64 ts_ns, __u32 phase,
		    const struct model_gpu_device *dev, unsigned int n);
void recorder__root_comm(struct recorder *r, __u32 pid, const char *comm);
void recorder__stop_reason(struct recorder *r, const char *why);
void recorder__unmatched(struct recorder *r, const struct model_unmatched *u);
void recorder__profile(struct recorder *r, const struct profile *p);
void recorder__bpf_stats(struct recorder *r, const struct model_bpf_stats *st);
void recorder__root_status(struct recorder *r, bool reaped, int wait_status);
void recorder__finish(struct recorder *r, __u64 end_ns);
/*
 * A rotated segment starts with what the replay cannot learn from its own records: the
 * phase the timeline is in and since when, time per phase, the order phases were entered
 * and what relabels moved so far (REC_CARRY), then every mapping origin of the model.
 */
void recorder__carry(struct recorder *r, const struct model *m);
void recorder__origins(struct recorder *r, const struct origins *o);

#endif
