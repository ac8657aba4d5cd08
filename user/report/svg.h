/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A self-contained flame graph SVG (lib/flamegraph.h) of the stack lines
 * (report/stacklines.h), phases side by side in the order first entered.
 */
#ifndef __MP_SVG_H
#define __MP_SVG_H

#include "report/format.h"

extern const struct output_format svg_format;

#endif
