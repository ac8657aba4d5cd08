/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prometheus expositions read back and merged: several OpenMetrics 1.0.0 texts (one per
 * `memphase attach` child of `memphase watch`, their series told apart by their labels)
 * written as one, each family's HELP and TYPE once, then the samples of every text that
 * has the family, text by text; in OpenMetrics (ending in "# EOF") or in the text format
 * 0.0.4 (a counter family is named NAME_total there, an info family NAME_info and typed
 * gauge, as its samples are named in both).
 *
 * Only what an OpenMetrics writer of whole families produces is read: "# HELP", "# TYPE"
 * (required, one of counter, gauge, histogram, summary, info, unknown), "# UNIT" (kept in
 * OpenMetrics, left out of 0.0.4, which has none) and each family's samples right after
 * its metadata; a text that is not complete (no
 * "# EOF"), has a sample of no family or a family twice, is refused (-EBADMSG) whole.
 */
#ifndef __MP_PROMTEXT_H
#define __MP_PROMTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct promtext_family {
	const char *name, *type, *help, *unit;	/* into the text, not terminated */
	size_t name_len, type_len, help_len, unit_len;	/* help_len, unit_len 0: no line */
	const char *samples;		/* its sample lines, each ending in '\n' */
	size_t samples_len;
};

struct promtext {
	char *text;			/* malloc'd, owned once parsed */
	size_t len;
	struct promtext_family *fams;
	unsigned int nfams;
};

/*
 * Indexes text[0..len) (malloc'd): on success p owns it; on failure (-EBADMSG, -ENOMEM) the
 * caller still does, and p is empty.
 */
int promtext__parse(struct promtext *p, char *text, size_t len);
/* Frees the text and the index; p becomes empty. NULL-safe. */
void promtext__free(struct promtext *p);
/*
 * Writes the n expositions v[] as one to f. A family whose TYPE differs from the first
 * text's that has it is left out of the later texts. label (NAME="value", written as
 * given; NULL: none) becomes every sample's first label. 0, -ENOMEM or -EIO.
 */
int promtext__merge(FILE *f, const struct promtext *const *v, unsigned int n,
		    bool openmetrics, const char *label);

#endif
