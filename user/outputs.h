/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The files asked for (--json, --folded, --perf-data, --svg): opened before the run as
 * the invoking user (so a bad path fails early and the files are theirs), written at the
 * end (and, when the guard ends the target, once before as well), removed if nothing was
 * ever written.
 */
#ifndef __MP_OUTPUTS_H
#define __MP_OUTPUTS_H

#include <stdbool.h>
#include <stdio.h>
#include "env.h"
#include "model.h"

struct stacks;

enum output_kind {
	OUT_JSON,
	OUT_FOLDED,
	OUT_PERF,
	OUT_SVG,
	OUT_NR,
};

struct outputs {
	const char *path[OUT_NR];
	FILE *f[OUT_NR];
	bool written;
};

/* Opens every file e asks for; 0, or -errno after one line on stderr. */
int outputs__open(struct outputs *o, const struct env *e);
/* Writes every open file from m (and st for the stack views), replacing earlier
 * contents. 0, or the first -errno (each failure reported on stderr). */
int outputs__write(struct outputs *o, const struct model *m, const struct stacks *st);
/* Closes the files; removes them if they were never written. NULL-safe members. */
void outputs__close(struct outputs *o);

#endif
