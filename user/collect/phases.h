/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Phases and their markers: the llama preset and user specs. Pure code; probes.c
 * turns markers into uprobes.
 */
#ifndef __MP_PHASES_H
#define __MP_PHASES_H

#include <stdbool.h>
#include <linux/types.h>
#include "memphase.h"
#include "lib/phasespec.h"

#define PHASES_MAX_MARKERS	64

struct marker {
	char symbol[PHASE_SYM_MAX];
	char binary[PHASE_BIN_MAX];	/* "" = any file */
	__u32 phase;			/* id; for MP_MARK_DECODE: unused */
	__u32 kind;			/* enum mp_marker_kind */
	__u32 arg;			/* MP_MARK_STATE_EXT: the flags argument (1-based) */
	bool user;			/* from --phase */
};

struct phases {
	unsigned int nphases;
	char names[MP_MAX_PHASES][PHASE_NAME_MAX];
	unsigned int nmarkers;
	struct marker markers[PHASES_MAX_MARKERS];
	__u32 prompt, generate;		/* ids of the decode split (0 when no preset) */
	__u32 checkpoint;		/* id of partial state saves (0 when no preset) */
	bool preset;
};

/* Phase 0 is "startup"; with llama_preset the llama phases and markers are added. */
int phases__init(struct phases *p, bool llama_preset);
/* Adds a user marker (and its phase, unless a phase of that name exists). -errno. */
int phases__add_spec(struct phases *p, const struct phase_spec *s);
/* Id of a phase name, or -ENOENT. */
int phases__find(const struct phases *p, const char *name);
/* Cookie for a marker's uprobe. */
__u64 phases__cookie(const struct marker *mk);
/* Does a marker apply to this file? (binary "" matches all; else path, basename, or
 * basename prefix before a version suffix: "libllama.so" matches "libllama.so.0") */
bool phases__marker_matches(const struct marker *mk, const char *path);

#endif
