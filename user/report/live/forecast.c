// SPDX-License-Identifier: GPL-2.0
/* The live view's forecast: growth rate, headroom and time to OOM. Pure code. */
#include <string.h>
#include "lib/headroom.h"
#include "model/model.h"
#include "model/timeline.h"
#include "report/live/forecast.h"

bool forecast__ended(const struct model *m)
{
	unsigned int i;

	if (m->finished)
		return true;
	for (i = 0; i < m->nprocs; i++)
		if (model_proc__followed(&m->procs[i]))
			return false;
	return m->nprocs > 0;
}

/* VRAM: what the observed processes hold, how fast it grows, when their devices fill. */
static void vram_compute(struct forecast *fc, const struct model *m, __u64 now_ns)
{
	const struct model_gpu_reading *r = model_gpu__last(&m->gpu);

	if (!r)
		return;
	fc->have_vram = true;
	fc->vram = r->target_used;
	fc->vram_free = r->free;
	if (forecast__ended(m))
		return;
	fc->have_vram_rate = model_gpu__vram_rate(&m->gpu, now_ns, FORECAST_VRAM_WINDOW_S,
						  &fc->vram_rate);
	if (fc->have_vram_rate)
		fc->have_vram_full = !timeline__time_to((double)fc->vram_free, fc->vram_rate,
							&fc->vram_full_s);
}

void forecast__compute(struct forecast *fc, const struct model *m, const struct timeline *tl,
		       const struct sysmem *sm, __u64 now_ns)
{
	memset(fc, 0, sizeof(*fc));
	/* a command that has ended will not run out of memory: no rate, no projection */
	if (tl && !forecast__ended(m)) {
		fc->have_rate = !timeline__rate(tl, TIMELINE_UNRECLAIMABLE, now_ns, &fc->rate);
		fc->have_rate_all = !timeline__rate(tl, TIMELINE_CLASS(MP_ANON) |
							TIMELINE_CLASS(MP_FILE) |
							TIMELINE_CLASS(MP_SHMEM),
						    now_ns, &fc->rate_all);
	}
	if (sm) {
		fc->have_sys_room = !sysmem__headroom(sm, SYSMEM_SYSTEM, &fc->sys_room);
		fc->have_cg_room = !sysmem__headroom(sm, SYSMEM_CGROUP, &fc->cg_room);
	}
	if (fc->have_rate && fc->have_sys_room)
		fc->have_sys_oom = !timeline__time_to(fc->sys_room, fc->rate, &fc->sys_oom_s);
	if (fc->have_rate && fc->have_cg_room)
		fc->have_cg_oom = !timeline__time_to(fc->cg_room, fc->rate, &fc->cg_oom_s);
	if (fc->have_sys_oom) {
		fc->have_oom = true;
		fc->oom_s = fc->sys_oom_s;
	}
	if (fc->have_cg_oom && (!fc->have_oom || fc->cg_oom_s < fc->oom_s)) {
		fc->have_oom = true;
		fc->oom_s = fc->cg_oom_s;
		fc->by_cgroup = true;
	}
	vram_compute(fc, m, now_ns);
}

bool forecast__warn(const struct forecast *fc, double warn_s)
{
	return fc->have_oom && fc->oom_s < warn_s;
}
