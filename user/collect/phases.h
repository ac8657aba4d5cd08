/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Phases and their markers: a preset's (presets.c) and user specs, and the argument rules
 * BPF reads from its config. Pure code; probes.c turns markers into uprobes.
 */
#ifndef __MP_PHASES_H
#define __MP_PHASES_H

#include <stdbool.h>
#include <linux/types.h>
#include "memphase.h"
#include "lib/phasespec.h"
#include "collect/presets.h"

#define PHASES_MAX_MARKERS	64

struct marker {
	char symbol[PHASE_SYM_MAX];
	char binary[PHASE_BIN_MAX];	/* "" = any file */
	__u32 phase;			/* id */
	__u32 rule;			/* index in rules[] (0: none, always `phase`) */
	bool user;			/* from --phase */
	int ret_phase;			/* id its return enters, -1: no return probe */
	bool request;			/* --request: a call starts a request, no phase */
};

struct phases {
	unsigned int nphases;
	char names[MP_MAX_PHASES][PHASE_NAME_MAX];
	unsigned int nrules;		/* rules[0] is "none": 0 or 1 + rules in use */
	struct mp_rule rules[MP_MAX_RULES];
	const struct preset *preset;	/* NULL: none */
	__u32 sticky_mask;		/* bit per sticky phase id */
	int request_phase;		/* id, -1: none */
	__u32 idle_mask;		/* phases that do not end a request's pass */
	__u32 end_mask;			/* phases that end the open request */
	__u32 lead_mask;		/* phases whose entry may start the next request */
	bool request_marker;		/* --request given: requests start at its calls only */
	unsigned int nmarkers;
	/* last: 280 KiB, each entry set whole as it is added, the rest never cleared */
	struct marker markers[PHASES_MAX_MARKERS];
};

/* Phase 0 is "startup"; a preset (NULL: none) adds its phases, markers and rules. -errno. */
int phases__init(struct phases *p, const struct preset *preset);
/*
 * phases__init with preset, then the user's specs and the --request marker (NULL: none);
 * -errno after one line on stderr (the preset or the specs do not fit the limits).
 */
int phases__setup(struct phases *p, const struct preset *preset, const struct phase_spec *specs,
		  unsigned int nspecs, const struct phase_spec *request);
/* Whether a marker has a return phase (needs the return probe program). */
bool phases__has_return(const struct phases *p);
/* Puts the rules into the BPF config. */
void phases__fill_cfg(const struct phases *p, struct mp_config *cfg);
/* Adds a user marker (and its phase, unless a phase of that name exists). -errno. */
int phases__add_spec(struct phases *p, const struct phase_spec *s);
/* Adds a --request marker (the spec's name is unused). -errno. */
int phases__add_request(struct phases *p, const struct phase_spec *s);
/* Id of a phase name, or -ENOENT. */
int phases__find(const struct phases *p, const char *name);
/* Cookie for a marker's uprobe, and for its return probe (ret_phase >= 0). */
__u64 phases__cookie(const struct marker *mk);
__u64 phases__ret_cookie(const struct marker *mk);
/* Bit per phase id of the names (unknown names are left out). */
__u32 phases__mask(const struct phases *p, const char *const *names);
/* The phase(s) a marker enters: "context", or a rule's "prompt/generate". */
const char *phases__marker_str(const struct phases *p, const struct marker *mk, char *buf,
			       size_t len);
/* Does a marker apply to this file? (binary "" matches all; else path, basename, or
 * basename prefix before a version suffix: "libllama.so" matches "libllama.so.0") */
bool phases__marker_matches(const struct marker *mk, const char *path);

#endif
