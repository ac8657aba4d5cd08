// SPDX-License-Identifier: GPL-2.0
/* The text summary: fixed-width tables (<= 80 columns) and bcc-style histograms. */
#include <string.h>
#include "lib/hist.h"
#include "report/requests.h"
#include "report/summary.h"
#include "lib/utf8.h"
#include "lib/util.h"

static const char *const hist_title[MP_NR_HISTS] = {
	[MP_HIST_CALL_GROWTH] = "RSS growth per marker call",
	[MP_HIST_MMAP_SIZE] = "mmap request sizes",
};

/* The command line, escaped for the terminal: one line whatever the arguments hold. */
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
	double secs = (m->end_ns > m->start_ns ? m->end_ns - m->start_ns : 0) / 1e9;

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
	else
		fprintf(f, ", still running (detached)");
	fprintf(f, "\n");
}

static void print_peak(FILE *f, const struct model *m)
{
	const struct model_proc *root = model__main((struct model *)m);
	char b[5][72];

	if (!root)
		return;
	if (root->pid != m->root_pid)
		fprintf(f, "largest process: %s (pid %u), under the command's pid %u\n",
			utf8__esc_term(b[0], sizeof(b[0]), root->comm), root->pid, m->root_pid);
	fprintf(f, "RSS peak %s (anon %s, file %s, shmem %s; swap peak %s)\n",
		util__fmt_bytes(b[0], 24, root->peak_total),
		util__fmt_bytes(b[1], 24, root->peak[MP_ANON]),
		util__fmt_bytes(b[2], 24, root->peak[MP_FILE]),
		util__fmt_bytes(b[3], 24, root->peak[MP_SHMEM]),
		util__fmt_bytes(b[4], 24, root->peak[MP_SWAP]));
	if (m->nprocs + m->procs_recycled > 1)
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
		double t = (o->ts_ns > m->start_ns ? o->ts_ns - m->start_ns : 0) / 1e9;

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
	char b[2][24];

	if (!pressure_seen(m)) {
		fprintf(f, "\nmemory pressure: no direct reclaim, no swap-out%s\n",
			m->have_psi ? ", no PSI stall" : "");
		return;
	}
	fprintf(f, "\n%-10s %10s %9s %10s %10s %9s %9s\n", "PHASE", "RECLAIM", "RECLAIMS",
		"RECLAIMED", "SWAP-OUT", "PSI-SOME", "PSI-FULL");
	for (i = 0; i < m->norder; i++) {
		unsigned int id = m->order[i];
		const struct mp_phase_stats *s = &m->stats[id];

		fprintf(f, "%-10.10s %9.3fs %9llu %10s %10s", m->names[id], s->reclaim_ns / 1e9,
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
	int c;

	fprintf(f, "%-10s %7s %9s %6s %9s %9s %9s %9s\n", "PHASE", "TIME", "FAULTS", "CALLS",
		"+ANON", "+FILE", "+SHMEM", "+SWAP");
	for (i = 0; i < m->norder; i++) {
		unsigned int id = m->order[i];
		const struct mp_phase_stats *s = &m->stats[id];

		fprintf(f, "%-10.10s %6.2fs %9llu %6llu", m->names[id],
			model__phase_time(m, id, now_ns) / 1e9, (unsigned long long)s->faults,
			(unsigned long long)s->calls);
		for (c = 0; c < MP_NR_CLASSES; c++)
			fprintf(f, " %9s",
				util__fmt_bytes(b[c], 24, s->growth[mp_class_order[c]]));
		fprintf(f, "\n");
	}
	fprintf(f, "\n%-10s %9s %9s %9s %9s %9s %9s %9s\n", "PHASE", "-ANON", "-FILE", "-SHMEM",
		"-SWAP", "MMAP", "MUNMAP", "BRK");
	for (i = 0; i < m->norder; i++) {
		unsigned int id = m->order[i];
		const struct mp_phase_stats *s = &m->stats[id];

		fprintf(f, "%-10.10s", m->names[id]);
		for (c = 0; c < MP_NR_CLASSES; c++)
			fprintf(f, " %9s",
				util__fmt_bytes(b[c], 24, s->shrink[mp_class_order[c]]));
		fprintf(f, " %9s %9s %9s\n", util__fmt_bytes(b[4], 24, s->mmap_bytes),
			util__fmt_bytes(b[5], 24, s->munmap_bytes),
			util__fmt_bytes(b[6], 24, (__s64)s->brk_bytes - (__s64)s->brk_shrink_bytes));
	}
}

static void print_mappings(FILE *f, const struct model *m)
{
	unsigned int i, k;
	bool header = false;
	char b[24], p[4 * MODEL_PATH_MAX + 1];
	size_t n, cut;

	for (i = 0; i < m->norder; i++) {
		unsigned int id = m->order[i];

		for (k = 0; k < m->ntop[id] && k < 5; k++) {
			const struct model_mapping *mm = &m->top[id][k];

			if (!header) {
				fprintf(f, "\nTop mappings by growth\n%-10s %-6s %9s  %s\n",
					"PHASE", "CLASS", "GROWTH", "MAPPING");
				header = true;
			}
			/* long paths keep their end, the file name, cut on a character */
			utf8__esc_term(p, sizeof(p), mm->path);
			n = strlen(p);
			cut = n > 50 ? n - 47 : 0;
			while (cut && cut < n && ((unsigned char)p[cut] & 0xc0) == 0x80)
				cut++;
			fprintf(f, "%-10.10s %-6s %9s  %s%s%s\n", k ? "" : m->names[id],
				mp_class_name(mm->cls), util__fmt_bytes(b, sizeof(b), mm->bytes),
				cut ? "..." : "", p + cut, mm->deleted ? " (deleted)" : "");
		}
		if (m->nmappings[id] > k) {
			__u64 shown = 0;
			unsigned int j;

			for (j = 0; j < k; j++)
				shown += m->top[id][j].bytes;
			fprintf(f, "%-10s %-6s %9s  (%u more mappings)\n", "", "",
				util__fmt_bytes(b, sizeof(b), m->mapping_bytes[id] - shown),
				m->nmappings[id] - k);
		}
	}
}

static void print_mapping_notes(FILE *f, const struct model *m)
{
	char b[24];

	if (m->vma_busy)
		fprintf(f, "%llu faults found their address space locked (another thread in "
			   "mmap/mprotect): their growth is [unknown] unless on the heap\n",
			(unsigned long long)m->vma_busy);
	if (m->mappings_full)
		fprintf(f, "%llu growth events went under [unknown]: the mapping table was full\n",
			(unsigned long long)m->mappings_full);
	if (m->mapping_lost_bytes)
		fprintf(f, "%s of growth could not be charged to any mapping (map full)\n",
			util__fmt_bytes(b, sizeof(b), m->mapping_lost_bytes));
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
	fprintf(f, "\nstacks: %llu sample%s carry %.1f%% of the RSS growth\n  %llu lost, %llu "
		   "postponed by --max-samples, %llu not unwound past their first frame\n",
		(unsigned long long)samples, samples == 1 ? "" : "s",
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

void summary__print(FILE *f, const struct model *m)
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
	summary__phase_table(f, m, m->end_ns);
	requests__print(f, m);
	print_pressure(f, m);
	print_mappings(f, m);
	print_mapping_notes(f, m);
	print_stacks(f, m);
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
