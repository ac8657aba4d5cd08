/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sampled growth no cause rule names, by code path: the profile's stacks that
 * causes__match_stack() leaves unmatched, grouped by their innermost frames ("memset <-
 * grow_cache <- main"), most bytes first. What the summary shows instead of a cause.
 */
#ifndef __MP_CODEPATHS_H
#define __MP_CODEPATHS_H

#include <stddef.h>
#include <linux/types.h>
#include "lib/strmap.h"
#include "model/model.h"

#define CODEPATHS_DEPTH		3	/* frames that name a path, innermost first */
#define CODEPATHS_NAME_MAX	512

struct codepath {
	const char *name;		/* innermost first, " <- " between, not escaped */
	__u64 bytes;
};

struct codepaths {
	struct codepath *v;
	size_t n;
	__u64 total;			/* the unmatched bytes, all paths */
	struct strmap names;		/* name -> bytes: owns the names */
};

/* 0 or -ENOMEM (cp emptied). */
int codepaths__build(struct codepaths *cp, const struct model *m);
void codepaths__free(struct codepaths *cp);

#endif
