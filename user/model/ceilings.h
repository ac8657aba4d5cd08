/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where host RAM stops: each named cause's ceiling, as its rule tells (lib/causerules.h:
 * the mappings it grew in, an engine setting's cap, units at most some settings allow),
 * and the plateau they make together: the RSS once every bounded cause is full, against
 * the room before an OOM kill, with what the unbounded causes add per request. Where the
 * plateau does not fit, how many more requests fit, and the setting that would make it fit.
 * Pure: reads the model (causes, origins, requests, engine settings), writes nothing.
 */
#ifndef __MP_CEILINGS_H
#define __MP_CEILINGS_H

#include <stdbool.h>
#include <linux/types.h>
#include "model/model.h"

#define CEILINGS_MAX	32
#define CEILINGS_MAX_SUGGEST	3

enum ceiling_state {
	CEILING_UNBOUNDED = 0,	/* no rule bounds it, or its setting says no cap */
	CEILING_BOUNDED = 1,
	CEILING_UNKNOWN = 2,	/* bounded by a setting memphase could not read */
	CEILING_OFF = 3,	/* its setting turns it off (0) */
};

struct ceiling {
	const struct cause *cause;
	enum ceiling_state state;
	__u64 now;		/* bytes it holds: its mappings' growth (mappings), else sampled */
	__u64 ceiling;		/* bytes, BOUNDED */
	double per_request;	/* its mean growth per request (-1: no requests to tell) */
	/* units: how many so far, the mean size of one, at most how many */
	__u64 units, unit_bytes, max_units;
	/* the setting that bounds it (the first factor for units) and its value */
	const char *setting;
	long long value;
	char how[640];		/* how the ceiling comes about, in a line */
};

struct ceilings {
	unsigned int n;
	struct ceiling v[CEILINGS_MAX];	/* bounded ones first, by ceiling, then the rest */
	bool have;		/* any cause with a rule-given ceiling grew */
	__s64 rss;		/* the engine's RSS now (file + anon + shmem) */
	__u64 to_fill;		/* what the bounded causes still have to grow */
	__s64 plateau;		/* rss + to_fill */
	double unbounded_per_request;	/* unbounded causes and unmatched growth, per request */
	bool have_requests;
	/* the room before an OOM kill (the tighter of the cgroup and the system), as read */
	bool room_known;
	__s64 room;
	const char *room_what;	/* "the cgroup limit", "MemAvailable" */
	bool fits;		/* the plateau fits in the room */
	long requests_left;	/* requests until the room is gone (-1: never, growing none) */
	/* the bounded cause that grows per request and fills last, and after how many */
	const struct ceiling *last_full;
	long requests_to_fill;
	/*
	 * Where it does not fit: the causes whose settings, lowered, would make it (the one
	 * with the most still to grow first, the next only if that is not enough), to what,
	 * and the plateau then. culprit is the first, NULL when no setting bounds a cause.
	 */
	const struct ceiling *culprit;
	unsigned int nsuggest;
	struct ceiling_suggestion {
		const struct ceiling *cause;
		long long value;	/* the setting's value (in its unit) that fits */
	} suggest[CEILINGS_MAX_SUGGEST];
	__s64 suggest_plateau;	/* the plateau with them */
};

/* 0 or -ENOMEM. */
int ceilings__compute(const struct model *m, struct ceilings *out);

#endif
