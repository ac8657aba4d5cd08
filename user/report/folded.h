/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Folded stacks, as flamegraph.pl, inferno and speedscope read them:
 * "phase;comm;outermost;...;innermost BYTES", one line per stack in the order of
 * report/stacklines.h. A ';' inside a name becomes ':' (the separator), so every line
 * splits into at least 3 fields and a weight.
 */
#ifndef __MP_FOLDED_H
#define __MP_FOLDED_H

#include "report/format.h"

extern const struct output_format folded_format;

#endif
