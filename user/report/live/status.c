// SPDX-License-Identifier: GPL-2.0
/* The live view's numbers and wordings, and the --no-tui status line. */
#include <stdio.h>
#include <string.h>
#include "lib/util.h"
#include "lib/headroom.h"
#include "model/model.h"
#include "report/live/status.h"

const char *status__size(char *buf, size_t len, __s64 v)
{
	char tmp[32], *s, *d;

	util__fmt_bytes(tmp, sizeof(tmp), v);
	for (s = tmp, d = buf; *s && d < buf + len - 1; s++)
		if (*s != ' ')
			*d++ = *s;
	*d = '\0';
	return buf;
}

const char *status__rate(char *buf, size_t len, double rate)
{
	char b[32];

	snprintf(buf, len, "%s%s/s", rate >= 0 ? "+" : "", util__fmt_bytes(b, sizeof(b), rate));
	return buf;
}

const char *status__eta(char *buf, size_t len, double secs)
{
	if (secs < 1)
		snprintf(buf, len, "<1 s");
	else if (secs < 120)
		snprintf(buf, len, "~%.0f s", secs);
	else if (secs < 7200)
		snprintf(buf, len, "~%.0f min", secs / 60);
	else if (secs < 2 * 86400)
		snprintf(buf, len, "~%.1f h", secs / 3600);
	else
		snprintf(buf, len, "~%.0f days", secs / 86400);
	return buf;
}

double status__elapsed(const struct model *m, __u64 now_ns)
{
	__u64 end = m->finished ? m->end_ns : now_ns;

	return model__rel_s(m, end);
}

const char *status__phase_name(const struct model *m, unsigned int id)
{
	return id < m->nphases && m->names[id][0] ? m->names[id] : "?";
}

void status__calc(struct live_calc *c, const struct model *m, const struct timeline *tl,
		  const struct sysmem *sm, __u64 now_ns)
{
	unsigned int i;
	int k;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < m->nprocs; i++) {
		const struct model_proc *p = &m->procs[i];

		for (k = 0; k < MP_NR_CLASSES; k++)
			if (model_proc__followed(p))
				c->rss[k] += p->rss[k];
	}
	c->total = c->rss[MP_ANON] + c->rss[MP_FILE] + c->rss[MP_SHMEM];
	/* the model's peak of the processes together (model__note_tree), or now if above */
	for (k = 0; k < MP_NR_CLASSES; k++)
		c->peak[k] = c->rss[k] > m->tree_peak[k] ? c->rss[k] : m->tree_peak[k];
	c->peak_total = c->total > m->tree_peak_total ? c->total : m->tree_peak_total;
	forecast__compute(&c->fc, m, tl, sm, now_ns);
}

int status__format(char *buf, size_t len, const struct model *m, const struct live_calc *c,
		   const struct sysmem *sm, __u64 now_ns)
{
	const struct forecast *fc = &c->fc;
	char b[8][32], rate[40], avail[32], cg[72], oom[32], vram_eta[32];
	int n;

	if (fc->have_rate)
		snprintf(rate, sizeof(rate), "%s%s/s", fc->rate >= 0 ? "+" : "",
			 status__size(b[5], sizeof(b[5]), fc->rate));
	else
		snprintf(rate, sizeof(rate), "-");
	if (sm && sm->have_meminfo)
		status__size(avail, sizeof(avail), sm->mem_available);
	else
		snprintf(avail, sizeof(avail), "-");
	if (sm && sm->cg_version)
		snprintf(cg, sizeof(cg), "%s/%s", status__size(b[6], sizeof(b[6]), sm->cg_usage),
			 sm->cg_limited ? status__size(b[7], sizeof(b[7]), sm->cg_limit) : "-");
	else
		snprintf(cg, sizeof(cg), "-");
	if (fc->have_vram_full)
		snprintf(vram_eta, sizeof(vram_eta), "~%.0fs", fc->vram_full_s);
	else
		snprintf(vram_eta, sizeof(vram_eta), "-");
	if (fc->have_oom)
		snprintf(oom, sizeof(oom), "~%.0fs", fc->oom_s);
	else
		snprintf(oom, sizeof(oom), "-");
	n = snprintf(buf, len,
			"memphase: t=%.1fs phase=%s rss=%s anon=%s file=%s shmem=%s swap=%s "
			"rate=%s avail=%s cg=%s oom_in=%s lost=%llu",
			status__elapsed(m, now_ns), status__phase_name(m, m->cur_phase),
			status__size(b[0], sizeof(b[0]), c->total),
			status__size(b[1], sizeof(b[1]), c->rss[MP_ANON]),
			status__size(b[2], sizeof(b[2]), c->rss[MP_FILE]),
			status__size(b[3], sizeof(b[3]), c->rss[MP_SHMEM]),
			status__size(b[4], sizeof(b[4]), c->rss[MP_SWAP]), rate, avail, cg, oom,
			(unsigned long long)model__lost_events(m));
	/* the GPU's fields only when there is a GPU side: the line is otherwise unchanged */
	if (n >= 0 && (size_t)n < len && model_gpu__any(&m->gpu))
		n += snprintf(buf + n, len - n, " pinned=%s vram=%s vram_full_in=%s",
			      status__size(b[0], sizeof(b[0]), m->gpu.current[MP_ALLOC_PINNED]),
			      fc->have_vram ? status__size(b[1], sizeof(b[1]), fc->vram) : "-",
			      vram_eta);
	return n;
}
