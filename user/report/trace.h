/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The run as a Chrome/Perfetto trace (the trace-event JSON format: ui.perfetto.dev,
 * chrome://tracing and speedscope open it). Times are microseconds from the start of the
 * run, in steps of 1/8 us (125 ns) written with three decimals: exact in decimal and in
 * binary floating point, so that the slices of a track nest exactly in every importer.
 * Nothing lies after the end of the run (the JSON's duration_s).
 *
 * - phases: "X" slices on a track per thread, category "phase": each phase a thread made
 *   current, until the next change in its process by any thread (the phase is the
 *   process's), so that a process's thread tracks together show its phases once; the
 *   time before a process's first change, in the phase that change left, is on the track
 *   of the thread that made it. The slices of a track follow each other, a phase that
 *   goes on is one slice, and one shorter than 125 ns is left out;
 * - the phase timeline (the root's, or a phased child's under a wrapper) as slices on a
 *   track of its own (tid 0 of the root: "phase timeline");
 * - counter tracks ("C"): RSS per class of the observed processes, MemAvailable and
 *   SwapFree, the memory cgroup's usage and limit;
 * - instant events ("i"): OOM kills, guard actions, libraries loaded, execs;
 * - the stack samples of growth (every timed sample of the profile, PROFILE_MAX_WHEN at
 *   most): thread-scoped instants ("s": "t") on the track of the thread that took them,
 *   category "rss_growth", named by the cause of their stack (or its innermost frame),
 *   args bytes, phase and the stack as text ("inner <- ... <- outer", for Perfetto, which
 *   reads no stackFrames), and "sf", the stack's innermost node in the top-level
 *   "stackFrames" dictionary (a tree: "ID": {"name", "parent"}), which chrome://tracing
 *   shows with the instant. No top-level "samples" list: speedscope would show only those,
 *   weighed by the time between them;
 * - metadata ("M"): process and thread names.
 */
#ifndef __MP_TRACE_H
#define __MP_TRACE_H

#include "report/format.h"

extern const struct output_format trace_format;

#endif
