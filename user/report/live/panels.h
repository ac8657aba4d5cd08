/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The live view's panels, drawn with curses, top to bottom:
 *	title	the command, its pid, the time observed ([PAUSED] while paused)
 *	phase	the current phase, for how long, the processes still running
 *	rss	RSS now and at peak, a total and one column per class
 *	memory	the system's MemAvailable, swap and PSI; the memory cgroup and its room
 *	forecast the growth rate and the projected OOM (highlighted when near)
 *	lost	events lost, only when some were
 *	table	one row per phase: time, faults, growth (and shrink, when wide enough)
 *	hist	the selected phase's histogram (bcc layout), the one of the list shown
 *	strip	RSS over time, a bar per column, the phase changes written under it
 *	footer	the message line and the help line
 * Each takes the frame and the first row, and returns the row after what it drew.
 * panels__draw() lays them out: spacing and the strip shrink first on a small screen.
 */
#ifndef __MP_PANELS_H
#define __MP_PANELS_H

#include <stdbool.h>
#include <linux/types.h>

struct model;
struct timeline;
struct sysmem;
struct live_calc;
struct hists;

/* One frame: the data (live, or frozen while paused) and the view's state. */
struct panel_frame {
	const struct model *m;
	const struct timeline *tl;
	const struct sysmem *sm;		/* NULL: not read yet */
	const struct live_calc *c;
	__u64 now;
	const char *title;			/* command and pid, escaped */
	const char *msg;			/* the message line, escaped; "" for none */
	const struct hists *hists;
	unsigned int sel;			/* the selected phase */
	bool follow;				/* ... follows the current phase */
	bool paused;
	double warn_s;				/* highlight a projected OOM this close */
	bool colors;
	bool utf8;
};

/* The colour pairs the panels use (after curses started colours). */
void panels__colors(void);

int panels__title(const struct panel_frame *f, int y);
int panels__phase(const struct panel_frame *f, int y);
int panels__rss(const struct panel_frame *f, int y);
int panels__memory(const struct panel_frame *f, int y);
int panels__forecast(const struct panel_frame *f, int y);
int panels__gpu(const struct panel_frame *f, int y);
int panels__lost(const struct panel_frame *f, int y);
int panels__table(const struct panel_frame *f, int y, int rows);
int panels__hist(const struct panel_frame *f, int y, int rows);
int panels__strip(const struct panel_frame *f, int y, int h);
void panels__footer(const struct panel_frame *f);

/* The whole screen: every panel, laid out to LINES x COLS. */
void panels__draw(const struct panel_frame *f);

#endif
