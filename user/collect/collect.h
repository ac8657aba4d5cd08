/* SPDX-License-Identifier: GPL-2.0 */
/* BPF maps -> model. */
#ifndef __MP_COLLECT_H
#define __MP_COLLECT_H

#include "model/model.h"

struct memphase_bpf;
struct bpf_object;
struct phases;

/* What the BPF side is configured with before it is loaded. */
struct collect_config {
	int stack_mode;			/* enum mp_stack_mode */
	__u64 sample_bytes;		/* one stack sample per this much of a thread's growth */
	__u64 max_samples;		/* per second, all threads (0: no cap) */
	bool mappings;			/* charge growth to mappings */
	__u64 max_rss;			/* the guard's RSS limit (0: off) */
	unsigned int ringbuf_kib;
	__u64 origin_min;		/* mappings this large get their origin (0: none) */
	bool attach;			/* to a running process (its sizes are read first) */
};

#define COLLECT_ORIGINS_SMALL_PER_SEC	64	/* origins of smaller mappings: at most */
#define COLLECT_ORIGINS_SMALL_MAX	4096	/* ... per second, and in all */

/* Fills the read-only config and sizes the ring buffer (after open, before load). -errno
 * after one line on stderr. */
int collect__configure(struct memphase_bpf *skel, const struct phases *ph,
		       const struct collect_config *cc);
struct stacks;

/*
 * Mapping growth the BPF side sent in threads' batches (MP_EV_MAPLOG events), summed per
 * key until collect__mappings() adds it to the mappings' counters.
 */
struct collect_maplog;
struct collect_maplog *collect__maplog_new(void);
void collect__maplog_free(struct collect_maplog *ml);
/* Adds one MP_EV_MAPLOG record of len bytes: 0, -EINVAL (malformed) or -ENOMEM. */
int collect__maplog_add(struct collect_maplog *ml, const void *data, size_t len);
/* The growth ml holds for key, and (*full) how many entries it kept under their class's
 * [unknown] for want of room. */
__u64 collect__maplog_bytes(struct collect_maplog *ml, const struct mp_map_key *key,
			   __u64 *full);

/* Reads per-phase counters (summed over CPUs), address-space RSS and drop counters (ml:
 * the batches' own, NULL: none). */
int collect__maps(struct memphase_bpf *skel, struct collect_maplog *ml, struct model *m);
struct strmap;
/*
 * Reads the per-mapping growth counters into the model's top lists. File paths are
 * found in /proc/PID/maps by device and inode and cached in paths ("dev:ino" -> path),
 * so a mapping seen once keeps its name after its process exits.
 */
struct recorder;
struct userfs;
/* Each mapping offered to the model is recorded too (rec NULL: not). */
/* The mapping counters cleared before a new pass (origins' growth too). */
void collect__mappings_clear(struct model *m);
/* A mapping of the pass tells its origin (id mm->origin, 0: none) its path and growth. */
void collect__mapping_origin(struct model *m, const struct model_mapping *mm);
/* fs: the invoking user, as whom the processes' maps are read for the names (NULL: root) */
int collect__mappings(struct memphase_bpf *skel, struct collect_maplog *ml, struct model *m,
		      struct strmap *paths, struct userfs *fs, struct recorder *rec);
/* The path learned for a file (kernel dev_t numbering, inode). 0 or -ENOENT. */
int collect__file_name(const struct strmap *paths, __u64 dev, __u64 ino, char *buf,
		       size_t size);
/* Learns one file's name (an executable the kernel mapped at exec); it is looked at
 * through path (e.g. /proc/PID/exe). */
void collect__learn_file(struct strmap *paths, const char *path, const char *name);
/* Learns the paths of every file pid maps (after a MP_EV_FILE_MAP, at attach), its maps
 * read as the user fs is (NULL: root). */
void collect__learn_paths(struct strmap *paths, struct userfs *fs, __u32 pid);
/*
 * Removes processes that exited more than 1 s before now_ns from the BPF target set and
 * their address spaces from the map (their last numbers are in the model by then), and
 * has st (NULL: no stacks) forget their snapshots, so long runs that fork often neither
 * fill the maps nor grow memphase. Returns how many were removed.
 */
/*
 * A process ended: the pinned and managed memory it still held went with it. Removes its
 * entries from the BPF allocation table and frees them in the model, in phase (its phase
 * at the exit). Returns how many, or -errno.
 */
int collect__allocs_exit(struct memphase_bpf *skel, struct model *m, __u32 pid, __u32 phase,
			 struct recorder *rec);
int collect__reap(struct memphase_bpf *skel, struct model *m, struct stacks *st, __u64 now_ns);
/*
 * Reads every loaded program's run count and run time (bpf_obj_get_info_by_fd; the
 * kernel counts the time only while BPF_STATS_RUN_TIME is enabled) into m->bpf_stats:
 * skel's, or those of one of others[n] (NULL entries allowed: the objects that loaded
 * some of skel's programs instead, loader.h). Returns 0, or the last -errno of a program
 * it could not read (the others are kept).
 */
int collect__bpf_stats(struct memphase_bpf *skel, struct bpf_object *const *others,
		       unsigned int n, struct model *m);
/*
 * Has every thread send the mapping growth it still holds (the flush_threads iterator; from
 * side, NULL: none, if it was loaded there), before the last read of the mappings. 0,
 * -ENOENT (not loaded: no mapping tracking) or -errno.
 */
int collect__flush_threads(struct memphase_bpf *skel, struct bpf_object *side);
/*
 * Attach: after collect__add_target(tgid, MP_T_SEEDING), reads the exact sizes of tgid's
 * address space into its entry and lets its events count (the seed_attach iterator; from
 * side if it was loaded there). 0; or, when it could not be seeded, the target is re-added
 * without the flag (its first event of each class is then its baseline) and -errno
 * (-ESRCH: no task of it has an address space, -ENOENT: not loaded).
 */
int collect__seed_attach(struct memphase_bpf *skel, struct bpf_object *side, __u32 tgid);
/* Adds a process to the BPF target set. */
int collect__add_target(struct memphase_bpf *skel, __u32 tgid, __u32 flags);
/* A full mapping map must still take growth: every phase's "unknown" rows exist. */
void collect__reserve_unknown(struct memphase_bpf *skel, unsigned int nphases);
/* Marks an executable as probed already: its exec does not hold the target. */
void collect__seen_file(struct memphase_bpf *skel, const char *path);
/* Removes a process from the BPF target set. */
void collect__drop_targets(struct memphase_bpf *skel);
void collect__del_target(struct memphase_bpf *skel, __u32 tgid);

#endif
