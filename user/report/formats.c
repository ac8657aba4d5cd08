// SPDX-License-Identifier: GPL-2.0
/* The output formats memphase offers: one line each. */
#include <stddef.h>
#include "report/folded.h"
#include "report/html.h"
#include "report/metrics.h"
#include "report/perf.h"
#include "report/pprof.h"
#include "report/report_json.h"
#include "report/svg.h"
#include "report/trace.h"

const struct output_format *const output_formats[] = {
	&report_json_format,
	&folded_format,
	&perf_format,
	&pprof_format,
	&svg_format,
	&trace_format,
	&html_format,
	&metrics_textfile_format,
	NULL,
};
