/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The engine observed (llama-server, llama-cli, ...): the settings it runs with, read from
 * its command line and environment (collect/engine.c) with where each came from, and the
 * flags its build has, from the strings of its files (which ones it deprecates, and for
 * what). The views print the settings; remedies name only flags the build accepts; the
 * ceilings take their bounds from the settings. Pure data and lookups.
 */
#ifndef __MP_MODEL_ENGINE_H
#define __MP_MODEL_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define ENGINE_MAX_SETTINGS	32
#define ENGINE_VALUE_MAX	128
#define ENGINE_MAX_UNKNOWN	32
#define ENGINE_FLAG_MAX		48

enum engine_src {
	ENGINE_SRC_DEFAULT = 0,	/* the build's default */
	ENGINE_SRC_FLAG = 1,	/* a flag on the command line */
	ENGINE_SRC_ENV = 2,	/* its environment variable */
};

struct engine_setting {
	char name[32];
	char value[ENGINE_VALUE_MAX];	/* as text; a default's auto resolved by program */
	__u32 src;			/* enum engine_src */
	char from[ENGINE_FLAG_MAX];	/* the flag or variable it came from, "" for a default */
	char flag[ENGINE_FLAG_MAX];	/* the flag that sets it, as a remedy names it */
	char what[64];			/* what it is (the preset's words) */
};

struct model_engine {
	bool known;			/* the settings were read */
	__u32 pid;			/* of the process running the engine */
	char program[64];		/* its executable's base name */
	unsigned int nsettings;
	struct engine_setting settings[ENGINE_MAX_SETTINGS];
	unsigned int nunknown;		/* flags on its command line no setting names */
	char unknown[ENGINE_MAX_UNKNOWN][ENGINE_FLAG_MAX];
	/* the settings of the slots sharing the context, and whether they share all of it
	 * ("" when the engine has none) */
	char slots_setting[32];
	char shared_setting[32];
	/*
	 * The build's flags, from its files' strings: "\n-a\n--bb\n" (each between newlines),
	 * and the deprecated ones with what replaces them: "\n--mlock=--load-mode\n" ("=" for
	 * none). NULL until read; then the views trust them.
	 */
	char *flags;
	char *deprecated;
	unsigned int nflags;
};

void model_engine__free(struct model_engine *e);
/* A copy of src's settings and flags into dst (freed first). 0 or -ENOMEM. */
int model_engine__copy(struct model_engine *dst, const struct model_engine *src);
/* The setting named name, or NULL. */
const struct engine_setting *model_engine__get(const struct model_engine *e, const char *name);
/* Its value as a whole number ("true" 1, "false" 0), or dflt if unset or not a number. */
long long model_engine__int(const struct model_engine *e, const char *name, long long dflt);
/*
 * The context one slot can reach of n_ctx: all of it with one slot or a shared context,
 * else its share. n_ctx when the settings are not known.
 */
__u64 model_engine__slot_ctx(const struct model_engine *e, __u64 n_ctx);
/*
 * Does the observed build accept flag and not deprecate it? True when its flags are not
 * known (another engine, an unreadable file): nothing to go by.
 */
bool model_engine__accepts(const struct model_engine *e, const char *flag);
/* What replaces a deprecated flag ("" when the build names nothing), or NULL if it is not. */
const char *model_engine__replacement(const struct model_engine *e, const char *flag,
				      char *buf, size_t len);
/* Does the build have flag (deprecated or not)? True when its flags are not known. */
bool model_engine__has(const struct model_engine *e, const char *flag);
/* Adds flag to the build's flags (no duplicates). 0 or -ENOMEM. */
int model_engine__add_flag(struct model_engine *e, const char *flag);
/* Marks flag deprecated for replacement (NULL or "": none named). 0 or -ENOMEM. */
int model_engine__add_deprecated(struct model_engine *e, const char *flag,
				 const char *replacement);

#endif
