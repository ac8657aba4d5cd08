/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A perf.data file (lib/perfdata.h) of the raw samples, weighted by bytes: comm and mmap
 * records of the sampled processes, one event per phase named after it (perf report: a
 * section per phase), and the sample's comm is its phase too (a COMM record precedes a
 * thread's samples when its phase changes), for readers that show only the comm
 * (perf data convert --to-json).
 */
#ifndef __MP_PERF_H
#define __MP_PERF_H

#include "report/format.h"

extern const struct output_format perf_format;

#endif
