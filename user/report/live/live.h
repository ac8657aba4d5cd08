/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The live view while memphase observes: a full-screen ncurses view on a terminal, or
 * one status line per interval on stderr.
 *
 * The session calls, from its poll loop (about 10 times a second):
 *	l = live__new(&opts);			after setup, before the loop
 *	live__update(l, &model, tl, &sm, now)	every iteration; LIVE_QUIT: stop the loop
 *	live__notice(l, "OOM kill of %s", ..)	runtime messages
 *	live__free(l)				before the summary is printed
 *
 * TUI (opts.use_tui and the terminal could be set up): redrawn every LIVE_REDRAW_MS and
 * at once on a key or a resize (ncurses diffs the frames: no flicker). Keys: tab, down,
 * j: next phase; shift-tab, up, k: previous phase; f: follow the current phase again;
 * h: the next histogram of the list (hists.c: RSS growth per marker call, mmap request
 * sizes, then the first again); p or space: pause (freeze the display; keys still
 * browse the frozen data); q: quit (the session detaches and writes every output).
 * While the TUI runs, whatever is written to stderr is captured: its last line shows on
 * the message line, and all of it is written to the real stderr again by live__free().
 * live__free() restores the terminal; it also runs at exit() and on a crash signal if
 * the session never called it.
 *
 * Status lines (no TUI): every opts.interval_s, on stderr, one line of space-separated
 * key=value fields, always all of them and in this order (a stable format):
 *
 *   memphase: t=12.0s phase=generate rss=1.21GiB anon=1.10GiB file=100MiB shmem=0B
 *             swap=0B rate=+12.0MiB/s avail=22.9GiB cg=7.00MiB/2.00GiB oom_in=~95s lost=0
 *   (one line)
 *
 *   t       seconds since observation began, one decimal
 *   phase   the root process's current phase
 *   rss     resident now: anon + file + shmem, summed over the live observed processes
 *   anon, file, shmem, swap   the same per class
 *   rate    smoothed growth rate of anon + shmem + swap (what file-page reclaim cannot
 *           give back), signed, per second; "-" until about a second of samples
 *   avail   system MemAvailable; "-" when /proc/meminfo could not be read
 *   cg      memory cgroup usage/limit of the root process; usage/- without a limit;
 *           "-" without a memory cgroup
 *   oom_in  projected seconds until the nearer of the system (MemAvailable + SwapFree)
 *           and cgroup (limit - usage + inactive file) headrooms is used up at `rate`,
 *           "~N" + "s"; "-" when not growing or no headroom is known
 *   lost    events lost so far (ring buffer drops, full maps, model overflow)
 *
 * Sizes are util__fmt_bytes() without the space: 0B, 512B, 4.00KiB, 100MiB, 1.21GiB.
 *
 * The rooms of report/live/: live.c (these entry points, the view's state and keys),
 * panels.c (what the TUI draws, one function per panel), forecast.c (growth rate,
 * headroom, time to OOM: pure), status.c (the numbers, their wording, the status line:
 * pure), hists.c (the list of histograms), term.c (curses, stderr capture, restore).
 */
#ifndef __MP_LIVE_H
#define __MP_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct model;
struct timeline;
struct sysmem;

#define LIVE_QUIT		1
#define LIVE_REDRAW_MS		250

struct live_opts {
	bool use_tui;		/* full screen on stdout (falls back to status lines) */
	double interval_s;	/* status line period */
	char *const *argv;	/* the command, for the header (escaped and copied) */
	__u32 pid;		/* its pid */
	double oom_warn_s;	/* highlight, and notice once, a projected OOM this close */
};

/* NULL + errno. */
struct live *live__new(const struct live_opts *o);
/* Is the full-screen view running? */
bool live__tui(const struct live *l);
/*
 * Redraws when due, reads keys without blocking, prints a due status line. Returns
 * LIVE_QUIT when the user asked to quit, else 0. tl and sm may be NULL (not known yet).
 */
int live__update(struct live *l, const struct model *m, const struct timeline *tl,
		 const struct sysmem *sm, __u64 now_ns);
/*
 * A runtime message, without a "memphase: " prefix or a newline: on the message line in
 * the TUI (and replayed to stderr at the end), else "memphase: <msg>" on stderr at once.
 * NULL-safe: without a view it goes to stderr.
 */
void live__notice(struct live *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Restores the terminal and stderr, replays captured messages; NULL-safe, idempotent. */
void live__free(struct live *l);

/* Pure helpers (unit-tested): status line and "~40 s" style durations. */
int live__format_status(char *buf, size_t len, const struct model *m,
			const struct timeline *tl, const struct sysmem *sm, __u64 now_ns);
const char *live__fmt_eta(char *buf, size_t len, double secs);

#endif
