/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stack samples -> frames -> folded stacks (and raw samples for perf.data). Each sample
 * stands for `weight` bytes of RSS growth; per phase the weights add up to the sampled
 * part of the growth, the rest is reported as "[not sampled]".
 */
#ifndef __MP_STACKS_H
#define __MP_STACKS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "memphase.h"
#include "model/model.h"

#define STACKS_MAX_FRAMES	128

struct stacks;
struct unwinder;

/* keep_raw: keep every sample's addresses (needed for perf.data). */
struct stacks *stacks__new(struct unwinder *u, bool keep_raw);
void stacks__free(struct stacks *st);

/* A process appeared or mapped code: snapshot its mappings while it is alive. */
void stacks__note_process(struct stacks *st, __u32 pid);
/*
 * A process exited and its samples are in: drop its snapshot (unwinder__forget) and its
 * cached symbol names. With perf.data (keep_raw) a sampled process keeps its snapshot,
 * whose mappings the file needs at the end.
 */
void stacks__forget_process(struct stacks *st, __u32 pid);
/* One MP_EV_STACK record (header + payload as sent by BPF). 0 or -errno. */
int stacks__add(struct stacks *st, const struct model *m, const void *data, size_t len);

/* Bytes and samples per phase id. */
__u64 stacks__sampled_bytes(const struct stacks *st, unsigned int phase);
__u64 stacks__samples(const struct stacks *st, unsigned int phase);
__u64 stacks__unwind_failures(const struct stacks *st);

/*
 * "phase;comm;outermost;...;innermost BYTES" lines: phases in the order first entered, and
 * within a phase by stack (byte order), then a "phase;COMM;[not sampled] BYTES" line for
 * the growth no sample carries (COMM: the comm of model__main()). Every frame and comm is
 * valid UTF-8 without control characters (others become U+FFFD), has no ';' and is never
 * empty, so every line splits into at least 3 fields and a weight.
 */
int stacks__write_folded(const struct stacks *st, const struct model *m, FILE *f);
/* One self-contained SVG flame graph of the same lines, phases side by side in the
 * order first entered. */
int stacks__write_svg(const struct stacks *st, const struct model *m, FILE *f);
/*
 * A perf.data file: comm and mmap records, samples weighted by bytes. One event per phase,
 * named after it (perf report: a section per phase), and the sample's comm is its phase
 * too (a COMM record precedes a thread's samples when its phase changes), for readers that
 * show only the comm (perf data convert --to-json).
 */
int stacks__write_perf(const struct stacks *st, const struct model *m, FILE *f);

#endif
