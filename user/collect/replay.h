/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A recording (collect/record.h) fed back through the collector (collector__replay_*):
 * the model and the RSS timeline come out as the live run had them.
 */
#ifndef __MP_REPLAY_H
#define __MP_REPLAY_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "model/model.h"

struct collector;

struct replay_result {
	bool finished;		/* the run's end is in the recording */
	bool truncated;		/* the file ends inside a chunk (a killed writer) */
	__u64 tail_bytes;	/* bytes of that last, partial chunk */
	__u32 chunks;		/* whole chunks read */
	__u64 records;
	__u64 unknown;		/* records of types this memphase does not know: skipped */
};

/* What to read of the run (report --from/--to/--phase). */
struct replay_opts {
	bool keep_raw;		/* keep raw samples (perf.data) */
	double from_s, to_s;	/* seconds from the start; < 0: the run's start, end */
	const char *phase;	/* only this phase (NULL: all) */
};

/*
 * Reads the recording in f into m (uninitialized), as o says.
 * Returns the collector that applied it (its timeline is the run's; collector__free()
 * it, then model__free(m)), or NULL with why set (one line: not a recording, a version
 * this memphase cannot read, a corrupt chunk or record) and errno.
 */
struct collector *replay__file(FILE *f, struct model *m, const struct replay_opts *o,
			       struct replay_result *res, char *why, size_t why_len);

#endif
