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

#define CAUSES_REMEDY_MAX	1024

/*
 * c's remedy for the build observed: its parts that name only flags the build accepts
 * (model/engine.h; all of them, as written, when its flags are not known). Returns buf.
 */
const char *causes__remedy(const struct model *m, const struct cause *c, char *buf,
			   size_t len);
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
 * What grew by cause among the profile's timed samples that pass a filter: bytes[c] for
 * cause c of m->rules, bytes[ncauses] the unmatched.
 */
struct cause_span {
	size_t ncauses;
	__u64 *bytes;
	__u64 total;
};
struct cause_filter {
	__u32 pid;		/* taken in this process (0: any) */
	__u64 from_ns, to_ns;	/* at or after from_ns, at or before to_ns (0: no end) */
	__u32 origin;		/* growing this mapping (1 + index in the origins; 0: any) */
	__u32 phase1;		/* in this phase, as 1 + its id (0: any) */
};
/* 0 or -ENOMEM (out emptied). */
int causes__span(const struct model *m, const struct cause_filter *f, struct cause_span *out);
void causes__span_free(struct cause_span *cs);
/*
 * The heap and glibc's arenas are grown by everything that mallocs: their creator, the first
 * to touch them, says little. Such a mapping (origin id: 1 + index) is labelled by what grew
 * it: "prompt cache 72%, context checkpoints 21%", the matched causes of at least 5% of its
 * sampled growth (in phase phase1 - 1; 0: all), most first, up to three, when they hold
 * at least half of it. Returns buf,
 * or NULL when the mapping is not one of those, or its samples say too little (then its
 * creator's label stands).
 */
const char *causes__label(const struct model *m, __u32 origin, __u32 phase1, char *buf,
			  size_t len);

/* The index of cause in m->rules. */
size_t causes__index(const struct model *m, const struct cause *cause);
void causes__requests_free(struct cause_requests *cr);

#endif
