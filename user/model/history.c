// SPDX-License-Identifier: GPL-2.0
/* The run over time: intervals, phase changes, marks, memory readings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/history.h"

void history__free(struct history *h)
{
	free(h->iv);
	free(h->ch);
	free(h->mk);
	free(h->mem);
	free(h->gpu);
	memset(h, 0, sizeof(*h));
}

/* Room for one more of size each in *p (n used, *cap allocated, max at most). */
static void *room(void *p, size_t n, size_t *cap, size_t size, size_t max)
{
	size_t c;
	void *q;

	if (n < *cap)
		return p;
	if (n >= max)
		return NULL;
	c = *cap ? *cap * 2 : 64;
	if (c > max)
		c = max;
	q = realloc(p, c * size);
	if (q)
		*cap = c;
	return q;
}

static __u64 iv_len(const struct history_interval *iv)
{
	return iv->end_ns > iv->start_ns ? iv->end_ns - iv->start_ns : 0;
}

/*
 * The older half of the intervals but the run's first HISTORY_HEAD (its load and context:
 * exact), merged pair by pair: each pair spans both and is of the phase (and process) that
 * held the longer of the two; neighbours that end up of one phase join. The newer half
 * moves down, exact.
 */
static void iv_coarsen(struct history *h)
{
	size_t half = h->niv / 2, i, n = HISTORY_HEAD;
	struct history_interval m;

	for (i = HISTORY_HEAD; i < half; i += 2) {
		m = h->iv[i];
		if (i + 1 < half) {
			if (iv_len(&h->iv[i + 1]) > iv_len(&m)) {
				m.phase = h->iv[i + 1].phase;
				m.pid = h->iv[i + 1].pid;
			}
			m.end_ns = h->iv[i + 1].end_ns;
		}
		if (n > HISTORY_HEAD && h->iv[n - 1].phase == m.phase && h->iv[n - 1].pid == m.pid)
			h->iv[n - 1].end_ns = m.end_ns;
		else
			h->iv[n++] = m;
	}
	h->merged += half - n;
	memmove(&h->iv[n], &h->iv[half], (h->niv - half) * sizeof(*h->iv));
	h->niv = n + (h->niv - half);
}

void history__add_interval(struct history *h, __u32 phase, __u32 pid, __u64 start_ns,
			   __u64 end_ns)
{
	struct history_interval *iv;

	/* a phase entered again at once (one marker call after another) goes on */
	if (h->niv && h->iv[h->niv - 1].phase == phase && h->iv[h->niv - 1].pid == pid &&
	    h->iv[h->niv - 1].end_ns == start_ns) {
		h->iv[h->niv - 1].end_ns = end_ns;
		return;
	}
	if (h->niv == HISTORY_MAX_INTERVALS)
		iv_coarsen(h);
	iv = room(h->iv, h->niv, &h->capiv, sizeof(*iv), HISTORY_MAX_INTERVALS);
	if (!iv) {
		h->merged++;
		return;
	}
	h->iv = iv;
	iv[h->niv++] = (struct history_interval){ .start_ns = start_ns, .end_ns = end_ns,
						  .phase = phase, .pid = pid };
}

/*
 * The older half of the phase changes but the run's first HISTORY_HEAD, thinned: of every
 * thread's changes there, every other one goes, so the phase a kept change enters lasts to
 * its next kept one. Threads are told apart by a small table of their ids: two that share a
 * bucket share a count (some of their changes go in a row), which keeps the bound.
 */
static void ch_thin(struct history *h)
{
	unsigned char odd[1024] = {};
	size_t half = h->nch / 2, i, n = HISTORY_HEAD;
	unsigned int b;

	for (i = HISTORY_HEAD; i < half; i++) {
		b = (h->ch[i].tid * 2654435761U) >> 22;
		if (!(odd[b]++ & 1))
			h->ch[n++] = h->ch[i];
	}
	h->thinned += half - n;
	memmove(&h->ch[n], &h->ch[half], (h->nch - half) * sizeof(*h->ch));
	h->nch = n + (h->nch - half);
}

void history__add_change(struct history *h, __u64 ts_ns, __u32 pid, __u32 tid, __u32 phase,
			 __u32 old_phase)
{
	struct history_change *ch;

	if (h->nch == HISTORY_MAX_CHANGES)
		ch_thin(h);
	ch = room(h->ch, h->nch, &h->capch, sizeof(*ch), HISTORY_MAX_CHANGES);
	if (!ch) {
		h->thinned++;
		return;
	}
	h->ch = ch;
	ch[h->nch++] = (struct history_change){ .ts_ns = ts_ns, .pid = pid, .tid = tid,
						.phase = phase, .old_phase = old_phase };
}

void history__add_mark(struct history *h, __u64 ts_ns, __u32 kind, __u32 pid,
		       const char *text)
{
	struct history_mark *mk;

	mk = room(h->mk, h->nmk, &h->capmk, sizeof(*mk), HISTORY_MAX_MARKS);
	if (!mk) {
		h->dropped++;
		return;
	}
	h->mk = mk;
	mk = &mk[h->nmk++];
	memset(mk, 0, sizeof(*mk));
	mk->ts_ns = ts_ns;
	mk->kind = kind;
	mk->pid = pid;
	snprintf(mk->text, sizeof(mk->text), "%s", text ? text : "");
}

void history__add_mem(struct history *h, const struct history_mem *s)
{
	struct history_mem *mem;
	size_t i;

	if (h->nmem == HISTORY_MAX_MEM) {
		/* thin out: every other reading goes, the newest stays */
		for (i = 0; i < h->nmem / 2; i++)
			h->mem[i] = h->mem[2 * i + 1];
		h->nmem /= 2;
	}
	mem = room(h->mem, h->nmem, &h->capmem, sizeof(*mem), HISTORY_MAX_MEM);
	if (!mem)
		return;
	h->mem = mem;
	mem[h->nmem++] = *s;
}

void history__add_gpu(struct history *h, const struct history_gpu *s)
{
	const struct history_gpu *last = h->ngpu ? &h->gpu[h->ngpu - 1] : NULL;
	struct history_gpu *g;
	size_t i;

	if (last && last->pinned == s->pinned && last->managed == s->managed &&
	    last->vram == s->vram)
		return;
	if (h->ngpu == HISTORY_MAX_MEM) {
		for (i = 0; i < h->ngpu / 2; i++)
			h->gpu[i] = h->gpu[2 * i + 1];
		h->ngpu /= 2;
	}
	g = room(h->gpu, h->ngpu, &h->capgpu, sizeof(*g), HISTORY_MAX_MEM);
	if (!g)
		return;
	h->gpu = g;
	g[h->ngpu] = *s;
	/*
	 * In the order it was learnt: an NVML reading taken by user space can come before an
	 * allocation event of a few us earlier that is read from the ring after it; the
	 * counter track stays in time order (the event's state holds from the reading on).
	 */
	if (h->ngpu && g[h->ngpu].ts_ns < g[h->ngpu - 1].ts_ns)
		g[h->ngpu].ts_ns = g[h->ngpu - 1].ts_ns;
	h->ngpu++;
}

const char *history__mark_name(__u32 kind)
{
	switch (kind) {
	case HISTORY_OOM:
		return "oom_kill";
	case HISTORY_GUARD:
		return "guard";
	case HISTORY_LIBRARY:
		return "library";
	case HISTORY_EXEC:
		return "exec";
	case HISTORY_LEFT:
		return "left";
	default:
		return "mark";
	}
}
