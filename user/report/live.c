// SPDX-License-Identifier: GPL-2.0
/* The live view: ncurses full screen on a terminal, else status lines on stderr. */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/hist.h"
#include "report/live.h"
#include "model/model.h"
#include "model/headroom.h"
#include "model/timeline.h"
#include "lib/utf8.h"
#include "lib/util.h"
#include "report/live/forecast.h"
#include "report/live/hists.h"

#define LIVE_MSG_MAX		256
#define LIVE_CAPTURE_MAX	(64 * 1024)
#define LIVE_LABEL_COLS		10	/* left column of the header lines and the strip */
#define LIVE_COL_MIN_NS		100000000ULL	/* a strip column is at least 100 ms */
#define LIVE_TABLE_WIDE		111	/* columns the table needs for the shrink half */

enum live_pair {
	CP_WARN = 1,
	CP_BAR,
	CP_PHASE,
	CP_DIM,
};

/* What the view shows, derived from the model, the timeline and sysmem. */
struct live_calc {
	__s64 rss[MP_NR_CLASSES];
	__s64 total;			/* anon + file + shmem */
	__s64 peak[MP_NR_CLASSES];
	__s64 peak_total;
	struct forecast fc;
};

/* One frame's inputs: live, or frozen while paused. */
struct frame {
	const struct model *m;
	const struct timeline *tl;
	const struct sysmem *sm;
	const struct live_calc *c;
	__u64 now;
};

struct live {
	struct live_opts o;
	char *title;
	bool tui;
	SCREEN *scr;
	bool utf8;
	bool colors;
	char *old_ctype;
	bool restored;

	/* stderr while the TUI runs */
	int saved_err;			/* the real stderr, -1 */
	int cap_fd;			/* read end of the capture pipe, -1 */
	char *cap;
	size_t cap_len;
	size_t cap_lost;
	char line[LIVE_MSG_MAX];	/* partial line from the pipe */
	size_t line_len;
	char msg[LIVE_MSG_MAX];		/* the message line */

	/* view state */
	bool follow;			/* the selection follows the current phase */
	unsigned int sel;
	struct hists hists;		/* the histogram shown, 'h' for the next */
	bool paused;
	struct model *snap;
	struct sysmem snap_sm;
	bool snap_have_sm;
	struct live_calc snap_calc;
	__u64 snap_now;
	bool dirty;
	__u64 last_draw;
	__u64 next_status;
	bool started;
	bool warned;
	__s64 peak[MP_NR_CLASSES];
	__s64 peak_total;
};

/* ---- formatting ---- */

/* util__fmt_bytes without the space: "1.21GiB" */
static const char *fmt_size(char *buf, size_t len, __s64 v)
{
	char tmp[32], *s, *d;

	util__fmt_bytes(tmp, sizeof(tmp), v);
	for (s = tmp, d = buf; *s && d < buf + len - 1; s++)
		if (*s != ' ')
			*d++ = *s;
	*d = '\0';
	return buf;
}

/* "+12.0 MiB/s" */
static const char *fmt_rate(char *buf, size_t len, double rate)
{
	char b[32];

	snprintf(buf, len, "%s%s/s", rate >= 0 ? "+" : "", util__fmt_bytes(b, sizeof(b), rate));
	return buf;
}

const char *live__fmt_eta(char *buf, size_t len, double secs)
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

/* ---- derived values ---- */

static void calc(struct live_calc *c, const struct model *m, const struct timeline *tl,
		 const struct sysmem *sm, __u64 now)
{
	unsigned int i;
	int k;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < m->nprocs; i++) {
		const struct model_proc *p = &m->procs[i];

		for (k = 0; k < MP_NR_CLASSES; k++) {
			if (!p->exited)
				c->rss[k] += p->rss[k];
			if (p->peak[k] > c->peak[k])
				c->peak[k] = p->peak[k];
		}
		if (p->peak_total > c->peak_total)
			c->peak_total = p->peak_total;
	}
	c->total = c->rss[MP_ANON] + c->rss[MP_FILE] + c->rss[MP_SHMEM];
	for (k = 0; k < MP_NR_CLASSES; k++)
		if (c->rss[k] > c->peak[k])
			c->peak[k] = c->rss[k];
	if (c->total > c->peak_total)
		c->peak_total = c->total;
	forecast__compute(&c->fc, m, tl, sm, now);
}

static double elapsed_s(const struct model *m, __u64 now)
{
	__u64 end = m->finished ? m->end_ns : now;

	return end > m->start_ns ? (end - m->start_ns) / 1e9 : 0;
}

static const char *phase_name(const struct model *m, unsigned int id)
{
	return id < m->nphases && m->names[id][0] ? m->names[id] : "?";
}

static int format_status(char *buf, size_t len, const struct model *m,
			 const struct live_calc *c, const struct sysmem *sm, __u64 now)
{
	char b[8][32], rate[40], avail[32], cg[72], oom[32];

	if (c->fc.have_rate)
		snprintf(rate, sizeof(rate), "%s%s/s", c->fc.rate >= 0 ? "+" : "",
			 fmt_size(b[5], sizeof(b[5]), c->fc.rate));
	else
		snprintf(rate, sizeof(rate), "-");
	if (sm && sm->have_meminfo)
		fmt_size(avail, sizeof(avail), sm->mem_available);
	else
		snprintf(avail, sizeof(avail), "-");
	if (sm && sm->cg_version)
		snprintf(cg, sizeof(cg), "%s/%s", fmt_size(b[6], sizeof(b[6]), sm->cg_usage),
			 sm->cg_limited ? fmt_size(b[7], sizeof(b[7]), sm->cg_limit) : "-");
	else
		snprintf(cg, sizeof(cg), "-");
	if (c->fc.have_oom)
		snprintf(oom, sizeof(oom), "~%.0fs", c->fc.oom_s);
	else
		snprintf(oom, sizeof(oom), "-");
	return snprintf(buf, len,
			"memphase: t=%.1fs phase=%s rss=%s anon=%s file=%s shmem=%s swap=%s "
			"rate=%s avail=%s cg=%s oom_in=%s lost=%llu",
			elapsed_s(m, now), phase_name(m, m->cur_phase),
			fmt_size(b[0], sizeof(b[0]), c->total),
			fmt_size(b[1], sizeof(b[1]), c->rss[MP_ANON]),
			fmt_size(b[2], sizeof(b[2]), c->rss[MP_FILE]),
			fmt_size(b[3], sizeof(b[3]), c->rss[MP_SHMEM]),
			fmt_size(b[4], sizeof(b[4]), c->rss[MP_SWAP]), rate, avail, cg, oom,
			(unsigned long long)model__lost_events(m));
}

int live__format_status(char *buf, size_t len, const struct model *m,
			const struct timeline *tl, const struct sysmem *sm, __u64 now_ns)
{
	struct live_calc c;

	calc(&c, m, tl, sm, now_ns);
	return format_status(buf, len, m, &c, sm, now_ns);
}

/* ---- stderr capture ---- */

static void set_msg(struct live *l, const char *s)
{
	if (!strncmp(s, "memphase: ", 10))
		s += 10;
	utf8__esc_term(l->msg, sizeof(l->msg), s);
	l->dirty = true;
}

static void capture_add(struct live *l, const char *s, size_t n)
{
	size_t i;

	if (!l->cap)
		l->cap = malloc(LIVE_CAPTURE_MAX);
	if (!l->cap || l->cap_len + n > LIVE_CAPTURE_MAX) {
		l->cap_lost += n;
	} else {
		memcpy(l->cap + l->cap_len, s, n);
		l->cap_len += n;
	}
	/* the last complete line becomes the message line */
	for (i = 0; i < n; i++) {
		if (s[i] == '\n') {
			l->line[l->line_len] = '\0';
			if (l->line_len)
				set_msg(l, l->line);
			l->line_len = 0;
		} else if (l->line_len < sizeof(l->line) - 1) {
			l->line[l->line_len++] = s[i] == '\t' ? ' ' : s[i];
		}
	}
}

static void capture_drain(struct live *l)
{
	char buf[4096];
	ssize_t n;

	if (l->cap_fd < 0)
		return;
	while ((n = read(l->cap_fd, buf, sizeof(buf))) > 0)
		capture_add(l, buf, n);
}

static int capture_start(struct live *l)
{
	int p[2];

	fflush(stderr);
	l->saved_err = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (l->saved_err < 0)
		return -errno;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK)) {
		close(l->saved_err);
		l->saved_err = -1;
		return -errno;
	}
	/* a full pipe drops messages (EAGAIN) instead of blocking memphase */
	dup2(p[1], STDERR_FILENO);
	close(p[1]);
	l->cap_fd = p[0];
	return 0;
}

static void capture_stop(struct live *l)
{
	if (l->saved_err < 0)
		return;
	fflush(stderr);
	capture_drain(l);
	dup2(l->saved_err, STDERR_FILENO);
	close(l->saved_err);
	l->saved_err = -1;
	close(l->cap_fd);
	l->cap_fd = -1;
	if (l->cap_len && write(STDERR_FILENO, l->cap, l->cap_len) < 0)
		l->cap_lost += l->cap_len;
	if (l->line_len)
		fprintf(stderr, "%.*s\n", (int)l->line_len, l->line);
	if (l->cap_lost)
		fprintf(stderr, "memphase: %zu bytes of messages were lost\n", l->cap_lost);
}

/* ---- terminal restoration on every exit path ---- */

static struct live *live_active;
static const int crash_sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
static struct sigaction crash_old[sizeof(crash_sigs) / sizeof(crash_sigs[0])];

static void restore(struct live *l)
{
	unsigned int i;

	if (l->restored)
		return;
	l->restored = true;
	if (l->tui) {
		endwin();
		delscreen(l->scr);
		l->scr = NULL;
		for (i = 0; i < sizeof(crash_sigs) / sizeof(crash_sigs[0]); i++)
			sigaction(crash_sigs[i], &crash_old[i], NULL);
	}
	capture_stop(l);
	if (l->old_ctype) {
		setlocale(LC_CTYPE, l->old_ctype);
		free(l->old_ctype);
		l->old_ctype = NULL;
	}
	if (live_active == l)
		live_active = NULL;
}

static void at_exit(void)
{
	if (live_active)
		restore(live_active);
}

/* Best effort: leave a usable terminal behind, then crash as before. */
static void on_crash(int sig)
{
	struct live *l = live_active;

	if (l && !l->restored) {
		l->restored = true;
		endwin();
		if (l->saved_err >= 0)
			dup2(l->saved_err, STDERR_FILENO);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ---- setup ---- */

static int tui_start(struct live *l)
{
	struct sigaction sa = { .sa_handler = on_crash, .sa_flags = SA_RESETHAND };
	static bool registered;
	const char *cur, *term = getenv("TERM");
	unsigned int i;

	/* a terminal that cannot address the cursor gets status lines */
	if (!term || !*term || !strcmp(term, "dumb"))
		return -ENOTTY;
	/* wide characters for the strip; numbers stay in the C locale */
	cur = setlocale(LC_CTYPE, NULL);
	l->old_ctype = strdup(cur ? cur : "C");
	setlocale(LC_CTYPE, "");
	l->utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");

	fflush(stdout);
	l->scr = newterm(NULL, stdout, stdin);
	if (!l->scr) {
		setlocale(LC_CTYPE, l->old_ctype);
		return -ENOTTY;
	}
	set_term(l->scr);
	cbreak();		/* Ctrl-C still signals */
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	if (has_colors()) {
		start_color();
		use_default_colors();
		init_pair(CP_WARN, COLOR_RED, -1);
		init_pair(CP_BAR, COLOR_GREEN, -1);
		init_pair(CP_PHASE, COLOR_YELLOW, -1);
		init_pair(CP_DIM, COLOR_BLUE, -1);
		l->colors = true;
	}
	l->tui = true;
	live_active = l;
	if (!registered) {
		atexit(at_exit);
		registered = true;
	}
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(crash_sigs) / sizeof(crash_sigs[0]); i++)
		sigaction(crash_sigs[i], &sa, &crash_old[i]);
	if (capture_start(l))
		set_msg(l, "stderr is not captured: messages may garble the screen");
	return 0;
}

struct live *live__new(const struct live_opts *o)
{
	struct live *l;

	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->o = *o;
	l->title = strdup(o->title ? o->title : "");	/* escaped by the caller */
	if (!l->title) {
		free(l);
		return NULL;
	}
	l->o.title = l->title;
	if (!(l->o.interval_s > 0))
		l->o.interval_s = 1.0;
	l->saved_err = l->cap_fd = -1;
	l->follow = true;
	hists__init_model(&l->hists);
	l->dirty = true;
	if (o->use_tui && tui_start(l))
		fprintf(stderr, "memphase: cannot set up the terminal (TERM=%s): "
				"printing status lines instead\n",
			getenv("TERM") ? getenv("TERM") : "");
	return l;
}

bool live__tui(const struct live *l)
{
	return l && l->tui && !l->restored;
}

void live__notice(struct live *l, const char *fmt, ...)
{
	char raw[LIVE_MSG_MAX], buf[LIVE_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* names in notices come from the target (paths, comm): no control byte gets out */
	utf8__esc_term(buf, sizeof(buf), raw);
	if (!live__tui(l)) {
		fprintf(stderr, "memphase: %s\n", buf);
		return;
	}
	/* through the capture, so it is replayed at the end too */
	if (l->cap_fd >= 0) {
		fprintf(stderr, "memphase: %s\n", buf);
		capture_drain(l);
	}
	set_msg(l, buf);
}

void live__free(struct live *l)
{
	if (!l)
		return;
	restore(l);
	free(l->snap);
	free(l->cap);
	free(l->title);
	free(l);
}

/* ---- drawing ---- */

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
	put(y, LIVE_LABEL_COLS, 0, "%10s", util__fmt_bytes(b, sizeof(b), total));
	for (k = 0; k < MP_NR_CLASSES; k++)
		put(y, getcurx(stdscr), 0, " %10s",
		    util__fmt_bytes(b, sizeof(b), v[mp_class_order[k]]));
}

static attr_t pair(const struct live *l, int p)
{
	return l->colors ? COLOR_PAIR(p) : 0;
}

static int draw_header(struct live *l, const struct frame *f, int y)
{
	const struct model *m = f->m;
	const struct live_calc *c = f->c;
	const struct sysmem *sm = f->sm;
	char b[8][32], eta[32], eta2[32], rate[40], pids[96];
	unsigned int i, nlive = 0;
	size_t used = 0;
	attr_t warn;
	int k;

	/* title bar: the command cut to leave room for the time */
	move(y, 0);
	attron(A_REVERSE);
	hline(' ', COLS);
	snprintf(b[0], sizeof(b[0]), "  %s%.1f s ", l->paused ? "[PAUSED]  " : "",
		 elapsed_s(m, f->now));
	k = COLS - (int)strlen(b[0]) - 11;
	if (k > 3 && (int)strlen(l->title) > k)
		put(y, 0, A_REVERSE | A_BOLD, " memphase  %.*s...", k - 3, l->title);
	else
		put(y, 0, A_REVERSE | A_BOLD, " memphase  %s", l->title);
	if ((int)strlen(b[0]) < COLS)
		put(y, COLS - strlen(b[0]), A_REVERSE | A_BOLD, "%s", b[0]);
	attroff(A_REVERSE);
	y++;

	pids[0] = '\0';
	for (i = 0; i < m->nprocs; i++) {
		if (m->procs[i].exited)
			continue;
		if (nlive++ < 6 && used < sizeof(pids) - 16)
			used += snprintf(pids + used, sizeof(pids) - used, "%s%u",
					 used ? " " : "", m->procs[i].pid);
	}
	put(y, 0, A_BOLD, "phase");
	put(y, LIVE_LABEL_COLS, A_BOLD | pair(l, CP_PHASE), "%s", phase_name(m, m->cur_phase));
	put(y, getcurx(stdscr), 0, "  for %.1f s   processes %u%s%s%s",
	    m->finished || f->now < m->phase_since_ns ? 0 : (f->now - m->phase_since_ns) / 1e9,
	    nlive, nlive ? " (pid " : "", pids, nlive > 6 ? " ...)" : nlive ? ")" : "");
	if (!m->markers_attached)
		put(y, getcurx(stdscr), pair(l, CP_WARN), "   no phase markers attached");
	y++;

	put(y, LIVE_LABEL_COLS, A_BOLD, "%10s %10s %10s %10s %10s", "total", "anon", "file",
	    "shmem", "swap");
	y++;
	class_row(y++, "RSS now", c->total, c->rss);
	class_row(y++, "RSS peak", c->peak_total, c->peak);

	put(y, 0, A_BOLD, "system");
	if (sm && sm->have_meminfo) {
		put(y, LIVE_LABEL_COLS, 0, "MemAvailable %s of %s   swap free %s of %s",
		    util__fmt_bytes(b[0], 32, sm->mem_available),
		    util__fmt_bytes(b[1], 32, sm->mem_total),
		    util__fmt_bytes(b[2], 32, sm->swap_free),
		    util__fmt_bytes(b[3], 32, sm->swap_total));
		if (sm->have_psi)
			put(y, getcurx(stdscr), 0, "   PSI some %.2f%% full %.2f%%",
			    sm->psi_some_avg10, sm->psi_full_avg10);
	} else {
		put(y, LIVE_LABEL_COLS, pair(l, CP_DIM), "reading /proc/meminfo...");
	}
	y++;

	put(y, 0, A_BOLD, "cgroup");
	if (sm && sm->cg_version && sm->cg_limited)
		put(y, LIVE_LABEL_COLS, 0, "limit %s, usage %s (v%d %s)   room %s",
		    util__fmt_bytes(b[0], 32, sm->cg_limit),
		    util__fmt_bytes(b[1], 32, sm->cg_limit_usage), sm->cg_version,
		    sm->cg_limit_path, util__fmt_bytes(b[2], 32, c->fc.cg_room));
	else if (sm && sm->cg_version)
		put(y, LIVE_LABEL_COLS, 0, "no limit, usage %s (v%d %s)",
		    util__fmt_bytes(b[0], 32, sm->cg_usage), sm->cg_version, sm->cg_path);
	else
		put(y, LIVE_LABEL_COLS, pair(l, CP_DIM), "no memory cgroup");
	y++;

	put(y, 0, A_BOLD, "growth");
	if (c->fc.have_rate) {
		put(y, LIVE_LABEL_COLS, A_BOLD, "%s", fmt_rate(rate, sizeof(rate), c->fc.rate));
		put(y, getcurx(stdscr), 0, " anon+shmem+swap");
		if (c->fc.have_rate_all)
			put(y, getcurx(stdscr), 0, "   (resident anon+file+shmem %s)",
			    fmt_rate(b[0], sizeof(b[0]), c->fc.rate_all));
	} else {
		put(y, LIVE_LABEL_COLS, pair(l, CP_DIM), "measuring...");
	}
	y++;

	put(y, 0, A_BOLD, "forecast");
	warn = forecast__warn(&c->fc, l->o.oom_warn_s) ?
		       A_BOLD | A_REVERSE | pair(l, CP_WARN) : A_BOLD;
	if (c->fc.have_oom) {
		put(y, LIVE_LABEL_COLS, warn, "OOM in %s at %s",
		    live__fmt_eta(eta, sizeof(eta), c->fc.oom_s),
		    fmt_rate(rate, sizeof(rate), c->fc.rate));
		put(y, getcurx(stdscr), 0, " (%s)",
		    c->fc.by_cgroup ? "cgroup limit" : "MemAvailable + free swap");
		if (c->fc.by_cgroup && c->fc.have_sys_oom)
			put(y, getcurx(stdscr), 0, "   system: in %s",
			    live__fmt_eta(eta2, sizeof(eta2), c->fc.sys_oom_s));
		else if (!c->fc.by_cgroup && c->fc.have_cg_oom)
			put(y, getcurx(stdscr), 0, "   cgroup: in %s",
			    live__fmt_eta(eta2, sizeof(eta2), c->fc.cg_oom_s));
	} else if (c->fc.have_rate) {
		put(y, LIVE_LABEL_COLS, 0, "not growing: no OOM projected");
	} else {
		put(y, LIVE_LABEL_COLS, pair(l, CP_DIM), "-");
	}
	y++;

	/* a row only when something was lost */
	if (model__lost_events(m) || m->lost_stacks)
		put(y++, 0, A_BOLD | pair(l, CP_WARN),
		    "LOST      %llu events (kernel %llu, model %llu), %llu stacks: counts may be "
		    "short", (unsigned long long)model__lost_events(m),
		    (unsigned long long)m->lost_kernel, (unsigned long long)m->lost_model,
		    (unsigned long long)m->lost_stacks);
	return y;
}

static unsigned int selected(const struct live *l, const struct model *m)
{
	return l->follow ? m->cur_phase : l->sel;
}

static int draw_table(struct live *l, const struct frame *f, int y, int max_rows)
{
	static const char *const gname[] = { "+ANON", "+FILE", "+SHMEM", "+SWAP" };
	static const char *const sname[] = { "-ANON", "-FILE", "-SHMEM", "-SWAP" };
	const struct model *m = f->m;
	bool wide = COLS >= LIVE_TABLE_WIDE;
	unsigned int i, sel = selected(l, m), first = 0;
	char b[32];
	int k;

	put(y, 0, A_BOLD | A_UNDERLINE, "  %-10s %8s %9s", "PHASE", "TIME", "FAULTS");
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

		put(y, 0, a, "%c%c%-10.10s %7.2fs %9llu", id == sel ? '>' : ' ',
		    id == m->cur_phase ? '*' : ' ', phase_name(m, id),
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
static int draw_hist(struct live *l, const struct frame *f, int y, int rows)
{
	const struct model *m = f->m;
	unsigned int id = selected(l, m);
	const struct live_hist *h = hists__cur(&l->hists);
	const __u64 *slots = hists__slots(&l->hists, m, id);
	int first = -1, last = -1, lo, hi, i, n = 0;
	char *buf = NULL, *p, *lines[MP_MAX_SLOTS + 1];
	size_t len = 0;
	__u64 total;
	FILE *mf;

	if (rows < 1 || !slots)
		return y;
	total = hist__count(slots, MP_MAX_SLOTS);
	put(y, 0, A_BOLD, "HISTOGRAM %s: %s", phase_name(m, id), h->title);
	put(y, getcurx(stdscr), 0, "  (%llu samples%s)   h: show %s",
	    (unsigned long long)total, l->follow ? ", follows the current phase" : "",
	    hists__peek(&l->hists)->title);
	y++;
	if (!total) {
		if (rows > 1)
			put(y, 2, pair(l, CP_DIM), "(empty so far)");
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
		if (bar && l->colors)
			mvchgat(y, 2 + (bar - lines[1 + i]) + 1, strcspn(bar + 1, "|"), 0,
				CP_BAR, NULL);
		y++;
	}
	free(buf);
	return y;
}

static void draw_cell(struct live *l, int y, int x, int level)
{
	static const char *const blocks[] = { " ", "\u2581", "\u2582", "\u2583", "\u2584",
					      "\u2585", "\u2586", "\u2587", "\u2588" };
	static const char ascii[] = "  ..::||#";

	if (level < 0)
		level = 0;
	if (level > 8)
		level = 8;
	if (l->utf8)
		mvaddstr(y, x, blocks[level]);
	else
		mvaddch(y, x, ascii[level]);
}

/* RSS over time: a bar per column, the phase changes written under it. */
static int draw_strip(struct live *l, const struct frame *f, int y, int h)
{
	const struct timeline *tl = f->tl;
	const struct timeline_sample *s0, *s;
	int w = COLS - LIVE_LABEL_COLS - 1, ncols = 0, col, r, i;
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
	if (col_ns < LIVE_COL_MIN_NS)
		col_ns = LIVE_COL_MIN_NS;
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
	attron(pair(l, CP_BAR));
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
			draw_cell(l, y + r, LIVE_LABEL_COLS + col, level - 8 * (h - 1 - r));
	}
	attroff(pair(l, CP_BAR));
	y += h;
	/* the phase names where the phase changed, cut at the next change */
	for (col = 0; col < ncols; col++) {
		int next, room;

		if (chg[col] < 0)
			continue;
		for (next = col + 1; next < ncols && chg[next] < 0; next++)
			;
		room = (next < ncols ? next : COLS - LIVE_LABEL_COLS) - col;
		if (room < 1)
			room = 1;
		attron(A_BOLD | pair(l, CP_PHASE));
		mvaddnstr(y, LIVE_LABEL_COLS + col, phase_name(f->m, chg[col]),
			  room > 1 ? room - 1 : 1);
		attroff(A_BOLD | pair(l, CP_PHASE));
	}
	put(y, 0, pair(l, CP_DIM), "%9s", "phase");
	return y + 1;
}

static void draw(struct live *l, const struct frame *f)
{
	int y, bottom, gap, strip_h, strip_rows, table_rows, avail;

	erase();
	y = draw_header(l, f, 0);
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
	y = draw_table(l, f, y + gap, table_rows) + gap;
	avail = bottom - y - strip_rows - gap;
	if (avail >= 1)
		draw_hist(l, f, y, avail);
	if (strip_rows && bottom - strip_rows >= y)
		draw_strip(l, f, bottom - strip_rows, strip_h);

	if (l->msg[0])
		put(LINES - 2, 0, A_BOLD | pair(l, CP_WARN), "%s", l->msg);
	move(LINES - 1, 0);
	attron(A_REVERSE);
	hline(' ', COLS);
	put(LINES - 1, 0, A_REVERSE,
	    " q quit   tab/down/up select phase   f follow current phase   h histogram   "
	    "p %s", l->paused ? "resume" : "pause");
	attroff(A_REVERSE);
	refresh();
}

/* ---- keys ---- */

static void select_step(struct live *l, const struct model *m, int dir)
{
	unsigned int cur = selected(l, m), i, pos = 0;

	if (!m->norder)
		return;
	for (i = 0; i < m->norder; i++)
		if (m->order[i] == cur)
			pos = i;
	pos = (pos + m->norder + dir) % m->norder;
	l->sel = m->order[pos];
	l->follow = false;
}

static void toggle_pause(struct live *l, const struct model *m, const struct sysmem *sm,
			 const struct live_calc *c, __u64 now)
{
	if (l->paused) {
		l->paused = false;
		return;
	}
	if (!l->snap)
		l->snap = malloc(sizeof(*l->snap));
	if (!l->snap)
		return;
	/* shallow: argv stays the live model's, which outlives the view */
	memcpy(l->snap, m, sizeof(*m));
	l->snap_have_sm = sm != NULL;
	if (sm)
		l->snap_sm = *sm;
	l->snap_calc = *c;
	l->snap_now = now;
	l->paused = true;
}

static int handle_keys(struct live *l, const struct model *m, const struct sysmem *sm,
		       const struct live_calc *c, __u64 now)
{
	const struct model *shown;
	int ch;

	while ((ch = getch()) != ERR) {
		shown = l->paused ? l->snap : m;
		l->dirty = true;
		switch (ch) {
		case 'q':
		case 'Q':
			return LIVE_QUIT;
		case '\t':
		case KEY_DOWN:
		case 'j':
			select_step(l, shown, 1);
			break;
		case KEY_BTAB:
		case KEY_UP:
		case 'k':
			select_step(l, shown, -1);
			break;
		case 'f':
			l->follow = true;
			break;
		case 'h':
			hists__next(&l->hists);
			break;
		case 'p':
		case ' ':
			toggle_pause(l, m, sm, c, now);
			break;
		case KEY_RESIZE:
		default:
			break;
		}
	}
	return 0;
}

/* ---- the loop's entry point ---- */

int live__update(struct live *l, const struct model *m, const struct timeline *tl,
		 const struct sysmem *sm, __u64 now_ns)
{
	struct live_calc c;
	struct frame f;
	char line[512], eta[32], rate[40], room[32];
	int k, ret = 0;

	calc(&c, m, tl, sm, now_ns);
	/* the sampled sum of several processes can peak above each one's peak */
	for (k = 0; k < MP_NR_CLASSES; k++) {
		if (c.peak[k] > l->peak[k])
			l->peak[k] = c.peak[k];
		c.peak[k] = l->peak[k];
	}
	if (c.peak_total > l->peak_total)
		l->peak_total = c.peak_total;
	c.peak_total = l->peak_total;

	if (!l->warned && forecast__warn(&c.fc, l->o.oom_warn_s)) {
		l->warned = true;
		live__notice(l, "warning: OOM projected in %s at %s (%s %s left)",
			     live__fmt_eta(eta, sizeof(eta), c.fc.oom_s),
			     fmt_rate(rate, sizeof(rate), c.fc.rate),
			     c.fc.by_cgroup ? "cgroup limit:" : "MemAvailable + free swap:",
			     util__fmt_bytes(room, sizeof(room),
					     c.fc.by_cgroup ? c.fc.cg_room : c.fc.sys_room));
	}

	if (!live__tui(l)) {
		if (!l->started) {
			l->started = true;
			l->next_status = m->start_ns + (__u64)(l->o.interval_s * 1e9);
		}
		if (now_ns >= l->next_status) {
			format_status(line, sizeof(line), m, &c, sm, now_ns);
			fprintf(stderr, "%s\n", line);
			l->next_status += (__u64)(l->o.interval_s * 1e9);
			if (l->next_status <= now_ns)
				l->next_status = now_ns + (__u64)(l->o.interval_s * 1e9);
		}
		return 0;
	}

	capture_drain(l);
	ret = handle_keys(l, m, sm, &c, now_ns);
	if (ret)
		return ret;
	if (!l->dirty && now_ns - l->last_draw < LIVE_REDRAW_MS * 1000000ULL)
		return 0;
	if (l->paused) {
		f.m = l->snap;
		f.sm = l->snap_have_sm ? &l->snap_sm : NULL;
		f.c = &l->snap_calc;
		f.now = l->snap_now;
	} else {
		f.m = m;
		f.sm = sm;
		f.c = &c;
		f.now = now_ns;
	}
	f.tl = tl;
	draw(l, &f);
	l->dirty = false;
	l->last_draw = now_ns;
	return 0;
}
