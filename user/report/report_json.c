// SPDX-License-Identifier: GPL-2.0
/* The JSON summary, schema 1. Keys keep their meaning; new keys may be added. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "lib/hist.h"
#include "lib/json.h"
#include "model/causes.h"
#include "report/plateau.h"
#include "report/settings.h"
#include "report/requests.h"
#include "report/phase_json.h"
#include "report/report_json.h"

/* buckets from the first to the last non-empty one, empty ones between included (bcc) */
static void histogram(struct jsonw *w, const char *name, const __u64 *slots)
{
	unsigned int s, first = MP_MAX_SLOTS, last = 0;
	__u64 low, high;

	for (s = 0; s < MP_MAX_SLOTS; s++) {
		if (!slots[s])
			continue;
		if (first == MP_MAX_SLOTS)
			first = s;
		last = s;
	}
	jsonw__name(w, name);
	jsonw__start_object(w);
	jsonw__string_field(w, "unit", "bytes");
	jsonw__name(w, "buckets");
	jsonw__start_array(w);
	for (s = first; s <= last && s < MP_MAX_SLOTS; s++) {
		hist__range(s, &low, &high);
		/* the last slot also holds everything larger: open-ended */
		if (s == MP_MAX_SLOTS - 1)
			high = UINT64_MAX;
		jsonw__start_object(w);
		jsonw__u64_field(w, "low", low);
		jsonw__u64_field(w, "high", high);
		jsonw__u64_field(w, "count", slots[s]);
		jsonw__end_object(w);
	}
	jsonw__end_array(w);
	jsonw__end_object(w);
}

static void target(struct jsonw *w, const struct model *m)
{
	const struct model_proc *root = model__root((struct model *)m);
	char **a;

	jsonw__name(w, "target");
	jsonw__start_object(w);
	jsonw__u64_field(w, "pid", m->root_pid);
	jsonw__string_field(w, "comm", root ? root->comm : "");
	jsonw__name(w, "argv");
	jsonw__start_array(w);
	for (a = m->argv; a && *a; a++)
		jsonw__string(w, *a);
	jsonw__end_array(w);
	jsonw__name(w, "exit");
	if (!root || !root->exited) {
		jsonw__null(w);	/* still running: memphase detached */
	} else {
		jsonw__start_object(w);
		if (root->exit_code >= 0)
			jsonw__s64_field(w, "code", root->exit_code);
		else
			jsonw__null_field(w, "code");
		if (root->exit_signal)
			jsonw__s64_field(w, "signal", root->exit_signal);
		else
			jsonw__null_field(w, "signal");
		jsonw__bool_field(w, "oom_killed", root->oom_killed);
		jsonw__end_object(w);
	}
	jsonw__end_object(w);
}

static void peak_object(struct jsonw *w, const char *name, __s64 total,
			const __s64 v[MP_NR_CLASSES])
{
	int c;

	jsonw__name(w, name);
	jsonw__start_object(w);
	jsonw__u64_field(w, "total", total > 0 ? total : 0);
	for (c = 0; c < MP_NR_CLASSES; c++)
		jsonw__u64_field(w, mp_class_name(mp_class_order[c]),
				 v[mp_class_order[c]] > 0 ? v[mp_class_order[c]] : 0);
	jsonw__end_object(w);
}

/* the observed processes' peak together, and that of the largest (rss_peak_pid) */
static void peak(struct jsonw *w, const struct model *m)
{
	const struct model_proc *p = model__main((struct model *)m);
	static const __s64 none[MP_NR_CLASSES];

	peak_object(w, "rss_peak_bytes", m->tree_peak_total, m->tree_peak);
	peak_object(w, "rss_peak_process_bytes", p ? p->peak_total : 0, p ? p->peak : none);
}

static const char *const origin_how[] = { "mmap", "mremap", "brk" };

/* "label" and "origin" of a mapping: who created it (null when memphase did not see it) */
static void origin(struct jsonw *w, const struct model *m, __u32 id, __u32 phase1)
{
	const struct origin *o = origins__at(&m->origins, id);
	const char *by;
	char buf[160];
	__u32 i;

	if (!o) {
		jsonw__null_field(w, "label");
		jsonw__null_field(w, "label_from");
		jsonw__null_field(w, "origin");
		return;
	}
	/* the heap's and an arena's: the causes that grew it in the phase (model/causes.h) */
	by = causes__label(m, id, phase1, buf, sizeof(buf));
	jsonw__string_field(w, "label", by ? by : o->label);
	jsonw__string_field(w, "label_from", by ? "causes" : "origin");
	jsonw__name(w, "origin");
	jsonw__start_object(w);
	jsonw__string_field(w, "label", o->label);
	jsonw__string_field(w, "syscall", o->how < 3 ? origin_how[o->how] : "?");
	jsonw__u64_field(w, "pid", o->pid);
	jsonw__u64_field(w, "tid", o->tid);
	jsonw__string_field(w, "comm", o->comm);
	jsonw__u64_field(w, "start", o->start);
	jsonw__u64_field(w, "length", o->len);
	jsonw__string_field(w, "phase", o->phase < m->nphases ? m->names[o->phase] : "?");
	jsonw__bool_field(w, "arena", o->arena);
	/* outermost first, as in the stack views */
	jsonw__name(w, "frames");
	jsonw__start_array(w);
	for (i = 0; i < o->nframes; i++)
		jsonw__string(w, o->frames[i]);
	jsonw__end_array(w);
	jsonw__end_object(w);
}

/*
 * One cause's bytes per request: the mean over the requests the fit runs over (null without
 * any), as the summary's "What grew" table shows it.
 */
static void per_request_field(struct jsonw *w, const char *name,
			      const struct cause_requests *cr, size_t c)
{
	double per;

	if (causes__per_request(cr, c, &per))
		jsonw__double_field(w, name, per);
	else
		jsonw__null_field(w, name);
}

/* What grew: sampled growth by named cause (model/causes.h). */
static void causes(struct jsonw *w, const struct model *m)
{
	__s64 base;
	char rem[CAUSES_REMEDY_MAX], buf[160];
	struct cause_requests cr = {};
	struct cause_report r;
	const char *by;
	unsigned int k;
	size_t i;

	jsonw__name(w, "causes");
	jsonw__start_array(w);
	if (causes__attribute(m, NULL, NULL, &r)) {
		jsonw__end_array(w);
		return;
	}
	causes__by_request(m, &cr);	/* on ENOMEM empty: per_request null */
	base = model__share_base(m, r.total);
	for (i = 0; i < r.n; i++) {
		jsonw__start_object(w);
		jsonw__string_field(w, "name", r.v[i].cause->name);
		jsonw__u64_field(w, "bytes", r.v[i].bytes);
		per_request_field(w, "per_request", &cr, causes__index(m, r.v[i].cause));
		if (base > 0)
			jsonw__double_field(w, "share_of_peak", (double)r.v[i].bytes / base);
		else
			jsonw__null_field(w, "share_of_peak");
		jsonw__string_field(w, "remedy", causes__remedy(m, r.v[i].cause, rem, sizeof(rem)));
		jsonw__string_field(w, "rule", r.v[i].rule ? r.v[i].rule->text : "");
		jsonw__end_object(w);
	}
	jsonw__end_array(w);
	jsonw__u64_field(w, "causes_unmatched_bytes", r.unmatched);
	per_request_field(w, "causes_unmatched_per_request", &cr, cr.ncauses);
	jsonw__u64_field(w, "causes_sampled_bytes", r.total);
	/* which requests per_request is the mean over (1-based, as in requests[]) */
	jsonw__name(w, "causes_per_request_over");
	jsonw__start_array(w);
	for (k = 0; k < cr.nsteady; k++)
		jsonw__u64(w, cr.steady[k] + 1);
	jsonw__end_array(w);
	causes__requests_free(&cr);
	causes__report_free(&r);
	jsonw__name(w, "origins");
	jsonw__start_object(w);
	jsonw__u64_field(w, "recorded", origins__recorded(&m->origins));
	jsonw__u64_field(w, "lost", m->origins_lost);
	jsonw__u64_field(w, "capped", m->origins_capped);
	jsonw__u64_field(w, "repeats_skipped", m->origins_same);
	jsonw__u64_field(w, "malloc_arenas", m->origins.arenas);
	jsonw__end_object(w);
	/* glibc malloc arenas: whose, and how much each grew */
	jsonw__name(w, "arenas");
	jsonw__start_array(w);
	for (i = 0; i < m->origins.n; i++) {
		const struct origin *o = &m->origins.v[i];

		if (!o->arena || !origins__counted(&m->origins, o))
			continue;
		jsonw__start_object(w);
		jsonw__u64_field(w, "pid", o->pid);
		jsonw__u64_field(w, "tid", o->tid);
		jsonw__string_field(w, "comm", o->comm);
		jsonw__string_field(w, "label", o->label);
		by = causes__label(m, (__u32)i + 1, 0, buf, sizeof(buf));
		if (by)
			jsonw__string_field(w, "grown_by", by);
		else
			jsonw__null_field(w, "grown_by");
		jsonw__u64_field(w, "reserved_at", o->start);
		jsonw__u64_field(w, "growth_bytes", o->grown);
		jsonw__end_object(w);
	}
	jsonw__end_array(w);
}

static void top_mappings(struct jsonw *w, const struct model *m, unsigned int id)
{
	unsigned int i;

	jsonw__name(w, "top_mappings");
	jsonw__start_array(w);
	for (i = 0; i < m->ntop[id]; i++) {
		const struct model_mapping *mm = &m->top[id][i];

		jsonw__start_object(w);
		jsonw__string_field(w, "path", mm->path);
		/* a file's path is its exact name; deleted says the file is gone */
		jsonw__bool_field(w, "deleted", mm->deleted);
		jsonw__string_field(w, "class", mp_class_name(mm->cls));
		jsonw__string_field(w, "kind", model__kind_name(mm->kind));
		jsonw__u64_field(w, "bytes", mm->bytes);
		/* the VMA last seen for it (model.h) */
		jsonw__u64_field(w, "start", mm->start);
		jsonw__u64_field(w, "size", mm->size);
		origin(w, m, mm->origin, id + 1);
		jsonw__end_object(w);
	}
	jsonw__end_array(w);
}

/* "intervals": [ { "start_s", "end_s" } ]: when the phase timeline was in phase id,
 * seconds from the start; the last one is open until the end */
static void phases(struct jsonw *w, const struct model *m)
{
	unsigned int i;

	jsonw__name(w, "phases");
	jsonw__start_array(w);
	for (i = 0; i < m->norder; i++) {
		unsigned int id = m->order[i];
		const struct mp_phase_stats *s = &m->stats[id];

		jsonw__start_object(w);
		phase_json__fields(w, m, id);
		jsonw__u64_field(w, "mmap_bytes", s->mmap_bytes);
		jsonw__u64_field(w, "munmap_bytes", s->munmap_bytes);
		jsonw__u64_field(w, "brk_bytes", s->brk_bytes);
		jsonw__u64_field(w, "brk_shrink_bytes", s->brk_shrink_bytes);
		jsonw__name(w, "histograms");
		jsonw__start_object(w);
		histogram(w, "rss_growth_per_call", s->hist[MP_HIST_CALL_GROWTH]);
		histogram(w, "mmap_size", s->hist[MP_HIST_MMAP_SIZE]);
		jsonw__end_object(w);
		top_mappings(w, m, id);
		jsonw__name(w, "pressure");
		jsonw__start_object(w);
		jsonw__double_field(w, "reclaim_s", s->reclaim_ns / 1e9);
		jsonw__u64_field(w, "reclaims", s->reclaim_count);
		jsonw__u64_field(w, "reclaimed_bytes", s->reclaimed_pages * 4096);
		jsonw__u64_field(w, "swap_out_bytes", s->growth[MP_SWAP]);
		if (m->have_psi) {
			jsonw__double_field(w, "psi_some_s", m->psi_some_us[id] / 1e6);
			jsonw__double_field(w, "psi_full_s", m->psi_full_us[id] / 1e6);
		} else {
			jsonw__null_field(w, "psi_some_s");
			jsonw__null_field(w, "psi_full_s");
		}
		jsonw__end_object(w);
		jsonw__u64_field(w, "pinned_bytes", m->gpu.alloc_bytes[MP_ALLOC_PINNED][id]);
		jsonw__u64_field(w, "pinned_freed_bytes", m->gpu.free_bytes[MP_ALLOC_PINNED][id]);
		jsonw__u64_field(w, "managed_bytes", m->gpu.alloc_bytes[MP_ALLOC_MANAGED][id]);
		jsonw__u64_field(w, "managed_freed_bytes",
				 m->gpu.free_bytes[MP_ALLOC_MANAGED][id]);
		if (m->gpu.vram_seen[id])
			jsonw__u64_field(w, "vram_bytes", m->gpu.vram_phase_peak[id]);
		else
			jsonw__null_field(w, "vram_bytes");
		jsonw__name(w, "stacks");
		jsonw__start_object(w);
		jsonw__u64_field(w, "samples", m->samples[id]);
		jsonw__u64_field(w, "sampled_bytes", m->sampled_bytes[id]);
		jsonw__end_object(w);
		jsonw__end_object(w);
	}
	jsonw__end_array(w);
}

static void alloc_class(struct jsonw *w, const struct model_gpu *g, int c)
{
	__u64 allocs = 0, frees = 0;
	unsigned int i;

	for (i = 0; i < MP_MAX_PHASES; i++) {
		allocs += g->allocs[c][i];
		frees += g->frees[c][i];
	}
	jsonw__name(w, mp_alloc_cls_name(c));
	jsonw__start_object(w);
	jsonw__u64_field(w, "peak_bytes", g->peak[c]);
	jsonw__u64_field(w, "held_bytes", g->current[c]);
	jsonw__u64_field(w, "allocs", allocs);
	jsonw__u64_field(w, "frees", frees);
	jsonw__end_object(w);
}

/* Pinned and managed host memory, where it came from, and VRAM (null without NVML). */
static void gpu(struct jsonw *w, const struct model *m)
{
	const struct model_gpu *g = &m->gpu;
	unsigned int i;

	jsonw__name(w, "gpu");
	jsonw__start_object(w);
	jsonw__u64_field(w, "alloc_probes", g->probes);
	alloc_class(w, g, MP_ALLOC_PINNED);
	alloc_class(w, g, MP_ALLOC_MANAGED);
	jsonw__u64_field(w, "unread_pointers", g->unread);
	jsonw__name(w, "origins");
	jsonw__start_array(w);
	for (i = 0; i < g->norigins; i++) {
		const struct model_gpu_origin *o = &g->origins[i];

		jsonw__start_object(w);
		jsonw__string_field(w, "class", mp_alloc_cls_name(o->cls));
		jsonw__string_field(w, "phase", m->names[o->phase < MP_MAX_PHASES ? o->phase : 0]);
		jsonw__string_field(w, "where", o->where);
		jsonw__u64_field(w, "bytes", o->bytes);
		jsonw__u64_field(w, "calls", o->calls);
		jsonw__end_object(w);
	}
	jsonw__end_array(w);
	if (!g->nvml) {
		jsonw__null_field(w, "vram");
		jsonw__string_field(w, "nvml_unavailable", g->nvml_why);
		jsonw__end_object(w);
		return;
	}
	jsonw__null_field(w, "nvml_unavailable");
	jsonw__name(w, "vram");
	jsonw__start_object(w);
	jsonw__u64_field(w, "readings", g->readings);
	jsonw__u64_field(w, "target_bytes", g->vram);
	jsonw__u64_field(w, "target_peak_bytes", g->vram_peak);
	jsonw__name(w, "devices");
	jsonw__start_array(w);
	for (i = 0; i < g->ndevices; i++) {
		const struct model_gpu_device *d = &g->dev[i];

		jsonw__start_object(w);
		jsonw__u64_field(w, "index", d->index);
		jsonw__string_field(w, "name", d->name);
		jsonw__u64_field(w, "total_bytes", d->total);
		jsonw__u64_field(w, "used_bytes", d->used);
		jsonw__u64_field(w, "free_bytes", d->free);
		jsonw__u64_field(w, "target_bytes", d->target_used);
		jsonw__end_object(w);
	}
	jsonw__end_array(w);
	jsonw__end_object(w);
	jsonw__end_object(w);
}

static void processes(struct jsonw *w, const struct model *m)
{
	unsigned int i;

	jsonw__name(w, "processes");
	jsonw__start_array(w);
	for (i = 0; i < m->nprocs; i++) {
		const struct model_proc *p = &m->procs[i];

		jsonw__start_object(w);
		jsonw__u64_field(w, "pid", p->pid);
		jsonw__u64_field(w, "parent", p->parent);
		jsonw__string_field(w, "comm", p->comm);
		jsonw__bool_field(w, "exited", p->exited);
		jsonw__bool_field(w, "oom_killed", p->oom_killed);
		/* no longer followed: out of the invoking user's reach (a setuid exec...) */
		if (p->left) {
			jsonw__name(w, "left");
			jsonw__start_object(w);
			jsonw__double_field(w, "time_s", model__rel_s(m, p->left_ns));
			jsonw__string_field(w, "reason", model__left_reason(p->left));
			jsonw__string_field(w, "program", p->left_path);
			jsonw__end_object(w);
		} else {
			jsonw__null_field(w, "left");
		}
		jsonw__u64_field(w, "rss_peak_total_bytes", p->peak_total > 0 ? p->peak_total : 0);
		jsonw__end_object(w);
	}
	jsonw__end_array(w);
}

/* "before_kill": { "window_s", "phases": [ { "name", "growth_bytes": { ... } } ] } */
static void before_kill(struct jsonw *w, const struct model *m, const struct model_oom *o)
{
	unsigned int i;

	jsonw__name(w, "before_kill");
	if (!o->have_window) {
		jsonw__null(w);
		return;
	}
	jsonw__start_object(w);
	jsonw__double_field(w, "window_s", o->window_s);
	jsonw__name(w, "phases");
	jsonw__start_array(w);
	for (i = 0; i < m->norder; i++) {
		unsigned int id = m->order[i];
		const __u64 *g = o->before[id];

		if (!(g[0] | g[1] | g[2] | g[3]))
			continue;
		jsonw__start_object(w);
		jsonw__string_field(w, "name", m->names[id]);
		phase_json__classes(w, "growth_bytes", g);
		jsonw__end_object(w);
	}
	jsonw__end_array(w);
	jsonw__end_object(w);
}

static void ooms(struct jsonw *w, const struct model *m)
{
	unsigned int i;

	jsonw__name(w, "oom");
	jsonw__start_array(w);
	for (i = 0; i < m->nooms; i++) {
		const struct model_oom *o = &m->ooms[i];

		jsonw__start_object(w);
		jsonw__u64_field(w, "pid", o->pid);
		jsonw__string_field(w, "comm", o->comm);
		jsonw__string_field(w, "phase", o->phase < m->nphases ? m->names[o->phase] : "");
		jsonw__double_field(w, "time_s",
				    model__rel_s(m, o->ts_ns));
		jsonw__u64_field(w, "anon_rss_bytes", o->rss[MP_ANON]);
		jsonw__u64_field(w, "file_rss_bytes", o->rss[MP_FILE]);
		jsonw__u64_field(w, "shmem_rss_bytes", o->rss[MP_SHMEM]);
		jsonw__u64_field(w, "swap_bytes", o->rss[MP_SWAP]);
		if (o->cgroup_oom < 0)
			jsonw__null_field(w, "cgroup_oom");
		else
			jsonw__bool_field(w, "cgroup_oom", o->cgroup_oom);
		jsonw__string_field(w, "cgroup", o->cgroup);
		jsonw__u64_field(w, "cgroup_limit_bytes", o->cgroup_limit);
		before_kill(w, m, o);
		jsonw__end_object(w);
	}
	jsonw__end_array(w);
}

/* "unmatched_markers": [ { "phase", "binary", "symbol", "reason" } ] */
static void unmatched(struct jsonw *w, const struct model *m)
{
	unsigned int i;

	jsonw__name(w, "unmatched_markers");
	jsonw__start_array(w);
	for (i = 0; i < m->nunmatched; i++) {
		const struct model_unmatched *u = &m->unmatched[i];

		jsonw__start_object(w);
		jsonw__string_field(w, "phase", u->phase);
		jsonw__string_field(w, "binary", u->binary);
		jsonw__string_field(w, "symbol", u->symbol);
		jsonw__string_field(w, "reason", u->reason);
		jsonw__end_object(w);
	}
	jsonw__end_array(w);
}

/*
 * "bpf_stats": { "programs": [ { "name", "runs", "run_time_ns", "ns_per_run" } ],
 * "total": { "runs", "run_time_ns" } }, or null without --bpf-stats
 */
static void bpf_stats(struct jsonw *w, const struct model *m)
{
	const struct model_bpf_stats *st = &m->bpf_stats;
	__u64 runs, ns;
	unsigned int i;

	jsonw__name(w, "bpf_stats");
	if (!st->have) {
		jsonw__null(w);
		return;
	}
	jsonw__start_object(w);
	jsonw__name(w, "programs");
	jsonw__start_array(w);
	for (i = 0; i < st->nprogs; i++) {
		const struct model_prog_stats *p = &st->progs[i];

		jsonw__start_object(w);
		jsonw__string_field(w, "name", p->name);
		jsonw__u64_field(w, "runs", p->runs);
		jsonw__u64_field(w, "run_time_ns", p->run_time_ns);
		/* a program that never ran has no time per run */
		if (p->runs)
			jsonw__double_field(w, "ns_per_run", (double)p->run_time_ns / p->runs);
		else
			jsonw__null_field(w, "ns_per_run");
		jsonw__end_object(w);
	}
	jsonw__end_array(w);
	model__bpf_totals(st, &runs, &ns);
	jsonw__name(w, "total");
	jsonw__start_object(w);
	jsonw__u64_field(w, "runs", runs);
	jsonw__u64_field(w, "run_time_ns", ns);
	jsonw__end_object(w);
	jsonw__end_object(w);
}

/* The highest of the samples [from, from + step) (the first of equals). */
static unsigned int group_top(const struct timeline *tl, unsigned int from, unsigned int step,
			      unsigned int n)
{
	unsigned int i, top = from;

	for (i = from + 1; i < from + step && i < n; i++)
		if (timeline__sum(timeline__at(tl, i), TIMELINE_RESIDENT) >
		    timeline__sum(timeline__at(tl, top), TIMELINE_RESIDENT))
			top = i;
	return top;
}

/*
 * "timeline": { "samples": [ { "t_s", "phase", "anon", "file", "shmem", "swap" } ] }:
 * RSS of the observed processes over the run, thinned to REPORT_JSON_TIMELINE samples at
 * most (the highest of each run of samples, so the peak stays), and besides them every
 * sample where the phase changed and the last one.
 */
static void timeline(struct jsonw *w, const struct model *m, const struct timeline *tl)
{
	unsigned int n = tl ? timeline__len(tl) : 0, i, step, c, top = 0;

	step = n > REPORT_JSON_TIMELINE ? (n + REPORT_JSON_TIMELINE - 1) / REPORT_JSON_TIMELINE : 1;
	jsonw__name(w, "timeline");
	jsonw__start_object(w);
	jsonw__u64_field(w, "samples_total", n);
	jsonw__name(w, "samples");
	jsonw__start_array(w);
	for (i = 0; i < n; i++) {
		const struct timeline_sample *t = timeline__at(tl, i);

		if (i % step == 0)
			top = group_top(tl, i, step, n);
		if (i != top && i != n - 1 && !(t->flags & TIMELINE_PHASE_CHANGED))
			continue;
		/* a reading after the run's end (the root gone, not noticed yet) is not of it */
		if (m->end_ns && t->ts_ns > m->end_ns)
			continue;
		jsonw__start_object(w);
		jsonw__double_field(w, "t_s", model__rel_s(m, t->ts_ns));
		jsonw__string_field(w, "phase", t->phase < m->nphases ? m->names[t->phase] : "?");
		for (c = 0; c < MP_NR_CLASSES; c++)
			jsonw__s64_field(w, mp_class_name(mp_class_order[c]),
					 t->rss[mp_class_order[c]]);
		jsonw__end_object(w);
	}
	jsonw__end_array(w);
	jsonw__end_object(w);
}

int report_json__write(FILE *f, const struct model *m)
{
	return report_json__write_tl(f, m, NULL);
}

int report_json__write_tl(FILE *f, const struct model *m, const struct timeline *tl)
{
	struct jsonw *w = jsonw__new(f, true);

	if (!w)
		return -ENOMEM;
	jsonw__start_object(w);
	jsonw__u64_field(w, "schema", REPORT_JSON_SCHEMA);
	jsonw__string_field(w, "memphase_version", MEMPHASE_VERSION);
	target(w, m);
	jsonw__double_field(w, "duration_s",
			    model__rel_s(m, m->end_ns));
	peak(w, m);
	causes(w, m);
	jsonw__u64_field(w, "rss_peak_pid", model__main((struct model *)m) ?
			 model__main((struct model *)m)->pid : m->root_pid);
	phases(w, m);
	processes(w, m);
	settings__json(w, m);
	/* "processes" lists the last MODEL_MAX_PROCS; this counts them all */
	jsonw__u64_field(w, "processes_total", m->nprocs + m->procs_recycled);
	ooms(w, m);
	requests__json(w, m);
	plateau__json(w, m);
	if (m->stop_reason[0])
		jsonw__string_field(w, "stopped_by_memphase", m->stop_reason);
	else
		jsonw__null_field(w, "stopped_by_memphase");
	jsonw__name(w, "lost");
	jsonw__start_object(w);
	jsonw__u64_field(w, "events", model__lost_events(m));
	jsonw__u64_field(w, "stacks", m->lost_stacks);
	jsonw__u64_field(w, "mapping_bytes", m->mapping_lost_bytes);
	/* past their bounds: the older timeline drawn coarser, marks left out */
	jsonw__u64_field(w, "intervals_merged", m->history.merged);
	jsonw__u64_field(w, "phase_changes_thinned", m->history.thinned);
	jsonw__u64_field(w, "marks_dropped", m->history.dropped);
	jsonw__end_object(w);
	jsonw__u64_field(w, "markers_attached", m->markers_attached);
	unmatched(w, m);
	jsonw__u64_field(w, "faults_vma_busy", m->vma_busy);
	jsonw__u64_field(w, "faults_vma_deferred", m->vma_deferred);
	jsonw__u64_field(w, "mapping_table_full", m->mappings_full);
	jsonw__name(w, "stack_sampling");
	jsonw__start_object(w);
	jsonw__u64_field(w, "postponed_by_cap", m->stacks_capped);
	jsonw__u64_field(w, "unwind_failures", m->unwind_failures);
	if (m->sample_bytes)
		jsonw__u64_field(w, "sample_bytes", m->sample_bytes);
	else
		jsonw__null_field(w, "sample_bytes");
	jsonw__end_object(w);
	gpu(w, m);
	bpf_stats(w, m);
	timeline(w, m, tl);
	jsonw__end_object(w);
	jsonw__free(w);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}

static int json_write(FILE *f, const struct output_ctx *ctx)
{
	return report_json__write_tl(f, ctx->m, ctx->tl);
}

const struct output_format report_json_format = {
	.name = "json",
	.help = "Write the summary as JSON (schema 1) to FILE",
	.write = json_write,
};
