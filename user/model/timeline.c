// SPDX-License-Identifier: GPL-2.0
/* RSS over time: history, smoothed growth rate, time-to-exhaustion projection. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "model/model.h"
#include "model/timeline.h"

struct timeline {
	double window_ns;
	/* recent samples, for the rate: a plain ring */
	struct timeline_sample recent[TIMELINE_RECENT];
	unsigned int rhead;		/* next slot to write */
	unsigned int rlen;
	/* history: n samples, each standing for `stride` added ones (the last maybe fewer) */
	struct timeline_sample *hist;
	unsigned int cap, n;
	unsigned int stride;
	unsigned int open;		/* samples merged into hist[n - 1] so far */
	bool have_last;
	struct timeline_sample last;
};

struct timeline *timeline__new(unsigned int cap, double window_s)
{
	struct timeline *tl;

	if (cap < 16 || !(window_s > 0)) {
		errno = EINVAL;
		return NULL;
	}
	tl = calloc(1, sizeof(*tl));
	if (!tl)
		return NULL;
	tl->hist = calloc(cap & ~1U, sizeof(*tl->hist));
	if (!tl->hist) {
		free(tl);
		return NULL;
	}
	tl->cap = cap & ~1U;	/* decimation merges pairs */
	tl->stride = 1;
	tl->window_ns = window_s * 1e9;
	return tl;
}

void timeline__free(struct timeline *tl)
{
	if (!tl)
		return;
	free(tl->hist);
	free(tl);
}

static __s64 resident(const struct timeline_sample *s)
{
	return s->rss[MP_ANON] + s->rss[MP_FILE] + s->rss[MP_SHMEM];
}

/*
 * Halves the history: each pair becomes its later sample, or the earlier one when that is
 * a peak above it (so the run's highs survive the thinning); phase changes kept.
 */
static void decimate(struct timeline *tl)
{
	unsigned int i;

	for (i = 0; i + 1 < tl->n; i += 2) {
		const struct timeline_sample *a = &tl->hist[i], *b = &tl->hist[i + 1];
		struct timeline_sample s = (a->flags & TIMELINE_PEAK) &&
					   resident(a) > resident(b) ? *a : *b;

		s.flags |= a->flags | b->flags;
		if (resident(&s) < resident(a) || resident(&s) < resident(b))
			s.flags &= ~TIMELINE_PEAK;
		tl->hist[i / 2] = s;
	}
	tl->n /= 2;
	tl->stride *= 2;
}

/* A sample into the history, and into the rate's ring unless it is a peak's point (a
 * high between two readings is no reading of the trend). */
static int add_sample(struct timeline *tl, __u64 ts_ns, const __s64 rss[MP_NR_CLASSES],
		      __u32 phase, __u32 flags)
{
	struct timeline_sample s = { .ts_ns = ts_ns, .phase = phase, .flags = flags };

	if (tl->have_last && ts_ns < tl->last.ts_ns)
		return -EINVAL;
	memcpy(s.rss, rss, sizeof(s.rss));
	if (!tl->have_last || phase != tl->last.phase)
		s.flags |= TIMELINE_PHASE_CHANGED;
	tl->last = s;
	tl->have_last = true;

	if (!(flags & TIMELINE_PEAK)) {
		tl->recent[tl->rhead] = s;
		tl->rhead = (tl->rhead + 1) % TIMELINE_RECENT;
		if (tl->rlen < TIMELINE_RECENT)
			tl->rlen++;
	}

	/* the newest history entry stays open until it stands for `stride` samples (a
	 * peak's entry is closed: a later sample does not take its place) */
	if (tl->open && tl->open < tl->stride && !(tl->hist[tl->n - 1].flags & TIMELINE_PEAK)) {
		s.flags |= tl->hist[tl->n - 1].flags;
		tl->hist[tl->n - 1] = s;
		tl->open++;
		return 0;
	}
	if (tl->n == tl->cap)
		decimate(tl);
	tl->hist[tl->n++] = s;
	tl->open = 1;
	return 0;
}

int timeline__add(struct timeline *tl, __u64 ts_ns, const __s64 rss[MP_NR_CLASSES],
		  __u32 phase)
{
	return add_sample(tl, ts_ns, rss, phase, 0);
}

int timeline__add_model(struct timeline *tl, const struct model *m, __u64 ts_ns)
{
	__s64 rss[MP_NR_CLASSES] = {};
	unsigned int i;
	int c;

	for (i = 0; i < m->nprocs; i++) {
		if (!model_proc__followed(&m->procs[i]))
			continue;
		for (c = 0; c < MP_NR_CLASSES; c++)
			rss[c] += m->procs[i].rss[c];
	}
	return timeline__add(tl, ts_ns, rss, m->cur_phase);
}

static int by_peak_ns(const void *a, const void *b)
{
	const struct model_proc *x = *(const struct model_proc *const *)a;
	const struct model_proc *y = *(const struct model_proc *const *)b;

	return x->peak_ns < y->peak_ns ? -1 : x->peak_ns > y->peak_ns;
}

/* The point of process p's high: its classes then, the other followed processes' now. */
static void peak_point(const struct model *m, const struct model_proc *p,
		       __s64 rss[MP_NR_CLASSES])
{
	unsigned int i;
	int c;

	memcpy(rss, p->peak_rss, sizeof(p->peak_rss));
	for (i = 0; i < m->nprocs; i++) {
		const struct model_proc *o = &m->procs[i];

		if (o == p || !model_proc__followed(o))
			continue;
		for (c = 0; c < MP_NR_CLASSES; c++)
			rss[c] += o->rss[c];
	}
}

unsigned int timeline__add_peaks(struct timeline *tl, const struct model *m, __u64 now_ns)
{
	const struct model_proc *v[TIMELINE_PEAKS_MAX];
	unsigned int i, n = 0, added = 0;
	__s64 rss[MP_NR_CLASSES];
	__u64 after;

	if (!tl)
		return 0;
	after = tl->have_last ? tl->last.ts_ns : 0;
	for (i = 0; i < m->nprocs && n < TIMELINE_PEAKS_MAX; i++) {
		const struct model_proc *p = &m->procs[i];

		if (p->peak_ns > after && p->peak_ns <= now_ns)
			v[n++] = p;
	}
	qsort(v, n, sizeof(*v), by_peak_ns);
	for (i = 0; i < n; i++) {
		peak_point(m, v[i], rss);
		if (!add_sample(tl, v[i]->peak_ns, rss, model__phase_at(m, v[i]->peak_ns),
				TIMELINE_PEAK))
			added++;
	}
	return added;
}

unsigned int timeline__len(const struct timeline *tl)
{
	return tl->n;
}

const struct timeline_sample *timeline__at(const struct timeline *tl, unsigned int i)
{
	return i < tl->n ? &tl->hist[i] : NULL;
}

const struct timeline_sample *timeline__last(const struct timeline *tl)
{
	return tl->have_last ? &tl->last : NULL;
}

__s64 timeline__sum(const struct timeline_sample *s, unsigned int classes)
{
	__s64 sum = 0;
	int c;

	for (c = 0; c < MP_NR_CLASSES; c++)
		if (classes & TIMELINE_CLASS(c))
			sum += s->rss[c];
	return sum;
}

int timeline__rate(const struct timeline *tl, unsigned int classes, __u64 now_ns,
		   double *rate)
{
	double st = 0, sy = 0, stt = 0, sty = 0, mt, my, t, y, newest = 0, oldest = 0;
	__u64 first = 0, last = 0, ref = 0;
	unsigned int i, k, n = 0;

	/* newest to oldest: samples in (now - window, now] */
	for (i = 0; i < tl->rlen; i++) {
		const struct timeline_sample *s;

		k = (tl->rhead + TIMELINE_RECENT - 1 - i) % TIMELINE_RECENT;
		s = &tl->recent[k];
		if (s->ts_ns > now_ns)
			continue;
		if (!n)
			ref = last = s->ts_ns;
		if ((double)(ref - s->ts_ns) >= tl->window_ns)
			break;
		first = s->ts_ns;
		/* times relative to the newest sample keep the doubles precise */
		t = -(double)(ref - s->ts_ns) / 1e9;
		y = (double)timeline__sum(s, classes);
		if (!n)
			newest = y;
		oldest = y;
		st += t;
		sy += y;
		n++;
	}
	if (n < 3 || (double)(last - first) < tl->window_ns / 4)
		return -ENODATA;
	mt = st / n;
	my = sy / n;
	/* second pass over the same samples: centred sums */
	for (i = 0; i < tl->rlen; i++) {
		const struct timeline_sample *s;

		k = (tl->rhead + TIMELINE_RECENT - 1 - i) % TIMELINE_RECENT;
		s = &tl->recent[k];
		if (s->ts_ns > now_ns)
			continue;
		if (s->ts_ns < first)
			break;
		t = -(double)(ref - s->ts_ns) / 1e9 - mt;
		y = (double)timeline__sum(s, classes) - my;
		stt += t * t;
		sty += t * y;
	}
	if (stt <= 0)
		return -ENODATA;
	*rate = sty / stt;
	/* it grew, then fell below where the window began: not growing now */
	if (*rate > 0 && newest < oldest)
		*rate = 0;
	return 0;
}

int timeline__time_to(double headroom, double rate, double *secs)
{
	if (!(rate >= TIMELINE_MIN_RATE) || (headroom > 0 && headroom / rate > TIMELINE_HORIZON_S))
		return -ERANGE;
	*secs = headroom > 0 ? headroom / rate : 0;
	return 0;
}

static void relabel_one(struct timeline_sample *t, __u64 from_ns, __u64 to_ns,
			const __u8 to[MP_MAX_PHASES])
{
	if (t->ts_ns >= from_ns && t->ts_ns <= to_ns && t->phase < MP_MAX_PHASES && to[t->phase])
		t->phase = to[t->phase] - 1;
}

void timeline__relabel(struct timeline *tl, __u64 from_ns, __u64 to_ns,
		       const __u8 to[MP_MAX_PHASES])
{
	unsigned int i;

	if (!tl)
		return;
	for (i = 0; i < tl->n; i++)
		relabel_one(&tl->hist[i], from_ns, to_ns, to);
	for (i = 0; i < TIMELINE_RECENT; i++)
		relabel_one(&tl->recent[i], from_ns, to_ns, to);
	if (tl->have_last)
		relabel_one(&tl->last, from_ns, to_ns, to);
}
