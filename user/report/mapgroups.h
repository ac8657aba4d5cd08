/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The summary's mappings: the run's RSS growth by mapping, mappings that the same code
 * made (or the same causes grew) taken together, named by that and their path, most bytes
 * first. Mappings with a known origin (model/origins.h) count their exact growth; the
 * others (the heap, stacks, files that no traced call mapped) what the per-phase top lists
 * hold of them. Pure: reads the model.
 */
#ifndef __MP_MAPGROUPS_H
#define __MP_MAPGROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "lib/strmap.h"
#include "model/model.h"

#define MAPGROUPS_NAME_MAX	(MODEL_PATH_MAX + 8)
#define MAPGROUPS_BY_MAX	192

struct mapgroup {
	char name[MAPGROUPS_NAME_MAX];	/* a path, [heap], [anon], "glibc malloc arenas" */
	char by[MAPGROUPS_BY_MAX];	/* what made or grew them ("" unknown); not escaped */
	__u32 cls;			/* enum mp_class of most of it */
	bool arena;			/* glibc malloc arenas */
	bool deleted;			/* a file deleted (or without a name) */
	unsigned int count;		/* mappings of a known origin (0: not counted) */
	__u64 bytes;
};

struct mapgroups {
	struct mapgroup *v;
	size_t n;
	__u64 total;			/* growth charged to mappings, all phases */
	struct strmap index;		/* while building: key -> 1 + index in v */
};

/* 0 or -ENOMEM (g emptied). */
int mapgroups__build(struct mapgroups *g, const struct model *m);
void mapgroups__free(struct mapgroups *g);

#endif
