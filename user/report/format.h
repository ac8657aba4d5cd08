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
#include "model/timeline.h"

/* What every writer gets. */
struct output_ctx {
	const struct model *m;		/* finished (model__finish) */
	const struct timeline *tl;	/* the RSS history, or NULL */
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
