/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Cause rules: named causes of memory growth and their remedies, kept as data (the
 * repository's data/causes.rules, built in, and --causes FILE), and the allocator frames
 * that a mapping's label skips. This module parses and matches; it knows no model.
 *
 * The format, one directive a line ('#' starts a comment, blank lines are ignored):
 *   allocator PATTERN   a frame that only allocates (for every preset)
 *   preset NAME         the causes that follow belong to preset NAME
 *   cause NAME          starts a cause; remedy and match lines below belong to it
 *   remedy TEXT         one part of the cause's remedy (the parts joined by a space)
 *   remedy-or TEXT      an alternative to the part before it, said instead when the
 *                       observed build does not accept a flag that part names, or
 *                       deprecates it (a current flag's part first, then an older
 *                       build's); a part none of whose alternatives the build accepts
 *                       is left out
 *   frame PATTERN       matches a frame of a sampled stack
 *   origin PATTERN      matches a frame of the stack that created the grown mapping, or its label
 *   mapping PATTERN     matches the path of the grown mapping
 *   ceiling mappings    bounded by the mappings it grew in (made once: their size)
 *   ceiling setting NAME UNIT
 *                       capped by the engine's setting NAME, in UNIT (MiB, KiB or bytes):
 *                       below 0 no cap, 0 off
 *   ceiling units PHASE [x SETTING]...
 *                       made of units, one per entry of phase PHASE (each the mean seen),
 *                       at most the product of the settings
 * Patterns are fnmatch(3) globs (no flags) on whole names.
 */
#ifndef __MP_CAUSERULES_H
#define __MP_CAUSERULES_H

#include <stdbool.h>
#include <stddef.h>

enum cause_match {
	CAUSE_FRAME = 0,
	CAUSE_ORIGIN = 1,
	CAUSE_MAPPING = 2,
	CAUSE_NR_MATCH = 3,
};

struct cause_rule {
	enum cause_match what;
	char *pattern;
	char *text;		/* "frame PATTERN", as the rule reads in its file */
};

struct cause_remedy {
	char *text;
	bool alt;		/* an alternative to the part before (remedy-or) */
};

enum cause_ceiling_kind {
	CEILING_NONE = 0,	/* unbounded, as far as the rules tell */
	CEILING_MAPPINGS = 1,
	CEILING_SETTING = 2,
	CEILING_UNITS = 3,
};

#define CAUSE_MAX_FACTORS	4

struct cause_ceiling {
	enum cause_ceiling_kind kind;
	char *setting;		/* SETTING: the setting */
	unsigned long long unit;	/* SETTING: bytes per unit of its value */
	char *phase;		/* UNITS (and SETTING, optional): one entry of it is one unit */
	char *factors[CAUSE_MAX_FACTORS];	/* UNITS: the settings multiplied */
	unsigned int nfactors;
	char *text;		/* "ceiling ..." as written */
};

struct cause {
	char *preset;		/* NULL: before any preset line (every preset) */
	char *name;
	char *remedy;		/* "" if none: each part's first alternative, joined */
	struct cause_remedy *parts;
	size_t nparts;
	struct cause_ceiling ceiling;
	struct cause_rule *rules;
	size_t nrules;
};

struct causerules {
	char **allocators;
	size_t nallocators;
	struct cause *causes;
	size_t ncauses;
	char *preset;		/* the causes in use: this preset's (and preset-less) ones */
};

void causerules__init(struct causerules *r);
void causerules__free(struct causerules *r);
/*
 * Adds the directives of text (named name in messages). 0, or -EINVAL with "name:LINE:
 * what is wrong" in err, or -ENOMEM.
 */
int causerules__parse(struct causerules *r, const char *text, const char *name, char *err,
		      size_t errlen);
/*
 * The remedy of c for a build: of each part, the first alternative all of whose flags
 * ("-x", "--xx-yy" tokens) accepts() takes, joined by a space (accepts NULL: the first
 * of each). Returns buf.
 */
const char *causerules__remedy(const struct cause *c, bool (*accepts)(void *ctx,
			       const char *flag), void *ctx, char *buf, size_t len);
/* One more allocator pattern (--allocator-frame). 0 or -ENOMEM. */
int causerules__add_allocator(struct causerules *r, const char *pattern);
/* Uses the causes of preset name (NULL: only those outside any preset). 0 or -ENOMEM. */
int causerules__use_preset(struct causerules *r, const char *name);
/* The frame only allocates. */
bool causerules__is_allocator(const struct causerules *r, const char *frame);
/* The cause is in use (its preset is the one chosen, or it has none). */
bool causerules__in_use(const struct causerules *r, const struct cause *c);
/*
 * The rule of kind what that matches s, of the cause in use defined last (rules read later,
 * e.g. from --causes, override earlier ones): its cause's index, *rule set to it; -1 if
 * none.
 */
int causerules__match(const struct causerules *r, enum cause_match what, const char *s,
		      const struct cause_rule **rule);

#endif
