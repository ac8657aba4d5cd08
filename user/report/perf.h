/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A perf.data file (lib/perfdata.h) of the raw samples, weighted by bytes: comm and mmap
 * records of the sampled processes, one event for the run, and a thread per process and
 * phase named after the phase, so that perf report's comm and thread keys (and readers that
 * show only the comm, perf data convert --to-json) tell phases apart in one view; the
 * growth no sample carries as one "[not sampled]" sample per phase (see perf.c).
 */
#ifndef __MP_PERF_H
#define __MP_PERF_H

#include "report/format.h"

extern const struct output_format perf_format;

#endif
