/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What grew, in the engine's terms: the bytes of sampled stacks attributed to the causes of
 * the model's rules (lib/causerules.h). A stack goes to the cause of its innermost frame
 * that a `frame` rule matches; failing that, to the cause an `origin` rule finds in the
 * stack (or label) that created the mapping it grew, or a `mapping` rule in that mapping's
 * path; failing that, it is unmatched. Pure: reads the model, writes nothing in it.
 */
#ifndef __MP_CAUSES_H
#define __MP_CAUSES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "lib/causerules.h"
#include "model/model.h"

struct cause_bytes {
	const struct cause *cause;	/* NULL: unmatched */
	const struct cause_rule *rule;	/* the rule that matched most of its bytes */
	__u64 bytes;
};

struct cause_report {
	struct cause_bytes *v;		/* matched causes, most bytes first */
	size_t n;
	__u64 total;			/* bytes of the stacks attributed */
	__u64 unmatched;		/* of which no rule matched */
};

/* Which stacks to attribute (NULL: all). */
typedef bool (*causes_keep_fn)(void *ctx, const struct profile_stack *s);

/* The cause index in m->rules of one stack (rule set), or -1. */
int causes__match_stack(const struct model *m, const struct profile_stack *s,
			const struct cause_rule **rule);
/* Attributes the kept stacks of m's profile to causes. 0 or -ENOMEM (out emptied). */
int causes__attribute(const struct model *m, causes_keep_fn keep, void *ctx,
		      struct cause_report *out);
void causes__report_free(struct cause_report *r);

#endif
