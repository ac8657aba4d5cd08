/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Built-in presets: for one engine, its phases and the functions (markers) that enter
 * them, as data. phases.c turns a preset into markers and BPF argument rules; BPF knows
 * no engine. Adding a preset = one table in presets.c (and its test).
 */
#ifndef __MP_PRESETS_H
#define __MP_PRESETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "memphase.h"

#define PRESETS_DEFAULT	"llama"
#define PRESETS_NONE	"none"		/* no preset: only --phase markers */
#define PRESETS_MAX_RELABELS	4	/* relabels per preset (MODEL_MAX_RELABELS) */

/*
 * "Read the value at argument `at` (1..6), or at sp + `at` at function entry (arguments
 * passed on the stack), `width` bytes, signed or not; compare it with `value` by `op`:
 * true enters then_phase, false else_phase (NULL: the marker's own phase)."
 */
struct preset_rule {
	__u32 src;			/* enum mp_rule_src */
	__u32 at;
	__u32 width;			/* 4 or 8 */
	bool is_signed;
	__u32 op;			/* enum mp_rule_op */
	__u64 value;			/* a negative signed value: (__u64)-n */
	const char *then_phase;
	const char *else_phase;
	/* optional array count (struct mp_rule): arr_at 0 = none */
	__u32 arr_at;
	__u32 arr_trim;
	const char *all_phase;		/* every counted byte non-zero */
	const char *none_phase;		/* none */
	const char *mixed_phase;	/* some */
	/* optional guard: before the target has entered any of these, enter guard_phase */
	const char *const *guard_unseen;	/* NULL-terminated phase names */
	const char *guard_phase;
	__u64 guard_max;		/* and only for a value of at most this (0: any) */
	__u32 record;			/* enum mp_record: what the value is */
	__u32 rec_arg;			/* 1..6: record this argument instead (0: the value) */
	/* optional: the last token's position and sequence arrays (struct mp_rule) */
	__u32 pos_at, seq_at;
};

struct preset_marker {
	const char *phase;		/* one of the preset's phases (NULL for a request) */
	const char *symbol;		/* NULL ends the table */
	const char *binary;		/* NULL: any file (else as --phase's BINARY) */
	const struct preset_rule *rule;	/* NULL: a call always enters `phase` */
	const char *ret_phase;		/* non-NULL: its return enters this phase */
	/*
	 * The engine's own entry of a request (a server's task): a call starts a request and
	 * enters no phase; from the first such call on, these calls alone cut requests (the
	 * preset's phase rule stays for programs without them). --request replaces them.
	 */
	bool request;
};

/*
 * "Entering phase `at` shows what the process did since it last entered `at` (or since it
 * started): each interval of from[i] in that time was to[i]." A free before any decode
 * makes the load and context before it a --fit probe. The views show the intervals, their
 * counts (growth, shrink, faults, entries, calls, time) and their stack samples under
 * to[i]; the BPF side never knows.
 */
struct preset_relabel {
	const char *at;			/* NULL ends the table */
	const char *const *from;	/* NULL-terminated */
	const char *const *to;		/* as many as from, in its order */
};

/*
 * An engine setting, read from the observed process's command line and environment as the
 * engine's own parser reads it: the last of its flags on the command line, else its
 * environment variable, else the default of the build the table was written for. A value
 * flag takes the next argument ("-c 4096", or "--ctx-size=4096"); on and off flags set
 * "true" and "false". A default of `auto_is` resolves by program: the first autos entry
 * whose program prefix the engine's program name has (NULL: any).
 */
#define PRESET_MAX_AUTOS 2
struct preset_setting {
	const char *name;		/* its key ("ctx_size"); NULL ends the table */
	const char *flags;		/* flags that take a value, space-separated ("-c --ctx-size") */
	const char *on;			/* flags that set "true" */
	const char *off;		/* flags that set "false" */
	const char *env;		/* its environment variable (NULL: none) */
	const char *def;		/* the default, as text */
	const char *what;		/* what it is, a few words ("context size, tokens") */
	const char *auto_is;		/* the default's "decide later" value ("-1"), or NULL */
	/* a value flag whose value is optional: the values it takes ("on off auto"); given
	 * without one of them, it is "on" */
	const char *optional;
	/* implies: "NAME=VALUE", another setting this choice sets where that one is left at
	 * its default (llama-server's auto slots come with one KV buffer for all) */
	struct { const char *prog, *value, *implies; } autos[PRESET_MAX_AUTOS];
};

struct preset {
	const char *name;
	const char *description;	/* one line */
	const char *const *phases;	/* in their natural order, NULL-terminated */
	const struct preset_marker *markers;
	/* phases that only a marker of the same phase leaves (NULL-terminated, may be NULL) */
	const char *const *sticky;
	const char *request_phase;	/* a request starts here (NULL: none) */
	const char *const *idle;	/* phases that do not end a request's pass (may be NULL) */
	const char *const *request_end;	/* phases that end the open request (may be NULL) */
	/* phases whose last entry before the request phase starts the request (may be NULL) */
	const char *const *request_lead;
	const struct preset_relabel *relabel;	/* may be NULL */
	/* the engine's settings (NULL-name-terminated; may be NULL) and the libraries whose
	 * strings, with the program's, tell which flags its build has (the argument parser's:
	 * basename prefixes, NULL-terminated; may be NULL) */
	const struct preset_setting *settings;
	const char *const *build_files;
	/* the settings that say how many slots share the context and whether they share all
	 * of it (true) or split it (NULL: one context for all) */
	const char *slots_setting;
	const char *shared_setting;
};

/* The built-in presets, NULL-terminated. */
extern const struct preset *const presets[];

/* The preset of that name, or NULL (also for "none"). */
const struct preset *presets__find(const char *name);
/* "llama, none": the names --preset takes. */
void presets__names(char *buf, size_t len);
/* --list-presets: every preset's name, description, phases and markers. */
void presets__fprint(FILE *f);
/* "int32 at sp+8 > 1 ? prompt : generate" (marker_phase stands for a NULL else_phase). */
void presets__rule_str(const struct preset_rule *r, const char *marker_phase, char *buf,
		       size_t len);
/* The built-in cause rules: data/causes.rules, as text (collect/causes_data.c). */
const char *presets__causes(void);
/* 0 if a preset is well formed, else -EINVAL with why in err. */
int presets__check(const struct preset *p, char *err, size_t errlen);

#endif
