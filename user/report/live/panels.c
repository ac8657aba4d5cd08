// SPDX-License-Identifier: GPL-2.0
/* The live view's panels (see panels.h), drawn with curses. */
#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hist.h"
#include "lib/util.h"
#include "lib/headroom.h"
#include "model/model.h"
#include "model/timeline.h"
#include "report/live/hists.h"
#include "report/live/panels.h"
#include "report/live/status.h"

#define LABEL_COLS	10		/* left column of the header lines and the strip */
#define WIDE_COLS	100		/* narrower: the header lines in their short forms */
#define COL_MIN_NS	100000000ULL	/* a strip column is at least 100 ms */
#define TABLE_WIDE	115		/* columns the table needs for the shrink half */

enum panel_pair {
	CP_WARN = 1,
	CP_BAR,
	CP_PHASE,
	CP_DIM,
};

void panels__colors(void)
{
	init_pair(CP_WARN, COLOR_RED, -1);
	init_pair(CP_BAR, COLOR_GREEN, -1);
	init_pair(CP_PHASE, COLOR_YELLOW, -1);
	init_pair(CP_DIM, COLOR_BLUE, -1);
}

static void put(int y, int x, attr_t a, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void put(int y, int x, attr_t a, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (y < 0 || y >= LINES || x < 0 || x >= COLS)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	attron(a);
	mvaddnstr(y, x, buf, COLS - x);
	attroff(a);
}

/* "RSS now     1.2 GiB   1.0 GiB ..." : a total, then one column per class */
static void class_row(int y, const char *label, __s64 total, const __s64 v[MP_NR_CLASSES])
{
	char b[32];
	int k;

	put(y, 0, A_BOLD, "%s", label);
	put(y, LABEL_COLS, 0, "%10s", util__fmt_bytes(b, sizeof(b), total));
	for (k = 0; k < MP_NR_CLASSES; k++)
		put(y, getcurx(stdscr), 0, " %10s",
		    util__fmt_bytes(b, sizeof(b), v[mp_class_order[k]]));
}

static attr_t pair(const struct panel_frame *f, int p)
{
	return f->colors ? COLOR_PAIR(p) : 0;
}

/* The title bar: the command cut to leave room for the time. */
int panels__title(const struct panel_frame *f, int y)
{
	char t[32];
	int k;

	move(y, 0);
	attron(A_REVERSE);
	hline(' ', COLS);
	snprintf(t, sizeof(t), "  %s%.1f s ", f->paused ? "[PAUSED]  " : "",
		 status__elapsed(f->m, f->now));
	k = COLS - (int)strlen(t) - 11;
	if (k > 3 && (int)strlen(f->title) > k)
		put(y, 0, A_REVERSE | A_BOLD, " memphase  %.*s...", k - 3, f->title);
	else
		put(y, 0, A_REVERSE | A_BOLD, " memphase  %s", f->title);
	if ((int)strlen(t) < COLS)
		put(y, COLS - strlen(t), A_REVERSE | A_BOLD, "%s", t);
	attroff(A_REVERSE);
	return y + 1;
}

/* The current phase, for how long, and the processes still running. */
int panels__phase(const struct panel_frame *f, int y)
{
	const struct model *m = f->m;
	unsigned int i, nlive = 0;
	size_t used = 0;
	char pids[96];

	pids[0] = '\0';
	for (i = 0; i < m->nprocs; i++) {
		if (!model_proc__followed(&m->procs[i]))
			continue;
		if (nlive++ < 6 && used < sizeof(pids) - 16)
			used += snprintf(pids + used, sizeof(pids) - used, "%s%u",
					 used ? " " : "", m->procs[i].pid);
	}
	put(y, 0, A_BOLD, "phase");
	put(y, LABEL_COLS, A_BOLD | pair(f, CP_PHASE), "%s", status__phase_name(m, m->cur_phase));
	put(y, getcurx(stdscr), 0, "  for %.1f s   processes %u%s%s%s",
	    m->finished || f->now < m->phase_since_ns ? 0 : (f->now - m->phase_since_ns) / 1e9,
	    nlive, nlive ? " (pid " : "", pids, nlive > 6 ? " ...)" : nlive ? ")" : "");
	if (!m->markers_attached)
		put(y, getcurx(stdscr), pair(f, CP_WARN), "   no phase markers attached");
	return y + 1;
}

/* RSS now and at peak: a total, then one column per class. */
int panels__rss(const struct panel_frame *f, int y)
{
	put(y, LABEL_COLS, A_BOLD, "%10s %10s %10s %10s %10s", "total", "anon", "file",
	    "shmem", "swap");
	y++;
	class_row(y++, "RSS now", f->c->total, f->c->rss);
	class_row(y++, "RSS peak", f->c->peak_total, f->c->peak);
	return y;
}

/* The system's memory and PSI, then the memory cgroup and its room. */
int panels__memory(const struct panel_frame *f, int y)
{
	const struct sysmem *sm = f->sm;
	char b[4][32];

	put(y, 0, A_BOLD, "system");
	if (sm && sm->have_meminfo && COLS < WIDE_COLS) {
		/* 80 columns: what is left, not of how much */
		put(y, LABEL_COLS, 0, "MemAvailable %s  swap free %s",
		    util__fmt_bytes(b[0], 32, sm->mem_available),
		    util__fmt_bytes(b[2], 32, sm->swap_free));
		if (sm->have_psi)
			put(y, getcurx(stdscr), 0, "  PSI some %.2f%% full %.2f%%",
			    sm->psi_some_avg10, sm->psi_full_avg10);
	} else if (sm && sm->have_meminfo) {
		put(y, LABEL_COLS, 0, "MemAvailable %s of %s   swap free %s of %s",
		    util__fmt_bytes(b[0], 32, sm->mem_available),
		    util__fmt_bytes(b[1], 32, sm->mem_total),
		    util__fmt_bytes(b[2], 32, sm->swap_free),
		    util__fmt_bytes(b[3], 32, sm->swap_total));
		if (sm->have_psi)
			put(y, getcurx(stdscr), 0, "   PSI some %.2f%% full %.2f%%",
			    sm->psi_some_avg10, sm->psi_full_avg10);
	} else {
		put(y, LABEL_COLS, pair(f, CP_DIM), "reading /proc/meminfo...");
	}
	y++;

	put(y, 0, A_BOLD, "cgroup");
	if (sm && sm->cg_version && sm->cg_limited)
		/* the path last: a narrow terminal cuts it, not the room */
		put(y, LABEL_COLS, 0, "limit %s, usage %s, room %s (v%d %s)",
		    util__fmt_bytes(b[0], 32, sm->cg_limit),
		    util__fmt_bytes(b[1], 32, sm->cg_limit_usage),
		    util__fmt_bytes(b[2], 32, f->c->fc.cg_room), sm->cg_version,
		    sm->cg_limit_path);
	else if (sm && sm->cg_version)
		put(y, LABEL_COLS, 0, "no limit, usage %s (v%d %s)",
		    util__fmt_bytes(b[0], 32, sm->cg_usage), sm->cg_version, sm->cg_path);
	else
		put(y, LABEL_COLS, pair(f, CP_DIM), "no memory cgroup");
	return y + 1;
}

/* The growth rate, then the projected OOM (highlighted when within warn_s). */
int panels__forecast(const struct panel_frame *f, int y)
{
	const struct forecast *fc = &f->c->fc;
	char eta[32], eta2[32], rate[40], all[40];
	attr_t warn;

	put(y, 0, A_BOLD, "growth");
	if (fc->have_rate) {
		put(y, LABEL_COLS, A_BOLD, "%s", status__rate(rate, sizeof(rate), fc->rate));
		put(y, getcurx(stdscr), 0, " anon+shmem+swap");
		if (fc->have_rate_all)
			put(y, getcurx(stdscr), 0, "   (resident anon+file+shmem %s)",
			    status__rate(all, sizeof(all), fc->rate_all));
	} else {
		put(y, LABEL_COLS, pair(f, CP_DIM), "measuring...");
	}
	y++;

	put(y, 0, A_BOLD, "forecast");
	warn = forecast__warn(fc, f->warn_s) ? A_BOLD | A_REVERSE | pair(f, CP_WARN) : A_BOLD;
	if (fc->have_oom) {
		put(y, LABEL_COLS, warn, "OOM in %s at %s", status__eta(eta, sizeof(eta), fc->oom_s),
		    status__rate(rate, sizeof(rate), fc->rate));
		put(y, getcurx(stdscr), 0, " (%s)",
		    fc->by_cgroup ? "cgroup limit" : "MemAvailable + free swap");
		if (fc->by_cgroup && fc->have_sys_oom)
			put(y, getcurx(stdscr), 0, "   system: in %s",
			    status__eta(eta2, sizeof(eta2), fc->sys_oom_s));
		else if (!fc->by_cgroup && fc->have_cg_oom)
			put(y, getcurx(stdscr), 0, "   cgroup: in %s",
			    status__eta(eta2, sizeof(eta2), fc->cg_oom_s));
	} else if (fc->have_rate) {
		put(y, LABEL_COLS, 0, "not growing: no OOM projected");
	} else {
		put(y, LABEL_COLS, pair(f, CP_DIM), "-");
	}
	return y + 1;
}

/*
 * Pinned host memory and VRAM, a row each when there is any: pinned and managed held now
 * and at peak; the observed processes' VRAM, their devices' free memory, the rate and the
 * time until it is full.
 */
int panels__gpu(const struct panel_frame *f, int y)
{
	const struct model_gpu *g = &f->m->gpu;
	const struct forecast *fc = &f->c->fc;
	char b[4][32], rate[40], eta[32];

	if (g->probes) {
		put(y, 0, A_BOLD, "pinned");
		put(y, LABEL_COLS, 0, "%s (peak %s)   managed %s (peak %s)",
		    util__fmt_bytes(b[0], 32, g->current[MP_ALLOC_PINNED]),
		    util__fmt_bytes(b[1], 32, g->peak[MP_ALLOC_PINNED]),
		    util__fmt_bytes(b[2], 32, g->current[MP_ALLOC_MANAGED]),
		    util__fmt_bytes(b[3], 32, g->peak[MP_ALLOC_MANAGED]));
		y++;
	}
	if (!g->nvml)
		return y;
	put(y, 0, A_BOLD, "VRAM");
	if (!fc->have_vram) {
		put(y, LABEL_COLS, pair(f, CP_DIM), "reading NVML...");
		return y + 1;
	}
	put(y, LABEL_COLS, 0, "%s (peak %s)   free %s",
	    util__fmt_bytes(b[0], 32, fc->vram), util__fmt_bytes(b[1], 32, g->vram_peak),
	    util__fmt_bytes(b[2], 32, fc->vram_free));
	if (fc->have_vram_full)
		put(y, getcurx(stdscr), A_BOLD, "   full in %s at %s",
		    status__eta(eta, sizeof(eta), fc->vram_full_s),
		    status__rate(rate, sizeof(rate), fc->vram_rate));
	else if (fc->have_vram_rate)
		put(y, getcurx(stdscr), 0, "   not growing");
	return y + 1;
}

/* A row only when something was lost. */
int panels__lost(const struct panel_frame *f, int y)
{
	const struct model *m = f->m;

	if (!model__lost_events(m) && !m->lost_stacks)
		return y;
	put(y, 0, A_BOLD | pair(f, CP_WARN),
	    "LOST      %llu events (kernel %llu, model %llu), %llu stacks: counts may be short",
	    (unsigned long long)model__lost_events(m), (unsigned long long)m->lost_kernel,
	    (unsigned long long)m->lost_model, (unsigned long long)m->lost_stacks);
	return y + 1;
}

int panels__table(const struct panel_frame *f, int y, int max_rows)
{
	static const char *const gname[] = { "+ANON", "+FILE", "+SHMEM", "+SWAP" };
	static const char *const sname[] = { "-ANON", "-FILE", "-SHMEM", "-SWAP" };
	const struct model *m = f->m;
	bool wide = COLS >= TABLE_WIDE;
	unsigned int i, sel = f->sel, first = 0;
	char b[32];
	int k;

	put(y, 0, A_BOLD | A_UNDERLINE, "  %-14s %8s %9s", "PHASE", "TIME", "FAULTS");
	for (k = 0; k < MP_NR_CLASSES; k++)
		put(y, getcurx(stdscr), A_BOLD | A_UNDERLINE, " %9s", gname[k]);
	for (k = 0; wide && k < MP_NR_CLASSES; k++)
		put(y, getcurx(stdscr), A_BOLD | A_UNDERLINE, " %9s", sname[k]);
	y++;
	/* keep the selected row visible when the phases do not fit */
	for (i = 0; i < m->norder; i++)
		if (m->order[i] == sel && (int)i >= max_rows - 1)
			first = i - (max_rows - 2);
	for (i = first; i < m->norder && (int)(i - first) < max_rows - 1; i++) {
		unsigned int id = m->order[i];
		const struct mp_phase_stats *s = &m->stats[id];
		attr_t a = id == m->cur_phase ? A_BOLD : 0;

		put(y, 0, a, "%c%c%-14.14s %7.2fs %9llu", id == sel ? '>' : ' ',
		    id == m->cur_phase ? '*' : ' ', status__phase_name(m, id),
		    model__phase_time(m, id, f->now) / 1e9, (unsigned long long)s->faults);
		for (k = 0; k < MP_NR_CLASSES; k++)
			put(y, getcurx(stdscr), a, " %9s",
			    util__fmt_bytes(b, sizeof(b), s->growth[mp_class_order[k]]));
		for (k = 0; wide && k < MP_NR_CLASSES; k++)
			put(y, getcurx(stdscr), a, " %9s",
			    util__fmt_bytes(b, sizeof(b), s->shrink[mp_class_order[k]]));
		if (id == sel)
			mvchgat(y, 0, -1, A_REVERSE | a, 0, NULL);
		y++;
	}
	return y;
}

/* The bcc-style histogram of the selected phase, from hist__print, in rows lines. */
int panels__hist(const struct panel_frame *f, int y, int rows)
{
	const struct model *m = f->m;
	unsigned int id = f->sel;
	const struct live_hist *h = hists__cur(f->hists);
	const __u64 *slots = hists__slots(f->hists, m, id);
	int first = -1, last = -1, lo, hi, i, n = 0;
	char *buf = NULL, *p, *lines[MP_MAX_SLOTS + 1];
	size_t len = 0;
	__u64 total;
	FILE *mf;

	if (rows < 1 || !slots)
		return y;
	total = hist__count(slots, MP_MAX_SLOTS);
	put(y, 0, A_BOLD, "HISTOGRAM %s: %s", status__phase_name(m, id), h->title);
	/* narrower: the short form ("h: next" names no histogram) */
	if (COLS >= WIDE_COLS)
		put(y, getcurx(stdscr), 0, "  (%llu samples%s)   h: show %s",
		    (unsigned long long)total, f->follow ? ", follows the current phase" : "",
		    hists__peek(f->hists)->title);
	else
		put(y, getcurx(stdscr), 0, "  (%llu%s)  h: next", (unsigned long long)total,
		    f->follow ? ", following" : "");
	y++;
	if (!total) {
		if (rows > 1)
			put(y, 2, pair(f, CP_DIM), "(empty so far)");
		return y + 1;
	}
	mf = open_memstream(&buf, &len);
	if (!mf)
		return y;
	hist__print(mf, slots, MP_MAX_SLOTS, h->unit);
	fclose(mf);
	for (p = buf; p && *p && n < MP_MAX_SLOTS + 1; n++) {
		lines[n] = p;
		p = strchr(p, '\n');
		if (p)
			*p++ = '\0';
	}
	for (i = 0; i < MP_MAX_SLOTS; i++) {
		if (!slots[i])
			continue;
		if (first < 0)
			first = i;
		last = i;
	}
	/* lines[1 + k] is slot first + k; trim the lighter end until it fits */
	lo = 0;
	hi = last - first;
	while (hi - lo + 2 > rows - 1 && hi > lo) {
		if (slots[first + lo] <= slots[first + hi])
			lo++;
		else
			hi--;
	}
	if (rows > 1 && n > 0)
		put(y++, 2, A_BOLD, "%s", lines[0]);
	for (i = lo; i <= hi && 1 + i < n && rows > 2; i++) {
		char *bar = strchr(lines[1 + i], '|');

		put(y, 2, 0, "%s", lines[1 + i]);
		/* colour the bar */
		if (bar && f->colors)
			mvchgat(y, 2 + (bar - lines[1 + i]) + 1, strcspn(bar + 1, "|"), 0,
				CP_BAR, NULL);
		y++;
	}
	free(buf);
	return y;
}

static void draw_cell(const struct panel_frame *f, int y, int x, int level)
{
	static const char *const blocks[] = { " ", "\u2581", "\u2582", "\u2583", "\u2584",
					      "\u2585", "\u2586", "\u2587", "\u2588" };
	static const char ascii[] = "  ..::||#";

	if (level < 0)
		level = 0;
	if (level > 8)
		level = 8;
	if (f->utf8)
		mvaddstr(y, x, blocks[level]);
	else
		mvaddch(y, x, ascii[level]);
}

/* RSS over time: a bar per column, the phase changes written under it. */
int panels__strip(const struct panel_frame *f, int y, int h)
{
	const struct timeline *tl = f->tl;
	const struct timeline_sample *s0, *s;
	int w = COLS - LABEL_COLS - 1, ncols = 0, col, r, i;
	unsigned int n, k;
	__s64 val[512], vmax = 0;
	int chg[512];
	__u64 span, col_ns, t_end = f->now;
	char b[32], b2[32];

	if (w > 512)
		w = 512;
	if (!tl || w < 8 || h < 1 || !(n = timeline__len(tl)) || !(s0 = timeline__at(tl, 0)))
		return y;
	for (k = n; k > 0; k--) {
		s = timeline__at(tl, k - 1);
		if (s->ts_ns <= t_end)
			break;
	}
	n = k;
	if (!n)
		return y;
	span = timeline__at(tl, n - 1)->ts_ns - s0->ts_ns;
	col_ns = span / (w - 1) + 1;
	if (col_ns < COL_MIN_NS)
		col_ns = COL_MIN_NS;
	for (i = 0; i < w; i++) {
		val[i] = -1;
		chg[i] = -1;
	}
	for (k = 0; k < n; k++) {
		__s64 v;

		s = timeline__at(tl, k);
		col = (s->ts_ns - s0->ts_ns) / col_ns;
		if (col >= w)
			col = w - 1;
		v = timeline__sum(s, TIMELINE_CLASS(MP_ANON) | TIMELINE_CLASS(MP_FILE) |
					     TIMELINE_CLASS(MP_SHMEM));
		if (v > val[col])
			val[col] = v;
		if (s->flags & TIMELINE_PHASE_CHANGED)
			chg[col] = s->phase;
		if (v > vmax)
			vmax = v;
		if (col > ncols - 1)
			ncols = col + 1;
	}
	put(y, 0, A_BOLD, "RSS over time");
	put(y, getcurx(stdscr), 0, " (anon+file+shmem): %.1f s, %.1f s per column, max %s",
	    (f->now > s0->ts_ns ? f->now - s0->ts_ns : 0) / 1e9, col_ns / 1e9,
	    util__fmt_bytes(b, sizeof(b), vmax));
	y++;
	put(y, 0, 0, "%9s", util__fmt_bytes(b2, sizeof(b2), vmax));
	if (h > 1)
		put(y + h - 1, 0, 0, "%9s", "0");
	attron(pair(f, CP_BAR));
	for (col = 0; col < ncols; col++) {
		__s64 v;
		int level;

		/* a column without a sample carries the one before */
		if (val[col] < 0)
			val[col] = col ? val[col - 1] : 0;
		v = val[col];
		level = vmax > 0 ? (int)((double)v * h * 8 / vmax + 0.5) : 0;
		if (v > 0 && level == 0)
			level = 1;
		for (r = 0; r < h; r++)
			draw_cell(f, y + r, LABEL_COLS + col, level - 8 * (h - 1 - r));
	}
	attroff(pair(f, CP_BAR));
	y += h;
	/* the phase names where the phase changed, cut at the next change */
	for (col = 0; col < ncols; col++) {
		int next, room;

		if (chg[col] < 0)
			continue;
		for (next = col + 1; next < ncols && chg[next] < 0; next++)
			;
		room = (next < ncols ? next : COLS - LABEL_COLS) - col;
		if (room < 1)
			room = 1;
		attron(A_BOLD | pair(f, CP_PHASE));
		mvaddnstr(y, LABEL_COLS + col, status__phase_name(f->m, chg[col]),
			  room > 1 ? room - 1 : 1);
		attroff(A_BOLD | pair(f, CP_PHASE));
	}
	put(y, 0, pair(f, CP_DIM), "%9s", "phase");
	return y + 1;
}

/* The message line, then the help line. */
void panels__footer(const struct panel_frame *f)
{
	if (f->msg[0])
		put(LINES - 2, 0, A_BOLD | pair(f, CP_WARN), "%s", f->msg);
	move(LINES - 1, 0);
	attron(A_REVERSE);
	hline(' ', COLS);
	if (COLS < WIDE_COLS)
		put(LINES - 1, 0, A_REVERSE, " q quit  tab/down/up phase  f follow  h histogram  "
		    "p %s", f->paused ? "resume" : "pause");
	else
		put(LINES - 1, 0, A_REVERSE,
		    " q quit   tab/down/up select phase   f follow current phase   h histogram   "
		    "p %s", f->paused ? "resume" : "pause");
	attroff(A_REVERSE);
}

void panels__draw(const struct panel_frame *f)
{
	int y, bottom, gap, strip_h, strip_rows, table_rows, avail;

	erase();
	y = panels__title(f, 0);
	y = panels__phase(f, y);
	y = panels__rss(f, y);
	y = panels__memory(f, y);
	y = panels__forecast(f, y);
	y = panels__gpu(f, y);
	y = panels__lost(f, y);
	/* below the header: table, histogram, strip; spacing and strip shrink first */
	bottom = LINES - 2;	/* message line, then the help line */
	gap = LINES >= 32;
	strip_h = LINES >= 36 ? 4 : LINES >= 28 ? 3 : LINES >= 20 ? 1 : 0;
	strip_rows = strip_h ? strip_h + 2 : 0;
	avail = bottom - y - 3 * gap - strip_rows;
	/* the table takes what it needs up to half, keeping the selected row visible */
	table_rows = (int)f->m->norder + 1;
	if (table_rows > avail / 2)
		table_rows = avail / 2 > 3 ? avail / 2 : 3;
	y = panels__table(f, y + gap, table_rows) + gap;
	avail = bottom - y - strip_rows - gap;
	if (avail >= 1)
		panels__hist(f, y, avail);
	if (strip_rows && bottom - strip_rows >= y)
		panels__strip(f, bottom - strip_rows, strip_h);

	panels__footer(f);
	refresh();
}
