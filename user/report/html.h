/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The HTML report: one self-contained file (its script, style and data inside; no
 * network): RSS over time per class with the phases as bands, the memory cgroup's limit
 * and OOM kills drawn in; the per-phase table; a flame graph of the growth by code path
 * that follows the selection (click a phase, in the chart or the table, or drag a time
 * range: only the samples taken there), with search, zoom and tooltips. Its page is
 * user/report/html.js and html.css, built into memphase.
 */
#ifndef __MP_HTML_H
#define __MP_HTML_H

#include "report/format.h"

extern const struct output_format html_format;

#endif
