/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The run as a Chrome/Perfetto trace (the trace-event JSON format: ui.perfetto.dev,
 * chrome://tracing and speedscope open it). Times are microseconds from the start of the
 * run, in steps of 1/8 us (125 ns) written with three decimals: exact in decimal and in
 * binary floating point, so that the slices of a track nest exactly in every importer.
 * Nothing lies after the end of the run (the JSON's duration_s).
 *
 * - phases: "X" slices on a track per thread (each thread's phase changes; the time
 *   before a thread's first change is the phase it left), category "phase"; the slices of
 *   a track follow each other, a phase that goes on is one slice, and one shorter than
 *   125 ns is left out;
 * - the phase timeline (the root's, or a phased child's under a wrapper) as slices on a
 *   track of its own (tid 0 of the root: "phase timeline");
 * - counter tracks ("C"): RSS per class of the observed processes, MemAvailable and
 *   SwapFree, the memory cgroup's usage and limit;
 * - instant events ("i"): OOM kills, guard actions, libraries loaded, execs;
 * - metadata ("M"): process and thread names.
 */
#ifndef __MP_TRACE_H
#define __MP_TRACE_H

#include "report/format.h"

extern const struct output_format trace_format;

#endif
