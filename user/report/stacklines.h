/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The profile's stacks in the order the stack views show them, each as frames
 * [phase, comm, outermost, ..., innermost] with its bytes: per phase in the order the
 * phases were first entered, its stacks by frames (byte order), then
 * [phase, COMM, "[not sampled]"] for the growth no sample carries (COMM: the comm of
 * model__main()). Stacks of a phase never entered (none, normally) come last. Shared by
 * the folded and SVG writers.
 */
#ifndef __MP_STACKLINES_H
#define __MP_STACKLINES_H

#include "lib/flamegraph.h"
#include "model/model.h"

struct stacklines {
	struct fg_stack *v;	/* framev/nframes/weight set; frames NULL */
	size_t n;
	const char **framev;	/* storage of every line's frames */
	char *comm;		/* the main process's comm, clean */
};

/* 0 or -ENOMEM. */
int stacklines__build(struct stacklines *sl, const struct model *m);
void stacklines__free(struct stacklines *sl);

#endif
