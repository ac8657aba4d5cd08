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
 *   remedy TEXT         appended to the cause's remedy (joined by a space)
 *   frame PATTERN       matches a frame of a sampled stack
 *   origin PATTERN      matches a frame of the stack that created the grown mapping, or its label
 *   mapping PATTERN     matches the path of the grown mapping
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

struct cause {
	char *preset;		/* NULL: before any preset line (every preset) */
	char *name;
	char *remedy;		/* "" if none */
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
