// SPDX-License-Identifier: GPL-2.0
/* The text summary: fixed-width tables (<= 80 columns) and bcc-style histograms. */
#include <string.h>
#include "lib/hist.h"
#include "report/plateau.h"
#include "report/settings.h"
#include "report/requests.h"
#include "report/summary.h"
#include "lib/utf8.h"
#include "lib/util.h"
#include "model/causes.h"

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

static void print_cmd(FILE *f, const struct model *m)
{
	char b[256];
	size_t used = 0;
	char **a;

	if (!m->argv || !m->argv[0]) {
		fprintf(f, "?");
		return;
	}
	for (a = m->argv; *a && used < 60; a++)
		used += fprintf(f, "%s%s", a == m->argv ? "" : " ",
				utf8__esc_term(b, sizeof(b), *a));
	if (*a)
		fprintf(f, " ...");
}

static void print_run_line(FILE *f, const struct model *m)
{
	const struct model_proc *root = model__root((struct model *)m);
	double secs = model__rel_s(m, m->end_ns);

	fprintf(f, "memphase: ");
	print_cmd(f, m);
	fprintf(f, " (pid %u) observed for %.2f s", m->root_pid, secs);
	if (root && root->oom_killed)
		fprintf(f, ", OOM-killed");
	else if (root && root->exited && root->exit_signal)
		fprintf(f, ", killed by signal %d (%s)", root->exit_signal,
			strsignal(root->exit_signal));
	else if (root && root->exited && root->exit_code >= 0)
		fprintf(f, ", exited with code %d", root->exit_code);
	else if (m->window)
		fprintf(f, ", still running at the window's end");
	else
		fprintf(f, ", still running (detached)");
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
	fprintf(f, "RSS peak %s (anon %s, file %s, shmem %s; swap peak %s)%s\n",
		util__fmt_bytes(b[0], 24, m->tree_peak_total),
		util__fmt_bytes(b[1], 24, m->tree_peak[MP_ANON]),
		util__fmt_bytes(b[2], 24, m->tree_peak[MP_FILE]),
		util__fmt_bytes(b[3], 24, m->tree_peak[MP_SHMEM]),
		util__fmt_bytes(b[4], 24, m->tree_peak[MP_SWAP]),
		n > 1 ? ", the processes together" : "");
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

void summary__phase_table(FILE *f, const struct model *m, __u64 now_ns)
{
	char b[8][24];
	unsigned int i;
	int w = name_w(m);
	int c;

	fprintf(f, "%-*s %7s %9s %6s %9s %9s %9s %9s\n", w, "PHASE", "TIME", "FAULTS", "CALLS",
		"+ANON", "+FILE", "+SHMEM", "+SWAP");
	for (i = 0; i < m->norder; i++) {
		unsigned int id = m->order[i];
		const struct mp_phase_stats *s = &m->stats[id];

		fprintf(f, "%-*.*s %6.2fs %9llu %6llu", w, w, m->names[id],
			model__phase_time(m, id, now_ns) / 1e9, (unsigned long long)s->faults,
			(unsigned long long)s->calls);
		for (c = 0; c < MP_NR_CLASSES; c++)
			fprintf(f, " %9s",
				util__fmt_bytes(b[c], 24, s->growth[mp_class_order[c]]));
		fprintf(f, "\n");
	}
	fprintf(f, "\n%-*s %9s %9s %9s %9s %9s %9s %9s\n", w, "PHASE", "-ANON", "-FILE", "-SHMEM",
		"-SWAP", "MMAP", "MUNMAP", "BRK");
	for (i = 0; i < m->norder; i++) {
		unsigned int id = m->order[i];
		const struct mp_phase_stats *s = &m->stats[id];

		fprintf(f, "%-*.*s", w, w, m->names[id]);
		for (c = 0; c < MP_NR_CLASSES; c++)
			fprintf(f, " %9s",
				util__fmt_bytes(b[c], 24, s->shrink[mp_class_order[c]]));
		fprintf(f, " %9s %9s %9s\n", util__fmt_bytes(b[4], 24, s->mmap_bytes),
			util__fmt_bytes(b[5], 24, s->munmap_bytes),
			util__fmt_bytes(b[6], 24, (__s64)s->brk_bytes - (__s64)s->brk_shrink_bytes));
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

static void print_mappings(FILE *f, const struct model *m)
{
	const struct origin *o;
	unsigned int i, k;
	int col, w = name_w(m);
	bool header = false;
	char b[24], p[4 * MODEL_PATH_MAX + 1];
	size_t n, cut;

	for (i = 0; i < m->norder; i++) {
		unsigned int id = m->order[i];

		for (k = 0; k < m->ntop[id] && k < 5; k++) {
			const struct model_mapping *mm = &m->top[id][k];

			if (!header) {
				fprintf(f, "\nTop mappings by growth\n%-*s %-6s %9s  %s\n",
					w, "PHASE", "CLASS", "GROWTH", "MAPPING");
				header = true;
			}
			/* long paths keep their end, the file name, cut on a character */
			o = origins__at(&m->origins, mm->origin);
			/* a labelled anon mapping needs no address: the label names it */
			if (o && mm->kind == MP_MAP_ANON)
				snprintf(p, sizeof(p), "[anon %s]",
					 util__fmt_bytes(b, sizeof(b), mm->size));
			else
				utf8__esc_term(p, sizeof(p), mm->path);
			n = strlen(p);
			cut = n > 50 ? n - 47 : 0;
			while (cut && cut < n && ((unsigned char)p[cut] & 0xc0) == 0x80)
				cut++;
			col = fprintf(f, "%-*.*s %-6s %9s  %s%s%s", w, w, k ? "" : m->names[id],
				      mp_class_name(mm->cls),
				      util__fmt_bytes(b, sizeof(b), mm->bytes), cut ? "..." : "",
				      p + cut, mm->deleted ? " (deleted)" : "");
			/* the label after it, or under it when the line would pass 80 columns;
			 * the heap's and an arena's: what grew them in the phase (the JSON keeps
			 * who touched them first) */
			if (o) {
				char by[160];
				const char *lab = causes__label(m, mm->origin, id + 1, by,
								sizeof(by));

				utf8__esc_term(p, sizeof(p), lab ? lab : o->label);
				if (col + 4 + chars_cut(p, 47) > 80)
					fprintf(f, "\n%*s", w + 19, "");
				fprintf(f, " <- %s", p);
			}
			fprintf(f, "\n");
		}
		if (m->nmappings[id] > k) {
			__u64 shown = 0;
			unsigned int j;

			for (j = 0; j < k; j++)
				shown += m->top[id][j].bytes;
			fprintf(f, "%-*s %-6s %9s  (%u more mappings)\n", w, "", "",
				util__fmt_bytes(b, sizeof(b), m->mapping_bytes[id] - shown),
				m->nmappings[id] - k);
		}
	}
}

/* glibc malloc arenas: how many, and the first few with their growth */
static void print_arenas(FILE *f, const struct model *m)
{
	unsigned int shown = 0;
	char b[24], n[192], by[160];
	size_t i;

	if (!m->origins.arenas)
		return;
	fprintf(f, "%llu glibc malloc arena%s created (one per thread that mallocs, up to 8 per "
		   "core;\n  MALLOC_ARENA_MAX bounds them)\n",
		(unsigned long long)m->origins.arenas, m->origins.arenas == 1 ? "" : "s");
	for (i = 0; i < m->origins.n && shown < 8; i++) {
		const struct origin *o = &m->origins.v[i];

		if (!o->arena || !origins__counted(&m->origins, o))
			continue;
		fprintf(f, "  %-60.60s %9s", utf8__esc_term(n, sizeof(n), o->label),
			util__fmt_bytes(b, sizeof(b), o->grown));
		if (causes__label(m, (__u32)i + 1, 0, by, sizeof(by)))
			fprintf(f, "\n    grown by %s", utf8__esc_term(n, sizeof(n), by));
		fprintf(f, "\n");
		shown++;
	}
	if (m->origins.arenas > shown)
		fprintf(f, "  (%llu more)\n", (unsigned long long)(m->origins.arenas - shown));
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

/* text wrapped at 80 columns, each line indented by `indent` */
static void print_wrapped(FILE *f, const char *text, int indent)
{
	const char *s = text;
	int col = indent, len;

	fprintf(f, "%*s", indent, "");
	while (*s) {
		while (*s == ' ')
			s++;
		for (len = 0; s[len] && s[len] != ' '; len++)
			;
		if (!len)
			break;
		if (col > indent && col + 1 + len > 79) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		}
		col += fprintf(f, "%s%.*s", col > indent ? " " : "", len, s);
		s += len;
	}
	fprintf(f, "\n");
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

/*
 * What grew: the sampled growth by named cause, with what to change, and what each cause
 * costs per request: the mean over the requests the request fit runs over (the first left
 * out from three on, as it carries one-time costs), so the column adds up to the steady
 * growth per request the requests section shows (sampled).
 */
static void print_causes(FILE *f, const struct model *m)
{
	struct cause_requests cr = {};
	__s64 peak;
	struct cause_report r;
	char b[24], n[CAUSES_REMEDY_MAX], rem[CAUSES_REMEDY_MAX];
	size_t i;

	if (causes__attribute(m, NULL, NULL, &r) || !r.total) {
		causes__report_free(&r);
		return;
	}
	peak = model__share_base(m, r.total);
	if (m->nrequests && causes__by_request(m, &cr))
		memset(&cr, 0, sizeof(cr));
	fprintf(f, "What grew (sampled stacks, %s rules", m->rules.preset ? m->rules.preset :
		"no preset's");
	if (cr.nsteady)
		fprintf(f, "; per request: mean of %u request%s from request %u on", cr.nsteady,
			cr.nsteady == 1 ? "" : "s", cr.steady[0] + 1);
	fprintf(f, ")\n%-40s %9s %8s%s\n", "CAUSE", "GROWTH", "OF PEAK",
		cr.nsteady ? "   PER REQ" : "");
	for (i = 0; i < r.n; i++) {
		utf8__esc_term(n, sizeof(n), r.v[i].cause->name);
		fprintf(f, "%-40.40s %9s %7.1f%%", n,
			util__fmt_bytes(b, sizeof(b), r.v[i].bytes),
			peak > 0 ? 100.0 * r.v[i].bytes / peak : 0.0);
		print_per_request(f, &cr, causes__index(m, r.v[i].cause));
		fprintf(f, "\n");
		causes__remedy(m, r.v[i].cause, rem, sizeof(rem));
		if (rem[0]) {
			utf8__esc_term(n, sizeof(n), rem);
			print_wrapped(f, n, 4);
		}
	}
	if (r.unmatched) {
		fprintf(f, "%-40s %9s %7.1f%%", "(no rule matched: see the stacks)",
			util__fmt_bytes(b, sizeof(b), r.unmatched),
			peak > 0 ? 100.0 * r.unmatched / peak : 0.0);
		print_per_request(f, &cr, cr.ncauses);
		fprintf(f, "\n");
	}
	fprintf(f, "\n");
	causes__requests_free(&cr);
	causes__report_free(&r);
}

static void print_stacks(FILE *f, const struct model *m)
{
	__u64 samples = 0, sampled = 0, growth = 0;
	unsigned int i;

	for (i = 0; i < m->norder; i++) {
		unsigned int id = m->order[i];

		samples += m->samples[id];
		sampled += m->sampled_bytes[id];
		growth += model__growth_total(&m->stats[id], false);
	}
	if (!samples && !m->lost_stacks)
		return;
	fprintf(f, "\nstacks: %llu sample%s %.1f%% of the RSS growth\n  %llu lost, %llu "
		   "postponed by --max-samples, %llu not unwound past their first frame\n",
		(unsigned long long)samples, samples == 1 ? " carries" : "s carry",
		growth ? 100.0 * sampled / growth : 0.0, (unsigned long long)m->lost_stacks,
		(unsigned long long)m->stacks_capped, (unsigned long long)m->unwind_failures);
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

	fprintf(f, "\n");
	/* an OOM kill is the headline */
	print_ooms(f, m);
	print_run_line(f, m);
	if (m->stop_reason[0])
		fprintf(f, "memphase ended the target: %s\n", m->stop_reason);
	print_peak(f, m);
	if (!m->markers_attached)
		fprintf(f, "no phase markers were found: everything is under 'startup'\n");
	print_unmatched(f, m);
	if (lost || m->lost_stacks)
		fprintf(f, "LOST: %llu events, %llu stacks (counts above may be short)\n",
			(unsigned long long)lost, (unsigned long long)m->lost_stacks);
	fprintf(f, "\n");
	settings__print(f, m);
	print_causes(f, m);
	summary__phase_table(f, m, m->end_ns);
	fprintf(f, "\n");
	summary__gpu(f, m);
	requests__print(f, m);
	plateau__print(f, m);
	print_pressure(f, m);
	print_mappings(f, m);
	print_mapping_notes(f, m);
	print_stacks(f, m);
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
