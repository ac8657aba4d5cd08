/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RSS over time: a bounded history of samples (time, RSS per class of the observed
 * processes, phase), the smoothed growth rate and the projected time until some
 * headroom is used up. Pure code, unit-tested.
 *
 * Two rings:
 * - recent: the last TIMELINE_RECENT samples as added, for the growth rate;
 * - history: at most `cap` samples covering the whole run. When it is full, pairs of
 *   samples are merged (the later one is kept, a phase change in either is kept), so
 *   it thins out evenly instead of forgetting the beginning. The live view draws its
 *   RSS strip from it.
 *
 * The rate is the least-squares slope of RSS against time over the samples of the last
 * `window_s` seconds: exact for steady growth; a burst of B bytes moves it by at most
 * 1.5 * B / (the span of the samples in the window, about window_s); a shrinking or
 * flat series gives a rate <= 0.
 */
#ifndef __MP_TIMELINE_H
#define __MP_TIMELINE_H

#include <stdbool.h>
#include <linux/types.h>
#include "memphase.h"

struct model;

#define TIMELINE_RECENT		512
#define TIMELINE_CLASS(c)	(1U << (c))
#define TIMELINE_ALL		((1U << MP_NR_CLASSES) - 1)
/* What uses up memory for good: file pages are reclaimable, swapped pages are not. */
#define TIMELINE_UNRECLAIMABLE	(TIMELINE_CLASS(MP_ANON) | TIMELINE_CLASS(MP_SHMEM) | \
				 TIMELINE_CLASS(MP_SWAP))
/* Resident memory: what RSS counts. */
#define TIMELINE_RESIDENT	(TIMELINE_CLASS(MP_ANON) | TIMELINE_CLASS(MP_FILE) | \
				 TIMELINE_CLASS(MP_SHMEM))
/* Below this rate (four pages a second) nothing is projected ... */
#define TIMELINE_MIN_RATE	16384.0
/* ... nor beyond this horizon: a day (18 days at 4 KiB/s is no forecast) */
#define TIMELINE_HORIZON_S	86400.0

#define TIMELINE_PHASE_CHANGED	(1U << 0)	/* the phase changed since the previous sample */
#define TIMELINE_PEAK		(1U << 1)	/* a high reached between two readings */
#define TIMELINE_PEAKS_MAX	64		/* processes' highs added before one reading */

struct timeline_sample {
	__u64 ts_ns;
	__s64 rss[MP_NR_CLASSES];	/* bytes, summed over the observed processes */
	__u32 phase;
	__u32 flags;			/* TIMELINE_PHASE_CHANGED */
};

struct timeline;

/* cap: history samples (>= 16); window_s: rate window (> 0). NULL + errno. */
struct timeline *timeline__new(unsigned int cap, double window_s);
void timeline__free(struct timeline *tl);

/* Adds a sample; ts_ns must not go backwards (older samples are ignored: -EINVAL). */
int timeline__add(struct timeline *tl, __u64 ts_ns, const __s64 rss[MP_NR_CLASSES],
		  __u32 phase);
/* Adds the sum of RSS per class of the model's processes that have not exited. */
int timeline__add_model(struct timeline *tl, const struct model *m, __u64 ts_ns);
/*
 * Before the reading at now_ns: a point (TIMELINE_PEAK) for each high a process reached
 * after the newest sample and by now_ns (model_proc peak_ns), at its time, with that
 * process's classes then and the others' as they are now, in time order; so the history
 * reaches the peaks that came and went between two readings. How many were added.
 */
unsigned int timeline__add_peaks(struct timeline *tl, const struct model *m, __u64 now_ns);

/* Samples in [from_ns, to_ns] of a phase p with to[p] != 0 show phase to[p] - 1. */
void timeline__relabel(struct timeline *tl, __u64 from_ns, __u64 to_ns,
		       const __u8 to[MP_MAX_PHASES]);
/* History: n samples, oldest first (i = 0). NULL when i is out of range. */
unsigned int timeline__len(const struct timeline *tl);
const struct timeline_sample *timeline__at(const struct timeline *tl, unsigned int i);
/* The newest sample, NULL when empty. */
const struct timeline_sample *timeline__last(const struct timeline *tl);
/* Sum of the classes in mask of one sample. */
__s64 timeline__sum(const struct timeline_sample *s, unsigned int classes);

/*
 * Smoothed growth rate (bytes/s, negative when shrinking) of the sum of the classes in
 * mask, over the samples of the window ending at now_ns (later samples are ignored).
 * 0, or -ENODATA when fewer than 3 samples span at least a quarter of the window. A rise
 * that the newest sample has undone (it is below the window's oldest) is no growth: 0 B/s.
 */
int timeline__rate(const struct timeline *tl, unsigned int classes, __u64 now_ns,
		   double *rate);

/*
 * Seconds until headroom bytes are used up at rate bytes/s. 0 on success (0 s when
 * the headroom is already gone), -ERANGE when not growing (rate < TIMELINE_MIN_RATE) or
 * not within TIMELINE_HORIZON_S.
 */
int timeline__time_to(double headroom, double rate, double *secs);

#endif
