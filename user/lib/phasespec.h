/* SPDX-License-Identifier: GPL-2.0 */
/* Parsing of --phase NAME=[BINARY:]SYMBOL. Pure code. */
#ifndef __MP_PHASESPEC_H
#define __MP_PHASESPEC_H

#include <stddef.h>

#define PHASE_NAME_MAX	32	/* including the NUL */
#define PHASE_SYM_MAX	256
#define PHASE_BIN_MAX	4096

struct phase_spec {
	char name[PHASE_NAME_MAX];	/* [A-Za-z0-9_.-]{1,31} */
	char binary[PHASE_BIN_MAX];	/* "" = any file the target maps */
	char symbol[PHASE_SYM_MAX];
};

/*
 * Parse "NAME=SYMBOL" or "NAME=BINARY:SYMBOL". The binary is split off at the first
 * ':' that is not part of "::" (C++ names keep their "::"). Returns 0, or -EINVAL
 * with a one-line reason (no trailing newline) in err[errlen].
 */
int phasespec__parse(const char *spec, struct phase_spec *out, char *err, size_t errlen);
/* 1 if name is a valid phase name, else 0. */
int phasespec__valid_name(const char *name);

#endif
