/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Self-contained SVG flame graphs (the layout of Brendan Gregg's flamegraph.pl, memory
 * palette), written from folded stacks.
 *
 * The stacks are merged into one tree: a frame's width is proportional to the summed
 * weight of the stacks passing through it, children are sorted by name (byte order), the
 * root frame "all" is at the bottom and the first frame of every stack sits right above it
 * (memphase puts the phase there, so phases are side by side). Frames narrower than 0.1 px
 * are not drawn; their weight still counts in their parent.
 *
 * Each frame is a <g> with <title>NAME (SIZE, PCT%)</title>, a <rect> and a <text> (the
 * name, cut to fit with "..", left out when fewer than 3 characters fit). The inline
 * JavaScript zooms into a clicked frame ("Reset Zoom" or Escape undoes it), searches frame
 * names with a regular expression ("Search", Ctrl-F; the matched share is shown bottom
 * right), shows the hovered frame bottom left, and offers the first-level frames (phases)
 * as zoom links under the title. The file has no external references.
 *
 * Names are written XML-escaped: & < > " ' become entities, control characters are
 * removed, bytes that are not valid UTF-8 become U+FFFD. Empty frames ("a;;b") are skipped.
 * Numbers are formatted without the C locale's help, so the output does not depend on
 * LC_NUMERIC, and it is the same for the same input in any order.
 */
#ifndef __MP_FLAMEGRAPH_H
#define __MP_FLAMEGRAPH_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct fg_stack {
	const char *frames;	/* "a;b;c", outermost first (when framev is NULL) */
	__u64 weight;		/* stacks of weight 0 are ignored */
	/* or the frames as an array, outermost first: names may then hold ';' */
	const char *const *framev;
	size_t nframes;
};

struct fg_opts {
	const char *title;	/* NULL: "Flame Graph" */
	const char *subtitle;	/* NULL or "": none */
	/*
	 * What a weight counts. NULL or "bytes": sizes shown as B, KiB, MiB, GiB, TiB;
	 * anything else is printed after the plain number ("123 samples").
	 */
	const char *unit;
	int width;		/* image width in px; <= 0: 1200; raised to at least 200 */
	/*
	 * Optional: the first-level frames (memphase's phases) in the order to draw them,
	 * left to right; others follow by name. NULL: all by name.
	 */
	const char *const *first_order;
	size_t nfirst;
};

/*
 * Writes one SVG document for stacks[0..n) to f. o may be NULL (defaults). With no
 * weight at all (n == 0, or only zero weights) the SVG says "no samples".
 * A NULL frames string counts as an empty stack (its weight goes to "all" only).
 * Returns 0, -EINVAL (f NULL, or stacks NULL with n > 0), -ENOMEM, -EOVERFLOW (the
 * weights' sum does not fit in 64 bits), -E2BIG (more than 2^30 distinct frames) or
 * -EIO (a write to f failed).
 */
int flamegraph__write(FILE *f, const struct fg_stack *stacks, size_t n,
		      const struct fg_opts *o);

#endif
