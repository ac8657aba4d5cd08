/* SPDX-License-Identifier: GPL-2.0 */
/* A phase as JSON: one shape for the JSON summary's phases[] and the HTML page's data. */
#ifndef __MP_REPORT_PHASE_JSON_H
#define __MP_REPORT_PHASE_JSON_H

#include "lib/json.h"
#include "model/model.h"

/* "name": { "anon", "file", "shmem", "swap" } in the summary's class order */
void phase_json__classes(struct jsonw *w, const char *name, const __u64 v[MP_NR_CLASSES]);
/*
 * The fields of phase id that every document has, into the object the caller opened:
 * "name", "entries", "calls", "time_s", "faults", "rss_growth_bytes", "rss_shrink_bytes"
 * and "intervals": [ { "start_s", "end_s" } ] (the open one ends at the model's end).
 */
void phase_json__fields(struct jsonw *w, const struct model *m, unsigned int id);

#endif
