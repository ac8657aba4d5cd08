/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model: what memphase knows about a run, fed by the collector and read by the
 * views. Pure code: no BPF, no output formats.
 */
#ifndef __MP_MODEL_H
#define __MP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "memphase.h"
#include "lib/phasespec.h"
#include "model/history.h"
#include "model/engine.h"
#include "model/gpu.h"
#include "model/profile.h"
#include "model/origins.h"
#include "lib/causerules.h"
#include "lib/linfit.h"

#define MODEL_MAX_PROCS	4096
#define MODEL_MAX_OOMS	32
#define MODEL_TOP_MAPPINGS 10
#define MODEL_MAX_UNMATCHED 32
#define MODEL_PATH_MAX	4096	/* PATH_MAX: a path d_path() gives fits */
#define MODEL_MAX_PROGS	32	/* BPF programs in the skeleton (14 today) */

/* A mapping's share of a phase's growth in one class. */
struct model_mapping {
	/* the exact file path (see procmaps.h), or [heap], [stack], [anon 0x...], ... */
	char path[MODEL_PATH_MAX];
	bool deleted;		/* the file was deleted (or never had a name: memfd, SysV) */
	__u32 cls;		/* enum mp_class */
	__u32 kind;		/* enum mp_map_kind */
	__u64 bytes;
	/*
	 * Address range of the mapping's VMA last seen by a fault (BPF's mp_map_val): for an
	 * anon mapping the one the key names; for files, shmem, devices, the heap and stacks
	 * (one key, maybe many VMAs: a file mapped twice, every thread's stack) the last one;
	 * 0 and 0 for growth without a VMA (kind unknown).
	 */
	__u64 start, size;
	/* who created it: 1 + index in the model's origins, 0 if unknown (model/origins.h) */
	__u32 origin;
};

#define MODEL_MAX_REQUESTS 1024

/*
 * One request: a pass through the request phase (prompt) and what follows it until the next.
 * Growth is net: the process's RSS at the request's end minus at its start (what it kept).
 */
struct model_request {
	__u64 start_ns, end_ns;		/* end_ns 0: still open */
	__u32 pid;			/* the process it ran in */
	__s64 rss_start[MP_NR_CLASSES];
	__s64 rss_end[MP_NR_CLASSES];	/* latest while open */
	__s64 phase_growth[MP_MAX_PHASES];	/* net change (file+anon+shmem) in each phase */
	__u64 prompt_tokens;		/* from the decode batches */
	__u64 gen_tokens;
	/* pinned and managed host memory (mp_alloc_cls) the process allocated and freed in it */
	__u64 gpu_alloc[MP_NR_ALLOC_CLS], gpu_freed[MP_NR_ALLOC_CLS];
	/* the observed processes' VRAM at the first NVML reading from its start, and from its
	 * end (while open: the last reading) */
	bool vram_seen;
	__u64 vram_start, vram_end;
	bool passed;			/* entered a non-idle phase: the next prompt ends it */
	bool oom;			/* the OOM kill ended it */
	/* the projection at its end, from the requests so far: requests until the room is gone
	 * (-1: not growing, -2: unknown room) */
	long left_cgroup, left_system;
};

#define MODEL_MAX_COPY		(1ULL << 40)	/* a recorded copy's size, at most */
#define MODEL_MAX_SLOTS		64	/* sequences (server slots) whose positions are kept */

/*
 * What the engine's context costs per token. Where the decodes carry their tokens'
 * positions (a llama_batch with pos and seq_id: the server's slots), a context is a slot's:
 * the fit takes RSS each time the longest slot reaches further, so unrelated prompts in
 * turn do not add up. Without positions (llama_batch_get_one: one sequence), over the
 * tokens decoded.
 */
struct model_context {
	__u64 n_ctx;			/* as created (0: not seen) */
	__u64 tokens_seen;		/* tokens decoded (prompt + generated, warm-up excluded) */
	struct linfit_acc fit;		/* RSS (file+anon+shmem) over the context's length */
	__u64 first_ns;			/* the first decode with tokens (0: none yet) */
	__u32 pid;			/* its process */
	bool by_pos;			/* the decodes carried positions */
	__u32 slots;			/* slots seen (a bit each, seq ids < MODEL_MAX_SLOTS) */
	__u64 slots_mask;
	__u32 slot_pos[MODEL_MAX_SLOTS];	/* how far each slot reached (positions + 1) */
	__u64 longest;			/* the furthest any slot reached */
	__u64 rise_ns;			/* when (the fit's last point) */
	__u32 longest_slot;
};

#define MODEL_MAX_RELABELS	4	/* a preset's relabels */
#define MODEL_MAX_RELABELED	64	/* relabel points kept (samples arriving late) */

/*
 * A preset's relabel (collect/presets.h): entering phase `at` shows that what the timeline's
 * process did since it last entered `at` (or since the start) in phase p was phase to[p] - 1
 * (to[p] == 0: p stays p).
 */
struct model_relabel {
	__u32 at;
	__u8 to[MP_MAX_PHASES];
};

/* What intervals counted (from the phase events: BPF's per-interval counts). */
struct model_ivl {
	__u64 growth[MP_NR_CLASSES];
	__u64 shrink[MP_NR_CLASSES];
	__u64 faults, entries, calls;
	__u64 map[MP_NR_IVL_MAP];	/* mmap, munmap, brk, brk shrink bytes */
};

/* One relabel that happened: [from_ns, to_ns] of pid, by relabels[k]. */
struct model_relabeled {
	__u64 from_ns, to_ns;
	__u32 pid, k;
};

/* A --phase marker that never attached, and why. */
struct model_unmatched {
	char phase[PHASE_NAME_MAX];
	char binary[PHASE_BIN_MAX];
	char symbol[PHASE_SYM_MAX];
	char reason[160];
};

/* One BPF program's run-time statistics (--bpf-stats: the kernel's BPF_STATS_RUN_TIME). */
struct model_prog_stats {
	char name[64];		/* bpf_program__name(): the program's function name */
	__u64 runs;
	__u64 run_time_ns;
};

/* memphase's own BPF cost, read once at the end of a --bpf-stats run. */
struct model_bpf_stats {
	bool have;		/* collected: --bpf-stats was given */
	unsigned int nprogs;	/* loaded programs, in the skeleton's order */
	struct model_prog_stats progs[MODEL_MAX_PROGS];
};

struct model_proc {
	__u32 pid;
	__u32 parent;		/* 0 for the root */
	char comm[MP_COMM_LEN];
	bool exited;
	bool oom_killed;
	int exit_code;		/* -1 unknown */
	int exit_signal;	/* 0 none */
	__u64 exit_ns;
	bool forgotten;		/* its BPF map entries were removed after its exit */
	__u32 left;		/* MP_LEFT_* bits: no longer followed (it runs on, unseen) */
	__u64 left_ns;
	char left_path[64];	/* the program whose exec it left at ("" for none) */
	__s64 rss[MP_NR_CLASSES];	/* latest, bytes */
	__s64 peak[MP_NR_CLASSES];
	__s64 peak_total;		/* file + anon + shmem */
	/* the latest new high of an address space of it that ended between two readings:
	 * when (0: none) and its classes then (the timeline's point for it) */
	__u64 peak_ns;
	__s64 peak_rss[MP_NR_CLASSES];
};

/* Is the process still followed (neither ended nor out of the invoking user's reach)? */
static inline bool model_proc__followed(const struct model_proc *p)
{
	return !p->exited && !p->left;
}

/* When it stopped being followed (its exit, or its leaving), 0: it is followed. */
static inline __u64 model_proc__end_ns(const struct model_proc *p)
{
	return p->exited ? p->exit_ns : p->left ? p->left_ns : 0;
}

struct model_oom {
	__u32 pid;
	__u32 phase;
	char comm[MP_COMM_LEN];
	__u64 ts_ns;
	__u64 rss[MP_NR_CLASSES];	/* at the kill (anon, file, shmem) */
	/* filled in by the session when it can tell */
	int cgroup_oom;			/* 1 memory cgroup limit, 0 system, -1 unknown */
	char cgroup[256];		/* the limited cgroup, if any */
	__u64 cgroup_limit;
	double window_s;		/* growth over this many seconds before the kill */
	bool have_window;
	__u64 before[MP_MAX_PHASES][MP_NR_CLASSES];
};

struct model {
	/* phases: ids index names[] and stats[] */
	unsigned int nphases;
	char names[MP_MAX_PHASES][PHASE_NAME_MAX];
	struct mp_phase_stats stats[MP_MAX_PHASES];	/* summed over CPUs, as shown */
	/* as BPF counted them (stats less the relabels; what a recording keeps) */
	struct mp_phase_stats counted[MP_MAX_PHASES];
	__u64 time_ns[MP_MAX_PHASES];		/* root process time in each phase */
	/* the mappings that grew most, per phase, largest first */
	unsigned int ntop[MP_MAX_PHASES];
	struct model_mapping top[MP_MAX_PHASES][MODEL_TOP_MAPPINGS];
	unsigned int nmappings[MP_MAX_PHASES];	/* all mappings offered, and their bytes */
	__u64 mapping_bytes[MP_MAX_PHASES];
	__u64 mapping_lost_bytes;		/* growth no mapping entry could hold */
	__u64 vma_busy;				/* growth events left [unknown] (see mp_drops) */
	__u64 vma_deferred;			/* faults looked up later: address space locked */
	__u64 mappings_full;			/* growth events kept under [unknown]: table full */
	__u64 stacks_capped;			/* samples postponed by the rate cap */
	__u64 unwind_failures;			/* samples with no frame past the first */
	/* memory pressure per phase: the system's PSI stall time while in the phase */
	bool have_psi;
	__u64 psi_some_us[MP_MAX_PHASES];
	__u64 psi_full_us[MP_MAX_PHASES];
	/* why memphase ended the target itself (--max-rss, --min-available), "" if not */
	char stop_reason[256];
	/* stack samples per phase: how many, and the bytes they carry */
	__u64 samples[MP_MAX_PHASES];
	__u64 sampled_bytes[MP_MAX_PHASES];
	__u64 sample_bytes;		/* --sample-bytes: one sample per this much of a
					 * thread's growth (0: unknown, an older recording) */
	unsigned int order[MP_MAX_PHASES];	/* ids in the order first entered */
	unsigned int norder;

	/* the phase timeline: the root's, or a phased child's under a wrapper root */
	__u32 root_pid;
	__u32 focus_pid;		/* whose phases the timeline follows */
	bool root_phased;		/* the root has entered a phase itself */
	__u32 cur_phase;
	__u64 phase_since_ns;
	__u64 start_ns, end_ns;		/* CLOCK_MONOTONIC */
	__u64 start_wall_ns;		/* CLOCK_REALTIME at start_ns (0: unknown) */
	bool finished;
	bool window;		/* a report's --from/--to window of a recording */

	/* what was run */
	char **argv;			/* NULL-terminated, owned */
	unsigned int nprocs;
	/*
	 * The observed processes' peak together: the most their RSS summed to at a reading
	 * (every collector tick and the end), and never below one process's own exact peak.
	 * Per class and total (file + anon + shmem). What the summary, the JSON, the live
	 * view and the causes' shares call the peak; the largest process's is beside it.
	 */
	__s64 tree_peak[MP_NR_CLASSES];
	__s64 tree_peak_total;
	unsigned int procs_recycled;	/* records reused for later processes */
	struct model_proc procs[MODEL_MAX_PROCS];
	unsigned int nooms;
	struct model_oom ooms[MODEL_MAX_OOMS];

	/* health */
	__u64 lost_kernel;		/* ring buffer drops, full BPF maps */
	__u64 lost_model;		/* records the model had no room for */
	__u64 lost_stacks;
	/* symbolized stack samples (the collector's stacks module fills it) */
	struct profile profile;
	unsigned int markers_attached;
	unsigned int nunmatched;
	struct model_unmatched unmatched[MODEL_MAX_UNMATCHED];

	/* who created each mapping, and the rules that name what grew (model/causes.h) */
	struct origins origins;
	struct causerules rules;
	__u64 origins_lost;		/* origins dropped (ring buffer full) */
	__u64 origins_capped;		/* smaller mappings past the origin caps */
	__u64 origins_same;		/* ranges mapped again within a second, not resent */
	/* pinned and managed host memory, VRAM */
	struct model_gpu gpu;
	/* the engine's settings and its build's flags (model/engine.h) */
	struct model_engine engine;
	/* what the markers' calls said they copy (MP_REC_BYTES), per the phase they enter:
	 * one context checkpoint's, one cached prompt's size (under MODEL_MAX_COPY) */
	__u64 rec_bytes[MP_MAX_PHASES], rec_calls[MP_MAX_PHASES], rec_max[MP_MAX_PHASES];

	/* memphase's own cost (--bpf-stats) */
	struct model_bpf_stats bpf_stats;

	/* the run over time: phase intervals and changes, marks, memory readings */
	struct history history;
	/* requests of the timeline's process (which phases: model__set_requests) */
	int request_phase;		/* the prompt phase: starts requests (-1: none) */
	bool request_by_marker;		/* --request: requests start at its calls instead */
	__u32 request_idle_mask, request_end_mask, request_lead_mask;
	/* a lead phase entered since the open request passed: where the next one starts */
	bool lead;
	__u64 lead_ns;
	__s64 lead_rss[MP_NR_CLASSES];
	__s64 lead_growth[MP_MAX_PHASES];
	__u64 lead_alloc[MP_NR_ALLOC_CLS], lead_freed[MP_NR_ALLOC_CLS];
	unsigned int req_vram_pending;	/* 1 + the request closed since the last NVML reading */
	unsigned int nrequests;
	__u64 requests_dropped;		/* beyond MODEL_MAX_REQUESTS */
	struct model_request requests[MODEL_MAX_REQUESTS];
	__u32 req_last_phase;		/* phase of the last event, and the RSS it carried */
	__s64 req_last_rss[MP_NR_CLASSES];
	bool req_have_rss;
	struct model_context context;
	/* relabels: the rules, what was counted since the last point, what moved where */
	unsigned int nrelabels;
	struct model_relabel relabels[MODEL_MAX_RELABELS];
	struct model_ivl relabel_acc[MP_MAX_PHASES];
	__u64 relabel_since_ns;
	struct model_ivl moved_in[MP_MAX_PHASES], moved_out[MP_MAX_PHASES];
	unsigned int nrelabeled;
	struct model_relabeled relabeled[MODEL_MAX_RELABELED];
	__u64 relabel_intervals;	/* intervals shown as another phase */
	__u64 relabels_dropped;		/* relabel points past MODEL_MAX_RELABELED */
	/* room before an OOM kill when last read, and the process's RSS total then */
	bool room_cgroup_known, room_system_known;
	__s64 room_cgroup, room_system, room_rss;
};

/* start_ns: when observation began (CLOCK_MONOTONIC ns). */
void model__init(struct model *m, __u32 root_pid, __u64 start_ns);
/*
 * The same for a model whose memory is still all zero bytes (calloc'd, never initialized):
 * it writes only what is not zero. The model is 2.5 MB; clearing it again touched every
 * page, ~630 first-touch faults (7-9 ms of memphase's start-up on a VM, and as much RSS)
 * for arrays most runs never fill.
 */
void model__init_zeroed(struct model *m, __u32 root_pid, __u64 start_ns);
void model__free(struct model *m);
/* Phase ids and names must match the BPF cookies; id 0 is "startup". */
int model__set_phase_name(struct model *m, unsigned int id, const char *name);
/* Copies argv. */
int model__set_argv(struct model *m, char *const argv[]);

struct model_proc *model__proc(struct model *m, __u32 pid, bool create);
/* Applies one ring-buffer event (phase change, fork, exec, exit, OOM). */
void model__on_event(struct model *m, const struct mp_event *e);
/*
 * A report's window opens: the requests that ended before it, the context's tokens and fit,
 * the room read before it and the GPU's counts are left behind (the open request, n_ctx
 * and the memory held stay).
 */
void model__window_open(struct model *m);
/* An allocation probe's event: the GPU side (model/gpu.h) and the open request's bytes. */
void model__on_alloc(struct model *m, const struct mp_alloc_event *e);
/* One NVML reading (model_gpu__reading), and the VRAM of the requests it starts and ends. */
void model__on_vram(struct model *m, __u32 phase, __u64 now_ns,
		    const struct model_gpu_device *dev, unsigned int ndev);
/* Replaces a phase's counters with a new snapshot (summed over CPUs). */
void model__set_stats(struct model *m, unsigned int id, const struct mp_phase_stats *s);
/* Replaces a process's RSS and peaks (from one of its address spaces). */
void model__set_rss(struct model *m, __u32 pid, const __s64 rss[MP_NR_CLASSES],
		    const __s64 peak[MP_NR_CLASSES], __s64 peak_total);
/* Notes when a process's address space reached a new high and its classes then (BPF's
 * mp_mm peak_ns, peak_rss): kept when later than the one noted. */
void model__note_peak_at(struct model *m, __u32 pid, __u64 ns, const __s64 rss[MP_NR_CLASSES]);
/* The phase the phase timeline was in at ts_ns (the current one past the last change). */
__u32 model__phase_at(const struct model *m, __u64 ts_ns);
/* Raises a process's peaks (never lowers them). */
void model__raise_peaks(struct model *m, __u32 pid, const __s64 peak[MP_NR_CLASSES],
			__s64 peak_total);
/* Offers a mapping's growth for a phase's top list (kept sorted, largest first). */
void model__offer_mapping(struct model *m, unsigned int id, const struct model_mapping *mm);
/* Empties the top lists (before a fresh pass over the mapping counters). */
void model__clear_mappings(struct model *m);
/* Notes a mark of the run (history.h): a library loaded, a guard action. */
void model__add_mark(struct model *m, __u64 ts_ns, __u32 kind, __u32 pid, const char *text);
/* Notes a reading of the system's memory. */
void model__add_mem(struct model *m, const struct history_mem *s);
/* Records a --phase marker that never attached. */
void model__add_unmatched(struct model *m, const char *phase, const char *binary,
			  const char *symbol, const char *reason);
/*
 * Which phase starts a request (unless request_by_marker: the --request marker's calls do),
 * which do not end its pass, which end it, and which, entered last before the request phase,
 * start the request already (tokenizing its prompt). Bits.
 */
void model__set_requests(struct model *m, int request_phase, __u32 idle_mask, __u32 end_mask,
			 __u32 lead_mask);
/*
 * A relabel (struct model_relabel): entering phase `at` makes the intervals of from[i]
 * since `at` was last entered to[i]; -EINVAL for bad ids, -E2BIG past MODEL_MAX_RELABELS.
 */
int model__add_relabel(struct model *m, __u32 at, const __u32 *from, const __u32 *to,
		       unsigned int n);
/* The phase a sample of pid taken at ts_ns in phase shows as (after relabels). */
__u32 model__shown_phase(const struct model *m, __u32 pid, __u64 ts_ns, __u32 phase);
/* The room left before an OOM kill (bytes; known false: no such bound) and RSS then. */
void model__set_room(struct model *m, bool cg_known, __s64 cg_room, bool sys_known,
		     __s64 sys_room);
/* The open request (NULL: none), the one an OOM kill at ts_ns fell in. */
const struct model_request *model__request_at(const struct model *m, __u64 ts_ns);
/*
 * The request (index in requests) that pid's sample taken at ts_ns belongs to, -1 if none:
 * the request of that process open at that time, by the requests' final boundaries.
 */
int model__request_of(const struct model *m, __u32 pid, __u64 ts_ns);
/*
 * The requests the fit runs over (closed, not cut short by an OOM kill, the first left out
 * from three on): their indices in requests, in order, into idx[MODEL_MAX_REQUESTS].
 */
unsigned int model__steady_requests(const struct model *m, unsigned int *idx);
/* Per-request growth fit (lib/linfit) over the closed requests; first: 0-based start. */
struct linfit model__request_fit(const struct model *m, size_t *first, unsigned int *nclosed);
/* Growth per context token from the fit; false when it cannot be told. */
bool model__context_fit(const struct model *m, double *per_token);
/* Closes the open phase interval at now_ns; later calls do nothing. */
void model__finish(struct model *m, __u64 now_ns);
/* Time in phase id up to now_ns (includes the open interval). */
__u64 model__phase_time(const struct model *m, unsigned int id, __u64 now_ns);
/* The root process record (may be NULL before the first event). */
struct model_proc *model__root(struct model *m);
/* The process the run is about: the root, or under a wrapper root that never entered a
 * phase (sh -c, env, a launcher), the observed process with the largest peak. */
struct model_proc *model__main(struct model *m);
/* The observed process holding the most RSS that has not exited (the root if none). */
__u32 model__largest_live(const struct model *m);
/* Everything observed but not kept. */
/* Seconds from the start of the run to ts_ns (0 before it). */
static inline double model__rel_s(const struct model *m, __u64 ts_ns)
{
	return ts_ns > m->start_ns ? (ts_ns - m->start_ns) / 1e9 : 0;
}

/* Raises the tree's peak (struct model's tree_peak) to the processes' RSS now. */
void model__note_tree(struct model *m);
/* What shares "of the peak" are of: the tree's peak, or grown bytes when more (memory
 * freed and grown again, processes one after another), so that no share is above 100%. */
static inline __s64 model__share_base(const struct model *m, __u64 grown)
{
	return (__s64)grown > m->tree_peak_total ? (__s64)grown : m->tree_peak_total;
}

static inline __u64 model__lost_events(const struct model *m)
{
	return m->lost_kernel + m->lost_model;
}
/* Runs and run time summed over the BPF programs. */
static inline void model__bpf_totals(const struct model_bpf_stats *st, __u64 *runs, __u64 *ns)
{
	unsigned int i;

	*runs = *ns = 0;
	for (i = 0; i < st->nprogs; i++) {
		*runs += st->progs[i].runs;
		*ns += st->progs[i].run_time_ns;
	}
}
/* Sum of growth (or shrink) over classes, swap excluded when !with_swap. */
__u64 model__growth_total(const struct mp_phase_stats *s, bool with_swap);
/*
 * Growth (swap excluded) of phase id that no stack sample carries: what the stack views
 * show as "[not sampled]" (a thread's growth short of --sample-bytes when the phase ends).
 */
__u64 model__unsampled(const struct model *m, unsigned int id);

const char *model__kind_name(__u32 kind);

static inline const char *mp_class_name(int c)
{
	static const char *const n[MP_NR_CLASSES] = { "file", "anon", "swap", "shmem" };

	return c >= 0 && c < MP_NR_CLASSES ? n[c] : "?";
}

/* Classes in the order the views print them. */
extern const int mp_class_order[MP_NR_CLASSES];

/* Why a process left the observation (MP_LEFT_* bits), as a phrase ("it ran a setuid
 * program"). */
const char *model__left_reason(__u32 why);

#endif
