// SPDX-License-Identifier: GPL-2.0
/* Pinned and managed host memory and VRAM in the model. Pure code. */
#include <stdio.h>
#include <string.h>
#include "model/gpu.h"

void model_gpu__on_event(struct model_gpu *g, const struct mp_alloc_event *e)
{
	__u32 c = e->cls, ph = e->phase;

	if (c >= MP_NR_ALLOC_CLS || ph >= MP_MAX_PHASES)
		return;
	if (e->type == MP_EV_ALLOC) {
		g->alloc_bytes[c][ph] += e->size;
		g->allocs[c][ph]++;
		g->current[c] += e->size;
		if (g->current[c] > g->peak[c])
			g->peak[c] = g->current[c];
	} else if (e->type == MP_EV_FREE) {
		g->free_bytes[c][ph] += e->size;
		g->frees[c][ph]++;
		g->current[c] -= e->size;
		if (g->current[c] < 0)
			g->current[c] = 0;
	}
}

void model_gpu__origin(struct model_gpu *g, __u32 cls, __u32 phase, const char *where,
		       __u64 bytes)
{
	struct model_gpu_origin *o;
	unsigned int i;

	for (i = 0; i < g->norigins; i++) {
		o = &g->origins[i];
		if (o->cls == cls && o->phase == phase && !strcmp(o->where, where)) {
			o->bytes += bytes;
			o->calls++;
			return;
		}
	}
	if (g->norigins == GPU_MAX_ORIGINS) {
		g->origins_other += bytes;
		return;
	}
	o = &g->origins[g->norigins++];
	o->cls = cls;
	o->phase = phase;
	snprintf(o->where, sizeof(o->where), "%s", where);
	o->bytes = bytes;
	o->calls = 1;
}

void model_gpu__reading(struct model_gpu *g, __u32 phase, __u64 now_ns,
			const struct model_gpu_device *dev, unsigned int ndev)
{
	struct model_gpu_reading *r;
	__u64 used = 0, free_used = 0, free_all = 0;
	bool any = false;
	unsigned int i;

	if (ndev > GPU_MAX_DEVICES)
		ndev = GPU_MAX_DEVICES;
	memcpy(g->dev, dev, ndev * sizeof(*dev));
	g->ndevices = ndev;
	for (i = 0; i < ndev; i++) {
		used += dev[i].target_used;
		free_all += dev[i].free;
		if (dev[i].target_used) {
			free_used += dev[i].free;
			any = true;
		}
	}
	g->readings++;
	g->vram = used;
	if (used > g->vram_peak)
		g->vram_peak = used;
	if (phase < MP_MAX_PHASES) {
		if (!g->vram_seen[phase])
			g->vram_phase_first[phase] = used;
		g->vram_seen[phase] = true;
		if (used > g->vram_phase_peak[phase])
			g->vram_phase_peak[phase] = used;
	}
	r = &g->hist[g->hist_next];
	r->ts_ns = now_ns;
	r->target_used = used;
	r->free = any ? free_used : free_all;
	g->hist_next = (g->hist_next + 1) % GPU_VRAM_HISTORY;
	if (g->nhist < GPU_VRAM_HISTORY)
		g->nhist++;
}

void model_gpu__window_open(struct model_gpu *g)
{
	unsigned int c, i;

	memset(g->alloc_bytes, 0, sizeof(g->alloc_bytes));
	memset(g->free_bytes, 0, sizeof(g->free_bytes));
	memset(g->allocs, 0, sizeof(g->allocs));
	memset(g->frees, 0, sizeof(g->frees));
	for (c = 0; c < MP_NR_ALLOC_CLS; c++)
		g->peak[c] = g->current[c] > 0 ? g->current[c] : 0;
	for (i = 0; i < g->norigins; i++)
		g->origins[i].bytes = g->origins[i].calls = 0;
	g->origins_other = 0;
	g->readings = 0;
	g->vram_peak = g->vram;
	memset(g->vram_seen, 0, sizeof(g->vram_seen));
	memset(g->vram_phase_peak, 0, sizeof(g->vram_phase_peak));
	memset(g->vram_phase_first, 0, sizeof(g->vram_phase_first));
}

void model_gpu__window_close(struct model_gpu *g, int phase)
{
	unsigned int c, i, n;

	for (i = n = 0; i < g->norigins; i++)
		if (g->origins[i].calls && (phase < 0 || g->origins[i].phase == (__u32)phase))
			g->origins[n++] = g->origins[i];
	g->norigins = n;
	if (phase < 0)
		return;
	for (i = 0; i < MP_MAX_PHASES; i++) {
		if ((int)i == phase)
			continue;
		for (c = 0; c < MP_NR_ALLOC_CLS; c++) {
			g->alloc_bytes[c][i] = g->free_bytes[c][i] = 0;
			g->allocs[c][i] = g->frees[c][i] = 0;
		}
		g->vram_seen[i] = false;
		g->vram_phase_peak[i] = g->vram_phase_first[i] = 0;
	}
}

const struct model_gpu_reading *model_gpu__last(const struct model_gpu *g)
{
	if (!g->nhist)
		return NULL;
	return &g->hist[(g->hist_next + GPU_VRAM_HISTORY - 1) % GPU_VRAM_HISTORY];
}

bool model_gpu__vram_rate(const struct model_gpu *g, __u64 now_ns, double window_s,
			  double *rate)
{
	const struct model_gpu_reading *last = model_gpu__last(g), *first = NULL, *r;
	__u64 window = (__u64)(window_s * 1e9);
	unsigned int i;

	if (!last)
		return false;
	/* the oldest reading within the window, walking back from the newest */
	for (i = 1; i <= g->nhist; i++) {
		r = &g->hist[(g->hist_next + GPU_VRAM_HISTORY - i) % GPU_VRAM_HISTORY];
		if (now_ns > r->ts_ns && now_ns - r->ts_ns > window)
			break;
		first = r;
	}
	if (!first || first == last || last->ts_ns <= first->ts_ns)
		return false;
	*rate = ((double)last->target_used - (double)first->target_used) /
		((double)(last->ts_ns - first->ts_ns) / 1e9);
	return true;
}
