// SPDX-License-Identifier: GPL-2.0
/*
 * The metrics exposition (see metrics.h). One table of families; each family's emit()
 * writes its samples for one run. A family whose runs emit nothing (no GPU, no PSI, no
 * projection yet) has no HELP/TYPE lines either: its header is written with its first
 * sample.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/utf8.h"
#include "lib/util.h"
#include "model/causes.h"
#include "report/live/forecast.h"
#include "report/metrics.h"

enum fam_type { F_GAUGE, F_COUNTER, F_HISTOGRAM, F_INFO };

struct run;
struct mw;

struct family {
	const char *name;	/* without _total (counters) or _info (info) */
	enum fam_type type;
	const char *help;
	void (*emit)(struct mw *w, const struct run *r);
};

/* One run, with what several families need computed once. */
struct run {
	const struct output_ctx *c;
	const struct model *m;
	__u64 now;
	struct forecast fc;
	bool have_causes;
	struct cause_report causes;
	char id[192];		/* [source="...",]comm="...",pid="..." */
};

struct mw {
	FILE *f;
	enum metrics_syntax syn;
	const struct family *fam;
	bool header;		/* the family's HELP and TYPE are out */
};

/* 64 KiB, 96 KiB, 128 KiB, 192 KiB, ... 12 GiB, 16 GiB: 2^k and 1.5 x 2^k */
unsigned long long metrics__bucket(unsigned int i)
{
	return (i & 1 ? 3ULL : 2ULL) << (METRICS_BUCKET_SHIFT - 1 + i / 2);
}

/* ---- writing ---- */

/* a label value: UTF-8 without controls (comm may hold anything), \ " escaped */
static void put_value(FILE *f, const char *v)
{
	char *clean = utf8__sanitize(v ? v : "");
	const char *p;

	for (p = clean ? clean : "?"; *p; p++) {
		if (*p == '\\' || *p == '"')
			fputc('\\', f);
		fputc(*p, f);
	}
	free(clean);
}

static const char *type_name(enum fam_type t, enum metrics_syntax syn)
{
	switch (t) {
	case F_COUNTER: return "counter";
	case F_HISTOGRAM: return "histogram";
	case F_INFO: return syn == METRICS_OPENMETRICS ? "info" : "gauge";
	default: return "gauge";
	}
}

/* The unit a family's name ends in (OpenMetrics: the name's last words), or NULL. */
static const char *unit_of(const char *name)
{
	static const char *const units[] = { "bytes_per_second", "bytes", "seconds", "ratio" };
	size_t n = strlen(name), k, i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		k = strlen(units[i]);
		if (n > k + 1 && name[n - k - 1] == '_' && !strcmp(name + n - k, units[i]))
			return units[i];
	}
	return NULL;
}

static void header(struct mw *w)
{
	const struct family *fm = w->fam;
	bool om = w->syn == METRICS_OPENMETRICS;
	/* text 0.0.4 names the family as its samples are named; OpenMetrics without suffix */
	const char *sfx = om ? "" : fm->type == F_COUNTER ? "_total" :
			  fm->type == F_INFO ? "_info" : "";
	const char *unit = unit_of(fm->name);

	fprintf(w->f, "# HELP %s%s %s\n", fm->name, sfx, fm->help);
	fprintf(w->f, "# TYPE %s%s %s\n", fm->name, sfx, type_name(fm->type, w->syn));
	/* the text format 0.0.4 has no UNIT */
	if (om && unit)
		fprintf(w->f, "# UNIT %s %s\n", fm->name, unit);
	w->header = true;
}

/*
 * One sample: the family's name + suffix (_bucket, _count, _sum for histograms; _total
 * and _info come with the type), the run's labels, up to two more, the value.
 */
static void sample(struct mw *w, const struct run *r, const char *suffix, const char *k1,
		   const char *v1, const char *k2, const char *v2, const char *val)
{
	const struct family *fm = w->fam;

	if (!w->header)
		header(w);
	fprintf(w->f, "%s%s%s{%s", fm->name,
		fm->type == F_COUNTER ? "_total" : fm->type == F_INFO ? "_info" : "",
		suffix ? suffix : "", r->id);
	if (k1) {
		fprintf(w->f, ",%s=\"", k1);
		put_value(w->f, v1);
		fputc('"', w->f);
	}
	if (k2) {
		fprintf(w->f, ",%s=\"", k2);
		put_value(w->f, v2);
		fputc('"', w->f);
	}
	fprintf(w->f, "} %s\n", val);
}

static const char *u64s(char *b, __u64 v)
{
	snprintf(b, 24, "%llu", (unsigned long long)v);
	return b;
}

static const char *pos(char *b, __s64 v)
{
	return u64s(b, v > 0 ? (__u64)v : 0);
}

static const char *dbl(char *b, double v)
{
	/* whole numbers as such; else 15 significant digits (a wall-clock time keeps its ms) */
	if (v == (double)(long long)v && v > -9e15 && v < 9e15)
		snprintf(b, 32, "%lld", (long long)v);
	else
		snprintf(b, 32, "%.15g", v);
	return b;
}

/* a sample with up to two labels and an unsigned value */
static void su(struct mw *w, const struct run *r, const char *k1, const char *v1,
	       const char *k2, const char *v2, __u64 v)
{
	char b[32];

	sample(w, r, NULL, k1, v1, k2, v2, u64s(b, v));
}

static void sd(struct mw *w, const struct run *r, const char *k1, const char *v1, double v)
{
	char b[32];

	sample(w, r, NULL, k1, v1, NULL, NULL, dbl(b, v));
}

/* ---- the families ---- */

#define PHASES(r, id, i)						\
	for (i = 0; i < (r)->m->norder && ((id) = (r)->m->order[i], 1); i++)

static void e_run(struct mw *w, const struct run *r)
{
	sample(w, r, NULL, "version", MEMPHASE_VERSION, NULL, NULL, "1");
}

static void e_start(struct mw *w, const struct run *r)
{
	/* the live run's wall clock at its start, or the recording's (older ones: unknown) */
	if (r->m->start_wall_ns)
		sd(w, r, NULL, NULL, r->m->start_wall_ns / 1e9);
}

static void e_ended(struct mw *w, const struct run *r)
{
	su(w, r, NULL, NULL, NULL, NULL, forecast__ended(r->m));
}

static void e_procs(struct mw *w, const struct run *r)
{
	unsigned int i, n = 0;

	for (i = 0; i < r->m->nprocs; i++)
		n += model_proc__followed(&r->m->procs[i]);
	su(w, r, NULL, NULL, NULL, NULL, n);
}

static void e_rss(struct mw *w, const struct run *r)
{
	__s64 v[MP_NR_CLASSES] = {};
	char b[32];
	unsigned int i;
	int c;

	for (i = 0; i < r->m->nprocs; i++)
		for (c = 0; c < MP_NR_CLASSES && model_proc__followed(&r->m->procs[i]); c++)
			v[c] += r->m->procs[i].rss[c];
	for (c = 0; c < MP_NR_CLASSES; c++)
		sample(w, r, NULL, "class", mp_class_name(mp_class_order[c]), NULL, NULL,
		       pos(b, v[mp_class_order[c]]));
}

static void e_peak(struct mw *w, const struct run *r)
{
	char b[32];

	/* the observed processes' together, as the summary's and the JSON's rss_peak_bytes */
	sample(w, r, NULL, NULL, NULL, NULL, NULL, pos(b, r->m->tree_peak_total));
}

static void e_cur_phase(struct mw *w, const struct run *r)
{
	unsigned int i, id;

	PHASES(r, id, i)
		su(w, r, "phase", r->m->names[id], NULL, NULL, id == r->m->cur_phase);
}

static void e_phase_time(struct mw *w, const struct run *r)
{
	unsigned int i, id;

	PHASES(r, id, i)
		sd(w, r, "phase", r->m->names[id], model__phase_time(r->m, id, r->now) / 1e9);
}

static void e_entries(struct mw *w, const struct run *r)
{
	unsigned int i, id;

	PHASES(r, id, i)
		su(w, r, "phase", r->m->names[id], NULL, NULL,
		   r->m->stats[id].entries + (id == 0));
}

static void per_class(struct mw *w, const struct run *r, bool shrink)
{
	unsigned int i, id;
	int c;

	PHASES(r, id, i)
		for (c = 0; c < MP_NR_CLASSES; c++) {
			int k = mp_class_order[c];

			su(w, r, "phase", r->m->names[id], "class", mp_class_name(k),
			   shrink ? r->m->stats[id].shrink[k] : r->m->stats[id].growth[k]);
		}
}

static void e_growth(struct mw *w, const struct run *r)
{
	per_class(w, r, false);
}

static void e_shrink(struct mw *w, const struct run *r)
{
	per_class(w, r, true);
}

static void e_faults(struct mw *w, const struct run *r)
{
	unsigned int i, id;

	PHASES(r, id, i)
		su(w, r, "phase", r->m->names[id], NULL, NULL, r->m->stats[id].faults);
}

static void e_phase_psi(struct mw *w, const struct run *r)
{
	unsigned int i, id;
	char b[32];

	if (!r->m->have_psi)
		return;
	PHASES(r, id, i) {
		sample(w, r, NULL, "phase", r->m->names[id], "kind", "some",
		       dbl(b, r->m->psi_some_us[id] / 1e6));
		sample(w, r, NULL, "phase", r->m->names[id], "kind", "full",
		       dbl(b, r->m->psi_full_us[id] / 1e6));
	}
}

static void e_sampled(struct mw *w, const struct run *r)
{
	unsigned int i, id;

	PHASES(r, id, i)
		su(w, r, "phase", r->m->names[id], NULL, NULL, r->m->sampled_bytes[id]);
}

static void e_requests(struct mw *w, const struct run *r)
{
	su(w, r, NULL, NULL, NULL, NULL, r->m->nrequests + r->m->requests_dropped);
}

static void e_tokens(struct mw *w, const struct run *r)
{
	__u64 prompt = 0, gen = 0;
	unsigned int i;

	for (i = 0; i < r->m->nrequests; i++) {
		prompt += r->m->requests[i].prompt_tokens;
		gen += r->m->requests[i].gen_tokens;
	}
	su(w, r, "kind", "prompt", NULL, NULL, prompt);
	su(w, r, "kind", "generated", NULL, NULL, gen);
}

/* closed requests' net growth (file + anon + shmem at the end minus at the start);
 * a request that gave memory back counts as 0 */
static void e_req_hist(struct mw *w, const struct run *r)
{
	__u64 counts[METRICS_NBUCKETS] = {}, n = 0, sum = 0;
	char b[32], le[32];
	unsigned int i, k;

	for (i = 0; i < r->m->nrequests; i++) {
		const struct model_request *q = &r->m->requests[i];
		__s64 g;

		if (!q->end_ns)
			continue;
		g = q->rss_end[MP_FILE] + q->rss_end[MP_ANON] + q->rss_end[MP_SHMEM] -
		    q->rss_start[MP_FILE] - q->rss_start[MP_ANON] - q->rss_start[MP_SHMEM];
		if (g < 0)
			g = 0;
		n++;
		sum += g;
		for (k = 0; k < METRICS_NBUCKETS; k++)
			counts[k] += (__u64)g <= metrics__bucket(k);
	}
	for (k = 0; k < METRICS_NBUCKETS; k++)
		sample(w, r, "_bucket", "le", u64s(le, metrics__bucket(k)), NULL, NULL,
		       u64s(b, counts[k]));
	sample(w, r, "_bucket", "le", "+Inf", NULL, NULL, u64s(b, n));
	sample(w, r, "_count", NULL, NULL, NULL, NULL, u64s(b, n));
	sample(w, r, "_sum", NULL, NULL, NULL, NULL, u64s(b, sum));
}

static void e_causes(struct mw *w, const struct run *r)
{
	size_t i;

	for (i = 0; r->have_causes && i < r->causes.n; i++)
		su(w, r, "cause", r->causes.v[i].cause->name, NULL, NULL, r->causes.v[i].bytes);
}

static void e_unmatched(struct mw *w, const struct run *r)
{
	if (r->have_causes)
		su(w, r, NULL, NULL, NULL, NULL, r->causes.unmatched);
}

static void e_ooms(struct mw *w, const struct run *r)
{
	unsigned int i, id, k, n;

	PHASES(r, id, i) {
		for (k = n = 0; k < r->m->nooms; k++)
			n += r->m->ooms[k].phase == id;
		su(w, r, "phase", r->m->names[id], NULL, NULL, n);
	}
}

static void e_rate(struct mw *w, const struct run *r)
{
	if (r->fc.have_rate)
		sd(w, r, NULL, NULL, r->fc.rate);
}

static void e_headroom(struct mw *w, const struct run *r)
{
	char b[32];

	if (r->fc.have_sys_room)
		sample(w, r, NULL, "bound", "system", NULL, NULL, dbl(b, r->fc.sys_room));
	if (r->fc.have_cg_room)
		sample(w, r, NULL, "bound", "cgroup", NULL, NULL, dbl(b, r->fc.cg_room));
}

static void e_oom_in(struct mw *w, const struct run *r)
{
	if (r->fc.have_sys_oom)
		sd(w, r, "bound", "system", r->fc.sys_oom_s);
	if (r->fc.have_cg_oom)
		sd(w, r, "bound", "cgroup", r->fc.cg_oom_s);
}

#define SM(r) ((r)->c->sm)

static void e_mem_total(struct mw *w, const struct run *r)
{
	if (SM(r) && SM(r)->have_meminfo)
		su(w, r, NULL, NULL, NULL, NULL, SM(r)->mem_total);
}

static void e_mem_avail(struct mw *w, const struct run *r)
{
	if (SM(r) && SM(r)->have_meminfo)
		su(w, r, NULL, NULL, NULL, NULL, SM(r)->mem_available);
}

static void e_swap_free(struct mw *w, const struct run *r)
{
	if (SM(r) && SM(r)->have_meminfo)
		su(w, r, NULL, NULL, NULL, NULL, SM(r)->swap_free);
}

static void e_cg_limit(struct mw *w, const struct run *r)
{
	if (SM(r) && SM(r)->cg_limited)
		su(w, r, NULL, NULL, NULL, NULL, SM(r)->cg_limit);
}

static void e_cg_usage(struct mw *w, const struct run *r)
{
	if (SM(r) && SM(r)->cg_limited)
		su(w, r, NULL, NULL, NULL, NULL, SM(r)->cg_limit_usage);
}

static void e_psi_total(struct mw *w, const struct run *r)
{
	if (!SM(r) || !SM(r)->have_psi)
		return;
	sd(w, r, "kind", "some", SM(r)->psi_some_total_us / 1e6);
	sd(w, r, "kind", "full", SM(r)->psi_full_total_us / 1e6);
}

static void e_psi_avg(struct mw *w, const struct run *r)
{
	if (!SM(r) || !SM(r)->have_psi)
		return;
	sd(w, r, "kind", "some", SM(r)->psi_some_avg10 / 100);
	sd(w, r, "kind", "full", SM(r)->psi_full_avg10 / 100);
}

/* pinned and managed host memory: only once an allocation probe is attached */
static bool have_host(const struct run *r)
{
	const struct model_gpu *g = &r->m->gpu;

	return g->probes || g->peak[MP_ALLOC_PINNED] || g->peak[MP_ALLOC_MANAGED];
}

static void e_host(struct mw *w, const struct run *r)
{
	char b[32];
	int k;

	for (k = 0; k < MP_NR_ALLOC_CLS && have_host(r); k++)
		sample(w, r, NULL, "kind", mp_alloc_cls_name(k), NULL, NULL,
		       pos(b, r->m->gpu.current[k]));
}

static void e_host_peak(struct mw *w, const struct run *r)
{
	char b[32];
	int k;

	for (k = 0; k < MP_NR_ALLOC_CLS && have_host(r); k++)
		sample(w, r, NULL, "kind", mp_alloc_cls_name(k), NULL, NULL,
		       pos(b, r->m->gpu.peak[k]));
}

static void host_phase(struct mw *w, const struct run *r, bool freed)
{
	unsigned int i, id;
	int k;

	if (!have_host(r))
		return;
	PHASES(r, id, i)
		for (k = 0; k < MP_NR_ALLOC_CLS; k++)
			su(w, r, "phase", r->m->names[id], "kind", mp_alloc_cls_name(k),
			   freed ? r->m->gpu.free_bytes[k][id] : r->m->gpu.alloc_bytes[k][id]);
}

static void e_host_alloc(struct mw *w, const struct run *r)
{
	host_phase(w, r, false);
}

static void e_host_freed(struct mw *w, const struct run *r)
{
	host_phase(w, r, true);
}

static void e_vram(struct mw *w, const struct run *r)
{
	if (r->m->gpu.nvml)
		su(w, r, NULL, NULL, NULL, NULL, r->m->gpu.vram);
}

static void e_vram_peak(struct mw *w, const struct run *r)
{
	if (r->m->gpu.nvml)
		su(w, r, NULL, NULL, NULL, NULL, r->m->gpu.vram_peak);
}

static void e_vram_phase(struct mw *w, const struct run *r)
{
	unsigned int i, id;

	if (!r->m->gpu.nvml)
		return;
	PHASES(r, id, i)
		if (r->m->gpu.vram_seen[id])
			su(w, r, "phase", r->m->names[id], NULL, NULL,
			   r->m->gpu.vram_phase_peak[id]);
}

static void e_vram_full(struct mw *w, const struct run *r)
{
	if (r->fc.have_vram_full)
		sd(w, r, NULL, NULL, r->fc.vram_full_s);
}

static void e_device(struct mw *w, const struct run *r)
{
	const struct model_gpu *g = &r->m->gpu;
	unsigned int i;
	char d[16];

	for (i = 0; g->nvml && i < g->ndevices && i < GPU_MAX_DEVICES; i++) {
		snprintf(d, sizeof(d), "%u", g->dev[i].index);
		su(w, r, "device", d, "state", "total", g->dev[i].total);
		su(w, r, "device", d, "state", "used", g->dev[i].used);
		su(w, r, "device", d, "state", "free", g->dev[i].free);
	}
}

static void e_lost_events(struct mw *w, const struct run *r)
{
	su(w, r, NULL, NULL, NULL, NULL, model__lost_events(r->m));
}

static void e_lost_stacks(struct mw *w, const struct run *r)
{
	su(w, r, NULL, NULL, NULL, NULL, r->m->lost_stacks);
}

static void e_lost_origins(struct mw *w, const struct run *r)
{
	su(w, r, NULL, NULL, NULL, NULL, r->m->origins_lost);
}

static void e_lost_map(struct mw *w, const struct run *r)
{
	su(w, r, NULL, NULL, NULL, NULL, r->m->mapping_lost_bytes);
}

static void e_self_cpu(struct mw *w, const struct run *r)
{
	if (r->c->self)
		sd(w, r, NULL, NULL, r->c->self->cpu_s);
}

static void e_self_rss(struct mw *w, const struct run *r)
{
	if (r->c->self)
		su(w, r, NULL, NULL, NULL, NULL, r->c->self->rss_bytes);
}

static void e_self_render(struct mw *w, const struct run *r)
{
	if (r->c->self && r->c->self->render_bytes)
		sd(w, r, NULL, NULL, r->c->self->render_s);
}

static void e_self_size(struct mw *w, const struct run *r)
{
	if (r->c->self && r->c->self->render_bytes)
		su(w, r, NULL, NULL, NULL, NULL, r->c->self->render_bytes);
}

static const struct family families[] = {
	{ "memphase_run", F_INFO,
	  "The observed run: its root process (comm, pid) and memphase's version.", e_run },
	{ "memphase_start_time_seconds", F_GAUGE,
	  "When memphase started observing the run, seconds since the epoch.", e_start },
	{ "memphase_target_ended", F_GAUGE,
	  "1 once every observed process has exited (the series go one scrape later).",
	  e_ended },
	{ "memphase_processes", F_GAUGE, "Observed processes that have not exited.", e_procs },
	{ "memphase_rss_bytes", F_GAUGE,
	  "Resident memory of the observed processes by class (anon, file, shmem; swap: "
	  "swapped out), summed over those alive.", e_rss },
	{ "memphase_rss_peak_bytes", F_GAUGE,
	  "Peak resident memory (anon + file + shmem) of the process the run is about.",
	  e_peak },
	{ "memphase_current_phase", F_GAUGE,
	  "1 for the phase the run is in, 0 for the other phases entered so far.",
	  e_cur_phase },
	{ "memphase_phase_seconds", F_COUNTER, "Time spent in each phase.", e_phase_time },
	{ "memphase_phase_entries", F_COUNTER, "Times each phase was entered.", e_entries },
	{ "memphase_phase_growth_bytes", F_COUNTER,
	  "RSS growth per phase and memory class (what --json calls rss_growth_bytes).",
	  e_growth },
	{ "memphase_phase_shrink_bytes", F_COUNTER,
	  "RSS given back per phase and memory class.", e_shrink },
	{ "memphase_phase_page_faults", F_COUNTER, "User page faults per phase.", e_faults },
	{ "memphase_phase_pressure_stall_seconds", F_COUNTER,
	  "The system's memory pressure stall time (PSI some, full) while in each phase.",
	  e_phase_psi },
	{ "memphase_phase_sampled_bytes", F_COUNTER,
	  "RSS growth carried by stack samples per phase (what the causes divide).",
	  e_sampled },
	{ "memphase_requests", F_COUNTER, "Requests started (passes through the prompt phase).",
	  e_requests },
	{ "memphase_request_tokens", F_COUNTER,
	  "Tokens decoded in requests (prompt, generated).", e_tokens },
	{ "memphase_request_growth_bytes", F_HISTOGRAM,
	  "Net RSS growth (anon + file + shmem) of each finished request; one that shrank "
	  "counts as 0.", e_req_hist },
	{ "memphase_cause_bytes", F_GAUGE,
	  "Sampled RSS growth attributed to each named cause (the cause rules).", e_causes },
	{ "memphase_cause_unmatched_bytes", F_GAUGE,
	  "Sampled RSS growth no cause rule matched.", e_unmatched },
	{ "memphase_oom_kills", F_COUNTER, "OOM kills of observed processes, by phase.",
	  e_ooms },
	{ "memphase_growth_rate_bytes_per_second", F_GAUGE,
	  "Smoothed growth of anon + shmem + swap (what reclaim cannot give back).", e_rate },
	{ "memphase_headroom_bytes", F_GAUGE,
	  "Room left before an OOM kill: system (MemAvailable + SwapFree), cgroup (limit - "
	  "usage + inactive file).", e_headroom },
	{ "memphase_time_to_oom_seconds", F_GAUGE,
	  "Projected time until the headroom is used up at the growth rate (absent when not "
	  "growing).", e_oom_in },
	{ "memphase_mem_total_bytes", F_GAUGE, "MemTotal of /proc/meminfo.", e_mem_total },
	{ "memphase_mem_available_bytes", F_GAUGE, "MemAvailable of /proc/meminfo.",
	  e_mem_avail },
	{ "memphase_swap_free_bytes", F_GAUGE, "SwapFree of /proc/meminfo.", e_swap_free },
	{ "memphase_cgroup_limit_bytes", F_GAUGE,
	  "The memory limit of the cgroup that binds the observed process.", e_cg_limit },
	{ "memphase_cgroup_usage_bytes", F_GAUGE, "That cgroup's memory usage.", e_cg_usage },
	{ "memphase_memory_pressure_stall_seconds", F_COUNTER,
	  "The system's memory pressure stall time (/proc/pressure/memory total).",
	  e_psi_total },
	{ "memphase_memory_pressure_ratio", F_GAUGE,
	  "The system's memory pressure, share of the last 10 s stalled (PSI avg10).",
	  e_psi_avg },
	{ "memphase_gpu_host_bytes", F_GAUGE,
	  "Pinned and managed host memory the observed processes hold (CUDA).", e_host },
	{ "memphase_gpu_host_peak_bytes", F_GAUGE, "Their peak.", e_host_peak },
	{ "memphase_gpu_host_alloc_bytes", F_COUNTER,
	  "Pinned and managed host memory allocated per phase.", e_host_alloc },
	{ "memphase_gpu_host_freed_bytes", F_COUNTER,
	  "Pinned and managed host memory freed per phase.", e_host_freed },
	{ "memphase_vram_bytes", F_GAUGE, "VRAM the observed processes use (NVML).", e_vram },
	{ "memphase_vram_peak_bytes", F_GAUGE, "Its peak.", e_vram_peak },
	{ "memphase_vram_phase_peak_bytes", F_GAUGE, "Its highest reading in each phase.",
	  e_vram_phase },
	{ "memphase_vram_full_seconds", F_GAUGE,
	  "Projected time until the devices' free VRAM is used up at its growth rate.",
	  e_vram_full },
	{ "memphase_gpu_memory_bytes", F_GAUGE,
	  "Each GPU's memory (total, used, free), as NVML reports it.", e_device },
	{ "memphase_lost_events", F_COUNTER,
	  "Events memphase could not keep (ring buffer drops, full maps, model records).",
	  e_lost_events },
	{ "memphase_lost_stacks", F_COUNTER, "Stack samples lost.", e_lost_stacks },
	{ "memphase_lost_origins", F_COUNTER, "Mapping origins lost (ring buffer full).",
	  e_lost_origins },
	{ "memphase_lost_mapping_bytes", F_COUNTER,
	  "Growth no mapping entry could hold.", e_lost_map },
	{ "memphase_self_cpu_seconds", F_COUNTER, "memphase's own CPU time (user + system).",
	  e_self_cpu },
	{ "memphase_self_resident_memory_bytes", F_GAUGE, "memphase's own resident memory.",
	  e_self_rss },
	{ "memphase_self_render_seconds", F_GAUGE,
	  "How long memphase took to render its previous exposition.", e_self_render },
	{ "memphase_self_exposition_bytes", F_GAUGE, "The size of its previous exposition.",
	  e_self_size },
};

/* ---- the whole ---- */

static void run_init(struct run *r, const struct output_ctx *c, const char *source)
{
	struct model *m = (struct model *)c->m;
	const struct model_proc *root = model__root(m);
	const char *comm = root && root->comm[0] ? root->comm : NULL;
	char base[MP_COMM_LEN] = "";
	size_t n;
	FILE *f;

	memset(r, 0, sizeof(*r));
	r->c = c;
	r->m = c->m;
	r->now = c->now_ns ? c->now_ns : c->m->end_ns;
	/* before the first exec event: the command's name, as comm would be (15 bytes) */
	if (!comm && m->argv && m->argv[0]) {
		const char *s = strrchr(m->argv[0], '/');

		snprintf(base, sizeof(base), "%s", s ? s + 1 : m->argv[0]);
		comm = base;
	}
	f = fmemopen(r->id, sizeof(r->id) - 1, "w");
	if (f) {
		if (source)
			fprintf(f, "source=\"%s\",", source);
		fputs("comm=\"", f);
		put_value(f, comm ? comm : "");
		fprintf(f, "\",pid=\"%u\"", m->root_pid);
		n = ftell(f);
		fclose(f);
		r->id[n < sizeof(r->id) ? n : sizeof(r->id) - 1] = 0;
	}
	forecast__compute(&r->fc, c->m, c->tl, c->sm, r->now);
	r->have_causes = !causes__attribute(c->m, NULL, NULL, &r->causes);
}

int metrics__render(FILE *f, const struct output_ctx *runs, unsigned int n,
		    enum metrics_syntax syn, const char *source)
{
	struct mw w = { .f = f, .syn = syn };
	struct run *r;
	unsigned int i, k;

	r = calloc(n ? n : 1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (k = 0; k < n; k++)
		run_init(&r[k], &runs[k], source);
	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		w.fam = &families[i];
		w.header = false;
		for (k = 0; k < n; k++)
			families[i].emit(&w, &r[k]);
	}
	if (syn == METRICS_OPENMETRICS)
		fputs("# EOF\n", f);
	for (k = 0; k < n; k++)
		if (r[k].have_causes)
			causes__report_free(&r[k].causes);
	free(r);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}

static int textfile_write(FILE *f, const struct output_ctx *ctx)
{
	return metrics__render(f, ctx, 1, METRICS_TEXT, METRICS_SOURCE_TEXTFILE);
}

const struct output_format metrics_textfile_format = {
	.name = "metrics-textfile",
	.help = "Write the metrics (Prometheus text) to FILE every few seconds for "
		"node_exporter's textfile collector, and remove it once the last figures are "
		"read (report: write it once, to keep)",
	.write = textfile_write,
};
