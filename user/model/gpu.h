/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The GPU side of a run: pinned and managed host memory (the allocation probes' events)
 * per phase, where it was allocated from, and VRAM (NVML readings: each device's total,
 * used and free, and what the observed processes use) per phase and over time. Part of
 * the model (struct model's gpu); pure code.
 */
#ifndef __MP_MODEL_GPU_H
#define __MP_MODEL_GPU_H

#include <stdbool.h>
#include <linux/types.h>
#include "memphase.h"

#define GPU_MAX_DEVICES		8
#define GPU_MAX_ORIGINS		16
#define GPU_ORIGIN_LEN		256
#define GPU_VRAM_HISTORY	64	/* readings kept for the rate (100 ms apart: 6.4 s) */

/* One device as NVML last reported it. */
struct model_gpu_device {
	__u32 index;
	char name[64];
	__u64 total, used, free;	/* bytes, the whole device */
	__u64 target_used;		/* bytes the observed processes hold on it */
};

/* Where pinned or managed memory was allocated from (the callers, innermost first). */
struct model_gpu_origin {
	__u32 cls;			/* enum mp_alloc_cls */
	__u32 phase;
	char where[GPU_ORIGIN_LEN];	/* "caller < its caller < ..." */
	__u64 bytes, calls;
};

struct model_gpu_reading {
	__u64 ts_ns;
	__u64 target_used;		/* over all devices */
	__u64 free;			/* over the devices the target uses (all if none) */
};

struct model_gpu {
	/* pinned and managed host memory, per mp_alloc_cls and phase */
	__u64 alloc_bytes[MP_NR_ALLOC_CLS][MP_MAX_PHASES];
	__u64 free_bytes[MP_NR_ALLOC_CLS][MP_MAX_PHASES];	/* in the phase freed */
	__u64 allocs[MP_NR_ALLOC_CLS][MP_MAX_PHASES];
	__u64 frees[MP_NR_ALLOC_CLS][MP_MAX_PHASES];
	__s64 current[MP_NR_ALLOC_CLS];		/* held now */
	__s64 peak[MP_NR_ALLOC_CLS];
	__u64 unread;				/* returned pointers BPF could not read */
	__u64 allocs_full;			/* calls or pointers BPF had no room for */
	unsigned int probes;			/* allocation probes attached */
	unsigned int norigins;
	struct model_gpu_origin origins[GPU_MAX_ORIGINS];
	__u64 origins_other;			/* bytes of origins that did not fit */

	/* VRAM (NVML) */
	bool nvml;				/* NVML loaded and initialised */
	char nvml_why[160];			/* why not, when not */
	unsigned int ndevices;
	struct model_gpu_device dev[GPU_MAX_DEVICES];
	__u64 readings;				/* NVML samples taken */
	__u64 vram;				/* the observed processes' VRAM, last reading */
	__u64 vram_peak;
	bool vram_seen[MP_MAX_PHASES];		/* a reading was taken in the phase */
	__u64 vram_phase_peak[MP_MAX_PHASES];	/* highest reading in the phase */
	__u64 vram_phase_first[MP_MAX_PHASES];	/* first reading in the phase */
	unsigned int nhist, hist_next;		/* ring of recent readings */
	struct model_gpu_reading hist[GPU_VRAM_HISTORY];
};

/* An allocation probe's event (MP_EV_ALLOC or MP_EV_FREE). */
void model_gpu__on_event(struct model_gpu *g, const struct mp_alloc_event *e);
/* The callers of an allocation: adds its bytes to the (cls, phase, where) origin. */
void model_gpu__origin(struct model_gpu *g, __u32 cls, __u32 phase, const char *where,
		       __u64 bytes);
/*
 * One NVML reading at now_ns while phase is current: ndev devices (target_used filled in
 * per device). Fewer than GPU_MAX_DEVICES are kept.
 */
void model_gpu__reading(struct model_gpu *g, __u32 phase, __u64 now_ns,
			const struct model_gpu_device *dev, unsigned int ndev);
/*
 * The observed processes' VRAM growth rate (bytes/s, signed) over the readings of the
 * last window_s seconds up to now_ns; false with fewer than two readings in it.
 */
bool model_gpu__vram_rate(const struct model_gpu *g, __u64 now_ns, double window_s,
			  double *rate);
/*
 * A report's window opens: what was allocated, freed and read so far is not counted (the
 * memory held stays, and is the peak so far); closes: origins with nothing in the window
 * are dropped, and with phase >= 0 everything of the other phases.
 */
void model_gpu__window_open(struct model_gpu *g);
void model_gpu__window_close(struct model_gpu *g, int phase);
/* The last reading, or NULL. */
const struct model_gpu_reading *model_gpu__last(const struct model_gpu *g);
/* Was anything GPU seen (probes attached, NVML loaded)? */
static inline bool model_gpu__any(const struct model_gpu *g)
{
	return g->probes || g->nvml;
}

static inline const char *mp_alloc_cls_name(__u32 c)
{
	return c == MP_ALLOC_PINNED ? "pinned" : c == MP_ALLOC_MANAGED ? "managed" : "?";
}

#endif
