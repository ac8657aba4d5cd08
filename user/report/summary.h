/* SPDX-License-Identifier: GPL-2.0 */
/* The text summary printed at exit. */
#ifndef __MP_SUMMARY_H
#define __MP_SUMMARY_H

#include <stdio.h>
#include "model/model.h"

/* Prints the run line, peaks, OOM kills, the per-phase tables and, with hists, the
 * histograms (the JSON has them always). */
void summary__print(FILE *f, const struct model *m, bool hists);
/* The per-phase tables only (also used by the live view). */
void summary__phase_table(FILE *f, const struct model *m, __u64 now_ns);
/* memphase's own BPF cost per program (--bpf-stats; nothing without it). */
void summary__bpf_stats(FILE *f, const struct model *m);

/* Pinned and managed host memory and VRAM (one line when there is no NVML and nothing
 * was pinned). */
void summary__gpu(FILE *f, const struct model *m);

#endif
