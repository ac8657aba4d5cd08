// SPDX-License-Identifier: GPL-2.0
/*
 * The live view's entry points (live.h): the view's state (selection, histogram, pause),
 * its keys, and the choice each tick between a frame of panels and a status line. The
 * numbers are status.c's and forecast.c's, the drawing panels.c's, the terminal term.c's.
 */
#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/utf8.h"
#include "lib/util.h"
#include "lib/headroom.h"
#include "model/model.h"
#include "report/live/forecast.h"
#include "report/live/hists.h"
#include "report/live/live.h"
#include "report/live/panels.h"
#include "report/live/status.h"
#include "report/live/term.h"

struct live {
	struct live_opts o;
	char *title;
	struct term term;

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
};

const char *live__fmt_eta(char *buf, size_t len, double secs)
{
	return status__eta(buf, len, secs);
}

int live__format_status(char *buf, size_t len, const struct model *m,
			const struct timeline *tl, const struct sysmem *sm, __u64 now_ns)
{
	struct live_calc c;

	status__calc(&c, m, tl, sm, now_ns);
	return status__format(buf, len, m, &c, sm, now_ns);
}

/* ---- setup and teardown ---- */

/* "ARGV... (pid N)", escaped, at most 160 columns of command */
static char *live_title(char *const *argv, __u32 pid)
{
	char cmd[160] = "?", arg[160], *t = NULL;
	size_t used = 0;
	int n;

	for (; argv && *argv && used < sizeof(cmd) - 1; argv++) {
		n = snprintf(cmd + used, sizeof(cmd) - used, "%s%s", used ? " " : "",
			     utf8__esc_term(arg, sizeof(arg), *argv));
		used = n < 0 || used + n >= sizeof(cmd) ? sizeof(cmd) - 1 : used + n;
	}
	return asprintf(&t, "%s (pid %u)", cmd, pid) < 0 ? NULL : t;
}

struct live *live__new(const struct live_opts *o)
{
	struct live *l;

	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->o = *o;
	l->title = live_title(o->argv, o->pid);
	if (!l->title) {
		free(l);
		return NULL;
	}
	if (!(l->o.interval_s > 0))
		l->o.interval_s = 1.0;
	term__init(&l->term);
	l->follow = true;
	hists__init_model(&l->hists);
	l->dirty = true;
	if (o->use_tui) {
		if (!term__start(&l->term)) {
			if (l->term.colors)
				panels__colors();
		} else {
			fprintf(stderr, "memphase: cannot set up the terminal (TERM=%s): "
					"printing status lines instead\n",
				getenv("TERM") ? getenv("TERM") : "");
		}
	}
	return l;
}

bool live__tui(const struct live *l)
{
	return l && term__on(&l->term);
}

void live__notice(struct live *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	term__vnotice(l ? &l->term : NULL, fmt, ap);
	va_end(ap);
	if (l && term__drain(&l->term))
		l->dirty = true;
}

void live__free(struct live *l)
{
	if (!l)
		return;
	term__free(&l->term);
	free(l->snap);
	free(l->title);
	free(l);
}

/* ---- keys ---- */

static unsigned int selected(const struct live *l, const struct model *m)
{
	return l->follow ? m->cur_phase : l->sel;
}

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

/* Once: an OOM projected within oom_warn_s. */
static void warn_once(struct live *l, const struct forecast *fc)
{
	char eta[32], rate[40], room[32];

	if (l->warned || !forecast__warn(fc, l->o.oom_warn_s))
		return;
	l->warned = true;
	live__notice(l, "warning: OOM projected in %s at %s (%s %s left)",
		     status__eta(eta, sizeof(eta), fc->oom_s),
		     status__rate(rate, sizeof(rate), fc->rate),
		     fc->by_cgroup ? "cgroup limit:" : "MemAvailable + free swap:",
		     util__fmt_bytes(room, sizeof(room), fc->by_cgroup ? fc->cg_room : fc->sys_room));
}

/* Without the TUI: a status line on stderr every interval_s. */
static void status_tick(struct live *l, const struct model *m, const struct live_calc *c,
			const struct sysmem *sm, __u64 now)
{
	__u64 every = (__u64)(l->o.interval_s * 1e9);
	char line[512];

	if (!l->started) {
		l->started = true;
		l->next_status = m->start_ns + every;
	}
	if (now < l->next_status)
		return;
	status__format(line, sizeof(line), m, c, sm, now);
	fprintf(stderr, "%s\n", line);
	l->next_status += every;
	if (l->next_status <= now)
		l->next_status = now + every;
}

int live__update(struct live *l, const struct model *m, const struct timeline *tl,
		 const struct sysmem *sm, __u64 now_ns)
{
	struct live_calc c;
	struct panel_frame f = {};
	int ret;

	status__calc(&c, m, tl, sm, now_ns);
	warn_once(l, &c.fc);

	if (!live__tui(l)) {
		status_tick(l, m, &c, sm, now_ns);
		return 0;
	}

	if (term__drain(&l->term))
		l->dirty = true;
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
	f.title = l->title;
	f.msg = l->term.msg;
	f.hists = &l->hists;
	f.sel = selected(l, f.m);
	f.follow = l->follow;
	f.paused = l->paused;
	f.warn_s = l->o.oom_warn_s;
	f.colors = l->term.colors;
	f.utf8 = l->term.utf8;
	panels__draw(&f);
	l->dirty = false;
	l->last_draw = now_ns;
	return 0;
}
