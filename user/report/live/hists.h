/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The histograms the live view cycles through with 'h': a list, each entry a title and a
 * source (the log2 slots of one phase). The view starts on the first and wraps around
 * after the last, whatever their number. Pure code (tests/unit/test_live.c).
 */
#ifndef __MP_HISTS_H
#define __MP_HISTS_H

#include <linux/types.h>

struct model;

struct live_hist {
	const char *title;	/* "RSS growth per marker call" */
	const char *unit;	/* what is counted, for hist__print: "bytes" */
	/* the source: MP_MAX_SLOTS log2 slots of a phase; arg is the entry's own */
	const __u64 *(*slots)(const struct model *m, unsigned int phase, unsigned int arg);
	unsigned int arg;
};

/* A position in a list of n histograms (n may be 0: then there is none to show). */
struct hists {
	const struct live_hist *list;
	unsigned int n;
	unsigned int cur;
};

/* The model's per-phase histograms (enum mp_hist), in that order. */
void hists__init_model(struct hists *h);
void hists__init(struct hists *h, const struct live_hist *list, unsigned int n);
/* The one shown, and the one 'h' shows next (itself when alone); NULL without any. */
const struct live_hist *hists__cur(const struct hists *h);
const struct live_hist *hists__peek(const struct hists *h);
/* Moves to the next one, wrapping around. */
void hists__next(struct hists *h);
/* The slots of the shown histogram for a phase; NULL without any. */
const __u64 *hists__slots(const struct hists *h, const struct model *m, unsigned int phase);
/* Source of the model's histograms: m->stats[phase].hist[arg] (arg: enum mp_hist). */
const __u64 *hists__model_slots(const struct model *m, unsigned int phase, unsigned int arg);

#endif
