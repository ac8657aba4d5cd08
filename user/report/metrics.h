/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The metrics exposition: the model as Prometheus text (format 0.0.4) or OpenMetrics 1.0.0
 * text, for `--metrics ADDR:PORT` (the session serves it with lib/httpd) and
 * `--metrics-textfile PATH` (a registered output format: node_exporter's textfile
 * collector reads it). Reads the model only, and only when asked: nothing is computed
 * between scrapes.
 *
 * Every sample carries the labels comm and pid of the observed root process (the run), so
 * the expositions of several memphase instances (one `memphase attach` per process, as a
 * supervisor runs them) can be merged without clashes, and first the label source: where
 * the exposition goes (http for --metrics, textfile for the file), so that a dashboard
 * whose Prometheus scrapes both (memphase and node_exporter) counts each run once, from
 * the source it picks; the other labels are bounded by
 * the run's phases, the four classes, the cause rules and the GPU devices. metrics__render()
 * takes several runs at once and writes each family once, its samples run by run: what a
 * merger of live models calls; a merger of textfiles does the same grouping (README).
 */
#ifndef __MP_METRICS_H
#define __MP_METRICS_H

#include <stdio.h>
#include "report/format.h"

#define METRICS_CT_OPENMETRICS	"application/openmetrics-text; version=1.0.0; charset=utf-8"
#define METRICS_CT_TEXT		"text/plain; version=0.0.4; charset=utf-8"

enum metrics_syntax {
	METRICS_TEXT,		/* Prometheus text format 0.0.4 */
	METRICS_OPENMETRICS,	/* OpenMetrics 1.0.0 text, ending in "# EOF" */
};

/*
 * The request-growth histogram's upper bounds, bytes (+Inf follows): two per doubling,
 * 2^k and 1.5 x 2^k, from 64 KiB (2^METRICS_BUCKET_SHIFT) to 16 GiB. A quantile read
 * from them lies in its bucket, so within x1.5 of the true value; 37 buckets, +Inf, _sum
 * and _count are 40 series per run (docs/metrics.md says why not more, or fewer).
 */
#define METRICS_BUCKET_SHIFT	16
#define METRICS_NBUCKETS	37
unsigned long long metrics__bucket(unsigned int i);

/* The source label's values. */
#define METRICS_SOURCE_HTTP	"http"
#define METRICS_SOURCE_TEXTFILE	"textfile"

/*
 * Writes the exposition of n runs (each an output_ctx: model, timeline, system memory,
 * now, memphase's own cost) to f, every sample labelled source="source" first (NULL: no
 * such label, for an exposition whose reader adds it: watch's channel). 0, or -errno
 * (-EIO when a write failed).
 */
int metrics__render(FILE *f, const struct output_ctx *runs, unsigned int n,
		    enum metrics_syntax syn, const char *source);

/* --metrics-textfile FILE: the exposition in text format 0.0.4. */
extern const struct output_format metrics_textfile_format;

#endif
