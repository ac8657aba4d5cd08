/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A pprof profile (gzipped profile.proto, lib/pbwriter.h) of the raw stack samples, for
 * `go tool pprof` and the profilers that speak it (Pyroscope, Parca, Grafana). Sample types
 * rss_growth/bytes (the default) and samples/count; every sample carries string labels
 * phase, class (anon, file, shmem), mapping (the label of the origin of the mapping it grew,
 * where known), cause (the cause rule its stack matched, if any) and request (its number,
 * 1-based as in the JSON's requests[], when it fell in one: a string, as profiling backends
 * index string labels only; pprof's -tagfocus takes a regular expression, so request 2 is
 * `request=^2$`). Locations hold the
 * sampled addresses (a caller's return address less one: inside its call instruction) in
 * mappings with their file names and build ids; functions are the names memphase
 * symbolized, with the file of their mapping. Samples of equal stack and labels are merged.
 */
#ifndef __MP_PPROF_H
#define __MP_PPROF_H

#include "report/format.h"

extern const struct output_format pprof_format;

#endif
