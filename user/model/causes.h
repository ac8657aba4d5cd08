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

/*
 * What grew in each request, by cause: every sample (the profile's timed samples) goes to
 * the request its process had open when it was taken (model__request_of), and to its
 * stack's cause. bytes[r * (ncauses + 1) + c] for cause c of m->rules; column ncauses is
 * the unmatched. Samples past PROFILE_MAX_WHEN are not counted (dropped_samples).
 */
struct cause_requests {
	size_t nreq, ncauses;
	__u64 *bytes;
	__u64 dropped_samples;
	/* the requests a per-request figure is the mean over (model__steady_requests) */
	unsigned int nsteady;
	unsigned int steady[MODEL_MAX_REQUESTS];
};

/* 0 or -ENOMEM (out emptied). */
int causes__by_request(const struct model *m, struct cause_requests *out);
/* Bytes of cause c (ncauses: the unmatched) in request r. */
static inline __u64 causes__request_bytes(const struct cause_requests *cr, size_t r, size_t c)
{
	return cr->bytes[r * (cr->ncauses + 1) + c];
}
/*
 * Cause c's bytes per request: the mean over the steady requests, the ones the request fit
 * runs over, so the causes add up to the steady growth per request. False if none.
 */
bool causes__per_request(const struct cause_requests *cr, size_t c, double *per);
/*
 * What grew by cause in one process from a time on (the profile's timed samples of pid at
 * or after from_ns): bytes[c] for cause c of m->rules, bytes[ncauses] the unmatched.
 */
struct cause_span {
	size_t ncauses;
	__u64 *bytes;
	__u64 total;
};
/* 0 or -ENOMEM (out emptied). */
int causes__since(const struct model *m, __u32 pid, __u64 from_ns, struct cause_span *out);
void causes__span_free(struct cause_span *cs);

/* The index of cause in m->rules. */
size_t causes__index(const struct model *m, const struct cause *cause);
void causes__requests_free(struct cause_requests *cr);

#endif
