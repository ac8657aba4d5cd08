// SPDX-License-Identifier: GPL-2.0
/* The text summary: fixed-width tables (<= 80 columns) and bcc-style histograms. */
#include <stdlib.h>
#include <string.h>
#include "lib/hist.h"
#include "report/plateau.h"
#include "report/settings.h"
#include "report/requests.h"
#include "report/summary.h"
#include "lib/textwrap.h"
#include "lib/utf8.h"
#include "report/codepaths.h"
#include "report/mapgroups.h"
#include "lib/util.h"
#include "model/causes.h"

#define SUMMARY_REMEDIES	3	/* remedies printed, at most ... */
#define SUMMARY_REMEDY_SHARE	0.8	/* ... for the causes of this share of the growth */
#define SUMMARY_PATHS		8	/* code paths shown when no rule names a cause */
#define SUMMARY_PATHS_SHARE	0.05	/* the unmatched's share that shows its paths */
#define SUMMARY_MAPPINGS	8	/* groups of mappings shown */

static const char *const hist_title[MP_NR_HISTS] = {
	[MP_HIST_CALL_GROWTH] = "RSS growth per marker call",
	[MP_HIST_MMAP_SIZE] = "mmap request sizes",
};

/* The command line, escaped for the terminal: one line whatever the arguments hold. */
/* The phase column: 10 wide, or as wide as the longest phase name shown ("probe:context"). */
static int name_w(const struct model *m)
{
	unsigned int i;
	int w = 10, n;

	for (i = 0; i < m->norder; i++) {
		n = (int)strlen(m->names[m->order[i]]);
		if (n > w)
			w = n;
	}
	return w;
}

/*
 * The command line, escaped for the terminal, its program by its file name (the JSON has
 * the path), cut to at most max characters (" ...").
 */
static const char *cmd_line(char *buf, size_t len, const struct model *m, int max)
{
	char arg[256];
	size_t used = 0, cut;
	char **a;

	buf[0] = '\0';
	if (!m->argv || !m->argv[0])
		return "?";
	for (a = m->argv; *a && used < len; a++)
		used += snprintf(buf + used, len - used, "%s%s", a == m->argv ? "" : " ",
				 utf8__esc_term(arg, sizeof(arg), a == m->argv && strrchr(*a, '/') ?
						strrchr(*a, '/') + 1 : *a));
	if (textwrap__width(buf, strlen(buf)) <= max)
		return buf;
	/* cut on a character, leaving room for " ..." */
	for (cut = 0; buf[cut] && textwrap__width(buf, cut) < max - 4; cut++)
		;
	while (cut && ((unsigned char)buf[cut] & 0xc0) == 0x80)
		cut--;
	snprintf(buf + cut, len - cut, " ...");
	return buf;
}

static void print_run_line(FILE *f, const struct model *m)
{
	const struct model_proc *root = model__root((struct model *)m);
	double secs = model__rel_s(m, m->end_ns);
	char tail[512], cmd[1024];
	size_t n;
	int room;

	n = (size_t)snprintf(tail, sizeof(tail), " (pid %u) observed for %.2f s", m->root_pid,
			     secs);
	if (root && root->oom_killed)
		n += snprintf(tail + n, sizeof(tail) - n, ", OOM-killed");
	else if (root && root->exited && root->exit_signal)
		n += snprintf(tail + n, sizeof(tail) - n, ", killed by signal %d (%s)",
			      root->exit_signal, strsignal(root->exit_signal));
	else if (root && root->exited && root->exit_code >= 0)
		n += snprintf(tail + n, sizeof(tail) - n, ", exited with code %d",
			      root->exit_code);
	else if (m->window)
		n += snprintf(tail + n, sizeof(tail) - n, ", still running at the window's end");
	else
		n += snprintf(tail + n, sizeof(tail) - n, ", still running (detached)");
	/* the command gets what the line leaves (at least 40 characters) */
	room = TEXTWRAP_COLS - (int)strlen("memphase: ") - (int)n;
	fprintf(f, "memphase: %s%s", cmd_line(cmd, sizeof(cmd), m, room < 40 ? 40 : room), tail);
	if (root && root->left)
		fprintf(f, "; no longer observed after %.2f s: %s",
			model__rel_s(m, root->left_ns),
			model__left_reason(root->left));
	fprintf(f, "\n");
}

static void print_peak(FILE *f, const struct model *m)
{
	const struct model_proc *root = model__main((struct model *)m);
	unsigned int n = m->nprocs + m->procs_recycled;
	char b[5][72];

	if (!root)
		return;
	fprintf(f, "RSS peak %s%s (anon %s, file %s, shmem %s; swap peak %s)\n",
		util__fmt_bytes(b[0], 24, m->tree_peak_total),
		n > 1 ? " of the processes together" : "",
		util__fmt_bytes(b[1], 24, m->tree_peak[MP_ANON]),
		util__fmt_bytes(b[2], 24, m->tree_peak[MP_FILE]),
		util__fmt_bytes(b[3], 24, m->tree_peak[MP_SHMEM]),
		util__fmt_bytes(b[4], 24, m->tree_peak[MP_SWAP]));
	/* beside it, the process the run is about (model__main): the command that entered the
	 * phases, or the largest of a wrapper's descendants */
	if (n > 1 && root->pid == m->root_pid)
		fprintf(f, "the command alone (pid %u): its own peak %s\n", root->pid,
			util__fmt_bytes(b[1], 24, root->peak_total));
	else if (n > 1)
		fprintf(f, "largest process: %s (pid %u), its own peak %s\n",
			utf8__esc_term(b[0], sizeof(b[0]), root->comm), root->pid,
			util__fmt_bytes(b[1], 24, root->peak_total));
	if (n > 1)
		fprintf(f, "%u processes observed (the command and %u descendant%s)\n",
			m->nprocs + m->procs_recycled, m->nprocs + m->procs_recycled - 1,
			m->nprocs + m->procs_recycled > 2 ? "s" : "");
}

/* "prompt +1.20 GiB anon, +12.0 MiB file; generate +..." over the window */
static void print_oom_window(FILE *f, const struct model *m, const struct model_oom *o)
{
	unsigned int i, shown = 0;
	char b[24];
	int c;

	fprintf(f, "  growth in the %.1f s before the kill:", o->window_s);
	for (i = 0; i < m->norder; i++) {
		unsigned int id = m->order[i];
		bool any = false;

		for (c = 0; c < MP_NR_CLASSES; c++) {
			__u64 v = o->before[id][mp_class_order[c]];

			if (!v)
				continue;
			if (!any)
				fprintf(f, "%s %s", shown++ ? ";" : "", m->names[id]);
			fprintf(f, "%s +%s %s", any ? "," : "", util__fmt_bytes(b, sizeof(b), v),
				mp_class_name(mp_class_order[c]));
			any = true;
		}
	}
	fprintf(f, "%s\n", shown ? "" : " no growth seen");
}

static void print_ooms(FILE *f, const struct model *m)
{
	char b[4][24], comm[72], cg[256];
	unsigned int i;

	for (i = 0; i < m->nooms; i++) {
		const struct model_oom *o = &m->ooms[i];
		double t = model__rel_s(m, o->ts_ns);

		fprintf(f, "OOM-killed: %s (pid %u) during %s after %.1f s: anon %s, file %s, "
			   "shmem %s\n",
			utf8__esc_term(comm, sizeof(comm), o->comm), o->pid,
			o->phase < m->nphases ? m->names[o->phase] : "?", t,
			util__fmt_bytes(b[0], 24, o->rss[MP_ANON]),
			util__fmt_bytes(b[1], 24, o->rss[MP_FILE]),
			util__fmt_bytes(b[2], 24, o->rss[MP_SHMEM]));
		if (o->cgroup_oom == 1)
			fprintf(f, "  by its memory cgroup %s (limit %s)\n",
				utf8__esc_term(cg, sizeof(cg), o->cgroup),
				util__fmt_bytes(b[3], 24, o->cgroup_limit));
		else if (o->cgroup_oom == 0)
			fprintf(f, "  by the kernel: the system ran out of memory (no memory "
				   "cgroup of it was at its limit)\n");
		if (o->have_window)
			print_oom_window(f, m, o);
		requests__print_oom(f, m, o);
	}
}

static bool pressure_seen(const struct model *m)
{
	unsigned int i;

	for (i = 0; i < m->norder; i++) {
		const struct mp_phase_stats *s = &m->stats[m->order[i]];

		if (s->reclaim_count || s->growth[MP_SWAP] || m->psi_some_us[m->order[i]])
			return true;
	}
	return false;
}

/* Per phase: direct reclaim by the target's threads, swap-out, system PSI stalls. */
static void print_pressure(FILE *f, const struct model *m)
{
	unsigned int i;
	int w = name_w(m);
	char b[2][24];

	if (!pressure_seen(m)) {
		fprintf(f, "\nmemory pressure: no direct reclaim, no swap-out%s\n",
			m->have_psi ? ", no PSI stall" : "");
		return;
	}
	fprintf(f, "\n%-*s %10s %9s %10s %10s %9s %9s\n", w, "PHASE", "RECLAIM", "RECLAIMS",
		"RECLAIMED", "SWAP-OUT", "PSI-SOME", "PSI-FULL");
	for (i = 0; i < m->norder; i++) {
		unsigned int id = m->order[i];
		const struct mp_phase_stats *s = &m->stats[id];

		fprintf(f, "%-*.*s %9.3fs %9llu %10s %10s", w, w, m->names[id], s->reclaim_ns / 1e9,
			(unsigned long long)s->reclaim_count,
			util__fmt_bytes(b[0], 24, s->reclaimed_pages * 4096),
			util__fmt_bytes(b[1], 24, s->growth[MP_SWAP]));
		if (m->have_psi)
			fprintf(f, " %8.3fs %8.3fs\n", m->psi_some_us[id] / 1e6,
				m->psi_full_us[id] / 1e6);
		else
			fprintf(f, " %9s %9s\n", "-", "-");
	}
}

/* The RSS a phase gave back (swap's shrink is pages read back in: not RSS given back). */
static __u64 given_back(const struct mp_phase_stats *s)
{
	return s->shrink[MP_ANON] + s->shrink[MP_FILE] + s->shrink[MP_SHMEM];
}

void summary__phase_table(FILE *f, const struct model *m, __u64 now_ns)
{
	char b[8][24];
	unsigned int i;
	int w = name_w(m);
	int c;

	fprintf(f, "%-*s %7s %5s %9s %9s %9s %9s %10s\n", w, "PHASE", "TIME", "CALLS",
		"+ANON", "+FILE", "+SHMEM", "+SWAP", "GIVEN BACK");
	for (i = 0; i < m->norder; i++) {
		unsigned int id = m->order[i];
		const struct mp_phase_stats *s = &m->stats[id];

		fprintf(f, "%-*.*s %6.2fs %5llu", w, w, m->names[id],
			model__phase_time(m, id, now_ns) / 1e9, (unsigned long long)s->calls);
		for (c = 0; c < MP_NR_CLASSES; c++)
			fprintf(f, " %9s",
				util__fmt_bytes(b[c], 24, s->growth[mp_class_order[c]]));
		fprintf(f, " %10s\n", util__fmt_bytes(b[4], 24, given_back(s)));
	}
}

/* Cuts s to at most max characters ("..." at the end if cut): its length in characters. */
static int chars_cut(char *s, int max)
{
	int n = 0;
	char *c;

	for (c = s; *c; c++) {
		if (((unsigned char)*c & 0xc0) == 0x80)
			continue;
		if (n == max - 3 && strlen(c) > 3) {
			strcpy(c, "...");
			return max;
		}
		n++;
	}
	return n;
}

/* Does a phase have anything GPU to show? */
static bool gpu_phase_seen(const struct model_gpu *g, unsigned int id)
{
	int c;

	for (c = 0; c < MP_NR_ALLOC_CLS; c++)
		if (g->allocs[c][id] || g->frees[c][id])
			return true;
	return g->vram_seen[id];
}

/*
 * Pinned and managed host memory per phase, VRAM per phase and per device, where pinned
 * memory came from. Without NVML and without anything pinned: one line.
 */
void summary__gpu(FILE *f, const struct model *m)
{
	const struct model_gpu *g = &m->gpu;
	int w = name_w(m);
	char b[8][24], esc[256];
	bool any = false;
	unsigned int i;

	for (i = 0; i < m->norder; i++)
		any |= gpu_phase_seen(g, m->order[i]);
	/* a run that used no GPU memory says nothing of a GPU */
	if (!any)
		return;
	fprintf(f, "\n");
	if (!g->nvml)
		fprintf(f, "VRAM: not measured (no NVML: %s)\n",
			utf8__esc_term(esc, sizeof(esc), g->nvml_why));
	fprintf(f, "pinned host memory: peak %s, held at the end %s; managed: peak %s, held %s\n",
		util__fmt_bytes(b[0], 24, g->peak[MP_ALLOC_PINNED]),
		util__fmt_bytes(b[1], 24, g->current[MP_ALLOC_PINNED]),
		util__fmt_bytes(b[2], 24, g->peak[MP_ALLOC_MANAGED]),
		util__fmt_bytes(b[3], 24, g->current[MP_ALLOC_MANAGED]));
	fprintf(f, "%-*s %9s %9s %9s %9s %9s\n", w, "PHASE", "+PINNED", "-PINNED", "+MANAGED",
		"-MANAGED", "VRAM");
	for (i = 0; i < m->norder; i++) {
		unsigned int id = m->order[i];

		if (!gpu_phase_seen(g, id))
			continue;
		fprintf(f, "%-*.*s %9s %9s %9s %9s %9s\n", w, w, m->names[id],
			util__fmt_bytes(b[0], 24, g->alloc_bytes[MP_ALLOC_PINNED][id]),
			util__fmt_bytes(b[1], 24, g->free_bytes[MP_ALLOC_PINNED][id]),
			util__fmt_bytes(b[2], 24, g->alloc_bytes[MP_ALLOC_MANAGED][id]),
			util__fmt_bytes(b[3], 24, g->free_bytes[MP_ALLOC_MANAGED][id]),
			g->vram_seen[id] ? util__fmt_bytes(b[4], 24, g->vram_phase_peak[id]) : "-");
	}
	for (i = 0; i < g->ndevices; i++)
		fprintf(f, "GPU %u %s: total %s, used %s, free %s, by the target %s (peak %s)\n",
			g->dev[i].index, utf8__esc_term(esc, sizeof(esc), g->dev[i].name),
			util__fmt_bytes(b[0], 24, g->dev[i].total),
			util__fmt_bytes(b[1], 24, g->dev[i].used),
			util__fmt_bytes(b[2], 24, g->dev[i].free),
			util__fmt_bytes(b[3], 24, g->dev[i].target_used),
			util__fmt_bytes(b[4], 24, g->vram_peak));
	for (i = 0; i < g->norigins; i++) {
		const struct model_gpu_origin *o = &g->origins[i];

		fprintf(f, "  %-7s %-*.*s %9s %4llu x  %s\n", mp_alloc_cls_name(o->cls), w, w,
			m->names[o->phase < MP_MAX_PHASES ? o->phase : 0],
			util__fmt_bytes(b[0], 24, o->bytes), (unsigned long long)o->calls,
			utf8__esc_term(esc, sizeof(esc), o->where));
	}
}

/* One group: "  176 MiB  anon   11 mappings <- server_prompt_cache::alloc" */
static void print_group(FILE *f, const struct mapgroup *g)
{
	char b[24], name[4 * MAPGROUPS_NAME_MAX + 16], by[4 * MAPGROUPS_BY_MAX + 1];
	char what[sizeof(name) + 32];
	size_t n, cut;
	int col;

	utf8__esc_term(name, sizeof(name), g->name);
	/* a long path keeps its end, the file name, cut on a character */
	n = strlen(name);
	cut = n > 50 ? n - 47 : 0;
	while (cut && cut < n && ((unsigned char)name[cut] & 0xc0) == 0x80)
		cut++;
	if (g->arena)
		snprintf(what, sizeof(what), "%u glibc malloc arena%s", g->count,
			 g->count == 1 ? "" : "s");
	else if (g->count > 1 && !strcmp(g->name, "[anon]"))
		snprintf(what, sizeof(what), "%u mappings", g->count);
	else
		snprintf(what, sizeof(what), "%s%s%s", cut ? "..." : "", name + cut,
			 g->deleted ? " (deleted)" : "");
	col = fprintf(f, "%9s  %-5s  %s", util__fmt_bytes(b, sizeof(b), g->bytes),
		      mp_class_name(g->cls), what);
	if (g->by[0]) {
		utf8__esc_term(by, sizeof(by), g->by);
		/* the label after it, or under it when the line would pass 80 columns */
		if (col + 4 + chars_cut(by, 60) > TEXTWRAP_COLS)
			col = fprintf(f, "\n%*s", 18, "") - 1;
		fprintf(f, " <- %s", by);
	}
	fprintf(f, "\n");
}

/*
 * Where it grew: the run's mappings by growth, those made by the same code (or grown by
 * the same causes) together. The JSON has each phase's own.
 */
static void print_mappings(FILE *f, const struct model *m)
{
	struct mapgroups g;
	__u64 shown = 0;
	char b[24];
	size_t i;

	if (mapgroups__build(&g, m) || !g.n)
		goto cleanup;
	fprintf(f, "\nWhere it grew (mappings; <- what made them, or the causes that grew them)\n"
		   "%9s  %-5s  %s\n", "GROWTH", "CLASS", "MAPPING");
	for (i = 0; i < g.n && i < SUMMARY_MAPPINGS; i++) {
		print_group(f, &g.v[i]);
		shown += g.v[i].bytes;
	}
	if (g.n > i && g.total > shown)
		fprintf(f, "%9s         in %zu more\n", util__fmt_bytes(b, sizeof(b), g.total - shown),
			g.n - i);
cleanup:
	mapgroups__free(&g);
}

/* glibc malloc arenas: how many */
static void print_arenas(FILE *f, const struct model *m)
{
	if (!m->origins.arenas)
		return;
	textwrap__printf(f, 0, 2, "%llu glibc malloc arena%s created (one per thread that "
			 "mallocs, up to 8 per core; MALLOC_ARENA_MAX bounds them)",
			 (unsigned long long)m->origins.arenas, m->origins.arenas == 1 ? "" : "s");
}

static void print_mapping_notes(FILE *f, const struct model *m)
{
	char b[24];

	print_arenas(f, m);
	if (m->origins_lost || m->origins_capped)
		fprintf(f, "%llu mapping origins lost (ring buffer full), %llu smaller mappings "
			   "past the origin caps\n", (unsigned long long)m->origins_lost,
			(unsigned long long)m->origins_capped);

	if (m->vma_busy)
		fprintf(f, "%llu growth events could not be placed in one mapping (address space "
			   "locked until the thread ended, or a syscall over several mappings): "
			   "[unknown]\n",
			(unsigned long long)m->vma_busy);
	if (m->mappings_full)
		fprintf(f, "%llu growth events went under [unknown]: the mapping table was full\n",
			(unsigned long long)m->mappings_full);
	if (m->mapping_lost_bytes)
		fprintf(f, "%s of growth could not be charged to any mapping (map full)\n",
			util__fmt_bytes(b, sizeof(b), m->mapping_lost_bytes));
}

/* "  +4.00 MiB": cause c's bytes per request, if requests were seen */
static void print_per_request(FILE *f, const struct cause_requests *cr, size_t c)
{
	char b[24];
	double per;

	if (!cr->nsteady)
		return;
	if (causes__per_request(cr, c, &per))
		fprintf(f, " %9s", util__fmt_bytes(b, sizeof(b), (__u64)(per + 0.5)));
	else
		fprintf(f, " %9s", "-");
}

/* How much of the growth the stack samples carry: "526 stack samples carry 97.5% ..." */
static const char *sampling(char *buf, size_t len, const struct model *m)
{
	__u64 samples = 0, sampled = 0, growth = 0;
	unsigned int i;

	for (i = 0; i < m->norder; i++) {
		unsigned int id = m->order[i];

		samples += m->samples[id];
		sampled += m->sampled_bytes[id];
		growth += model__growth_total(&m->stats[id], false);
	}
	snprintf(buf, len, "%llu stack sample%s %.1f%% of the growth",
		 (unsigned long long)samples, samples == 1 ? " carries" : "s carry",
		 growth ? 100.0 * sampled / growth : 0.0);
	return buf;
}

/* Samples that did not make it, when some did not. */
static void print_stack_losses(FILE *f, const struct model *m)
{
	char line[256];
	size_t n = 0;

	if (m->lost_stacks)
		n += snprintf(line + n, sizeof(line) - n, ", %llu lost (ring buffer full)",
			      (unsigned long long)m->lost_stacks);
	if (m->stacks_capped)
		n += snprintf(line + n, sizeof(line) - n, ", %llu left out by --max-samples",
			      (unsigned long long)m->stacks_capped);
	if (m->unwind_failures)
		n += snprintf(line + n, sizeof(line) - n, ", %llu not unwound past the first frame",
			      (unsigned long long)m->unwind_failures);
	if (n)
		textwrap__printf(f, 0, 2, "stack samples: %s", line + 2);
}

/* Up to max of the unmatched growth's code paths, each "GROWTH [OF PEAK] PATH". */
static void print_paths(FILE *f, const struct codepaths *cp, size_t max, __s64 peak, int indent)
{
	char b[24], n[4 * CODEPATHS_NAME_MAX + 1];
	__u64 shown = 0;
	size_t i;
	int col;

	for (i = 0; i < cp->n && i < max; i++) {
		utf8__esc_term(n, sizeof(n), cp->v[i].name);
		col = fprintf(f, "%*s%9s", indent, "", util__fmt_bytes(b, sizeof(b), cp->v[i].bytes));
		if (peak > 0)
			col += fprintf(f, " %7.1f%%", 100.0 * cp->v[i].bytes / peak);
		fprintf(f, "  ");
		chars_cut(n, TEXTWRAP_COLS - col - 2);
		fprintf(f, "%s\n", n);
		shown += cp->v[i].bytes;
	}
	if (cp->n > i)
		fprintf(f, "%*s%9s%s  in %zu more code paths\n", indent, "",
			util__fmt_bytes(b, sizeof(b), cp->total - shown), peak > 0 ? "         " : "",
			cp->n - i);
}

/* "per request: the mean of requests 2-12" */
static void print_steady(FILE *f, const struct cause_requests *cr)
{
	unsigned int a = cr->steady[0] + 1, z = cr->steady[cr->nsteady - 1] + 1;

	if (z - a + 1 == cr->nsteady && cr->nsteady > 1)
		fprintf(f, "PER REQ: the mean over requests %u-%u", a, z);
	else
		fprintf(f, "PER REQ: the mean over %u request%s from request %u on", cr->nsteady,
			cr->nsteady == 1 ? "" : "s", a);
	fprintf(f, "%s\n", a > 1 ? " (the first's one-time costs left out)" : "");
}

/* No rule named a cause: the growth by code path instead. */
static void print_paths_only(FILE *f, const struct model *m, const struct codepaths *cp,
			     __s64 peak)
{
	char s[160];

	textwrap__printf(f, 0, 2, "What grew, by code path (no %s rule names a cause; %s)",
			 m->rules.preset ? m->rules.preset : "cause", sampling(s, sizeof(s), m));
	fprintf(f, "%9s %8s  %s\n", "GROWTH", "OF PEAK", "CODE PATH (innermost first)");
	print_paths(f, cp, SUMMARY_PATHS, peak, 0);
	print_stack_losses(f, m);
	fprintf(f, "\n");
}

/*
 * What grew: the sampled growth by named cause, with what to change for the causes of
 * most of it, and what each cause costs per request: the mean over the requests the request
 * fit runs over (the first left out from three on, as it carries one-time costs), so the
 * column adds up to the steady growth per request the requests section shows (sampled).
 * The growth no rule named: its code paths, when it is a part worth a look.
 */
static void print_causes(FILE *f, const struct model *m)
{
	struct cause_requests cr = {};
	struct codepaths cp = {};
	__s64 peak;
	struct cause_report r;
	char b[24], n[CAUSES_REMEDY_MAX], rem[CAUSES_REMEDY_MAX], s[160];
	__u64 covered = 0;
	size_t i, remedies = 0, left = 0;

	if (causes__attribute(m, NULL, NULL, &r) || !r.total)
		goto cleanup;
	peak = model__share_base(m, r.total);
	if (r.unmatched && codepaths__build(&cp, m))
		memset(&cp, 0, sizeof(cp));
	if (!r.n) {
		print_paths_only(f, m, &cp, peak);
		goto cleanup;
	}
	if (m->nrequests && causes__by_request(m, &cr))
		memset(&cr, 0, sizeof(cr));
	textwrap__printf(f, 0, 2, "What grew, by cause (%s rules; %s)",
			 m->rules.preset ? m->rules.preset : "the given", sampling(s, sizeof(s), m));
	fprintf(f, "%-40s %9s %8s%s\n", "CAUSE", "GROWTH", "OF PEAK",
		cr.nsteady ? "   PER REQ" : "");
	for (i = 0; i < r.n; i++) {
		utf8__esc_term(n, sizeof(n), r.v[i].cause->name);
		fprintf(f, "%-40.40s %9s %7.1f%%", n,
			util__fmt_bytes(b, sizeof(b), r.v[i].bytes),
			peak > 0 ? 100.0 * r.v[i].bytes / peak : 0.0);
		print_per_request(f, &cr, causes__index(m, r.v[i].cause));
		fprintf(f, "\n");
		causes__remedy(m, r.v[i].cause, rem, sizeof(rem));
		if (!rem[0])
			continue;
		/* what to change, for the causes of most of the growth */
		if (remedies < SUMMARY_REMEDIES && covered < SUMMARY_REMEDY_SHARE * r.total) {
			utf8__esc_term(n, sizeof(n), rem);
			fprintf(f, "    ");
			textwrap__print(f, 4, 4, n);
			remedies++;
		} else {
			left++;
		}
		covered += r.v[i].bytes;
	}
	if (r.unmatched) {
		fprintf(f, "%-40s %9s %7.1f%%", "other code paths (no rule names them)",
			util__fmt_bytes(b, sizeof(b), r.unmatched),
			peak > 0 ? 100.0 * r.unmatched / peak : 0.0);
		print_per_request(f, &cr, cr.ncauses);
		fprintf(f, "\n");
		if (r.unmatched >= SUMMARY_PATHS_SHARE * r.total)
			print_paths(f, &cp, 3, -1, 4);
	}
	if (cr.nsteady)
		print_steady(f, &cr);
	if (left)
		fprintf(f, "What to change for the other %zu: the JSON's causes[].remedy\n", left);
	print_stack_losses(f, m);
	fprintf(f, "\n");
cleanup:
	codepaths__free(&cp);
	causes__requests_free(&cr);
	causes__report_free(&r);
}

static void print_hists(FILE *f, const struct model *m)
{
	unsigned int i;
	int h;

	for (h = 0; h < MP_NR_HISTS; h++) {
		for (i = 0; i < m->norder; i++) {
			unsigned int id = m->order[i];
			const __u64 *slots = m->stats[id].hist[h];

			if (!hist__count(slots, MP_MAX_SLOTS))
				continue;
			fprintf(f, "\n%s: %s\n", m->names[id], hist_title[h]);
			hist__print(f, slots, MP_MAX_SLOTS, "bytes");
		}
	}
}

static void print_unmatched(FILE *f, const struct model *m)
{
	char b[3][256];
	unsigned int i;

	for (i = 0; i < m->nunmatched; i++) {
		const struct model_unmatched *u = &m->unmatched[i];

		/* a --request marker has no phase */
		fprintf(f, "--%s%s%s%s%s%s never attached: %s\n",
			u->phase[0] ? "phase " : "request ", u->phase, u->phase[0] ? "=" : "",
			utf8__esc_term(b[0], sizeof(b[0]), u->binary), u->binary[0] ? ":" : "",
			utf8__esc_term(b[1], sizeof(b[1]), u->symbol),
			utf8__esc_term(b[2], sizeof(b[2]), u->reason));
	}
}

void summary__print(FILE *f, const struct model *m, bool hists)
{
	__u64 lost = model__lost_events(m);

	char *head = NULL;
	size_t len = 0;
	FILE *h;

	fprintf(f, "\n");
	/* the headlines, wrapped at 80 columns */
	h = open_memstream(&head, &len);
	if (!h)
		h = f;
	/* an OOM kill is the headline */
	print_ooms(h, m);
	print_run_line(h, m);
	if (m->stop_reason[0])
		fprintf(h, "memphase ended the target: %s\n", m->stop_reason);
	print_peak(h, m);
	if (!m->markers_attached)
		fprintf(h, "no phase markers were found: everything is under '%s'\n", m->names[0]);
	print_unmatched(h, m);
	if (lost || m->lost_stacks)
		fprintf(h, "LOST: %llu events, %llu stacks (counts above may be short)\n",
			(unsigned long long)lost, (unsigned long long)m->lost_stacks);
	if (h != f) {
		fclose(h);
		textwrap__lines(f, head);
	}
	free(head);
	fprintf(f, "\n");
	settings__print(f, m);
	print_causes(f, m);
	summary__phase_table(f, m, m->end_ns);
	summary__gpu(f, m);
	requests__print(f, m);
	plateau__print(f, m);
	print_pressure(f, m);
	print_mappings(f, m);
	print_mapping_notes(f, m);
	if (hists)
		print_hists(f, m);
	fflush(f);
}

void summary__bpf_stats(FILE *f, const struct model *m)
{
	const struct model_bpf_stats *st = &m->bpf_stats;
	__u64 runs, ns;
	unsigned int i;

	if (!st->have)
		return;
	fprintf(f, "\nBPF program        RUNS      TOTAL_MS   NS/RUN\n");
	for (i = 0; i < st->nprogs; i++) {
		const struct model_prog_stats *p = &st->progs[i];

		fprintf(f, "%-18s %10llu %10.2f %8.0f\n", p->name, (unsigned long long)p->runs,
			p->run_time_ns / 1e6, p->runs ? (double)p->run_time_ns / p->runs : 0.0);
	}
	model__bpf_totals(st, &runs, &ns);
	fprintf(f, "%-18s %10llu %10.2f\n", "total", (unsigned long long)runs, ns / 1e6);
	fflush(f);
}
