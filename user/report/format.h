/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An output format: one module that writes a file from the model. Each format module
 * defines one `const struct output_format` and the registry (report/formats.c) lists it;
 * the option `--NAME FILE`, the checks before the run and the atomic write come from
 * there (report/outputs.h).
 */
#ifndef __MP_FORMAT_H
#define __MP_FORMAT_H

#include <stdio.h>
#include "model/model.h"
#include "lib/headroom.h"
#include "model/timeline.h"

/* memphase's own cost, measured by the orchestrator (report/metrics.h exports it). */
struct output_self {
	double cpu_s;			/* user + system CPU time so far */
	__u64 rss_bytes;		/* resident memory now */
	double render_s;		/* the previous exposition took this long (0: none yet) */
	__u64 render_bytes;		/* and was this big */
};

/* What every writer gets. */
struct output_ctx {
	const struct model *m;		/* finished (model__finish), or live (metrics) */
	const struct timeline *tl;	/* the RSS history, or NULL */
	const struct sysmem *sm;	/* the last system memory reading, or NULL */
	__u64 now_ns;			/* the time of a live model (0: finished, its end) */
	const struct output_self *self;	/* this memphase's own run, or NULL (a recording) */
};

enum output_needs {
	OUTPUT_NEEDS_STACKS = 1 << 0,	/* stack sampling must be on */
	OUTPUT_NEEDS_RAW = 1 << 1,	/* every raw sample and the code mappings (profile) */
	OUTPUT_NEEDS_SEEK = 1 << 2,	/* a regular file, not a pipe */
};

struct output_format {
	const char *name;		/* the option, without "--" */
	const char *help;		/* for --help */
	unsigned int needs;		/* enum output_needs */
	/* the whole file to f; 0 or -errno (-EIO when a write failed) */
	int (*write)(FILE *f, const struct output_ctx *ctx);
};

/* The registry: every format, NULL-terminated (report/formats.c). */
extern const struct output_format *const output_formats[];

#endif
